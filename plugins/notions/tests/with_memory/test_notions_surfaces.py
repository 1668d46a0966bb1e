"""Where notions show (recall's notion lines, curate_notions explore and network), forget, and export → import
into an empty data directory; private memories never quoted in a walk, a log or an export."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from notions_support import clique, data_of, listed, remember

from ego_core import PluginHost
from ego_core.testing import PortableError, call_error, call_ok, configure_logging, export_file, import_file, mcp_client

pytestmark = pytest.mark.anyio

TEA = ["Morning tea on the balcony.", "Brewed sencha slowly at dawn.", "The kettle sang in the quiet kitchen."]
RUN = ["Ran along the river at six.", "Stretching after the run felt good.", "Ran in the rain, soaked."]
GARDEN = ["Garden beans sprouted.", "Watered the tomatoes.", "Picked the first basil."]


async def test_recall_shows_the_notions_of_its_memories(notions_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(notions_host()) as client:
        await clique(client, TEA, emotion="contentment", tags=["tea"], valence=0.6)
        await call_ok(client, "consolidate")
        text = data_of(await call_ok(client, "recall", {"context": "tea in the morning", "n_results": 3}))
    assert 'Notions:\n"Tea brings me calm" contentment confidence: 0.6' in text


async def test_explore_walks_memories_and_notions_and_shows_the_network(
    notions_host: Callable[..., PluginHost],
) -> None:
    async with mcp_client(notions_host()) as client:
        tea = await clique(client, TEA, emotion="contentment", tags=["tea"], valence=0.6)
        secret = await remember(client, "My diary key is under the blue teapot.", private=True)
        await call_ok(client, "link_memories", {"source_id": tea[0], "target_id": secret})
        await clique(client, RUN, emotion="happy", tags=["running"], valence=0.7)
        await call_ok(client, "consolidate")
        ids = {
            label: ident for ident, label, _, _ in listed(await call_ok(client, "curate_notions", {"action": "list"}))
        }
        await call_ok(
            client,
            "curate_notions",
            {
                "action": "meta",
                "id": ids["Tea brings me calm"],
                "meta": {"key": "see", "type": "notion_ids", "value": [ids["Running makes me happy"]]},
            },
        )
        walk = data_of(await call_ok(client, "curate_notions", {"action": "explore", "id": tea[0], "depth": 2}))
        assert walk.startswith(f'Exploring from "Morning tea on the balcony." ({tea[0]}, depth=2)')
        assert '[notion] "Tea brings me calm" confidence: 0.6\n    <- source_memory' in walk
        assert "(a private memory)" in walk
        assert "blue teapot" not in walk
        second = walk.split("depth 2:", 1)[1]
        expected = (
            '[notion] "Running makes me happy" confidence: 0.6\n    <- meta_link (see) (via "Tea brings me calm")'
        )
        assert expected in second
        network = data_of(await call_ok(client, "curate_notions", {"action": "network"}))
        assert network.splitlines()[0] == "Notion network: 2 notions, 1 edges, avg degree 1.0"
        assert "Clusters (1):" in network
        assert "Seed not found: mem_000000000000" in await call_error(
            client, "curate_notions", {"action": "explore", "id": "mem_000000000000"}
        )
        refused = await call_error(client, "curate_notions", {"action": "explore", "id": "the blue teapot"})
        assert "`id`" in refused
        assert "teapot" not in refused
        await call_error(client, "curate_notions", {"action": "explore", "id": tea[0], "depth": 9})


async def test_forget_drops_the_memory_from_its_notions(notions_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(notions_host()) as client:
        tea = await clique(client, TEA, emotion="contentment", tags=["tea"], valence=0.6)
        await call_ok(client, "consolidate")
        await call_ok(client, "forget", {"memory_id": tea[0]})
        ((notion_id, _, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        walk = data_of(await call_ok(client, "curate_notions", {"action": "explore", "id": notion_id, "depth": 1}))
    assert tea[0] not in walk
    assert tea[1] in walk


async def test_curation_survives_export_and_import_into_an_empty_data_dir(
    notions_host: Callable[..., PluginHost], tmp_path: Path
) -> None:
    source = notions_host(data="first")
    async with mcp_client(source) as client:
        await clique(client, TEA, emotion="contentment", tags=["tea"], valence=0.6)
        await clique(client, RUN, emotion="happy", tags=["running"], valence=0.7)
        await clique(client, GARDEN, tags=["garden"])
        await clique(
            client,
            ["My secret plan for the surprise party.", "The surprise party guest list.", "Hid the party gifts."],
            private=True,
        )
        await call_ok(client, "consolidate")
        ids = {
            label: ident for ident, label, _, _ in listed(await call_ok(client, "curate_notions", {"action": "list"}))
        }
        await call_ok(
            client,
            "curate_notions",
            {"action": "merge", "id": ids["Running makes me happy"], "into": ids["Tea brings me calm"]},
        )
        await call_ok(
            client,
            "curate_notions",
            {"action": "relabel", "id": ids["Tea brings me calm"], "label": "daily rituals"},
        )
        await call_ok(client, "curate_notions", {"action": "delete", "id": ids["Garden is part of my days"]})
        before = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        export_file(source, tmp_path / "all.jsonl", include_private=True)
        export_file(source, tmp_path / "public.jsonl", include_private=False)
    assert sorted(label for _, label, _, _ in before) == ["Something I keep to myself", "daily rituals"]
    public = (tmp_path / "public.jsonl").read_text(encoding="utf-8")
    assert "surprise" not in public
    public_notions = [json.loads(line) for line in public.splitlines() if '"notion"' in line]
    assert [r["label"] for r in public_notions] == ["daily rituals"]  # the private-only notion is left out

    target = notions_host(data="restored")
    async with mcp_client(target) as client:
        import_file(target, tmp_path / "all.jsonl")
        assert listed(await call_ok(client, "curate_notions", {"action": "list"})) == before
        again = import_file(target, tmp_path / "all.jsonl")
        assert again.added.get("notions", 0) == 0


async def test_a_bad_notion_record_refuses_the_import(notions_host: Callable[..., PluginHost], tmp_path: Path) -> None:
    host = notions_host()
    async with mcp_client(host) as client:
        await clique(client, TEA, emotion="contentment", tags=["tea"], valence=0.6)
        await call_ok(client, "consolidate")
        export_file(host, tmp_path / "good.jsonl", include_private=True)
        lines = (tmp_path / "good.jsonl").read_text(encoding="utf-8").splitlines()
        bad = [json.loads(line) for line in lines]
        for record in bad:
            if record.get("type") == "notion":
                record["confidence"] = 7
        (tmp_path / "bad.jsonl").write_text("\n".join(json.dumps(r) for r in bad) + "\n", encoding="utf-8")
        target = notions_host(data="empty")
        async with mcp_client(target) as other:
            with pytest.raises(PortableError, match="confidence"):
                import_file(target, tmp_path / "bad.jsonl")
            assert "No notions yet" in await call_ok(other, "curate_notions", {"action": "list"})


async def test_logs_never_quote_a_private_memory(notions_host: Callable[..., PluginHost], tmp_path: Path) -> None:
    configure_logging(tmp_path / "logs", "DEBUG")
    async with mcp_client(notions_host()) as client:
        await clique(
            client,
            ["The hidden key is in the blue teapot.", "Blue teapot key, hidden again.", "Teapot key."],
            private=True,
            tags=["key"],
        )
        await call_ok(client, "consolidate")
        await remember(client, "Another key under the blue teapot.", private=True, tags=["key"])
        await call_ok(client, "curate_notions", {"action": "network"})
    logged = "\n".join(p.read_text(encoding="utf-8") for p in (tmp_path / "logs").glob("*"))
    assert "notions_consolidated" in logged
    assert "teapot" not in logged
