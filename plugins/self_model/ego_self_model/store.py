"""The self_model plugin's state: one SQLite database (WAL) in the plugin's data directory (``ctx.database``).

Every change is one ``BEGIN IMMEDIATE`` transaction, so a crash leaves the previous state and two processes on
one data directory serialise their writes (``busy_timeout``) instead of losing one. Within a process a lock
serialises the single connection. Private memories' text is never stored here: a shared moment keeps the
memory's id, its time and whether it is private.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

import attrs
import numpy as np

from ego_core import Database, DatabaseVersionError, Vectors, open_database

DB_NAME: Final = "self_model.sqlite3"
SYNCHRONOUS: Final = "FULL"
TRUST_KEPT: Final = 200
"""The newest 200 changes of each person's trust level are kept."""

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS self_fields (field TEXT PRIMARY KEY, value TEXT NOT NULL, updated REAL NOT NULL);
CREATE TABLE IF NOT EXISTS growth (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, text TEXT NOT NULL, UNIQUE (at, text)
);
CREATE TABLE IF NOT EXISTS questions (
    id TEXT PRIMARY KEY, text TEXT NOT NULL, importance INTEGER NOT NULL,
    created REAL NOT NULL, surfaced REAL NOT NULL, resolved REAL, answer TEXT,
    resurfaced INTEGER NOT NULL DEFAULT 0, triggered REAL, vector BLOB, vector_model TEXT
);
CREATE TABLE IF NOT EXISTS people (
    key TEXT PRIMARY KEY, name TEXT NOT NULL, trust REAL NOT NULL,
    preferred_topics TEXT NOT NULL, sensitive_topics TEXT NOT NULL, aliases TEXT NOT NULL, notes TEXT NOT NULL,
    communication_style TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS shared (
    person TEXT NOT NULL, memory_id TEXT NOT NULL, at REAL NOT NULL, private INTEGER NOT NULL,
    PRIMARY KEY (person, memory_id)
);
CREATE INDEX IF NOT EXISTS shared_by_memory ON shared (memory_id);
"""
"""Version 1 of the schema of the releases before ``user_version``; :data:`LEGACY_MIGRATIONS` bring it up to
:data:`LEGACY_VERSION`."""

LEGACY_MIGRATIONS: Final[tuple[str, ...]] = (
    # 1 -> 2: a question held with someone, its lineage, when ripening last fed it, and what it gathered
    """
    ALTER TABLE questions ADD COLUMN person TEXT;
    ALTER TABLE questions ADD COLUMN lineage TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE questions ADD COLUMN last_fed REAL;
    CREATE TABLE IF NOT EXISTS companions (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, question TEXT NOT NULL, kind TEXT NOT NULL, first TEXT NOT NULL,
        second TEXT, similarity REAL, added REAL NOT NULL
    );
    CREATE INDEX IF NOT EXISTS companions_by_question ON companions (question);
    CREATE INDEX IF NOT EXISTS companions_by_first ON companions (first);
    CREATE INDEX IF NOT EXISTS companions_by_second ON companions (second);
    """,
    # 2 -> 3: a moment shared after a quiet or long absence, until wake_up has told it
    """
    CREATE TABLE IF NOT EXISTS reunions (
        person TEXT PRIMARY KEY, memory_id TEXT NOT NULL, gap REAL NOT NULL, noted REAL NOT NULL,
        shown INTEGER NOT NULL DEFAULT 0
    );
    """,
    # 3 -> 4: whether a private memory is among what a question gathered (exported only with private data)
    """
    ALTER TABLE companions ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
    """,
    # 4 -> 5: each change of a person's trust level (the newest TRUST_KEPT per person)
    """
    CREATE TABLE IF NOT EXISTS trust_history (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, person TEXT NOT NULL, at REAL NOT NULL, trust REAL NOT NULL,
        UNIQUE (person, at)
    );
    CREATE INDEX IF NOT EXISTS trust_history_by_person ON trust_history (person, at);
    """,
    # 5 -> 6: a memory that names someone only to say they are away or missed: evidence of an absence
    """
    CREATE TABLE IF NOT EXISTS away_marks (
        person TEXT NOT NULL, memory_id TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (person, memory_id)
    );
    CREATE INDEX IF NOT EXISTS away_marks_by_memory ON away_marks (memory_id);
    """,
    # 6 -> 7: names the memories call someone by, before they are someone the agent knows
    """
    CREATE TABLE IF NOT EXISTS name_candidates (
        key TEXT PRIMARY KEY, name TEXT NOT NULL, memories INTEGER NOT NULL, last REAL NOT NULL
    );
    """,
    # 7 -> 8: which memories called someone a name, so they count once the name is someone known
    """
    CREATE TABLE IF NOT EXISTS name_sightings (
        key TEXT NOT NULL, memory_id TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (key, memory_id)
    );
    CREATE INDEX IF NOT EXISTS name_sightings_by_memory ON name_sightings (memory_id);
    """,
)
"""The schema changes of the releases that kept the version in ``meta.schema_version``: ``LEGACY_MIGRATIONS[i]``
takes it from ``i + 1`` to ``i + 2``. Frozen: a new change is appended to :data:`MIGRATIONS`."""
LEGACY_VERSION: Final = 1 + len(LEGACY_MIGRATIONS)


def _script(db: sqlite3.Connection, script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _adopt(db: sqlite3.Connection) -> None:
    """Version 0 to 1: the schema of :data:`LEGACY_VERSION`, for a new file or one of an earlier release (at the
    ``meta.schema_version`` it had: the legacy migrations it lacks are applied, every row kept). The old marker
    is left at :data:`LEGACY_VERSION`, so that the previous release can still open the file."""
    _script(db, SCHEMA)
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    version = 1 if row is None else int(row[0])
    if version > LEGACY_VERSION:
        raise DatabaseVersionError(f"meta.schema_version is {version}, newer than {LEGACY_VERSION}")
    for script in LEGACY_MIGRATIONS[version - 1 :]:
        _script(db, script)
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(LEGACY_VERSION),))


MIGRATIONS: Final[tuple[Callable[[sqlite3.Connection], None], ...]] = (_adopt,)
"""``MIGRATIONS[i]`` takes the file from ``user_version`` ``i`` to ``i + 1``; append, never edit."""


class StateError(RuntimeError):
    """The state database cannot be used (written by a newer version, or not a database)."""


def unusable(path: Path, exc: Exception) -> StateError:
    """The error for a file that cannot be opened; it is left as it is."""
    if isinstance(exc, DatabaseVersionError):
        return StateError(f"{path} was written by a newer ego-self-model ({exc}); upgrade ego-self-model")
    return StateError(f"{path} cannot be used: {exc}")


def open_file(directory: Path) -> Database:
    """The state database in ``directory`` opened as the plugin opens it (for tools and tests)."""
    try:
        return open_database(directory / DB_NAME, MIGRATIONS, synchronous=SYNCHRONOUS)
    except (sqlite3.DatabaseError, DatabaseVersionError) as exc:
        raise unusable(directory / DB_NAME, exc) from None


PUBLIC: Final = "private = 0"
"""The shared moments that are shared: a private memory's is kept (for recall's people in mind) but never counts."""


def to_epoch(moment: datetime) -> float:
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return moment.timestamp()


def from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


# --------------------------------------------------------------------------------------------------
# Values


@attrs.frozen
class Question:
    id: str
    text: str
    importance: int
    created: datetime
    surfaced: datetime
    """When it last came to mind: created, or brought back by a related memory. Salience ages from here."""
    resolved: datetime | None = None
    answer: str | None = None
    resurfaced: int = 0
    """How many times a related memory brought it back."""
    triggered: datetime | None = None
    """When a related memory last brought it back."""
    person: str | None = None
    """Whom it is held with: the person's name, or the name as given when nobody of that name was known."""
    lineage: tuple[str, ...] = ()
    """The earlier questions it carries forward (ids, oldest first)."""
    last_fed: datetime | None = None
    """When ripening last fed it during ``consolidate`` (None: never)."""


