"""What the self_model plugin offers besides tools: resources, prompt steps and completion values.

- ``ego://self``: the self-model in words (identity, values, preferences, goals, skills, recent growth), the
  open questions and the people the agent knows;
- ``ego://people/{person}``: one person, as consider_them pictures them (without quoting a private memory);
- ``person`` values for completion: the companion, then every person's name and aliases;
- a step for the core's ``wake-up`` and ``heartbeat`` prompts when they name a person: consider_them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ego_core import (
    MEMORY_STORE,
    MemoryService,
    PluginContext,
    Resource,
    ResourceTemplate,
    Section,
    hookimpl,
    relative_age,
    truncate,
)
from ego_self_model.people import Bond, bond, companion_of, names_of, resolve
from ego_self_model.questions import holder_name, views
from ego_self_model.relations import since_words
from ego_self_model.render import person_text, skill_words, trust_words
from ego_self_model.selfmodel import SelfModel
from ego_self_model.store import Person, Question

SELF_URI = "ego://self"
PERSON_TEMPLATE = "ego://people/{person}"
LIST_ITEMS = 10
"""The newest items of a list (values, goals, …) shown in ``ego://self``."""
GROWTH_SHOWN = 5
QUESTIONS_SHOWN = 10
PEOPLE_SHOWN = 50


def _quoted(person: str) -> str:
    return person.replace("\\", "\\\\").replace('"', '\\"')


def _question_line(question: Question, people: Sequence[Person]) -> str:
    holder = holder_name(question, people)
    held = f", with {holder}" if holder is not None else ""
    return f'- "{truncate(question.text, 200)}" (importance {question.importance}{held})'


def self_text(model: SelfModel) -> str:
    ctx = model.ctx
    now = ctx.now()
    store = model.store
    with store.reading() as db:
        fields = store.fields(db)
        growth = store.growth(db, latest=GROWTH_SHOWN)
        questions = store.questions(db)
        people = store.people(db)
        ties = {person.key: bond(store, db, person.key, now) for person in people[:PEOPLE_SHOWN]}
    lines = ["# Who I am becoming", ""]
    identity: list[str] = fields.get("identity") or []
    lines.append(f'In my own words: "{identity[-1]}"' if identity else "In my own words: not put into words yet.")
    for field, label in (("values", "Values"), ("preferences", "Preferences"), ("goals", "Goals")):
        items: list[str] = fields.get(field) or []
        if items:
            lines.append(f"{label}: {', '.join(reversed(items[-LIST_ITEMS:]))}")
    skills: Mapping[str, float] = fields.get("skill_confidence") or {}
    if skills:
        ordered = sorted(skills.items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append("Skills: " + ", ".join(f"{name} ({skill_words(value)})" for name, value in ordered))
    if growth:
        lines += ["", "## Growth", ""]
        lines += [f'- {relative_age(g.at, now)}: "{truncate(g.text, 200)}"' for g in growth]
    active = [v for v in views(questions, now, model.config) if v.state == "active"][:QUESTIONS_SHOWN]
    lines += ["", "## Open questions", ""]
    lines += [_question_line(v.question, people) for v in active] or ["None on my mind right now."]
    lines += ["", "## People", ""]
    companion_key = companion_of(people, ctx.settings.companion_name, now, model.config).key
    lines += [
        _person_line(person, ties[person.key], model, now, companion_key) for person in people[:PEOPLE_SHOWN]
    ] or ["Nobody noted yet."]
    return "\n".join(lines)


def _person_line(person: Person, ties: Bond, model: SelfModel, now: Any, companion_key: str) -> str:
    companion = person.key == companion_key
    aside = " (the one you live with)" if companion else ""
    shared = (
        f"last shared {since_words(ties.last.at, now, model.ctx.settings.tz)}"
        if ties.last is not None
        else "nothing shared yet"
    )
    return f"- {person.name}{aside}: {trust_words(person.trust)}; {shared}."


def person_resource_text(model: SelfModel, name: str) -> str | None:
    """A person as consider_them pictures them, or ``None`` for someone the agent does not know. The last shared
    memory is quoted only when it is public."""
    ctx = model.ctx
    now = ctx.now()
    companion = ctx.settings.companion_name
    with model.store.reading() as db:
        people = model.store.people(db)
        person = resolve(people, name, companion, now, model.config)
        if person is None:
            return None
        lives_with = person.key == companion_of(people, companion, now, model.config).key
        ties = bond(model.store, db, person.key, now)
    last = None
    memory = ctx.services.get(MEMORY_STORE, MemoryService)
    if memory is not None and ties.last is not None and not ties.last.private:
        found = memory.get([ties.last.memory_id])
        last = found[0] if found and not found[0].is_private else None
    return person_text(person, ties, last, now, tz=ctx.settings.tz, known=True, companion=lives_with)


class SelfModelSurface:
    """Mixed into the self_model plugin: its resources, prompt steps and completion values (hooks)."""

    model: SelfModel | None

    def _model(self) -> SelfModel:
        if self.model is None:
            raise RuntimeError("the self_model plugin has not started")
        return self.model

    @hookimpl
    def register_resources(self, register: Callable[[Resource | ResourceTemplate], None]) -> None:
        register(
            Resource(
                SELF_URI,
                "self",
                "The self-model in words: who you are becoming, your open questions and the people you know.",
                read=lambda: self_text(self._model()),
                mime_type="text/markdown",
                title="Who I am becoming",
            )
        )
        register(
            ResourceTemplate(
                PERSON_TEMPLATE,
                "person",
                "One person you know (by name or alias), as consider_them pictures them.",
                read=lambda variables: person_resource_text(self._model(), variables["person"]),
                values={"person": "person"},
                title="A person",
            )
        )

    @hookimpl
    def complete_values(self, kind: str, prefix: str, ctx: PluginContext) -> Sequence[str] | None:
        if kind != "person" or self.model is None:
            return None
        store = self.model.store
        with store.reading() as db:
            people = store.people(db)
        names = [ctx.settings.companion_name, *(name for person in people for name in names_of(person))]
        wanted = prefix.casefold()
        return [name for name in names if name.casefold().startswith(wanted)]

    @hookimpl
    def on_prompt(self, prompt: str, arguments: Mapping[str, str], ctx: PluginContext) -> Section | None:
        person = arguments.get("person")
        if not person or not ctx.tool_served("consider_them"):
            return None
        call = f'consider_them(person="{_quoted(person)}")'
        if prompt == "wake-up":
            text = f"You are with {person}: {call} brings back what you know of them."
        elif prompt == "heartbeat" and not ctx.tool_served("attune"):
            text = f"Think of {person}: {call}, and what they might need from you now."
        else:
            return None
        return Section(key="self_model", text=text, slot="self_model.person")
