"""The case table through the detector: every
must-refuse case is found with its kind and masking by span hides every character of it; every must-store case
passes. Hypothesis: zero-width characters, full-width forms or line breaks put into a refused input never make it
pass, and findings always point into the text as given. The rules added for this stay linear in time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sensitive_cases import CASES, FIELD_CASES, FIELD_STORED, REFUSE_CASES, STORE_CASES, Case
from test_detector_linear import SIZE, calls_made, check_within_budget, repeated

from ego_shared_memory.detector import (
    INTERNAL_URL,
    PHONE,
    find_sensitive,
    kinds_in,
    normalise,
    redact_sensitive,
    sensitive_field,
)

ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u034f", "\ufe0f")
LINE_BREAKS = ("\n", "\r\n", "\u2028")


def test_the_table_is_large_and_goes_both_ways() -> None:
    assert len(CASES) >= 150
    assert len(REFUSE_CASES) >= 75
    assert len(STORE_CASES) >= 60
    assert len({case.text for case in CASES}) == len(CASES), "a case is listed twice"
    assert all(case.needle for case in REFUSE_CASES), "every refused case marks what must never get through"


@pytest.mark.parametrize("case", REFUSE_CASES, ids=lambda case: case.ident)
def test_every_refused_case_is_found_and_masked_whole(case: Case) -> None:
    found = kinds_in(case.text)
    assert case.kind in found, (case.text, found)
    redacted, kinds = redact_sensitive(case.text)
    assert case.kind in kinds
    for needle in case.needles:
        assert needle not in redacted, (case.text, redacted)
    assert find_sensitive(redacted) == []


@pytest.mark.parametrize("case", STORE_CASES, ids=lambda case: case.ident)
def test_every_stored_case_passes(case: Case) -> None:
    assert find_sensitive(case.text) == [], kinds_in(case.text)


@pytest.mark.parametrize(("field", "value", "kind"), FIELD_CASES)
def test_ids_an_agent_chooses_are_checked_too(field: str, value: str, kind: str) -> None:
    refused = sensitive_field([("content_md", "A plain note."), (field, value)])
    assert refused is not None
    assert refused[0] == field
    assert kind in refused[1]


@pytest.mark.parametrize(("field", "value"), FIELD_STORED)
def test_ordinary_ids_pass(field: str, value: str) -> None:
    assert sensitive_field([(field, value)]) is None


def test_the_audit_case_of_a_phone_number_followed_by_a_date_is_a_phone_number() -> None:
    text = "+81 20-0000-0000 2026-02-02"
    (finding,) = find_sensitive(text)
    assert (finding.kind, text[finding.start : finding.end]) == (PHONE, "+81 20-0000-0000")


def test_findings_point_into_the_original_text() -> None:
    text = "Ｍａｓｔｅｒ\u200bの電話は０９０－１２３４－５６７８、\u200b社内は http://10.0.0.5\u200b/admin です"
    spans = {finding.kind: text[finding.start : finding.end] for finding in find_sensitive(text)}
    assert spans == {PHONE: "０９０－１２３４－５６７８", INTERNAL_URL: "http://10.0.0.5\u200b/admin"}


def test_normalisation_reads_as_the_issue_says() -> None:
    view = normalise("０９０－１２３４ー５６７８ taro＠gmail.com （03）＝ a\u200bb\r\nc")
    assert view.text == "090-1234-5678 taro@gmail.com (03)= ab\nc"
    assert view.origin is not None
    assert len(view.origin) == len(view.text)
    assert normalise("plain ASCII text").origin is None
    assert normalise("データーベース").text == "データーベース"  # the long-vowel mark is a dash only beside digits


def fullwidth(char: str) -> str:
    if char == " ":
        return "\u3000"
    return chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char


@st.composite
def disguised(draw: st.DrawFn) -> tuple[Case, str]:
    """A refused case with zero-width characters and line breaks put between its characters and some of them
    written full-width (at distinct places, as someone hiding data from a filter would)."""
    case = draw(st.sampled_from(REFUSE_CASES))
    text = case.text
    places = draw(st.lists(st.integers(0, len(text)), max_size=6, unique=True))
    inserts = {place: draw(st.sampled_from(ZERO_WIDTH + LINE_BREAKS)) for place in places}
    wide = set(draw(st.lists(st.integers(0, max(0, len(text) - 1)), max_size=len(text))))
    pieces: list[str] = []
    for index, char in enumerate(text):
        pieces.append(inserts.get(index, ""))
        pieces.append(fullwidth(char) if index in wide else char)
    pieces.append(inserts.get(len(text), ""))
    return case, "".join(pieces)


@settings(max_examples=400, deadline=None)
@given(disguised())
def test_disguising_a_refused_input_never_lets_it_through(sample: tuple[Case, str]) -> None:
    case, text = sample
    assert kinds_in(text), f"{case.ident} disguised as {text!r} was accepted"
    redacted, _kinds = redact_sensitive(text)
    assert find_sensitive(redacted) == []


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300))
def test_findings_are_spans_of_the_text_as_given(text: str) -> None:
    for finding in find_sensitive(text):
        assert 0 <= finding.start < finding.end <= len(text)
    view = normalise(text)
    if view.origin is not None:
        assert len(view.origin) == len(view.text)
        assert view.origin == sorted(view.origin)
        assert all(0 <= index < len(text) for index in view.origin)


NEW_ADVERSARIAL_UNITS = (
    "\u200b",
    "a\u200b",
    "ー1",
    "1ー",
    "\n",
    "a\n",
    "1\n",
    "a \n \n",
    "〒1",
    "東京都港区",
    "港区1-",
    "sha256-",
    "AKIA ",
    "AKIA1 ",
    "1 Main ",
    "Springfield, ",
    "http://10.0.0.1/",
    "localhost:1 ",
    "a.internal ",
    "パスワードは ",
    "トークン：",
    "cGFzc3dvcmQ9aHVudGVyMjI= ",
    "41414141",
    "password: correct ",
    "-----BEGIN\n",
    "PRIVATE\n",
    "+81 ",
    "a [at] b",
    "a(at)b(dot)",
    "03(",
    "０",
    "＠",
)
"""Repetitions aimed at what the normalisation and the new rules added (each also bounded by the linear tests)."""


@pytest.mark.parametrize("unit", NEW_ADVERSARIAL_UNITS)
def test_the_new_rules_stay_linear(unit: str) -> None:
    check_within_budget(repeated(unit, SIZE))
    small = calls_made(lambda: redact_sensitive(repeated(unit, 4 * 1024)))
    large = calls_made(lambda: redact_sensitive(repeated(unit, 16 * 1024)))
    assert large <= 4.5 * small + 2000, (small, large)
