"""The ``desires`` plugin: nine abstract desires that rise with time, are satisfied explicitly or by
using tools, and are coloured by recent memories, the body sense and fading questions.

- tools ``feel_desires`` (surface), ``satisfy_desire`` and ``configure_desires`` (backend);
- a one-line feeling in ``wake_up``, a short section in ``introspect`` and the desire currents and current
  interests in ``attune`` (order 20 in each); emergent desires arise in ``attune``;
- implicit satisfaction in ``on_tool_called`` (the ``implicit`` table and the catalog's rules), satisfaction
  signals in ``on_remember``, and the cascade to emergent desires;
- impulses from memories that came back unbidden (``on_memory_surfaced``), felt once by the next levels the
  agent sees; the companion's long absence raises social_thirst; alive emergent desires are wake_up embers;
- company as a lived satisfaction: the last moment shared with the companion (the self-model's ``People``
  service) satisfies social_thirst, resonance and recognition and holds them while you are together, and
  loneliness is worded only in time alone;
- a sentence said in the last few wake_ups, attunes or introspects yields to another made from facts, or to
  silence (digests of what was said are kept in the store);
- the desire catalog (words, signals, cascade, rules) in ``<data dir>/desires/catalog.json``;
- the service ``desires.levels`` (:class:`ego_desires.api.DesireLevels`) for the self-model;
- state in ``<data dir>/desires/desires.sqlite3``, exported and imported with ``ego export`` / ``ego import``.

Nothing maps a desire to an action: the responses say how the desires feel and ask, and the agent decides.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import attrs

from ego_core import (
    MEMORY_STORE,
    Check,
    Claim,
    DatabaseVersionError,
    Ember,
    ImportFormat,
    InvalidArgumentError,
    Memory,
    MemoryService,
    PluginBase,
    PluginContext,
    Response,
    ScaffoldLine,
    Section,
    SurfacedHow,
    Tool,
    ToolError,
    ToolOutcome,
    hookimpl,
)
from ego_desires import importer, portable
from ego_desires.api import DESIRE_LEVELS, DesireSample
from ego_desires.attune import (
    LONELY,
    Current,
    Spoken,
    fact_sentences,
    fixed_currents,
    interests,
    interests_line,
    speak_currents,
)
from ego_desires.catalog import DESIRES, desire_name
from ego_desires.config import DesiresConfig, band
from ego_desires.curve import (
    EXPLICIT,
    INITIAL,
    SHARED,
    TOOL_PREFIX,
    Anchor,
    base_level,
    blended_quality,
    position,
    satisfied_position,
)
from ego_desires.emergent import EmergentRow, alive, called_up, from_flow, life_stage
from ego_desires.impulses import capped, impulse_of
from ego_desires.inputs import companion_absence, gather
from ego_desires.levels import (
    Reading,
    Snapshot,
    initial_anchor,
    lived,
    satisfied_anchor,
    shared_satisfaction,
    snapshot,
    together,
)
from ego_desires.mcp_surface import DesiresSurface
from ego_desires.modulation import Inputs
from ego_desires.render import (
    COMPANION_SCAFFOLD,
    FACTOR_WORDS,
    FEEL_SCAFFOLD,
    INTROSPECT_HINT,
    NAGS,
    NOUNS,
    SATISFY_SCAFFOLD,
    UNRESOLVED_LINE,
    WORDED_LONELY,
    digest,
    feeling_options,
    introspect_text,
    levels_line,
    satisfied_text,
)
from ego_desires.signals import LINE as SIGNAL_LINE
from ego_desires.signals import SignalMatcher
from ego_desires.store import (
    FILE_NAME,
    MIGRATIONS,
    SYNCHRONOUS,
    DesireStore,
    DesireStoreError,
    unusable,
)
from ego_desires.wording import DEFAULT, Catalog, CatalogError, CatalogFile, assign, default_json, lookup, to_json
from ego_notions.api import NOTIONS_STORE, NotionStore, NotionView

DEFAULT_QUALITY: Final = 0.7
FLOW_LIMIT: Final = 30
"""The short-term flow reads at most the 30 newest memories of its window."""
BACKGROUND_DAYS: Final = 14
"""Current interests weigh the 30 newest memories of the last 14 days."""
NOTIONS_READ: Final = 50
BASELINE_WEIGHT: Final = 0.3
BASELINE_EVERY_SECONDS: Final = 1800.0
"""A desire's usual level moves toward its level at most every 30 minutes, on a tool call."""
SIGNAL_SOURCE: Final = TOOL_PREFIX + "remember"
EMBER_WARMTH: Final = 0.5
EMBERS_OFFERED: Final = 2
EMBER_CHARS: Final = 60
STIRRED_FROM: Final = 0.03
"""A modulation factor adding at least this much to a desire is named as what stirs it (attune's facts)."""

