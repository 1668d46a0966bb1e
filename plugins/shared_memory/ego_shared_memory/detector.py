"""Secrets and personal data in text, found before anything is shared (the gateway's write-time filter, the agent
tool, ``ego shared import`` and the janitor's scan).

A :class:`Finding` names a kind and a span of the text as given, never the value. Saying *where* a secret lives
("the bot token is in ~/.env") is not a finding; the secret itself is. Kinds: private key, JWT, API key (known
formats), bearer token, password (in an assignment, a Japanese sentence or a URL), secret (a key/token assignment,
a secret URL parameter), high-entropy token, e-mail address (also with its signs spelt out), phone number, card
number (Luhn-valid), My Number (Japan's 個人番号: its check digit, or a word for it nearby), postal address,
internal URL (a private address, ``localhost`` or an internal host name: MUST-S3). A secret written hex- or
base64-encoded is found by what it decodes to.

The rules read a normalised view of the text (:func:`normalise`): NFKC (full-width digits and ``＠ － （ ） ＝``
become ASCII), the dashes and a long-vowel mark between digits become ``-``, zero-width, format and control
characters are dropped; numbers written in kanji become ASCII digits (``〇九〇``, ``二丁目十五番``) and the
Japanese separators between two numbers (``・ 、 ， の``) become ``-``; kana and kanji are boundaries, never word
characters. A second view joins lines (a key split over lines is one key again); from it, a finding by shape
alone (high entropy, a phone number) is taken only where it crosses a joined line break. Each finding maps back to
the characters of the original text it came from, so that masking by span hides them all.

Every rule runs in time linear in the text: no pattern has two quantifiers that can share characters (the
assignment, URL and JWT rules first cut the text into runs of key characters, then test each run once), so no
input can make a regular expression backtrack over it again and again. A caller that must answer in time (the
gateway, the agent tool) also sets a :func:`detection_budget`; past it, :class:`DetectionBudgetExceeded`.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import ipaddress
import math
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
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
MY_NUMBER = "My Number"
ADDRESS = "postal address"
INTERNAL_URL = "internal URL"

KINDS: tuple[str, ...] = (
    PRIVATE_KEY,
    JWT,
    API_KEY,
    BEARER,
    PASSWORD,
    SECRET,
    ENTROPY,
    EMAIL,
    PHONE,
    CARD,
    MY_NUMBER,
    ADDRESS,
    INTERNAL_URL,
)


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
# Normalisation: what the rules read, and the way back to the original characters

_CJK = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef\uac00-\ud7af"
"""Kana, kanji, CJK punctuation, Hangul and the half-width forms NFKC leaves: boundaries, never part of a word, a
key or a value (``電話番号は090-…`` holds a phone number; ``hunter2です`` ends after the ``2``)."""
_W = rf"[^\W{_CJK}]"
"""A word character that is not CJK (``é`` is one, ``は`` is not)."""
_B = rf"(?<!{_W})"
"""A boundary before: no word character (CJK aside) just before."""
_STABLE = "\t\n\x20-\x7e\u3001\u3002\u300c-\u300f\u3041-\u3096\u30a1-\u30fa\u4e00-\u9fff"
_SPECIAL = re.compile(f"[^{_STABLE}]")
"""A character that NFKC might change, or that is dropped or rewritten (the rest is copied as it is)."""
_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\ufe58\ufe63\uff0d")
_LONG_VOWEL_DASH = re.compile("(?<=[0-9])\u30fc|\u30fc(?=[0-9])")
"""``ー`` (NFKC makes the half-width ``ｰ`` one): a dash next to a digit (``090ー1234ー5678``), a letter elsewhere."""
_LINE_BREAKS = frozenset("\r\x0b\x0c\x85\u2028\u2029")
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0")
"""Fillers that show nothing but are letters (Hangul); dropped like the format characters."""
_VOICING = {"\uff9e": "\u3099", "\uff9f": "\u309a", "\u3099": "\u3099", "\u309a": "\u309a"}
"""Voiced-sound marks, half-width or combining: joined to the kana before them (``ﾊﾟｽﾜｰﾄﾞ`` is ``パスワード``)."""
_FULLWIDTH_COMMA = "\uff0c"
"""Kept through NFKC: ``，`` between digits separates groups (``4111，1111，…``); elsewhere it becomes ``,``."""
_COMMA = re.compile(",")
_KANJI_DIGITS = {char: str(value) for value, char in enumerate("〇一二三四五六七八九")}
_KANJI_UNITS = {"十": 10, "百": 100, "千": 1000}
_NUMBER_CHAIN = re.compile("[0-9〇一二三四五六七八九十百千]+(?:[-・、，の/ .ー][0-9〇一二三四五六七八九十百千]+)*")
"""Numbers in any numeral script (ASCII, full-width once NFKC has run, kanji) and the one-character separators
between them."""
_NUMBER_TOKEN = re.compile("[0-9〇一二三四五六七八九十百千]+")
_NUMBER_HINT = re.compile(f"[〇一二三四五六七八九十百千・、{_FULLWIDTH_COMMA}]|の(?=[0-9])")
_JOINING = frozenset(f"・、{_FULLWIDTH_COMMA}の")
"""Separators that become ``-`` between two numbers (``090・1234・5678``, ``090の1234の5678``)."""
_BLOCK_AFTER = re.compile("丁目|番地|号|番(?=[0-9〇一二三四五六七八九十百千-])")
_BLOCK_BEFORE = ("丁目", "番地", "番")
"""A kanji number beside these is a block number (``二丁目八番一号``); ``一番`` (the most) alone is not one."""
_LINE_JOIN = re.compile(r"(?<=\S)[ \t]*\n(?:[ \t]*\n)*[ \t]*(?=\S)")


@attrs.frozen
class NormalisedText:
    """The text the rules read, and where each of its characters came from in the original (``origin[i]`` is
    the index of the original character that ``text[i]`` came from; ``None``: the text is the original)."""

    text: str
    origin: list[int] | None = None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The characters of the original that ``text[start:end]`` came from (dropped ones between included)."""
        if self.origin is None:
            return start, end
        return self.origin[start], self.origin[end - 1] + 1


