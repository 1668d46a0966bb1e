"""``write_transaction``: the one SQLite write transaction the plugins' own state databases use."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ego_core import write_transaction


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None, timeout=0.1)


def test_a_block_that_ends_is_committed_and_one_that_raises_leaves_nothing(tmp_path: Path) -> None:
    db = connect(tmp_path / "state.db")
    db.execute("CREATE TABLE notes (text TEXT)")
    with write_transaction(db):
        db.execute("INSERT INTO notes VALUES ('kept')")

    def fail_half_way() -> None:
        with write_transaction(db):
            db.execute("INSERT INTO notes VALUES ('lost')")
            raise RuntimeError("the plugin failed half-way")

    with pytest.raises(RuntimeError):
        fail_half_way()
    reader = connect(tmp_path / "state.db")
    assert reader.execute("SELECT text FROM notes").fetchall() == [("kept",)]
    assert not db.in_transaction


def test_another_writer_waits_for_the_transaction(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    first, second = connect(path), connect(path)
    first.execute("CREATE TABLE notes (text TEXT)")
    with write_transaction(first):
        first.execute("INSERT INTO notes VALUES ('first')")
        with pytest.raises(sqlite3.OperationalError, match="locked"), write_transaction(second):
            second.execute("INSERT INTO notes VALUES ('second')")
    assert first.execute("SELECT count(*) FROM notes").fetchone() == (1,)
