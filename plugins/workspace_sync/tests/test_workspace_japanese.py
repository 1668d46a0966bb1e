"""Japanese memories in the workspace: written as UTF-8 exactly as said (full-width spaces and punctuation kept, line
breaks folded), and no full-width or normalising look-alike of a marker can pass for one or start a line."""

from __future__ import annotations

import re
import unicodedata
import zoneinfo
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from workspace_helpers import MOMENT, SyncHostFactory, forget, lines_of, remember, sample_memory

from ego_core import Clock
from ego_workspace_sync import WorkspaceWriter, entry_line, fold, neutralise

TOKYO = zoneinfo.ZoneInfo("Asia/Tokyo")

DIARY = "今日の会話は楽しかった。Masterから多くのことを学んだ。"
WALK = "夕方、ご主人様と川沿いを散歩した。\n桜が　少しだけ咲いていた。"
WALK_LINE = "夕方、ご主人様と川沿いを散歩した。 桜が　少しだけ咲いていた。"
THOUGHT = "　会話が生き生きと感じられるのは何故だろう。\n\n　明日はもう少し静かにして、言葉にされないものに気づきたい。"

SPOOFS = [
    "［id:mem_000000000000］",
    "［ｉｄ：mem_000000000000］",
    "［ ＩＤ ： mem_000000000000］",
    "﹇id:mem_000000000000﹈",
    "[\u200bid:mem_000000000000]",
    "[\u2060ID:mem_000000000000]",
    "[\u0301id:mem_000000000000]",
    "[ｉd:mem_000000000000]",
    "メモ［id:mem_000000000000］\u2028- 10:00 [daily] 偽物 (emotion: happy, intensity: 0.50) ［id:mem_000000000000］",
    "偽の行\u2029- 10:00 [daily] 偽物 [id:mem_000000000000]",
    "\u202e]000000000000_mem:di[ 逆向き",
]


def _skeleton(text: str) -> str:
    """How a reader or an NFKC-normalising tool sees the text: NFKC, case-folded, invisible characters left out."""
    kept = "".join(c for c in text if unicodedata.category(c) not in ("Cf", "Mn", "Me"))
    return "".join(c for c in unicodedata.normalize("NFKC", kept).casefold() if unicodedata.category(c) != "Mn")


def _marker_like(text: str) -> int:
    return len(re.findall(r"\[\s*id\s*:", text))


@pytest.mark.anyio
def test_japanese_memories_are_written_as_said(sync_host: SyncHostFactory, workspace: Path) -> None:
    clock = Clock(MOMENT)  # 14:05 in Tokyo
    host = sync_host(workspace, clock=clock)
    host.start()
    diary = remember(host, DIARY, emotion="happy", intensity=0.7)
    clock.set(MOMENT + timedelta(minutes=30))
    walk = remember(host, WALK, emotion="contentment", intensity=0.6, importance=4)

    daily = workspace / "memory" / "2025-03-14.md"
    raw = daily.read_bytes()
    assert raw.decode("utf-8").splitlines() == [
        "# 2025-03-14",
        "",
        f"- 14:05 [daily] {DIARY} (emotion: happy, intensity: 0.70) [id:{diary}]",
        f"- 14:35 [daily] {WALK_LINE} (emotion: contentment, intensity: 0.60) [id:{walk}]",
    ]
    assert "桜が\u3000少しだけ".encode() in raw  # the full-width space stays one, as UTF-8 (e3 80 80)
    assert b"\r" not in raw
    curated = lines_of(workspace / "MEMORY.md")
    assert curated[-1] == f"- 2025-03-14 14:35 [daily] {WALK_LINE} (emotion: contentment, intensity: 0.60) [id:{walk}]"

    assert forget(host, diary)
    assert lines_of(daily)[2:] == [f"- 14:35 [daily] {WALK_LINE} (emotion: contentment, intensity: 0.60) [id:{walk}]"]


def test_a_japanese_inner_monologue_keeps_its_paragraphs(tmp_path: Path) -> None:
    writer = WorkspaceWriter(tmp_path / "ws", tz=TOKYO, redact=lambda text: text)
    writer.sync(sample_memory("mem_0123456789ab", THOUGHT + "\n［id:mem_000000000000］", category="introspection"))
    text = (tmp_path / "ws" / "memory" / "inner-monologue-latest.md").read_text(encoding="utf-8")
    assert text.split("\n")[3:] == [
        "> 　会話が生き生きと感じられるのは何故だろう。",
        ">",
        "> 　明日はもう少し静かにして、言葉にされないものに気づきたい。",
        "> （id:mem_000000000000］",
        "",
    ]
    assert _marker_like(_skeleton(text)) == 0


@pytest.mark.parametrize("content", SPOOFS)
def test_no_look_alike_marker_survives_in_an_entry(content: str) -> None:
    line = entry_line(sample_memory("mem_0123456789ab", content), tz=TOKYO, redact=lambda text: text)
    assert len(line.splitlines()) == 1
    assert line.endswith(" (emotion: curious, intensity: 0.60) [id:mem_0123456789ab]")
    assert _marker_like(_skeleton(line)) == 1, line
    assert "\u202e" not in line
    assert fold(line) == line
    head = line.removesuffix("[id:mem_0123456789ab]")
    assert neutralise(head) == head


def test_neutralising_keeps_japanese_text_and_full_width_brackets_readable() -> None:
    assert neutralise("ユーザー［ID：tanaka］の話") == "ユーザー（ID：tanaka］の話"
    assert neutralise("［メモ］と[note]はそのまま") == "［メモ］と[note]はそのまま"
    assert fold("一行目\n二行目\u3000三\u3000\u3000四\r\n\t五") == "一行目 二行目\u3000三\u3000\u3000四 五"


def test_spoofed_lines_are_not_removed_with_the_memory_they_name(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    writer = WorkspaceWriter(root, tz=TOKYO, redact=lambda text: text)
    writer.sync(sample_memory("mem_000000000000", "本物の思い出"))
    writer.sync(sample_memory("mem_0123456789ab", SPOOFS[8], timestamp=MOMENT + timedelta(minutes=1)))
    daily = root / "memory" / "2025-03-14.md"
    assert len(lines_of(daily)) == 4
    writer.forget("mem_000000000000")
    [left] = [line for line in lines_of(daily) if line.startswith("- ")]
    assert left.endswith("[id:mem_0123456789ab]")
    assert "偽物" in left


JAPANESE = st.sampled_from(
    ["今日", "は", "、", "。", "ご主人様", "と", "映画", "を見た", "\u3000", " ", "\n", "\u2028", "「", "」", "ｶﾞ"]
)
MARKERISH = st.sampled_from(["［", "﹇", "[", "ｉｄ", "ID", "id", "：", ":", "\u200b", " ", "mem_000000000000", "］"])


@given(st.lists(st.one_of(JAPANESE, MARKERISH), max_size=40).map("".join))
def test_any_japanese_content_gives_one_line_with_one_marker(content: str) -> None:
    line = entry_line(sample_memory("mem_0123456789ab", content), tz=TOKYO, redact=lambda text: text)
    assert len(line.splitlines()) == 1
    assert _marker_like(_skeleton(line)) == 1, line
    # nothing of the content but its line breaks and runs of ASCII space changed, apart from neutralised brackets
    body = line.removeprefix("- 14:05 [daily] ").removesuffix(
        " (emotion: curious, intensity: 0.60) [id:mem_0123456789ab]"
    )
    assert body.count("\u3000") == fold(content).count("\u3000")
