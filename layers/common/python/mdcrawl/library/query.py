"""A developer's question as an FTS5 query: its words, OR-ed, so BM25 ranks passages by how
many (and how rare) of the words they hold; no word of the question is required, since
people ask with words the docs do not use ("how do I …").

Every term is quoted, so nothing the user types is FTS5 syntax (``-``, ``:``, ``*``,
``AND``, unbalanced quotes). Pure functions.
"""

from __future__ import annotations

import re

# Words that say nothing about which passage answers: question words, auxiliaries,
# pronouns and the filler of "how do I ... in X?". Kept short on purpose.
STOP_WORDS = frozenset(
    (
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "without",
        "into",
        "about",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "doing",
        "done",
        "have",
        "has",
        "had",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "how",
        "what",
        "which",
        "who",
        "whom",
        "why",
        "when",
        "where",
        "whether",
        "if",
        "then",
        "than",
        "so",
        "not",
        "no",
        "yes",
        "any",
        "some",
        "all",
        "each",
        "using",
        "want",
        "need",
        "way",
        "please",
        "tell",
    )
)
_WORD = re.compile(r"\w+", re.UNICODE)


def query_terms(text: str) -> list[str]:
    """The question's words worth searching for, lower case, first occurrence order."""
    words = [w.lower() for w in _WORD.findall(text)]
    kept = [w for w in words if w not in STOP_WORDS and len(w) > 1]
    chosen = kept or [w for w in words if len(w) > 1]
    return list(dict.fromkeys(chosen))


def fts_query(text: str) -> str:
    """The FTS5 MATCH expression for ``text``; "" when it holds no word at all."""
    return " OR ".join(f'"{term}"' for term in query_terms(text))
