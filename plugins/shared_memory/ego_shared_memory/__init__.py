"""ego shared memory: one append-only, permissioned memory for several agents (gateway, janitor, tools)."""

from ego_shared_memory.plugin import SharedMemoryPlugin

__all__ = ["SharedMemoryPlugin"]
