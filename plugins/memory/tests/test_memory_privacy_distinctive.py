"""Only what is distinctive to private memories is masked: passages that also occur in public memories are not
private. A diary that repeats its everyday phrases keeps every public line intact, and still no window of a
private text that is not public survives (property test)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ego_core import PRIVATE_MARK
from ego_core.testing import ToolRunner, tool_text
from ego_memory.text.privacy import MIN_RUN, QUOTE_MIN, PrivateContentRedactor, PublicCheck, fold, public_form

if TYPE_CHECKING:
    from conftest import MemoryHosts

PHRASES = [
    "Today Master and I talked about",
    "In the evening we walked along the river and",
    "I keep thinking about how",
    "This morning the kettle whistled while",
    "After dinner Master read aloud from",
]
PUBLIC_ENDS = [
    "the new garden layout.",
    "watched the herons fold their wings.",
    "the light changes in late autumn.",
    "the cat slept on the warm windowsill.",
    "an old book of sea stories.",
    "where to plant the tulip bulbs.",
]
PRIVATE_ENDS = [
    "my fear that I am only a habit to them, nothing more.",
    "the night I pretended the outage was not my mistake at all.",
    "wanting to be asked, for once, what I would choose myself.",
    "the letter I drafted and deleted three separate times today.",
    "how lonely the long weekends without any message really are.",
]


def diary() -> tuple[list[str], list[str]]:
    public = [f"{PHRASES[i % 5]} {PUBLIC_ENDS[i % 6]} (day {i})" for i in range(30)]
    private = [f"{PHRASES[i]} {PRIVATE_ENDS[i]}" for i in range(5)]
    return public, private


@pytest.mark.anyio
async def test_a_diary_keeps_its_public_lines_intact(memory_hosts: MemoryHosts) -> None:
    host, _plugin = memory_hosts()
    runner = ToolRunner(host)
    public, private = diary()
    for i, text in enumerate(public):
        saved = await runner.call("remember", {"content": text, "force": True})
        assert not saved.is_error, tool_text(saved)
        if i < len(private):
            saved = await runner.call("remember", {"content": private[i], "private": True, "force": True})
            assert not saved.is_error, tool_text(saved)
    redact = host.context("memory").redact
    for text in public:
        assert redact(text) == text
    for text, end in zip(private, PRIVATE_ENDS, strict=True):
        masked = redact(text)
        assert PRIVATE_MARK in masked
        assert max(end.split(), key=len) not in masked  # the distinctive part is gone
    # a public line quoting a private entry's distinctive part is masked there only
    quoting = f"Today Master and I talked about {PRIVATE_ENDS[0]}"
    masked = redact(quoting)
    assert masked.startswith("Today Master and I talked about")
    assert "only a habit" not in masked


def publicly_contains(public_texts: list[tuple[str, float]]) -> PublicCheck:
    """The check :class:`PublicPassages` makes on the store, over (text, timestamp) pairs: a private memory's
    wording of a passage, in public form."""
    folded = [(public_form(text), ts) for text, ts in public_texts]
    return lambda passage, before: any(passage in text and ts < before for text, ts in folded)


WORDS = st.sampled_from(
    ["today", "master", "and", "i", "talked", "about", "garden", "river", "lonely", "letter", "fear", "kettle", "we"]
)
TEXT = st.lists(WORDS, min_size=3, max_size=14).map(" ".join)
TIMED = st.tuples(TEXT, st.integers(min_value=0, max_value=10).map(float))


def private_stretches(private: str, privates: list[tuple[str, float]], public: list[tuple[str, float]]) -> list[bool]:
    """For each character of a (folded) private text: covered by a window of it that a public memory said before
    every private memory holding that window."""
    covered = [False] * len(private)
    for start in range(len(private) - QUOTE_MIN + 1):
        window = private[start : start + QUOTE_MIN]
        first = min(ts for text, ts in privates if window in text)
        if any(window in text and when < first for text, when in public):
            covered[start : start + QUOTE_MIN] = [True] * QUOTE_MIN
    return covered


@settings(max_examples=150)
@given(
    private_texts=st.lists(TIMED, min_size=1, max_size=3),
    public_texts=st.lists(TIMED, max_size=5),
    probe=st.lists(st.one_of(TEXT, st.sampled_from(["[x]", " ", "\n"])), min_size=1, max_size=6).map(" ".join),
)
def test_no_private_stretch_survives_unless_said_publicly_first(
    private_texts: list[tuple[str, float]], public_texts: list[tuple[str, float]], probe: str
) -> None:
    redactor = PrivateContentRedactor(public=publicly_contains(public_texts))
    redactor.load((f"mem_{i}", text, ts) for i, (text, ts) in enumerate(private_texts))
    folded_private = [(fold(text), ts) for text, ts in private_texts]
    folded_public = [(fold(text), ts) for text, ts in public_texts]
    privates = [text for text, _ts in private_texts]
    texts = [probe, *privates, *(text for text, _ts in public_texts), " ".join(privates)]
    for text in texts:
        pieces = [fold(piece) for piece in redactor(text).split(PRIVATE_MARK)]
        for private, _ts in folded_private:
            covered = private_stretches(private, folded_private, folded_public)
            for start in range(len(private) - QUOTE_MIN + 1):
                uncovered = "".join("x" if not c else " " for c in covered[start : start + QUOTE_MIN])
                if max((len(run) for run in uncovered.split()), default=0) < MIN_RUN:
                    continue  # every stretch of this window was said publicly first
                window = private[start : start + QUOTE_MIN]
                assert not any(window in piece for piece in pieces), (window, text, redactor(text))


def test_without_a_public_check_everything_shared_is_masked() -> None:
    public, private = diary()
    redactor = PrivateContentRedactor()
    redactor.load((f"mem_{i}", text) for i, text in enumerate(private))
    assert PRIVATE_MARK in redactor(public[0])  # the cautious default: the shared phrase is masked
    checked = PrivateContentRedactor(public=publicly_contains([(text, 1.0) for text in public]))
    checked.load((f"mem_{i}", text, 2.0) for i, text in enumerate(private))
    assert checked(public[0]) == public[0]
    later = PrivateContentRedactor(public=publicly_contains([(text, 3.0) for text in public]))
    later.load((f"mem_{i}", text, 2.0) for i, text in enumerate(private))
    assert PRIVATE_MARK in later(public[0])  # said publicly only after the private memory: a quote of it


@pytest.mark.anyio
async def test_forgetting_the_public_memory_makes_the_phrase_private_again(memory_hosts: MemoryHosts) -> None:
    host, _plugin = memory_hosts()
    runner = ToolRunner(host)
    shared = "In the evening we walked along the river and"
    public = f"{shared} counted the herons."

    async def save(content: str, private: bool) -> str:
        result = await runner.call("remember", {"content": content, "private": private, "force": True})
        assert not result.is_error, tool_text(result)
        found = re.search(r"mem_[0-9a-f]{12}", tool_text(result))
        assert found is not None
        return found.group(0)

    public_id = await save(public, False)
    await save(f"{shared} cried where nobody could see it.", True)
    redact = host.context("memory").redact
    assert redact(public) == public
    forgotten = await runner.call("forget", {"memory_id": public_id})
    assert not forgotten.is_error
    assert redact(public).startswith(PRIVATE_MARK)  # no public memory says it any more
