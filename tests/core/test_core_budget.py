"""The composed answers keep to their token budgets: sections of low priority give way, with their scaffold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_core import ScaffoldContext, ScaffoldLine, Section, estimate_tokens, hookimpl
from ego_core.testing import HostFactory, mcp_client, tool_text

WORDS = "the garden keeps its own time and the kettle hums along in the quiet kitchen".split()


def sentence(count: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(count)) + "."


@pytest.mark.anyio
async def test_wake_up_leaves_out_the_least_needed_sections_when_they_do_not_fit(make_host: HostFactory) -> None:
    class Crowded:
        @hookimpl
        def on_wake_up(self) -> list[Section]:
            return [
                Section(key="thought", text="Thought: " + sentence(60), order=10, priority=90),
                Section(key="weather", text="Weather: " + sentence(40), order=20, priority=30),
                Section(
                    key="pointer",
                    text="Pointer: " + sentence(30),
                    order=30,
                    priority=10,
                    scaffold=(ScaffoldLine("almanac tells more."),),
                ),
                Section(key="desire", text="Desire: " + sentence(20), order=40, priority=70),
            ]

        @hookimpl
        def scaffold_for(self, tool: str, context: ScaffoldContext) -> list[str] | None:
            return ["A hint for every answer."] if tool == "wake_up" else None

    async with mcp_client(make_host({"crowded": Crowded()})) as client:
        text = tool_text(await client.call_tool("wake_up", {}))
    assert "Thought:" in text
    assert "Desire:" in text
    assert "Weather:" not in text  # 30 gives way before 70 and 90
    assert "Pointer:" not in text
    assert "almanac tells more." not in text  # a section's scaffold goes with it
    assert text.count("A hint for every answer.") == 1  # gathered once, counted in the budget
    assert estimate_tokens(text) * 1.1 <= 150


@pytest.mark.anyio
async def test_sections_that_fit_are_all_kept_in_their_order(make_host: HostFactory) -> None:
    class Few:
        @hookimpl
        def on_attune(self) -> list[Section]:
            return [Section(key="b", text="Second.", order=20, priority=1), Section(key="a", text="First.", order=10)]

    async with mcp_client(make_host({"few": Few()})) as client:
        text = tool_text(await client.call_tool("attune", {}))
    assert text.startswith("First.\nSecond.")


@pytest.mark.anyio
async def test_the_most_needed_section_stays_when_it_alone_is_over_the_budget(
    make_host: HostFactory, caplog: pytest.LogCaptureFixture
) -> None:
    class Verbose:
        @hookimpl
        def on_wake_up(self) -> list[Section]:
            return [
                Section(key="thought", text="Thought: " + sentence(200), priority=90),
                Section(key="body", text="Body: calm.", priority=30),
            ]

    async with mcp_client(make_host({"verbose": Verbose()})) as client:
        text = tool_text(await client.call_tool("wake_up", {}))
    assert "Thought:" in text  # never an answer that says nothing is kept
    assert "Nothing carried over" not in text
    assert "Body:" not in text
    assert "section thought alone is over its answer's budget" in caplog.text


@pytest.mark.anyio
async def test_on_shown_is_called_once_for_each_section_the_answer_keeps(
    make_host: HostFactory, caplog: pytest.LogCaptureFixture
) -> None:
    shown: list[str] = []

    def broken() -> None:
        raise RuntimeError("the follow-up failed")

    class Told:
        @hookimpl
        def on_wake_up(self) -> list[Section]:
            return [
                Section(
                    key="reunion",
                    text="Back together: " + sentence(60),
                    priority=85,
                    on_shown=lambda: shown.append("reunion"),
                ),
                Section(key="broken", text="Broken follow-up.", priority=80, on_shown=broken),
                Section(
                    key="unbidden",
                    text="Unbidden: " + sentence(60),
                    priority=40,
                    on_shown=lambda: shown.append("unbidden"),
                ),
                Section(key="plain", text="Plain.", priority=70),
            ]

    async with mcp_client(make_host({"told": Told()})) as client:
        text = tool_text(await client.call_tool("wake_up", {}))
    assert "Back together:" in text
    assert "Broken follow-up." in text  # the answer stands though its follow-up raised
    assert "Unbidden:" not in text
    assert shown == ["reunion"]  # never for a section the budget left out
    assert "plugin told raised in on_shown of broken" in caplog.text


@given(st.lists(st.sampled_from([*WORDS, "2027", "—", "夕焼け", "マスター", ",", "unbelievably"]), max_size=40))
def test_estimate_tokens_adds_up_over_words(pieces: list[str]) -> None:
    assert estimate_tokens(" ".join(pieces)) == sum(estimate_tokens(piece) for piece in pieces)


def test_estimate_tokens_counts_words_marks_and_characters() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("The kettle hums.") == 4
    assert estimate_tokens("夕焼けを見た") == 6  # one a character, as a WordPiece tokenizer splits them
    assert estimate_tokens("unbelievably") > estimate_tokens("kettle")
