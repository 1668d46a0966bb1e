"""The pending-work journal: workspace writes and removals that failed and are still to be done.

It lives in the plugin's data directory (``<data dir>/workspace_sync/pending.json``), so a restart picks the work
up again and ``ego doctor`` (another process) can report it. It holds memory ids and file kinds only, never
content. Every change is a read-modify-write of the whole file under an exclusive ``flock`` on
``pending.lock`` (two processes may share the data directory), written to a temporary file, fsynced and renamed
over the journal (:func:`~ego_workspace_sync.files.atomic_write`); the file is removed when nothing is pending.

Without a path (a :class:`~ego_workspace_sync.writer.WorkspaceWriter` used on its own) the journal lives in
memory only. If the file cannot be written, the change is kept in memory and written with the next change.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import attrs

from ego_workspace_sync.files import atomic_remove, atomic_write
from ego_workspace_sync.render import MEMORY_ID

JOURNAL_NAME: Final = "pending.json"
JOURNAL_LOCK: Final = "pending.lock"
VERSION: Final = 1
LINE_TARGETS: Final = frozenset({"daily", "curated"})
"""The kinds of pending writes (the inner monologue is never retried: the next introspection rewrites it)."""

_log = logging.getLogger("ego.plugin.workspace_sync")

Entry = dict[str, Any]
"""One workspace's pending work: ``{"removals": [id, ...], "writes": {id: [target, ...]}}``."""
Change = Callable[[Entry], None]


@attrs.frozen
class Pending:
    """What is pending for one workspace."""

    removals: tuple[str, ...] = ()
    """Forgotten memories whose lines may still be in workspace files."""
    writes: Mapping[str, frozenset[str]] = attrs.field(factory=lambda: MappingProxyType({}))
    """Memories whose lines are not written yet, with the files (``daily``, ``curated``) still to write."""

    def __bool__(self) -> bool:
        return bool(self.removals or self.writes)


class JournalError(OSError):
    """The journal file cannot be read (it is not valid JSON of the expected shape)."""


