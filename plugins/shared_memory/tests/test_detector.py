"""The write-time filter: secrets and personal data are found by kind, never echoed; what is not secret
(where a secret lives, dates, paths, hashes, ids) passes. Property tests with hypothesis."""

from __future__ import annotations

import base64
import random
import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from shared_support import EXAMPLES

from ego_shared_memory.detector import (
    API_KEY,
    CARD,
    EMAIL,
    ENTROPY,
    JWT,
    KINDS,
    PASSWORD,
    PHONE,
    PRIVATE_KEY,
    SECRET,
    find_sensitive,
    kinds_in,
    luhn_valid,
    redact_sensitive,
)
from ego_shared_memory.events import EventError, parse_event

ALNUM = string.ascii_letters + string.digits
BENIGN_WORDS = (
    "the",
    "bot",
    "token",
    "is",
    "stored",
    "in",
    "~/.env",
    "API",
    "key",
    "password",
    "rotated",
    "monthly",
    "2026-02-02",
    "14:05",
    "v1.2.3",
    "192.168.1.10",
    "docs/gateway.md",
    "https://github.com/org/repo/blob/main/README.md",
    "3f2a9c01d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9",
    "550e8400-e29b-41d4-a716-446655440000",
    "evt_0123456789abcdef01234567",
    "run_2026_02_02_001",
    "config:telegram_bot_token_location",
    "保存",
    "有効",
    "max_tokens=4096",
    "port 8787",
    "ttl_days=90",
    "TELEGRAM_BOT_TOKEN",
    "1700000000000",
    "(401)",
)


def benign_text() -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(BENIGN_WORDS), min_size=1, max_size=25).map(" ".join)


def word(alphabet: str, low: int, high: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=low, max_size=high)


def card_number() -> st.SearchStrategy[str]:
    def complete(prefix: str) -> str:
        for check in "0123456789":
            if luhn_valid(prefix + check):
                return prefix + check
        raise AssertionError("a Luhn check digit always exists")

    return st.builds(lambda first, rest: complete(first + rest), st.sampled_from("23456"), word(string.digits, 14, 14))


SECRETS: dict[str, st.SearchStrategy[str]] = {
    API_KEY: st.one_of(
        st.builds(lambda b, d: f"sk-proj-{b}{d}", word(ALNUM, 20, 40), st.integers(0, 9)),
        st.builds(lambda b: f"AKIA{b}", word(string.ascii_uppercase + string.digits, 16, 16)),
        st.builds(lambda b: f"ghp_{b}", word(ALNUM, 36, 36)),
        st.builds(lambda b: f"xoxb-{b}", word(ALNUM + "-", 20, 40)),
        st.builds(lambda b: f"glpat-{b}", word(ALNUM, 20, 24)),
    ),
    JWT: st.builds(
        lambda a, b, c: f"eyJ{a}.eyJ{b}.{c}", word(ALNUM + "_-", 8, 30), word(ALNUM + "_-", 8, 60), word(ALNUM, 8, 43)
    ),
    EMAIL: st.builds(
        lambda user, host, tld: f"{user}@{host}.{tld}",
        word(string.ascii_lowercase + string.digits + "._", 1, 20).filter(lambda u: u != "git"),
        word(string.ascii_lowercase, 2, 12),
        st.sampled_from(["com", "jp", "co.jp", "io", "de"]),
    ),
    PHONE: st.one_of(
        st.builds(
            lambda a, b, c: f"+81 {a}-{b}-{c}",
            word(string.digits, 2, 2),
            word(string.digits, 4, 4),
            word(string.digits, 4, 4),
        ),
        st.builds(
            lambda a, b, c: f"({a}) {b}-{c}",
            word(string.digits, 3, 3),
            word(string.digits, 3, 3),
            word(string.digits, 4, 4),
        ),
        st.builds(lambda a, b: f"090-{a}-{b}", word(string.digits, 4, 4), word(string.digits, 4, 4)),
    ),
    CARD: card_number(),
    PASSWORD: st.one_of(
        st.builds(lambda p, d: f"password={p}{d}", word(string.ascii_letters, 4, 12), st.integers(0, 999)),
        st.builds(
            lambda u, p: f"postgres://{u}:{p}9@db.internal/app", word(string.ascii_lowercase, 3, 8), word(ALNUM, 6, 16)
        ),
    ),
    SECRET: st.builds(lambda v: f"GEMINI_API_KEY={v}7x", word(ALNUM, 10, 30)),
    PRIVATE_KEY: st.builds(
        lambda body: f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----",
        word(ALNUM + "+/", 10, 80),
    ),
}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e["dedupe_key"])
def test_the_notes_examples_hold_nothing_sensitive(example: dict[str, str]) -> None:
    assert find_sensitive(example["content_md"]) == []


