"""Storage helpers for plugins that keep state in SQLite.

:func:`open_database` (``ctx.database(...)`` in a plugin) opens a plugin's own database the way every built-in
plugin does by hand: created with mode 0600, WAL, a long busy timeout, explicit transactions, its schema brought
up to date by numbered migrations (the version is SQLite's ``user_version``), and one write lock for the
threads of the process (``BEGIN IMMEDIATE`` for the other processes). :func:`read_database` opens it read-only,
without creating or migrating anything, for ``doctor_checks`` and ``export_records`` before (or without)
``on_startup``. Every built-in plugin that keeps state in SQLite opens it this way.

:func:`write_atomically` and :func:`open_atomically` replace a file all at once: a temporary file beside it,
fsynced, then ``os.replace``-d over it (the directory fsynced too), so a crash leaves the old file or the new one.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TextIO

Migration = str | Callable[[sqlite3.Connection], None]
"""One step of a schema: an SQL script, or a function given the connection (for a step SQL cannot say, such as
adopting a file an earlier release kept by another convention, or rewriting values in Python). Either runs
inside the migration's write transaction."""

Synchronous = Literal["NORMAL", "FULL"]
"""SQLite's ``synchronous`` level: ``NORMAL`` (a power cut may lose the last commits, never consistency) or
``FULL`` (every commit is on disk when it returns)."""

BUSY_TIMEOUT_SECONDS = 60.0
"""How long a write waits for another process's write lock before it fails with ``database is locked``."""

PRIVATE_DIRECTORY = 0o700
"""What a directory that holds memories may allow: its owner only."""


def private_directory(path: Path, *, tighten: bool = True) -> Path:
    """``path`` as a directory only its owner may enter: created so (its missing parents too), or, with
    ``tighten``, made so when a release before this one left it open to the group or others (only for a
    directory that is ego's own, never one the user named)."""
    missing = []
    for parent in (path, *path.parents):
        if parent.exists():
            break
        missing.append(parent)
    for directory in reversed(missing):
        directory.mkdir(mode=PRIVATE_DIRECTORY, exist_ok=True)
    status = path.stat()
    if tighten and status.st_mode & 0o077 and status.st_uid == os.getuid():
        os.chmod(path, PRIVATE_DIRECTORY)
    return path


