"""Helpers for composing tool responses: ``data + "\\n\\n---\\n" + scaffold`` and short renderings."""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from datetime import datetime, timedelta, tzinfo
from typing import Any

from ego_core.kernel.logs import FILE_ONLY
from ego_core.slots import placed
from ego_core.types import Claim, ScaffoldItem, ScaffoldLine, Section

_log = logging.getLogger("ego.hooks")

SEPARATOR = "\n\n---\n"


def scaffold_text(items: Iterable[ScaffoldItem], served: Collection[str]) -> list[str]:
    """Lines of scaffold whose ``needs`` are all served, without duplicates, in order."""
    lines: list[str] = []
    for item in items:
        if isinstance(item, ScaffoldLine):
            if not item.needs <= set(served):
                continue
            text = item.text
        else:
            text = item
        if text and text not in lines:
            lines.append(text)
    return lines


def compose(data: str, scaffold: Iterable[str]) -> str:
    lines = [line for line in scaffold if line]
    return f"{data}{SEPARATOR}{chr(10).join(lines)}" if lines else data


_SPACES = re.compile(r"[^\S\u3000]+")
"""Runs of whitespace folded to one space: line breaks, tabs, NBSP …, but not the ideographic space U+3000."""
_CLAUSE_ENDS = frozenset("。、，．！？；：」』）】〕〉》")
"""Where a cut CJK text prefers to end (after a clause or a closing bracket)."""
_MAX_CODE_POINTS = 4
"""At most this many code points per column are kept (a pile of combining marks is wide in tokens, not columns)."""


def truncate(text: str, limit: int, *, wide: int = 2, tokens: int | None = None) -> str:
    """One line of at most ``limit`` columns (line breaks folded, ``…`` when cut), measured by :func:`text_width`.

    A grapheme with an East Asian Wide or Fullwidth character (CJK, kana, full-width forms, most emoji) counts 2
    columns, as it is drawn: the limit bounds a quote's width whatever its script, and a Japanese quote keeps
    about as much meaning as an English one (a kanji carries about what two or three Latin letters do). A cut
    never splits what reads as one character (a combining sequence, an emoji ZWJ sequence, a flag, a Hangul
    syllable, a surrogate pair). Latin text is cut where the limit falls (a quote that wants whole English words
    goes back to a space itself). A cut prefers to follow 。、 or a closing bracket in the last third of the head,
    else a CJK cut goes back to the last word break (:func:`word_break`: no space is needed between CJK words,
    but a cut never splits a kana run or a katakana word when it can help it), as long as the quote keeps
    :data:`WORD_CUT_LEAST` graphemes; else it keeps the longest head, not a stub. The ideographic space U+3000 is
    kept; every other run of whitespace folds to one space.

    ``wide`` is what a wide grapheme counts instead of 2. A quote that must fit a budget of the agent's tokens is
    better bound by ``tokens``, with ``limit`` as a loose outer bound on its width: a CJK character costs about
    a token, an English word about one, so the same tokens give a Japanese quote and an English one about the
    same cost and meaning.

    The quote also costs at most ``tokens`` (:func:`estimate_tokens`; by default ``limit``): text that is narrow
    but dear in tokens (a pile of combining marks, emoji sequences) is cut shorter, so a column limit always
    bounds what a quote costs the agent.
    """
    flat = _SPACES.sub(" ", text).strip() if "\u3000" in text else " ".join(text.split())
    if flat.isascii():
        return flat if len(flat) <= limit else flat[: max(0, limit - 1)].rstrip() + "…"
    most = _MAX_CODE_POINTS * max(limit, 1)
    clusters: list[str] = []
    widths: list[int] = []
    total = 0
    for cluster in _graphemes(flat[: most + 1]):  # a longer text is cut: only its head is measured, up to the limit
        clusters.append(cluster)
        widths.append(_cluster_width(cluster, wide))
        total += widths[-1]
        if total > limit:
            break
    most_tokens = limit if tokens is None else tokens
    if len(flat) <= most and total <= limit and estimate_tokens(flat) <= most_tokens:
        return flat
    budget = limit - 1  # the ellipsis is one column
    cap = _MAX_CODE_POINTS * max(budget, 0)
    used = points = end = 0
    while end < len(clusters) and used + widths[end] <= budget and points + len(clusters[end]) <= cap:
        used += widths[end]
        points += len(clusters[end])
        end += 1
    if estimate_tokens("".join(clusters[:end])) + 1 > most_tokens:  # the ellipsis is a token
        low, high = 0, end  # the longest head within the tokens (a head never costs less than its own head)
        while low < high:
            middle = (low + high + 1) // 2
            if estimate_tokens("".join(clusters[:middle])) + 1 <= most_tokens:
                low = middle
            else:
                high = middle - 1
        end = low
    return "".join(clusters[: _word_cut(clusters, widths, end)]).rstrip() + "…"


