"""truncate counts columns: a full-width (CJK) character 2, a Latin one 1; a cut never splits a grapheme, prefers
to end a Japanese quote after 。、, and says so with "…"."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ego_core import WORD_CUT_LEAST, estimate_tokens, truncate, word_break
from ego_core.responses import graphemes, text_width

DIARY = "今日の会話は楽しかった。Masterから多くのことを学んだ。"
THOUGHT = (
    "会話が生き生きと感じられるのは何故だろう、とずっと考えている。今日のご主人様は疲れて見えた。"
    "もっと聞いて、質問は減らすべきだったのかもしれない。"
)


def test_latin_text_is_cut_as_before() -> None:
    assert truncate("  a short\nthought  ", 90) == "a short thought"
    assert truncate("x" * 90, 90) == "x" * 90
    assert truncate("x" * 91, 90) == "x" * 89 + "…"
    assert truncate("word " * 40, 20) == "word word word word…"
    assert truncate("Caf\u00e9 au lait\u2028next line", 40) == "Caf\u00e9 au lait next line"


def test_a_cjk_character_counts_two_columns() -> None:
    assert text_width("会話") == 4
    assert text_width("ｶﾀｶﾅ") == 4  # half-width katakana are narrow
    assert truncate("会話" * 22 + "会", 90) == "会話" * 22 + "会"  # 45 characters, 90 columns: fits
    assert truncate("あ" * 46, 90) == "あ" * 44 + "…"  # 88 columns and the ellipsis
    assert truncate("あいうえお", 6) == "あい…"


def test_a_japanese_quote_prefers_to_end_after_a_clause() -> None:
    assert truncate(THOUGHT, 90) == "会話が生き生きと感じられるのは何故だろう、とずっと考えている。…"
    assert truncate(THOUGHT, 60) == "会話が生き生きと感じられるのは何故だろう、…"
    # no clause end in the last third: cut between characters, no space needed
    assert truncate(THOUGHT, 30) == "会話が生き生きと感じられるの…"
    assert truncate(DIARY, 30) == "今日の会話は楽しかった。…"
    assert truncate(DIARY, 100) == DIARY


def test_mixed_text_and_full_width_spaces() -> None:
    assert truncate("ご主人様と　夕焼けを見た。\n空が紫色だった。", 80) == "ご主人様と　夕焼けを見た。 空が紫色だった。"
    assert truncate("\u3000字下げ\u3000", 20) == "字下げ"
    assert truncate("Master said 「また明日」 and left", 26) == "Master said 「また明日」…"
    assert truncate("Master said 「また明日」 and left", 24) == "Master said 「また明日…"


def test_a_cut_never_splits_a_grapheme() -> None:
    family = "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
    assert graphemes(family + "\U0001f1ef\U0001f1f5" + "e\u0301" + "\U0001f44d\U0001f3fd") == [
        family,
        "\U0001f1ef\U0001f1f5",
        "e\u0301",
        "\U0001f44d\U0001f3fd",
    ]
    assert truncate("ab" + family + "cd", 4) == "ab…"
    assert truncate("ab" + family + "cd", 5, tokens=10) == "ab" + family + "…"
    assert truncate("ab" + family + "cd", 5) == "ab…"  # its seven code points cost seven tokens
    assert truncate("か\u3099か\u3099か\u3099", 5) == "か\u3099か\u3099…"  # NFD ga: kana + combining dakuten
    assert truncate("\u1100\u1161\u11a8\u1100\u1161\u11a8", 3) == "\u1100\u1161\u11a8…"  # Hangul jamo syllables


def test_the_wide_weight_bounds_tokens_where_asked() -> None:
    assert truncate("あ" * 40, 90, wide=4) == "あ" * 22 + "…"
    assert truncate("x" * 100, 90, wide=4) == "x" * 89 + "…"


def test_text_dear_in_tokens_is_cut_to_the_tokens() -> None:
    """Decomposed accents and emoji sequences are narrow but cost a token per code point: a quote of them is cut
    to its tokens as well as to its columns (wake_up's thought in 80 columns once cost 160 tokens)."""
    decomposed = "内省。" + "e\u0301" * 80
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
    for text in (decomposed, "内省。" + family * 20):
        for limit, wide in ((80, 4), (72, 2)):
            quoted = truncate(text, limit, wide=wide)
            assert quoted.endswith("…")
            assert estimate_tokens(quoted) <= limit
            assert text.startswith(quoted[:-1])
    assert estimate_tokens(truncate(decomposed, 80, tokens=30)) <= 30
    assert truncate("今日は晴れ。", 80, tokens=30) == "今日は晴れ。"  # within both: whole


def test_a_pile_of_combining_marks_is_bounded() -> None:
    zalgo = "a" + "\u0301" * 500
    assert len(truncate(zalgo + " b", 10)) <= 40


def _reference_width(text: str) -> int:
    """An independent upper bound: every code point that is not a mark or format character, wide ones twice."""
    return sum(
        2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
        if unicodedata.category(c) not in ("Mn", "Me", "Cf")
    )


JAPANESE = st.sampled_from(["今日", "は", "、", "。", "マスター", "と", "映画", "を見た", "　", " ", "\n", "「", "」"])
ODD = st.sampled_from(
    [
        "\U0001f469\u200d\U0001f467",
        "\U0001f1ef\U0001f1f5",
        "e\u0301",
        "か\u3099",
        "\U0001f44d\U0001f3fd",
        "\u2764\ufe0f",
        "\u1100\u1161\u11a8",
        "Master",
        "ｶﾞ",
    ]
)
TEXT = st.lists(st.one_of(JAPANESE, ODD, st.text(st.characters(exclude_categories=["Cs"]), max_size=6))).map("".join)


def _cost(text: str, wide: int) -> int:
    """Columns with a wide grapheme counted ``wide`` (an independent tally of the wide ones)."""
    pieces = graphemes(text)
    return text_width(text) + (wide - 2) * sum(
        1 for g in pieces if any(unicodedata.east_asian_width(c) in "WF" for c in g)
    )


@given(TEXT, st.integers(1, 120), st.sampled_from([2, 4]))
def test_truncate_stays_within_its_limit_and_keeps_graphemes(text: str, limit: int, wide: int) -> None:
    short = truncate(text, limit, wide=wide)
    flat = re.sub(r"[^\S\u3000]+", " ", text).strip()  # line breaks and spaces folded, U+3000 kept
    assert "\n" not in short
    assert estimate_tokens(short) <= limit  # a column limit bounds the tokens too
    if short == flat:
        assert _cost(flat, wide) <= limit
        return
    assert short.endswith("…")
    kept = short[:-1]
    assert flat.startswith(kept)
    assert "".join(graphemes(flat)[: len(graphemes(kept))]) == kept, "the cut falls between graphemes"
    assert _cost(kept, wide) + 1 <= limit


@given(st.text(JAPANESE.map(str), max_size=0) | st.lists(JAPANESE, min_size=1, max_size=60).map("".join))
def test_japanese_never_exceeds_its_width(text: str) -> None:
    for limit in (10, 30, 70, 90):
        short = truncate(text, limit)
        assert text_width(short) <= limit
        assert _reference_width(short) <= limit


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_tiny_limits(limit: int) -> None:
    assert text_width(truncate("日本語の文章", limit)) <= limit


WORDS = st.sampled_from(
    [
        "マスター",
        "システム",
        "エッセイ",
        "と",
        "は",
        "の",
        "を",
        "が",
        "に",
        "一緒",
        "設計",
        "今日",
        "話した",
        "考えていた",
        "だろう",
        "、",
        "。",
        "「",
        "」",
        "Rust",
        " ",
        "3",
        "時",
    ]
)
JAPANESE_TEXT = st.lists(WORDS, min_size=1, max_size=40).map("".join)


def _breaks(text: str) -> list[int]:
    return [at for at in range(1, len(text)) if word_break(text, at)]


@given(JAPANESE_TEXT, st.integers(6, 40), st.integers(1, 200))
def test_a_japanese_cut_falls_between_words_keeps_ten_characters_and_its_tokens(
    text: str, tokens: int, limit: int
) -> None:
    """Cut in tokens: never inside a katakana word or between the kana of one run when a word break keeps ten
    characters within the budget; ten characters or more whenever the budget holds them; never over the tokens."""
    text = " ".join(text.split())  # as truncate folds it
    short = truncate(text, limit, tokens=tokens)
    assert estimate_tokens(short) <= min(tokens, limit)
    if not short.endswith("…") or short == text:
        return
    kept = short[:-1].rstrip()
    assert text.startswith(kept)
    longest = max(
        at
        for at in range(len(text) + 1)
        if text_width(text[:at]) + 1 <= limit and estimate_tokens(text[:at]) + 1 <= min(tokens, limit)
    )
    if longest >= WORD_CUT_LEAST:
        assert len(kept) >= WORD_CUT_LEAST, (short, text)
    end = len(kept)
    if not word_break(text, end):
        assert not any(WORD_CUT_LEAST <= at <= longest for at in _breaks(text)), (short, text)


@given(JAPANESE_TEXT)
def test_a_word_break_is_never_inside_a_katakana_word_or_a_kana_run(text: str) -> None:
    for at in range(1, len(text)):
        before, after = text[at - 1], text[at]
        if word_break(text, at):
            assert not ("ァ" <= before <= "ヺ" or before == "ー") or not ("ァ" <= after <= "ヺ" or after == "ー")
            assert not ("ぁ" <= before <= "ゖ" and "ぁ" <= after <= "ゖ")


def test_japanese_cuts_at_words_and_english_as_before() -> None:
    assert truncate("今日、マスターが新しいシステムについて話した。", 40, tokens=12) == "今日、マスターが新しい…"
    assert truncate("私たちのシステムは似ている。人の記憶は", 40, tokens=14) == "私たちのシステムは似ている…"
    assert truncate("マスターと一緒に映画を見た。とても楽しかった", 40, tokens=12) == "マスターと一緒に映画を…"
    # no word break keeps ten characters: the longest cut, not a stub of five
    assert truncate("マスターと初めて喧嘩してしまった。", 40, tokens=14) == "マスターと初めて喧嘩してし…"
    assert (
        truncate("We watched the storm roll in over the harbour.", 36, tokens=14)
        == "We watched the storm roll in over t…"
    )
    assert word_break("マスターと話した", 5)
    assert not word_break("マスターと話した", 2)
    assert word_break("今日はシステム", 3)
    assert not word_break("システムは", 4, start=True)
    assert word_break("システムは", 4)
    assert not word_break("話した", 1)
