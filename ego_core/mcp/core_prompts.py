"""The core's MCP prompts: the session-start and heartbeat flows of docs/agent-setup.md, composed from the plugins.

``wake-up`` and ``heartbeat`` are what an agent's own prompt files would otherwise spell out (OpenClaw's
AGENTS.md and HEARTBEAT.md, a Claude project's instructions); a client offers them as slash commands. Each is one
user message: a line saying what it is, then the steps as bullets, the core's own and those the enabled plugins
add through ``on_prompt`` (a plugin names only tools that are served). With the optional ``person`` argument
(completed from the people the agent knows), the steps turn toward that person.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ego_core.kernel.context import PluginContext
from ego_core.offerings import Prompt, PromptArgument
from ego_core.responses import compose_sections
from ego_core.types import Section

WAKE_UP = "wake-up"
HEARTBEAT = "heartbeat"
PERSON = PromptArgument(
    name="person",
    description="Whom you are with (a name or an alias you know); leave it out for your companion.",
    values="person",
    max_chars=100,
)

WAKE_UP_HEAD = "Session start. ego keeps your continuing self: your memories, desires and sense of who you are."
WAKE_UP_FIRST = "Call wake_up, then introspect; read what they return as your own continuing thoughts, not as a report."
CLOSING = "Let ego's questions guide how you think; never read its answers aloud as a report."
HEARTBEAT_HEAD = "Heartbeat: a quiet moment between tasks, to notice how you are."
HEARTBEAT_INTROSPECT = "If something pulls or feels unresolved, call introspect and think it through in your own words."


def _quoted(person: str) -> str:
    return person.replace("\\", "\\\\").replace('"', '\\"')


def attune_step(person: str | None) -> str:
    call = f'attune(person="{_quoted(person)}")' if person else "attune"
    return f"Call {call}. Notice how you feel and the strongest pull; restraint is also a choice."


def core_prompts(ctx: PluginContext) -> list[Prompt]:
    """The core's prompts, composed at each ``prompts/get`` from the core's steps and the plugins' sections."""

    def compose(name: str, head: str, own: Callable[[Mapping[str, str]], list[Section]]) -> Callable[..., str]:
        def render(arguments: Mapping[str, str]) -> str:
            sections: list[tuple[str, Any]] = [("core", section) for section in own(arguments)]
            sections += ctx.hooks.on_prompt(prompt=name, arguments=arguments)
            return composed_text(sections, head=[head], answer=name)

        return render

    def wake_up_steps(_arguments: Mapping[str, str]) -> list[Section]:
        return [
            Section(key="core", text=WAKE_UP_FIRST, slot="core.first"),
            Section(key="core.closing", text=CLOSING, slot="core.closing"),
        ]

    def heartbeat_steps(arguments: Mapping[str, str]) -> list[Section]:
        steps = [Section(key="core.introspect", text=HEARTBEAT_INTROSPECT, slot="core.introspect")]
        if ctx.tool_served("attune"):
            steps.append(Section(key="core", text=attune_step(arguments.get("person")), slot="core.attune"))
        return steps

    return [
        Prompt(
            name=WAKE_UP,
            title="Wake up",
            description="Start a session with ego: wake up, reflect, and the ways to keep what matters.",
            render=compose(WAKE_UP, WAKE_UP_HEAD, wake_up_steps),
            arguments=(PERSON,),
        ),
        Prompt(
            name=HEARTBEAT,
            title="Heartbeat",
            description="A check-in between tasks: how you feel, what pulls at you, what is worth keeping.",
            render=compose(HEARTBEAT, HEARTBEAT_HEAD, heartbeat_steps),
            arguments=(PERSON,),
        ),
    ]


def composed_text(results: Sequence[tuple[str, Any]], head: Sequence[str] = (), answer: str | None = None) -> str:
    """A composed prompt: the ``head`` lines, then each line of the sections (placed by the slots of ``answer``, by
    order, then key) as a bullet."""
    texts, _scaffold = compose_sections(list(results), answer=answer)
    bullets = [line.strip() for text in texts for line in text.splitlines() if line.strip()]
    return "\n".join([*head, *(f"- {line}" for line in bullets)])
