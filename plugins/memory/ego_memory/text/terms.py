"""Turning a free-text recall context into FTS5 queries.

The word index (``fts_words``, ``porter unicode61``) reads each memory's segmented text
(:func:`ego_memory.text.language.segmented`): Latin-script words as written, Japanese as Sudachi words. A query's
word terms are its Latin words (stop words dropped) and the content words of its Japanese (particles,
auxiliaries and symbols dropped unless nothing else is left), OR-ed, so BM25 ranks by how many rare terms
match: 詩 or 雨 alone finds the memories holding that word. Runs of CJK characters also go to the ``trigram``
index as overlapping 3-character windows (substrings, and words the segmenter reads differently).

A query word may also stand for other words (:func:`alternatives`): a Japanese proper noun for its reading in Latin
letters (宇治 for "uji", which the word index holds beside 宇治), and a word of the equivalents table
(:mod:`ego_memory.text.equivalents`) for the other words of its line (最初 for 初めて, "scolded" for 叱る). Recall
searches a reading as the name itself, a synonym at a lower weight, a word of the other language as evidence of
its own beside the embedding's (``recall.translation_weight``; in a store of both languages also as the word itself
would weigh, ``recall.across_languages``), and a memory holding an alternative of a cue holds that cue.
"""

from __future__ import annotations

import functools
import re

from ego_memory.text import equivalents, language

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
    """Which of ``cues`` (from :func:`cue_terms`) ``text`` holds, as whole words (Japanese: Sudachi words, and a
    proper noun's reading), or through one of the cue's :func:`alternatives` (an English one in any inflection)."""
    if not cues:
        return frozenset()
    words = _words(text)
    held = set()
    for cue in cues:
        whole, others, latin = _forms(cue)
        if whole & words or others & words or (latin and latin & _english_bases(text)):
            held.add(cue)
    return frozenset(held)


EQUIVALENT_SHARE = 0.5
"""How much of a cue a text holds through an equivalent only (a synonym, a word of the other language) in
:func:`cue_share`: "sunset" is not all of 「夕焼けがとてもきれいだった」 as 夕焼け is."""


def cue_share(cues: list[str], text: str) -> float:
    """The share of ``cues`` that ``text`` holds (0-1): a cue held as written or by a proper noun's reading counts
    whole, one held through an equivalent only (:mod:`ego_memory.text.equivalents`) :data:`EQUIVALENT_SHARE`."""
    if not cues:
        return 0.0
    words = _words(text)
    held = 0.0
    for cue in cues:
        whole, others, latin = _forms(cue)
        if whole & words:
            held += 1.0
        elif others & words or (latin and latin & _english_bases(text)):
            held += EQUIVALENT_SHARE
    return held / len(cues)


def cues_translated(cues: list[str], text: str) -> frozenset[str]:
    """Which of ``cues`` ``text`` holds only in the other language (:func:`translations`: 叱る for "scolded",
    "scold" in any inflection for 叱る): not as written, nor through a synonym or a proper noun's reading."""
    words = _words(text)
    held = set()
    for cue in cues:
        whole, others, latin = _forms(cue)
        across = translations(cue)
        if not across or whole & words or (others - across) & words:
            continue
        if across & words or (latin and latin & _english_bases(text)):
            held.add(cue)
    return frozenset(held)


@functools.lru_cache(maxsize=8192)
def _forms(cue: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """A cue's words as a text may hold them: (the cue itself and a proper noun's reading, its equivalents, its
    English equivalents, which a text may hold inflected)."""
    whole = frozenset(word for word in (cue, latin_reading(cue)) if word)
    others = alternatives(cue) - whole
    return whole, others, frozenset(word for word in others if not has_cjk(word))


@functools.lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    """Every word of ``text`` as cues are written (read once per text: recall ranks one candidate set often)."""
    normal = language.normalize(text)
    japanese = (word for t in language.japanese_tokens(normal) for word in (t.normal, t.latin) if word)
    return frozenset([*_latin_terms(normal, language.CJK), *japanese])


@functools.lru_cache(maxsize=8192)
def _english_bases(text: str) -> frozenset[str]:
    """The base forms the Latin words of ``text`` may have (scolded → scold): what an English alternative meets."""
    return frozenset(
        base
        for word in _latin_terms(language.normalize(text), language.CJK)
        for base in equivalents.english_bases(word)
    )


@functools.lru_cache(maxsize=8192)
def latin_reading(term: str) -> str:
    """The reading in Latin letters of a query term that is one Japanese proper noun (宇治 → uji), else empty."""
    if not has_cjk(term):
        return ""
    read = language.japanese_tokens(term)
    return read[0].latin if len(read) == 1 else ""


@functools.lru_cache(maxsize=8192)
def alternatives(term: str) -> frozenset[str]:
    """The other words that stand for a query term (from :func:`word_terms`) in the word index: for a Japanese
    word, its reading when it is a proper noun (:func:`latin_reading`; the index holds a proper noun's reading
    beside it, :func:`ego_memory.text.language.segmented`) and the other words of its lines in the equivalents table
    (最初 → 初めて, 初め, first); for a Latin word, the Japanese words of its lines (scolded → 叱る, 叱責, 怒る)."""
    if not has_cjk(term):
        return equivalents.of_english(term)
    found = set(equivalents.of_japanese(term))
    if reading := latin_reading(term):
        found.add(reading)
    found.discard(term)
    return frozenset(found)


@functools.lru_cache(maxsize=8192)
def translations(term: str) -> frozenset[str]:
    """The equivalents of a query term in the other language: a Latin word's Japanese words, a Japanese word's
    English ones (the reading of a proper noun is the name itself, not a translation)."""
    return frozenset(word for word in alternatives(term) - {latin_reading(term)} if has_cjk(word) != has_cjk(term))


def synonyms(terms: list[str]) -> list[str]:
    """The equivalents of ``terms`` in their own language (a Japanese word's Japanese synonyms: 最初 → 初めて, 初め)
    that are not among them, distinct, in order."""
    own = set(terms)
    found: dict[str, None] = {}
    for term in terms:
        found.update(dict.fromkeys(sorted(alternatives(term) - translations(term) - own - {latin_reading(term)})))
    return list(found)


def translated(terms: list[str]) -> list[str]:
    """The :func:`translations` of ``terms`` that are not among them, distinct, in order."""
    own = set(terms)
    found: dict[str, None] = {}
    for term in terms:
        found.update(dict.fromkeys(sorted(translations(term) - own)))
    return list(found)


def readings_query(terms: list[str]) -> str:
    """An FTS5 expression matching the memories that hold the reading of a proper noun among ``terms`` but not the
    noun itself (``"uji" NOT "宇治"``: a memory in romaji; one holding 宇治 matches 宇治 already); empty when no
    term has a reading (or only one that is a term of its own)."""
    own = set(terms)
    return " OR ".join(
        f"({_quote(reading)} NOT {_quote(term)})"
        for term in terms
        if (reading := latin_reading(term)) and reading not in own
    )


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
