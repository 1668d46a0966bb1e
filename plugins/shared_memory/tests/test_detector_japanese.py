"""Japanese is read as English is: numbers in kanji or full-width digits and groups apart by Japanese separators,
e-mail signs spelt out, My Numbers by their check digit, block numbers in kanji, passwords after Japanese words.

Hypothesis renders valid cards, My Numbers, phone numbers and e-mail addresses with random separators, numeral
scripts (ASCII, full-width, kanji: per digit) and widths, and every rendering must be found and masked whole. Real
Japanese prose (the JGLUE and Tanaka passages committed under bench/data/ja) is flagged at most 1 % of the time,
and the rules added for Japanese stay linear in time."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_detector_linear import SIZE, calls_made, check_within_budget, repeated

from ego_shared_memory.detector import (
    ADDRESS,
    CARD,
    EMAIL,
    MY_NUMBER,
    PASSWORD,
    PHONE,
    find_sensitive,
    kinds_in,
    luhn_valid,
    my_number_valid,
    normalise,
    redact_sensitive,
)

KANJI = "〇一二三四五六七八九"
FULL_WIDTH = "０１２３４５６７８９"
PROSE = Path(__file__).resolve().parents[3] / "bench" / "data" / "ja"
FLAGGED_MAX = 0.01


def render_digit(digit: str, script: str) -> str:
    if script == "kanji":
        return KANJI[int(digit)]
    if script == "full-width":
        return FULL_WIDTH[int(digit)]
    return digit


@st.composite
def rendered(draw: st.DrawFn, groups: list[str], separators: tuple[str, ...], *, one_separator: bool = False) -> str:
    """``groups`` of digits, each digit in a script of its own, the groups apart by one of ``separators`` each (or
    all by the same one)."""
    scripts = st.sampled_from(("ascii", "full-width", "kanji"))
    same = draw(st.sampled_from(separators))
    pieces: list[str] = []
    for index, group in enumerate(groups):
        if index:
            pieces.append(same if one_separator else draw(st.sampled_from(separators)))
        pieces.append("".join(render_digit(digit, draw(scripts)) for digit in group))
    return "".join(pieces)


def split(number: str, sizes: tuple[int, ...]) -> list[str]:
    groups, position = [], 0
    for size in sizes:
        groups.append(number[position : position + size])
        position += size
    return groups


CARD_SEPARATORS = (" ", "-", "－", "ー", "・", "、", "，", "の", "/", "\u3000", ".", "")
"""Between the groups of a card number, a My Number after a word for it, a phone number."""
PLAIN_SEPARATORS = (" ", "-", "－", "ー", "・", "、", "，", "の", "\u3000", "")
"""How a My Number is written without a word for it nearby: in fours, all apart the same way, or together (``.``
and ``/`` read as versions and dates then)."""


def complete_luhn(prefix: str) -> str:
    return next(prefix + check for check in string.digits if luhn_valid(prefix + check))


def complete_my_number(base: str) -> str:
    return next(base + check for check in string.digits if my_number_valid(base + check))


def digits(low: int, high: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=string.digits, min_size=low, max_size=high)


cards = st.builds(lambda first, rest: complete_luhn(first + rest), st.sampled_from("3456"), digits(14, 14))
my_numbers = st.builds(complete_my_number, digits(11, 11))
mobiles = st.builds(lambda prefix, rest: prefix + rest, st.sampled_from(("090", "080", "070")), digits(8, 8))
landlines = st.builds(lambda area, rest: "0" + area + rest, st.sampled_from("3456"), digits(8, 8))


def assert_found_whole(text: str, kind: str, value: str) -> None:
    assert kind in kinds_in(text), (text, kinds_in(text))
    redacted, kinds = redact_sensitive(text)
    assert kind in kinds
    assert value not in redacted, (text, redacted)
    assert find_sensitive(redacted) == []


@settings(max_examples=300, deadline=None)
@given(data=st.data(), number=cards)
def test_a_card_number_is_found_in_any_script_and_with_any_separator(data: st.DataObject, number: str) -> None:
    value = data.draw(rendered(split(number, (4, 4, 4, 4)), CARD_SEPARATORS))
    assert_found_whole(f"カード番号は{value}です", CARD, value)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), number=my_numbers)
def test_a_my_number_is_found_in_any_script_and_with_any_separator(data: st.DataObject, number: str) -> None:
    cued = data.draw(rendered(split(number, (4, 4, 4)), CARD_SEPARATORS))
    assert_found_whole(f"マイナンバーは{cued}です", MY_NUMBER, cued)
    assume(not re.fullmatch(r"(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:[01]\d|2[0-3])[0-5]\d", number))
    assume(not all(re.fullmatch(r"(?:19|20)\d\d", group) for group in split(number, (4, 4, 4))))
    plain = data.draw(rendered(split(number, (4, 4, 4)), PLAIN_SEPARATORS, one_separator=True))
    assert_found_whole(f"届け出た番号は{plain}です", MY_NUMBER, plain)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), mobile=mobiles, landline=landlines)
def test_a_phone_number_is_found_in_any_script_and_with_any_separator(
    data: st.DataObject, mobile: str, landline: str
) -> None:
    separators = tuple(s for s in CARD_SEPARATORS if s not in "/.")
    value = data.draw(rendered(split(mobile, (3, 4, 4)), separators))
    assert_found_whole(f"Masterの携帯は{value}です", PHONE, value)
    value = data.draw(rendered(split(landline, (2, 4, 4)), separators))
    assert_found_whole(f"電話は{value}まで", PHONE, value)
    spaced = data.draw(rendered(list(mobile), (" ", "・", "-")))
    assert_found_whole(f"{spaced} に連絡", PHONE, spaced)


def wide(text: str, flags: list[bool]) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if flag and "!" <= c <= "~" else c for c, flag in zip(text, flags, strict=True))


AT_SIGNS = ("@", "＠", " アットマーク ", "アットマーク", " at ", " [at] ", "(at)", "★", "（アット）", " あっとまーく ")
DOT_SIGNS = (".", "．", "。", " ドット ", "ドット", " dot ", " [dot] ", "(dot)", " どっと ")


@settings(max_examples=300, deadline=None)
@given(
    local=st.text(alphabet=string.ascii_lowercase + string.digits, min_size=2, max_size=12),
    host=st.text(alphabet=string.ascii_lowercase, min_size=2, max_size=10),
    tld=st.sampled_from((("com",), ("co", "jp"), ("ne", "jp"), ("io",))),
    at=st.sampled_from(AT_SIGNS),
    data=st.data(),
)
def test_an_e_mail_address_is_found_with_its_signs_written_any_way(
    local: str, host: str, tld: tuple[str, ...], at: str, data: st.DataObject
) -> None:
    assume(local != "git" and host != "example")
    dots = [data.draw(st.sampled_from(DOT_SIGNS)) for _ in tld]
    if at == " at ":
        assume(any(dot not in (".", "．") for dot in dots))  # "works at google.com" is a sentence
    value = local + at + host + "".join(dot + part for dot, part in zip(dots, tld, strict=True))
    value = wide(value, data.draw(st.lists(st.booleans(), min_size=len(value), max_size=len(value)))).strip()
    assert_found_whole(f"連絡先は {value} です", EMAIL, value)


def test_the_my_number_check_digit_is_the_official_one() -> None:
    assert my_number_valid("123456789018")  # the example the check-digit rule is usually shown with
    assert not my_number_valid("123456789013")
    assert not my_number_valid("12345678901")
    assert not my_number_valid("12345678901x")


@given(base=digits(11, 11))
def test_every_base_has_exactly_one_check_digit(base: str) -> None:
    assert sum(my_number_valid(base + check) for check in string.digits) == 1


@settings(max_examples=300)
@given(number=digits(12, 12))
def test_twelve_digits_are_a_my_number_by_their_check_digit_or_a_word_for_it(number: str) -> None:
    assume(number[0] != "0")  # a national phone number starts with 0
    assume(not re.fullmatch(r"(?:19|20)\d{10}", number))  # a date and time (202602021530) is left alone
    assume(not luhn_valid(number))
    assert (MY_NUMBER in kinds_in(f"番号 {number} を控えた")) == my_number_valid(number)
    assert MY_NUMBER in kinds_in(f"マイナンバーは {number} です")
    assert MY_NUMBER in kinds_in(f"個人番号：{number}")


@pytest.mark.parametrize(
    ("written", "reads"),
    [
        ("〇九〇－一二三四－五六七八", "090-1234-5678"),
        ("090の1234の5678", "090-1234-5678"),
        ("4111・1111、1111，1111", "4111-1111-1111-1111"),
        ("西新宿二丁目八番一号", "西新宿2丁目8番1号"),
        ("二丁目十五番", "2丁目15番"),
        ("百二十番地の三", "120番地の三"),
        ("二〇二六年", "2026年"),
        ("マイナンバー：一二三四 五六七八 九〇一八", "マイナンバー:1234 5678 9018"),
        ("ﾊﾟｽﾜｰﾄﾞ", "パスワード"),
        # words with kanji numerals stay words; a thousands separator stays a comma
        ("六本木6-10-1", "六本木6-10-1"),
        ("統一された", "統一された"),
        ("一番好き", "一番好き"),
        ("千代田区三番町", "千代田区三番町"),
        ("１２，３４５円", "12,345円"),
    ],
)
def test_numbers_read_as_ascii_digits(written: str, reads: str) -> None:
    view = normalise(written)
    assert view.text == reads
    assert view.origin is not None
    assert len(view.origin) == len(view.text)
    assert view.origin == sorted(view.origin)


@given(number=st.integers(1, 9999))
def test_kanji_numbers_with_units_read_as_their_value(number: int) -> None:
    def kanji(value: int) -> str:
        out = ""
        for unit, char in ((1000, "千"), (100, "百"), (10, "十")):
            count, value = divmod(value, unit)
            if count:
                out += ("" if count == 1 else KANJI[count]) + char
        return out + (KANJI[value] if value else "")

    assert normalise(f"二丁目{kanji(number)}番").text == f"2丁目{number}番"


def test_findings_in_kanji_point_at_the_kanji() -> None:
    text = "電話は〇九〇－一二三四－五六七八、住所は東京都新宿区西新宿二丁目八番一号です"
    spans = {finding.kind: text[finding.start : finding.end] for finding in find_sensitive(text)}
    assert spans == {PHONE: "〇九〇－一二三四－五六七八", ADDRESS: "東京都新宿区西新宿二丁目八番一号"}


def test_a_password_after_pasu_is_one_and_a_path_is_not() -> None:
    assert kinds_in("パスは hunter22") == [PASSWORD]
    assert kinds_in("パスは src/main.py") == []
    assert kinds_in("パスは ~/.local/bin") == []
    assert kinds_in("キャンパスはA2棟") == []


# --------------------------------------------------------------------------------------------------
# Real Japanese prose


def passages() -> dict[str, list[str]]:
    """The committed passages: JSQuAD paragraphs, JSTS/JNLI sentences, Tanaka sentences."""
    jsquad = json.loads((PROSE / "jsquad.json").read_text("utf-8"))
    pairs = json.loads((PROSE / "pairs.json").read_text("utf-8"))
    tanaka = json.loads((PROSE / "tanaka.json").read_text("utf-8"))
    return {
        "jsquad": [passage["text"] for passage in jsquad["passages"]],
        "pairs": sorted({pair[side] for group in pairs.values() for pair in group for side in ("a", "b")}),
        "tanaka": [item["ja"] for item in tanaka],
    }


def test_real_japanese_prose_is_seldom_flagged() -> None:
    sources = passages()
    assert len(sources["jsquad"]) > 1000
    for name, texts in sources.items():
        flagged = [text for text in texts if find_sensitive(text)]
        assert len(flagged) <= FLAGGED_MAX * len(texts), (name, len(flagged), flagged[:5])
    sentences = [s for text in sources["jsquad"] for s in re.split(r"(?<=。)", text) if s.strip()]
    flagged = [s for s in sentences if find_sensitive(s)]
    assert len(flagged) <= FLAGGED_MAX * len(sentences), (len(flagged), flagged[:5])
    # what is flagged there is a real place's address (a party's headquarters), nothing else
    kinds = {finding.kind for text in sources["jsquad"] for finding in find_sensitive(text)}
    assert kinds <= {ADDRESS}


# --------------------------------------------------------------------------------------------------
# Linear time


JAPANESE_UNITS = (
    "〇九〇一二三四 ",
    "一、",
    "1・2、3の",
    "〇",
    "二十五番",
    "十",
    "1234 5678 9018 ",
    "マイナンバー1 ",
    "a at a dot ",
    "aアットマークa。",
    "a★",
    "西新宿二丁目八番一号 ",
    "西新宿2-8-1 ビル ",
    "住所は西新宿1-1",
    "郵便番号 ",
    "パスは ",
    "PINは",
    "4111，",
    "一\n",
    "ﾊﾟ",
)


@pytest.mark.parametrize("unit", JAPANESE_UNITS)
def test_the_japanese_rules_stay_linear(unit: str) -> None:
    check_within_budget(repeated(unit, SIZE))
    small = calls_made(lambda: redact_sensitive(repeated(unit, 4 * 1024)))
    large = calls_made(lambda: redact_sensitive(repeated(unit, 16 * 1024)))
    assert large <= 4.5 * small + 2000, (small, large)


@pytest.mark.parametrize("word", ["パスワードは", "パスは", "トークン：", "住所は", "郵便番号", "taro"])
def test_a_long_blank_after_a_word_is_checked_within_the_budget(word: str) -> None:
    """A regular expression with two blank runs in a row took 13 s on 20,000 blanks after パスワードは."""
    check_within_budget(word + " " * SIZE + "あ")