CompanionKind = Literal["companion", "tension", "tension_notion"]
COMPANION_KINDS: Final[tuple[CompanionKind, ...]] = ("companion", "tension", "tension_notion")


@attrs.frozen
class Companion:
    """What a resting question gathered while ripening: a memory related but not obviously (``companion``), or
    two memories (``tension``) or two notions (``tension_notion``) that disagree. Ids only, never text."""

    question: str
    kind: CompanionKind
    first: str
    """A memory id (a notion id for ``tension_notion``)."""
    added: datetime
    second: str | None = None
    """The other memory (or notion) of a tension."""
    similarity: float | None = None
    """The companion's similarity to the question (a tension's: the mean of its two)."""
    private: bool = False
    """A private memory is among it (its id is exported only with ``--include-private``)."""


@attrs.frozen
class Person:
    key: str
    name: str
    trust: float
    preferred_topics: tuple[str, ...] = ()
    sensitive_topics: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    communication_style: str = ""
    created: datetime | None = None
    updated: datetime | None = None


@attrs.frozen
class Shared:
    """A memory shared with a person (a remember naming them): an interaction."""

    person: str
    memory_id: str
    at: datetime
    private: bool


@attrs.frozen
class Reunion:
    """A moment shared with someone after a quiet or long absence, told once in wake_up."""

    person: str
    memory_id: str
    gap: float
    """Seconds since the moment before it."""
    noted: datetime
    shown: bool = False


