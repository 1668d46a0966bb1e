"""A private memory rewritten by the agent — as a slug, hyphenated, underscored or dotted, or an 18-character quote
mixing scripts — reaches no output of any plugin: the shared store (as content, dedupe_key or scope), the
workspace, a plain export, the logs, and the host's redaction that the dashboard's answers pass. Each output is
read with separators, case and width folded away, so no rendering hides a leak; each is shown to be written."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import unicodedata
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import anyio

from ego_core import PRIVATE_MARK, PluginHost
from ego_core.testing import ToolRunner, configure_logging, export_file, tool_text

DIARY = "privzebra4471 my hidden diary entry: I buried the letter under the old cedar tree"
CANARY = "昨夜、庭で秘密のカナリアKANARIA7788を見つけたことは誰にも言わない"
REWRITTEN = {
    "slug": "privzebra4471-my-hidden-diary-entry-i-buried-the-letter",
    "hyphenated": "Note: my-hidden-diary-entry-i-buried-the-letter-under-the-old-cedar-tree",
    "underscored": "Filed as my_hidden_diary_entry_i_buried_the_letter_under_the_old_cedar.",
    "dotted": "Seen: my.hidden.diary.entry.i.buried.the.letter.under.the.old.cedar.tree",
    "mixed quote": "今日のメモ: 秘密のカナリアKANARIA7788",
}


def fold(text: str) -> str:
    """Letters and digits only (NFKC, lower case, katakana as hiragana): how a reader sees through separators."""
    kept = (c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())
    return "".join(chr(ord(c) - 0x60) if "ァ" <= c <= "ヶ" else c for c in kept)


SECRETS = [fold(text) for text in ("hidden diary entry", "buried the letter", "秘密のカナリアKANARIA7788")]
PUBLIC = "The rota for watering the greenhouse is on the fridge door."


def readable(path: Path) -> str:
    if path.suffix == ".db":
        with closing(sqlite3.connect(path)) as db:
            return "\n".join(db.iterdump())
    text = path.read_text(encoding="utf-8", errors="replace")
    decoded = [text]
    for line in text.splitlines():
        try:
            decoded.append(json.dumps(json.loads(line), ensure_ascii=False))
        except ValueError:
            continue
    return "\n".join(decoded)


def leaks(text: str) -> list[str]:
    folded = fold(text)
    return [secret for secret in SECRETS if secret in folded]


def test_a_rewritten_private_memory_reaches_no_output(
    combo_host: Callable[..., PluginHost], workspace: Path, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    configure_logging(logs, "DEBUG")
    host = combo_host()
    host.start()
    runner = ToolRunner(host)

    def call(tool: str, args: dict[str, object]) -> tuple[bool, str]:
        result = anyio.run(runner.call, tool, args)
        return bool(result.is_error), tool_text(result)

    try:
        for private in (DIARY, CANARY):
            failed, answer = call("remember", {"content": private, "private": True, "force": True})
            assert not failed, answer
        failed, answer = call("remember", {"content": PUBLIC, "importance": 5, "force": True})
        assert not failed, answer
        for number, (name, text) in enumerate(sorted(REWRITTEN.items())):
            # the agent writes the private text again in public: as a memory, a shared entry, a key, a scope
            failed, answer = call("remember", {"content": text, "importance": 5, "force": True})
            assert not failed, answer
            key = re.sub(r"[^a-z0-9_:-]", "", text.lower())[:64] or "k"
            for args in (
                {"dedupe_key": f"fact:k{number}", "content": text},
                {"dedupe_key": key, "content": PUBLIC},
                {"dedupe_key": f"fact:s{number}", "content": PUBLIC, "scope": f"project:{key.replace(':', '')[:40]}"},
            ):
                failed, answer = call("shared_append", {"scope": "global", "kind": "fact", **args})
                if leaks(json.dumps(args, ensure_ascii=False)):
                    assert failed, f"{name}: {args} was shared: {answer}"
                    assert "private memories never leave you" in answer
            assert leaks(host.redaction(text)) == [], (name, host.redaction(text))
            assert PRIVATE_MARK in host.redaction(text)
            logging.getLogger("ego.plugin.somebody").warning("echo: %s / %s", text, PUBLIC)
        failed, answer = call(
            "shared_append", {"scope": "global", "kind": "fact", "dedupe_key": "fact:rota", "content": PUBLIC}
        )
        assert not failed, answer
        export_file(host, tmp_path / "export.jsonl", include_private=False)
    finally:
        host.stop()

    outputs = {
        "shared store": [tmp_path / "shared.db"],
        "workspace": sorted(p for p in workspace.rglob("*") if p.is_file()),
        "export": [tmp_path / "export.jsonl"],
        "log": sorted(logs.glob("ego-*.jsonl")),
    }
    for kind, paths in outputs.items():
        text = "\n".join(readable(path) for path in paths)
        assert fold(PUBLIC) in fold(text), f"the {kind} holds no public text: nothing was written"
        assert leaks(text) == [], f"{kind}: {leaks(text)}"
