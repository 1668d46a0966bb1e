"""Weakened notions: each wake_up compares the notions' confidence with what the previous wake_up saw, and a notion
that fell by at least 0.1 smoulders once in the ``Embers:`` line (warmth 0.4, never its label). The first
wake_up reports nothing, deleted notions are not reported, the comparison survives a restart, and a look that
fails half-way keeps the previous one. Over a real MCP client with the real memory plugin, on a driven clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from pathlib import Path

import pytest
from notions_support import DAY, NOW, clique, listed, remember

from ego_core import Clock, Ember, PluginHost, hookimpl
from ego_core.testing import call_ok, mcp_client
from ego_notions.plugin import WEAKENED_EMBER
from ego_notions.store import NotionDB, open_file

pytestmark = pytest.mark.anyio

TEA = [
    "Morning tea on the balcony before Master woke up.",
    "Brewed sencha slowly and watched the steam rise.",
    "The kettle sang while the city was still quiet.",
    "Shared a pot of hojicha with Master after breakfast.",
]
RUN = ["Ran along the river at six.", "Stretching after the run felt good.", "Ran in the rain, soaked."]
CALM = {"intensity": 0.3}
"""Quiet memories: no memory of these tests is intense enough to be an ember of its own."""


def embers(text: str) -> str:
    return next((line for line in text.splitlines() if line.startswith("Embers:")), "")


async def _formed(client: object) -> None:
    await clique(client, TEA, emotion="contentment", tags=["tea"], valence=0.6, **CALM)  # 0.7
    await clique(client, RUN, emotion="happy", tags=["running"], valence=0.7, **CALM)  # 0.6
    await call_ok(client, "consolidate")


async def _contradict(client: object, clock: Clock, tag: str) -> None:
    clock.set(clock.now() + timedelta(hours=1))
    await remember(client, f"The {tag} went badly today.", emotion="frustrated", tags=[tag], valence=-0.7, **CALM)


async def test_a_notion_that_feels_less_certain_than_at_the_last_wake_up_smoulders_once(
    notions_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(notions_host()) as client:
        await _formed(client)
        assert WEAKENED_EMBER not in embers(await call_ok(client, "wake_up"))  # the first look
        await _contradict(client, clock, "tea")  # 0.7 → 0.55
        await _contradict(client, clock, "running")  # 0.6 → 0.45
        line = embers(await call_ok(client, "wake_up"))
        assert line.count(WEAKENED_EMBER) == 1  # one feeling, however many notions
        assert "tea" not in line  # never a label
        assert "running" not in line
        assert WEAKENED_EMBER not in embers(await call_ok(client, "wake_up"))  # reported once


async def test_a_small_drop_is_not_reported_and_a_long_fading_is(
    notions_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(notions_host()) as client:
        await _formed(client)
        await call_ok(client, "wake_up")
        clock.set(NOW + 3 * DAY)  # two days of decay: 0.7 → 0.67
        assert WEAKENED_EMBER not in embers(await call_ok(client, "wake_up"))
        clock.set(NOW + 4 * DAY)  # a day later: still under a tenth since the last look
        assert WEAKENED_EMBER not in embers(await call_ok(client, "wake_up"))
        clock.set(NOW + 20 * DAY)  # sixteen days away: 0.65 → 0.45
        assert WEAKENED_EMBER in embers(await call_ok(client, "wake_up"))


async def test_the_first_wake_up_reports_nothing(notions_host: Callable[..., PluginHost], clock: Clock) -> None:
    async with mcp_client(notions_host()) as client:
        await _formed(client)
        await _contradict(client, clock, "tea")
        assert WEAKENED_EMBER not in embers(await call_ok(client, "wake_up"))
        assert WEAKENED_EMBER not in embers(await call_ok(client, "wake_up"))


async def test_a_notion_deleted_since_the_last_wake_up_is_not_reported(
    notions_host: Callable[..., PluginHost], clock: Clock
) -> None:
    async with mcp_client(notions_host()) as client:
        await _formed(client)
        await call_ok(client, "wake_up")
        notions = listed(await call_ok(client, "curate_notions", {"action": "list"}))
        running = next(notion_id for notion_id, label, _c, _r in notions if label.startswith("Running"))
        await _contradict(client, clock, "running")  # 0.45, then deleted by hand
        await call_ok(client, "curate_notions", {"action": "delete", "id": running})
        for _ in range(4):  # the tea notion is let go below 0.2: 0.7 → 0.55 → 0.4 → 0.25 → gone
            await _contradict(client, clock, "tea")
        assert listed(await call_ok(client, "curate_notions", {"action": "list"})) == []
        assert WEAKENED_EMBER not in embers(await call_ok(client, "wake_up"))


async def test_what_the_last_wake_up_saw_survives_a_restart(
    notions_host: Callable[..., PluginHost], clock: Clock
) -> None:
    first = notions_host()
    async with mcp_client(first) as client:
        await _formed(client)
        await call_ok(client, "wake_up")
        await _contradict(client, clock, "tea")
    first.stop()
    async with mcp_client(notions_host()) as client:
        assert WEAKENED_EMBER in embers(await call_ok(client, "wake_up"))


def test_the_look_back_is_one_transaction(tmp_path: Path) -> None:
    db = NotionDB(open_file(tmp_path))
    assert db.look_back({"notion_a": 0.8, "notion_b": 0.5}, 0.1, NOW) is None

    class Failing(Mapping[str, float]):
        """Confidences that cannot all be read (a crash half-way through the new snapshot)."""

        def __getitem__(self, key: str) -> float:
            return 0.5

        def __len__(self) -> int:
            return 2

        def __iter__(self) -> Iterator[str]:
            yield "notion_a"
            raise OSError("gone half-way")

    with pytest.raises(OSError, match="half-way"):
        db.look_back(Failing(), 0.1, NOW + DAY)
    # the previous look is intact: a drop from it is still seen, and an exact tenth counts
    assert db.look_back({"notion_a": 0.7, "notion_b": 0.45, "notion_c": 0.1}, 0.1, NOW + DAY) == ["notion_a"]
    assert db.look_back({"notion_a": 0.7}, 0.1, NOW + 2 * DAY) == []
    db.close()


class Hearth:
    """Another plugin's embers, one a little warmer than a weakened notion and one a little cooler."""

    @hookimpl
    def ember_candidates(self) -> list[Ember]:
        return [Ember("...the cooler one", 0.35), Ember("...the warmer one", 0.45)]


async def test_the_ember_is_four_tenths_warm(notions_host: Callable[..., PluginHost], clock: Clock) -> None:
    async with mcp_client(notions_host(extra={"hearth": Hearth()})) as client:
        await _formed(client)
        assert embers(await call_ok(client, "wake_up")) == "Embers: ...the warmer one / ...the cooler one"
        await _contradict(client, clock, "tea")
        assert embers(await call_ok(client, "wake_up")) == f"Embers: ...the warmer one / {WEAKENED_EMBER}"
