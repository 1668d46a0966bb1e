"""What the memory store raises when it cannot do what was asked."""

from __future__ import annotations

REINDEX_COMMAND = "ego memory reindex"


class StoreError(RuntimeError):
    """The store cannot do what was asked (not open, re-indexed by another process, a memory vanished)."""


class ModelMismatchError(StoreError):
    def __init__(self, stored: str, configured: str) -> None:
        super().__init__(
            f"the memory store was built with embedding model {stored!r}, but {configured!r} is configured. "
            f"Switch back to {stored!r}, or re-embed every memory with the new model: `{REINDEX_COMMAND}`"
        )
        self.stored = stored
        self.configured = configured


class VectorIndexError(StoreError):
    """The vector index (Chroma) cannot be opened or applied: corrupt files, a failed compaction, a server
    that does not answer. The memories themselves are safe in SQLite, from which the index can be rebuilt."""