FEEL_SCHEMA: Final[Mapping[str, Any]] = {"type": "object", "properties": {}, "additionalProperties": False}
SATISFY_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 40},
        "quality": {"type": "number", "minimum": 0, "maximum": 1, "default": DEFAULT_QUALITY},
    },
    "required": ["name"],
    "additionalProperties": False,
}


CONFIGURE_ACTIONS: Final = ("show", "set", "reset")
CONFIGURE_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "action": {"enum": list(CONFIGURE_ACTIONS)},
        "path": {"type": "string", "maxLength": 120},
        "value": {"type": ["string", "number", "array", "object", "null"]},
    },
    "required": ["action"],
    "additionalProperties": False,
}
CONFIGURE_SHOWN_CHARS: Final = 3000


def _configure_log_view(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """The log shows the action and the place, never the words the agent wrote."""
    return {"action": args.get("action"), "path": str(args.get("path", ""))[:200] or None}


def _satisfy_log_view(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """The log shows a desire's name, never other text the agent may have put in ``name``."""
    return {"name": desire_name(str(args.get("name", ""))) or "(not a desire)", "quality": args.get("quality")}


HISTORY_EVERY_SECONDS: Final = 900.0
"""The felt levels are recorded at most once per 15-minute bucket (the first felt in it)."""
HISTORY_KEEP_SECONDS: Final = 90 * 86400.0
"""Recorded levels older than 90 days are deleted."""


class LevelsService:
    """Implements :class:`ego_desires.api.DesireLevels`: every desire's level now, read at each call, and the recorded
    history of the felt levels."""

    def __init__(
        self,
        read: Callable[[], Mapping[str, float]],
        history: Callable[[datetime, datetime], Sequence[DesireSample]],
    ) -> None:
        self._read = read
        self._history = history

    def levels(self) -> Mapping[str, float]:
        return self._read()

    def history(self, since: datetime, until: datetime) -> Sequence[DesireSample]:
        return self._history(since, until)


class DesiresPlugin(DesiresSurface, PluginBase):
    """Entry point ``desires``. Works alone; memory, interoception and a self-model only add modulation."""

    config_class = DesiresConfig

    def __init__(self) -> None:
        self._ctx: PluginContext | None = None
        self._store: DesireStore | None = None
        self._catalog: CatalogFile | None = None
        self._signals = SignalMatcher()
        self._local = threading.local()

    # -- lifecycle ---------------------------------------------------------------------------------

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        config: DesiresConfig = ctx.config
        now = ctx.now()
        # A damaged store raises here: the plugin is marked failed and the file is left for the user.
        try:
            database = ctx.database(MIGRATIONS, FILE_NAME, synchronous=SYNCHRONOUS)
        except (sqlite3.DatabaseError, DatabaseVersionError) as exc:
            raise unusable(ctx.data_dir / FILE_NAME, exc) from None
        store = DesireStore(database)
        renewed = store.open(now.timestamp(), lambda _name: initial_anchor(now, config))
        if renewed:
            ctx.log.warning("desires: unusable state of %s started anew", ", ".join(renewed))
        catalog = CatalogFile(ctx.data_dir)
        try:
            catalog.ensure()
        except OSError as exc:
            ctx.log.warning("desires: the catalog could not be written (%s); built-in words used", type(exc).__name__)
        self._ctx, self._store, self._catalog = ctx, store, catalog
        ctx.provide(DESIRE_LEVELS, LevelsService(self.levels, self.history))

    @hookimpl
    def on_shutdown(self) -> None:
        if self._store is not None:
            self._store.close()
        self._ctx = self._store = self._catalog = None

    def _running(self) -> tuple[PluginContext, DesireStore]:
        if self._ctx is None or self._store is None:
            raise RuntimeError("the desires plugin is not started")
        return self._ctx, self._store

    # -- levels ------------------------------------------------------------------------------------

    def _inputs(
        self, ctx: PluginContext, config: DesiresConfig, now: datetime, impulses: Mapping[str, float] | None = None
    ) -> Inputs:
        """The inputs at ``now``, with the pending impulses unless ``impulses`` (just felt) are given."""
        _ctx, store = self._running()
        pending = capped(store.pending_impulses() if impulses is None else impulses, config.impulses.cap)
        # The self-model may read our levels while we read its questions: the inner call leaves questions out.
        nested = getattr(self._local, "reading", False)
        self._local.reading = True
        try:
            return gather(ctx, now, config, questions=not nested, impulses=pending)
        finally:
            self._local.reading = nested

    def snapshot(self) -> Snapshot:
        """Every desire now: stored state + the other plugins' inputs + pending impulses + the host clock.

        Reading changes nothing: pending impulses count here until :meth:`felt` takes them."""
        ctx, store = self._running()
        config: DesiresConfig = ctx.config
        now = ctx.now()
        inputs = self._inputs(ctx, config, now)
        return snapshot(store.anchors(), inputs, now, config)

    def felt(self) -> Snapshot:
        """The snapshot the agent sees (wake_up, introspect, attune, feel_desires): the one path that feels the
        pending impulses, which are then gone."""
        ctx, store = self._running()
        config: DesiresConfig = ctx.config
        now = ctx.now()
        impulses = store.feel_impulses(now.timestamp())
        if impulses:
            ctx.log.info("desires: impulse(s) felt toward %s", ", ".join(sorted(impulses)))
        inputs = self._inputs(ctx, config, now, impulses)
        felt = snapshot(store.anchors(), inputs, now, config)
        try:
            store.record(felt.levels(), now.timestamp(), HISTORY_EVERY_SECONDS, HISTORY_KEEP_SECONDS)
        except (DesireStoreError, sqlite3.Error) as exc:  # the history is a record: the agent still feels
            ctx.log.warning("desires: the felt levels were not recorded (%s)", type(exc).__name__)
        return felt

    def levels(self) -> Mapping[str, float]:
        return self.snapshot().levels()

    def history(self, since: datetime, until: datetime) -> list[DesireSample]:
        """The felt levels recorded from ``since`` to ``until``, oldest first (:meth:`felt` records them)."""
        _ctx, store = self._running()
        return [
            DesireSample(at=datetime.fromtimestamp(at, UTC), levels=levels)
            for at, levels in store.history(since.timestamp(), until.timestamp())
        ]

    def satisfy(self, names: Sequence[str], quality: float, source: str) -> dict[str, tuple[Anchor | None, Anchor]]:
        """Satisfy ``names`` with ``quality`` in one transaction; each desire's state before and after.

        A satisfaction starts from the level as felt: the last moment shared with the companion counted (and
        held while you are together), whether or not it was written yet."""
        ctx, _store = self._running()
        config: DesiresConfig = ctx.config
        now = ctx.now()
        shared_at = self._shared_at(ctx, now)

        def change(name: str, current: Anchor | None) -> Anchor:
            anchor = lived(current or initial_anchor(now, config), name, shared_at, now, config)
            return satisfied_anchor(anchor, name, now, quality=quality, source=source, config=config)

        return self._write(names, change, now)

    def _write(
        self, names: Sequence[str], change: Callable[[str, Anchor | None], Anchor], now: datetime
    ) -> dict[str, tuple[Anchor | None, Anchor]]:
        """``change`` the state of ``names`` in one transaction, with the cascade to alive emergent desires."""
        ctx, store = self._running()
        config: DesiresConfig = ctx.config
        settings = config.emergent
        catalog = self.catalog_or_default()

        def ease(row: EmergentRow, q: float) -> EmergentRow:
            anchor = Anchor(anchored_at=row.anchored_at, start=row.start, quality=row.quality)
            at = position(anchor, now.timestamp(), settings.period_hours, config.steepness, config.recovery_gain)
            return attrs.evolve(
                row,
                anchored_at=now.timestamp(),
                start=satisfied_position(at, q, config.steepness, config.settle),
                quality=blended_quality(q, row.quality, base_level(at, config.steepness, config.settle)),
                satisfied_at=now.timestamp(),
            )

        return store.update(
            names,
            change,
            now.timestamp(),
            cascade=lambda name, _after: catalog.cascade(name),
            ease=ease,
            alive=lambda row: alive(row, now.timestamp(), settings),
        )

    @staticmethod
    def _shared_at(ctx: PluginContext, now: datetime) -> datetime | None:
        """The last moment shared with the companion (the self-model's ``People`` service), if any."""
        away = companion_absence(ctx, now)
        return away.last_shared if away is not None else None

    def fold_shared(self) -> list[str]:
        """Write the satisfaction by the last moment shared with the companion into the desires ``company.shared``
        lists that it came after (with the cascade); the desires written. The levels count that moment even
        before (:func:`ego_desires.levels.lived`): writing it keeps it when a later moment comes."""
        ctx, store = self._running()
        config: DesiresConfig = ctx.config
        now = ctx.now()
        shared_at = self._shared_at(ctx, now) if config.company.shared else None
        if shared_at is None or shared_at > now:
            return []
        at = shared_at.timestamp()
        anchors = store.anchors()
        names = [n for n in config.company.shared if n not in anchors or anchors[n].anchored_at < at]
        if not names:
            return []

        def change(name: str, current: Anchor | None) -> Anchor:
            if current is not None and current.anchored_at >= at:
                return current  # written meanwhile by another process
            return shared_satisfaction(current or initial_anchor(now, config), name, shared_at, config)

        self._write(names, change, now)
        return names

    # -- the catalog and emergent desires ----------------------------------------------------------

    def catalog(self) -> Catalog:
        """The catalog now; :class:`CatalogError` when the file is not valid."""
        if self._catalog is None:
            raise RuntimeError("the desires plugin is not started")
        return self._catalog.load()

    def catalog_or_default(self) -> Catalog:
        """The catalog, or the built-in one (logged without content) while the file is not valid."""
        try:
            return self.catalog()
        except CatalogError as exc:
            if self._ctx is not None:
                self._ctx.log.warning("desires: the catalog is not valid at %s; the built-in one is used", exc.path)
            return DEFAULT

    def emergent_levels(self, now: datetime) -> list[tuple[EmergentRow, float]]:
        """Every emergent desire alive at ``now`` with its level (time and satisfaction alone)."""
        ctx, store = self._running()
        config: DesiresConfig = ctx.config
        settings = config.emergent
        found = []
        for row in store.emergent():
            if not alive(row, now.timestamp(), settings):
                continue
            anchor = Anchor(anchored_at=row.anchored_at, start=row.start, quality=row.quality)
            at = position(anchor, now.timestamp(), settings.period_hours, config.steepness, config.recovery_gain)
            found.append((row, base_level(at, config.steepness, config.settle)))
        return found

    def _memories(self, ctx: PluginContext, since: datetime, limit: int) -> list[Memory]:
        service = ctx.services.get(MEMORY_STORE, MemoryService)
        if service is None:
            return []
        try:
            return list(service.recent(since, limit))
        except Exception as exc:  # the memory plugin's problem: attune still answers
            ctx.log.warning("desires: recent memories unavailable (%s)", type(exc).__name__)
            return []

    def _theme(self, ctx: PluginContext) -> Callable[[str], str]:
        """The notions plugin's ``theme`` (one topic across languages), else a word's own case-folded spelling."""
        service = ctx.services.get(NOTIONS_STORE, NotionStore)
        if service is None:
            return str.casefold

        def theme(word: str) -> str:
            try:
                return service.theme(word)
            except Exception as exc:  # the notions plugin's problem: attune still answers
                ctx.log.warning("desires: notion themes unavailable (%s)", type(exc).__name__)
                return word.casefold()

        return theme

    def _notions(self, ctx: PluginContext, min_confidence: float = 0.0) -> list[NotionView]:
        service = ctx.services.get(NOTIONS_STORE, NotionStore)
        if service is None:
            return []
        try:
            return list(service.notions(min_confidence=min_confidence, limit=NOTIONS_READ))
        except Exception as exc:  # the notions plugin's problem: attune still answers
            ctx.log.warning("desires: notions unavailable (%s)", type(exc).__name__)
            return []

    def let_arise(self, now: datetime) -> list[str]:
        """Emergent desires called up by the short-term flow and by strong notions; the ones that arose."""
        ctx, store = self._running()
        config: DesiresConfig = ctx.config
        settings = config.emergent
        flow = self._memories(ctx, now - timedelta(hours=settings.window_hours), FLOW_LIMIT)
        names = [from_flow(sorted(flow, key=lambda m: m.timestamp, reverse=True), settings.min_recent_memories)]
        names += [called_up(n.tone, n.valence) for n in self._notions(ctx, settings.notion_confidence)]
        at = now.timestamp()
        rows = [
            EmergentRow(name=name, created=at, anchored_at=at, start=settings.start_position)
            for name in dict.fromkeys(names)
            if name is not None
        ]
        arisen = store.arise(rows, lambda row: alive(row, at, settings))
        if arisen:
            ctx.log.info("desires: emergent desire(s) arose: %s", ", ".join(arisen))
        return arisen

    # -- tools -------------------------------------------------------------------------------------

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None], ctx: PluginContext) -> None:
        register(
            Tool(
                name="configure_desires",
                description="Show, set or reset a place in your desire catalog (words, signals, rules).",
                input_schema=CONFIGURE_SCHEMA,
                handler=self.configure_desires,
                tier="backend",
                log_view=_configure_log_view,
            )
        )
        config: DesiresConfig = ctx.config
        if config.feel_desires_tool:
            self._register_feel(register)
        register(
            Tool(
                name="satisfy_desire",
                description="Say a desire was satisfied, and how fully (0-1).",
                input_schema=SATISFY_SCHEMA,
                handler=self.satisfy_desire,
                tier="backend",
                log_view=_satisfy_log_view,
            )
        )

    def _register_feel(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="feel_desires",
                description="Every desire's level now, as numbers.",
                input_schema=FEEL_SCHEMA,
                handler=self.feel_desires,
                tier="backend",
            )
        )

    def feel_desires(self, _args: Mapping[str, Any], ctx: PluginContext) -> Response:
        config: DesiresConfig = ctx.config
        snap = self.felt()
        scaffold: list[str | ScaffoldLine] = [
            FEEL_SCAFFOLD,
            COMPANION_SCAFFOLD.format(companion=ctx.settings.companion_name),
        ]
        if snap.unresolved:
            scaffold += [UNRESOLVED_LINE, ScaffoldLine(INTROSPECT_HINT, needs={"introspect"})]
        line = levels_line(snap, config)
        emergent = sorted(self.emergent_levels(ctx.now()), key=lambda pair: -pair[1])
        if emergent:
            line += " " + " ".join(f"{row.name}[{v:.2f}/{band(round(v, 2), config)}]" for row, v in emergent)
        return Response(line, scaffold=tuple(scaffold))

    def satisfy_desire(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        name = desire_name(str(args["name"]))
        if name is None:
            raise InvalidArgumentError("name", f"one of {', '.join(DESIRES)}")
        quality = float(args.get("quality", DEFAULT_QUALITY))
        if not (math.isfinite(quality) and 0.0 <= quality <= 1.0):
            raise InvalidArgumentError("quality", "a number from 0 to 1")
        store = self._running()[1]
        config: DesiresConfig = ctx.config
        old, _new = self.satisfy([name], quality, EXPLICIT)[name]
        # Before and after at one moment with the same inputs, so that the difference is the satisfaction alone.
        now = ctx.now()
        inputs = self._inputs(ctx, config, now)
        anchors = store.anchors()
        after = snapshot(anchors, inputs, now, config)
        before = snapshot({**anchors, name: old} if old else anchors, inputs, now, config).reading(name)
        raised_by = {factor: changes.get(name, 0.0) for factor, changes in after.modulation.factors.items()}
        text = satisfied_text(before, after.reading(name), quality, raised_by)
        return Response(text, scaffold=(SATISFY_SCAFFOLD,))

    # -- implicit satisfaction ---------------------------------------------------------------------

    @hookimpl
    def on_tool_called(self, tool: str, args: Mapping[str, Any], result: ToolOutcome, ctx: PluginContext) -> None:
        if result.is_error or result.declined or self._store is None:
            return
        config: DesiresConfig = ctx.config
        self._sample_baselines(ctx)
        folded = self.fold_shared()
        if folded:
            ctx.log.info("desires: a moment shared with the companion eased %s", ", ".join(folded))
        by_quality: dict[float, list[str]] = {}
        for rule in self.catalog_or_default().rules:
            if rule.matches(tool, args.get("category")):
                for effect in rule.effects:
                    by_quality.setdefault(effect.quality, []).append(effect.desire)
        names = config.implicit.get(tool)
        if names:
            by_quality.setdefault(config.implicit_quality, []).extend(names)
        for quality, desired in by_quality.items():
            self.satisfy(desired, quality, TOOL_PREFIX + tool)

    def _sample_baselines(self, ctx: PluginContext) -> None:
        """The one path that moves the usual levels: a successful tool call, at most every 30 minutes."""
        _ctx, store = self._running()
        now = ctx.now().timestamp()
        sampled = store.baselines()
        if sampled and all(0 <= now - at < BASELINE_EVERY_SECONDS for _level, at in sampled.values()):
            return
        store.sample(self.levels(), BASELINE_WEIGHT, now, BASELINE_EVERY_SECONDS)

    @hookimpl(optionalhook=True)
    def on_remember(self, memory: Memory, ctx: PluginContext) -> Sequence[str] | None:
        """Satisfaction signals: a pleasant, felt memory that sounds like a desire's signal satisfies it."""
        service = ctx.services.get(MEMORY_STORE, MemoryService)
        if service is None or self._store is None:
            return None
        try:
            found = self._signals.matches(memory, service, self.catalog_or_default())
        except Exception as exc:  # an embedding failure must not spoil the stored memory
            ctx.log.warning("desires: satisfaction signals not read (%s)", type(exc).__name__)
            return None
        for name, quality in found:
            self.satisfy([name], quality, SIGNAL_SOURCE)
        if found:
            ctx.log.info("desires: %d desire(s) eased by a satisfaction signal", len(found))
            return [SIGNAL_LINE]
        return None

    # -- impulses ----------------------------------------------------------------------------------

    @hookimpl(optionalhook=True)
    def on_memory_surfaced(self, memory: Memory, how: SurfacedHow, ctx: PluginContext) -> None:
        """A memory that came back unbidden leaves an impulse toward the desire its emotion calls for (an echo of a
        memory the agent's own remember brought near gives none)."""
        if how != "involuntary" or self._store is None:
            return
        found = impulse_of(memory)
        if found is None:
            return
        desire, amount = found
        settings = ctx.config.impulses
        added = self._store.add_impulse(
            memory.id,
            memory.emotional_trace.primary,
            desire,
            amount,
            ctx.now().timestamp(),
            cap=settings.cap,
            cooldown=settings.cooldown_hours * 3600.0,
        )
        if added:
            ctx.log.info("desires: an impulse toward %s (+%.2f) waits to be felt", desire, added)

    @hookimpl(optionalhook=True)
    def on_forget(self, memory: Memory) -> None:
        if self._store is not None:
            self._store.forget_impulses(memory.id)

    # -- composed responses (and what was said lately) ---------------------------------------------

    def _said(self, surface: str, config: DesiresConfig) -> Callable[[str], bool]:
        """Whether a sentence may be said on ``surface`` now: it was not said in its last few answers."""
        _ctx, store = self._running()
        try:
            said = store.said(surface, config.variety.answers)
        except (DesireStoreError, sqlite3.Error) as exc:
            if self._ctx is not None:
                self._ctx.log.warning("desires: what was said lately is unknown (%s)", type(exc).__name__)
            said = frozenset()
        return lambda sentence: digest(sentence) not in said

    def _say(self, surface: str, at: float, sentences: Sequence[str]) -> None:
        """Keep (digests of) the sentences of one answer of ``surface``, so that they are not said again soon."""
        _ctx, store = self._running()
        try:
            store.say(surface, at, [digest(sentence) for sentence in sentences])
        except (DesireStoreError, sqlite3.Error) as exc:  # a record: the answer stands
            if self._ctx is not None:
                self._ctx.log.warning("desires: what was said was not kept (%s)", type(exc).__name__)

    def _section(
        self, surface: str, key: str, at: float, lines: Sequence[str], sentences: Sequence[str], **extra: Any
    ) -> Section | None:
        """The section of ``lines`` (its ``sentences`` kept as said once it is shown), or None for silence (kept
        as an answer that said nothing)."""
        if not lines:
            self._say(surface, at, ())
            return None
        said = tuple(sentences)
        text = "\n".join(lines)
        return Section(key=key, text=text, slot=key, on_shown=lambda: self._say(surface, at, said), **extra)

    @staticmethod
    def _claims(worded: Sequence[Reading | Current], lonely: Sequence[Reading | Current]) -> tuple[Claim, ...]:
        """What the words state: each desire ``worded`` felt at its level, and loneliness at the level of each of
        ``lonely`` (the wish for company worded so)."""
        felt = [Claim(kind="desire", words=w.name, value=round(w.level, 2)) for w in worded]
        return (*felt, *(Claim(kind="lonely", value=round(w.level, 2)) for w in lonely))

    @hookimpl
    def on_wake_up(self, ctx: PluginContext) -> Section | None:
        """One sentence of how the desires feel; one said in the last few wake_ups yields to another wording,
        or to silence."""
        if self._store is None:
            return None
        config: DesiresConfig = ctx.config
        fresh = self._said("wake_up", config)
        snap = self.felt()
        options = feeling_options(snap, config)
        text, readings = next(((t, r) for t, r in options if fresh(t)), ("", ()))
        lonely = [r for r in readings if r.name == WORDED_LONELY and snap.alone]
        return self._section(
            "wake_up",
            "desires",
            ctx.now().timestamp(),
            [text] if text else [],
            [text] if text else [],
            claims=self._claims(readings, lonely),
        )

    @hookimpl
    def ember_candidates(self, ctx: PluginContext) -> list[Ember] | None:
        """The alive emergent desires, strongest first (at most two), as ``...{their display name}``; the wish for
        company not while you are together with the companion."""
        if self._store is None:
            return None
        catalog = self.catalog_or_default()
        now = ctx.now()
        close = together(self._shared_at(ctx, now), now, ctx.config)
        alive_now = [(row, level) for row, level in self.emergent_levels(now) if not (close and row.name in LONELY)]
        emergent = sorted(alive_now, key=lambda pair: (-pair[1], pair[0].name))
        texts = [" ".join(catalog.display(row.name).split()) for row, _level in emergent[:EMBERS_OFFERED]]
        return [Ember(text=f"...{text[:EMBER_CHARS]}", warmth=EMBER_WARMTH) for text in texts if text]

    @hookimpl
    def on_introspect(self, ctx: PluginContext) -> Section | None:
        """The desires with their levels; the nagging of unresolved questions not said again in the next few."""
        if self._store is None:
            return None
        fresh = self._said("introspect", ctx.config)
        text = introspect_text(self.felt(), ctx.config, fresh)
        said = [NAGS] if text.endswith(NAGS) else []
        return self._section("introspect", "desires", ctx.now().timestamp(), [text], said)

    def _fixed_facts(self, snap: Snapshot, now: datetime) -> dict[str, tuple[str, tuple[str, ...]]]:
        """Each of the nine as a noun and its sentences made from facts: what stirs it, when it was last eased."""
        ctx, store = self._running()
        config: DesiresConfig = ctx.config
        anchors = store.anchors()
        shared_at = self._shared_at(ctx, now)
        found = {}
        for reading in snap.readings:
            name = reading.name
            raising = sorted(
                ((changes.get(name, 0.0), factor) for factor, changes in snap.modulation.factors.items()),
                reverse=True,
            )
            stirred = [FACTOR_WORDS.get(factor, factor) for amount, factor in raising if amount >= STIRRED_FROM]
            anchor = anchors.get(name)
            eased = None if anchor is None or anchor.source == INITIAL else anchor.anchored_at
            source = anchor.source if anchor is not None else INITIAL
            counts = shared_at is not None and name in config.company.shared and shared_at <= now
            if counts and shared_at is not None and (eased is None or shared_at.timestamp() > eased):
                eased, source = shared_at.timestamp(), SHARED
            by = {EXPLICIT: "", SHARED: f" in a moment with {ctx.settings.companion_name}"}.get(
                source, f" by {source.removeprefix(TOOL_PREFIX)}"
            )
            when = datetime.fromtimestamp(min(eased, now.timestamp()), UTC) if eased is not None else None
            noun = NOUNS.get(name, "")
            facts = fact_sentences(noun, now, ctx.settings.tz, stirred_by=stirred, eased=when, eased_by=by)
            found[name] = (noun, facts)
        return found

    @hookimpl
    def on_attune(self, person: str | None, ctx: PluginContext) -> Section | None:
        """Emergent desires arise here; then the desire currents in words and the current interests. A sentence
        said in the last few attunes yields to one made from facts, or to silence."""
        if self._store is None:
            return None
        config: DesiresConfig = ctx.config
        now = ctx.now()
        self.let_arise(now)
        problem: str | None = None
        try:
            catalog = self.catalog()
        except CatalogError as exc:
            catalog, problem = DEFAULT, exc.path or "the file"
        usual = {name: level for name, (level, _at) in self._store.baselines().items()}
        snap = self.felt()
        facts = self._fixed_facts(snap, now)
        currents: list[Current] = [
            attrs.evolve(c, noun=facts[c.name][0], facts=facts[c.name][1])
            for c in fixed_currents(snap.readings, usual, config.emergent.baseline_margin)
        ]
        emergent = self.emergent_levels(now)
        at = now.timestamp()
        for row, level in emergent:
            noun = f"the wish to {' '.join(catalog.display(row.name).split())}"
            eased = datetime.fromtimestamp(row.satisfied_at, UTC) if row.satisfied_at is not None else None
            arose = datetime.fromtimestamp(min(row.created, at), UTC)
            said = fact_sentences(noun, now, ctx.settings.tz, arose=arose, eased=eased)
            currents.append(Current(row.name, level, life_stage(row, at, config.emergent), noun=noun, facts=said))
        fresh = self._said("attune", config)
        spoken: Spoken = speak_currents(
            currents, catalog, {row.name for row, _level in emergent}, fresh=fresh, together=snap.together
        )
        lines = [spoken.line] if spoken.line else []
        sentences = list(spoken.sentences)
        background = self._memories(ctx, now - timedelta(days=BACKGROUND_DAYS), FLOW_LIMIT)
        topics = interests(
            background,
            self._notions(ctx),
            [(catalog.display(row.name), datetime.fromtimestamp(row.created, UTC)) for row, _level in emergent],
            now,
            self._theme(ctx),
        )
        interest = interests_line(topics, fresh)
        if interest:
            lines.append(interest)
            sentences.append(interest)
        if problem is not None:
            lines.append(f"(Your desire catalog is not valid at {problem}; configure_desires can show and fix it.)")
        lonely = [c for c in spoken.voiced if c.name in LONELY and c.direction != "settling" and snap.alone]
        claims = self._claims(spoken.voiced, lonely)
        return self._section("attune", "desires", at, lines, sentences, claims=claims)

    # -- configure_desires -------------------------------------------------------------------------

    def configure_desires(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        if self._catalog is None:
            raise RuntimeError("the desires plugin is not started")
        file = self._catalog
        action = str(args["action"])
        path = str(args.get("path") or "").strip()
        if action == "show":
            return Response(self._show(file, path))
        if action == "set" and (not path or "value" not in args):
            raise InvalidArgumentError("path", "a place in the catalog, with `value`, for set")
        try:
            raw = file.raw() if action == "set" or path else default_json()
            if action == "set":
                new = assign(raw, path, args["value"])
            else:
                new = assign(raw, path, lookup(default_json(), path)) if path else default_json()
            file.write(new)
        except CatalogError as exc:
            raise ToolError(
                f"Not changed: {exc.path or 'the catalog'}: {exc.problem}. The catalog is as it was.",
                scaffold=("configure_desires(action='show', path=…) shows what is there now.",),
            ) from None
        except OSError as exc:
            raise ToolError(f"Not changed: the catalog could not be written ({type(exc).__name__}).") from None
        ctx.log.info("desires: catalog %s at %s", action, path or "(all)")
        done = f"Updated {path}." if action == "set" else f"Reset {path or 'the whole catalog'} to the built-in words."
        return Response(done)

    def _show(self, file: CatalogFile, path: str) -> str:
        try:
            raw = file.raw()
            problem = None
            try:
                file.load()
            except CatalogError as exc:
                problem = str(exc)
            if path:
                text = json.dumps(lookup(raw, path), ensure_ascii=False, indent=1)
                if len(text) > CONFIGURE_SHOWN_CHARS:
                    text = text[:CONFIGURE_SHOWN_CHARS] + "\n… (show a narrower path)"
                body = f"{path}:\n{text}"
            else:
                body = (
                    "Desire catalog: desires (" + ", ".join(DESIRES) + "), emergent_desires, implicit_rules. "
                    "Each desire: display_name, sentence.rising/steady/settling, satisfaction_signals, "
                    "implicit_emergent_satisfaction. Show a path for its words, e.g. desires.curiosity."
                )
        except CatalogError as exc:
            raise ToolError(f"{exc.path or 'The catalog'}: {exc.problem}.") from None
        if problem:
            body += f"\nNot valid: {problem}. Use set to fix that place, or reset."
        return body

    @hookimpl
    def doctor_checks(self, ctx: PluginContext) -> list[Check]:
        if self._store is None:
            return [Check("state", False, "the desires store is not open")]
        try:
            anchors = self._store.anchors()
        except (DesireStoreError, OSError) as exc:
            return [Check("state", False, f"{exc}")]
        missing = [name for name in DESIRES if name not in anchors]
        detail = f"{len(anchors)} of {len(DESIRES)} desires kept in {self._store.path}"
        if missing:
            detail += f"; unusable (restart ego to start them anew): {', '.join(missing)}"
        return [Check("state", not missing, detail)]

    # -- export / import ---------------------------------------------------------------------------

    @hookimpl
    def register_import_formats(self, register: Callable[[ImportFormat], None]) -> None:
        register(importer.ego_mcp_format())

    @hookimpl
    def export_records(self, include_private: bool) -> Iterator[Mapping[str, Any]]:
        _ctx, store = self._running()
        catalog = self.catalog_or_default()
        edited = to_json(catalog) if to_json(catalog) != to_json(DEFAULT) else None
        return portable.export_records(store, edited)

    @hookimpl
    def check_records(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        return portable.check_records(records)

    @hookimpl
    def import_records(self, records: Sequence[Mapping[str, Any]]) -> int:
        _ctx, store = self._running()
        return portable.import_records(store, records, self._replace_catalog)

    def _replace_catalog(self, catalog: Catalog) -> bool:
        if self._catalog is None:
            raise RuntimeError("the desires plugin is not started")
        try:
            if to_json(self._catalog.load()) == to_json(catalog):
                return False
        except CatalogError:
            pass  # an invalid local catalog is replaced
        self._catalog.write(to_json(catalog))
        return True