def normalise(text: str) -> NormalisedText:
    """What the rules read, with the way back to ``text``, in one pass over it: NFKC, one character at a time (so
    that each maps back); dashes become ``-``; format, control, combining and private-use characters are dropped
    (voiced-sound marks are joined to their kana); every line break becomes ``\\n``. Then the numbers: kanji
    numerals become ASCII digits where they are written as a number (two or more digits, ``〇九〇``; next to other
    digits or after a separator; a block number, ``二丁目十五番``), ``・ 、 ， の`` between two numbers become
    ``-``, and so does ``ー`` next to a digit."""
    special = _SPECIAL.search(text) is not None
    if not special and _NUMBER_HINT.search(text) is None:
        return NormalisedText(text)
    pieces: list[str] = []
    origin: list[int] = []
    position = 0
    for match in _SPECIAL.finditer(text) if special else ():
        index = match.start()
        if index > position:
            pieces.append(text[position:index])
            origin.extend(range(position, index))
        position = index + 1
        char = text[index]
        if char in _LINE_BREAKS:
            if char == "\r" and text.startswith("\n", index + 1):
                continue
            out = "\n"
        elif char in _DASHES:
            out = "-"
        elif char in _VOICING:
            if pieces and pieces[-1]:
                voiced = unicodedata.normalize("NFC", pieces[-1][-1] + _VOICING[char])
                if len(voiced) == 1:
                    pieces[-1] = pieces[-1][:-1] + voiced  # the mark is dropped, its kana changed in place
            continue
        elif char == _FULLWIDTH_COMMA:
            out = char
        elif char in _INVISIBLE or unicodedata.category(char)[0] == "C" or unicodedata.category(char) in ("Mn", "Me"):
            continue
        else:
            out = unicodedata.normalize("NFKC", char)
        pieces.append(out)
        origin.extend([index] * len(out))
    if position < len(text):
        pieces.append(text[position:])
        origin.extend(range(position, len(text)))
    normalised = "".join(pieces)
    if _NUMBER_HINT.search(normalised) is not None:
        normalised, origin = _numbers(normalised, origin)
    if "\u30fc" in normalised:
        normalised = _LONG_VOWEL_DASH.sub("-", normalised)  # one character for one: the origins stay
    if _FULLWIDTH_COMMA in normalised:
        normalised = normalised.replace(_FULLWIDTH_COMMA, ",")
    return NormalisedText(normalised, origin)


def _kanji_number(token: str) -> str | None:
    """``token`` (kanji or ASCII digits) as ASCII digits: positional (``二〇二六``, ``0九0``) digit for digit, or
    with 十/百/千 by value (``十五`` is ``15``, ``百二`` is ``102``); ``None`` when it is not a number."""
    if not any(unit in token for unit in _KANJI_UNITS):
        return "".join(_KANJI_DIGITS.get(char, char) for char in token)
    total = 0
    digit: int | None = None
    last_unit = 10_000
    for char in token:
        if char in _KANJI_UNITS:
            unit = _KANJI_UNITS[char]
            if unit >= last_unit or digit == 0:
                return None
            total += (1 if digit is None else digit) * unit
            digit, last_unit = None, unit
        elif char in _KANJI_DIGITS and char != "〇" and digit is None:
            digit = int(_KANJI_DIGITS[char])
        else:
            return None
    return str(total + (digit or 0))


def _numbers(text: str, origin: list[int]) -> tuple[str, list[int]]:
    """``text`` with its numbers written in ASCII digits and their separators as ``-`` (see :func:`normalise`),
    and the origins carried over (a number's first and last digits come from its first and last characters)."""
    pieces: list[str] = []
    moved: list[int] = []
    position = 0
    for chain in _NUMBER_CHAIN.finditer(text):
        written = chain.group()
        if written.isascii():
            continue
        tokens = list(_NUMBER_TOKEN.finditer(written))
        if len(tokens) == 1 and not _numeric(written, text, chain.start(), chain.end()):
            continue
        out: list[str] = []
        out_origin: list[int] = []
        converted: list[bool] = []
        previous_end = 0
        for token in tokens:
            value = _kanji_number(token.group())
            if token.start() > previous_end:  # the separator before this token
                separator = written[previous_end]
                joining = separator in _JOINING and converted[-1] and value is not None
                if separator == _FULLWIDTH_COMMA and len(token.group()) == 3:
                    joining = False  # a thousands separator (１２，３４５)
                out.append("-" if joining else separator)
                out_origin.append(origin[chain.start() + previous_end])
            start = chain.start() + token.start()
            if value is None:
                out.append(token.group())
                out_origin.extend(origin[start : chain.start() + token.end()])
            else:
                out.append(value)
                last = start + len(token.group()) - 1
                out_origin.extend(origin[min(start + i, last)] for i in range(len(value) - 1))
                out_origin.append(origin[last])
            converted.append(value is not None)
            previous_end = token.end()
        pieces.append(text[position : chain.start()])
        moved.extend(origin[position : chain.start()])
        pieces.append("".join(out))
        moved.extend(out_origin)
        position = chain.end()
    if not pieces:
        return text, origin
    pieces.append(text[position:])
    moved.extend(origin[position:])
    return "".join(pieces), moved


def _numeric(token: str, text: str, start: int, end: int) -> bool:
    """A lone token is a number: it holds an ASCII digit, two or more kanji digits, or it is a block number."""
    if any("0" <= char <= "9" for char in token) or (len(token) > 1 and all(char in _KANJI_DIGITS for char in token)):
        return True
    return _BLOCK_AFTER.match(text, end) is not None or text.endswith(_BLOCK_BEFORE, 0, start)


def _written_comma(char: str) -> str:
    return _FULLWIDTH_COMMA if char == _FULLWIDTH_COMMA else ","


