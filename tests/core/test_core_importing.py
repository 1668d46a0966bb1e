"""``ego import --from``: the ``register_import_formats`` hook, the core's merge-check-import path and the
helpers readers share (Markdown notes, dates, text files), in Japanese and English."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_core import (
    IMPORT_SOURCE,
    ImportFormat,
    ImportFormatError,
    ImportOptions,
    find_date,
    hookimpl,
    local_moment,
    note_entries,
    read_text,
    stable_id,
)
from ego_core.mcp.foreign import check_source, collect_formats, dry_run_lines, import_source, read_source
from ego_core.mcp.portable import PortableError
from ego_core.testing import HostFactory


class Jar:
    """A plugin that keeps names, imports its own records and reads ``*.txt`` lines as a format."""

    def __init__(self) -> None:
        self.items: list[str] = []

    @hookimpl
    def register_import_formats(self, register: Callable[[ImportFormat], None]) -> None:
        register(ImportFormat(name="lines", description="one item per line", read=self.read))

    def read(self, path: Path, options: ImportOptions) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        records = []
        for number, line in enumerate(read_text(path, path.name).splitlines(), start=1):
            if line.strip() == "!":
                raise ImportFormatError(path.name, "a bang is not an item", number)
            records.append({"type": "item", "name": line.strip(), IMPORT_SOURCE: f"{path.name}:{number}"})
        options.progress(1)
        return {"jar": records}

    @hookimpl
    def check_records(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        return [f"record {n}: an empty name" for n, r in enumerate(records, start=1) if not r.get("name")]

    @hookimpl
    def import_records(self, records: Sequence[Mapping[str, Any]]) -> int:
        new = [str(r["name"]) for r in records if r["name"] not in self.items]
        self.items.extend(new)
        return len(new)


def test_hook_register_import_formats(make_host: HostFactory, tmp_path: Path) -> None:
    jar = Jar()
    host = make_host({"jar": jar})
    host.start()
    assert [c.plugin for c in collect_formats(host)["lines"]] == ["jar"]
    source_file = tmp_path / "items.txt"
    source_file.write_text("kettle\n薬缶\n", encoding="utf-8")
    source = read_source(host, "lines", source_file, private=False)
    summary = import_source(host, source)
    assert summary.added == {"jar": 2}
    assert jar.items == ["kettle", "薬缶"]
    assert import_source(host, read_source(host, "lines", source_file, private=False)).added == {"jar": 0}


def test_a_problem_is_reported_at_its_source_line_and_nothing_is_written(
    make_host: HostFactory, tmp_path: Path
) -> None:
    jar = Jar()
    host = make_host({"jar": jar})
    host.start()
    path = tmp_path / "items.txt"
    path.write_text("kettle\n \nlantern\n", encoding="utf-8")
    with pytest.raises(PortableError, match=r"items\.txt:2: record 2: an empty name"):
        import_source(host, read_source(host, "lines", path, private=False))
    assert jar.items == []
    path.write_text("kettle\n!\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"items\.txt:2: a bang is not an item"):
        read_source(host, "lines", path, private=False)


def test_an_unknown_format_names_the_known_ones(make_host: HostFactory, tmp_path: Path) -> None:
    host = make_host({"jar": Jar()})
    host.start()
    with pytest.raises(PortableError, match="unknown import format 'notes'; the enabled plugins read: lines"):
        read_source(host, "notes", tmp_path, private=False)


def test_a_dry_run_shows_counts_and_a_sample(make_host: HostFactory, tmp_path: Path) -> None:
    jar = Jar()
    host = make_host({"jar": jar})
    host.start()
    path = tmp_path / "items.txt"
    path.write_text("\n".join(f"item {n}" for n in range(12)), encoding="utf-8")
    source = read_source(host, "lines", path, private=False)
    check_source(host, source)
    lines = dry_run_lines(source)
    assert lines[1] == "  jar: 12 item records"
    assert "  item: item 0 (items.txt:1)" in lines
    assert "  item: item 11 (items.txt:12)" in lines
    assert jar.items == []


def test_the_cli_refuses_bad_input_with_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ego_core.mcp.cli import main

    monkeypatch.setenv("EGO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("EGO_PLUGINS", "core")  # the core alone: no plugin reads any format
    for argv, message in (
        (["import", "--from", "nothing", str(tmp_path)], "unknown import format 'nothing'"),
        (["import", "--private", str(tmp_path / "x.jsonl")], "--private applies with --from FORMAT"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------
# Helpers


NOTES = """---
title: 日記
---
# 2026年12月3日（木）

