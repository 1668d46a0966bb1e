"""A private text keeps its fingerprint when it is rewritten: as a slug, a file name or dotted, with other
punctuation, case or width, kana for katakana, or quoted in a short passage mixing scripts. The redactor
compares texts with every separator dropped, so each rendering is masked, and a text that only shares common
words with a private memory is left alone."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ego_core import PRIVATE_MARK
from ego_memory.text.privacy import (
    QUOTE_MIN,
    QUOTE_MIN_WIDE,
    SEED,
    PrivateContentRedactor,
    fold,
    fold_with_positions,
    mask_quotes,
    quote_windows,
)

DIARY = "privzebra4471 my hidden diary entry: I buried the letter under the old cedar tree"
CANARY = "昨夜、庭で秘密のカナリアKANARIA7788を見つけたことは誰にも言わない"
TEA = "母が倒れた日のことを、まだ誰にも話していない。"


@pytest.fixture
def redactor() -> PrivateContentRedactor:
    redactor = PrivateContentRedactor()
    redactor.load([("mem_000000000001", DIARY), ("mem_000000000002", CANARY), ("mem_000000000003", TEA)])
    return redactor


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the very form shared_append asks a dedupe_key to take
        ("privzebra4471-my-hidden-diary-entry-i-buried-the-lett", PRIVATE_MARK),
        ("fact:privzebra4471-my-hidden-diary-entry", f"fact:{PRIVATE_MARK}"),
        ("Note: my-hidden-diary-entry-i-buried-the-letter-under-the-old-cedar-tree.", f"Note: {PRIVATE_MARK}."),
        ("file my_hidden_diary_entry_i_buried_the_letter.md here", f"file {PRIVATE_MARK}.md here"),
        ("see my.hidden.diary.entry.i.buried.the.letter, please", f"see {PRIVATE_MARK}, please"),
        ("path notes/i/buried/the/letter/under/the/old/cedar done", f"path notes/{PRIVATE_MARK} done"),
        ("MyHiddenDiaryEntry IBuriedTheLetterUnderTheOldCedar!", f"{PRIVATE_MARK}!"),
        ("ｍｙ ｈｉｄｄｅｎ ｄｉａｒｙ ｅｎｔｒｙ ｉ ｂｕｒｉｅｄ", PRIVATE_MARK),  # full-width Latin
        ("my\u200bhidden\u00addiary entry i buried the letter", PRIVATE_MARK),  # invisible separators
        # an 18-character quote mixing scripts, from a private memory that holds it
        ("秘密のカナリアKANARIA7788", PRIVATE_MARK),
        ("共有: 秘密のカナリアKANARIA7788 (確認済み)", f"共有: {PRIVATE_MARK} (確認済み)"),
        ("秘密の・カナリア・kanaria-7788", PRIVATE_MARK),
        ("秘密のｶﾅﾘｱKANARIA7788", PRIVATE_MARK),  # half-width katakana
        ("秘密のかなりあKANARIA7788", PRIVATE_MARK),  # the same word in hiragana
        # Japanese punctuation and brackets dropped, or moved
        ("「母が倒れた日のこと」を、まだ。誰にも。", f"「{PRIVATE_MARK}。"),
        ("母・が・倒・れ・た・日・の・こ・と", PRIVATE_MARK),
    ],
)
def test_every_rendering_of_a_private_text_is_masked(
    redactor: PrivateContentRedactor, text: str, expected: str
) -> None:
    assert redactor(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "My diary has a hidden page about the garden.",  # common words, another order
        "The letter is under the cedar by the gate.",
        "the-old-cedar-tree",  # a short passage: a few ordinary words
        "KANARIA is a bird; 7788 is a number.",
        "カナリアが鳴いた。",
        "秘密の話をしよう",
        "昨夜、庭で花火をした。",  # shares its opening phrase, then parts
        "まだ誰にも言っていない。",  # a few characters in common with each of two
        "privzebra",
    ],
)
def test_text_sharing_only_common_words_is_left_alone(redactor: PrivateContentRedactor, text: str) -> None:
    assert redactor(text) == text


def test_the_quote_threshold_weighs_each_script() -> None:
    """Eight Japanese characters are a quote, as twenty letters are; seven are not, nor nineteen letters; a mixed
    passage adds up (seven kana and kanji and eleven letters and digits: 18 characters)."""
    redactor = PrivateContentRedactor()
    redactor.add("mem_000000000001", "夕方、川沿いで秘密のカナリアを放したqwertyuiopasdfghjklzxcv")
    assert redactor("放した秘密のカナリア") == "放した秘密のカナリア"
    assert redactor("秘密のカナリアを放") == PRIVATE_MARK  # 8 wide
    assert redactor("秘密のカナリア") == "秘密のカナリア"  # 7 wide
    assert redactor("x qwertyuiopasdfghjklz y") == f"x {PRIVATE_MARK} y"  # 20 letters
    assert redactor("x qwertyuiopasdfghjkl y") == "x qwertyuiopasdfghjkl y"  # 19
    assert QUOTE_MIN / QUOTE_MIN_WIDE == 2.5
    assert redactor("放したqwertyuiopasd") == PRIVATE_MARK  # 3 wide and 13 letters: 20.5
    assert redactor("放したqwertyuiopas") == "放したqwertyuiopas"  # 19.5


def test_an_episode_summary_quoting_a_slug_is_masked() -> None:
    summary = "We talked; the key was my-hidden-diary-entry-i-buried-the-letter, then tea."
    assert mask_quotes(summary, [DIARY]) == f"We talked; the key was {PRIVATE_MARK}, then tea."


def test_the_mask_covers_the_original_span_separators_included() -> None:
    folded = fold_with_positions("a-B_c ｄ・ｅ")
    assert folded.text == "abcde"
    assert folded.positions == [0, 2, 4, 6, 8]
    assert folded.gaps == [False, True, True, True, True, False]
    assert fold("ｶﾅﾘｱ・カナリア") == "かなりあかなりあ"


# ---------------------------------------------------------------------------------------------------
# Property: any private text re-rendered with other separators, case and width is masked

LATIN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=3, max_size=9)
KANA = "あいうえおかきくけこさしすせそアイウエオカキクケコサシスセソ"
JAPANESE = st.text(alphabet=KANA + "秘密日記庭夜手紙", min_size=2, max_size=5)
SEPARATORS = [*" -_./・、。「」|~:", "\u200b", "\u00ad", "  ", "\n", ", "]
PUBLIC = st.lists(st.sampled_from("sky river kettle lantern 窓 お茶 bread".split()), max_size=5).map(" ".join)
HALF_WIDTH = {
    unicodedata.normalize("NFKC", chr(code)): chr(code)
    for code in range(0xFF66, 0xFF9E)
    if len(unicodedata.normalize("NFKC", chr(code))) == 1
}


def letters(text: str) -> str:
    """The letters and digits of ``text`` (NFKC, lower case, katakana as hiragana): what a reader still reads
    through any separators, independently of the redactor's own fold."""
    kept = (c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())
    return "".join(chr(ord(c) - 0x60) if "ァ" <= c <= "ヶ" else c for c in kept)


