"""Words as the scorer counts them, on both sides (HTML and markdown)."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+")


def tokens(text: str) -> list[str]:
    """Lower-case runs of letters and digits: punctuation and markup never count."""
    return _TOKEN.findall(text.lower())


def phrase(text: str) -> str:
    """The words of ``text`` as one space-separated string, for containment tests."""
    return " ".join(tokens(text))


def normal_code(code: str) -> str:
    """Code compared line by line: trailing spaces and blank edges do not count."""
    lines = [line.rstrip() for line in code.replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)
