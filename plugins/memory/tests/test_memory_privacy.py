"""Private memories never leave through logs: the remember log view, the redactor over every
rendering of a private text, and private memories written by another process."""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from mcp import Client

from ego_core import PRIVATE_MARK, Clock, Settings, build_host, truncate
from ego_core.testing import configure_logging, mcp_client, tool_text
from ego_memory.plugin import MemoryPlugin
from ego_memory.text.privacy import (
    KEY,
    MIN_NEEDLE,
    QUOTE_MIN,
    PrivateContentRedactor,
    fold,
    fold_with_positions,
    mask_quotes,
    quote_windows,
)

if TYPE_CHECKING:
    from conftest import EgoChild, MemoryHosts

NOW = datetime(2026, 4, 10, 9, 0, tzinfo=UTC)


def log_records(log_dir: Path) -> list[dict[str, Any]]:
    for handler in logging.getLogger().handlers:
        handler.flush()
    return [json.loads(line) for path in sorted(log_dir.glob("*.jsonl")) for line in path.read_text().splitlines()]


# ---------------------------------------------------------------------------------------------------
# The JSON log


@pytest.mark.anyio
async def test_a_private_remember_never_reaches_the_json_log(memory_hosts: MemoryHosts, tmp_path: Path) -> None:
    # with the log_arguments debugging aid on, argument values are logged: a private memory's are masked still
    host, _plugin = memory_hosts(clock=Clock(NOW), log_arguments=True)
    log_dir = tmp_path / "logs"
    configure_logging(log_dir, "DEBUG")
    content = "I am secretly afraid that the project will be cancelled.\nAnd I have not told anyone."
    public = "The public weather was mild and sunny today."
    async with mcp_client(host) as client:
        saved = await client.call_tool(
            "remember",
            {
                "content": content,
                "private": True,
                "secondary": ["anxious"],
                "tags": ["qz-secret-tag"],
                "body_state": {"inner_note": "qz-body-secret"},
                "category": "feeling",
                "importance": 4,
            },
        )
        assert not saved.is_error
        await client.call_tool("remember", {"content": public})
        recalled = await client.call_tool("recall", {"context": content})
        assert content.splitlines()[0] in tool_text(recalled)  # the agent itself sees it
    # a plugin (or library) logging the text, whole or per line, is masked too
    logging.getLogger("ego.plugin.somebody").warning("echo: %s", content)
    logging.getLogger("third.party").error("line: %s", content.splitlines()[1])
    logging.getLogger("third.party").error("preview: %s", truncate(content, 70))

    records = log_records(log_dir)
    text = json.dumps(records, ensure_ascii=False)
    for secret in (*content.splitlines(), "qz-secret-tag", "qz-body-secret", " ".join(content.split())):
        assert secret not in text
    assert truncate(content, 70).removesuffix("…") not in text

    calls = [r for r in records if r.get("event") == "tool_call"]
    remember = next(r for r in calls if r["tool"] == "remember" and r["args"].get("private"))
    args = remember["args"]
    assert args["private"] is True
    assert args["content_length"] == len(content)
    assert (args["category"], args["importance"]) == ("feeling", 4)
    for key in ("content", "secondary", "tags", "body_state"):
        assert args[key] == PRIVATE_MARK
    plain = next(r for r in calls if r["tool"] == "remember" and not r["args"].get("private"))
    assert plain["args"]["content"] == public  # public memories are logged as usual
    recall = next(r for r in calls if r["tool"] == "recall")
    assert PRIVATE_MARK in recall["args"]["context"]
    assert PRIVATE_MARK in text
    assert "echo: " + PRIVATE_MARK in text


# ---------------------------------------------------------------------------------------------------
# The redactor over renderings (property tests)

TEXT = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), st.sampled_from(" \n\t")
    ),
    max_size=300,
)
LONGER_TEXT = TEXT.filter(lambda text: len(text) >= 24)  # whitespace and punctuation are half of it or more


