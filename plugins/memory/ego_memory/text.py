"""Turning a free-text recall context into FTS5 queries.

The word index (``fts_words``, ``porter unicode61``) reads each memory's segmented text
(:func:`ego_memory.language.segmented`): Latin-script words as written, Japanese as Sudachi words. A query's
word terms are its Latin words (stop words dropped) and the content words of its Japanese (particles,
auxiliaries and symbols dropped unless nothing else is left), OR-ed, so BM25 ranks by how many rare terms
match: 詩 or 雨 alone finds the memories holding that word. Runs of CJK characters also go to the ``trigram``
index as overlapping 3-character windows (substrings, and words the segmenter reads differently).
"""

from __future__ import annotations

import functools
import re

from ego_memory import language

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff\uff66-\uff9f]+")

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
    few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
    him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
    mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't
    she she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then
    there there's these they they'd they'll they're they've this those through to too under until up very was
    wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who who's
    whom why why's with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
    also just yes yeah oh ok okay really like get got go going went gone thing things kind sort
    """.split()
)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def word_terms(text: str) -> list[str]:
    """The word-index terms of ``text`` (NFKC): its distinct non-stop-word Latin/number tokens, lower-cased, in
    order, then the distinct normalised forms of its Japanese content words, in order (its Japanese function
    words instead when nothing else is left, so a query of particles alone still asks for something)."""
    text = language.normalize(text)
    terms = dict.fromkeys(_latin_terms(text, language.CJK))
    japanese = language.japanese_tokens(text)
    content = [t.normal for t in japanese if t.pos in language.CONTENT_POS]
    if not terms and not content:
        content = [t.normal for t in japanese]
    terms.update(dict.fromkeys(content))
    return list(terms)


def _latin_terms(text: str, cjk: re.Pattern[str] = _CJK) -> list[str]:
    """Distinct non-stop-word Latin/number tokens of ``text`` outside CJK runs, lower-cased, in order."""
    outside_cjk = cjk.sub(" ", text)
    terms: dict[str, None] = {}  # an ordered set: linear in the length of the text
    for match in _WORD.finditer(outside_cjk):
        word = match.group(0).lower().replace("’", "'")
        base = word.split("'", 1)[0]
        if word in STOPWORDS or base in STOPWORDS or (len(base) < 2 and not base.isdigit()):
            continue
        terms[base] = None
    return list(terms)


def cjk_trigrams(text: str) -> list[str]:
    """Distinct 3-character windows of every CJK run.

    Runs shorter than 3 characters cannot be matched by the trigram index and are left to the dense search.
    """
    grams: dict[str, None] = {}  # an ordered set: linear in the length of the text
    for run in _CJK.findall(text):
        for i in range(len(run) - 2):
            grams[run[i : i + 3]] = None
    return list(grams)


HEDGES = frozenset("might likely unlikely considered probably possibly maybe perhaps".split())
"""Words that hedge a question ("Would she likely…", "What might he…") without naming anything asked about."""


def fts_or(terms: list[str]) -> str:
    """An FTS5 expression matching any of ``terms`` (each quoted, so no term is read as syntax)."""
    return " OR ".join(_quote(t) for t in terms)


def trigram_terms(text: str) -> list[str]:
    """Trigram-index terms: CJK windows plus Latin tokens of 3+ characters (exact substrings, e.g. XQZ-4471)."""
    return [*cjk_trigrams(text), *(t for t in _latin_terms(text) if len(t) >= 3)]


def words_query(text: str) -> str:
    return fts_or(word_terms(text))


def trigram_query(text: str) -> str:
    return fts_or(trigram_terms(text))


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def cue_terms(text: str) -> list[str]:
    """The retrieval cues of a recall context: its word terms (Latin words, Japanese content words), in order."""
    return word_terms(text)


def cues_in(cues: list[str], text: str) -> frozenset[str]:
    """Which of ``cues`` (from :func:`cue_terms`) ``text`` holds, as whole words (Japanese: Sudachi words)."""
    if not cues:
        return frozenset()
    words = _words(text)
    return frozenset(cue for cue in cues if cue in words)


@functools.lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    """Every word of ``text`` as cues are written (read once per text: recall ranks one candidate set often)."""
    normal = language.normalize(text)
    return frozenset([*_latin_terms(normal, language.CJK), *(t.normal for t in language.japanese_tokens(normal))])


_LABEL = re.compile(r"\s*([^\W\d_][^:\n]{0,40}?):\s")
_ASKS_WHEN = re.compile(
    r"\b(when|what (date|day|year|month|time|week)|how long|which (year|month|day|week))\b", re.IGNORECASE
)
_TIME_EXPRESSION = re.compile(
    r"\b(yesterday|today|tomorrow|tonight|ago|last|next|recently|since|weekend|week|month|year|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"(19|20)\d\d)\b",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=16384)
def label_terms(content: str) -> frozenset[str]:
    """The terms of a leading ``<label>: `` (a speaker or a source, at most four words), else nothing (read once
    per text, like :func:`_words`)."""
    found = _LABEL.match(content)
    if found is None or len(found.group(1).split()) > 4:
        return frozenset()
    return frozenset(word_terms(found.group(1)))


def asks_when(context: str) -> bool:
    """Whether a context asks for a time (when, what date, how long, which year, ...)."""
    return _ASKS_WHEN.search(context) is not None


@functools.lru_cache(maxsize=16384)
def has_time_expression(text: str) -> bool:
    """Whether a text says when something happened (a relative day or week, a weekday, a month, a year)."""
    return _TIME_EXPRESSION.search(text) is not None