- 朝、駅まで歩いた
- 14:05 友達と
  カフェで話した
・雨が降ってきた #天気

## 2026-12-04

A paragraph in English
over two lines.

```
- not an entry
```
<!-- - nor this -->
| a | table |

# Undated

- a thought without a date #private
"""


def test_notes_split_into_bullets_and_paragraphs_dated_by_headings() -> None:
    entries = note_entries(NOTES, "diary.md", day=date(2026, 1, 1))
    assert [(e.text, e.line, e.day, e.at) for e in entries] == [
        ("朝、駅まで歩いた", 6, date(2026, 12, 3), None),
        ("友達と カフェで話した", 7, date(2026, 12, 3), time(14, 5)),
        ("雨が降ってきた #天気", 9, date(2026, 12, 3), None),
        ("A paragraph in English over two lines.", 13, date(2026, 12, 4), None),
        ("a thought without a date", 24, date(2026, 1, 1), None),
    ]
    assert entries[2].hashtags == ("天気",)
    assert [e.private for e in entries] == [False, False, False, False, True]


def test_front_matter_can_make_a_file_private_and_must_be_closed() -> None:
    assert all(e.private for e in note_entries("---\nprivate: true\n---\n- 秘密のこと\n", "a.md"))
    with pytest.raises(ImportFormatError, match=r"a\.md:1: the front matter opened by --- is never closed"):
        note_entries("---\ntitle: x\n- item\n", "a.md")


def test_a_heading_with_a_date_that_does_not_exist_is_an_error_at_its_line() -> None:
    with pytest.raises(ImportFormatError, match=r"notes\.md:3: the heading names a date that does not exist"):
        note_entries("- ok\n\n## 2026年2月30日\n- item\n", "notes.md")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-03.md", date(2026, 12, 3)),
        ("# 2026年12月3日（木）", date(2026, 12, 3)),
        ("２０２６年１２月３日", date(2026, 12, 3)),
        ("Notes of 2026/1/9", date(2026, 1, 9)),
        ("2026.03.14 meeting", date(2026, 3, 14)),
        ("no date here", None),
    ],
)
def test_find_date(text: str, expected: date | None) -> None:
    assert find_date(text) == expected


def test_read_text_names_the_line_of_a_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    path.write_bytes("- 一行目\n".encode() + b"- \xff\n")
    with pytest.raises(ImportFormatError, match=r"bad\.md:2: not UTF-8 text"):
        read_text(path, "bad.md")
    path.write_bytes(b"text\n\x00binary")
    with pytest.raises(ImportFormatError, match=r"bad\.md:2: a NUL character"):
        read_text(path, "bad.md")


def test_stable_ids_and_local_moments() -> None:
    assert stable_id("mem_", "a", "b") == stable_id("mem_", "a", "b")
    assert stable_id("mem_", "a", "b") != stable_id("mem_", "ab")
    assert len(stable_id("mem_", "x")) == 16
    moment = local_moment(date(2026, 12, 3), time(12, 0), ZoneInfo("Asia/Tokyo"))
    assert moment.tzinfo is UTC
    assert moment.isoformat() == "2026-12-03T03:00:00+00:00"


LINES = st.lists(
    st.one_of(
        st.text(alphabet="あいう漢字abc 123#-・*:", max_size=30),
        st.sampled_from(["", "# 2026-12-03", "## 2026年1月2日", "- item", "  - nested", "```", "---", "<!--", "-->"]),
    ),
    max_size=30,
)


@given(LINES)
def test_notes_never_lose_order_or_produce_empty_entries(lines: list[str]) -> None:
    text = "\n".join(lines)
    try:
        entries = note_entries(text, "p.md")
    except ImportFormatError as exc:
        failed: ImportFormatError | None = exc
        entries = []
    else:
        failed = None
    assert failed is None or failed.line is not None
    assert all(entry.text.strip() for entry in entries)
    assert [e.line for e in entries] == sorted(e.line for e in entries)
    assert all(1 <= e.line <= max(1, len(lines)) for e in entries)
    json.dumps([e.text for e in entries], ensure_ascii=False)
