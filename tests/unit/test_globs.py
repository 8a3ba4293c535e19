"""The linear-time glob matcher: the documented language, and no exponential blow-up."""

from __future__ import annotations

import random
import re
import threading

import pytest
from mdcrawl.globs import glob_matches
from mdcrawl.urls import in_scope, scope_for

# The include glob that froze `mdcrawl serve` (issue 9): a backtracking regex needs
# exponential time to find that a path without a final "Z" does not match.
EXPONENTIAL = "/**?**?**?**?**?**?**?**?**?**?**?**?**?**Z"


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("/a/*/c", "/a/b/c", True),
        ("/a/*/c", "/a/b/x/c", False),
        ("/a/**/c", "/a/b/x/c", True),
        ("/a/**/c", "/a/c", True),
        ("/a/**/c", "/a/bc", False),
        ("/a/**", "/a/", True),
        ("/a/**", "/a/x/y.html", True),
        ("/a/?.html", "/a/b.html", True),
        ("/a/?.html", "/a//.html", False),
        ("/a/?.html", "/a/bb.html", False),
        ("/a**z", "/a/b/z", True),
        ("/a*z", "/a/b/z", False),
        ("/a/b", "/a/b/", False),
        ("", "", True),
        ("/*.html", "/x.html", True),
        ("/*.html", "/x.htm", False),
    ],
)
def test_documented_language(pattern: str, path: str, expected: bool) -> None:
    assert glob_matches(pattern, path) is expected


def _as_regex(pattern: str) -> re.Pattern[str]:
    """The regex translation the matcher replaced: the reference for what a glob means."""
    table = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}
    pieces = re.findall(r"\*\*/|\*\*|\*|\?|.", pattern, re.DOTALL)
    return re.compile("".join(table.get(p, re.escape(p)) for p in pieces))


def test_same_answers_as_the_regex_translation_on_random_globs() -> None:
    rng = random.Random(9)
    for _ in range(20_000):
        pattern = "".join(rng.choice("ab/*?") for _ in range(rng.randint(0, 7)))
        path = "".join(rng.choice("ab/") for _ in range(rng.randint(0, 8)))
        expected = bool(_as_regex(pattern).fullmatch(path))
        assert glob_matches(pattern, path) is expected, (pattern, path)


def test_exponential_glob_answers() -> None:
    """On main this never returns (the regex backtracks); the bound is generous slack,
    the matcher takes milliseconds."""
    answers: list[bool] = []
    scope = scope_for("https://e.com/", include=[EXPONENTIAL])
    path = "https://e.com/" + "ab" * 40 + "/page.html"

    def judge() -> None:
        answers.append(in_scope(path, scope))
        answers.append(in_scope("https://e.com/" + "x" * 20 + "Z", scope))

    worker = threading.Thread(target=judge, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert answers == [False, True]
