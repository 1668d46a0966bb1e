"""Over a real MCP client with the real memory plugin: a notion forms in consolidate from linked, tagged
memories, is reinforced into a conviction, weakened by a contradiction, fades with time, and is curated."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from notions_support import DAY, NOW, clique, data_of, listed, remember

from ego_core import Clock, PluginHost
from ego_core.testing import call_error, call_ok, mcp_client
from ego_notions.api import NOTIONS_STORE, NotionStore

pytestmark = pytest.mark.anyio

TEA = [
    "Morning tea on the balcony before Master woke up.",
    "Brewed sencha slowly and watched the steam rise.",
    "The kettle sang while the city was still quiet.",
    "Shared a pot of hojicha with Master after breakfast.",
]


async def test_a_notion_forms_with_the_label_tone_and_confidence_of_its_memories(
    notions_host: Callable[..., PluginHost],
) -> None:
    host = notions_host()
    async with mcp_client(host) as client:
        await clique(client, TEA, emotion="contentment", tags=["tea", "morning"], valence=0.6)
        text = await call_ok(client, "consolidate")
        assert "Formed 1 notion(s)." in text
        notions = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert [(label, conf, reinf) for _, label, conf, reinf in notions] == [
            # four members: 0.3 + 0.1 · 4; the one beyond the three a notion needs counts as a reinforcement
            ("Tea and morning bring me calm", 0.70, 1)
        ]
        # a second consolidate finds the same clique and forms nothing new
        again = await call_ok(client, "consolidate")
        assert "Formed" not in again
        assert len(listed(await call_ok(client, "curate_notions", {"action": "list"}))) == 1
        store = host.services.get(NOTIONS_STORE, NotionStore)
        assert store is not None
        (view,) = store.notions()
    assert (view.tone, view.valence, view.is_conviction, view.tags) == ("contentment", 0.6, False, ("tea", "morning"))


async def test_reinforcement_makes_a_conviction_and_a_contradiction_weakens_it(
    notions_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = notions_host()
    async with mcp_client(host) as client:
        await clique(client, TEA, emotion="contentment", tags=["tea", "morning"], valence=0.6)
        await call_ok(client, "consolidate")
        for number, content in enumerate(
            [
                "Tried a smoky lapsang at dawn.",
                "Genmaicha tastes like toasted rice, I love it.",
                "A cup of tea steadied me before the long meeting.",
                "Matcha whisked in the old bowl, bright green.",
                "Tea with Master again, we talked about nothing.",
            ]
        ):
            clock.set(NOW + (number + 1) * DAY / 8)
            await remember(client, content, emotion="happy", tags=["tea"], valence=0.5)
        ((notion_id, label, conf, reinf),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert (conf, reinf) == (1.0, 6)  # one at forming (four members), five since
        store = host.services.get(NOTIONS_STORE, NotionStore)
        assert store is not None
        assert [c.id for c in store.convictions()] == [notion_id]
        introspect = data_of(await call_ok(client, "introspect"))
        assert f'- "{label}" confidence: 1.0 (conviction)' in introspect
        await remember(
            client, "The tea went cold and bitter; I hated it.", emotion="frustrated", tags=["tea"], valence=-0.7
        )
        ((_, _, conf, reinf),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert (conf, reinf) == (0.85, 6)  # weakened by 0.15; the count stays
        assert store.convictions()[0].confidence == 0.85


async def test_decay_counts_from_the_last_change_however_often_consolidate_runs(
    notions_host: Callable[..., PluginHost], clock: Clock
) -> None:
    host = notions_host()
    async with mcp_client(host) as client:
        await clique(client, TEA[:3], emotion="contentment", tags=["tea"], valence=0.6)
        await call_ok(client, "consolidate")  # 0.6 with three members
        for day in range(1, 32):  # a consolidate every day for a month
            clock.set(NOW + day * DAY)
            await call_ok(client, "consolidate")
        ((_, _, conf, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
    # 30 days of decay after the first day's grace: one half-life, whatever the number of runs
    assert conf == pytest.approx(0.30, abs=0.005)


async def test_a_faded_notion_is_let_go(notions_host: Callable[..., PluginHost], clock: Clock) -> None:
    async with mcp_client(notions_host()) as client:
        await clique(client, TEA[:3], emotion="contentment", tags=["tea"], valence=0.6)
        await call_ok(client, "consolidate")
        clock.set(NOW + 80 * DAY)  # 0.6 · 0.5^(79/30) < 0.15
        text = await call_ok(client, "consolidate")
        assert "Let go of 1 notion(s)." in text
        assert "No notions yet" in await call_ok(client, "curate_notions", {"action": "list"})


async def test_ephemeral_and_small_groups_form_nothing(notions_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(notions_host()) as client:
        await clique(
            client, ["Session start.", "Session end, see you.", "おやすみなさい、また明日。"], tags=["greeting"]
        )
        await clique(client, ["A first thought about boats.", "A second thought about sails."], tags=["boats"])
        text = await call_ok(client, "consolidate")
        assert "Formed" not in text
        assert "No notions yet" in await call_ok(client, "curate_notions", {"action": "list"})


async def test_japanese_memories_without_tags_are_labelled_by_their_first_sentence(
    notions_host: Callable[..., PluginHost],
) -> None:
    async with mcp_client(notions_host()) as client:
        await clique(
            client,
            [
                "朝の散歩は気持ちがいい。川沿いを歩いた。",
                "朝の散歩は気持ちがいい。鳥が鳴いていた。",
                "雨の日は家で本を読む。",
            ],
            emotion="happy",
        )
        await call_ok(client, "consolidate")
        ((_, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
    assert label == "朝の散歩は気持ちがいい"  # a thought of its own: no emotion in brackets


async def test_private_memories_are_never_quoted_in_a_label(notions_host: Callable[..., PluginHost]) -> None:
    secret = "My bank PIN is hidden in the blue teapot."
    async with mcp_client(notions_host()) as client:
        await clique(client, [secret, secret.replace("blue", "red"), secret.replace("blue", "green")], private=True)
        await call_ok(client, "consolidate")
        ((_, label, _, _),) = listed(await call_ok(client, "curate_notions", {"action": "list"}))
    assert label == "Something I keep to myself"


async def test_curate_merge_relabel_delete_and_errors(notions_host: Callable[..., PluginHost], clock: Clock) -> None:
    host = notions_host()
    async with mcp_client(host) as client:
        await clique(client, TEA[:3], emotion="contentment", tags=["tea"], valence=0.6)
        await clique(
            client,
            [
                "Ran along the river at six.",
                "Stretching after the run felt good.",
                "Ran in the rain, soaked and happy.",
            ],
            emotion="happy",
            tags=["running"],
            valence=0.7,
        )
        await clique(
            client, ["Garden beans sprouted.", "Watered the tomatoes.", "Picked the first basil."], tags=["garden"]
        )
        await call_ok(client, "consolidate")
        notions = {
            label: ident for ident, label, _, _ in listed(await call_ok(client, "curate_notions", {"action": "list"}))
        }
        tea, running = notions["Tea brings me calm"], notions["Running makes me happy"]
        garden = notions["Garden is part of my days"]
        merged = await call_ok(client, "curate_notions", {"action": "merge", "id": running, "into": tea})
        assert f"Merged {running} into {tea}." in merged
        relabel = {"action": "relabel", "id": tea, "label": "small daily rituals", "person": "Master"}
        await call_ok(client, "curate_notions", relabel)
        await call_ok(client, "curate_notions", {"action": "delete", "id": garden})
        shown = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        assert [(i, label) for i, label, _, _ in shown] == [(tea, "small daily rituals")]
        store = host.services.get(NOTIONS_STORE, NotionStore)
        assert store is not None
        assert [n.id for n in store.for_person("master")] == [tea]
        # errors name what is wrong and change nothing
        missing = "notion_000000000000"
        assert "Notion not found" in await call_error(client, "curate_notions", {"action": "delete", "id": missing})
        assert "`into` is required" in await call_error(client, "curate_notions", {"action": "merge", "id": tea})
        assert "`into`" in await call_error(client, "curate_notions", {"action": "merge", "id": tea, "into": tea})
        assert "`label` is required" in await call_error(
            client, "curate_notions", {"action": "relabel", "id": tea, "label": "  "}
        )
        await call_error(client, "curate_notions", {"action": "explode"})
        assert listed(await call_ok(client, "curate_notions", {"action": "list"})) == shown


async def test_meta_fields(notions_host: Callable[..., PluginHost]) -> None:
    async with mcp_client(notions_host()) as client:
        await clique(client, TEA[:3], emotion="contentment", tags=["tea"], valence=0.6)
        await clique(
            client, ["Garden beans sprouted.", "Watered the tomatoes.", "Picked the first basil."], tags=["garden"]
        )
        await call_ok(client, "consolidate")
        ids = {
            label: ident for ident, label, _, _ in listed(await call_ok(client, "curate_notions", {"action": "list"}))
        }
        tea, garden = ids["Tea brings me calm"], ids["Garden is part of my days"]
        add = {"action": "meta", "id": tea, "meta": {"key": "why", "type": "text", "value": "calm"}}
        await call_ok(client, "curate_notions", add)
        assert "Updated meta field 'why' (text)" in await call_ok(
            client, "curate_notions", {**add, "meta": {"key": "why", "value": "quiet"}}
        )
        wrong = {**add, "meta": {"key": "why", "type": "notion_ids", "value": [garden]}}
        assert "`meta.type`" in await call_error(client, "curate_notions", wrong)
        link = {"action": "meta", "id": tea, "meta": {"key": "see", "type": "notion_ids", "value": [garden]}}
        await call_ok(client, "curate_notions", link)
        assert "meta=[see:notion_ids, why:text]" in await call_ok(client, "curate_notions", {"action": "list"})
        own = {**link, "meta": {"key": "self", "type": "notion_ids", "value": [tea]}}
        assert "other than the notion's own" in await call_error(client, "curate_notions", own)
        walk = data_of(await call_ok(client, "curate_notions", {"action": "explore", "id": tea, "depth": 1}))
        assert "<- meta_link (see)" in walk
        await call_ok(client, "curate_notions", {"action": "delete", "id": garden})
        listing = await call_ok(client, "curate_notions", {"action": "list"})
        assert "see:notion_ids" in listing
        walk = data_of(await call_ok(client, "curate_notions", {"action": "explore", "id": tea, "depth": 1}))
        assert "meta_link" not in walk
        await call_ok(client, "curate_notions", {"action": "meta", "id": tea, "meta": {"key": "why", "value": None}})
        assert "why:text" not in await call_ok(client, "curate_notions", {"action": "list"})


@pytest.mark.anyio
async def test_meta_keys_in_japanese(notions_host: Callable[..., PluginHost]) -> None:
    """A user found: the key 理由 was refused as not "letters", though it is letters; any script's letters and
    digits are keys now, NFKC-normalised (full-width ｒｅａｓｏｎ is reason)."""
    async with mcp_client(notions_host()) as client:
        await clique(client, TEA[:3], emotion="contentment", tags=["tea"], valence=0.6)
        await call_ok(client, "consolidate")
        (tea,) = [ident for ident, _, _, _ in listed(await call_ok(client, "curate_notions", {"action": "list"}))]
        why = {"action": "meta", "id": tea, "meta": {"key": "理由", "type": "text", "value": "落ち着くから"}}
        assert f"Added meta field '理由' (text) on {tea}." in await call_ok(client, "curate_notions", why)
        wide = {**why, "meta": {"key": "ｒｅａｓｏｎ２", "type": "text", "value": "calm"}}
        assert "Added meta field 'reason2' (text)" in await call_ok(client, "curate_notions", wide)
        assert "meta=[reason2:text, 理由:text]" in await call_ok(client, "curate_notions", {"action": "list"})
        for bad in ("理 由", "理由\u3000", "", "理由!", "a\tb", "x" * 41):
            text = await call_error(client, "curate_notions", {**why, "meta": {**why["meta"], "key": bad}})
            assert "`meta.key`: 1 to 40 letters or digits of any script (such as 理由), '_', '.' or '-'" in text
        gone = {**why, "meta": {"key": "理由", "value": None}}
        assert f"Removed meta field '理由' from {tea}." in await call_ok(client, "curate_notions", gone)
