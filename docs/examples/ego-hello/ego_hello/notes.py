"""The notebook: short notes kept in one JSON file, safe for several threads and several processes.

Every change is a read-modify-write under an exclusive lock (a thread lock plus an OS file lock on
``notes.json.lock``), and the new file is written to a temporary file and moved into place with
``os.replace``. A crash mid-write leaves the previous file intact; readers never see a half-written file.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

import attrs

PRIVATE_PREFIX = "private:"
FORMAT_VERSION = 1


def is_private(text: str) -> bool:
    """A note is private when it starts with ``private:`` (any case)."""
    return text.lstrip().lower().startswith(PRIVATE_PREFIX)


def fold(text: str) -> str:
    """One line: runs of whitespace (newlines included) become one space."""
    return " ".join(text.split())


def body(text: str) -> str:
    """The note without its ``private:`` marker."""
    stripped = text.lstrip()
    return stripped[len(PRIVATE_PREFIX) :].lstrip() if is_private(stripped) else stripped


class NoteStoreError(RuntimeError):
    """The notes file exists but cannot be used. The message never contains note text."""


@attrs.frozen
class Note:
    text: str
    created: datetime
    """When the note was left (timezone-aware UTC)."""
    time_phase: str | None = None
    """The body sense's time phase at that moment (``late_night``, ...), when interoception is enabled."""

    @property
    def is_private(self) -> bool:
        return is_private(self.text)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "created": self.created.isoformat(), "time_phase": self.time_phase}

    @classmethod
    def from_json(cls, item: object) -> Note:
        if not isinstance(item, dict):
            raise NoteStoreError("a note is not a JSON object")
        text, created, phase = item.get("text"), item.get("created"), item.get("time_phase")
        if not isinstance(text, str) or not isinstance(created, str) or not isinstance(phase, str | None):
            raise NoteStoreError("a note lacks text or created, or has a field of the wrong type")
        try:
            moment = datetime.fromisoformat(created)
        except ValueError:
            raise NoteStoreError("a note has a created time that is not ISO 8601") from None
        if moment.tzinfo is None:
            raise NoteStoreError("a note has a created time without a time zone")
        return cls(text=text, created=moment, time_phase=phase)


@runtime_checkable
class NoteReader(Protocol):
    """The ``hello.notes`` service other plugins may consume (read-only)."""

    def notes(self) -> list[Note]: ...

    def latest(self) -> Note | None: ...


if sys.platform == "win32":
    import msvcrt

    def _lock(fh: IO[bytes]) -> None:
        msvcrt.locking(fh.fileno(), msvcrt.LK_LOCK, 1)

    def _unlock(fh: IO[bytes]) -> None:
        msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)

    def _fsync_dir(_path: Path) -> None:
        return None

else:
    import fcntl

    def _lock(fh: IO[bytes]) -> None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)

    def _unlock(fh: IO[bytes]) -> None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _fsync_dir(path: Path) -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class NoteBook:
    """Notes in ``path`` (newest last), at most ``max_notes`` of them."""

    def __init__(self, path: Path, max_notes: int) -> None:
        self.path = path
        self.max_notes = max_notes
        self._lock_path = path.with_name(path.name + ".lock")
        self._thread_lock = threading.Lock()

    def notes(self) -> list[Note]:
        """All kept notes, oldest first. A missing file is an empty notebook."""
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise NoteStoreError(f"{self.path.name} cannot be read ({exc.strerror})") from None
        try:
            document = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise NoteStoreError(f"{self.path.name} is not valid JSON (line {exc.lineno})") from None
        if not isinstance(document, dict) or not isinstance(document.get("notes"), list):
            raise NoteStoreError(f'{self.path.name} has no "notes" list')
        return [Note.from_json(item) for item in document["notes"]]

    def latest(self) -> Note | None:
        notes = self.notes()
        return notes[-1] if notes else None

    def add(self, text: str, *, now: datetime, time_phase: str | None = None) -> tuple[Note, int]:
        """Keep a note; drop the oldest beyond ``max_notes``. Returns the note and how many are kept."""
        if now.tzinfo is None:
            raise ValueError("now must be timezone-aware")
        note = Note(text=text, created=now, time_phase=time_phase)
        with self._locked():
            notes = [*self.notes(), note][-self.max_notes :]
            self._write(notes)
        return note, len(notes)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._thread_lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._lock_path.open("a+b") as fh:
                _lock(fh)
                try:
                    yield
                finally:
                    _unlock(fh)

    def _write(self, notes: list[Note]) -> None:
        payload = json.dumps(
            {"version": FORMAT_VERSION, "notes": [n.to_json() for n in notes]}, ensure_ascii=False, indent=1
        )
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".notes-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(payload + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        _fsync_dir(self.path.parent)
