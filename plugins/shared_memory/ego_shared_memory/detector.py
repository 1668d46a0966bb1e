"""Secrets and personal data in text, found before anything is shared (the gateway's write-time filter and the
janitor's scan).

A :class:`Finding` names a kind and a span, never the value. Saying *where* a secret lives ("the bot token is
in ~/.env") is not a finding; the secret itself is. Kinds: private key, JWT, API key (known formats), bearer
token, password (in an assignment or a URL), secret (a key/token assignment, a secret URL parameter),
high-entropy token, e-mail address, phone number, card number (Luhn-valid).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator

import attrs

PRIVATE_KEY = "private key"
JWT = "JWT"
API_KEY = "API key"
BEARER = "bearer token"
PASSWORD = "password"  # noqa: S105 - a kind label, not a password
SECRET = "secret"  # noqa: S105 - a kind label, not a secret
ENTROPY = "high-entropy token"
EMAIL = "e-mail address"
PHONE = "phone number"
CARD = "card number"

KINDS: tuple[str, ...] = (PRIVATE_KEY, JWT, API_KEY, BEARER, PASSWORD, SECRET, ENTROPY, EMAIL, PHONE, CARD)


@attrs.frozen
class Finding:
    kind: str
    start: int
    end: int


# --------------------------------------------------------------------------------------------------
# Patterns (each group ``v`` is the secret part; without it, the whole match)

_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY"
    r"(?: BLOCK)?-----|[\s\S]*\Z)"
)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_API_KEYS = re.compile(
    r"(?<![A-Za-z0-9_])(?:"
    r"sk-(?:ant-|proj-|live-|test-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic
    r"|(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|AIPA)[0-9A-Z]{16}(?![0-9A-Za-z])"  # AWS access key ids
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"  # GitHub
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|AIza[0-9A-Za-z_-]{35}"  # Google
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}"  # Stripe
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|npm_[A-Za-z0-9]{36}"  # npm
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid
    r"|(?:ego|egs)_[A-Za-z0-9_-]{32,}"  # ego's own bearer tokens
    r"|\d{8,10}:AA[A-Za-z0-9_-]{33}"  # Telegram bot tokens
    r")"
)
_BEARER = re.compile(r"(?i)\b(?:bearer|basic)\s+(?P<v>[A-Za-z0-9\-._~+/]{12,}=*)")
_URL_PASSWORD = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]+:(?P<v>[^\s@/]+)@")
_URL_SECRET = re.compile(
    r"(?i)[?&;](?:api[_-]?key|key|token|access[_-]?token|secret|client[_-]?secret|password|passwd|sig|signature)"
    r"=(?P<v>[^&#\s\"'<>]+)"
)
_PASSWORD_ASSIGNMENT = re.compile(
    r"(?i)\b[A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd)[A-Za-z0-9_.-]*[\"']?\s*[:=]\s*[\"']?"
    r"(?P<v>[^\s\"',;]+)"
)
_SECRET_ASSIGNMENT = re.compile(
    r"(?i)\b[A-Za-z0-9_.-]*(?:api[_-]?key|apikey|secret|token|access[_-]?key|private[_-]?key|credentials?)"
    r"[A-Za-z0-9_.-]*[\"']?\s*[:=]\s*[\"']?(?P<v>[^\s\"',;]+)"
)
_CANDIDATE = re.compile(r"[A-Za-z0-9_+=-]{24,}")
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])(?P<local>[A-Za-z0-9._%+-]+)@(?P<domain>[A-Za-z0-9.-]+\.[A-Za-z]{2,})")
_PHONE_INTERNATIONAL = re.compile(r"(?<![\w+])\+\d{1,3}(?:[\s.-]?\(?\d{1,4}\)?){2,5}(?![\w])")
_PHONE_NATIONAL = re.compile(r"(?<![\w.:/-])\(?\d{2,4}\)?[\s.-]\d{3,4}[\s.-]\d{4}(?![\w-]|\.\d)")
_PHONE_BARE = re.compile(r"(?<![\w.+-])0[1-9]\d{8,9}(?![\w-])")
_CARD = re.compile(r"(?<![\w.-])\d(?:[ -]?\d){12,40}")

_EXAMPLE_DOMAINS = re.compile(r"(?i)(?:^|\.)(?:example\.(?:com|org|net)|[a-z0-9-]+\.(?:example|invalid|test|local))$")
_REFERENCE = re.compile(r"^(?:[~/.$%{<\[(*#]|env:|vault:|file:|op://|ssm:|secret:|arn:)", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"(?i)^(?:x+|\*+|\.+|-+|_+|redacted.*|\[redacted.*|none|null|empty|changeme|your[_-].*)$")


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def luhn_valid(number: str) -> bool:
    """The Luhn checksum of a string of digits."""
    total = 0
    for index, char in enumerate(reversed(number)):
        digit = ord(char) - 48
        if index % 2:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def shannon_entropy(text: str) -> float:
    """Bits per character."""
    if not text:
        return 0.0
    counts = Counter(text)
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def _is_reference(value: str) -> bool:
    """A placeholder or a pointer to where the secret lives (a path, a variable), not a secret."""
    stripped = value.strip("\"'`")
    return bool(_REFERENCE.match(stripped) or _PLACEHOLDER.match(stripped)) or len(set(stripped)) <= 1


def _looks_like_password(value: str) -> bool:
    if _is_reference(value) or len(value) < 4:
        return False
    mixed = any(c.isdigit() for c in value) or not value.isalpha() or not (value.islower() or value.isupper())
    return mixed or len(value) >= 12


def _looks_like_key(value: str) -> bool:
    if _is_reference(value) or len(value) < 8:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return (has_digit and has_alpha) or (len(value) >= 20 and shannon_entropy(value) >= 3.5)


def _random_looking(token: str) -> bool:
    """A long run of letters and digits that reads like a generated key rather than a word or an identifier."""
    core = token.rstrip("=")
    separators = sum(c in "-_+" for c in core)
    alnum = "".join(c for c in core if c.isalnum())
    if len(alnum) < 24 or separators * 8 > len(core):
        return False
    digits = sum(c.isdigit() for c in alnum)
    upper = sum(c.isupper() for c in alnum)
    lower = sum(c.islower() for c in alnum)
    if digits < 2 or upper < 2 or lower < 2:
        return False
    return shannon_entropy(alnum) >= 3.8


def _span(match: re.Match[str], group: str | None = None) -> tuple[int, int]:
    return match.span(group) if group else match.span()


Rule = Callable[[str], Iterator[Finding]]


def _pattern_rule(kind: str, pattern: re.Pattern[str], keep: Callable[[re.Match[str]], bool] | None = None) -> Rule:
    group = "v" if "v" in pattern.groupindex else None

    def find(text: str) -> Iterator[Finding]:
        for match in pattern.finditer(text):
            if keep is None or keep(match):
                start, end = _span(match, group)
                yield Finding(kind, start, end)

    return find


def _email_ok(match: re.Match[str]) -> bool:
    local, domain = match.group("local").lower(), match.group("domain").lower()
    return local != "git" and not _EXAMPLE_DOMAINS.search(domain)


def _phone_ok(match: re.Match[str]) -> bool:
    return 8 <= len(_digits(match.group())) <= 15


def _card_rule(text: str) -> Iterator[Finding]:
    """Runs of digit groups; within each, the windows of whole groups that make a Luhn-valid number of 13 to
    19 digits starting with 2-6 (so that digits written next to a card number, a date before it or a time
    after it, do not hide it)."""
    for match in _CARD.finditer(text):
        groups = list(re.finditer(r"\d+", match.group()))
        start = 0
        while start < len(groups):
            found = None
            for end in range(len(groups), start, -1):
                digits = "".join(g.group() for g in groups[start:end])
                if 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_valid(digits):
                    found = end
                    break
            if found is None:
                start += 1
                continue
            yield Finding(CARD, match.start() + groups[start].start(), match.start() + groups[found - 1].end())
            start = found


def _entropy_rule(text: str) -> Iterator[Finding]:
    for match in _CANDIDATE.finditer(text):
        if _random_looking(match.group()):
            yield Finding(ENTROPY, *match.span())


RULES: tuple[Rule, ...] = (
    _pattern_rule(PRIVATE_KEY, _PRIVATE_KEY),
    _pattern_rule(JWT, _JWT),
    _pattern_rule(API_KEY, _API_KEYS),
    _pattern_rule(BEARER, _BEARER),
    _pattern_rule(PASSWORD, _URL_PASSWORD, lambda m: not _is_reference(m.group("v"))),
    _pattern_rule(SECRET, _URL_SECRET, lambda m: _looks_like_key(m.group("v"))),
    _pattern_rule(PASSWORD, _PASSWORD_ASSIGNMENT, lambda m: _looks_like_password(m.group("v"))),
    _pattern_rule(SECRET, _SECRET_ASSIGNMENT, lambda m: _looks_like_key(m.group("v"))),
    _entropy_rule,
    _pattern_rule(EMAIL, _EMAIL, _email_ok),
    _pattern_rule(PHONE, _PHONE_INTERNATIONAL, _phone_ok),
    _pattern_rule(PHONE, _PHONE_NATIONAL, _phone_ok),
    _pattern_rule(PHONE, _PHONE_BARE),
    _card_rule,
)


_WEAK = frozenset({ENTROPY, PHONE})
"""Kinds found by shape alone: left out where a more specific finding covers the same characters (the digits
of a card number also look like a phone number; an API key also has high entropy)."""


def find_sensitive(text: str) -> list[Finding]:
    """Every finding in ``text``, ordered by position (findings may overlap)."""
    found = {finding for rule in RULES for finding in rule(text)}
    strong = [f for f in found if f.kind not in _WEAK]
    kept = [f for f in found if f.kind not in _WEAK or not any(s.start < f.end and f.start < s.end for s in strong)]
    return sorted(kept, key=lambda f: (f.start, -f.end, f.kind))


def kinds_in(text: str) -> list[str]:
    """The kinds found in ``text``, in the order of :data:`KINDS`, each once."""
    present = {finding.kind for finding in find_sensitive(text)}
    return [kind for kind in KINDS if kind in present]


def redact_sensitive(text: str) -> tuple[str, list[str]]:
    """``text`` with every finding replaced by ``[REDACTED:<kind>]``, and the kinds replaced.

    Repeated until nothing is found, so the result never holds a finding (a mask can join two fragments).
    """
    kinds: list[str] = []
    for _round in range(5):
        findings = find_sensitive(text)
        if not findings:
            break
        pieces: list[str] = []
        position = 0
        for finding in findings:
            if finding.kind not in kinds:
                kinds.append(finding.kind)  # also a finding inside one already masked: it was there
            if finding.end <= position:
                continue
            start = max(finding.start, position)
            pieces.append(text[position:start])
            pieces.append(f"[REDACTED:{finding.kind}]")
            position = finding.end
        pieces.append(text[position:])
        text = "".join(pieces)
    else:
        text = "[REDACTED]"
    return text, [kind for kind in KINDS if kind in kinds]
