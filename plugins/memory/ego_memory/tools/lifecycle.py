"""The memory lifecycle: link_memories, episodes, consolidate, forget."""

from __future__ import annotations

import itertools
import re
import secrets
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, cast

from ego_core import (
    LINK_TYPES,
    ConsolidationRun,
    InvalidArgumentError,
    LinkType,
    Memory,
    MemoryLink,
    PluginContext,
    Response,
    ScaffoldItem,
    ScaffoldLine,
    ToolError,
    compose_sections,
    is_blank,
    relative_age,
    truncate,
)
from ego_memory.api import MemoryHooks
from ego_memory.errors import StoreError
from ego_memory.record.limits import MAX_EPISODE_MEMBERS, MAX_TAG_CHARS, MAX_TAGS, list_problem
from ego_memory.record.model import normal_importance, normal_tags
from ego_memory.service import Memories
from ego_memory.store.rows import Episode, to_millis
from ego_memory.text.summaries import guarded
from ego_memory.text.wording import count_of
from ego_memory.tools.render import extra_lines

MEMORY_ID = re.compile(r"^mem_[0-9a-f]{12}$")
EPISODE_ID = re.compile(r"^ep_[0-9a-f]{12}$")

FORGET_SCAFFOLD: tuple[ScaffoldItem, ...] = (
    "This memory is gone. Was there anything worth preserving in a new form?",
    ScaffoldLine("If this was part of a merge, save the consolidated version with remember.", needs={"remember"}),
)
NOT_FOUND_SCAFFOLD: tuple[ScaffoldItem, ...] = (
    ScaffoldLine("Double-check the ID. Use recall to search for the memory you're looking for.", needs={"recall"}),
)
LINK_SCAFFOLD = "What connects these two? Is it a cause, a consequence, or a resonance?"
EPISODE_SCAFFOLD = "What ties these moments together? What did this stretch of time mean to you?"

CONSOLIDATION_WINDOW = timedelta(hours=24)
MAX_REPLAY = 500
REPLAY_CONFIDENCE = 0.6
COACTIVATION_STEP = 0.05
PRUNE_BELOW = 0.1
EXPLICIT_CONFIDENCE = 0.9
READ_STEPS, REPLAY_STEPS, HOOK_STEPS = 1, 3, 6
"""consolidate's progress (for a client that asked for it): reading the window, the replay, then the plugins'
``on_consolidate`` work, which fills its part with its own ``ctx.progress``."""
CONSOLIDATE_STEPS = READ_STEPS + REPLAY_STEPS + HOOK_STEPS


REVISABLE = ("importance", "tags", "private")


def revision_words(before: Memory, after: Memory) -> list[str]:
    """What a revision changed, in words (``importance 3 -> 5``, ``now private``)."""
    words = []
    if after.importance != before.importance:
        words.append(f"importance {before.importance} -> {after.importance}")
    if after.tags != before.tags:
        words.append(f"tags: {', '.join(after.tags) if after.tags else 'none'}")
    if after.is_private != before.is_private:
        words.append("now private" if after.is_private else "no longer private")
    return words


def _shown_id(value: str, pattern: re.Pattern[str], kind: str) -> str:
    """The id to echo in an error: only when it has the form of an id (never arbitrary caller text)."""
    prefix = "mem_" if kind == "memory" else "ep_"
    return value if pattern.match(value) else f"that id ({kind} ids look like {prefix} followed by 12 hex digits)"


