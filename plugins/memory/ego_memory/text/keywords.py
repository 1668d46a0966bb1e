"""The keywords of a half-remembered memory (fuzzy recall's gist). A private memory's keywords are private
content: the redactor masks them as it masks the memory's text (:mod:`ego_memory.text.privacy`)."""

from __future__ import annotations

from ego_memory.text.language import POS_NOUN, POS_PROPER, POS_WORD, tokens
from ego_memory.text.terms import STOPWORDS

KEYWORDS = 5
LATIN_MIN = 4
"""Letters of the shortest Latin keyword."""
CJK_MIN = 2
"""Characters of the shortest Japanese (or Chinese) keyword."""
NO_KEYWORDS = "fragments"


def keywords(content: str) -> list[str]:
    """At most :data:`KEYWORDS` distinct words of ``content``, the longest first (then alphabetical): Latin words
    of at least four letters, lower-cased, that are not stop words, and Japanese nouns (as Sudachi reads them) of
    at least two characters."""
    found: set[str] = set()
    for token in tokens(content):
        if token.pos == POS_WORD:
            word = token.normal
            if len(word) >= LATIN_MIN and word.isalpha() and word not in STOPWORDS:
                found.add(word)
        elif token.pos in {POS_NOUN, POS_PROPER} and len(token.surface) >= CJK_MIN and not token.surface.isascii():
            found.add(token.surface)
    return sorted(found, key=lambda word: (-len(word), word))[:KEYWORDS]


def gist(content: str) -> str:
    """The keywords of a half-remembered memory, as shown (:data:`NO_KEYWORDS` when there are none)."""
    return ", ".join(keywords(content)) or NO_KEYWORDS
