"""The ``workspace_sync`` plugin: mirrors non-private memories into an OpenClaw workspace (SPEC §6.2).

Enabled by ``[plugins.workspace_sync] workspace_dir`` or ``EGO_WORKSPACE_DIR``; without either it stays idle.
It only reacts to the memory plugin's notifications (``on_remember``, ``on_forget``), so it requires it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from ego_core.hookspecs import hookimpl
from ego_core.host import PluginContext
from ego_core.services import MEMORY_STORE, MemoryService
from ego_core.types import Check, Memory
from ego_workspace_sync.config import CONFIG_ENV, WorkspaceSyncConfig
from ego_workspace_sync.render import INTROSPECTION
from ego_workspace_sync.writer import Fallback, WorkspaceWriteError, WorkspaceWriter

SYNC_FAILED_NOTE = "The workspace files could not be updated (see the log); the memory itself is saved."
DISABLED_DETAIL = "disabled: set [plugins.workspace_sync] workspace_dir or EGO_WORKSPACE_DIR to mirror memories"


class WorkspaceSyncPlugin:
    """Entry point ``workspace_sync``."""

    config_class: ClassVar[type[WorkspaceSyncConfig]] = WorkspaceSyncConfig
    config_env: ClassVar[Mapping[str, str]] = CONFIG_ENV
    requires: ClassVar[tuple[str, ...]] = ("memory",)

    def __init__(self) -> None:
        self.writer: WorkspaceWriter | None = None

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        config: WorkspaceSyncConfig = ctx.config
        if config.workspace_dir is None:
            ctx.log.info("workspace sync is disabled (no workspace_dir / EGO_WORKSPACE_DIR)")
            self.writer = None
            return
        self.writer = WorkspaceWriter(config.workspace_dir, tz=ctx.settings.tz, redact=ctx.redact, log=ctx.log)
        ctx.log.info("workspace sync writes to %s", config.workspace_dir)

    @hookimpl
    def on_shutdown(self) -> None:
        self.writer = None

    @hookimpl
    def on_remember(self, memory: Memory, ctx: PluginContext) -> Sequence[str] | None:
        writer = self.writer
        if writer is None or memory.is_private:
            return None  # private memories never reach the writer (which would refuse them anyway)
        try:
            writer.sync(memory)
        except WorkspaceWriteError as exc:
            ctx.log.warning("workspace sync of %s failed: %s", memory.id, exc)
            return [SYNC_FAILED_NOTE]
        return None

    @hookimpl
    def on_forget(self, memory: Memory, ctx: PluginContext) -> None:
        writer = self.writer
        if writer is None:
            return
        try:
            # Also for a private memory: it was never written, and removing nothing costs nothing.
            writer.forget(memory.id, fallback=_monologue_fallback(ctx))
        except WorkspaceWriteError as exc:
            ctx.log.error("workspace cleanup of %s failed: %s", memory.id, exc)

    @hookimpl
    def doctor_checks(self, ctx: PluginContext) -> Sequence[Check]:
        config: WorkspaceSyncConfig = ctx.config
        if config.workspace_dir is None:
            return [Check("workspace", True, DISABLED_DETAIL)]
        writer = self.writer or WorkspaceWriter(config.workspace_dir, tz=ctx.settings.tz, redact=ctx.redact)
        problem = writer.probe()
        checks = [
            Check(
                "workspace",
                problem is None,
                f"{writer.root} (writable)" if problem is None else f"{writer.root}: not writable ({problem})",
            )
        ]
        removals, syncs = writer.pending_removals, writer.pending_syncs
        if removals:
            detail = f"{len(removals)} forgotten memory(ies) still in workspace files; retried on the next write"
            checks.append(Check("pending removals", False, detail))
        if syncs:
            detail = f"{len(syncs)} memory(ies) not yet written to workspace files; retried on the next write"
            checks.append(Check("pending writes", False, detail))
        return checks


def _monologue_fallback(ctx: PluginContext) -> Fallback:
    """Finds the newest earlier inner monologue that still exists, through the memory plugin's service."""

    def find(candidates: Sequence[str]) -> Memory | None:
        service = ctx.services.get(MEMORY_STORE, MemoryService)
        if service is None or not candidates:
            return None
        for memory in service.get(list(candidates)):
            if not memory.is_private and memory.category == INTROSPECTION:
                return memory
        return None

    return find