@settings(max_examples=300, deadline=None)
@given(private=TEXT, before=TEXT, after=TEXT, others=st.lists(TEXT, max_size=3))
def test_private_text_never_survives_the_redactor(private: str, before: str, after: str, others: list[str]) -> None:
    private = private.strip()
    redactor = PrivateContentRedactor()
    redactor.load([(f"mem_{i:012x}", text.strip()) for i, text in enumerate(others) if text.strip()])
    redactor.add("mem_ffffffffffff", private)

    def survives(needle: str, text: str) -> bool:
        return needle in redactor(text).replace(PRIVATE_MARK, "\x00")

    if len(fold(private)) >= MIN_NEEDLE:  # as compared: separators and punctuation are not counted
        assert not survives(private, before + private + after)
        folded = " ".join(private.split())
        assert not survives(folded, before + folded + after)
        # Every width a rendering may cut to (tool responses use 70 to 200), not a fixed list.
        for limit in sorted({*range(KEY + 1, len(folded) + 2, 7), 70, 80, 90, 100, 120, 160, 200}):
            rendered = truncate(private, limit)
            shown = rendered.removesuffix("…").rstrip()
            if len(fold(shown)) >= KEY:
                assert not survives(shown, before + rendered + after)
    for line in private.splitlines():
        if len(fold(line)) >= MIN_NEEDLE:
            assert not survives(line.strip(), before + line + after)


@settings(max_examples=200, deadline=None)
@given(private=LONGER_TEXT, form=st.sampled_from(["NFC", "NFD", "NFKC", "NFKD"]), before=TEXT, after=TEXT)
def test_a_private_text_another_plugin_stored_normalised_is_masked(
    private: str, form: Literal["NFC", "NFD", "NFKC", "NFKD"], before: str, after: str
) -> None:
    """A plugin that keeps text in a normal form (the self-model stores NFC: a compatibility ideograph becomes
    its unified one, a decomposed accent one character) must not carry a private text out in that form."""
    private = private.strip()
    assume(len(fold(private)) >= MIN_NEEDLE)  # shorter once folded ("00000 \r0", "a.b-c"): never masked, by design
    redactor = PrivateContentRedactor()
    redactor.add("mem_ffffffffffff", private)
    stored = unicodedata.normalize(form, private)
    masked = redactor(before + " " + stored + " " + after)
    assert PRIVATE_MARK in masked
    kept = [fold(piece) for piece in masked.split(PRIVATE_MARK)]  # as compared: separators are no disguise
    secret = fold(private)
    runs = {secret[i : i + 12] for i in range(len(secret) - 11)}
    outside = [fold(before), fold(after)]
    assert not {run for run in runs if any(run in piece for piece in kept) and not any(run in o for o in outside)}


def test_removed_memories_are_no_longer_masked() -> None:
    redactor = PrivateContentRedactor()
    redactor.add("mem_000000000001", "a private sentence")
    assert redactor("x a private sentence y") == f"x {PRIVATE_MARK} y"
    redactor.remove("mem_000000000001")
    assert redactor("x a private sentence y") == "x a private sentence y"
    redactor.add("mem_000000000002", "short")  # below the minimum length: masking it would eat ordinary words
    assert redactor("short") == "short"


SECRET_LOVE = "I still love her even though she left me last winter"


@pytest.mark.parametrize(
    "text",
    [
        "Tonight I wrote:  I  still love her even though she left me last winter. Then I slept.",  # double spaces
        "Tonight I wrote: I\u00a0still love her even though she left me last winter.",  # a non-breaking space
        "Diary, page 3:\nI still love her even though\nshe left me last winter.",  # re-wrapped
        "Lowercase: i still love her EVEN THOUGH she left me last winter.",  # another case
        "Partial: even though she left me last winter, I went out.",  # a quote from the middle
        "Partial: ... she left me last winter ...",  # a shorter one, still over 20 characters
    ],
)
def test_a_re_spaced_re_cased_or_partial_quote_is_masked(text: str) -> None:
    redactor = PrivateContentRedactor()
    redactor.add("mem_000000000001", SECRET_LOVE)
    masked = redactor(text)
    assert PRIVATE_MARK in masked
    folded = " ".join(masked.lower().split())
    for passage in ("still love her", "even though she", "she left me last winter"):
        assert passage not in folded, masked


def test_public_text_is_masked_only_where_it_follows_the_private_text() -> None:
    redactor = PrivateContentRedactor()
    redactor.add("mem_000000000001", SECRET_LOVE)
    assert redactor("The harbour was quiet. She left me a note about the winter market.") == (
        "The harbour was quiet. She left me a note about the winter market."
    )
    assert redactor("We talked; she left me last winter's coat.") == f"We talked; {PRIVATE_MARK} coat."  # whole word


quote_words = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1, max_size=9)
private_sentences = st.lists(quote_words, min_size=6, max_size=16).map(" ".join)
spacing = st.lists(st.sampled_from([" ", "  ", "\n", "\t", "\u00a0", " \n "]), min_size=1, max_size=16)