@given(text=benign_text())
def test_ordinary_notes_pass(text: str) -> None:
    assert kinds_in(text) == []


@pytest.mark.parametrize("kind", sorted(SECRETS))
@given(data=st.data(), before=benign_text(), after=benign_text())
def test_each_kind_is_found_and_named(kind: str, data: st.DataObject, before: str, after: str) -> None:
    secret = data.draw(SECRETS[kind])
    text = f"{before} {secret} {after}"
    assert kind in kinds_in(text)
    redacted, masked = redact_sensitive(text)
    assert kind in masked or (kind == SECRET and API_KEY in masked)
    assert secret not in redacted
    assert find_sensitive(redacted) == []


@pytest.mark.parametrize("kind", sorted(SECRETS))
@given(data=st.data())
def test_a_refusal_never_echoes_the_value(kind: str, data: st.DataObject) -> None:
    secret = data.draw(SECRETS[kind])
    body = {
        "run_id": "r1",
        "scope": "global",
        "kind": "config",
        "dedupe_key": "config:x",
        "confidence": "high",
        "content_md": f"see {secret} here",
    }
    with pytest.raises(EventError) as refused:
        parse_event(body, agent_id="claude", max_chars=4000)
    assert refused.value.field == "content_md"
    assert kind in refused.value.kinds or (kind == SECRET and refused.value.kinds)
    assert secret not in refused.value.message
    assert secret not in str(refused.value)


@given(text=st.text(max_size=400))
def test_redaction_leaves_nothing_to_find(text: str) -> None:
    redacted, kinds = redact_sensitive(text)
    assert find_sensitive(redacted) == []
    assert (redacted == text) == (not kinds)
    assert set(kinds) <= set(KINDS)


@given(number=card_number(), position=st.integers(0, 14), change=st.integers(1, 9))
def test_only_luhn_valid_numbers_are_cards(number: str, position: int, change: int) -> None:
    assert CARD in kinds_in(f"paid with {number}")
    digits = list(number)
    digits[position + 1] = str((int(digits[position + 1]) + change) % 10)
    broken = "".join(digits)
    assume(not luhn_valid(broken))
    assert CARD not in kinds_in(f"paid with {broken}")


def test_generated_keys_are_found_by_their_entropy() -> None:
    rng = random.Random(20261124)
    keys = [base64.urlsafe_b64encode(rng.randbytes(32)).decode().rstrip("=") for _ in range(300)]
    found = sum(ENTROPY in kinds_in(f"the value is {key}") for key in keys)
    assert found >= 0.97 * len(keys)
    long_keys = ["".join(rng.choice(ALNUM) for _ in range(64)) for _ in range(100)]
    assert all(ENTROPY in kinds_in(key) for key in long_keys)


@pytest.mark.parametrize(
    "text",
    [
        "The bot token is in ~/.env, not in the repo.",
        "TELEGRAM_BOT_TOKEN: $TELEGRAM_BOT_TOKEN (set by systemd)",
        "api_key = <your key here>",
        "password: ********",
        "Contact: user@example.com (documentation address)",
        "git clone git@github.com:org/repo.git",
        "Build 20261124 took 1234567 ms; order 4111 was shipped.",
        "ThisIsAVeryLongIdentifierName and project-memory-gateway-2026-v2-Release",
    ],
)
def test_not_secrets(text: str) -> None:
    assert kinds_in(text) == []


def test_findings_carry_positions_not_values() -> None:
    text = "mail taro@gmail.com now"
    (finding,) = find_sensitive(text)
    assert (finding.kind, text[finding.start : finding.end]) == (EMAIL, "taro@gmail.com")
    assert "taro" not in repr(finding)


def test_a_card_at_the_end_of_a_long_run_of_numbers_is_found() -> None:
    text = "1700000000000 1700000000000 2000000000000006 the"
    assert kinds_in(text) == [CARD]
    assert redact_sensitive(text)[0].count("2000000000000006") == 0
