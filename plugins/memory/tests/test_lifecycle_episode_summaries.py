"""Episode summaries that forget: a summary never keeps the words of a private member — written so at
create_episode, a member made private later (the owner's revise_memory) takes its sentences out of every summary
holding it, and a summary stored before that rule is masked at the next start. Japanese and English; a sentence
shorter than any quote the private redactor looks for (``Aiko has cancer``) included."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st
from memory_support import saved_id

from ego_core import PRIVATE_MARK
from ego_core.testing import ToolRunner, call_ok, mcp_client, tool_text
from ego_memory.text.summaries import SENTENCE_MIN, mask_sentences, sentences

if TYPE_CHECKING:
    from conftest import MemoryHosts

pytestmark = pytest.mark.anyio

CASES = {
    "en": (
        "Aiko has cancer. The doctor called this morning.",
        "Tea with Aiko on the porch, the evening was calm.",
        "A long week at the hospital; Aiko has cancer, and we had tea after.",
        ("cancer", "doctor"),
    ),
    "ja": (
        "アイコが癌になった。朝に医者から電話があった。",
        "縁側でアイコとお茶を飲んだ。穏やかな夕方だった。",
        "病院の一週間。アイコが癌になった、そのあと二人でお茶を飲んだ。",
        ("癌",),
    ),
}


async def revise(runner: ToolRunner, memory_id: str, private: bool) -> str:
    result = await runner.call("revise_memory", {"memory_id": memory_id, "private": private})
    text = tool_text(result)
    assert not result.is_error, text
    return text


def episode_id_of(created: str) -> str:
    found = re.search(r"Episode (ep_[0-9a-f]{12}) created", created)
    assert found, created
    return found.group(1)


@pytest.mark.parametrize("language", sorted(CASES))
async def test_a_member_made_private_leaves_the_summaries_holding_it(memory_hosts: MemoryHosts, language: str) -> None:
    secret, calm, summary, words = CASES[language]
    host, plugin = memory_hosts()
    owner = ToolRunner(host, owner=True)
    async with mcp_client(host) as client:
        hidden = saved_id(await call_ok(client, "remember", {"content": secret}))
        public = saved_id(await call_ok(client, "remember", {"content": calm}))
        created = await call_ok(client, "create_episode", {"memory_ids": [hidden, public], "summary": summary})
        assert "left out" not in created  # every member public: the summary is kept as written
        episode_id = episode_id_of(created)
        other = episode_id_of(
            await call_ok(client, "create_episode", {"memory_ids": [public], "summary": "Only the calm evening."})
        )

        revised = await revise(owner, hidden, private=True)
        assert "Its words were left out of the summary of 1 episode." in revised
        shown = (await call_ok(client, "get_episode", {"episode_id": episode_id})).splitlines()[0]
        for word in words:
            assert word not in shown, shown
        assert PRIVATE_MARK in shown
        assert plugin.memories is not None
        stored = plugin.memories.store.get_episode(episode_id)
        assert stored is not None
        assert all(word not in stored.summary for word in words)
        kept = plugin.memories.store.get_episode(other)
        assert kept is not None
        assert kept.summary == "Only the calm evening."  # an episode it is no member of is left as it is

        again = await revise(owner, hidden, private=False)
        assert "left out" not in again  # what was masked stays masked: the summary is the agent's, not redrawn
        assert await revise(owner, public, private=True) == f"Revised (id: {public}): now private."


@pytest.mark.parametrize("language", sorted(CASES))
async def test_a_short_private_sentence_is_left_out_when_the_episode_is_created(
    memory_hosts: MemoryHosts, language: str
) -> None:
    secret, calm, summary, words = CASES[language]
    host, _plugin = memory_hosts()
    async with mcp_client(host) as client:
        hidden = saved_id(await call_ok(client, "remember", {"content": secret, "private": True}))
        public = saved_id(await call_ok(client, "remember", {"content": calm}))
        created = await call_ok(client, "create_episode", {"memory_ids": [hidden, public], "summary": summary})
        assert "Words quoted from private memories were left out of the summary" in created
        shown = (await call_ok(client, "get_episode", {"episode_id": episode_id_of(created)})).splitlines()[0]
    for word in words:
        assert word not in shown, shown


async def test_summaries_stored_before_are_masked_at_start(memory_hosts: MemoryHosts) -> None:
    """A store of the version before: a member made private while its summary kept its words."""
    secret, calm, summary, words = CASES["en"]
    host, plugin = memory_hosts()
    async with mcp_client(host) as client:
        hidden = saved_id(await call_ok(client, "remember", {"content": secret}))
        public = saved_id(await call_ok(client, "remember", {"content": calm}))
        episode_id = episode_id_of(
            await call_ok(client, "create_episode", {"memory_ids": [hidden, public], "summary": summary})
        )
        await revise(ToolRunner(host, owner=True), hidden, private=True)
        assert plugin.memories is not None
        plugin.memories.store.set_summaries({episode_id: summary})  # as the version before left it
    data_dir = host.settings.data_dir
    host.stop()

    again, restarted = memory_hosts(data_dir)
    assert restarted.memories is not None
    stored = restarted.memories.store.get_episode(episode_id)
    assert stored is not None
    assert stored.summary == f"A long week at the hospital; {PRIVATE_MARK}, and we had tea after."
    assert all(word not in stored.summary for word in words)
    again.stop()


PUBLIC_WORDS = st.lists(st.sampled_from(["tea", "the", "porch", "evening", "お茶", "夕方", "and", "calm"]), max_size=6)
PRIVATE_SENTENCES = st.text(alphabet="bfghjklnqsuwxz 癌病院アイコ", min_size=SENTENCE_MIN, max_size=40)
"""No letter of the mark (``[REDACTED_PRIVATE_MEMORY]``): a sentence it holds would be found in it again."""
CASINGS: list[Callable[[str], str]] = [str.upper, str.lower, str.title]


@given(PUBLIC_WORDS, PRIVATE_SENTENCES, PUBLIC_WORDS, st.sampled_from(CASINGS))
def test_no_sentence_of_a_private_text_survives_in_a_summary(
    before: list[str], sentence: str, after: list[str], case: Callable[[str], str]
) -> None:
    private = f"{sentence}. The rest of the day."
    summary = " ".join([*before, case(sentence), *after])
    masked = mask_sentences(summary, [private])
    for kept in sentences(private):
        assert kept not in " ".join(masked.casefold().split())
    assert mask_sentences(masked, [private]) == masked  # masking again changes nothing


def test_sentences_too_short_to_be_a_secret_are_not_masked() -> None:
    assert sentences("Yes. OK! Aiko has cancer. 癌だ。アイコの癌。") == ["aiko has cancer", "アイコの癌"]
    assert mask_sentences("Yes, tea and calm.", ["Yes. OK!"]) == "Yes, tea and calm."
    assert mask_sentences("Aiko's cancer: aiko has cancer!", ["Aiko has cancer."]) == f"Aiko's cancer: {PRIVATE_MARK}!"
