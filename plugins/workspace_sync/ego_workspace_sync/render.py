"""What the workspace files say: entry lines, markers, the inner-monologue file. Pure functions.

Every entry line ends with exactly one marker ``[id:mem_…]`` written here; nothing a memory's content says can
add a second one or start a new line:

- content (and every other memory field) is folded onto one line: every line break Python knows (``\\n``,
  ``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028, U+2029) and every other control character
  becomes a single space;
- every ``[`` that starts something marker-like (``[id:``, ``[ ID :`` …, any case) becomes ``(``, so the only
  ``[id:`` on a line is the trailing one;
- the memory id is checked against ``mem_`` + 12 hex digits before it goes into a marker.

All text passes through the redaction pipeline (secrets, private memories' text); a rendering that the
pipeline changed in a way that breaks these rules is refused rather than written.
"""

from __future__ import annotations

import re
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
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
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
    """One line: control characters and every kind of line break become spaces, runs of space one space."""
    return " ".join(_CONTROL.sub(" ", text).split())


def neutralise(text: str) -> str:
    """Turn every marker-like ``[id:`` (any case, any spacing) into ``(id:`` so content cannot spoof a marker."""
    return _MARKER_LIKE.sub("(", text)


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
    if _CONTROL.search(line) or len(line.splitlines()) != 1 or not line.endswith(f" {tail}"):
        return False
    return _MARKER_LIKE.search(line[: -len(tail)]) is None


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
    for an entry; marker-like ``[id:`` is neutralised and other control characters become spaces.
    """
    refuse_private(memory)
    chain = tuple(dict.fromkeys(i for i in previous if i != memory.id))[:MAX_PREVIOUS]
    head = MonologueHead(memory.id, chain).render()
    stamp = memory.timestamp.astimezone(tz).strftime("%Y-%m-%d %H:%M")
    lines = [neutralise(_CONTROL.sub(" ", line).rstrip()) for line in redact(memory.content).strip().splitlines()]
    # The quoted block is redacted once more as a whole (a private text may span the folded lines); the head
    # and the header are ours, built from the id and the time, so the pipeline never gets to rewrite them.
    content = redact("\n".join(f"> {line}" if line else ">" for line in lines))
    if any(line and not line.startswith(">") for line in content.split("\n")):
        raise RenderError(f"redaction changed the quoting of the inner monologue for {memory.id}; it was not written")
    return f"{head}\n# Inner monologue ({stamp})\n\n{content}\n"