def _joined(view: NormalisedText, original: str) -> tuple[NormalisedText, list[int]] | None:
    """``view`` with each line break between two visible characters removed (``sk-proj-ab⏎cd`` is one key again;
    breaks with blanks beside them become one blank; numbers it brings together read as in :func:`normalise`),
    and where the joins are: the positions in the original text of the first character after each; ``None``
    when there is none."""
    text = view.text
    pieces: list[str] = []
    origin: list[int] = []
    joins: list[int] = []
    position = 0
    for match in _LINE_JOIN.finditer(text):
        pieces.append(text[position : match.start()])
        origin.extend(
            view.origin[position : match.start()] if view.origin is not None else range(position, match.start())
        )
        joins.append(len(origin))
        if match.group().strip("\n"):  # blanks beside the break: the words stay apart, by one blank
            pieces.append(" ")
            origin.append(view.origin[match.start()] if view.origin is not None else match.start())
        position = match.end()
    if not joins:
        return None
    pieces.append(text[position:])
    origin.extend(view.origin[position:] if view.origin is not None else range(position, len(text)))
    joined = "".join(pieces)
    joins = [origin[join] for join in joins]
    if _FULLWIDTH_COMMA in original:  # written ，: a separator again if the join put it between two numbers
        joined = _COMMA.sub(
            lambda m: _FULLWIDTH_COMMA if original[origin[m.start()]] == _FULLWIDTH_COMMA else ",", joined
        )
    if _NUMBER_HINT.search(joined) is not None:
        joined, origin = _numbers(joined, origin)  # a number split over lines (四一一一、⏎一一一一…)
    if "\u30fc" in joined:
        joined = _LONG_VOWEL_DASH.sub("-", joined)  # digits the join brought next to it
    if _FULLWIDTH_COMMA in joined:
        joined = joined.replace(_FULLWIDTH_COMMA, ",")
    return NormalisedText(joined, origin), joins


# --------------------------------------------------------------------------------------------------
# Patterns (each group ``v`` is the secret part; without it, the whole match)