def _word_cut(clusters: list[str], widths: list[int], end: int) -> int:
    """Where a head of at most ``end`` graphemes ends: after a clause end (。、！？, a closing bracket) in the last
    third of its width, else at the last word break (:func:`word_break`) when the longest head ends inside a word
    of CJK text (a Latin word in Japanese included: "話したR…" would be a stub of "Rust"); a shorter head keeps at
    least :data:`WORD_CUT_LEAST` graphemes, or the longest is kept."""
    if end >= len(clusters):
        return end
    head = width = sum(widths[:end])
    for at in range(end, 0, -1):  # a clause end in the last third: the cut goes there
        if 3 * width < 2 * head or (at < WORD_CUT_LEAST <= end):
            break
        if clusters[at - 1] in _CLAUSE_ENDS:
            return at
        width -= widths[at - 1]
    if not end:
        return end
    before, after = clusters[end - 1][:1], clusters[end][:1]
    if _between(before, after) or not any(_kind(cluster[:1]) & _WIDE for cluster in clusters[:end]):
        return end  # at a break already, or inside a Latin word of Latin text (clipped by the caller if it likes)
    for at in range(end - 1, WORD_CUT_LEAST - 1, -1):
        if _between(clusters[at - 1][:1], clusters[at][:1]):
            return at
    return end  # no word break keeps a readable quote: the longest cut, not a stub


WORD_CUT_LEAST = 10
"""A cut goes back to a word break (or a clause end) only if the quote keeps at least this many graphemes: a
Japanese stub of four characters says nothing, a quote cut inside its last word still does."""

_OPENING = frozenset("「『（【〔〈《｛［([{“‘")
"""A cut never ends right after an opening bracket; a word starts before one."""
_SPACE, _HIRAGANA, _KATAKANA, _KANJI, _LETTER, _PUNCT, _OTHER = range(7)


@functools.lru_cache(maxsize=8192)
def _script(char: str) -> int:
    """The class of a character a word break reads (the first character of a grapheme)."""
    code = ord(char)
    if char.isspace():
        return _SPACE
    if 0x3041 <= code <= 0x309F:
        return _HIRAGANA
    if 0x30A1 <= code <= 0x30FA or 0x30FC <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF or 0xFF66 <= code <= 0xFF9D:
        return _KATAKANA  # with the long vowel mark ー (the middle dot ・ is punctuation)
    if (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x3FFFF
        or code in (0x3005, 0x3006, 0x3007)  # 々 〆 〇
    ):
        return _KANJI
    category = unicodedata.category(char)
    if category[0] in "LN":
        return _LETTER
    return _PUNCT if category[0] == "P" else _OTHER


@functools.lru_cache(maxsize=8192)
def _between(before: str, after: str, start: bool = False) -> bool:
    """Whether two neighbouring characters (each a grapheme's first) belong to different words, by their classes:
    around a space, after a clause end or closing bracket, before any other punctuation (a word ended), and at a
    script change that starts a word (kanji or katakana after hiragana, kanji and katakana next to each other,
    CJK next to Latin). Never between kana of one run, inside a kanji compound or a katakana word, before
    hiragana that follows kanji (okurigana) or after an opening bracket. A katakana word ends before hiragana (a
    particle), but a quote does not ``start`` there."""
    if not before or not after:
        return True
    left, right = _script(before), _script(after)
    if _SPACE in (left, right) or before in _CLAUSE_ENDS or after in _OPENING:
        return True
    if before in _OPENING:
        return False
    if _PUNCT in (left, right):
        return True
    if right == _HIRAGANA:
        return left == _KATAKANA and not start
    if left == right:
        return False
    return not (left == _LETTER and right == _KANJI and before.isdigit())  # 3時, 2人: a number and its counter


