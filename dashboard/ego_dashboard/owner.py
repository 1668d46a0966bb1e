"""The dashboard's owner credential: one per data directory (each agent's space has its own), never an agent's
MCP token.

The owner token is 256 random bits made here (``egoowner_…``), shown once and stored only as its SHA-256 in
``<data dir>/dashboard/owner-token.json`` (mode 0600, written atomically). A slow password hash would add
nothing: the token is never a word a person chose, so it cannot be guessed from a list. A new token replaces
the stored hash; a running dashboard rereads the file when it changes, so the old token and every session
opened before stop working at once. Checks compare digests in constant time (``hmac.compare_digest``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
from datetime import UTC, datetime
from pathlib import Path

import attrs
import cattrs

from ego_core import write_atomically

OWNER_DIR = "dashboard"
OWNER_FILE = "owner-token.json"
TOKEN_PREFIX = "egoowner_"  # noqa: S105 (a prefix, not a token)
"""Owner tokens start with this, so that one is never taken for an agent's ``ego_…`` token."""
ALGORITHM = "sha256"

_converter = cattrs.Converter()
_converter.register_structure_hook(datetime, lambda value, _type: datetime.fromisoformat(value))
_converter.register_unstructure_hook(datetime, lambda value: value.isoformat())


class OwnerFileError(ValueError):
    """The owner token file exists but cannot be read as one (the message names the file and the way out)."""


@attrs.frozen
class OwnerRecord:
    """What the owner token file holds: the token's digest, never the token."""

    digest: str
    created: datetime
    algorithm: str = ALGORITHM
    version: int = 1


def owner_path(data_dir: Path) -> Path:
    """Where the owner token's hash of this data directory (or agent space) is kept."""
    return data_dir.expanduser() / OWNER_DIR / OWNER_FILE


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def read_record(path: Path) -> OwnerRecord | None:
    """The stored record; None when there is none yet; :class:`OwnerFileError` when the file is damaged."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OwnerFileError(f"{path}: cannot be read ({exc.strerror}); {REPAIR}") from None
    try:
        record = _converter.structure(json.loads(raw), OwnerRecord)
    except (ValueError, TypeError, cattrs.BaseValidationError):
        raise OwnerFileError(f"{path}: not an owner token file; {REPAIR}") from None
    if record.algorithm != ALGORITHM or len(record.digest) != 64 or record.version != 1:
        raise OwnerFileError(f"{path}: not an owner token file this ego reads; {REPAIR}")
    return record


REPAIR = "make a new owner token with `ego dashboard --new-owner-token`"


def issue_owner_token(data_dir: Path, now: datetime | None = None) -> str:
    """A new owner token for ``data_dir``: its digest replaces the stored one (a temporary file beside it, synced,
    then renamed over it, mode 0600 throughout); the token itself is returned and stored nowhere."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    path = owner_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    record = OwnerRecord(digest=digest_of(token), created=now or datetime.now(UTC))
    text = json.dumps(_converter.unstructure(record), indent=2) + "\n"
    write_atomically(path, text)  # mode 0600
    return token


class OwnerKey:
    """Checks tokens against the owner token file of one space, rereading it whenever it changes (a token made
    by another process takes effect at once). A damaged or missing file accepts no token."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._digest: str | None = None

    @classmethod
    def of(cls, data_dir: Path) -> OwnerKey:
        return cls(owner_path(data_dir))

    def digest(self) -> str | None:
        """The stored digest now (None without a usable file): the generation sessions are bound to."""
        try:
            stat = self.path.stat()
        except OSError:
            with self._lock:
                self._seen, self._digest = None, None
            return None
        seen = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        with self._lock:
            if seen != self._seen:
                try:
                    record = read_record(self.path)
                except OwnerFileError:
                    record = None
                self._seen, self._digest = seen, record.digest if record is not None else None
            return self._digest

    def verify(self, token: str) -> bool:
        expected = self.digest()
        given = digest_of(token)
        if expected is None:
            hmac.compare_digest(given, given)  # the same work either way
            return False
        return hmac.compare_digest(given, expected)
