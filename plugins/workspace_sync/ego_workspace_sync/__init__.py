"""ego workspace sync: mirrors non-private memories into an OpenClaw workspace (daily logs, MEMORY.md)."""

from __future__ import annotations

from ego_workspace_sync.config import CONFIG_ENV, WorkspaceSyncConfig
from ego_workspace_sync.files import LOCK_NAME, FileChangedError, WorkspaceLock, atomic_write, rewrite
from ego_workspace_sync.journal import JOURNAL_NAME, Pending, PendingJournal
from ego_workspace_sync.plugin import FORGET_PENDING_NOTE, SYNC_FAILED_NOTE, WorkspaceSyncPlugin
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
    "FORGET_PENDING_NOTE",
    "JOURNAL_NAME",
    "LOCK_NAME",
    "SYNC_FAILED_NOTE",
    "FileChangedError",
    "Pending",
    "PendingJournal",
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
    "rewrite",
]