def rerender(words: list[str], gaps: list[str], styles: list[int]) -> str:
    """``words`` joined with ``gaps`` (in turn), each character in one of four styles: as is, upper case,
    full-width (Latin) or half-width (katakana), hiragana for katakana."""
    out: list[str] = []
    for number, word in enumerate(words):
        if number:
            out.append(gaps[number % len(gaps)])
        for index, char in enumerate(word):
            style = styles[(number + index) % len(styles)]
            shown = char
            if style == 1:
                shown = char.upper()
            elif style == 2 and char.isascii():
                shown = chr(ord(char) + 0xFEE0)
            elif style == 2:
                shown = HALF_WIDTH.get(char, char)
            elif style == 3 and "ァ" <= char <= "ヶ":
                shown = chr(ord(char) - 0x60)
            out.append(shown)
    return "".join(out)


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.one_of(LATIN, JAPANESE), min_size=4, max_size=10),
    gaps=st.lists(st.sampled_from(SEPARATORS), min_size=1, max_size=6),
    styles=st.lists(st.integers(0, 3), min_size=1, max_size=8),
    before=PUBLIC,
    after=PUBLIC,
)
def test_a_rerendered_private_text_is_masked(
    words: list[str], gaps: list[str], styles: list[int], before: str, after: str
) -> None:
    private = " ".join(words)
    redactor = PrivateContentRedactor()
    redactor.add("mem_000000000001", private)
    shown = rerender(words, gaps, styles)
    masked = redactor(f"{before} {shown} {after}")
    assert PRIVATE_MARK in masked
    secret = letters(private)
    outside = letters(before) + "\x00" + letters(after)
    kept = [letters(piece) for piece in masked.split(PRIVATE_MARK)]
    runs = {secret[i : i + 8] for i in range(len(secret) - 7)}
    assert not [run for run in runs if any(run in piece for piece in kept) and run not in outside], masked


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.one_of(LATIN, JAPANESE, st.sampled_from([*"秘密日記a1"])), min_size=1, max_size=16),
    gaps=st.lists(st.sampled_from(SEPARATORS), min_size=1, max_size=6),
)
def test_quote_windows_are_the_shortest_passages_weighing_a_quote(words: list[str], gaps: list[str]) -> None:
    """From each place, the index holds the shortest passage weighing ``QUOTE_MIN`` (gaps counted), never shorter
    than a seed: the lookup passes over every place whose next ``SEED`` characters open no window."""
    folded = fold_with_positions(rerender(words, gaps, [0]))
    windows = list(quote_windows(folded))
    for start, end in windows:
        assert end - start >= SEED
        assert folded.weight(start, end) >= QUOTE_MIN > folded.weight(start, end - 1)
    # every place that starts a passage weighing a quote starts a window
    heavy = [start for start in range(len(folded.text)) if folded.weight(start, len(folded.text)) >= QUOTE_MIN]
    assert [start for start, _end in windows] == heavy