_PEM_LABEL = r"(?:[ \t\n]+[A-Z0-9]+)*?[ \t\n]*PRIVATE[ \t\n]*KEY(?:[ \t\n]*BLOCK)?-----"
"""The label of a PEM private key, its words apart by blanks or line breaks (``-----BEGIN RSA PRIVATE⏎KEY-----``)."""
_PRIVATE_KEY = re.compile(rf"-----BEGIN{_PEM_LABEL}(?:[\s\S]*?-----END{_PEM_LABEL}|[\s\S]*\Z)")
_OPENAI_KEY = re.compile(
    # OpenAI, Anthropic; the key must hold a digit (checked on the match: a lookahead scanning to the end of the run
    # from every "sk-" of a long run would be quadratic)
    r"(?<![A-Za-z0-9_])sk-(?:ant-|proj-|live-|test-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}"
)
_API_KEYS = re.compile(
    r"(?<![A-Za-z0-9_])(?:"
    # AWS access key ids, also written in groups (``AKIA IOSF ODNN 7EXA MPLE``)
    r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|AIPA)(?:[ .-]?[0-9A-Z]){16}(?![0-9A-Za-z])"
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
_BEARER = re.compile(rf"(?i){_B}(?:bearer|basic)\s+(?P<v>[A-Za-z0-9\-._~+/]{{12,}}=*)")
# A URL: the scheme is a run of scheme characters (starting with a letter at a word boundary) followed by "://";
# each run is found once, from its first character, and tested once.
_SCHEME_RUN = re.compile(r"(?<![a-zA-Z0-9+.-])[a-zA-Z0-9+.-]+://")
_SCHEME_START = re.compile(rf"{_B}[a-zA-Z]")
_URL_CREDENTIALS = re.compile(rf"[^\s/:@{_CJK}]+:(?P<v>[^\s@/{_CJK}]+)@")
_URL_SECRET = re.compile(
    r"(?i)[?&;](?:api[_-]?key|key|token|access[_-]?token|secret|client[_-]?secret|password|passwd|sig|signature)"
    rf"=(?P<v>[^&#\s\"'<>{_CJK}]+)"
)
# An assignment `key = value` (also `"key": "value"`): the key is a whole run of key characters holding a keyword,
# the value what follows the ':' or '='. Each run holding a keyword is found once (see _assignment_rule).
_KEY_TAIL = re.compile(r"(?i)[A-Za-z0-9_.-]*")
_ASSIGNED = re.compile(rf"[\"']?\s*[:=]\s*[\"']?(?P<v>[^\s\"',;{_CJK}]+)")
_KEY_SEPARATOR = re.compile(r"[.-]")
_WORD = re.compile(_W)
_KEY_PARTS = re.compile(r"[_.-]+|(?<=[a-z0-9])(?=[A-Z])")
_PASSWORD_WORDS = r"password|passwd|passphrase|pwd"  # noqa: S105 - key names
_SECRET_WORDS = r"api[_-]?key|apikey|secret|token|access[_-]?key|private[_-]?key|credentials?"  # noqa: S105
_META_KEYS = frozenset(
    "policy policies length len min max minimum maximum rule rules hint hints prompt expiry expires expiration age "
    "ttl reset strength budget budgets count counts limit limits file files path paths env location locations var "
    "variable name names field label type format timeout usage size window rotation interval days hours seconds "
    "ms per used remaining estimate estimates rate".split()
)
"""A key naming something *about* the password or tokens (``password_policy``, ``token_budget``): not one."""
_QUANTITY = re.compile(
    r"(?i)^(?:min|max|at-?least|up-?to)?[-_]?(?:0|[1-9]\d{0,5})(?:[.,]\d{1,3})?[-_]?(?:chars?|characters|tokens?|words?|bytes?|"
    r"[kmgt]i?b|days?|d|hours?|h|minutes?|mins?|m|seconds?|secs?|s|ms|weeks?|w|months?|years?|y|attempts?|tries|"
    r"times|x|lines?|rpm|rps|qps|req|requests|%)$"
)
"""``400tokens``, ``min12chars``, ``30d``: a quantity, never a secret."""
_PASSPHRASE_TAIL = re.compile(r"(?:[\s-]+[A-Za-z]{2,16}){2,7}(?![A-Za-z0-9])")
_PROSE = frozenset(
    "a an the is are was were be been being in on at of to for from by with via as and or not no never none same "
    "see ask stored kept lives lived saved set reset rotated changed managed held found located shared sent given "
    "provided required optional needed hidden masked redacted removed unchanged unknown empty this that these those "
    "it its there here our your my their his her we you they he she i please only also still now then later soon "
    "last next every each monthly weekly daily yearly week month day year time env environment variable vault "
    "file manager keychain store secret secrets config settings dashboard console docs document wiki team ops "
    "admin user users account accounts owner owners do does did has have had will would should must can could may "
    "might use used using when where who what which how why if after before until ago old new current default "
    "random generated strong weak long short characters chars letters digits".split()
)
"""Words of a sentence *about* a password (``password: stored in the vault``), never of a passphrase."""
_JA_PASSWORD_WORDS = (
    "パスワード|ぱすわーど|パスフレーズ|パスコード|暗証番号|暗証コード|合言葉|合い言葉|あいことば|ピン番号"  # noqa: S105
    "|(?<![A-Za-z])(?-i:PIN|Pin|PW)(?:コード|番号)?(?![A-Za-z])"
)
"""Words for a password in a Japanese sentence; ``PIN`` and ``PW`` in capitals (``pin`` is also a GPIO pin)."""
_JA_SECRET_WORDS = "トークン|アクセスキー|シークレットキー|シークレット|秘密鍵|認証キー|API ?キー"  # noqa: S105
_JA_JOIN = r"(?:\s*+(?:は|が|を|も|:|=|->|→|「|『|\"|'|\()\s*+){1,3}"
_JA_COUNTED = "(?![年月日回桁個文字人時分秒円件名歳])"
"""After a value: a number followed by a counter is a quantity (``暗証番号は4桁``, ``2026年``), not a value."""
_JA_PASSWORD = re.compile(rf"(?i)(?:{_JA_PASSWORD_WORDS}){_JA_JOIN}(?P<v>[!-~]++){_JA_COUNTED}")
_JA_PASS = re.compile(rf"(?<![\u30a1-\u30fa\u30fc])パス{_JA_JOIN}(?P<v>[!-~]++){_JA_COUNTED}")
"""``パスは …``: short for パスワード, but also a file path (``パスは src/main.py``): see :func:`_not_a_path`."""
_PATH_LIKE = re.compile(r"[/\\]|^[A-Za-z0-9_-]+\.[A-Za-z]{1,5}$")
_JA_SECRET = re.compile(rf"(?i)(?:{_JA_SECRET_WORDS}){_JA_JOIN}(?P<v>[!-~]++){_JA_COUNTED}")
_TRAILING = "\"'`.,;:!?)]}>"
# A JWT: three dot-separated runs of base64url characters, the first two starting with "eyJ"; tested from the first
# "eyJ" at a word boundary of each run (a later one in the same run cannot succeed where the first failed).
_JWT_SEGMENT = re.compile(r"[A-Za-z0-9_-]*")
_JWT_START = re.compile(rf"{_B}eyJ")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_CANDIDATE = re.compile(r"[A-Za-z0-9_+=-]{24,}")
_SRI = re.compile(r"sha(?:256|384|512)-[A-Za-z0-9+/]{40,88}={0,2}")
"""A subresource-integrity hash (``integrity="sha384-…"``): a digest of a public file, not a secret."""
_ENCODED = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"[0-9A-Fa-f]+")
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])(?P<local>[A-Za-z0-9._%+-]+)@(?P<domain>[A-Za-z0-9.-]+\.[A-Za-z]{2,})")
_AT_SPELLED = "アットマーク|あっとまーく|アット|あっと"
_DOT_SPELLED = "ドット|どっと"
_SPELLED_AT = (
    rf"[ \t]{{0,2}}(?:@|★|☆|{_AT_SPELLED})[ \t]{{0,2}}"
    rf"|[ \t]?[\[(<{{【][ \t]?(?:at|{_AT_SPELLED})[ \t]?[\])>}}】][ \t]?"
    r"|[ \t]{1,2}at[ \t]{1,2}"
)
_SPELLED_DOT = (
    rf"\.|。|[ \t]{{0,2}}(?:{_DOT_SPELLED})[ \t]{{0,2}}"
    rf"|[ \t]?[\[(<{{【][ \t]?(?:dot|{_DOT_SPELLED})[ \t]?[\])>}}】][ \t]?"
    r"|[ \t]{1,2}dot[ \t]{1,2}"
)
_EMAIL_SPELLED = re.compile(
    # taro＠gmail。com, taro アットマーク gmail ドット com, taro at gmail dot com, taro★gmail.com: the signs
    # written another way (the plain ``name@host.tld`` is _EMAIL)
    rf"(?i)(?<![A-Za-z0-9._%+-])(?P<local>[A-Za-z0-9._%+-]+)(?P<at>{_SPELLED_AT})"
    rf"(?P<domain>[A-Za-z0-9-]+(?:(?:{_SPELLED_DOT})[A-Za-z0-9-]+)+)"
)
_SPELLED_DOT_SIGN = re.compile(rf"(?i){_SPELLED_DOT}")
_PHONE_INTERNATIONAL = re.compile(rf"(?<!\+){_B}\+\d{{1,3}}(?:[\s.-]?\(?\d{{1,4}}\)?){{2,5}}(?!{_W})")
_PHONE_END = rf"(?![\d-]|\.\d)(?!{_W})"
_PHONE_JAPAN = re.compile(
    # a national number starts with 0: 090-1234-5678, 03 1234 5678, 0120-123-456, (03) 1234-5678, 03(1234)5678
    rf"(?<![\d+./])(?<!\d-){_B}(?:\(0\d{{1,4}}\)[ -]?\d{{1,4}}[ -]?\d{{4}}|0\d{{1,4}}\(\d{{1,4}}\)\d{{3,4}}"
    rf"|0\d{{1,4}}(?P<sep>[ .-])\d{{1,4}}(?P=sep)\d{{3,4}}){_PHONE_END}"
)
_PHONE_NANP = re.compile(
    # North America: (555) 123-4567, 555-123-4567, 555.123.4567, 555 123 4567
    rf"(?<![\d+.:/])(?<!\d-){_B}"
    r"(?:\(\d{3}\) ?\d{3}[ .-]|[2-9]\d\d-\d{3}-|[2-9]\d\d\.\d{3}\.|[2-9]\d\d \d{3} )"
    rf"\d{{4}}{_PHONE_END}"
)
_PHONE_BARE = re.compile(rf"(?<![\d+.])(?<!\d[ .-]){_B}0(?:[ .-]?\d){{9,10}}(?![ .-]?\d)(?!{_W})")
"""A national number written together or with a separator anywhere (``09012345678``, ``0 9 0 1 2 3 4 5 6 7 8``)."""
_PHONE_CONTEXT = re.compile(r"(?i)tel|phone|fax|mobile|cell|call|電話|携帯|ケータイ|連絡")
_MOBILE_PREFIXES = ("050", "060", "070", "080", "090")
_DIGIT_RUN = re.compile(rf"(?<![\d.+])(?<!\d[-/]){_B}\d(?:[ .\n/-]?\d){{11,}}")
"""Digit groups apart by one blank, ``.``, ``-``, ``/`` or line break (Japanese separators are ``-`` by then)."""
_MY_NUMBER_CONTEXT = re.compile(r"(?i)マイナンバー|個人番号|マイナ|my ?number|individual number")
_DATE_TIME = re.compile(r"(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:[01]\d|2[0-3])[0-5]\d")
"""``202602021530``: a date and a time written together, not a My Number."""
_YEAR = re.compile(r"(?:19|20)\d\d")
_DIGIT_GROUP = re.compile(r"\d+")
_KANJI = "\u3005\u4e00-\u9fff"
_TOWN = rf"[{_KANJI}\u30a1-\u30fa\u30fc]"
_N = r"\d{1,4}"
_BLOCK = (
    # a block number: 2丁目, 2丁目8番1号, 1丁目2-3, 123番地, 123番地の4, 8番1号, 2-8-1, 1-1 (kanji numerals are
    # digits by now: 二丁目八番一号); never N番 alone (新宿区3番目, 一番の…: an ordinal)
    rf"{_N}(?:丁目(?:{_N}(?:番地|番|-|の)?(?:{_N}号?)?)?|番地(?:の?{_N}号?)?|番{_N}(?:号|-{_N})?|-{_N}(?:-{_N})?号?)"
)
_BLOCK_END = "(?![位回月日年割人個件名%目線倍番丁\\d])"
_BUILDING = (
    # a building after a block number: 都庁ビル, サンプルハイツ (a name then a kind), 45階, 405号室, 3F
    rf"[ ]?(?:[{_KANJI}\u30a1-\u30fa\u30fcA-Za-z0-9・]{{0,16}}?(?:ビルディング|ビル|マンション|ハイツ|タワー|"
    r"レジデンス|コーポ|アパート|荘|棟|館|庁舎|寮)|\d{1,4}(?:号室|階|F(?![A-Za-z])))"
)
_TOWN_RUN = rf"[{_KANJI}\u30a1-\u30fa\u30fc]"
_JP_ADDRESS = re.compile(
    # 〒100-0001; or a place (kanji ending in 都/道/府/県/市/区/町/村/郡), a town, then a block number
    rf"〒 ?\d{{3}}-?\d{{4}}(?!\d)"
    rf"|[{_KANJI}]{{1,6}}[都道府県市区町村郡]{_TOWN}{{0,16}}?{_BLOCK}{_BLOCK_END}"
)
_JP_TOWN_ADDRESS = re.compile(
    # a town and a block number without the city, where a building follows (西新宿2-8-1 都庁ビル) or a word for
    # an address comes before (住所は西新宿2-8-1)
    rf"(?<!{_TOWN_RUN}){_TOWN_RUN}{{1,12}}?{_BLOCK}{_BUILDING}"
    rf"|(?:住所|所在地|自宅|住まい|お住い|address)(?:\s|は|が|:|「|『){{0,3}}(?P<v>{_TOWN_RUN}{{1,12}}?{_BLOCK}){_BLOCK_END}"
)
_POSTAL_CODE = re.compile(
    # 郵便番号100-0001, 郵便番号は1000001 (with 〒: _JP_ADDRESS)
    r"(?i)(?:郵便番号|郵便|(?<![A-Za-z])(?:postal code|zip code|zip))(?:\s|は|:|「){0,3}(?P<v>\d{3}-?\d{4})(?![\d-])"
)
_US_STATES = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|OH|"
    "OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY"
)
_US_ADDRESS = re.compile(
    # a street line (1600 Amphitheatre Parkway, 221 Main St.), or a city, state and ZIP code (Springfield, IL 62704)
    r"(?<![A-Za-z0-9])\d{1,6}(?: [A-Z][a-z]+| [NSEW]\.?){1,4} (?:St|Street|Ave|Avenue|Rd|Road|Blvd|Boulevard|Dr|"
    r"Drive|Ln|Lane|Way|Ct|Court|Pl|Place|Pkwy|Parkway|Ter|Terrace|Cir|Circle|Hwy|Highway|Sq|Square)(?![A-Za-z])\.?"
    rf"|(?<![A-Za-z])[A-Z][a-z]+(?: [A-Z][a-z]+){{0,2}}, (?:{_US_STATES}) \d{{5}}(?:-\d{{4}})?(?!\d)"
)
_HOST_RUN = re.compile(r"(?<![A-Za-z0-9._@/:%+-])[A-Za-z0-9][A-Za-z0-9._-]*")
_URL_HOST = re.compile(r"\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9._-]{1,253}")
_USERINFO = re.compile(rf"[^\s/@{_CJK}]{{1,256}}@")
_PORT_OR_PATH = re.compile(r":\d{1,5}(?!\d)|/(?!\d{1,3}(?![\w.]))")
"""A port or a path after a host (not a network's prefix length: ``10.0.0.0/8`` is a range, not a URL)."""
_URL_REST = re.compile(rf"[^\s<>\"'`{_CJK}]*")
_INTERNAL_SUFFIXES = (
    ".internal",
    ".local",
    ".localdomain",
    ".lan",
    ".corp",
    ".intranet",
    ".intra",
    ".home.arpa",
    ".private",
)
_DOCUMENTATION_NETWORKS = tuple(
    ipaddress.ip_network(net) for net in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)

