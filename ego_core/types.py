"""Frozen value types passed to and returned from hooks.

Every hook argument is one of these (or a plain str/int); plugins never receive mutable state that belongs
to another plugin. Return new values instead of changing the ones you were given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any, Literal

import attrs


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


def _str_tuple(value: Iterable[str] | None) -> tuple[str, ...]:
    return tuple(value or ())


def _name_set(value: Iterable[str]) -> frozenset[str]:
    return frozenset(value)


# --------------------------------------------------------------------------------------------------
# Claims

LINE_REST = timedelta(hours=36)
"""The usual ``Section.rest``: a standing line (a mood, a conviction) shown at most every other day or so, and
so in under half the answers of a tool."""


ClaimKind = Literal[
    "together", "apart", "reunion", "lonely", "time", "quote", "desire", "bond", "recalled", "anticipation"
]
CLAIM_KINDS: tuple[ClaimKind, ...] = (
    "together",
    "apart",
    "reunion",
    "lonely",
    "time",
    "quote",
    "desire",
    "bond",
    "recalled",
    "anticipation",
)


@attrs.frozen
class Claim:
    """What one sentence of an answer states, as the structured fact it was rendered from: what ``ego bench life``
    holds against what really happened, never by reading the words. Sections and responses carry them
    (``Section.claims``, ``Response.claims``); with ``EGO_CLAIMS=1`` the server adds them to each tool result's
    ``_meta["ego/claims"]``.

    The kinds and what each asserts:

    - ``together``: ``person`` and the agent shared the moment ``at`` (memory ``memory_id``).
    - ``apart``: ``person`` has been away since ``at`` (their last shared moment), longer than usual.
    - ``reunion``: ``person`` came back at ``at`` (memory ``memory_id``), after ``value`` seconds apart.
    - ``lonely``: the agent feels lonely now (``value``: the level of the desire worded so).
    - ``time``: ``words`` say when ``at`` was (memory ``memory_id`` when it is one), ``value`` local calendar days
      before now.
    - ``quote``: ``words`` are shown from memory ``memory_id`` (``whole``: the text they come from); with
      ``person`` the quote is said to be shared with them.
    - ``desire``: the desire ``words`` is felt at level ``value``.
    - ``bond``: the bond with ``person`` is at ``value`` (0-1), said as ``words``.
    - ``recalled``: the memories ``memory_ids`` are listed, best first.
    - ``anticipation``: memory ``memory_id`` looks forward to ``at``.
    """

    kind: ClaimKind
    person: str = ""
    memory_id: str = ""
    at: datetime | None = None
    value: float | None = None
    words: str = ""
    whole: str = ""
    memory_ids: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)


# --------------------------------------------------------------------------------------------------
# Memories


EMOTIONS: tuple[str, ...] = (
    "happy",
    "sad",
    "surprised",
    "moved",
    "excited",
    "nostalgic",
    "curious",
    "neutral",
    "melancholy",
    "anxious",
    "contentment",
    "frustrated",
)
"""The emotions remember accepts (an ``EmotionalTrace``'s ``primary`` and ``secondary``), in the order its
answers list them; an unknown label is stored as neutral."""


@attrs.frozen
class EmotionalTrace:
    primary: str = "neutral"
    secondary: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    intensity: float = 0.3
    valence: float = 0.0
    arousal: float = 0.3
    body_state: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping)


LinkType = Literal["similar", "caused_by", "leads_to", "related"]
LINK_TYPES: tuple[LinkType, ...] = ("similar", "caused_by", "leads_to", "related")


@attrs.frozen
class MemoryLink:
    target_id: str
    link_type: LinkType = "related"
    confidence: float = 0.5
    note: str = ""


@attrs.frozen
class Memory:
    """A stored memory. ``timestamp`` and ``last_accessed`` are timezone-aware UTC."""

    id: str
    content: str
    timestamp: datetime
    emotional_trace: EmotionalTrace = attrs.field(factory=EmotionalTrace)
    importance: int = 3
    category: str = "daily"
    tags: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    links: tuple[MemoryLink, ...] = ()
    is_private: bool = False
    access_count: int = 0
    last_accessed: datetime | None = None
    anticipated: datetime | None = None
    """The future moment this memory looks forward to (UTC), or None. Until then it does not fade."""


@attrs.frozen
class RememberDraft:
    """A memory about to be stored, as given to ``before_remember`` (already validated and normalised)."""

    content: str
    emotion: str = "neutral"
    secondary: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    intensity: float = 0.3
    valence: float = 0.0
    arousal: float = 0.3
    importance: int = 3
    category: str = "daily"
    tags: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    is_private: bool = False
    force: bool = False
    body_state: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping)
    anticipated: datetime | None = None
    together: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    """Who shared the moment, as the agent said (remember's ``with``): given to ``on_remember``, and the evidence
    of presence that outranks what the text seems to say."""
    """The future moment the memory looks forward to (UTC), or None."""


@attrs.frozen
class RecallQuery:
    context: str
    n_results: int = 3
    emotion_filter: str | None = None
    category_filter: str | None = None
    date_from: datetime | None = None
    date_to: datetime | None = None
    valence_range: tuple[float, float] | None = None
    arousal_range: tuple[float, float] | None = None


@attrs.frozen
class RecallHit:
    memory: Memory
    score: float
    """The ranking score (order only: it mixes similarity, words, recency, emotion and links)."""
    relevance: float | None = None
    """How closely the memory matches the context, 0-1, comparable across queries (what recall shows as score);
    None when the ranking did not measure it."""
    unbidden: bool = False
    """The memory came back on its own (a dormant memory near the context, by chance), not as one of the best
    matches; ``on_memory_surfaced(how="involuntary")`` has told of it."""
    linked: bool = False
    """Spreading activation brought it along a link from a match; it is not related to the context itself."""


@attrs.frozen
class RecallNote:
    """What an ``on_recall_result`` implementation returns: extra response lines and optional re-ranking.

    ``boosts`` maps memory ids among the results to an additive score change; the results are re-sorted.
    """

    lines: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)
    boosts: Mapping[str, float] = attrs.field(factory=dict, converter=_frozen_mapping)


SurfacedHow = Literal["involuntary", "echo"]
"""How a memory came back unbidden: ``involuntary`` (recall or wake_up brought up a dormant memory nobody asked
for) or ``echo`` (a new memory echoed a dormant one)."""


@attrs.frozen
class Ember:
    """A short fragment that still smoulders, offered for wake_up's ``Embers:`` (the core shows the two warmest)."""

    text: str
    """One short line (about 60 characters), never a private memory's words."""
    warmth: float
    """0-1: how strongly it smoulders (an intense memory's intensity, 0.5 for a desire of the moment, ...)."""
    claims: tuple[Claim, ...] = ()
    """What the fragment states (a ``quote`` of the memory it comes from), kept when it is shown."""


@attrs.frozen
class ConsolidationRun:
    """The window a ``consolidate`` call replayed, given to ``on_consolidate``."""

    since: datetime
    until: datetime
    recent_ids: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple)


# --------------------------------------------------------------------------------------------------
# Responses and composed tools


@attrs.frozen
class ScaffoldLine:
    """One line of scaffold text. It is shown only when every tool it names in ``needs`` is served."""

    text: str
    needs: frozenset[str] = attrs.field(default=frozenset(), converter=_name_set)


ScaffoldItem = str | ScaffoldLine


@attrs.frozen
class Response:
    """A tool's answer: a little dynamic data, then scaffold lines after ``---``.

    ``declined`` marks an answer where the tool deliberately did nothing (a near-duplicate that was not
    saved): it is not an error, but ``on_tool_called`` reactions such as desire satisfaction skip it.
    """

    data: str
    scaffold: tuple[ScaffoldItem, ...] = ()
    declined: bool = False
    hinted: bool = False
    """The scaffold already holds what ``scaffold_for`` adds (the composed tools gather it first, to fit their
    budget); the server does not ask again."""
    claims: tuple[Claim, ...] = ()
    """The facts the answer states (:class:`Claim`)."""


@attrs.frozen
class Section:
    """A block of a composed answer (``wake_up``, ``introspect``, ``attune``, ``consolidate``, the core's prompts).

    Sections are shown in ascending ``order``; ties are broken by ``key``. Scaffold lines are appended to the
    composed response's scaffold. When a composed answer would be longer than its token budget (wake_up 150,
    attune 200, introspect 400), the sections of lowest ``priority`` are left out first, with their scaffold.

    A built-in plugin's section names its ``slot``: the answer's slot table (``ego_core.SLOTS``) gives it its
    ``order`` and ``priority``, declared once for all plugins. A third-party section names no slot and places
    itself by ``order`` and ``priority``: with the defaults (100 and 50) it comes after every built-in section
    (their orders are below 100; only the prompts' closing line comes later); an ``order`` between two slots'
    orders puts it between them.
    """

    key: str
    text: str
    order: int = 100
    scaffold: tuple[ScaffoldItem, ...] = ()
    priority: int = 50
    """0-100: how much the agent needs this section when not everything fits (what continues its thought and
    what happens once ~80-90; the body sense or a pointer to another tool ~20-30)."""
    claims: tuple[Claim, ...] = ()
    """The facts its sentences state (:class:`Claim`), kept only when the section is shown."""
    rest: timedelta | None = None
    """Once shown, the very same words give way in that tool for this long (a conviction, a standing mood): the
    agent is not told the same sentence every day. None: shown whenever it is offered."""
    on_shown: Callable[[], object] | None = attrs.field(default=None, eq=False, repr=False)
    """Called once the section is part of the answer the agent gets, never when the budget left it out: what
    showing it uses up (an impulse felt, a reunion told) is done here."""
    slot: str | None = None
    """The built-in slot the section fills: when the answer composed has a slot of this name (``ego_core.SLOTS``),
    its order and priority are the slot's, not ``order`` and ``priority``. None: placed by those two."""


@attrs.frozen
class ScaffoldContext:
    """Given to ``scaffold_for``: the tool being answered, its arguments and the response data so far."""

    tool: str
    arguments: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_mapping)
    data: str = ""