@attrs.frozen
class Growth:
    at: datetime
    text: str


@attrs.frozen
class Ties:
    """How much has been shared with one person: the count and the newest moment."""

    count: int
    last: Shared | None


PERSON_LISTS: Final = ("preferred_topics", "sensitive_topics", "aliases", "notes")


def _question(row: sqlite3.Row) -> Question:
    return Question(
        id=row["id"],
        text=row["text"],
        importance=int(row["importance"]),
        created=from_epoch(row["created"]),
        surfaced=from_epoch(row["surfaced"]),
        resolved=from_epoch(row["resolved"]) if row["resolved"] is not None else None,
        answer=row["answer"],
        resurfaced=int(row["resurfaced"]),
        triggered=from_epoch(row["triggered"]) if row["triggered"] is not None else None,
        person=row["person"],
        lineage=tuple(json.loads(row["lineage"])),
        last_fed=from_epoch(row["last_fed"]) if row["last_fed"] is not None else None,
    )


def _companion(row: sqlite3.Row) -> Companion:
    return Companion(
        question=row["question"],
        kind=row["kind"],
        first=row["first"],
        second=row["second"],
        similarity=row["similarity"],
        added=from_epoch(row["added"]),
        private=bool(row["private"]),
    )


def _person(row: sqlite3.Row) -> Person:
    return Person(
        key=row["key"],
        name=row["name"],
        trust=float(row["trust"]),
        preferred_topics=tuple(json.loads(row["preferred_topics"])),
        sensitive_topics=tuple(json.loads(row["sensitive_topics"])),
        aliases=tuple(json.loads(row["aliases"])),
        notes=tuple(json.loads(row["notes"])),
        communication_style=row["communication_style"],
        created=from_epoch(row["created"]),
        updated=from_epoch(row["updated"]),
    )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# --------------------------------------------------------------------------------------------------
# The store