def word_break(text: str, at: int, *, start: bool = False) -> bool:
    """Whether a cut of ``text`` at index ``at`` falls between two words, as :func:`truncate` cuts CJK text: the
    ends of the text, around spaces, after a clause end (。、！？) or a closing bracket, before punctuation, and
    where the script changes to start a word (a kanji or katakana run after hiragana, kanji next to katakana, CJK
    next to Latin). Never inside a grapheme, between kana of one run, inside a kanji compound or a katakana word,
    or before hiragana that follows kanji (an okurigana). Latin words break at spaces only. A katakana word ends
    before the hiragana that follows it (a particle), but with ``start`` (where a quote of the end of a text may
    begin: wake_up's thought) that is no break: the quote would begin with the particle."""
    if at <= 0 or at >= len(text):
        return True
    low = max(0, at - 8 * _MAX_CODE_POINTS)  # a grapheme is never that long: its own start is in the window
    position = low
    for cluster in _graphemes(text[low : at + 1]):
        if position >= at:
            break
        position += len(cluster)
    if position != at:
        return False  # the index falls inside a grapheme
    before = at - 1
    while before > 0 and _kind(text[before]) & (_EXTEND | _LOW | _INVISIBLE) and not _kind(text[before]) & _WIDE:
        before -= 1
    return _between(text[before], text[at], start)


def text_width(text: str) -> int:
    """Columns ``text`` takes, as :func:`truncate` counts them: per grapheme, 2 if any of its characters is East
    Asian Wide or Fullwidth, else 1 (0 for a lone format or combining character; a half-width dakuten adds 1)."""
    return sum(_cluster_width(cluster) for cluster in graphemes(text))


def graphemes(text: str) -> list[str]:
    """``text`` in user-perceived characters (a simplified Unicode extended grapheme cluster segmentation: marks,
    variation selectors, emoji modifiers and tags extend; ZWJ joins; regional indicators pair; Hangul jamo form
    syllables; a surrogate pair stays whole)."""
    return list(_graphemes(text))


def _graphemes(text: str) -> Iterator[str]:
    cluster = ""
    before = 0  # the previous character's kind
    regional = 0  # regional indicators in the current cluster
    for char in text:
        kind = _kind(char)
        if cluster and _continues(before, kind, regional):
            cluster += char
            regional += 1 if kind & _REGIONAL else 0
        else:
            if cluster:
                yield cluster
            cluster = char
            regional = 1 if kind & _REGIONAL else 0
        before = kind
    if cluster:
        yield cluster


# A character's kind, as bits (and its Hangul syllable type in the top bits).
_WIDE, _INVISIBLE, _EXTEND, _ZWJ, _REGIONAL, _HIGH, _LOW, _VOICED = (1 << bit for bit in range(8))
_HANGUL = 8
_L, _V, _T, _LV, _LVT = range(1, 6)


@functools.lru_cache(maxsize=8192)
def _cluster_width(cluster: str, wide: int = 2) -> int:
    kinds = [_kind(char) for char in cluster]
    if all(kind & _INVISIBLE for kind in kinds):
        return 0
    voiced = sum(1 for kind in kinds[1:] if kind & _VOICED)  # a half-width (han)dakuten takes a cell of its own
    return (wide if any(kind & _WIDE for kind in kinds) else 1) + voiced


def _continues(before: int, kind: int, regional: int) -> bool:
    if kind & _EXTEND or before & _ZWJ or (before & _HIGH and kind & _LOW):
        return True
    if kind & _REGIONAL and before & _REGIONAL:
        return regional % 2 == 1
    left, right = before >> _HANGUL, kind >> _HANGUL
    if left == _L:
        return right in (_L, _V, _LV, _LVT)
    if left in (_V, _LV):
        return right in (_V, _T)
    if left in (_T, _LVT):
        return right == _T
    return False


@functools.lru_cache(maxsize=8192)
def _kind(char: str) -> int:
    code = ord(char)
    category = unicodedata.category(char)
    kind = _WIDE if unicodedata.east_asian_width(char) in "WF" else 0
    if category in ("Cf", "Mn", "Me"):
        kind |= _INVISIBLE
    if (
        category in ("Mn", "Me", "Mc")
        or code in (0x200C, 0x200D, 0xFF9E, 0xFF9F)
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
    ):
        kind |= _EXTEND
    if code == 0x200D:
        kind |= _ZWJ
    if code in (0xFF9E, 0xFF9F):
        kind |= _VOICED
    if 0x1F1E6 <= code <= 0x1F1FF:
        kind |= _REGIONAL
    if 0xD800 <= code <= 0xDBFF:
        kind |= _HIGH
    elif 0xDC00 <= code <= 0xDFFF:
        kind |= _LOW
    return kind | (_hangul(code) << _HANGUL)


