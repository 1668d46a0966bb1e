"""No text can make the detector slow (a security audit found ``"pwd." * 1000`` took 128 s and froze the gateway).

Two bounds, neither a stopwatch assertion:
- the work in Python is counted (every call the detector makes, regular-expression calls included, through
  ``sys.setprofile``): it grows linearly with the text, so no rule loops over the text once per match or per run;
- every rule finishes on adversarial texts of up to 64 KB (repeated keywords, separators, digits) within a
  detection budget of 10 s, where the old patterns needed minutes to hours; ``signal.alarm`` is only the safety
  net that turns a hang inside one regular expression into a failure.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ego_shared_memory.detector import (
    PASSWORD,
    RULES,
    DetectionBudgetExceeded,
    detection_budget,
    find_sensitive,
    kinds_in,
    redact_sensitive,
)

BUDGET_SECONDS = 10.0
SAFETY_NET_SECONDS = 60
SIZE = 64 * 1024

KEYWORDS = (
    "pwd",
    "password",
    "passwd",
    "passphrase",
    "token",
    "secret",
    "api_key",
    "apikey",
    "access-key",
    "private_key",
    "credentials",
    "sk-",
    "sk-proj-",
    "eyJ",
    "ghp_",
    "xoxb-",
    "AKIA",
    "SG.",
    "ego_",
    "bearer ",
    "Basic ",
    "-----BEGIN ",
    "-----END ",
    "PRIVATE KEY",
    "://",
    "?key=",
    "&token=",
    "@",
    "+",
    "(03)",
)
SEPARATORS = (".", "-", "_", "=", ":", " ", '"', "'", ",", ";", "/", "\n", "", "  ", "é", "本")
FILLERS = ("", "a", "1", "0", "4", "11", "1234", "x1", "Zz9", "aB3dE5gH7jK9mN1pQ3")
ADVERSARIAL_UNITS = (
    "pwd.",
    "password=",
    "token_",
    "a:",
    "x=",
    "x://a:",
    "?key=",
    "1 ",
    "1-",
    "a.",
    "a-",
    "sk-",
    "eyJ-",
    "eyJaaaa.",
    "+1 ",
    "+1111111111111111111111 ",
    "(1) ",
    "4111 1111 1111 1111 ",
    "090-1234-5678 a@b.co ",
    "a@a.",
    "-----BEGIN A ",
    "A ",
    "bearer ",
    '"token": "',
    "本password=x1 ",
    "aB3dE5gH7jK9mN1pQ3sT5uV7wX9 ",
)


@contextmanager
def safety_net(seconds: int = SAFETY_NET_SECONDS) -> Iterator[None]:
    """A hang becomes a failure (the regular-expression engine checks for signals while it matches)."""

    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise TimeoutError(f"the detector ran for more than {seconds} s")

    if not hasattr(signal, "SIGALRM"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def repeated(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def check_within_budget(text: str) -> None:
    with safety_net(), detection_budget(BUDGET_SECONDS):
        try:
            for rule in RULES:
                for _finding in rule(text):
                    pass
            find_sensitive(text)
            redact_sensitive(text)
        except DetectionBudgetExceeded:
            pytest.fail(f"{len(text)} characters starting {text[:40]!r} took more than {BUDGET_SECONDS} s")


def calls_made(work: Callable[[], Any]) -> int:
    """Every Python and builtin call made while ``work`` runs (a regular-expression search is one call however
    long it runs: together with the budget tests this bounds the rest)."""
    count = 0

    def profile(_frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("unit", ADVERSARIAL_UNITS)
def test_adversarial_64kb_texts_are_checked_within_the_budget(unit: str) -> None:
    check_within_budget(repeated(unit, SIZE))


@settings(max_examples=40)
@given(
    parts=st.lists(
        st.tuples(st.sampled_from(KEYWORDS), st.sampled_from(SEPARATORS), st.sampled_from(FILLERS)),
        min_size=1,
        max_size=6,
    ),
    size=st.sampled_from([4 * 1024, 16 * 1024, SIZE]),
)
def test_any_repetition_of_keywords_separators_and_digits_is_checked_within_the_budget(
    parts: list[tuple[str, str, str]], size: int
) -> None:
    unit = "".join(keyword + separator + filler for keyword, separator, filler in parts)
    check_within_budget(repeated(unit, size))


@settings(max_examples=25)
@given(alphabet=st.text(alphabet=st.sampled_from("aZ19_.-=:\"' @+/()\n本"), min_size=1, max_size=6))
def test_random_texts_over_a_small_alphabet_are_checked_within_the_budget(alphabet: str) -> None:
    check_within_budget(repeated(alphabet, SIZE))


@pytest.mark.parametrize("unit", ADVERSARIAL_UNITS)
def test_the_work_in_python_grows_linearly(unit: str) -> None:
    small = calls_made(lambda: redact_sensitive(repeated(unit, 4 * 1024)))
    large = calls_made(lambda: redact_sensitive(repeated(unit, 16 * 1024)))
    assert large <= 4.5 * small + 2000, (small, large)


def test_the_reported_case_is_still_a_password_where_it_is_one() -> None:
    text = "pwd." * 1000
    check_within_budget(text)
    assert kinds_in(text) == []
    assert kinds_in(f"{text}pwd=hunter22") == [PASSWORD]
    assert PASSWORD in kinds_in("password=" * 1000)  # the value 'password=password=...' is not a plain word


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("db.password=hunter22", True),
        ('"DB_PASSWD": "s3cret!"', True),
        ("my-token: ghX0aZ9kLm2Qp4Rt", True),
        ("é.password=hunter22", True),  # the key starts at the '.' after a word character
        ("épassword=hunter22", False),  # no word boundary before the key: as before the rewrite
        ("postgres://app:s3cretpw@db.internal/app", True),
        ("1postgres://app:s3cretpw@db", False),  # a scheme starts with a letter at a word boundary
        ("x-eyJhbGciOiJIUzI1.eyJzdWIiOiIx.c2lnbmF0dXJl", True),
        ("sk-aaaaaaaaaaaaaaaaaaaaaaaa", False),  # an OpenAI-style key holds a digit
        ("sk-aaaaaaaaaaaaaaaaaaaaaaa1", True),
    ],
)
def test_the_rewritten_rules_keep_their_boundaries(text: str, found: bool) -> None:
    assert bool(kinds_in(text)) == found, kinds_in(text)


def test_a_budget_too_small_stops_detection_with_an_exception() -> None:
    with detection_budget(-1.0), pytest.raises(DetectionBudgetExceeded) as stopped:
        find_sensitive("password=hunter22")
    assert "hunter22" not in str(stopped.value)
    with detection_budget(60.0):
        assert kinds_in("password=hunter22") == [PASSWORD]
    assert kinds_in("password=hunter22") == [PASSWORD]  # no budget outside the block