_EXAMPLE_DOMAINS = re.compile(r"(?i)(?:^|\.)(?:example\.(?:com|org|net)|[a-z0-9-]+\.(?:example|invalid|test|local))$")
_REFERENCE = re.compile(r"^(?:[~/.$%{<\[(*#]|env:|vault:|file:|op://|ssm:|secret:|arn:)", re.IGNORECASE)
_VAULTS = frozenset(
    "1password bitwarden lastpass keepass keepassxc keychain vault dashlane doppler sops infisical".split()
)
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


def my_number_valid(number: str) -> bool:
    """The check digit of a Japanese My Number (個人番号): 12 digits, the last one 11 minus the sum of the first
    eleven weighted 2-7, 2-6 from the right, modulo 11 (0 where that remainder is 0 or 1)."""
    if len(number) != 12 or not number.isdigit():
        return False
    total = sum(int(number[10 - n]) * (n + 2 if n < 6 else n - 4) for n in range(11))
    remainder = total % 11
    return int(number[11]) == (0 if remainder <= 1 else 11 - remainder)


def shannon_entropy(text: str) -> float:
    """Bits per character."""
    if not text:
        return 0.0
    counts = Counter(text)
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def _is_reference(value: str) -> bool:
    """A placeholder or a pointer to where the secret lives (a path, a variable, a password manager), not a
    secret."""
    stripped = value.strip("\"'`")
    if stripped.lower() in _VAULTS:
        return True
    return bool(_REFERENCE.match(stripped) or _PLACEHOLDER.match(stripped)) or len(set(stripped)) <= 1


