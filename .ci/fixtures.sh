#!/usr/bin/env bash
# Install the Debian packages the tests need: real documentation sites to crawl (from
# Debian's *-doc packages) and chromium for the browser test. Idempotent and quick when
# everything is there.
#
#   .ci/fixtures.sh [install-packages...] [-- extract-only-packages...]
#
# Extract-only packages are docs whose package pulls in heavy dependencies the tests never
# use (rust-doc: MathJax and fonts; libcommons-lang3-java-doc: the whole JDK docs;
# nodejs-doc: installing it removes node; libghc-aeson-doc: the GHC docs): their
# files are unpacked in place with dpkg-deb, without installing the dependencies.
set -euo pipefail
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
install=() extract=() target=install
for arg in "$@"; do
  if [ "$arg" = "--" ]; then target=extract; continue; fi
  if [ "$target" = install ]; then install+=("$arg"); else extract+=("$arg"); fi
done

missing=()
for p in "${install[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
marker_dir=/var/lib/mdcrawl-fixtures
unextracted=()
for p in "${extract[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || [ -e "$marker_dir/$p" ] || unextracted+=("$p")
done
[ ${#missing[@]} -eq 0 ] && [ ${#unextracted[@]} -eq 0 ] && exit 0

$SUDO apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#unextracted[@]} -gt 0 ]; then
  tmp=$(mktemp -d)
  chmod 777 "$tmp"  # apt downloads as the _apt user
  (cd "$tmp" && apt-get download -qq "${unextracted[@]}")
  for deb in "$tmp"/*.deb; do $SUDO dpkg-deb -x "$deb" /; done
  $SUDO mkdir -p "$marker_dir"
  for p in "${unextracted[@]}"; do $SUDO touch "$marker_dir/$p"; done
  rm -rf "$tmp"
fi
