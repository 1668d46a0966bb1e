"""Labels and quotes that forget, across every plugin: memories of moments shared with Aiko (アイコ) form a notion
labelled by their first sentence (shorter than the private redactor's 24-character opening, so only drawing it
again keeps it out); once the owner makes them private — with revise_memory, or from the dashboard — neither the
notion's label nor consider_them's quote of the last moment shared shows their words: not in introspect, attune,
consider_them, curate_notions, the dashboard's ``/api/self``, nor the public export. Japanese and English."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from starlette.testclient import TestClient

from ego_core import PluginHost
from ego_core.mcp.server import ToolRunner
from ego_core.testing import SEPARATOR, call_ok, export_file, mcp_client, tool_text
from ego_dashboard.app import build_app
from ego_dashboard.owner import issue_owner_token

pytestmark = pytest.mark.anyio
BASE_URL = "http://127.0.0.1:8766"


@attrs.frozen
class Case:
    person: str
    contents: tuple[str, ...]
    label: str
    hidden: str
    words: tuple[str, ...]


CASES = {
    "en": Case(
        "Aiko",
        (
            "Aiko has cancer. The doctor called Aiko this morning.",
            "Aiko has cancer. Aiko and I kept thinking about it at work.",
            "Aiko has cancer. Aiko and I talked late into the night.",
            "Aiko has cancer. Aiko could not sleep, nor could I.",
        ),
        "Aiko has cancer",
        "Something I keep to myself",
        ("cancer", "doctor", "sleep"),
    ),
    "ja": Case(
        "アイコ",
        (
            "アイコが癌になった。朝にアイコへ医者から電話があった。",
            "アイコが癌になった。アイコと仕事中もずっと考えていた。",
            "アイコが癌になった。アイコと夜遅くまで二人で話した。",
            "アイコが癌になった。アイコも私も一晩中眠れなかった。",
        ),
        "アイコが癌になった",
        "胸にしまっていること",
        ("癌", "医者", "眠れ"),
    ),
}


def section(text: str, head: str) -> str:
    """The lines of a tool's answer from the one starting with ``head`` to the next empty one."""
    lines = text.split(SEPARATOR, 1)[0].splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(head)), None)
    if start is None:
        return ""
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return "\n".join(lines[start:end])


def csrf_of(web: TestClient) -> str:
    page = web.get("/").text
    marker = '<meta name="ego-csrf" content="'
    start = page.index(marker) + len(marker)
    return page[start : page.index('"', start)]


async def shown(client: Any, web: TestClient, person: str) -> str:
    """What shows of the notion and of the moments shared with Aiko: introspect's notion landscape, attune's
    convictions, consider_them (impressions and the quote of the last moment), curate_notions, /api/self."""
    answer = web.get("/api/self")
    assert answer.status_code == 200, answer.text
    return "\n".join(
        [
            section(await call_ok(client, "introspect"), "Notion landscape:"),
            section(await call_ok(client, "attune"), "Convictions:"),
            await call_ok(client, "consider_them", {"person": person}),
            await call_ok(client, "curate_notions", {"action": "list"}),
            await call_ok(client, "curate_notions", {"action": "network"}),
            json.dumps(answer.json(), ensure_ascii=False),
        ]
    )


@pytest.mark.parametrize(("language", "how"), [("en", "revise_memory"), ("ja", "dashboard")])
async def test_a_notion_and_a_quote_of_memories_made_private_show_none_of_their_words(
    combo_host: Callable[..., PluginHost], tmp_path: Path, language: str, how: str
) -> None:
    case = CASES[language]
    host = combo_host()
    async with mcp_client(host) as client:
        await call_ok(client, "update_relationship", {"person": case.person, "field": "trust_level", "value": 0.8})
        ids = []
        for content in case.contents:
            saved = await call_ok(client, "remember", {"content": content, "emotion": "sad", "force": True})
            found = re.search(r"Saved \(id: (mem_[0-9a-f]+)\)", saved)
            assert found, saved
            ids.append(found.group(1))
        for source, target in itertools.combinations(ids, 2):
            await call_ok(client, "link_memories", {"source_id": source, "target_id": target})
        await call_ok(client, "consolidate")
        headers = {"Authorization": f"Bearer {issue_owner_token(host.settings.data_dir)}"}
        with TestClient(build_app(host), base_url=BASE_URL, headers=headers) as web:
            before = await shown(client, web, case.person)
            assert f'- "{case.label}" confidence: 0.7' in before  # introspect's notion landscape
            assert f'Impressions of {case.person}: "{case.label}"' in before  # consider_them
            assert f'"label": "{case.label}"' in before  # the dashboard's /api/self
            assert case.contents[-1][:12] in before  # the quote of the last moment shared

            for memory_id in ids[:3]:  # the audit's case: three of them
                if how == "dashboard":
                    answer = web.post(
                        f"/api/memories/{memory_id}/revise",
                        headers={"X-Ego-Csrf": csrf_of(web)},
                        content=json.dumps({"private": True}),
                    )
                    assert answer.status_code == 200, answer.text
                else:
                    result = await ToolRunner(host, owner=True).call(
                        "revise_memory", {"memory_id": memory_id, "private": True}
                    )
                    assert not result.is_error, tool_text(result)
            await call_ok(client, "forget", {"memory_id": ids[3]})  # and the fourth forgotten

            after = await shown(client, web, case.person)
        export_file(host, tmp_path / "public.jsonl", include_private=False)
    assert f'"label": "{case.hidden}"' in after
    assert f'Impressions of {case.person}: "{case.hidden}"' in after
    for word in case.words:
        assert word not in after, word
    public = (tmp_path / "public.jsonl").read_text(encoding="utf-8")
    for word in case.words:
        assert word not in public, word
