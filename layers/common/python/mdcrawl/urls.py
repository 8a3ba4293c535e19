"""URLs: validate what a person typed, normalise, hash, and decide what is in scope.

Pure: no I/O. Every URL the crawl stores or compares goes through ``normalize_url`` so
that two spellings of one page get one ``url_hash``.

Normalisation (``normalize_url``):
  - only http and https; anything else (mailto:, javascript:, data:, ftp:) is ``None``;
  - scheme and host lowercased, IDNA hosts punycoded, a trailing dot on the host dropped,
    default ports (:80 for http, :443 for https) dropped;
  - fragment dropped, ``.`` and ``..`` resolved, an empty path becomes ``/``;
  - percent-encoding made canonical (non-ASCII encoded as UTF-8, hex in upper case);
  - ``/a/index.html`` and ``/a/index.htm`` folded to ``/a/``;
  - tracking parameters (``TRACKING_PARAMS``) removed; the other query parameters keep
    their order (some servers care) and a query left empty is dropped.
  ``/a`` and ``/a/`` stay distinct: servers differ, and the redirect between them (when
  there is one) tells the crawl they are the same page.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Sequence
from functools import lru_cache
from urllib.parse import SplitResult, unquote, unquote_plus, urljoin, urlsplit, urlunsplit

from w3lib.url import canonicalize_url, safe_url_string

from .errors import InvalidInput
from .globs import glob_matches
from .models import Scope

MAX_URL_LENGTH = 2048
HASH_LENGTH = 16  # hex chars of sha256: 64 bits, no collision in any real crawl

DEFAULT_PORTS = {"http": "80", "https": "443"}
INDEX_PAGES = ("index.html", "index.htm")

# Query parameters that only tell analytics where a click came from.
TRACKING_PREFIXES = ("utm_",)
TRACKING_PARAMS = frozenset({
    "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "yclid", "twclid",
    "igshid", "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "ref_src",
    "ref_url", "oly_anon_id", "oly_enc_id", "vero_id", "wickedid", "rb_clickid", "s_cid",
})

# Last-segment extensions that are never a page: fetching them would be wasted work.
NON_PAGE_EXTENSIONS = frozenset({
    # images
    "png", "jpg", "jpeg", "gif", "svg", "svgz", "webp", "ico", "bmp", "tif", "tiff", "avif",
    # styles, scripts, data
    "css", "js", "mjs", "map", "json", "xml", "rss", "atom", "csv", "tsv", "yaml", "yml",
    # sources and plain text (Sphinx ``_sources/*.txt``, downloads)
    "txt", "rst", "md", "py", "ipynb", "c", "h", "sh",
    # documents
    "pdf", "epub", "mobi", "ps", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods",
    # archives and packages
    "zip", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "tar", "whl", "egg", "jar", "deb",
    "rpm", "apk", "dmg", "exe", "msi", "iso", "bin",
    # fonts
    "woff", "woff2", "ttf", "otf", "eot",
    # audio and video
    "mp3", "mp4", "m4a", "webm", "ogg", "ogv", "wav", "avi", "mov", "mkv", "flac",
})

# Extensions that mark the last path segment as a file, so the scope is its folder.
PAGE_EXTENSIONS = frozenset({
    "html", "htm", "xhtml", "shtml", "php", "asp", "aspx", "jsp", "cfm", "cgi",
})

_SCHEME_RE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
_HOST_RE = re.compile(r"[\w.-]+")
_PERCENT_RE = re.compile(r"%[0-9a-fA-F]{2}")


def validate_start_url(url: str) -> str:
    """The normalised start URL, or ``InvalidInput`` saying what to fix."""
    text = (url or "").strip()
    if not text:
        raise InvalidInput("Enter the URL of a documentation site, e.g. https://docs.example.com/")
    if len(text) > MAX_URL_LENGTH:
        raise InvalidInput(f"That URL is {len(text)} characters; the limit is {MAX_URL_LENGTH}.")
    if any(ch.isspace() for ch in text):
        raise InvalidInput("A URL cannot contain spaces; encode them as %20 or remove them.")
    _check_scheme(text)
    _check_port(text)
    parts = _split(text)
    if parts is None or not parts.hostname:
        raise InvalidInput(f"{text!r} has no host name; expected e.g. https://docs.example.com/")
    normalized = normalize_url(text)
    if normalized is None:
        raise InvalidInput(f"{text!r} is not a valid web address.")
    return normalized


def _check_scheme(text: str) -> None:
    match = _SCHEME_RE.match(text)
    has_authority = match is not None and text[match.end() :].startswith("//")
    if match is not None and not has_authority and match.group(1).lower() in DEFAULT_PORTS:
        # "http:/127.0.0.1/" or "https:docs.example.com": the slashes were mistyped.
        fixed = f"{match.group(1).lower()}://{text[match.end():].lstrip('/')}"
        raise InvalidInput(f"{text!r} needs // after the scheme; did you mean {fixed} ?")
    if match is None or (not has_authority and match.group(1).lower() not in _KNOWN_SCHEMES):
        # "docs.python.org/3" or "localhost:8000/docs": a scheme was left out.
        raise InvalidInput(f"{text!r} has no scheme; did you mean https://{text.lstrip('/')} ?")
    scheme = match.group(1).lower()
    if scheme not in DEFAULT_PORTS:
        raise InvalidInput(f"Only http:// and https:// URLs can be crawled, not {scheme}:")


def _check_port(text: str) -> None:
    try:
        urlsplit(text).port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        port = urlsplit(text).netloc.rpartition("@")[2].rpartition(":")[2]
        raise InvalidInput(
            f"{text!r} has port {port!r}; a port is a number from 1 to 65535"
        ) from None


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """The URL without ``user:password@``, and the (user, password) it held, decoded."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    netloc = parts.netloc.rpartition("@")[2]
    bare = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return bare, (unquote(parts.username or ""), unquote(parts.password or ""))