@attrs.frozen
class ToolOutcome:
    """Given to ``on_tool_called`` after every tool call.

    ``declined``: the tool answered without doing what was asked (e.g. a duplicate was not saved); a reaction
    meant for the effect of the call (desire satisfaction) should skip it, as it skips errors.
    """

    plugin: str
    is_error: bool = False
    text: str = ""
    declined: bool = False


ToolResult = Response | str
ToolHandler = Callable[[Mapping[str, Any], Any], ToolResult | Awaitable[ToolResult]]
"""``handler(args, ctx)``: the validated arguments and the ``PluginContext`` of the plugin that registered the tool
(typed ``Any`` here, as ``Command.run``'s host is: this module sits below the kernel that defines it)."""
LogView = Callable[[Mapping[str, Any]], Mapping[str, Any]]


@attrs.frozen
class Tool:
    """An MCP tool contributed through ``register_tools``.

    ``input_schema`` is a JSON Schema object; the core validates arguments against it, fills top-level
    ``default`` values, and calls ``handler(args, ctx)`` with the result and the registering plugin's context
    (the one its hooks receive). Sync handlers run in a worker thread.
    The ``tool_call`` log record holds each argument's name, type and size; with ``EGO_LOG_ARGUMENTS=1`` a
    valid call logs the values instead (through the redaction pipeline), or what ``log_view`` makes of them.
    ``needs`` names plugins the tool cannot work without: it is served only while every one of them is enabled
    and running (a plugin that merely uses another when present does not name it).
    ``tier``: ``"surface"`` (listed first), ``"backend"`` (reached through scaffolds), or ``"owner"``: never
    offered to an agent (not listed, an agent's call is an unknown tool), run only by the owner's own surfaces
    (``ToolRunner(host, owner=True)``: the dashboard) through the same validation, hooks and log.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: ToolHandler
    tier: Literal["surface", "backend", "owner"] = "backend"
    log_view: LogView | None = None
    needs: frozenset[str] = attrs.field(default=frozenset(), converter=_name_set)


# --------------------------------------------------------------------------------------------------
# Redaction, CLI, doctor, export


Redact = Callable[[str], str]


@attrs.frozen
class Redactor:
    """A redaction rule. Lower ``order`` runs first; the core's secret rules run at order 100."""

    name: str
    redact: Redact
    order: int = 500


@attrs.frozen
class Command:
    """A CLI command contributed through ``register_commands`` (``ego <group> <name>``, or ``ego <name>``).

    ``configure`` adds arguments to an ``argparse`` parser; ``run`` receives the parsed namespace and the
    host and returns the exit code. The host is started for ``run`` (and stopped afterwards) unless
    ``starts_host`` is false: then no ``on_startup`` runs and no plugin opens its store, for commands that
    build what they need themselves (benchmarks on their own temporary stores).
    """

    name: str
    help: str
    configure: Callable[[Any], None]
    run: Callable[[Any, Any], int]
    group: str | None = None
    starts_host: bool = True


@attrs.frozen
class Check:
    """One line of ``ego doctor``."""

    name: str
    ok: bool
    detail: str = ""