def _hangul(code: int) -> int:
    if 0x1100 <= code <= 0x115F or 0xA960 <= code <= 0xA97C:
        return _L
    if 0x1160 <= code <= 0x11A7 or 0xD7B0 <= code <= 0xD7C6:
        return _V
    if 0x11A8 <= code <= 0x11FF or 0xD7CB <= code <= 0xD7FB:
        return _T
    if 0xAC00 <= code <= 0xD7A3:
        return _LV if (code - 0xAC00) % 28 == 0 else _LVT
    return 0


def relative_age(moment: datetime, now: datetime) -> str:
    """``just now``, ``5m ago``, ``3h ago``, ``2d ago``, ``3w ago``, ``4mo ago``, ``2y ago``."""
    delta = now - moment
    if delta < timedelta(0):
        return "in the future"
    seconds = delta.total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h ago"
    days = delta.days
    if days < 14:
        return f"{days}d ago"
    if days < 60:
        return f"{days // 7}w ago"
    if days < 365:
        return f"{days // 30}mo ago"
    return f"{days // 365}y ago"


_DURATION_WORDS: tuple[tuple[float, str], ...] = (
    (1, "less than a day"),
    (2, "about a day"),
    (3, "a couple of days"),
    (5, "a few days"),
    (8, "about a week"),
    (12, "over a week"),
    (18, "about two weeks"),
    (25, "about three weeks"),
    (45, "about a month"),
    (75, "about two months"),
    (135, "a few months"),
    (240, "several months"),
    (550, "about a year"),
)


def duration_words(elapsed: timedelta) -> str:
    """A stretch of time as a person would say it, never with digits: ``less than a day``, ``a few days``,
    ``about two weeks``, ``several months``, ``well over a year`` (14 bands; a negative stretch counts as none)."""
    days = max(elapsed.total_seconds(), 0.0) / 86400
    for limit, words in _DURATION_WORDS:
        if days < limit:
            return words
    return "well over a year"


SMALL_HOURS_END = 5
"""Before this local hour a moment belongs to the night before (``last night``, not ``this morning``)."""
NIGHT_START = 21
"""From this local hour a moment is in the night."""


def part_of_day(hour: int) -> str:
    """``morning`` (05-12), ``afternoon`` (12-17), ``evening`` (17-21) or ``night`` for a local hour."""
    if SMALL_HOURS_END <= hour < 12:
        return "morning"
    if 12 <= hour < 17:
        return "afternoon"
    return "evening" if 17 <= hour < NIGHT_START else "night"


def calendar_days(moment: datetime, now: datetime, tz: tzinfo) -> int:
    """Local calendar days of ``tz`` from ``moment`` to ``now`` (0: the same local day; a later moment counts as
    now): what :func:`when_words` says in words."""
    return max(0, (now.astimezone(tz).date() - min(moment, now).astimezone(tz).date()).days)


def when_words(moment: datetime, now: datetime, tz: tzinfo, *, detail: bool = False) -> str:
    """When ``moment`` happened, said by the local calendar days of ``tz`` (plugins pass ``ctx.now()`` and
    ``ctx.settings.tz``), never with digits: ``earlier today`` for the same local day, ``last night`` for the
    night before (a moment in the small hours, before 05:00, belongs to it; in the small hours the present belongs
    to the night before too: ``earlier tonight``) or ``yesterday`` for the local day
    before, then :func:`duration_words` of the local days between with ``ago``: ``a couple of days ago``,
    ``about two weeks ago``, ``well over a year ago``. A moment on an earlier local day is never said to be today,
    nor one of today yesterday; a moment after ``now`` counts as now.

    With ``detail`` the part of the day is named and the week's days by name, with digits beyond a week:
    ``this morning``, ``tonight``, ``last night``, ``yesterday evening``, ``Monday night``, ``12 days ago``,
    ``4mo ago`` (:func:`relative_age`) and ``in the future`` for a moment after ``now``."""
    if moment > now:
        if detail:
            return "in the future"
        moment = now
    local, here = moment.astimezone(tz), now.astimezone(tz)
    today = here.date()
    small_hours = local.hour < SMALL_HOURS_END
    night_of = local.date() - timedelta(days=1) if small_hours else local.date()
    tonight_of = today - timedelta(days=1) if here.hour < SMALL_HOURS_END else today  # in the small hours: still
    part = part_of_day(local.hour)  # the night before
    # days since the day the moment belongs to, counted for a night's moment from the present night
    nights = ((tonight_of if part == "night" else today) - night_of).days
    days = (today - local.date()).days  # local calendar days
    if detail:
        if nights == 0:
            return "tonight" if part == "night" else f"this {part}"
        if nights == 1:
            return "last night" if part == "night" else f"yesterday {part}"
        if nights < 7:
            return f"{night_of:%A} {part}"
        return f"{days} days ago" if days < 60 else relative_age(moment, now)
    if nights == 1 and part == "night":
        return "last night"
    if nights == 0 and part == "night" and here.hour < SMALL_HOURS_END:
        return "earlier tonight"
    if days == 0:
        return "earlier today"
    if days == 1:
        return "yesterday"
    return f"{duration_words(timedelta(days=days))} ago"