class PendingJournal:
    """The pending work of one workspace, in a journal file shared with other workspaces' (or only in memory)."""

    def __init__(self, path: Path | None, workspace: Path, *, log: logging.Logger | None = None) -> None:
        self.path = path
        self.key = str(workspace)
        self.log = log or _log
        self._lock = threading.Lock()
        self._in_memory: dict[str, Entry] = {}
        self._unsaved: list[Change] = []
        self.save_problem: str | None = None
        """Why the last change could not be written to the file (``None``: it was)."""

    # ------------------------------------------------------------------------------------------
    # Reading

    def read(self) -> Pending:
        """What is pending now (the file, plus changes that could not be written yet)."""
        with self._lock:
            try:
                document = self._load()
            except JournalError:
                document = {}
            entry = _entry(document, self.key)
            for change in self._unsaved:
                change(entry)
            return _pending(entry)

    def problem(self) -> str | None:
        """Why the journal cannot be read or written, if it cannot."""
        with self._lock:
            try:
                self._load()
            except JournalError as exc:
                return str(exc)
            return self.save_problem

    # ------------------------------------------------------------------------------------------
    # Changing

    def add_removal(self, memory_id: str) -> bool:
        """Remember that ``memory_id``'s lines are still to be removed; whether that reached the file."""

        def change(entry: Entry) -> None:
            if memory_id not in entry["removals"]:
                entry["removals"].append(memory_id)
            entry["writes"].pop(memory_id, None)

        return self._update(change)

    def done_removal(self, memory_id: str) -> bool:
        return self._update(lambda entry: _discard(entry["removals"], memory_id))

    def add_write(self, memory_id: str, targets: frozenset[str]) -> bool:
        """Remember that ``targets`` of ``memory_id`` are still to be written (merged with what already is)."""
        wanted = sorted(targets & LINE_TARGETS)

        def change(entry: Entry) -> None:
            if wanted:
                entry["writes"][memory_id] = sorted(set(entry["writes"].get(memory_id, ())) | set(wanted))

        return self._update(change) if wanted else True

    def retried_write(self, memory_id: str, still_failing: frozenset[str]) -> bool:
        """After a retry: ``still_failing`` are the targets left (none: done). A write dropped meanwhile (its
        memory was forgotten) stays dropped."""
        left = sorted(still_failing & LINE_TARGETS)

        def change(entry: Entry) -> None:
            if memory_id not in entry["writes"]:
                return
            if left:
                entry["writes"][memory_id] = left
            else:
                del entry["writes"][memory_id]

        return self._update(change)

    def drop_write(self, memory_id: str) -> bool:
        def change(entry: Entry) -> None:
            entry["writes"].pop(memory_id, None)

        return self._update(change)

    def _update(self, change: Change) -> bool:
        with self._lock, self._file_lock():
            try:
                document = self._load()
            except JournalError as exc:
                self.log.error("workspace journal %s is unreadable (%s); starting it afresh", self.path, exc)
                document = {}
            entry = _entry(document, self.key)
            changes = [*self._unsaved, change]
            for each in changes:
                each(entry)
            workspaces = document.setdefault("workspaces", {})
            if entry["removals"] or entry["writes"]:
                workspaces[self.key] = entry
            else:
                workspaces.pop(self.key, None)
            try:
                self._save(document)
            except OSError as exc:
                self._unsaved = changes
                self.save_problem = f"{type(exc).__name__}: {exc.strerror or exc}"
                self.log.error("workspace journal %s could not be written: %s", self.path, self.save_problem)
                return False
            self._unsaved = []
            self.save_problem = None
            return True

    # ------------------------------------------------------------------------------------------
    # Storage

    def _load(self) -> dict[str, Any]:
        if self.path is None:
            return {"version": VERSION, "workspaces": copy.deepcopy(self._in_memory)}
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {"version": VERSION, "workspaces": {}}
        except OSError as exc:
            raise JournalError(exc.errno, f"cannot read {self.path}: {exc.strerror}") from exc
        try:
            document = json.loads(raw)
        except ValueError as exc:
            raise JournalError(f"{self.path} is not valid JSON") from exc
        if not isinstance(document, dict) or not isinstance(document.get("workspaces"), dict):
            raise JournalError(f"{self.path} is not a workspace_sync journal")
        return document

    def _save(self, document: dict[str, Any]) -> None:
        if self.path is None:
            self._in_memory = document.get("workspaces", {})
            return
        if not document.get("workspaces"):
            atomic_remove(self.path)
            return
        document["version"] = VERSION
        atomic_write(self.path, (json.dumps(document, indent=1, sort_keys=True) + "\n").encode("utf-8"))

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        if self.path is None:
            yield
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path.with_name(JOURNAL_LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            yield  # the data directory is not writable: saving fails too, and the change is kept in memory
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _entry(document: Mapping[str, Any], key: str) -> Entry:
    """A clean, mutable copy of one workspace's entry (malformed ids and targets are left out)."""
    raw = document.get("workspaces", {}).get(key)
    raw = raw if isinstance(raw, dict) else {}
    removals = raw.get("removals")
    writes = raw.get("writes")
    entry: Entry = {"removals": [], "writes": {}}
    if isinstance(removals, list):
        entry["removals"] = list(dict.fromkeys(i for i in removals if isinstance(i, str) and MEMORY_ID.match(i)))
    if isinstance(writes, dict):
        for memory_id, targets in writes.items():
            if isinstance(memory_id, str) and MEMORY_ID.match(memory_id) and isinstance(targets, list):
                kept = sorted({t for t in targets if t in LINE_TARGETS})
                if kept:
                    entry["writes"][memory_id] = kept
    return entry


def _pending(entry: Entry) -> Pending:
    writes = {memory_id: frozenset(targets) for memory_id, targets in entry["writes"].items()}
    return Pending(removals=tuple(entry["removals"]), writes=MappingProxyType(writes))


def _discard(items: list[str], item: str) -> None:
    if item in items:
        items.remove(item)