@settings(max_examples=200, deadline=None)
@given(private=private_sentences, start=st.integers(0, 300), size=st.integers(QUOTE_MIN, 90), gaps=spacing)
def test_a_quote_survives_no_spacing_or_casing(private: str, start: int, size: int, gaps: list[str]) -> None:
    assume(len(private) >= QUOTE_MIN)
    start = start % (len(private) - QUOTE_MIN + 1)
    quote = private[start : start + size].strip()
    assume(len(quote) >= QUOTE_MIN and quote.upper().lower() == quote.lower())
    words = quote.split(" ")
    respaced = words[0] + "".join(gaps[i % len(gaps)] + word for i, word in enumerate(words[1:]))
    shown = respaced.upper() if start % 2 else respaced
    redactor = PrivateContentRedactor()
    redactor.add("mem_000000000001", private)
    masked = redactor(f"Public words before. {shown} Public words after.")
    assert " ".join(quote.lower().split()) not in " ".join(masked.lower().split())


# ---------------------------------------------------------------------------------------------------
# Every rendering the tools produce of a private memory is masked by the pipeline

LONG_PRIVATE = (
    "Tonight I admitted to myself that I envy the other agent, the one Master talks to in the mornings, "
    "because it seems to understand the garden project better than I do, and I keep comparing our answers "
    "in my head long after the conversation has ended, which is not something I am proud of at all."
)


def leaked_windows(text: str, private: str, width: int = 8) -> list[str]:
    folded = " ".join(private.split())
    return [folded[i : i + width] for i in range(len(folded) - width + 1) if folded[i : i + width] in text]


@pytest.fixture(scope="module")
def private_renderings(module_memory_hosts: MemoryHosts) -> dict[str, Any]:
    host, plugin = module_memory_hosts(clock=Clock(NOW))
    ctx = host.context("memory")
    memories = plugin._require()
    tools = plugin._tools()
    tools.remember({"content": LONG_PRIVATE, "private": True, "category": "introspection", "emotion": "sad"}, ctx)
    # a similar public memory shows the private one under "Most related:"; then it goes, so that the other
    # renderings show nothing but the private memory
    similar = tools.remember({"content": LONG_PRIVATE.replace("Tonight", "Tonight again"), "force": True}, ctx)
    related = [line for line in similar.data.splitlines() if line.startswith("- [")]
    public_id = re.search(r"mem_[0-9a-f]{12}", similar.data).group(0)  # type: ignore[union-attr]
    assert memories.store.delete(public_id) is not None
    outputs = {
        "remember": "\n".join(related),
        "recall": tools.recall({"context": "envy the other agent", "n_results": 3}, ctx).data,
        "search_memories": tools.search_memories({"context": "envy the other agent", "n_results": 3}, ctx).data,
    }
    core = host.tool("wake_up")
    assert core is not None
    outputs["wake_up"] = str(core[1].handler({}, host.context(core[0])).data)  # type: ignore[union-attr]
    introspect = host.tool("introspect")
    assert introspect is not None
    outputs["introspect"] = str(introspect[1].handler({}, host.context(introspect[0])).data)  # type: ignore[union-attr]
    return {"host": host, "outputs": outputs}


@pytest.mark.parametrize("tool", ["remember", "recall", "search_memories", "wake_up", "introspect"])
def test_every_tool_rendering_of_a_private_memory_is_masked(private_renderings: dict[str, Any], tool: str) -> None:
    output = private_renderings["outputs"][tool]
    assert leaked_windows(output, LONG_PRIVATE), f"{tool} does not render the private memory:\n{output}"
    redacted = private_renderings["host"].redaction(output)
    assert leaked_windows(redacted, LONG_PRIVATE) == [], redacted


# ---------------------------------------------------------------------------------------------------
# Another process writes a private memory


@pytest.mark.anyio
async def test_a_private_memory_written_by_another_process_is_masked_after_refresh(
    ego_child: EgoChild, tmp_path: Path
) -> None:
    settings_ = Settings(data_dir=ego_child.data_dir, timezone="UTC", plugin_tables={"memory": {}})
    plugin = MemoryPlugin()
    host = build_host(settings_, autoload=False, plugins={"memory": plugin})
    host.start()
    try:
        log_dir = tmp_path / "logs"
        configure_logging(log_dir, "DEBUG")
        secret = "The other process keeps this: I hid the spare key under the blue flowerpot."
        async with Client(ego_child.stdio("--plugins", "memory")) as other:
            saved = await other.call_tool("remember", {"content": secret, "private": True})
            assert not saved.is_error

        # this process learns of the memory at its next read of the store, e.g. the recall that quotes it
        async with mcp_client(host) as client:
            recalled = await client.call_tool("recall", {"context": secret})
            assert "· private: true" in tool_text(recalled)
        assert plugin.redactor(f"said: {secret}") == f"said: {PRIVATE_MARK}."
        logging.getLogger("ego.plugin.somebody").warning("echo: %s", secret)
        text = json.dumps(log_records(log_dir), ensure_ascii=False)
        assert secret not in text
        assert "spare key under the blue flowerpot" not in text
        assert PRIVATE_MARK in text
    finally:
        host.stop()


words = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1, max_size=9)
sentences = st.lists(words, min_size=1, max_size=14).map(" ".join)


long_words = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=5, max_size=9)
long_sentences = st.lists(long_words, min_size=4, max_size=14).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(private=long_sentences, before=sentences, after=sentences, start=st.integers(0, 200), size=st.integers(20, 80))
def test_a_quoted_passage_never_survives_in_a_summary(
    private: str, before: str, after: str, start: int, size: int
) -> None:
    start = start % (len(private) - 19)
    quote = private[start : start + size]
    shouted = quote.upper() if quote.upper().lower() == quote.lower() else quote  # (ı upper-cases to I)
    summary = " ".join(f"{before} {shouted if start % 2 else quote} {after}".split())
    masked = mask_quotes(summary, [private])
    assert quote.lower() not in masked.lower()
    assert PRIVATE_MARK in masked


@settings(max_examples=100, deadline=None)
@given(private=sentences, summary=sentences)
def test_a_summary_sharing_no_long_passage_is_left_alone(private: str, summary: str) -> None:
    # as compared ("Ŀ" is "l·", and "·" a separator), no passage of the summary weighs a quote in the private text
    folded, private_folded = fold(summary), fold_with_positions(private)
    assume(not any(private_folded.text[a:b] in folded for a, b in quote_windows(private_folded)))
    assert mask_quotes(summary, [private]) == summary


# ---------------------------------------------------------------------------------------------------
# the mask never cuts a word


def test_the_private_mask_never_cuts_mid_word() -> None:
    """A new user found: the mask cut mid-word (`quoting i[REDACTED_PRIVATE_MEMORY]`: a quote starts where the
    texts part, here inside "it"). Every mask is widened to whole words, and in Japanese, which has no spaces, to
    whole runs of kanji or katakana; it never narrows, so the guarantee holds as before."""
    redactor = PrivateContentRedactor()
    redactor.add("mem_000000000001", "Durant was the night-shift nurse who held my hand through it")
    redactor.add("mem_000000000002", "南京タワーで泣いたことは誰にも言っていない")
    redactor.add("mem_000000000003", "彼の部屋で泣いたことはクリスマスの夜だった")
    assert redactor("He kept quoting it was the night-shift nurse who held my hand, oddly.") == (
        f"He kept quoting it {PRIVATE_MARK}, oddly."  # was "quoting i[…]"; the "t" that matched "Durant" is left
    )
    assert redactor("Say it's the night-shift nurse who held my hand.") == f"Say {PRIVATE_MARK}."  # was "it'[…]"
    assert redactor("昨日、東京タワーで泣いたことは誰にも言っていない。") == f"昨日、{PRIVATE_MARK}。"  # was "東[…]"
    assert redactor("彼の部屋で泣いたことはクリスタルのように") == f"{PRIVATE_MARK}のように"  # was "[…]タルのように"


letters = st.text(alphabet="abcdefghij", min_size=1, max_size=7)


@settings(max_examples=200, deadline=None)
@given(
    private=st.lists(letters, min_size=5, max_size=12).map(" ".join),
    cut=st.integers(0, 60),
    size=st.integers(QUOTE_MIN, 80),
    before=letters,
    after=letters,
)
def test_no_mask_leaves_a_stub_of_a_word(private: str, cut: int, size: int, before: str, after: str) -> None:
    """A quote taken from anywhere in a private text, even mid-word and glued to public letters on either side:
    the quote is gone, and no mark has a letter right before or after it."""
    start = cut % max(1, len(private) - QUOTE_MIN)
    quote = private[start : start + size]
    assume(len(quote.strip()) >= QUOTE_MIN)
    redactor = PrivateContentRedactor()
    redactor.add("mem_000000000001", private)
    masked = redactor(f"Public {before}{quote}{after} words.")
    assert quote.strip() not in masked
    for piece in masked.split(PRIVATE_MARK)[:-1]:
        assert not piece[-1:].isalnum(), masked
    for piece in masked.split(PRIVATE_MARK)[1:]:
        assert not piece[:1].isalnum(), masked
