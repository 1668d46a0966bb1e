"""Secrets and personal data in text, found before anything is shared (the gateway's write-time filter and the
janitor's scan).

A :class:`Finding` names a kind and a span, never the value. Saying *where* a secret lives ("the bot token is
in ~/.env") is not a finding; the secret itself is. Kinds: private key, JWT, API key (known formats), bearer
token, password (in an assignment or a URL), secret (a key/token assignment, a secret URL parameter),
high-entropy token, e-mail address, phone number, card number (Luhn-valid).

Every rule runs in time linear in the text: no pattern has two quantifiers that can share characters (the
assignment, URL and JWT rules first cut the text into runs of key characters, then test each run once), so no
input can make a regular expression backtrack over it again and again. A caller that must answer in time (the
gateway, the agent tool) also sets a :func:`detection_budget`; past it, :class:`DetectionBudgetExceeded`.
"""

from __future__ import annotations

import bisect
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

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


class DetectionBudgetExceeded(Exception):  # noqa: N818 - reads as what happened
    """The text could not be checked within the caller's :func:`detection_budget`; nothing was decided."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the text could not be checked for secrets within {seconds:g} s")
        self.seconds = seconds


_BUDGET: ContextVar[tuple[float, float] | None] = ContextVar("ego_detection_budget", default=None)
"""(deadline on the monotonic clock, the budget in seconds) of the detection running in this context."""
_CHECK_EVERY = 256
"""Findings of one rule between two looks at the clock."""


@contextmanager
def detection_budget(seconds: float) -> Iterator[None]:
    """Detection in this context (this thread, this task) must finish within ``seconds`` from now, or raise
    :class:`DetectionBudgetExceeded`. Nested budgets keep the earlier deadline."""
    deadline = time.monotonic() + seconds
    outer = _BUDGET.get()
    token = _BUDGET.set(outer if outer is not None and outer[0] <= deadline else (deadline, seconds))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _check_budget() -> None:
    budget = _BUDGET.get()
    if budget is not None and time.monotonic() > budget[0]:
        raise DetectionBudgetExceeded(budget[1])


# --------------------------------------------------------------------------------------------------
# Patterns (each group ``v`` is the secret part; without it, the whole match)

_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY"
    r"(?: BLOCK)?-----|[\s\S]*\Z)"
)
_OPENAI_KEY = re.compile(
    # OpenAI, Anthropic; the key must hold a digit (checked on the match: a lookahead scanning to the end of the run
    # from every "sk-" of a long run would be quadratic)
    r"(?<![A-Za-z0-9_])sk-(?:ant-|proj-|live-|test-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}"
)
_API_KEYS = re.compile(
    r"(?<![A-Za-z0-9_])(?:"
    r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|AIPA)[0-9A-Z]{16}(?![0-9A-Za-z])"  # AWS access key ids
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
# A URL with a password: the scheme is a run of scheme characters (starting with a letter at a word boundary)
# followed by "://"; each run is found once, from its first character, and tested once.
_SCHEME_RUN = re.compile(r"(?<![a-zA-Z0-9+.-])[a-zA-Z0-9+.-]+://")
_SCHEME_START = re.compile(r"\b[a-zA-Z]")
_URL_CREDENTIALS = re.compile(r"[^\s/:@]+:(?P<v>[^\s@/]+)@")
_URL_SECRET = re.compile(
    r"(?i)[?&;](?:api[_-]?key|key|token|access[_-]?token|secret|client[_-]?secret|password|passwd|sig|signature)"
    r"=(?P<v>[^&#\s\"'<>]+)"
)
# An assignment `key = value` (also `"key": "value"`): the key is a whole run of key characters holding a keyword,
# the value what follows the ':' or '='. Each run holding a keyword is found once (see _assignment_rule).
_KEY_TAIL = re.compile(r"(?i)[A-Za-z0-9_.-]*")
_ASSIGNED = re.compile(r"[\"']?\s*[:=]\s*[\"']?(?P<v>[^\s\"',;]+)")
_KEY_SEPARATOR = re.compile(r"[.-]")
_WORD = re.compile(r"\w")
_PASSWORD_WORDS = r"password|passwd|passphrase|pwd"  # noqa: S105 - key names
_SECRET_WORDS = r"api[_-]?key|apikey|secret|token|access[_-]?key|private[_-]?key|credentials?"  # noqa: S105
# A JWT: three dot-separated runs of base64url characters, the first two starting with "eyJ"; tested from the first
# "eyJ" at a word boundary of each run (a later one in the same run cannot succeed where the first failed).
_JWT_SEGMENT = re.compile(r"[A-Za-z0-9_-]*")
_JWT_START = re.compile(r"\beyJ")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
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


def _openai_ok(match: re.Match[str]) -> bool:
    return any(c.isdigit() for c in match.group()[3:])


def _url_password_rule(text: str) -> Iterator[Finding]:
    for run in _SCHEME_RUN.finditer(text):
        if not _SCHEME_START.search(text, run.start(), run.end() - 3):
            continue
        credentials = _URL_CREDENTIALS.match(text, run.end())
        if credentials is not None and not _is_reference(credentials.group("v")):
            yield Finding(PASSWORD, *credentials.span("v"))


def _assignment_rule(kind: str, keywords: str, keep: Callable[[str], bool]) -> Rule:
    """``key = value`` where the key holds one of ``keywords``: a run of key characters (``[A-Za-z0-9_.-]``) from
    a word boundary. Each run holding a keyword is found once, from its first character to its first keyword, then
    scanned to its end; what follows (``:`` or ``=``, then the value) is tested once; a value, once found, is not
    searched for keys (as a regular expression's next match starts after the last)."""
    head = re.compile(rf"(?i)(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?(?:{keywords})")
    keyword = re.compile(rf"(?i){keywords}")

    def find(text: str) -> Iterator[Finding]:
        done = 0  # a key starting before this lies in a value already found
        for run in head.finditer(text):
            start = run.start()
            if start < done:
                continue
            end = _KEY_TAIL.match(text, run.end()).end()  # type: ignore[union-attr] # `*` always matches
            if start and _WORD.match(text, start - 1):
                # glued to a word character (such as 'é'): the key starts at the run's first '.' or '-'
                separator = _KEY_SEPARATOR.search(text, start, end)
                if separator is None or not keyword.search(text, separator.start(), end):
                    continue
            assigned = _ASSIGNED.match(text, end)
            if assigned is None:
                continue
            done = assigned.end()
            if keep(assigned.group("v")):
                yield Finding(kind, *assigned.span("v"))

    return find


def _jwt_rule(text: str) -> Iterator[Finding]:
    done = 0  # everything before this was tested (a run that cannot start a JWT, or a JWT found)
    for start in _JWT_START.finditer(text):
        if start.start() < done:
            continue
        token = _JWT.match(text, start.start())
        if token is not None:
            done = token.end()
            yield Finding(JWT, *token.span())
        else:  # a later "eyJ" of the same run would fail too: the first segment ends at the same place
            rest = _JWT_SEGMENT.match(text, start.end())
            done = rest.end() if rest is not None else start.end()


def _card_rule(text: str) -> Iterator[Finding]:
    """Runs of digit groups; within each, the windows of whole groups that make a Luhn-valid number of 13 to
    19 digits starting with 2-6 (so that digits written next to a card number, a date before it or a time
    after it, do not hide it). A run has at most 41 digits, and only windows of 13 to 19 digits are joined."""
    for match in _CARD.finditer(text):
        groups = [g.group() for g in re.finditer(r"\d+", match.group())]
        spans = [g.span() for g in re.finditer(r"\d+", match.group())]
        before = [0]
        for group in groups:
            before.append(before[-1] + len(group))
        start = 0
        while start < len(groups):
            found = None
            end = bisect.bisect_right(before, before[start] + 19) - 1  # the most groups that fit in 19 digits
            while groups[start][0] in "23456" and end > start and before[end] - before[start] >= 13:
                if luhn_valid("".join(groups[start:end])):
                    found = end
                    break
                end -= 1
            if found is None:
                start += 1
                continue
            yield Finding(CARD, match.start() + spans[start][0], match.start() + spans[found - 1][1])
            start = found


def _entropy_rule(text: str) -> Iterator[Finding]:
    for match in _CANDIDATE.finditer(text):
        if _random_looking(match.group()):
            yield Finding(ENTROPY, *match.span())


RULES: tuple[Rule, ...] = (
    _pattern_rule(PRIVATE_KEY, _PRIVATE_KEY),
    _jwt_rule,
    _pattern_rule(API_KEY, _OPENAI_KEY, _openai_ok),
    _pattern_rule(API_KEY, _API_KEYS),
    _pattern_rule(BEARER, _BEARER),
    _url_password_rule,
    _pattern_rule(SECRET, _URL_SECRET, lambda m: _looks_like_key(m.group("v"))),
    _assignment_rule(PASSWORD, _PASSWORD_WORDS, _looks_like_password),
    _assignment_rule(SECRET, _SECRET_WORDS, _looks_like_key),
    _entropy_rule,
    _pattern_rule(EMAIL, _EMAIL, _email_ok),
    _pattern_rule(PHONE, _PHONE_INTERNATIONAL, _phone_ok),
    _pattern_rule(PHONE, _PHONE_NATIONAL, _phone_ok),
    _pattern_rule(PHONE, _PHONE_BARE),
    _card_rule,
)
"""Each runs in time linear in the text (see the module's docstring)."""


_WEAK = frozenset({ENTROPY, PHONE})
"""Kinds found by shape alone: left out where a more specific finding covers the same characters (the digits
of a card number also look like a phone number; an API key also has high entropy)."""


def find_sensitive(text: str) -> list[Finding]:
    """Every finding in ``text``, ordered by position (findings may overlap)."""
    found: set[Finding] = set()
    _check_budget()
    for rule in RULES:
        for count, finding in enumerate(rule(text), 1):
            found.add(finding)
            if count % _CHECK_EVERY == 0:
                _check_budget()
        _check_budget()
    strong = sorted((f.start, f.end) for f in found if f.kind not in _WEAK)
    starts = [start for start, _end in strong]
    reach: list[int] = []  # reach[i]: the furthest end among the first i + 1 strong findings (by start)
    for _start, end in strong:
        reach.append(max(end, reach[-1]) if reach else end)

    def covered(weak: Finding) -> bool:
        """A strong finding overlaps ``weak``: one starting before its end reaches past its start."""
        before = bisect.bisect_left(starts, weak.end)
        return before > 0 and reach[before - 1] > weak.start

    kept = [f for f in found if f.kind not in _WEAK or not covered(f)]
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