class StateStore:
    """The database: typed reads, and writes inside :meth:`writing` transactions."""

    def __init__(self, database: Database) -> None:
        self.path = database.path
        self._database: Database | None = database
        database.db.row_factory = sqlite3.Row

    def close(self) -> None:
        if self._database is not None:
            self._database.close()
            self._database = None

    def _opened(self) -> Database:
        if self._database is None:
            raise StateError("the self-model state is not open")
        return self._database

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for several reads."""
        with self._opened().read() as db:
            yield db

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``): committed when the block ends, rolled back if it raises."""
        with self._opened().write() as db:
            yield db

    # ------------------------------------------------------------------------------------------
    # Self-model fields

    @staticmethod
    def fields(db: sqlite3.Connection) -> dict[str, Any]:
        return {row["field"]: json.loads(row["value"]) for row in db.execute("SELECT field, value FROM self_fields")}

    @staticmethod
    def field_times(db: sqlite3.Connection) -> dict[str, datetime]:
        return {
            row["field"]: from_epoch(row["updated"]) for row in db.execute("SELECT field, updated FROM self_fields")
        }

    @staticmethod
    def set_field(db: sqlite3.Connection, field: str, value: Any, now: datetime) -> None:
        if value in ([], {}, ()):
            db.execute("DELETE FROM self_fields WHERE field = ?", (field,))
            return
        db.execute(
            "INSERT INTO self_fields (field, value, updated) VALUES (?, ?, ?) "
            "ON CONFLICT (field) DO UPDATE SET value = excluded.value, updated = excluded.updated",
            (field, _json(value), to_epoch(now)),
        )

    @staticmethod
    def add_growth(db: sqlite3.Connection, entry: Growth) -> bool:
        cursor = db.execute("INSERT OR IGNORE INTO growth (at, text) VALUES (?, ?)", (to_epoch(entry.at), entry.text))
        return cursor.rowcount > 0

    @staticmethod
    def growth(db: sqlite3.Connection, latest: int | None = None) -> list[Growth]:
        """Growth entries, oldest first (only the newest ``latest`` of them when given)."""
        if latest is None:
            rows = db.execute("SELECT at, text FROM growth ORDER BY at, seq").fetchall()
        else:
            rows = db.execute("SELECT at, text FROM growth ORDER BY at DESC, seq DESC LIMIT ?", (latest,)).fetchall()
            rows.reverse()
        return [Growth(at=from_epoch(r["at"]), text=r["text"]) for r in rows]

    @staticmethod
    def growth_count(db: sqlite3.Connection) -> int:
        return int(db.execute("SELECT count(*) FROM growth").fetchone()[0])

    # ------------------------------------------------------------------------------------------
    # Questions

    @staticmethod
    def questions(db: sqlite3.Connection, *, resolved: bool | None = False) -> list[Question]:
        """Questions by creation time; ``resolved=None`` gives all of them."""
        where = {False: "WHERE resolved IS NULL", True: "WHERE resolved IS NOT NULL", None: ""}[resolved]
        return [_question(r) for r in db.execute(f"SELECT * FROM questions {where} ORDER BY created, id")]

    @staticmethod
    def question(db: sqlite3.Connection, question_id: str) -> Question | None:
        row = db.execute("SELECT * FROM questions WHERE id = ?", (question_id,)).fetchone()
        return _question(row) if row is not None else None

    @staticmethod
    def add_question(
        db: sqlite3.Connection, question: Question, vector: Vectors | None = None, model: str | None = None
    ) -> bool:
        cursor = db.execute(
            "INSERT OR IGNORE INTO questions (id, text, importance, created, surfaced, resolved, answer, resurfaced, "
            "triggered, vector, vector_model, person, lineage, last_fed) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                question.id,
                question.text,
                question.importance,
                to_epoch(question.created),
                to_epoch(question.surfaced),
                to_epoch(question.resolved) if question.resolved is not None else None,
                question.answer,
                question.resurfaced,
                to_epoch(question.triggered) if question.triggered is not None else None,
                _blob(vector),
                model if vector is not None else None,
                question.person,
                _json(list(question.lineage)),
                to_epoch(question.last_fed) if question.last_fed is not None else None,
            ),
        )
        return cursor.rowcount > 0

    @staticmethod
    def resolve(db: sqlite3.Connection, question_id: str, answer: str | None, now: datetime) -> None:
        db.execute("UPDATE questions SET resolved = ?, answer = ? WHERE id = ?", (to_epoch(now), answer, question_id))

    @staticmethod
    def reweigh(db: sqlite3.Connection, question_id: str, importance: int) -> None:
        db.execute("UPDATE questions SET importance = ? WHERE id = ?", (importance, question_id))

    @staticmethod
    def bring_back(db: sqlite3.Connection, question_id: str, now: datetime) -> None:
        """A related memory brought the question back: it is in mind again from ``now``."""
        moment = to_epoch(now)
        db.execute(
            "UPDATE questions SET surfaced = ?, triggered = ?, resurfaced = resurfaced + 1 WHERE id = ?",
            (moment, moment, question_id),
        )

    @staticmethod
    def vectors(db: sqlite3.Connection, question_ids: Sequence[str]) -> dict[str, tuple[str | None, Vectors | None]]:
        """Each question's stored vector with the model that made it (``(None, None)`` when it has none)."""
        found: dict[str, tuple[str | None, Vectors | None]] = {}
        for start in range(0, len(question_ids), 500):
            chunk = list(question_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for row in db.execute(f"SELECT id, vector, vector_model FROM questions WHERE id IN ({marks})", chunk):
                vector = np.frombuffer(row["vector"], dtype=np.float32) if row["vector"] is not None else None
                found[row["id"]] = (row["vector_model"], vector)
        return found

    @staticmethod
    def set_vector(db: sqlite3.Connection, question_id: str, vector: Vectors, model: str) -> None:
        db.execute(
            "UPDATE questions SET vector = ?, vector_model = ? WHERE id = ?", (_blob(vector), model, question_id)
        )

    # ------------------------------------------------------------------------------------------
    # Ripening: what resting questions gathered

    @staticmethod
    def fed(db: sqlite3.Connection, question_id: str, now: datetime) -> None:
        db.execute("UPDATE questions SET last_fed = ? WHERE id = ?", (to_epoch(now), question_id))

    @staticmethod
    def companions(db: sqlite3.Connection, question_id: str | None = None) -> list[Companion]:
        """What the question (every question when None) gathered, in the order it was added."""
        if question_id is None:
            rows = db.execute("SELECT * FROM companions ORDER BY seq")
        else:
            rows = db.execute("SELECT * FROM companions WHERE question = ? ORDER BY seq", (question_id,))
        return [_companion(r) for r in rows]

    @staticmethod
    def companion_counts(db: sqlite3.Connection) -> dict[str, int]:
        """How much each question gathered, by question id (questions with nothing are left out)."""
        return {str(r[0]): int(r[1]) for r in db.execute("SELECT question, count(*) FROM companions GROUP BY question")}

    @staticmethod
    def add_companion(db: sqlite3.Connection, companion: Companion) -> None:
        db.execute(
            "INSERT INTO companions (question, kind, first, second, similarity, added, private) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                companion.question,
                companion.kind,
                companion.first,
                companion.second,
                None if companion.similarity is None else round(companion.similarity, 3),
                to_epoch(companion.added),
                int(companion.private),
            ),
        )

    @staticmethod
    def clear_companions(db: sqlite3.Connection, question_id: str) -> int:
        return db.execute("DELETE FROM companions WHERE question = ?", (question_id,)).rowcount

    @staticmethod
    def forget_companions(db: sqlite3.Connection, memory_id: str) -> int:
        """A forgotten memory leaves every question it kept company (alone or as half of a pair)."""
        return db.execute(
            "DELETE FROM companions WHERE kind != 'tension_notion' AND (first = ? OR second = ?)",
            (memory_id, memory_id),
        ).rowcount

    # ------------------------------------------------------------------------------------------
    # People and shared moments

    @staticmethod
    def people(db: sqlite3.Connection) -> list[Person]:
        return [_person(r) for r in db.execute("SELECT * FROM people ORDER BY key")]

    @staticmethod
    def person(db: sqlite3.Connection, key: str) -> Person | None:
        row = db.execute("SELECT * FROM people WHERE key = ?", (key,)).fetchone()
        return _person(row) if row is not None else None

    @staticmethod
    def put_person(db: sqlite3.Connection, person: Person, *, replace: bool = True, record_trust: bool = True) -> bool:
        """Write ``person`` (only when unknown unless ``replace``). With ``record_trust``, a trust level that is
        new (a new person) or changed is added to the person's trust history, at ``person.updated``."""
        row = db.execute("SELECT trust FROM people WHERE key = ?", (person.key,)).fetchone()
        written = StateStore._write_person(db, person, replace=replace)
        if record_trust and written and (row is None or float(row["trust"]) != person.trust):
            moment = person.updated or person.created
            if moment is not None:
                StateStore.add_trust(db, person.key, moment, person.trust)
        return written

    @staticmethod
    def add_trust(db: sqlite3.Connection, person: str, at: datetime, trust: float) -> bool:
        """Add a trust level set at ``at`` to ``person``'s (a key's) history, keeping the newest
        :data:`TRUST_KEPT`. Replaces a level recorded at the same moment; False when it was already there."""
        seconds = to_epoch(at)
        found = db.execute("SELECT trust FROM trust_history WHERE person = ? AND at = ?", (person, seconds)).fetchone()
        if found is not None and float(found["trust"]) == trust:
            return False
        db.execute(
            "INSERT OR REPLACE INTO trust_history (person, at, trust) VALUES (?, ?, ?)", (person, seconds, trust)
        )
        db.execute(
            "DELETE FROM trust_history WHERE person = ? AND seq NOT IN (SELECT seq FROM trust_history "
            "WHERE person = ? ORDER BY at DESC, seq DESC LIMIT ?)",
            (person, person, TRUST_KEPT),
        )
        return True

    @staticmethod
    def trust_history(db: sqlite3.Connection, person: str | None = None) -> list[tuple[str, datetime, float]]:
        """The kept trust levels of ``person`` (a key; everyone when None) as (key, time, trust), oldest first."""
        if person is None:
            rows = db.execute("SELECT person, at, trust FROM trust_history ORDER BY person, at, seq")
        else:
            rows = db.execute(
                "SELECT person, at, trust FROM trust_history WHERE person = ? ORDER BY at, seq", (person,)
            )
        return [(str(row["person"]), from_epoch(row["at"]), float(row["trust"])) for row in rows]

    @staticmethod
    def _write_person(db: sqlite3.Connection, person: Person, *, replace: bool) -> bool:
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        cursor = db.execute(
            f"{verb} INTO people (key, name, trust, preferred_topics, sensitive_topics, aliases, notes, "
            "communication_style, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                person.key,
                person.name,
                person.trust,
                _json(list(person.preferred_topics)),
                _json(list(person.sensitive_topics)),
                _json(list(person.aliases)),
                _json(list(person.notes)),
                person.communication_style,
                to_epoch(person.created) if person.created else 0.0,
                to_epoch(person.updated) if person.updated else 0.0,
            ),
        )
        return cursor.rowcount > 0

    @staticmethod
    def add_shared(db: sqlite3.Connection, moment: Shared) -> bool:
        cursor = db.execute(
            "INSERT OR IGNORE INTO shared (person, memory_id, at, private) VALUES (?, ?, ?, ?)",
            (moment.person, moment.memory_id, to_epoch(moment.at), int(moment.private)),
        )
        return cursor.rowcount > 0

    @staticmethod
    def mark_private(db: sqlite3.Connection, memory_id: str, private: bool) -> None:
        """A memory made private is no shared moment any more (one made public again is): its moments follow, and
        a question's company holding it is exported only with private data from then on."""
        db.execute("UPDATE shared SET private = ? WHERE memory_id = ?", (int(private), memory_id))
        if private:
            db.execute("UPDATE companions SET private = 1 WHERE first = ? OR second = ?", (memory_id, memory_id))

    @staticmethod
    def ties(db: sqlite3.Connection, person: str) -> Ties:
        """The moments shared with ``person`` (a key): how many, and the newest. A private memory is the agent's
        own, never a shared moment: none is counted here (nor in the other readings of moments below)."""
        count = int(db.execute(f"SELECT count(*) FROM shared WHERE person = ? AND {PUBLIC}", (person,)).fetchone()[0])
        row = db.execute(
            f"SELECT * FROM shared WHERE person = ? AND {PUBLIC} ORDER BY at DESC, memory_id DESC LIMIT 1", (person,)
        ).fetchone()
        return Ties(count=count, last=_shared(row) if row is not None else None)

    @staticmethod
    def shared(db: sqlite3.Connection) -> list[Shared]:
        return [_shared(r) for r in db.execute("SELECT * FROM shared ORDER BY person, at, memory_id")]

    @staticmethod
    def forget_memory(db: sqlite3.Connection, memory_id: str) -> int:
        db.execute("DELETE FROM reunions WHERE memory_id = ?", (memory_id,))
        db.execute("DELETE FROM away_marks WHERE memory_id = ?", (memory_id,))
        db.execute("DELETE FROM name_sightings WHERE memory_id = ?", (memory_id,))
        return db.execute("DELETE FROM shared WHERE memory_id = ?", (memory_id,)).rowcount

    def public_counts(self) -> dict[str, int]:
        """Moments shared with each person (by key), private ones not counted: read on the store's connection (in
        the snapshot of a ``reading`` block around it, if any)."""
        rows = self._opened().db.execute(f"SELECT person, count(*) FROM shared WHERE {PUBLIC} GROUP BY person")
        return {str(person): int(count) for person, count in rows}

    @staticmethod
    def name_seen(db: sqlite3.Connection, key: str, name: str, memory_id: str, at: datetime) -> int:
        """Count one more memory (``memory_id``) calling someone ``name`` (key ``key``); how many have so far."""
        db.execute(
            "INSERT OR IGNORE INTO name_sightings (key, memory_id, at) VALUES (?, ?, ?)", (key, memory_id, to_epoch(at))
        )
        db.execute(
            "INSERT INTO name_candidates (key, name, memories, last) VALUES (?, ?, 1, ?) ON CONFLICT (key) DO UPDATE"
            " SET memories = memories + 1, last = excluded.last",
            (key, name, to_epoch(at)),
        )
        return int(db.execute("SELECT memories FROM name_candidates WHERE key = ?", (key,)).fetchone()[0])

    @staticmethod
    def sightings(db: sqlite3.Connection, key: str) -> list[str]:
        """The memories that called someone by the name ``key``, oldest first."""
        rows = db.execute("SELECT memory_id FROM name_sightings WHERE key = ? ORDER BY at, memory_id", (key,))
        return [str(row[0]) for row in rows]

    @staticmethod
    def mark_away(db: sqlite3.Connection, person: str, memory_id: str, at: datetime) -> None:
        """Keep that memory ``memory_id`` says ``person`` (a key) is away or missed, at ``at``."""
        db.execute(
            "INSERT OR IGNORE INTO away_marks (person, memory_id, at) VALUES (?, ?, ?)",
            (person, memory_id, to_epoch(at)),
        )

    @staticmethod
    def away_since(db: sqlite3.Connection, person: str, after: datetime, until: datetime) -> datetime | None:
        """The first time after ``after`` (their last shared moment) and up to ``until`` that a memory said
        ``person`` (a key) was away or missed, or None: the evidence of an absence that has not ended."""
        row = db.execute(
            "SELECT min(at) FROM away_marks WHERE person = ? AND at > ? AND at <= ?",
            (person, to_epoch(after), to_epoch(until)),
        ).fetchone()
        return from_epoch(row[0]) if row[0] is not None else None

    @staticmethod
    def note_reunion(db: sqlite3.Connection, reunion: Reunion) -> None:
        """Keep ``reunion`` as the person's pending reunion (replacing an older one)."""
        db.execute(
            "INSERT OR REPLACE INTO reunions (person, memory_id, gap, noted, shown) VALUES (?, ?, ?, ?, ?)",
            (reunion.person, reunion.memory_id, reunion.gap, to_epoch(reunion.noted), int(reunion.shown)),
        )

    @staticmethod
    def pending_reunion(db: sqlite3.Connection, since: datetime) -> Reunion | None:
        """The newest reunion noted at or after ``since`` and not told yet."""
        row = db.execute(
            "SELECT * FROM reunions WHERE shown = 0 AND noted >= ? ORDER BY noted DESC, person LIMIT 1",
            (to_epoch(since),),
        ).fetchone()
        if row is None:
            return None
        return Reunion(
            person=row["person"], memory_id=row["memory_id"], gap=float(row["gap"]), noted=from_epoch(row["noted"])
        )

    @staticmethod
    def reunion_told(db: sqlite3.Connection, reunion: Reunion) -> bool:
        """Mark ``reunion`` told; False when it was told already (or replaced by a newer one)."""
        cursor = db.execute(
            "UPDATE reunions SET shown = 1 WHERE person = ? AND memory_id = ? AND shown = 0",
            (reunion.person, reunion.memory_id),
        )
        return cursor.rowcount > 0

    @staticmethod
    def moments(db: sqlite3.Connection, person: str) -> list[datetime]:
        """The times of the moments shared with ``person`` (a key), oldest first."""
        rows = db.execute(f"SELECT at FROM shared WHERE person = ? AND {PUBLIC} ORDER BY at", (person,))
        return [from_epoch(row["at"]) for row in rows]

    @staticmethod
    def first_shared(db: sqlite3.Connection, person: str) -> datetime | None:
        row = db.execute(f"SELECT min(at) FROM shared WHERE person = ? AND {PUBLIC}", (person,)).fetchone()
        return from_epoch(row[0]) if row[0] is not None else None

    @staticmethod
    def shared_since(db: sqlite3.Connection, person: str, since: datetime) -> int:
        """How many moments were shared with ``person`` at or after ``since``."""
        row = db.execute(
            f"SELECT count(*) FROM shared WHERE person = ? AND at >= ? AND {PUBLIC}", (person, to_epoch(since))
        )
        return int(row.fetchone()[0])

    @staticmethod
    def sharers(db: sqlite3.Connection, memory_ids: Sequence[str]) -> list[Shared]:
        """The shared moments of ``memory_ids`` (each person a memory was shared with)."""
        found: list[Shared] = []
        for start in range(0, len(memory_ids), 500):
            chunk = list(memory_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            found.extend(_shared(r) for r in db.execute(f"SELECT * FROM shared WHERE memory_id IN ({marks})", chunk))
        return found

    @staticmethod
    def last_shared(db: sqlite3.Connection) -> dict[str, datetime]:
        """Each person's (key's) newest shared moment."""
        rows = db.execute(f"SELECT person, max(at) FROM shared WHERE {PUBLIC} GROUP BY person")
        return {str(row[0]): from_epoch(row[1]) for row in rows}


def _shared(row: sqlite3.Row) -> Shared:
    return Shared(
        person=row["person"], memory_id=row["memory_id"], at=from_epoch(row["at"]), private=bool(row["private"])
    )


def _blob(vector: Vectors | None) -> bytes | None:
    if vector is None:
        return None
    return np.asarray(vector, dtype=np.float32).reshape(-1).tobytes()


def person_lists(person: Person) -> Mapping[str, tuple[str, ...]]:
    return {name: getattr(person, name) for name in PERSON_LISTS}
