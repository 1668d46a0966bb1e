"""ego workspace sync: mirrors non-private memories into an OpenClaw workspace (daily logs, MEMORY.md)."""

from __future__ import annotations

from ego_workspace_sync.config import CONFIG_ENV, WorkspaceSyncConfig
from ego_workspace_sync.files import LOCK_NAME, WorkspaceLock, atomic_write
from ego_workspace_sync.plugin import SYNC_FAILED_NOTE, WorkspaceSyncPlugin
from ego_workspace_sync.render import (
    CURATED_CATEGORIES,
    CURATED_IMPORTANCE,
    PrivateMemoryError,
    RenderError,
    entry_line,
    fold,
    is_curated,
    marker,
    neutralise,
)
from ego_workspace_sync.writer import WorkspaceWriteError, WorkspaceWriter

__all__ = [
    "CONFIG_ENV",
    "CURATED_CATEGORIES",
    "CURATED_IMPORTANCE",
    "LOCK_NAME",
    "SYNC_FAILED_NOTE",
    "PrivateMemoryError",
    "RenderError",
    "WorkspaceLock",
    "WorkspaceSyncConfig",
    "WorkspaceSyncPlugin",
    "WorkspaceWriteError",
    "WorkspaceWriter",
    "atomic_write",
    "entry_line",
    "fold",
    "is_curated",
    "marker",
    "neutralise",
]
