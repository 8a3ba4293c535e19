"""The local docs library (``Library``): crawls stored as (site, version), searchable."""

from .changes import Changes, changes_md
from .store import Hit, Library, LibraryPage, Snapshot

__all__ = ["Changes", "Hit", "Library", "LibraryPage", "Snapshot", "changes_md"]