@contextmanager
def write_transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction on a connection opened with ``isolation_level=None``: ``BEGIN IMMEDIATE`` (so two
    processes never both read before writing), committed when the block ends, rolled back if it raises."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable, where the system lets a directory be opened (else nothing)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def _replacing(target: Path, mode: int | None) -> Iterator[int]:
    """A temporary file beside ``target`` to write (its descriptor): fsynced and renamed over ``target`` when the
    block ends, removed if anything fails."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)  # mode 0600
    try:
        try:
            if mode is not None:
                os.chmod(temporary, mode)
            yield fd
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    fsync_directory(target.parent)


def write_atomically(path: Path | str, data: str | bytes, *, mode: int | None = None, encoding: str = "utf-8") -> None:
    """Replace ``path``'s content with ``data`` all at once: its directory created if missing, a temporary file
    written beside it (mode 0600, or ``mode``), fsynced, ``os.replace``-d over it, the directory fsynced. A crash
    or an error leaves the previous file (or none) and no temporary file. Text is written as given (no newline
    translation)."""
    payload = data.encode(encoding) if isinstance(data, str) else data
    with _replacing(Path(path), mode) as fd:
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]


@contextmanager
def open_atomically(path: Path | str, *, mode: int | None = None, encoding: str = "utf-8") -> Iterator[TextIO]:
    """:func:`write_atomically` for a writer that writes piece by piece: ``with open_atomically(path) as out:``
    gives a text file; ``path`` is replaced when the block ends, and left as it was if the block raises."""
    with _replacing(Path(path), mode) as fd, os.fdopen(fd, "w", encoding=encoding, newline="", closefd=False) as out:
        yield out


class DatabaseVersionError(RuntimeError):
    """The database was written by a newer version of the plugin (more migrations than this one knows)."""


class Database:
    """A plugin's SQLite database: ``db`` for reads, ``with database.write() as db:`` for one write transaction.

    The connection is shared by the threads of the process (tool handlers run in worker threads): every write
    takes the lock, and reads are plain ``database.db.execute(...)`` calls (WAL lets them run beside a writer
    of another process), or ``with database.read() as db:`` for several reads that must agree.
    """

    def __init__(
        self,
        path: Path,
        db: sqlite3.Connection,
        version: int,
        *,
        read_only: bool = False,
        synchronous: Synchronous = "NORMAL",
        secure_delete: bool = False,
    ) -> None:
        self.path = path
        self.db = db
        self.version = version
        """The schema version: how many migrations have been applied (SQLite's ``user_version``)."""
        self.read_only = read_only
        self.synchronous: Synchronous = synchronous
        self.secure_delete = secure_delete
        self._lock = threading.RLock()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction under the process's write lock; rolled back if the block raises."""
        if self.read_only:
            raise sqlite3.OperationalError(f"{self.path.name} was opened read-only")
        with self._lock, write_transaction(self.db) as db:
            yield db

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction under the same lock: every read in the block sees one state of the file."""
        with self._lock:
            self.db.execute("BEGIN")
            try:
                yield self.db
            finally:
                self.db.execute("COMMIT")

    def connect(self) -> sqlite3.Connection:
        """A new connection to the same file with the same settings, for a thread that wants its own (a threaded
        server whose readers should not wait for each other). It does not share :meth:`write`'s lock: write
        on it with :func:`write_transaction`. The caller closes it."""
        if self.read_only:
            return _connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
        return _connect(str(self.path), synchronous=self.synchronous, secure_delete=self.secure_delete)

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _connect(
    target: str, *, uri: bool = False, synchronous: Synchronous | None = None, secure_delete: bool = False
) -> sqlite3.Connection:
    db = sqlite3.connect(target, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False, uri=uri)
    try:
        db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_SECONDS * 1000)}")
        if synchronous is not None:
            db.execute(f"PRAGMA synchronous={synchronous}")
        if secure_delete:
            db.execute("PRAGMA secure_delete=ON")
    except BaseException:
        db.close()
        raise
    return db


def _version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def open_database(
    path: Path,
    migrations: Sequence[Migration],
    *,
    synchronous: Synchronous = "NORMAL",
    secure_delete: bool = False,
) -> Database:
    """Open (creating with mode 0600, in a directory made 0700 if missing) the database at ``path`` and apply the
    migrations it has not had yet.

    ``migrations[i]`` takes the schema from version ``i`` to ``i + 1``: an SQL script (one or more statements)
    or a function of the connection (:data:`Migration`). Each runs in its own write transaction with the new
    version, so a crash leaves the database at a version it had. Never edit a migration once released: append
    one. A database at a higher version than ``len(migrations)`` raises :class:`DatabaseVersionError` (a newer
    release wrote it) and is left as it was.

    ``synchronous`` is SQLite's level for every connection (``"FULL"`` where a lost commit would be felt, as a
    desire's satisfaction); ``secure_delete`` zeroes deleted content in the file (where a deleted or masked value
    must not linger). Both apply to :meth:`Database.connect` too.
    """
    private_directory(path.parent, tighten=False)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))  # before SQLite creates it with the umask's mode
    db = _connect(str(path), synchronous=synchronous, secure_delete=secure_delete)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        version = _version(db)
        if version > len(migrations):
            raise DatabaseVersionError(
                f"{path.name} has schema version {version}, newer than this plugin knows ({len(migrations)}); "
                "upgrade the plugin (the file was left as it was)"
            )
        for number, step in enumerate(migrations[version:], start=version + 1):
            with write_transaction(db):
                if _version(db) >= number:  # another process migrated meanwhile
                    continue
                if isinstance(step, str):
                    for statement in _statements(step):
                        db.execute(statement)
                else:
                    step(db)
                db.execute(f"PRAGMA user_version = {int(number)}")
        return Database(path, db, _version(db), synchronous=synchronous, secure_delete=secure_delete)
    except BaseException:
        db.close()
        raise


def read_database(path: Path) -> Database | None:
    """The database at ``path`` opened read-only (``None`` when there is no such file): nothing is created,
    migrated or locked, so ``doctor_checks`` and ``export_records`` may read it before ``on_startup``."""
    if not path.is_file():
        return None
    db = _connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    return Database(path, db, _version(db), read_only=True)


def _statements(script: str) -> list[str]:
    """The complete statements of an SQL script, in order, however they share lines (``executescript`` would
    commit the transaction). A ``;`` inside a string, a comment or a trigger's body does not end a statement."""
    statements: list[str] = []
    current = ""
    pieces = script.split(";")
    for index, piece in enumerate(pieces):
        current += piece if index == len(pieces) - 1 else piece + ";"
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    if current.strip():
        statements.append(current.strip())
    return [s for s in statements if s.strip(" ;\n")]