_TOKEN_PIECE = re.compile(r"[^\W\d_]+|\d+|[^\w\s]")
TOKEN_MARGIN = 1.1
""":func:`estimate_tokens` counts about 5-10 % fewer tokens than a WordPiece tokenizer on English prose: budgets
are met with this margin."""


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` costs an LLM (measured against a WordPiece tokenizer): a common word, a
    number or a punctuation mark one each, a long word more, each CJK or kana character one."""
    count = 0
    for piece in _TOKEN_PIECE.findall(text):
        if piece[0].isdigit():
            count += (len(piece) + 3) // 4
        elif piece[0].isalpha():
            wide = sum(1 for char in piece if unicodedata.east_asian_width(char) in "WF")
            count += wide + (len(piece) - wide + 5) // 6 if wide else 1 + max(0, len(piece) - 7) // 4
        else:
            count += 1
    return count


def _within(sections: list[Section], budget: int, reserved: int) -> list[Section]:
    """``sections`` without the lowest-priority ones (the later first among equals) until their text and scaffold
    fit ``budget`` tokens beside ``reserved`` (what the answer says anyway). The most needed section stays even
    when it alone does not fit: an answer emptied by its budget would say there is nothing to tell."""

    def cost(section: Section) -> int:
        lines = [section.text, *(item.text if isinstance(item, ScaffoldLine) else item for item in section.scaffold)]
        return estimate_tokens("\n".join(lines))

    kept = list(sections)
    total = reserved + sum(cost(section) for section in kept)
    for section in sorted(sections, key=lambda s: (s.priority, -s.order, s.key))[:-1]:
        if total * TOKEN_MARGIN <= budget:
            break
        kept.remove(section)
        total -= cost(section)
    if kept and total * TOKEN_MARGIN > budget:
        _log.warning(
            "section %s alone is over its answer's budget of %d tokens: kept, and the budget broken",
            kept[0].key,
            budget,
        )
    return kept


def compose_sections(
    results: Sequence[tuple[str, Any]],
    *,
    answer: str | None = None,
    budget: int | None = None,
    reserved: int = 0,
    claims: list[Claim] | None = None,
    resting: Callable[[Section], bool] | None = None,
    shown: Callable[[Sequence[Section]], None] | None = None,
) -> tuple[list[str], list[ScaffoldItem]]:
    """Order sections by (order, key); a plugin may return a Section, a str, or a list of them. With ``answer``
    (a name in ``ego_core.SLOTS``), a section that names one of its slots takes the slot's order and priority.
    With ``budget`` (tokens), the sections of lowest priority are left out until the rest fits beside
    ``reserved`` tokens. The ``on_shown`` of each section kept is called (one that raises is logged), and its
    claims are added to ``claims`` when given. ``resting`` leaves out the sections it says are resting
    (``Section.rest``) before the budget is counted; ``shown`` is told the sections kept."""
    sections: list[Section] = []
    owners: dict[int, str] = {}
    for plugin, result in results:
        items = result if isinstance(result, list | tuple) else [result]
        for item in items:
            if isinstance(item, Section):
                section = item if answer is None else placed(answer, item)
                sections.append(section)
                owners[id(section)] = plugin
            elif isinstance(item, str) and item.strip():
                sections.append(Section(key=plugin, text=item))
    if resting is not None:
        sections = [s for s in sections if not resting(s)]
    if budget is not None:
        sections = _within(sections, budget, reserved)
    sections.sort(key=lambda s: (s.order, s.key))
    for section in sections:
        if section.on_shown is not None:
            try:
                section.on_shown()
            except Exception:  # the answer is already composed: one plugin's follow-up must not lose it
                plugin = owners.get(id(section), "?")
                _log.error(
                    "plugin %s raised in on_shown of %s", plugin, section.key, exc_info=True, extra={FILE_ONLY: True}
                )
    texts = [s.text.rstrip() for s in sections if s.text.strip()]
    scaffold = [line for s in sections for line in s.scaffold]
    if claims is not None:
        claims.extend(claim for s in sections if s.text.strip() for claim in s.claims)
    if shown is not None:
        shown(sections)
    return texts, scaffold