# Schemes written without "//" that a person may paste (so "host:port" is not one of them).
_KNOWN_SCHEMES = frozenset({"mailto", "javascript", "data", "tel", "file", "ftp", "about"})


def normalize_url(url: str, base: str | None = None) -> str | None:
    """Absolute canonical form of ``url`` (resolved against ``base``); None if not http(s)."""
    text = (url or "").strip()
    if base:
        try:
            text = urljoin(base.strip(), text)
        except ValueError:
            return None
    if len(text) > MAX_URL_LENGTH:
        return None  # not followed: no start URL may be longer (and memory stays bounded)
    return _normalized(text)


# Every page of a docs site links the same pages (its navigation): an absolute URL is
# normalised once per process, not once per page that links it. Bounded: 16,384
# URLs of at most MAX_URL_LENGTH characters.
@lru_cache(maxsize=16_384)
def _normalized(text: str) -> str | None:
    """``normalize_url`` of an absolute URL (already stripped)."""
    return text if _already_canonical(text) else _canonicalized(text)


def _canonicalized(text: str) -> str | None:
    """``_normalized`` the long way: every step, whatever the URL holds."""
    parts = _split(text)
    if parts is None or parts.scheme.lower() not in DEFAULT_PORTS or not parts.hostname:
        return None
    if not _HOST_RE.fullmatch(parts.hostname.rstrip(".")) and ":" not in parts.hostname:
        # urlsplit keeps spaces, quotes... in the host; IDNA letters are fine (punycoded).
        return None
    query = _clean_query(parts.query)
    try:
        canonical = canonicalize_url(urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")))
    except (ValueError, UnicodeError):
        return None
    return _finish(canonical, query)


# A URL every step below would give back unchanged: lowercase http(s) scheme and host,
# a port that is not the scheme's default, a path of unreserved characters only (nothing
# to percent-encode), no dot segment, no empty segment, no query, no fragment, and no
# index page to drop. Most links of a docs site are like this; they skip w3lib's
# canonicalize_url (three quarters of the time a page's links cost). tests/unit/test_urls.py
# compares both paths on every link of real docs sites.
_CANONICAL_RE = re.compile(
    r"(?P<scheme>https?)://[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*"
    r"(?::(?P<port>[1-9][0-9]{0,4}))?(?P<path>(?:/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*/?)"
)


def _already_canonical(text: str) -> bool:
    match = _CANONICAL_RE.fullmatch(text)
    if match is None or "/." in match["path"] or not match["path"]:
        return False
    port = match["port"]
    if port is not None and (int(port) > 65535 or port == DEFAULT_PORTS[match["scheme"]]):
        return False
    return not match["path"].endswith(INDEX_PAGES)


def _split(text: str) -> SplitResult | None:
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return None
    return parts


def _clean_query(query: str) -> str:
    """Drop tracking parameters and empty pieces, keeping the order of the rest."""
    kept = [p for p in query.split("&") if p and not _is_tracking(p.split("=", 1)[0])]
    if not kept:
        return ""
    safe = safe_url_string("http://x/?" + "&".join(kept))
    return _PERCENT_RE.sub(lambda m: m.group(0).upper(), safe.split("?", 1)[1])


def _is_tracking(key: str) -> bool:
    name = unquote_plus(key).lower()
    return name in TRACKING_PARAMS or name.startswith(TRACKING_PREFIXES)


def _finish(canonical: str, query: str) -> str:
    parts = urlsplit(canonical)
    path = parts.path or "/"
    folder, _, last = path.rpartition("/")
    if last in INDEX_PAGES:
        path = folder + "/"
    return urlunsplit((parts.scheme, _netloc(parts), path, query, ""))


def _netloc(parts: SplitResult) -> str:
    """host[:port], lowercase, without a trailing dot or the scheme's default port."""
    host = (parts.hostname or "").rstrip(".")
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    port = parts.port
    if port is not None and DEFAULT_PORTS[parts.scheme] != str(port):
        host = f"{host}:{port}"
    userinfo, at, _ = parts.netloc.rpartition("@")
    return f"{userinfo}@{host}" if at else host


def url_hash(url: str) -> str:
    """Stable short hex id of a normalised URL (a sha256 prefix)."""
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def scope_for(start_url: str, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Scope:
    """The crawl's scope: the start URL's scheme and host, and its folder as a path prefix.

    Prefix: the folder the start page lives in.
      ``/docs/v2/intro.html`` -> ``/docs/v2/``;  ``/docs/v2/`` -> ``/docs/v2/``;
      ``/docs/v2`` -> ``/docs/v2/`` as well: a last segment without a page extension
      (``.html``, ``.php``... see ``PAGE_EXTENSIONS``) is taken as the folder the user
      meant, so ``https://host/docs/3.12`` stays within 3.12 rather than every version.
      The bare folder path (``/docs/v2``) is in scope too.

    Include/exclude globs match the URL's path (percent-decoded or not, either counts):
      ``*`` any characters within one segment, ``**`` any characters across segments
      (``/a/**/b`` also matches ``/a/b``), ``?`` one character within a segment.
      A pattern starting with ``/`` is anchored at the site root; any other pattern is
      relative to the prefix (``api/**`` with prefix ``/docs/`` means ``/docs/api/**``).
      A pattern matches the whole path; end it with ``/**`` to take a whole folder.
      With include patterns, a path must match one of them; exclude always wins.
    The scope never admits another scheme or host (``www.`` and the bare domain differ).
    """
    normalized = normalize_url(start_url)
    if normalized is None:
        raise InvalidInput(f"{start_url!r} is not an http(s) URL")
    parts = urlsplit(normalized)
    prefix = _prefix_of(parts.path)
    return Scope(
        scheme=parts.scheme,
        host=parts.netloc,
        path_prefix=prefix,
        include=tuple(_anchor(p, prefix) for p in include if p.strip()),
        exclude=tuple(_anchor(p, prefix) for p in exclude if p.strip()),
    )


def _prefix_of(path: str) -> str:
    if path.endswith("/"):
        return path
    folder, _, last = path.rpartition("/")
    if _extension(last) in PAGE_EXTENSIONS:
        return folder + "/"
    return path + "/"


def _anchor(pattern: str, prefix: str) -> str:
    pattern = pattern.strip()
    return pattern if pattern.startswith("/") else prefix + pattern


def _extension(segment: str) -> str:
    _, dot, ext = segment.rpartition(".")
    return ext.lower() if dot else ""


@lru_cache(maxsize=65_536)
def in_scope(url: str, scope: Scope) -> bool:
    """Whether ``url`` (normalised) is a page of this crawl: see ``scope_for``.

    Memoised: the crawl step judges a page's links in a worker thread
    (``pipeline.fetching``), so the orchestrator, on the event loop that also serves the
    API in ``mdcrawl serve``, finds the answers ready instead of matching globs itself."""
    path = _path_on_origin(url, scope)
    if path is None:
        parts = _split(url)
        if parts is None or parts.scheme != scope.scheme or parts.netloc != scope.host:
            return False
        path = parts.path
    path = path or "/"
    if not (path.startswith(scope.path_prefix) or path + "/" == scope.path_prefix):
        return False
    if is_non_page(path):
        return False
    if any(_glob_matches(p, path) for p in scope.exclude):
        return False
    return not scope.include or any(_glob_matches(p, path) for p in scope.include)


def _path_on_origin(url: str, scope: Scope) -> str | None:
    """The path ``urlsplit`` gives for ``url`` when the URL plainly starts with the
    scope's own ``scheme://host`` (a crawl's links mostly do); None otherwise, and then
    ``urlsplit`` decides. A site's every link is judged once a crawl (22,000 on 2,400
    Rust pages), and splitting each was most of it."""
    origin = f"{scope.scheme}://{scope.host}"
    end = len(origin)
    if not url.startswith(origin) or (len(url) > end and url[end] not in "/?#"):
        return None
    if not url.isprintable() or " " in url:  # urlsplit drops tabs and line breaks
        return None  # anywhere, and strips controls and spaces at the ends: its call
    rest = url[end:]
    cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    return rest[:cut]


def is_non_page(path: str) -> bool:
    """True for paths whose extension names an asset or download (images, css, pdf...)."""
    return _extension(posixpath.basename(path)) in NON_PAGE_EXTENSIONS


def _glob_matches(pattern: str, path: str) -> bool:
    return glob_matches(pattern, path) or glob_matches(pattern, unquote(path))
