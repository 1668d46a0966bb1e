"""``ego_core.write_atomically`` and ``open_atomically``: the whole new content or the old one, never a torn file
and never a temporary file left behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ego_core
from ego_core import open_atomically, write_atomically


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_text_is_written_whole_and_the_parent_created(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "記憶.json"
    write_atomically(target, "朝の散歩を覚えている\nremembered the morning walk\r\n")
    assert target.read_bytes() == "朝の散歩を覚えている\nremembered the morning walk\r\n".encode()
    assert _mode(target) == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["記憶.json"]


def test_bytes_replace_an_existing_file_and_mode_is_applied(tmp_path: Path) -> None:
    target = tmp_path / "blob.bin"
    target.write_bytes(b"old")
    write_atomically(str(target), b"\x00\xffnew", mode=0o644)
    assert target.read_bytes() == b"\x00\xffnew"
    assert _mode(target) == 0o644


def test_encoding_is_used_for_text(tmp_path: Path) -> None:
    target = tmp_path / "note.txt"
    write_atomically(target, "こんにちは", encoding="utf-16")
    assert target.read_bytes() == "こんにちは".encode("utf-16")


def test_a_failing_write_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "state.json"
    target.write_text('{"before": "前"}', encoding="utf-8")

    def broken_write(fd: int, data: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", broken_write)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(target, '{"after": "後"}')
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == '{"before": "前"}'
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_a_failing_replace_leaves_no_temporary_and_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "new.json"

    def broken_replace(src: object, dst: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(PermissionError):
        write_atomically(target, "never")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_open_atomically_streams_and_replaces_at_the_end(tmp_path: Path) -> None:
    target = tmp_path / "export.jsonl"
    target.write_text("old\n", encoding="utf-8")
    with open_atomically(target) as out:
        out.write("一行目\n")
        assert target.read_text(encoding="utf-8") == "old\n"  # readers see the old file until the end
        out.write("second line\n")
    assert target.read_text(encoding="utf-8") == "一行目\nsecond line\n"
    assert _mode(target) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["export.jsonl"]


def test_open_atomically_keeps_the_old_file_when_the_block_raises(tmp_path: Path) -> None:
    target = tmp_path / "export.jsonl"
    target.write_text("complete old export\n", encoding="utf-8")

    def export_that_fails() -> None:
        with open_atomically(target, mode=0o640) as out:
            out.write("half of the new one\n")
            raise RuntimeError("plugin failed")

    with pytest.raises(RuntimeError, match="plugin failed"):
        export_that_fails()
    assert target.read_text(encoding="utf-8") == "complete old export\n"
    assert [p.name for p in tmp_path.iterdir()] == ["export.jsonl"]


@given(data=st.one_of(st.text(), st.binary()), old=st.one_of(st.none(), st.binary(max_size=64)))
def test_the_file_holds_exactly_what_was_written(
    tmp_path_factory: pytest.TempPathFactory, data: str | bytes, old: bytes | None
) -> None:
    directory = tmp_path_factory.mktemp("atomic")
    target = directory / "ファイル.dat"
    if old is not None:
        target.write_bytes(old)
    write_atomically(target, data)
    assert target.read_bytes() == (data.encode("utf-8") if isinstance(data, str) else data)
    assert [p.name for p in directory.iterdir()] == ["ファイル.dat"]


def test_both_are_public() -> None:
    assert {"write_atomically", "open_atomically"} <= set(ego_core.__all__)
