"""Token counts, estimated without a tokenizer: no model files, no downloads, same answer
everywhere.

The estimate is ceil(characters / 4), the usual rule of thumb for GPT-style BPE
tokenizers on English prose and code (cl100k/o200k average 3.5-4.5 characters a token on
documentation). It is an estimate and every output that shows it says so; what matters is
that it is deterministic and roughly proportional, so a budget of N estimated tokens is a
budget of about N real ones.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: ceil(len / 4); 0 for the empty string."""
    return -(-len(text) // CHARS_PER_TOKEN)
