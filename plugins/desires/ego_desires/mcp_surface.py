"""What the desires plugin offers besides tools: resources, a heartbeat step and completion values.

- ``ego://desires``: the desire state, how it feels and every desire's level, strongest first, with when it
  was last satisfied;
- ``ego://desires/{name}``: one desire, its ``name`` completed from the desires (strongest first);
- a step for the core's ``heartbeat`` prompt when ``attune`` (which carries the desire currents) is not served:
  feel_desires.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

from ego_core import PluginContext, Resource, ResourceTemplate, Section, hookimpl, relative_age
from ego_desires.config import DesiresConfig, band
from ego_desires.curve import EXPLICIT, SHARED, TOOL_PREFIX, Anchor
from ego_desires.levels import Reading, Snapshot
from ego_desires.render import FEELINGS, feeling_line, shown
from ego_desires.store import DesireStore

DESIRES_URI = "ego://desires"
DESIRE_TEMPLATE = "ego://desires/{name}"
HEARTBEAT_FEEL = "Call feel_desires. Notice the strongest pull; restraint is also a choice."


def _satisfied(anchor: Anchor | None, now: datetime) -> str:
    if anchor is None or anchor.quality is None:
        return "never satisfied yet"
    when = relative_age(datetime.fromtimestamp(anchor.anchored_at, UTC), now)
    if anchor.source == EXPLICIT:
        how = "you said so"
    elif anchor.source == SHARED:
        how = "by a moment shared with your companion"
    elif anchor.source.startswith(TOOL_PREFIX):
        how = f"by {anchor.source.removeprefix(TOOL_PREFIX)}"
    else:
        how = anchor.source
    return f"last satisfied {when} ({how})"


def reading_line(reading: Reading, anchor: Anchor | None, config: DesiresConfig, now: datetime) -> str:
    value = shown(reading.level)
    level_band = band(value, config)
    feeling = FEELINGS.get(reading.name)
    felt = ""
    if feeling is not None and level_band != "low":
        felt = f", {feeling[0] if level_band == 'high' else feeling[1]}"
    return f"{reading.name}: {value:.2f}, {level_band}{felt}; {_satisfied(anchor, now)}"


def desires_text(snap: Snapshot, anchors: Mapping[str, Anchor], config: DesiresConfig, now: datetime) -> str:
    lines = ["# How my desires feel", "", feeling_line(snap, config), ""]
    lines += [f"- {reading_line(r, anchors.get(r.name), config, now)}" for r in snap.strongest()]
    return "\n".join(lines)


class DesiresSurface:
    """Mixed into the desires plugin: its resources, heartbeat step and completion values (hooks)."""

    def snapshot(self) -> Snapshot:
        raise NotImplementedError  # the plugin's

    def _running(self) -> tuple[PluginContext, DesireStore]:
        raise NotImplementedError  # the plugin's

    def _state(self) -> tuple[Snapshot, Mapping[str, Anchor], DesiresConfig, datetime]:
        ctx, store = self._running()
        return self.snapshot(), store.anchors(), ctx.config, ctx.now()

    def _one(self, variables: Mapping[str, str]) -> str | None:
        snap, anchors, config, now = self._state()
        name = variables["name"].strip().lower()
        reading = next((r for r in snap.readings if r.name == name), None)
        if reading is None:
            return None
        return reading_line(reading, anchors.get(name), config, now)

    @hookimpl
    def register_resources(self, register: Callable[[Resource | ResourceTemplate], None]) -> None:
        register(
            Resource(
                DESIRES_URI,
                "desires",
                "How your desires feel now: every desire's level, strongest first, and when it was last satisfied.",
                read=lambda: desires_text(*self._state()),
                mime_type="text/markdown",
                title="My desires",
            )
        )
        register(
            ResourceTemplate(
                DESIRE_TEMPLATE,
                "desire",
                "One desire: its level now and when it was last satisfied.",
                read=self._one,
                values={"name": "desire"},
                title="A desire",
            )
        )

    @hookimpl
    def complete_values(self, kind: str, prefix: str) -> Sequence[str] | None:
        if kind != "desire":
            return None
        try:
            snap = self.snapshot()
        except RuntimeError:  # not started
            return None
        wanted = prefix.casefold()
        return [r.name for r in snap.strongest() if r.name.casefold().startswith(wanted)]

    @hookimpl
    def on_prompt(self, prompt: str, ctx: PluginContext) -> Section | None:
        if prompt != "heartbeat" or ctx.tool_served("attune") or not ctx.tool_served("feel_desires"):
            return None
        return Section(key="desires", text=HEARTBEAT_FEEL, slot="desires")
