"""Path globs matched in linear time: a bit-parallel NFA, never a backtracking regex.

The language (``urls.scope_for`` documents it for users): ``*`` any characters within one
segment, ``**`` any characters across segments, ``**/`` zero or more whole segments
(``/a/**/b`` matches ``/a/b``), ``?`` one character within a segment; every other
character stands for itself. A pattern matches the whole path.

Why not ``re``: ``**`` became ``.*``, and ``/**?**?**?…Z`` made Python's backtracking
engine take exponential time on a path that does not match (one include glob froze
``mdcrawl serve``). Here the pattern compiles to a row of NFA states held as the bits of
one integer; each character of the path moves every active state at once with a few
integer operations, so a match costs O(len(path)) big-integer steps whatever the pattern.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache


class _Kind(Enum):
    LITERAL = "literal"  # one given character
    ONE = "one"  # ?   one character but "/"
    STAR = "star"  # *   a run of characters without "/"
    ANY = "any"  # **  any run of characters
    DIRS_ENTRY = "dirs_entry"  # **/ part 1: skip the whole group (zero segments)
    DIRS = "dirs"  # **/ part 2: any run of characters ending with "/"


@dataclass(frozen=True)
class _State:
    kind: _Kind
    char: str = ""


@dataclass
class GlobMatcher:
    """One compiled glob. Bit ``i`` of the active set means "state ``i`` is next to
    match"; bit ``len(states)`` means the whole pattern has been matched."""

    states: tuple[_State, ...]
    _step1: int = 0  # states with an empty move to the next state
    _step2: int = 0  # states with an empty move over the next state (DIRS_ENTRY)
    _masks: dict[str, tuple[int, int]] = field(default_factory=dict)  # char -> advance, stay

    def __post_init__(self) -> None:
        for i, state in enumerate(self.states):
            if state.kind in (_Kind.STAR, _Kind.ANY, _Kind.DIRS_ENTRY):
                self._step1 |= 1 << i
            if state.kind is _Kind.DIRS_ENTRY:
                self._step2 |= 1 << i

    def matches(self, path: str) -> bool:
        active = self._closure(1)
        for char in path:
            advance, stay = self._masks_for(char)
            active = self._closure(((active & advance) << 1) | (active & stay))
            if not active:
                return False
        return bool(active >> len(self.states) & 1)

    def _closure(self, active: int) -> int:
        """Add every state reachable by empty moves (a run of them is at most as long as
        the pattern, and each round adds at least one bit)."""
        while True:
            grown = active | ((active & self._step1) << 1) | ((active & self._step2) << 2)
            if grown == active:
                return active
            active = grown

    def _masks_for(self, char: str) -> tuple[int, int]:
        masks = self._masks.get(char)
        if masks is None:
            masks = self._masks[char] = _char_masks(self.states, char)
        return masks


def _char_masks(states: tuple[_State, ...], char: str) -> tuple[int, int]:
    """(states that consume ``char`` and move on, states that consume it and stay)."""
    advance = stay = 0
    in_segment = char != "/"
    for i, state in enumerate(states):
        kind = state.kind
        if (kind is _Kind.LITERAL and state.char == char) or (kind is _Kind.ONE and in_segment):
            advance |= 1 << i
        elif (kind is _Kind.STAR and in_segment) or kind is _Kind.ANY:
            stay |= 1 << i
        elif kind is _Kind.DIRS:
            stay |= 1 << i
            if not in_segment:
                advance |= 1 << i
    return advance, stay


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> GlobMatcher:
    return GlobMatcher(tuple(_states(pattern)))


def _states(pattern: str) -> list[_State]:
    states: list[_State] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            states += [_State(_Kind.DIRS_ENTRY), _State(_Kind.DIRS)]
            i += 3
        elif pattern.startswith("**", i):
            states.append(_State(_Kind.ANY))
            i += 2
        elif pattern[i] == "*":
            states.append(_State(_Kind.STAR))
            i += 1
        elif pattern[i] == "?":
            states.append(_State(_Kind.ONE))
            i += 1
        else:
            states.append(_State(_Kind.LITERAL, pattern[i]))
            i += 1
    return states


def glob_matches(pattern: str, path: str) -> bool:
    """Whether ``pattern`` matches the whole of ``path`` (see the module docstring)."""
    return compile_glob(pattern).matches(path)
