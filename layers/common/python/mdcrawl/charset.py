"""Page bytes to text, without trusting a UTF-8 label that the bytes contradict.

w3lib's ``html_to_unicode`` picks, in order, a BOM, the HTTP charset, ``<meta charset>``,
then UTF-8, and decodes with replacement. A server that labels Latin-1 pages as UTF-8
(a misconfigured default, common on old hosts) then turns every accented letter into
U+FFFD: "Grüße Café Naïve" read "Gr��e Caf� Na�ve" and its anchor ``#gre-caf-nave``.
Browsers show such pages wrongly too, but the bytes tell the truth: Latin-1 text with
accents is almost never valid UTF-8. So when the UTF-8 chosen (by label or by default)
does not decode and the body holds no valid multi-byte UTF-8 sequence at all, the page
is read as windows-1252 (what WHATWG maps the Latin-1 labels to), after giving its own
``<meta charset>`` a chance. A mostly UTF-8 page with a stray bad byte stays UTF-8.
"""

from __future__ import annotations

import re

from w3lib.encoding import html_to_unicode

# A lead byte followed by the right number of continuation bytes: real UTF-8 text.
_UTF8_MULTIBYTE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
)
_UTF8_NAMES = frozenset({"utf-8", "utf8"})
FALLBACK = "cp1252"


def decode_page(body: bytes, encoding: str | None = None) -> str:
    """Text of an HTML body; ``encoding`` is the HTTP charset, if the server sent one."""
    header = f"text/html; charset={encoding}" if encoding else None
    chosen, text = html_to_unicode(header, body)
    if not _is_utf8(chosen) or "\ufffd" not in text or not _contradicts_utf8(body):
        return text
    if header is not None:  # the page's own <meta charset> may know better than the server
        chosen, text = html_to_unicode(None, body)
        if not _is_utf8(chosen):
            return text
    return body.decode(FALLBACK, errors="replace")


def _is_utf8(name: str) -> bool:
    return name.lower().replace("_", "-") in _UTF8_NAMES


def _contradicts_utf8(body: bytes) -> bool:
    """Not valid UTF-8, and not one multi-byte UTF-8 character in it either."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return _UTF8_MULTIBYTE.search(body) is None
    return False
