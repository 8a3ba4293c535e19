"""mdcrawl: a documentation site to clean, LLM-ready markdown.

The core (everything except ``fetch.py``, ``adapters/``, ``runtime/`` and ``cli.py``)
knows nothing of AWS, SQLite, sockets or environment variables.
"""

__version__ = "0.1.0"
