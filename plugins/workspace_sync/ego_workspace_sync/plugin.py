"""The ``workspace_sync`` plugin: mirrors non-private memories into an OpenClaw workspace.

Enabled by ``[plugins.workspace_sync] workspace_dir`` or ``EGO_WORKSPACE_DIR``; without either it stays idle.
It only reacts to the memory plugin's notifications (``on_remember``, ``on_forget``, ``on_memory_revised``), so it
requires it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from ego_core import MEMORY_STORE, Check, ConfigError, ImportFormat, Memory, MemoryService, PluginContext, hookimpl
from ego_workspace_sync.config import CONFIG_ENV, WorkspaceSyncConfig
from ego_workspace_sync.importer import openclaw_format
from ego_workspace_sync.journal import JOURNAL_NAME
from ego_workspace_sync.render import INTROSPECTION, is_curated
from ego_workspace_sync.writer import Fallback, Lookup, WorkspaceWriteError, WorkspaceWriter

SYNC_FAILED_NOTE = "The workspace files could not be updated (see the log); the memory itself is saved."
FORGET_PENDING_NOTE = (
    "The workspace files could not be updated yet ({reason}); the lines will be removed at the next write or restart."
)
FORGET_UNSAVED_NOTE = (
    "The workspace files could not be updated yet ({reason}); the lines will be removed at the next write by this "
    "server (the pending removal could not be saved: {problem})."
)
DISABLED_DETAIL = "disabled: set [plugins.workspace_sync] workspace_dir or EGO_WORKSPACE_DIR to mirror memories"
CONFIG_KEY = "plugins.workspace_sync.workspace_dir (or EGO_WORKSPACE_DIR)"


class WorkspaceSyncPlugin:
    """Entry point ``workspace_sync``."""

    config_class: ClassVar[type[WorkspaceSyncConfig]] = WorkspaceSyncConfig
    config_env: ClassVar[Mapping[str, str]] = CONFIG_ENV
    requires: ClassVar[tuple[str, ...]] = ("memory",)
    local_state: ClassVar[str] = "a journal of the lines written to the workspace, tied to that workspace"

    def __init__(self) -> None:
        self.writer: WorkspaceWriter | None = None

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        config: WorkspaceSyncConfig = ctx.config
        if config.workspace_dir is None:
            ctx.log.info("workspace sync is disabled (no workspace_dir / EGO_WORKSPACE_DIR)")
            self.writer = None
            return
        check_workspace_dir(config.workspace_dir)
        self.writer = _writer(ctx, config.workspace_dir)
        self.writer.recover()  # stale temporary files, and work left pending by an earlier run
        ctx.log.info("workspace sync writes to %s", config.workspace_dir)

    @hookimpl
    def on_shutdown(self) -> None:
        writer, self.writer = self.writer, None
        if writer is not None:
            writer.close()

    @hookimpl
    def register_import_formats(self, register: Callable[[ImportFormat], None]) -> None:
        register(openclaw_format())

    @hookimpl(optionalhook=True)
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

    @hookimpl(optionalhook=True)
    def on_forget(self, memory: Memory, ctx: PluginContext) -> Sequence[str] | None:
        writer = self.writer
        if writer is None:
            return None
        # Also for a private memory: it was never written, and removing nothing costs nothing.
        lines = _remove(writer, memory, ctx)
        return None if memory.is_private else lines

    @hookimpl(optionalhook=True)
    def on_memory_revised(self, before: Memory, after: Memory, ctx: PluginContext) -> Sequence[str] | None:
        """A memory made private leaves every file; one made public again is written as a new one would be
        (its day's log, ``MEMORY.md`` when curated; never the inner monologue, which holds the latest); one
        raised to curated joins ``MEMORY.md``."""
        writer = self.writer
        if writer is None or (before.is_private and after.is_private):
            return None
        if after.is_private:
            return _remove(writer, after, ctx)
        try:
            if before.is_private:
                writer.append_daily(after)
            if is_curated(after) and (before.is_private or not is_curated(before)):
                writer.append_curated(after)
        except WorkspaceWriteError as exc:
            ctx.log.warning("workspace sync of %s failed: %s", after.id, exc)
            return [SYNC_FAILED_NOTE]
        return None

    @hookimpl
    def doctor_checks(self, ctx: PluginContext) -> Sequence[Check]:
        """Reports the workspace and the pending work in the journal; creates nothing."""
        config: WorkspaceSyncConfig = ctx.config
        if config.workspace_dir is None:
            return [Check("workspace", True, DISABLED_DETAIL)]
        writer = self.writer or _writer(ctx, config.workspace_dir)
        root = writer.root
        problem = writer.probe()
        if problem is not None:
            detail = f"{root}: not writable ({problem})"
        elif not root.is_dir():
            detail = f"{root} does not exist yet (created at the first write)"
        elif not writer.memory_dir.is_dir():
            detail = f"{root} (writable; memory/ does not exist yet, created at the first write)"
        else:
            detail = f"{root} (writable)"
        checks = [Check("workspace", problem is None, detail)]
        journal_problem = writer.journal.problem()
        if journal_problem is not None:
            checks.append(Check("pending journal", False, journal_problem))
        pending = writer.journal.read()
        if pending.removals:
            ids = ", ".join(pending.removals[:5]) + (", …" if len(pending.removals) > 5 else "")
            detail = (
                f"{len(pending.removals)} forgotten memory(ies) may still be in workspace files ({ids}); "
                "retried at the next write or restart"
            )
            checks.append(Check("pending removals", False, detail))
        if pending.writes:
            detail = (
                f"{len(pending.writes)} memory(ies) not yet written to workspace files; "
                "retried at the next write or restart"
            )
            checks.append(Check("pending writes", False, detail))
        return checks


def check_workspace_dir(root: Path) -> None:
    """A workspace directory that can never be created (it, or a directory above it, is a file) is a
    configuration error; one that is only not writable right now is not (writes fail and are retried)."""
    path = root
    while True:
        try:
            if path.is_dir():
                return
            if path.exists() or path.is_symlink():
                what = "is a file, not a directory" if path.is_file() else "is not a directory"
                if path == root:
                    raise ConfigError(f"{CONFIG_KEY}: {root} {what}")
                raise ConfigError(f"{CONFIG_KEY}: {root} cannot be created: {path} {what}")
        except OSError:
            return  # cannot look (permissions): the first write will tell
        if path == path.parent:
            return
        path = path.parent


def _writer(ctx: PluginContext, root: Path) -> WorkspaceWriter:
    return WorkspaceWriter(
        root,
        tz=ctx.settings.tz,
        redact=ctx.redact,
        log=ctx.log,
        journal=ctx.data_dir / JOURNAL_NAME,
        fallback=_monologue_fallback(ctx),
        lookup=_lookup(ctx),
    )


def _lookup(ctx: PluginContext) -> Lookup:
    def find(memory_ids: Sequence[str]) -> Sequence[Memory]:
        service = ctx.services.get(MEMORY_STORE, MemoryService)
        return [] if service is None else service.get(list(memory_ids))

    return find


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


def _remove(writer: WorkspaceWriter, memory: Memory, ctx: PluginContext) -> list[str] | None:
    """Remove the memory's lines; when that fails, the lines that say when it will be done."""
    try:
        writer.forget(memory.id)
    except WorkspaceWriteError as exc:
        ctx.log.error("workspace cleanup of %s failed: %s", memory.id, exc)
        if exc.kept:
            return [FORGET_PENDING_NOTE.format(reason=exc.reason)]
        problem = writer.journal.save_problem or "see the log"
        return [FORGET_UNSAVED_NOTE.format(reason=exc.reason, problem=problem)]
    return None
