"""What the workspace files say: entry lines, markers, the inner-monologue file. Pure functions.

Every entry line ends with exactly one marker ``[id:mem_…]`` written here; nothing a memory's content says can
add a second one or start a new line:

- content (and every other memory field) is folded onto one line: every line break Python knows (``\\n``,
  ``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028, U+2029) and every other control character
  becomes a single space (the ideographic space U+3000 of Japanese text is kept as it is), and the bidirectional
  embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069) are dropped, so no reordered text can
  pass for a marker on screen;
- every ``[`` that starts something marker-like (``[id:``, ``[ ID :`` …, any case) becomes ``(``, so the only
  ``[id:`` on a line is the trailing one. Look-alikes count as what they normalise to (NFKC, case-folded, with
  format characters and combining marks left out): ``［ｉｄ：``, ``﹇id:`` or ``[`` + ZERO WIDTH SPACE + ``id:``
  are marker-like too (a full-width bracket becomes ``（``);
- the memory id is checked against ``mem_`` + 12 hex digits before it goes into a marker.

All text passes through the redaction pipeline (secrets, private memories' text); a rendering that the
pipeline changed in a way that breaks these rules is refused rather than written.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from datetime import date, tzinfo

import attrs

from ego_core import Memory

Redact = Callable[[str], str]

MEMORY_ID = re.compile(r"^mem_[0-9a-f]{12}$")
CURATED_IMPORTANCE = 4
CURATED_CATEGORIES = frozenset({"introspection", "relationship", "self_discovery", "lesson"})
INTROSPECTION = "introspection"
MAX_PREVIOUS = 5
"""How many earlier inner monologues the file remembers (by id), to fall back to when the latest is forgotten."""

_MARKER_LIKE = re.compile(r"\[(?=\s*id\s*:)", re.IGNORECASE)
"""Marker-like text, looked for in a line's skeleton (:func:`_skeleton`)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
_SPACES = re.compile(r"[^\S\u3000]+")
"""Runs of whitespace but the ideographic space U+3000 (Japanese text's own, never a line break)."""
_EDGES = re.compile(r"^[^\S\u3000]+|[^\S\u3000]+$")
_TRAILING = re.compile(r"[^\S\u3000]+$")
_INVISIBLE = frozenset({"Cf", "Mn", "Me"})
_MONOLOGUE_HEAD = re.compile(
    r"^<!-- ego-workspace-sync inner-monologue id=(mem_[0-9a-f]{12})"
    r"(?: previous=(mem_[0-9a-f]{12}(?:,mem_[0-9a-f]{12})*))? -->$"
)


class RenderError(ValueError):
    """A memory cannot be rendered safely (malformed id, or redaction broke the line's structure)."""


class PrivateMemoryError(ValueError):
    """A private memory was handed to something that writes workspace files. Private memories never are."""

    def __init__(self, memory_id: str) -> None:
        shown = memory_id if MEMORY_ID.match(memory_id) else "a memory"
        super().__init__(f"refusing to write private memory {shown} to the workspace")
        self.memory_id = memory_id


def refuse_private(memory: Memory) -> None:
    if memory.is_private:
        raise PrivateMemoryError(memory.id)


def marker(memory_id: str) -> str:
    """``[id:mem_…]`` for a well-formed memory id."""
    if not MEMORY_ID.match(memory_id):
        raise RenderError("a memory id is mem_ followed by 12 hex digits")
    return f"[id:{memory_id}]"


def fold(text: str) -> str:
    """One line: control characters and every kind of line break become spaces, runs of space one space (U+3000
    is kept), bidirectional embedding/override/isolate controls are dropped."""
    return _SPACES.sub(" ", _CONTROL.sub(" ", _BIDI.sub("", text))).strip()


def neutralise(text: str) -> str:
    """Turn every marker-like ``[id:`` (any case, any spacing, or a look-alike: :func:`_skeleton`) into ``(id:``
    (a full-width ``［`` into ``（``) so content cannot spoof a marker."""
    starts = _marker_starts(text)
    if not starts:
        return text
    return "".join(_paren(char) if at in starts else char for at, char in enumerate(text))


def _paren(bracket: str) -> str:
    return "（" if unicodedata.east_asian_width(bracket) in "WF" else "("


def _skeleton(text: str) -> tuple[str, list[int]]:
    """``text`` as it reads: each character NFKC-normalised and case-folded, format characters (zero-width
    spaces, joiners) and combining marks left out; with the index in ``text`` each skeleton character came from."""
    chars: list[str] = []
    origins: list[int] = []
    for at, char in enumerate(text):
        if unicodedata.category(char) in _INVISIBLE:
            continue
        for part in unicodedata.normalize("NFKC", char).casefold():
            if unicodedata.category(part) not in _INVISIBLE:
                chars.append(part)
                origins.append(at)
    return "".join(chars), origins