class Lifecycle:
    def __init__(self, memories: Memories) -> None:
        self.memories = memories
        self.store = memories.store

    def _not_found(self, memory_id: str) -> ToolError:
        return ToolError(f"Memory not found: {_shown_id(memory_id, MEMORY_ID, 'memory')}", NOT_FOUND_SCAFFOLD)

    # ------------------------------------------------------------------------------------------
    # forget

    def forget(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        memory_id = str(args["memory_id"]).strip()
        memory = self.store.delete(memory_id) if MEMORY_ID.match(memory_id) else None
        if memory is None:
            raise self._not_found(memory_id)
        self.memories.redactor.remove(memory.id)
        extra = extra_lines(MemoryHooks(ctx).on_forget(memory=memory))
        age = relative_age(memory.timestamp, ctx.now())
        data = (
            f"Forgot (id: {memory.id}, {age}): {truncate(memory.content, 120)}\n"
            f"Emotion: {memory.emotional_trace.primary} | Importance: {memory.importance}"
        )
        return Response(data="\n".join([data, *extra]), scaffold=FORGET_SCAFFOLD)

    # ------------------------------------------------------------------------------------------
    # revise_memory

    def revise(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        memory_id = str(args["memory_id"]).strip()
        if not any(name in args for name in REVISABLE):
            raise InvalidArgumentError("memory_id", f"give at least one of {', '.join(REVISABLE)} to change")
        tags: tuple[str, ...] | None = None
        if "tags" in args:
            problem = list_problem(list(args["tags"]), MAX_TAGS, MAX_TAG_CHARS)
            if problem:
                raise InvalidArgumentError("tags", problem)
            tags = normal_tags(list(args["tags"]))
        importance = normal_importance(args["importance"]) if "importance" in args else None
        private = bool(args["private"]) if "private" in args else None
        found = (
            self.store.revise(memory_id, importance=importance, tags=tags, is_private=private)
            if MEMORY_ID.match(memory_id)
            else None
        )
        if found is None:
            raise self._not_found(memory_id)
        before, after = found
        changes = revision_words(before, after)
        if not changes:
            return Response(data=f"Nothing changed (id: {memory_id}): it already is so.")
        notes: list[str] = []
        if after.is_private and not before.is_private:
            self.memories.redactor.add(after.id, after.content, after.timestamp.timestamp())
            masked = self.guard_episodes(after.id)
            if masked:
                notes.append(f"Its words were left out of the summary of {count_of(masked, 'episode')}.")
        elif before.is_private and not after.is_private:
            self.memories.redactor.remove(after.id)
        extra = extra_lines(MemoryHooks(ctx).on_memory_revised(before=before, after=after))
        return Response(data="\n".join([f"Revised (id: {memory_id}): {'; '.join(changes)}.", *notes, *extra]))

    # ------------------------------------------------------------------------------------------
    # link_memories

    def link(self, args: Mapping[str, Any], _ctx: PluginContext) -> Response:
        source = str(args["source_id"]).strip()
        target = str(args["target_id"]).strip()
        link_type = cast("LinkType", str(args.get("link_type") or "related"))
        if link_type not in LINK_TYPES:
            raise InvalidArgumentError("link_type", f"one of: {', '.join(LINK_TYPES)}")
        if source == target:
            raise InvalidArgumentError("target_id", "a memory cannot be linked to itself")
        well_formed = [i for i in (source, target) if MEMORY_ID.match(i)]
        existing = self.store.existing_ids(well_formed)
        for memory_id in (source, target):
            if memory_id not in existing:
                raise self._not_found(memory_id)
        try:
            created = self.store.link(source, target, link_type, EXPLICIT_CONFIDENCE, "linked by you")
        except StoreError:  # deleted by another process in between
            raise self._not_found(source) from None
        if not created:
            return Response(data=f"Already linked: {source} <-> {target} ({link_type}). Nothing changed.")
        return Response(data=f"Linked {source} <-> {target} ({link_type}).", scaffold=(LINK_SCAFFOLD,))

    # ------------------------------------------------------------------------------------------
    # episodes

    def create_episode(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        requested = list(dict.fromkeys(str(i).strip() for i in args["memory_ids"]))
        if not requested:
            raise InvalidArgumentError("memory_ids", "give at least one memory id")
        if len(requested) > MAX_EPISODE_MEMBERS:
            raise InvalidArgumentError("memory_ids", f"at most {MAX_EPISODE_MEMBERS} memories per episode")
        members = self.store.get([i for i in requested if MEMORY_ID.match(i)], with_links=False)
        found = {m.id for m in members}
        missing = [i for i in requested if i not in found]
        if missing:
            shown = ", ".join(_shown_id(i, MEMORY_ID, "memory") for i in missing[:5])
            raise ToolError(f"Memory not found: {shown}", NOT_FOUND_SCAFFOLD)
        summary = " ".join(str(args["summary"]).split())
        if is_blank(summary):
            raise InvalidArgumentError("summary", "must contain text, not only whitespace")
        private = [m.content for m in members if m.is_private]
        kept = guarded(summary, self.memories.redactor, private)
        notes = []
        if kept != summary:
            notes.append("Words quoted from private memories were left out of the summary; the members stay linked.")
        ordered = sorted(members, key=lambda m: (m.timestamp, m.id))
        episode = Episode(
            id="ep_" + secrets.token_hex(6),
            summary=kept,
            memory_ids=tuple(m.id for m in ordered),
            start=ordered[0].timestamp,
            end=ordered[-1].timestamp,
            importance=max(m.importance for m in ordered),
            created=to_millis(ctx.now()),
        )
        self.store.add_episode(episode)
        tz = ctx.settings.tz
        data = (
            f"Episode {episode.id} created: {count_of(len(ordered), 'memory', 'memories')}, "
            f"{episode.start.astimezone(tz):%Y-%m-%d %H:%M} to {episode.end.astimezone(tz):%Y-%m-%d %H:%M}, "
            f"importance {episode.importance}."
        )
        return Response(data="\n".join([data, *notes]), scaffold=(EPISODE_SCAFFOLD,))

    def guard_episodes(self, memory_id: str | None = None) -> int:
        """Mask in the summaries of the episodes holding ``memory_id`` (of every episode: None) what they quote of
        their private members (:mod:`ego_memory.text.summaries`); how many summaries changed."""
        episodes = self.store.episodes() if memory_id is None else self.store.episodes_holding(memory_id)
        members = list(dict.fromkeys(i for e in episodes for i in e.memory_ids))
        private = {m.id: m.content for m in self.store.get(members, with_links=False) if m.is_private}
        changed: dict[str, str] = {}
        for episode in episodes:
            texts = [private[i] for i in episode.memory_ids if i in private]
            summary = guarded(episode.summary, self.memories.redactor, texts) if texts else episode.summary
            if summary != episode.summary:
                changed[episode.id] = summary
        self.store.set_summaries(changed)
        return len(changed)

    def get_episode(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        episode_id = str(args["episode_id"]).strip()
        episode = self.store.get_episode(episode_id) if EPISODE_ID.match(episode_id) else None
        if episode is None:
            raise ToolError(
                f"Episode not found: {_shown_id(episode_id, EPISODE_ID, 'episode')}",
                (ScaffoldLine("Episode ids start with ep_; create_episode returns them.", needs={"create_episode"}),),
            )
        members = self.store.get(list(episode.memory_ids), with_links=False)
        tz = ctx.settings.tz
        now = ctx.now()
        lines = [
            f"Episode {episode.id} (importance {episode.importance}): {episode.summary}",
            f"From {episode.start.astimezone(tz):%Y-%m-%d %H:%M} to {episode.end.astimezone(tz):%Y-%m-%d %H:%M}.",
        ]
        for number, memory in enumerate(members, start=1):
            lines.append(
                f"{number}. [{relative_age(memory.timestamp, now)}] {truncate(memory.content, 100)} "
                f"(id: {memory.id}, private: {'true' if memory.is_private else 'false'})"
            )
        gone = len(episode.memory_ids) - len(members)
        if gone:
            lines.append(f"Note: {gone} memory(ies) no longer exist.")
        return Response(data="\n".join(lines), scaffold=("How does this episode feel from where you are now?",))

    # ------------------------------------------------------------------------------------------
    # consolidate

    def consolidate(self, _args: Mapping[str, Any], ctx: PluginContext) -> Response:
        until = ctx.now()
        since = until - CONSOLIDATION_WINDOW
        with ctx.progress(CONSOLIDATE_STEPS, "consolidate: reading the last day") as progress:
            recent = self.store.recent(since.timestamp(), MAX_REPLAY + 1)
            truncated = len(recent) > MAX_REPLAY
            recent = recent[-MAX_REPLAY:]
            progress.advance(READ_STEPS, f"consolidate: replaying {count_of(len(recent), 'event')}")
            created, strengthened, pruned = self._replay(recent, since.timestamp())
            progress.advance(REPLAY_STEPS)
            run = ConsolidationRun(since=since, until=until, recent_ids=tuple(m.id for m in recent))
            with progress.part(HOOK_STEPS, "consolidate: what the other plugins make of it"):
                texts, scaffold = compose_sections(MemoryHooks(ctx).on_consolidate(run=run), answer="consolidate")
        summary = (
            f"Consolidation complete. Replayed {count_of(len(recent), 'event')}, strengthened {strengthened} "
            f"co-activated link(s), created {created} link(s), pruned {pruned} weak link(s)."
        )
        if truncated:
            summary += f" (Only the latest {MAX_REPLAY} of the last 24h were replayed.)"
        items: list[ScaffoldItem] = ["What feels clearer now? What still feels loose?", *scaffold]
        return Response(data="\n\n".join([summary, *texts]), scaffold=tuple(items))

    def _replay(self, recent: list[Memory], since: float) -> tuple[int, int, int]:
        """Link adjacent events, strengthen links between co-activated memories, prune weak links."""
        ids = [m.id for m in recent]
        links = self.store.links_among(ids)
        linked = {(s, t) for s, t, _, _ in links}
        create: list[tuple[str, MemoryLink]] = []
        for earlier, later in itertools.pairwise(recent):
            if (earlier.id, later.id) not in linked:
                create.append((earlier.id, MemoryLink(later.id, "leads_to", REPLAY_CONFIDENCE, "replay")))
                linked.update({(earlier.id, later.id), (later.id, earlier.id)})
        accessed = {m.id for m in recent if m.last_accessed is not None and m.last_accessed.timestamp() >= since}
        strengthen: list[tuple[str, str, str, float]] = []
        prune: list[tuple[str, str, str]] = []
        seen: set[tuple[str, str, str]] = set()
        for source, target, link_type, confidence in links:
            key = (min(source, target), max(source, target), link_type)
            if key in seen:
                continue
            seen.add(key)
            if confidence < PRUNE_BELOW:
                prune.append(key)
            elif source in accessed and target in accessed and confidence < 1.0:
                strengthen.append((*key, round(min(1.0, confidence + COACTIVATION_STEP), 4)))
        if create or strengthen or prune:
            self.store.apply_consolidation(create, strengthen, prune)
        return len(create), len(strengthen), len(prune)