def _looks_like_password(value: str) -> bool:
    if _is_reference(value) or len(value) < 4 or _QUANTITY.match(value):
        return False
    mixed = any(c.isdigit() for c in value) or not value.isalpha() or not (value.islower() or value.isupper())
    return mixed or len(value) >= 12


def _looks_like_key(value: str) -> bool:
    if _is_reference(value) or len(value) < 8 or _QUANTITY.match(value):
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


def _spelled_email_ok(match: re.Match[str]) -> bool:
    """A top-level domain of letters, not a documentation domain; ``works at google.com`` is a sentence, so an
    ``at`` written as a plain word needs a spelt-out dot too (``taro at gmail dot com``)."""
    written = match.group("domain")
    domain = _SPELLED_DOT_SIGN.sub(".", written).lower()
    if match.group("at").strip().lower() == "at" and all(s.group() == "." for s in _SPELLED_DOT_SIGN.finditer(written)):
        return False
    return (
        match.group("local").lower() != "git"
        and bool(re.search(r"\.[a-z]{2,}$", domain))
        and not _EXAMPLE_DOMAINS.search(domain)
    )


def _phone_ok(match: re.Match[str]) -> bool:
    return 8 <= len(_digits(match.group())) <= 15


def _japanese_phone_ok(match: re.Match[str]) -> bool:
    return 10 <= len(_digits(match.group())) <= 11


def _openai_ok(match: re.Match[str]) -> bool:
    return any(c.isdigit() for c in match.group()[3:])


def _international_phone_rule(text: str) -> Iterator[Finding]:
    """``+<country> …``: at most 15 digits; groups written after the number (a date: ``+81 20-0000-0000
    2026-02-02``) are left out rather than hiding it."""
    for match in _PHONE_INTERNATIONAL.finditer(text):
        groups = list(_DIGIT_GROUP.finditer(match.group()))
        total = sum(len(g.group()) for g in groups)
        while len(groups) > 2 and total > 15:
            total -= len(groups.pop().group())
        if 8 <= total <= 15:
            yield Finding(PHONE, match.start(), match.start() + groups[-1].end())


def _bare_phone_rule(text: str) -> Iterator[Finding]:
    """``09012345678`` (a mobile number, 11 digits; also with its digits apart, ``0 9 0 1 2 …``) always; other
    national numbers written so only after a word for a phone (``電話 0312345678``), since ``order 0312345678`` is
    an order number."""
    for match in _PHONE_BARE.finditer(text):
        number = _digits(match.group())
        if (len(number) == 11 and number.startswith(_MOBILE_PREFIXES)) or _PHONE_CONTEXT.search(
            text, max(0, match.start() - 16), match.start()
        ):
            yield Finding(PHONE, *match.span())


def _url_password_rule(text: str) -> Iterator[Finding]:
    for run in _SCHEME_RUN.finditer(text):
        if not _SCHEME_START.search(text, run.start(), run.end() - 3):
            continue
        credentials = _URL_CREDENTIALS.match(text, run.end())
        if credentials is not None and not _is_reference(credentials.group("v")):
            yield Finding(PASSWORD, *credentials.span("v"))