def _marker_starts(text: str) -> set[int]:
    """Where in ``text`` marker-like ``[id:`` begin (the indices of their brackets)."""
    if text.isascii():
        return {found.start() for found in _MARKER_LIKE.finditer(text)}
    skeleton, origins = _skeleton(text)
    return {origins[found.start()] for found in _MARKER_LIKE.finditer(skeleton)}


def one_line(text: str, redact: Redact) -> str:
    """``text`` redacted (in its original and in its folded form), folded and neutralised."""
    return neutralise(fold(redact(fold(redact(text)))))


def is_curated(memory: Memory) -> bool:
    return memory.importance >= CURATED_IMPORTANCE or memory.category in CURATED_CATEGORIES


def local_day(memory: Memory, tz: tzinfo) -> date:
    return memory.timestamp.astimezone(tz).date()


def entry_line(memory: Memory, *, tz: tzinfo, redact: Redact, with_date: bool = False) -> str:
    """``- 14:05 [daily] <content> (emotion: curious, intensity: 0.60) [id:mem_…]`` (no newline).

    ``with_date`` puts the local date before the time (``MEMORY.md`` is not one file per day).
    """
    refuse_private(memory)
    tail = marker(memory.id)
    local = memory.timestamp.astimezone(tz)
    stamp = local.strftime("%Y-%m-%d %H:%M" if with_date else "%H:%M")
    trace = memory.emotional_trace
    body = (
        f"- {stamp} [{one_line(memory.category, redact)}] {one_line(memory.content, redact)} "
        f"(emotion: {one_line(trace.primary, redact)}, intensity: {trace.intensity:.2f})"
    )
    line = redact(f"{body} {tail}")
    if not is_entry_line(line, memory.id):
        raise RenderError(f"redaction changed the structure of the entry for {memory.id}; it was not written")
    return line


def is_entry_line(line: str, memory_id: str) -> bool:
    """One line, ending with the memory's marker, and no other marker-like text."""
    tail = marker(memory_id)
    if _CONTROL.search(line) or _BIDI.search(line) or len(line.splitlines()) != 1 or not line.endswith(f" {tail}"):
        return False
    return not _marker_starts(line[: -len(tail)])


def carries_marker(line: bytes, memory_id: str) -> bool:
    """Whether a file line is an entry of ``memory_id``: it ENDS with the exact marker (trailing spaces aside)."""
    return line.rstrip(b" \t\r").endswith(marker(memory_id).encode("ascii"))


def daily_header(day: date) -> str:
    return f"# {day.isoformat()}\n\n"


CURATED_HEADER = "# MEMORY\n\nCurated memories, mirrored by ego.\n\n"


# --------------------------------------------------------------------------------------------------
# The inner monologue


@attrs.frozen
class MonologueHead:
    """The first line of ``inner-monologue-latest.md``: whose monologue it is, and the earlier ones."""

    memory_id: str
    previous: tuple[str, ...] = ()

    def render(self) -> str:
        marker(self.memory_id)
        for memory_id in self.previous:
            marker(memory_id)
        previous = f" previous={','.join(self.previous)}" if self.previous else ""
        return f"<!-- ego-workspace-sync inner-monologue id={self.memory_id}{previous} -->"

    @classmethod
    def parse(cls, first_line: str) -> MonologueHead | None:
        found = _MONOLOGUE_HEAD.match(first_line.rstrip("\r"))
        if found is None:
            return None
        previous = tuple(found.group(2).split(",")) if found.group(2) else ()
        return cls(memory_id=found.group(1), previous=previous)


def monologue_text(memory: Memory, *, tz: tzinfo, redact: Redact, previous: Sequence[str] = ()) -> str:
    """The whole ``inner-monologue-latest.md`` for ``memory``: the id comment, a header with the time, the content.

    The content keeps its line breaks but is quoted (every line starts with ``>``), so none of its lines can pass
    for an entry; marker-like ``[id:`` is neutralised, other control characters become spaces, bidirectional
    controls are dropped; a Japanese paragraph's indent (U+3000) is kept.
    """
    refuse_private(memory)
    chain = tuple(dict.fromkeys(i for i in previous if i != memory.id))[:MAX_PREVIOUS]
    head = MonologueHead(memory.id, chain).render()
    stamp = memory.timestamp.astimezone(tz).strftime("%Y-%m-%d %H:%M")
    text = _EDGES.sub("", _BIDI.sub("", redact(memory.content)))
    lines = [neutralise(_TRAILING.sub("", _CONTROL.sub(" ", line))) for line in text.splitlines()]
    # The quoted block is redacted once more as a whole (a private text may span the folded lines); the head
    # and the header are ours, built from the id and the time, so the pipeline never gets to rewrite them.
    content = redact("\n".join(f"> {line}" if line else ">" for line in lines))
    if any(line and not line.startswith(">") for line in content.split("\n")):
        raise RenderError(f"redaction changed the quoting of the inner monologue for {memory.id}; it was not written")
    return f"{head}\n# Inner monologue ({stamp})\n\n{content}\n"
