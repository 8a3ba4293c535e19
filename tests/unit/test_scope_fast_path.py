"""``urls.in_scope`` reads a URL on the scope's own origin without ``urlsplit``: it must
answer exactly as splitting it would, for every shape of URL."""

from __future__ import annotations

import random
from urllib.parse import urlsplit

import pytest
from mdcrawl import urls
from mdcrawl.models import Scope

SCOPES = [
    Scope("https", "docs.example.org", "/en/latest/"),
    Scope("http", "127.0.0.1:8080", "/"),
    Scope("https", "docs.example.org", "/api/", include=("/api/v2/*",), exclude=("*/old/*",)),
]
ORIGINS = [
    "https://docs.example.org", "http://127.0.0.1:8080", "HTTPS://docs.example.org",
    "https://docs.example.org.evil", "https://docs.example.org@evil", "https://evil",
    "http://127.0.0.1:80", "http://127.0.0.1:8080x", "https://docs.example.org:443",
    " https://docs.example.org", "\thttps://docs.example.org", "https://docs.example.org:x",
    "https://[::1", "",
]
TAILS = [
    "/en/latest/", "/en/latest", "/en/", "/api/v2/x.html", "/api/old/v2/", "/api/v2/old/y",
    "/img.png", "/a.html", "?q=1", "#frag", "?a#b", "#a?b", "/p;x", "%2F", "/en/latest/%20x",
    "\t", "\n", " ", "\x00", "\u2028", "/é", "", "/..", "//", "[", ":", "@",
]


def _by_urlsplit(url: str, scope: Scope) -> bool:
    """in_scope as it was: every URL split."""
    parts = urls._split(url)
    if parts is None or parts.scheme != scope.scheme or parts.netloc != scope.host:
        return False
    path = parts.path or "/"
    if not (path.startswith(scope.path_prefix) or path + "/" == scope.path_prefix):
        return False
    if urls.is_non_page(path):
        return False
    if any(urls._glob_matches(p, path) for p in scope.exclude):
        return False
    return not scope.include or any(urls._glob_matches(p, path) for p in scope.include)


def _urls(count: int) -> list[str]:
    pick = random.Random(13)
    made = [
        # half of them on a scope's own origin, as most of a site's links are
        pick.choice([pick.choice(ORIGINS), ORIGINS[0], ORIGINS[1]])
        + "".join(pick.choices(TAILS, k=pick.randint(0, 4)))
        for _ in range(count)
    ]
    return made + ["https://docs.example.org/en/latest/a.html", "http://127.0.0.1:8080"]


@pytest.mark.parametrize("scope", SCOPES)
def test_the_fast_path_answers_as_urlsplit_does(scope: Scope) -> None:
    urls.in_scope.cache_clear()
    differing = [u for u in _urls(4000) if urls.in_scope(u, scope) != _by_urlsplit(u, scope)]
    assert differing == []


def test_the_fast_path_gives_urlsplits_path_or_leaves_the_url_to_it() -> None:
    scope = SCOPES[0]
    taken = 0
    for url in _urls(4000):
        path = urls._path_on_origin(url, scope)
        if path is not None:
            taken += 1
            parts = urlsplit(url)
            assert (parts.scheme, parts.netloc, parts.path) == ("https", scope.host, path), url
    assert taken > 500  # the generator does reach the fast path (867 of 4,002)