def _internal_host(host: str) -> bool:
    """``localhost``, a private, loopback or link-local address, or a name under an internal suffix."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    if any(host.endswith(suffix) and len(host) > len(suffix) for suffix in _INTERNAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if any(address in network for network in _DOCUMENTATION_NETWORKS):
        return False
    return address.is_private or address.is_loopback or address.is_link_local or address.is_unspecified


def _internal_url_rule(text: str) -> Iterator[Finding]:
    """MUST-S3: a URL (``http://10.0.0.5/admin``, ``https://wiki.corp.internal/x``), or a host with a port or a
    path (``localhost:3000``, ``192.168.1.10:8080``), on a private network; or a name under an internal suffix
    (``db.internal``). A bare address (``192.168.1.10``) or the word ``localhost`` alone is not a URL."""
    done = 0
    for run in _SCHEME_RUN.finditer(text):
        if run.start() < done or not _SCHEME_START.search(text, run.start(), run.end() - 3):
            continue
        position = run.end()
        userinfo = _USERINFO.match(text, position)
        if userinfo is not None:
            position = userinfo.end()
        host = _URL_HOST.match(text, position)
        if host is not None and _internal_host(host.group()):
            end = _URL_REST.match(text, host.end()).end()  # type: ignore[union-attr] # `*` always matches
            done = end
            yield Finding(INTERNAL_URL, _SCHEME_START.search(text, run.start()).start(), end)  # type: ignore[union-attr]
    for run in _HOST_RUN.finditer(text):
        if run.start() < done:
            continue
        name = run.group().rstrip(".-_")
        lower = name.lower()
        after = run.start() + len(name)
        named = any(lower.endswith(suffix) and len(lower) > len(suffix) for suffix in _INTERNAL_SUFFIXES)
        if named or (_PORT_OR_PATH.match(text, after) and _internal_host(name)):
            end = _URL_REST.match(text, after).end()  # type: ignore[union-attr] # `*` always matches
            done = end
            yield Finding(INTERNAL_URL, run.start(), end)


def _passphrase_end(text: str, value: re.Match[str]) -> int | None:
    """Where a passphrase of plain words that starts with ``value`` ends (``correct horse battery staple``), or
    ``None`` when the words read as a sentence about the password."""
    if not value.group("v").isalpha():
        return None
    tail = _PASSPHRASE_TAIL.match(text, value.end("v"))
    if tail is None:
        return None
    words = [value.group("v"), *tail.group().replace("-", " ").split()]
    if any(word.lower() in _PROSE for word in words):
        return None
    return tail.end()


def _meta_key(key: str, keyword: re.Pattern[str]) -> bool:
    """The key names something about a password or a token (``password_policy``, ``tokenBudget``)."""
    last = None
    for last in keyword.finditer(key):  # noqa: B007 - the last one is wanted
        pass
    if last is None:
        return False
    return any(part.lower() in _META_KEYS for part in _KEY_PARTS.split(key[last.end() :]) if part)


def _assignment_rule(kind: str, keywords: str, keep: Callable[[str], bool]) -> Rule:
    """``key = value`` where the key holds one of ``keywords``: a run of key characters (``[A-Za-z0-9_.-]``) from
    a word boundary. Each run holding a keyword is found once, from its first character to its first keyword, then
    scanned to its end; what follows (``:`` or ``=``, then the value) is tested once; a value, once found, is not
    searched for keys (as a regular expression's next match starts after the last). A key about the secret
    (``password_policy``) is not one; a password may be a passphrase of several plain words."""
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
            if _meta_key(text[start:end], keyword):
                continue
            value_end = _passphrase_end(text, assigned) if kind == PASSWORD else None
            if value_end is not None:
                done = value_end
                yield Finding(kind, assigned.start("v"), value_end)
            elif keep(assigned.group("v")):
                yield Finding(kind, *assigned.span("v"))

    return find


def _japanese_rule(kind: str, pattern: re.Pattern[str], keep: Callable[[str], bool]) -> Rule:
    """``DBのパスワードは hunter2 です``, ``トークン：ghX0…``: a Japanese key word, a particle or a sign, then the
    value (ASCII up to a blank or the next kana or kanji; closing quotes and punctuation left out)."""

    def find(text: str) -> Iterator[Finding]:
        for match in pattern.finditer(text):
            value = match.group("v").rstrip(_TRAILING)
            if not value:
                continue
            start = match.start("v")
            end = _passphrase_end(text, match) if kind == PASSWORD and len(value) == len(match.group("v")) else None
            if end is not None:
                yield Finding(kind, start, end)
            elif keep(value):
                yield Finding(kind, start, start + len(value))

    return find


def _not_a_path(value: str) -> bool:
    """A password after ``パスは`` (not a file path: ``パスは src/main.py``, ``パスは C:\\tools``)."""
    return _looks_like_password(value) and not _PATH_LIKE.search(value)


def _town_address_rule(text: str) -> Iterator[Finding]:
    for match in _JP_TOWN_ADDRESS.finditer(text):
        yield Finding(ADDRESS, *(match.span("v") if match.group("v") is not None else match.span()))


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


def _card_shape(lengths: list[int]) -> bool:
    """How card numbers are written: all together, in fours (19 digits: 4-4-4-4-3; fours may run together, as
    when a line break between two groups is joined), or 4-6-5 / 4-6-4."""
    if len(lengths) == 1 or lengths in ([4, 6, 5], [4, 6, 4]):
        return True
    last = lengths[-1] % 4
    return all(n % 4 == 0 for n in lengths[:-1]) and (last == 0 or (last == 3 and sum(lengths) == 19))


def _digit_run_rule(text: str) -> Iterator[Finding]:
    """Runs of digit groups; within each, the windows of whole groups written as a card number is (see
    :func:`_card_shape`) that make a Luhn-valid number of 13 to 19 digits starting with 2-6 (so that digits
    written next to a card number, a date before it or a time after it, do not hide it; groups that are all years,
    ``2019、2020、2021、2022``, are a list). A run ends only where its digits do (a run cut inside a group would
    hide a card at its end); only windows of 13 to 19 digits are joined, so the work stays linear in the run.
    Then, outside the cards, My Numbers (:func:`_my_number_windows`)."""
    for match in _DIGIT_RUN.finditer(text):
        found_groups = list(_DIGIT_GROUP.finditer(match.group()))
        groups = [g.group() for g in found_groups]
        lengths = [len(group) for group in groups]
        spans = [(match.start() + g.start(), match.start() + g.end()) for g in found_groups]
        before = [0]
        for length in lengths:
            before.append(before[-1] + length)
        cards: list[tuple[int, int]] = []
        start = 0
        while start < len(groups):
            found = None
            end = bisect.bisect_right(before, before[start] + 19) - 1  # the most groups that fit in 19 digits
            if lengths[start] % 4 and end > start + 1:
                end = start + 1  # a card in groups starts with a group of four: only this group alone can be one
            while groups[start][0] in "23456" and end > start and before[end] - before[start] >= 13:
                window = groups[start:end]
                if (
                    _card_shape(lengths[start:end])
                    and luhn_valid("".join(window))
                    and (len(window) == 1 or not all(_YEAR.fullmatch(g) for g in window))
                ):
                    found = end
                    break
                end -= 1
            if found is None:
                start += 1
                continue
            cards.append((start, found))
            yield Finding(CARD, spans[start][0], spans[found - 1][1])
            start = found
        yield from _my_number_windows(text, groups, spans, before, cards)


def _my_number_windows(
    text: str, groups: list[str], spans: list[tuple[int, int]], before: list[int], cards: list[tuple[int, int]]
) -> Iterator[Finding]:
    """Windows of whole groups of one digit run that make 12 digits outside its cards: a My Number when a word
    for it is near (within 32 characters before or 16 after: ``マイナンバー``, ``個人番号``; written any way);
    without one, only as it is written (``123456789018``, ``1234 5678 9018``, ``1234-5678-9018``) with a valid
    check digit, and not a date and time (``202602021530``) nor a list of years."""
    run_start, run_end = spans[0][0], spans[-1][1]
    cue_before = [cue.start() for cue in _MY_NUMBER_CONTEXT.finditer(text, max(0, run_start - 32), run_start)]
    cue_after = _MY_NUMBER_CONTEXT.search(text, run_end, run_end + 16)
    taken = [False] * len(groups)
    for card_start, card_end in cards:
        taken[card_start:card_end] = [True] * (card_end - card_start)
    start = 0
    while start < len(groups):
        end = bisect.bisect_left(before, before[start] + 12)
        if end >= len(before) or before[end] != before[start] + 12 or any(taken[start:end]):
            start += 1
            continue
        first, last = spans[start][0], spans[end - 1][1]
        cued = (bool(cue_before) and cue_before[-1] >= first - 32) or (
            cue_after is not None and cue_after.end() <= last + 16
        )
        if cued or _written_my_number(text, groups[start:end], spans[start:end]):
            yield Finding(MY_NUMBER, first, last)
            start = end
        else:
            start += 1


def _written_my_number(text: str, groups: list[str], spans: list[tuple[int, int]]) -> bool:
    """12 digits together or in fours apart by a blank or ``-``, with a valid check digit; not a date and time,
    nor years."""
    if len(groups) != 1 and not (
        len(groups) == 3 and all(len(g) == 4 for g in groups) and all(text[end] in " -" for _start, end in spans[:-1])
    ):
        return False
    digits = "".join(groups)
    return (
        my_number_valid(digits)
        and not _DATE_TIME.fullmatch(digits)
        and not all(_YEAR.fullmatch(group) for group in groups)
    )


def _entropy_rule(text: str) -> Iterator[Finding]:
    hashes = [match.span() for match in _SRI.finditer(text)]
    starts = [start for start, _end in hashes]
    for match in _CANDIDATE.finditer(text):
        index = bisect.bisect_right(starts, match.start()) - 1
        if index >= 0 and hashes[index][1] >= match.end():
            continue  # a part of an integrity hash
        if _random_looking(match.group()):
            yield Finding(ENTROPY, *match.span())


def _decode(token: str) -> str | None:
    """What a hex or base64 run decodes to, when that is text (a secret written encoded); else ``None``."""
    core = token.rstrip("=")
    try:
        if len(core) % 2 == 0 and _HEX.fullmatch(core):
            raw = bytes.fromhex(core)
        else:
            urlsafe = "-" in core or "_" in core
            if (urlsafe and ("+" in core or "/" in core)) or len(core) % 4 == 1:
                return None
            padded = core + "=" * (-len(core) % 4)
            raw = base64.b64decode(padded, altchars=b"-_" if urlsafe else None, validate=True)
        decoded = raw.decode("utf-8")
    except (ValueError, binascii.Error):
        return None
    if len(decoded) < 8 or sum(c.isprintable() or c in "\t\n\r" for c in decoded) < len(decoded):
        return None
    return decoded


def _encoded_rule(text: str) -> Iterator[Finding]:
    """A hex or base64 run whose text holds a finding (``cGFzc3dvcmQ9aHVudGVyMjI=``: ``password=hunter22``): the
    run is a finding of that kind. The decoded text is checked by the other rules, once (never decoded again)."""
    for match in _ENCODED.finditer(text):
        decoded = _decode(match.group())
        if decoded is None:
            continue
        kinds = {finding.kind for finding in _findings(normalise(decoded), _PLAIN_RULES)} - {ENTROPY}
        for kind in sorted(kinds):
            yield Finding(kind, *match.span())


_PLAIN_RULES: tuple[Rule, ...] = (
    _pattern_rule(PRIVATE_KEY, _PRIVATE_KEY),
    _jwt_rule,
    _pattern_rule(API_KEY, _OPENAI_KEY, _openai_ok),
    _pattern_rule(API_KEY, _API_KEYS),
    _pattern_rule(BEARER, _BEARER),
    _url_password_rule,
    _pattern_rule(SECRET, _URL_SECRET, lambda m: _looks_like_key(m.group("v"))),
    _assignment_rule(PASSWORD, _PASSWORD_WORDS, _looks_like_password),
    _assignment_rule(SECRET, _SECRET_WORDS, _looks_like_key),
    _japanese_rule(PASSWORD, _JA_PASSWORD, _looks_like_password),
    _japanese_rule(PASSWORD, _JA_PASS, _not_a_path),
    _japanese_rule(SECRET, _JA_SECRET, _looks_like_key),
    _entropy_rule,
    _pattern_rule(EMAIL, _EMAIL, _email_ok),
    _pattern_rule(EMAIL, _EMAIL_SPELLED, _spelled_email_ok),
    _international_phone_rule,
    _pattern_rule(PHONE, _PHONE_JAPAN, _japanese_phone_ok),
    _pattern_rule(PHONE, _PHONE_NANP),
    _bare_phone_rule,
    _digit_run_rule,
    _pattern_rule(ADDRESS, _JP_ADDRESS),
    _town_address_rule,
    _pattern_rule(ADDRESS, _POSTAL_CODE),
    _pattern_rule(ADDRESS, _US_ADDRESS),
    _internal_url_rule,
)
RULES: tuple[Rule, ...] = (*_PLAIN_RULES, _encoded_rule)
"""Each reads the normalised text and runs in time linear in it (see the module's docstring)."""


_WEAK = frozenset({ENTROPY, PHONE})
"""Kinds found by shape alone: left out where a more specific finding covers the same characters (the digits
of a card number also look like a phone number; an API key also has high entropy)."""


def _findings(view: NormalisedText, rules: Iterable[Rule]) -> Iterator[Finding]:
    """The findings of ``rules`` in ``view.text``, in its own positions."""
    for rule in rules:
        for count, finding in enumerate(rule(view.text), 1):
            if finding.end > finding.start:
                yield finding
            if count % _CHECK_EVERY == 0:
                _check_budget()
        _check_budget()


def find_sensitive(text: str) -> list[Finding]:
    """Every finding in ``text``, ordered by position (findings may overlap), as spans of ``text`` itself."""
    _check_budget()
    view = normalise(text)
    _check_budget()
    found = {Finding(f.kind, *view.span(f.start, f.end)) for f in _findings(view, RULES)}
    joined = _joined(view, text)
    if joined is not None:
        lines, joins = joined
        for finding in _findings(lines, RULES):
            start, end = lines.span(finding.start, finding.end)
            after = bisect.bisect_right(joins, start)
            crosses = after < len(joins) and joins[after] < end
            if crosses or finding.kind not in _WEAK:  # a weak one only where the join made it
                found.add(Finding(finding.kind, start, end))
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


def sensitive_field(fields: Iterable[tuple[str, str | None]]) -> tuple[str, list[str]] | None:
    """The first ``(name, value)`` whose value holds sensitive data, as its name and the kinds found (never the
    value); ``None`` when none does. Every text of a write goes through it: the content and also the ids an agent
    chooses (``dedupe_key``, the scope's slug, ``run_id``, the source's ids)."""
    for name, value in fields:
        found = kinds_in(value) if value else []
        if found:
            return name, found
    return None


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
