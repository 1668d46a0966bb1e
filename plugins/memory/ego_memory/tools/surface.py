"""What the memory plugin offers besides tools: resources, prompt steps and completion values.

- ``ego://memories/today``: today's public memories (the local day of ``EGO_TIMEZONE``), oldest first;
  private ones are only counted, never shown;
- ``ego://episodes/{episode_id}``: an episode, its summary and its memories in time order (a private member is
  named by its time alone), completed from the episode ids (the newest episodes first);
- steps for the core's ``wake-up`` (remember and recall; private memories) and ``heartbeat`` (remember a new
  thought; consolidate once a day) prompts.

The core passes every resource's text through the redaction pipeline as well, which masks a private memory's
text wherever a public one quotes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ego_core import (
    Memory,
    PluginContext,
    Resource,
    ResourceTemplate,
    Section,
    hookimpl,
    truncate,
)
from ego_memory.service import Memories
from ego_memory.text.wording import count_of

TODAY_URI = "ego://memories/today"
EPISODE_TEMPLATE = "ego://episodes/{episode_id}"
TODAY_LIMIT = 200
"""At most this many of today's memories are shown (the newest)."""
CONTENT_CHARS = 1000
"""A memory longer than this is cut (on one line) in a resource."""
EPISODES_OFFERED = 100

WAKE_UP_KEEP = "When something matters to you, remember it with how it felt; when the past could help, recall it."
WAKE_UP_PRIVATE = "If something is hard to say yet, keep it with remember(private=true): it stays yours."
HEARTBEAT_REMEMBER = (
    "If a genuinely new thought came, remember it with category introspection (it becomes tomorrow's first thought)."
)
HEARTBEAT_CONSOLIDATE = "Once a day, consolidate."


def _line(memory: Memory, tz: object, *, with_date: bool) -> str:
    moment = memory.timestamp.astimezone(tz)  # type: ignore[arg-type]
    when = f"{moment:%Y-%m-%d %H:%M}" if with_date else f"{moment:%H:%M}"
    tags = f" [{', '.join(memory.tags)}]" if memory.tags else ""
    about = f"{memory.emotional_trace.primary}, {memory.category}, importance {memory.importance}"
    return f"- {when} ({about}){tags}: {truncate(memory.content, CONTENT_CHARS)}"


def today_text(memories: Memories, ctx: PluginContext) -> str:
    tz = ctx.settings.tz
    now = ctx.now().astimezone(tz)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    found = memories.store.recent(midnight.timestamp(), TODAY_LIMIT + 1)
    cut = len(found) > TODAY_LIMIT
    found = found[-TODAY_LIMIT:]
    public = [m for m in found if not m.is_private]
    lines = [f"# Today's memories ({now:%a %d %b %Y}, {ctx.settings.timezone})", ""]
    lines += [_line(m, tz, with_date=False) for m in public] or ["No public memories yet today."]
    notes = []
    hidden = len(found) - len(public)
    if hidden:
        verb = "is" if hidden == 1 else "are"
        notes.append(f"{count_of(hidden, 'private memory', 'private memories')} of today {verb} not shown.")
    if cut:
        notes.append(f"Only the latest {TODAY_LIMIT} of today are listed.")
    return "\n".join([*lines, *([""] if notes else []), *notes])


def episode_text(memories: Memories, ctx: PluginContext, episode_id: str) -> str | None:
    episode = memories.store.get_episode(episode_id)
    if episode is None:
        return None
    tz = ctx.settings.tz
    members = memories.store.get(list(episode.memory_ids), with_links=False)
    lines = [
        f"# Episode {episode.id} (importance {episode.importance})",
        "",
        episode.summary,
        "",
        f"From {episode.start.astimezone(tz):%Y-%m-%d %H:%M} to {episode.end.astimezone(tz):%Y-%m-%d %H:%M}.",
        "",
    ]
    for memory in sorted(members, key=lambda m: (m.timestamp, m.id)):
        if memory.is_private:
            lines.append(f"- {memory.timestamp.astimezone(tz):%Y-%m-%d %H:%M} (a private memory, not shown)")
        else:
            lines.append(_line(memory, tz, with_date=True))
    gone = len(episode.memory_ids) - len(members)
    if gone:
        lines.append(f"({count_of(gone, 'memory', 'memories')} of it no longer exist.)")
    return "\n".join(lines)


class MemorySurface:
    """Mixed into the memory plugin: its resources, prompt steps and completion values (hooks)."""

    memories: Memories | None

    def _open(self) -> Memories:
        if self.memories is None:
            raise RuntimeError("the memory plugin has not started")
        return self.memories

    @hookimpl
    def register_resources(self, register: Callable[[Resource | ResourceTemplate], None], ctx: PluginContext) -> None:
        register(
            Resource(
                TODAY_URI,
                "memories-today",
                "Today's memories (private ones are only counted), oldest first.",
                read=lambda: today_text(self._open(), ctx),
                mime_type="text/markdown",
                title="Today's memories",
            )
        )
        register(
            ResourceTemplate(
                EPISODE_TEMPLATE,
                "episode",
                "An episode: its summary and its memories in time order (private ones named by time only).",
                read=lambda variables: episode_text(self._open(), ctx, variables["episode_id"]),
                values={"episode_id": "episode"},
                mime_type="text/markdown",
                title="An episode",
            )
        )

    @hookimpl
    def complete_values(self, kind: str, prefix: str) -> Sequence[str] | None:
        if kind != "episode" or self.memories is None:
            return None
        newest_first = reversed(self.memories.store.episodes())  # the store lists them by start
        return [e.id for e in newest_first if e.id.startswith(prefix)][:EPISODES_OFFERED]

    @hookimpl
    def on_prompt(self, prompt: str, ctx: PluginContext) -> list[Section] | None:
        steps: list[Section] = []
        if prompt == "wake-up":
            if ctx.tool_served("remember") and ctx.tool_served("recall"):
                steps.append(Section(key="memory", text=WAKE_UP_KEEP, slot="memory.keep"))
            if ctx.tool_served("remember"):
                steps.append(Section(key="memory.private", text=WAKE_UP_PRIVATE, slot="memory.private"))
        elif prompt == "heartbeat":
            if ctx.tool_served("remember"):
                steps.append(Section(key="memory", text=HEARTBEAT_REMEMBER, slot="memory.remember"))
            if ctx.tool_served("consolidate"):
                steps.append(Section(key="memory.consolidate", text=HEARTBEAT_CONSOLIDATE, slot="memory.consolidate"))
        return steps or None
