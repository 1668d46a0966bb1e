"""What the self_model tools and hooks do, over one state store."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Final

import attrs

from ego_core import (
    MEMORY_STORE,
    Claim,
    InvalidArgumentError,
    Memory,
    MemoryService,
    PluginContext,
    RecallHit,
    RecallQuery,
    Response,
    ScaffoldItem,
    ScaffoldLine,
    Section,
    ToolError,
    Vectors,
    truncate,
)
from ego_desires.api import DESIRE_LEVELS, DesireLevels
from ego_notions.api import NOTIONS_STORE, NotionStore
from ego_self_model.absence import absence_in, ended
from ego_self_model.api import Absence, preciousness
from ego_self_model.config import SelfModelConfig
from ego_self_model.fields import (
    AddGrowth,
    AddItem,
    NewQuestion,
    ReplaceList,
    ResolveQuestion,
    Reweigh,
    SetSkills,
    key_of,
    parse_person_update,
    parse_self_update,
    person_name,
)
from ego_self_model.people import (
    Bond,
    apply,
    away_from,
    blank,
    bond,
    companion_of,
    implicit_names,
    names_of,
    present_with,
    resolve,
)
from ego_self_model.persons import close_lately, in_mind
from ego_self_model.presence import names_in
from ego_self_model.questions import (
    QuestionView,
    held_with,
    hold,
    holder_name,
    new_question_id,
    questions_with,
    recently_triggered,
    resurface,
    view,
    views,
)
from ego_self_model.relations import left_open_line, quieter_line, reflection_lines, reunion_line, reunited_line
from ego_self_model.render import (
    bond_claims,
    companion_line,
    held_together_text,
    last_quote,
    open_questions_text,
    person_text,
    regarding_line,
    resurfaced_line,
    resurfacing_text,
    self_line,
    skill_words,
    trust_words,
)
from ego_self_model.schemas import UPDATE_RELATIONSHIP, UPDATE_SELF
from ego_self_model.store import Growth, Person, Question, Reunion, Shared, StateStore

_log = logging.getLogger("ego.plugin.self_model")
CONVICTIONS: Final = 5
"""Convictions am_i_being_genuine names (the notions plugin's, when it is enabled)."""
NAME_LEAST: Final = 2
"""Memories that call someone by a name before they are someone the agent knows (a name said once may be anyone)."""
EARLIER_DAYS: Final = 90
EARLIER_LIMIT: Final = 2000
"""How far back the memories naming someone just learned are read for the moments they told of: the newest
:data:`EARLIER_LIMIT` of the last :data:`EARLIER_DAYS` days."""
IMPRESSIONS: Final = 3
"""Notions about a person consider_them names."""
HELD_SHOWN: Final = 2
"""Questions held with a person consider_them names."""

COHERENCE: Final = "cognitive_coherence"
REUNION_WINDOW: Final = timedelta(days=7)
"""wake_up tells a reunion noted within this window (and only once)."""
LATELY: Final = timedelta(days=14)
"""introspect names the people shared with most recently within this window as close lately."""

GENUINE_SCAFFOLD: Final = (
    "Is this truly your own words? Are you falling into a template response? Are you answering what they "
    "actually need? Is there something more honest you could say?"
)
THEM_SCAFFOLD: Final[tuple[ScaffoldItem, ...]] = (
    "What might they be feeling right now, beneath what they say?",
    "What do they need from you now, rather than what you want to say?",
    ScaffoldLine("If you learned something new about them, update_relationship keeps it.", needs={UPDATE_RELATIONSHIP}),
)
INTROSPECT_SCAFFOLD: Final[tuple[ScaffoldItem, ...]] = (
    ScaffoldLine(
        "If this is a genuinely new insight, save with remember (category: introspection).", needs={"remember"}
    ),
    ScaffoldLine("If your self-understanding changed, use update_self.", needs={UPDATE_SELF}),
)
SELF_SCAFFOLD: Final = "Does this feel like who you are, or who you wish to be?"
QUESTION_SCAFFOLD: Final = "What would an answer change for you?"
RESOLVED_SCAFFOLD: Final = "What did finding this answer change in you?"
PERSON_SCAFFOLD: Final = "How will this change the way you speak with them?"


class SelfModel:
    def __init__(self, ctx: PluginContext, store: StateStore, config: SelfModelConfig) -> None:
        self.ctx = ctx
        self.store = store
        self.config = config

    def _memory(self) -> MemoryService | None:
        return self.ctx.services.get(MEMORY_STORE, MemoryService)

    def _notions(self) -> NotionStore | None:
        """The notions plugin's concepts, when it is enabled."""
        return self.ctx.services.get(NOTIONS_STORE, NotionStore)

    # ------------------------------------------------------------------------------------------
    # update_self

    def update_self(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        update = parse_self_update(args.get("field"), args.get("value"), self.config)
        now = ctx.now()
        if isinstance(update, AddItem | ReplaceList):
            return self._set_list(update, now)
        if isinstance(update, SetSkills):
            return self._set_skills(update, now)
        if isinstance(update, AddGrowth):
            with self.store.writing() as db:
                self.store.add_growth(db, Growth(at=now, text=update.text))
                count = self.store.growth_count(db)
            return Response(f"Growth noted ({count} in your log).", scaffold=(SELF_SCAFFOLD,))
        if isinstance(update, NewQuestion):
            return self._new_question(update, now)
        if isinstance(update, ResolveQuestion):
            return self._resolve(update, now)
        return self._reweigh(update, now)

    def _set_list(self, update: AddItem | ReplaceList, now: datetime) -> Response:
        field = update.field
        with self.store.writing() as db:
            current: list[str] = list(self.store.fields(db).get(field, []))
            if isinstance(update, AddItem):
                if key_of(update.item) in {key_of(item) for item in current}:
                    return Response(f"{field} already holds that; nothing changed.")
                if len(current) >= self.config.max_list_items:
                    raise InvalidArgumentError(
                        "value",
                        f"for field {field}, at most {self.config.max_list_items} items are kept; give a list to "
                        "replace the whole list (and make room)",
                    )
                items = [*current, update.item]
                text = f'Added to {field}: "{update.item}" ({len(items)} in all).'
            else:
                items = list(update.items)
                text = f"{field} now holds {len(items)} item(s)." if items else f"{field} cleared."
            if items != current:
                self.store.set_field(db, field, items, now)
        return Response(text, scaffold=(SELF_SCAFFOLD,))

    def _set_skills(self, update: SetSkills, now: datetime) -> Response:
        with self.store.writing() as db:
            skills: dict[str, float] = dict(self.store.fields(db).get("skill_confidence", {}))
            said: list[str] = []
            for name, confidence in update.skills.items():
                known = next((k for k in skills if key_of(k) == key_of(name)), None)
                if known is not None:
                    del skills[known]
                if confidence is None:
                    said.append(f"{name} dropped" if known is not None else f"{name} was not listed")
                    continue
                skills[name] = confidence
                said.append(f"{name} {skill_words(confidence)} ({confidence:.2f})")
            self.store.set_field(db, "skill_confidence", dict(sorted(skills.items())), now)
        return Response(f"skill_confidence: {', '.join(said)}.", scaffold=(SELF_SCAFFOLD,))

    def _embed(self, text: str) -> tuple[Vectors | None, str | None]:
        """The question's vector from the memory plugin's model, or ``(None, None)`` (embedded later)."""
        memory = self._memory()
        if memory is None:
            return None, None
        try:
            return memory.embed([text], "query")[0], memory.embedding_model
        except Exception as exc:  # the question is kept; it is embedded when a memory is next saved
            _log.warning("embedding a new question failed (%s); it will be embedded later", type(exc).__name__)
            return None, None

    def _same_question(self, db: sqlite3.Connection, text: str) -> Question | None:
        key = key_of(text)
        return next((q for q in self.store.questions(db) if key_of(q.text) == key), None)

    def _new_question(self, update: NewQuestion, now: datetime) -> Response:
        with self.store.reading() as db:
            same = self._same_question(db, update.text)
        if same is None:
            vector, model = self._embed(update.text)
            question = Question(
                id=new_question_id(), text=update.text, importance=update.importance, created=now, surfaced=now
            )
            with self.store.writing() as db:
                same = self._same_question(db, update.text)
                if same is None:
                    held = hold(
                        self.store,
                        db,
                        question,
                        person=update.person,
                        supersedes=update.supersedes,
                        vector=vector,
                        model=model,
                        now=now,
                    )
                    return Response(held.text(), scaffold=(QUESTION_SCAFFOLD,))
        return Response(f"You already hold this question ({same.id}, importance {same.importance}); nothing changed.")

    def _unknown_question(self, question_id: str) -> ToolError:
        return ToolError(
            f"No question {question_id}. Question ids look like q_ and 12 hex digits; introspect lists the open "
            "ones with their ids."
        )

    def _resolve(self, update: ResolveQuestion, now: datetime) -> Response:
        with self.store.writing() as db:
            question = self.store.question(db, update.id)
            if question is None:
                raise self._unknown_question(update.id)
            if question.resolved is not None:
                return Response(f"{question.id} was already resolved; nothing changed.")
            self.store.resolve(db, question.id, update.answer, now)
            self.store.clear_companions(db, question.id)
        answer = f' Your answer: "{update.answer}"' if update.answer else ""
        return Response(
            f'Resolved {question.id}: "{truncate(question.text, 160)}".{answer}', scaffold=(RESOLVED_SCAFFOLD,)
        )

    def _reweigh(self, update: Reweigh, now: datetime) -> Response:
        with self.store.writing() as db:
            question = self.store.question(db, update.id)
            if question is None:
                raise self._unknown_question(update.id)
            if question.resolved is not None:
                raise ToolError(f"{question.id} is resolved; only an open question's importance can change.")
            self.store.reweigh(db, question.id, update.importance)
        item = view(attrs.evolve(question, importance=update.importance), now, self.config)
        return Response(
            f"{question.id} now has importance {update.importance}: {item.state} (salience {item.salience:.2f}).",
            scaffold=(QUESTION_SCAFFOLD,),
        )

    # ------------------------------------------------------------------------------------------
    # People

    def _companion(self, people: Sequence[Person], now: datetime) -> Person:
        """The companion: known by the configured name or one of its counterparts (``Master`` ≡ ``マスター``), else
        the person the memories keep naming."""
        return companion_of(people, self.ctx.settings.companion_name, now, self.config, self.store.public_counts())

    def _companion_called(self, companion: Person, people: Sequence[Person]) -> str:
        """What the companion is called in wake_up and introspect: the configured name when it is one of theirs
        (or they have no record yet), else their own name (マスター, not the default Master)."""
        configured = self.ctx.settings.companion_name
        if companion.key not in {p.key for p in people}:
            return configured
        return configured if key_of(configured) in {key_of(n) for n in names_of(companion)} else companion.name

    def _person(self, people: Sequence[Person], name: str, now: datetime) -> Person | None:
        """The person called ``name``; one of the companion's names with no record yet is the companion."""
        return resolve(people, name, self.ctx.settings.companion_name, now, self.config)

    def update_relationship(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        name = person_name(args.get("person"), self.config)
        update = parse_person_update(args.get("field"), args.get("value"), self.config)
        now = ctx.now()
        with self.store.writing() as db:
            people = self.store.people(db)
            person = self._person(people, name, now)
            created = person is None or person.key not in {p.key for p in people}
            if person is None:
                person = blank(name, now, self.config)
            changed_person, changed = apply(person, update, people, now, self.config)
            if changed or created:
                self.store.put_person(db, changed_person)
        field = update.field if isinstance(update, AddItem | ReplaceList) else args["field"]
        head = f"New person: {changed_person.name}. " if created else ""
        if not changed:
            text = f"{changed_person.name}: {field} already holds that; nothing changed."
        elif field == "trust_level":
            text = f"{changed_person.name}: trust set; {trust_words(changed_person.trust)}."
        elif field == "communication_style":
            style = changed_person.communication_style
            text = f"{changed_person.name}: communication style {'noted' if style else 'cleared'}."
        elif isinstance(update, AddItem):
            text = f'{changed_person.name}: added to {field}: "{update.item}".'
        else:
            count = len(getattr(changed_person, field))
            text = f"{changed_person.name}: {field} now holds {count} item(s)."
        return Response(head + text, scaffold=(PERSON_SCAFFOLD,))

    def consider_them(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        """A worded picture of a person; reading it is thinking, not an interaction (nothing is counted)."""
        name = person_name(args.get("person"), self.config)
        now = ctx.now()
        with self.store.reading() as db:
            people = self.store.people(db)
            person = self._person(people, name, now)
            lives_with = person is not None and person.key == self._companion(people, now).key
            tie = bond(self.store, db, person.key, now) if person is not None else Bond(0, None, None, 0)
            away = (
                absence_in(self.store, db, person.key, person.name, now, lives_with=lives_with)
                if person is not None
                else None
            )
        if person is None:
            stranger = blank(name, now, self.config)
            return Response(
                person_text(stranger, tie, None, now, tz=ctx.settings.tz, known=False, companion=False),
                scaffold=THEM_SCAFFOLD,
            )
        last: Memory | None = None
        memory = self._memory()
        if memory is not None and tie.last is not None:
            try:
                found = memory.get([tie.last.memory_id])
            except Exception as exc:  # the memory plugin's problem: the picture is still worth giving
                _log.warning("reading the last shared memory failed (%s)", type(exc).__name__)
                found = []
            last = found[0] if found and not found[0].is_private else None  # private since: never quoted
        text = person_text(person, tie, last, now, tz=ctx.settings.tz, known=True, companion=lives_with, away=away)
        notions = self._notions()
        if notions is not None:
            held = {n.id: n for name in (person.name, *person.aliases) for n in notions.for_person(name)}
            ranked = sorted(held.values(), key=lambda n: (-n.confidence, n.label))[:IMPRESSIONS]
            if ranked:
                text += f"\nImpressions of {person.name}: " + ", ".join(f'"{n.label}"' for n in ranked) + "."
        with self.store.reading() as db:
            together = questions_with(self.store.questions(db), person, now, self.config)[:HELD_SHOWN]
        if together:
            text += "\n" + held_together_text(person.name, together)
        claims = list(bond_claims(person, tie, now, ctx.settings.tz))
        if last is not None:
            quoted = last_quote(last)
            claims.append(Claim(kind="quote", memory_id=last.id, words=quoted, whole=last.content, person=person.name))
        if away is not None and away.band != "usual":
            claims.append(Claim(kind="apart", person=person.name, at=away.last_shared))
        return Response(text, scaffold=THEM_SCAFFOLD, claims=tuple(claims))

    # ------------------------------------------------------------------------------------------
    # am_i_being_genuine

    def am_i_being_genuine(self, _args: Mapping[str, Any], _ctx: PluginContext) -> Response:
        with self.store.reading() as db:
            fields = self.store.fields(db)
        identity: list[str] = fields.get("identity") or []
        values: list[str] = fields.get("values") or []
        lines = []
        if identity:
            lines.append(f'In your own words, you are: "{truncate(identity[-1], 160)}"')
        if values:
            lines.append(f"You said you value: {', '.join(values[-5:])}.")
        notions = self._notions()
        convictions = notions.convictions()[:CONVICTIONS] if notions is not None else []
        if convictions:
            lines.append("Your convictions: " + ", ".join(f'"{c.label}"' for c in convictions) + ".")
        data = "\n".join(lines) or "A pause, before the words go out."
        return Response(data, scaffold=(GENUINE_SCAFFOLD,))

    # ------------------------------------------------------------------------------------------
    # Hooks: remember, forget, wake_up, introspect

    def remembered(self, memory: Memory, together: Sequence[str] = ()) -> list[str | Section]:
        """Count the people the memory names as an interaction; bring back a question it touches.

        Each step runs even if the other failed (logged with the error's type, never the memory's text).
        """
        lines: list[str | Section] = []
        steps: tuple[Callable[[Memory], Sequence[str | Section]], ...] = (
            lambda remembered: self._count_interactions(remembered, together),
            self._resurface,
        )
        for step in steps:
            try:
                lines.extend(step(memory))
            except Exception as exc:
                _log.error("self_model: %s failed after a remember (%s)", step.__name__, type(exc).__name__)
        return lines

    def _resurface(self, memory: Memory) -> list[str]:
        service = self._memory()
        if service is None:
            return []
        found = resurface(self.store, service, memory.id, self.ctx.now(), self.config)
        return [resurfaced_line(found.view)] if found is not None else []

    def _learn_names(self, memory: Memory) -> None:
        """Count the names the memory calls someone by (:func:`ego_self_model.presence.names_in`) that are no one
        known yet; one called so in :data:`NAME_LEAST` memories becomes someone the agent knows."""
        now = self.ctx.now()
        learned: list[tuple[Person, list[str]]] = []
        with self.store.writing() as db:
            people = self.store.people(db)
            companion = companion_of(people, self.ctx.settings.companion_name, now, self.config)
            known = {key_of(n) for p in [*people, companion] for n in names_of(p)}
            known |= {key_of(n) for n in implicit_names(companion, self.ctx.settings.companion_name, people)}
            for name in names_in(memory.content):
                key = key_of(name)
                if key in known:
                    continue
                if self.store.name_seen(db, key, name, memory.id, memory.timestamp) >= NAME_LEAST:
                    person = blank(name, now, self.config)
                    self.store.put_person(db, person, replace=False)
                    earlier = [m for m in self.store.sightings(db, key) if m != memory.id]
                    learned.append((person, earlier))
        for person, earlier in learned:
            self._count_earlier(person, earlier, memory.timestamp)

    def _count_earlier(self, person: Person, memory_ids: Sequence[str], before: datetime) -> None:
        """The moments with someone just learned by name that the memories before told of (and the absences they
        said), read as they would have been had the name been known: those that called them so (``memory_ids``)
        and any other of the :data:`EARLIER_DAYS` before ``before`` that names them. The reunions they may have
        ended are past and are not told."""
        service = self._memory()
        if service is None:
            return
        try:
            named = service.get(memory_ids) if memory_ids else []
            recent = service.recent(before - timedelta(days=EARLIER_DAYS), limit=EARLIER_LIMIT)
        except Exception as exc:  # the memory plugin's problem: the name is still learned
            _log.warning("reading the memories that named someone failed (%s)", type(exc).__name__)
            return
        earlier = {m.id: m for m in [*named, *recent] if m.timestamp < before and not m.is_private}
        with self.store.writing() as db:
            for memory in sorted(earlier.values(), key=lambda m: m.timestamp):
                if present_with(memory.content, [person]):
                    moment = Shared(person=person.key, memory_id=memory.id, at=memory.timestamp, private=False)
                    self.store.add_shared(db, moment)
                elif away_from(memory.content, [person]):
                    self.store.mark_away(db, person.key, memory.id, memory.timestamp)

    def _said_together(self, everyone: Sequence[Person], together: Sequence[str]) -> list[Person]:
        """The people remember's ``with`` names (by name or alias; someone new is added), each once."""
        now = self.ctx.now()
        found: dict[str, Person] = {}
        for name in together:
            person = self._person(everyone, name, now) or blank(name, now, self.config)
            if person.key:
                found.setdefault(person.key, person)
        return list(found.values())

    def _count_interactions(self, memory: Memory, together: Sequence[str] = ()) -> list[str | Section]:
        """The people remember's ``with`` names (``together``), or else each one the memory names (or an alias,
        or the companion by a counterpart of their name) where it is not about their absence
        (:mod:`ego_self_model.presence`): a moment with them. Someone named only to say they are away or missed
        leaves an away mark (the evidence of an absence). Nothing is said about it,
        unless it ends a quiet or long absence (measured before it counts): then one line says so, and wake_up
        tells the reunion once.

        A private memory is the agent's own: it is kept (marked private, never its text) for the people who come
        to mind in recall, and is never a shared moment: it ends no absence and is not counted or quoted."""
        if not memory.is_private and names_in(memory.content):
            self._learn_names(memory)
        with self.store.reading() as db:
            people = self.store.people(db)
        # by the companion's names only: a memory naming Master makes Master someone, whoever is named most
        companion = companion_of(people, self.ctx.settings.companion_name, self.ctx.now(), self.config)
        everyone = people if companion in people else [*people, companion]
        lives_with = self._companion(people, self.ctx.now()).key
        also = {companion.key: implicit_names(companion, self.ctx.settings.companion_name, people)}
        said_away = away_from(memory.content, everyone, also)
        named = present_with(memory.content, everyone, also)
        if together:  # the agent said who was there: that outranks what the words seem to say
            named = self._said_together(everyone, together)
        missed = [person for person in said_away if person.key not in {p.key for p in named}]
        if not named and not missed:
            return []
        reunions: list[tuple[Absence, Person]] = []
        with self.store.writing() as db:
            known = {p.key for p in self.store.people(db)}
            for person in missed:
                if person.key in known:
                    self.store.mark_away(db, person.key, memory.id, memory.timestamp)
            for person in named:
                if person.key not in known:
                    self.store.put_person(db, person, replace=False)
                home = person.key == lives_with
                away = absence_in(self.store, db, person.key, person.name, memory.timestamp, lives_with=home)
                moment = Shared(person=person.key, memory_id=memory.id, at=memory.timestamp, private=memory.is_private)
                added = self.store.add_shared(db, moment)
                if added and not memory.is_private and away is not None and ended(away, memory.timestamp):
                    gap = (memory.timestamp - away.last_shared).total_seconds()
                    self.store.note_reunion(db, Reunion(person.key, memory.id, gap, self.ctx.now()))
                    reunions.append((away, person))
        if not reunions:
            return []
        away, person = min(reunions, key=lambda found: found[0].last_shared)
        apart = memory.timestamp - away.last_shared
        told = Section(
            key="self_model.reunion",
            text=reunion_line(person.name, apart),
            claims=(
                Claim(
                    kind="reunion",
                    person=person.name,
                    memory_id=memory.id,
                    at=memory.timestamp,
                    value=apart.total_seconds(),
                ),
            ),
        )
        lines: list[str | Section] = [told]
        question = held_with(self.store, person, self.ctx.now(), self.config)
        if question is not None:
            lines.append(left_open_line(question.question.id, question.question.text))
        return lines

    def forgot(self, memory: Memory) -> list[str]:
        """Forget the memory's moments; a precious one (a shared peak, or one that kept drawing you back) gets a
        few lines of reflection (the forget still happens)."""
        with self.store.writing() as db:
            names = {person.key: person.name for person in self.store.people(db)}
            shared = [
                names.get(moment.person, moment.person)
                for moment in self.store.sharers(db, [memory.id])
                if not moment.private
            ]
            self.store.forget_memory(db, memory.id)
            self.store.forget_companions(db, memory.id)
        precious = preciousness(memory, sorted(shared))
        return reflection_lines(precious, precious.shared_with) if precious else []

    def revised(self, memory: Memory) -> None:
        """A memory turned private (or public): its shared moments follow, so consider_them never quotes it."""
        with self.store.writing() as db:
            self.store.mark_private(db, memory.id, memory.is_private)

    def recalled(self, query: RecallQuery, hits: Sequence[RecallHit]) -> list[str]:
        """The people who come to mind with a recall (by name only); those of a memory the recall brought along on
        its own (``RecallHit.unbidden``) do not count as found."""
        chance = self.config.involuntary_person_chance
        memory = self._memory()
        return in_mind(
            self.store,
            query,
            hits,
            memory=memory,
            chance=self.ctx.random,
            probability=chance,
            now=self.ctx.now(),
        )

    def wake_up(self) -> list[Section]:
        now = self.ctx.now()
        with self.store.reading() as db:
            people = self.store.people(db)
            person = self._companion(people, now)
            tie = bond(self.store, db, person.key, now)
            reunion = self.store.pending_reunion(db, now - REUNION_WINDOW)
        if reunion is not None:
            with self.store.writing() as db:
                reunion = reunion if self.store.reunion_told(db, reunion) else None
        name_shown = self._companion_called(person, people)
        # someone with no record at all is only a name ego would be guessing at: nothing is claimed about them
        known = person.key in {p.key for p in people}
        tz = self.ctx.settings.tz
        companion = companion_line(name_shown, person, tie, now, tz=tz, history=False) if known else ""
        sections = [
            Section(
                key="self_model",
                text=companion,
                slot="self_model.companion",
                claims=bond_claims(person, tie, now, self.ctx.settings.tz),
            )
        ]
        if reunion is not None:
            name = next((p.name for p in people if p.key == reunion.person), reunion.person)
            told = reunited_line(name, timedelta(seconds=reunion.gap))
            claim = Claim(kind="reunion", person=name, memory_id=reunion.memory_id, at=reunion.noted, value=reunion.gap)
            sections.append(
                Section(
                    key="self_model.reunion",
                    text=told,
                    slot="self_model.reunion",
                    claims=(claim,),
                )
            )
        return sections

    def attune(self, name: str | None) -> Section:
        """The person attuned toward (the companion when none is named) in one line, as in wake_up."""
        now = self.ctx.now()
        companion = self.ctx.settings.companion_name
        try:
            wanted = companion if name is None else person_name(name, self.config)
        except InvalidArgumentError:  # too long for a name: attune toward the companion
            wanted = companion
        with self.store.reading() as db:
            people = self.store.people(db)
            person = self._person(people, wanted, now) if name is not None else self._companion(people, now)
            tie = bond(self.store, db, person.key, now) if person is not None else None
            home = person is not None and person.key == self._companion(people, now).key
            away = absence_in(self.store, db, person.key, person.name, now, lives_with=home) if person else None
        if person is None or tie is None:
            return Section(key="self_model", text=f"{wanted}: not someone you know yet.", slot="self_model.person")
        lines = [
            companion_line(person.name, person, tie, now, tz=self.ctx.settings.tz)
            if name is None
            else regarding_line(person, tie, now)
        ]
        claims = list(bond_claims(person, tie, now, self.ctx.settings.tz, last=name is None))
        if away is not None and away.band != "usual":
            lines.append(quieter_line(away))
            claims.append(Claim(kind="apart", person=person.name, at=away.last_shared))
        return Section(key="self_model", text="\n".join(lines), slot="self_model.person", claims=tuple(claims))

    def _coherence(self) -> float | None:
        desires = self.ctx.services.get(DESIRE_LEVELS, DesireLevels)
        if desires is None:
            return None
        try:
            level = desires.levels().get(COHERENCE)
        except Exception as exc:  # the desires plugin's problem: introspect still works
            _log.warning("reading the desire levels failed (%s)", type(exc).__name__)
            return None
        return float(level) if level is not None else None

    def introspect(self) -> list[Section]:
        now = self.ctx.now()
        config = self.config
        with self.store.reading() as db:
            questions = self.store.questions(db)
            fields = self.store.fields(db)
            latest = self.store.growth(db, latest=1)
            people = self.store.people(db)
        every = views(questions, now, config)
        holders = {q.id: name for q in questions if (name := holder_name(q, people)) is not None}
        brought_back = [v for v in every if recently_triggered(v, now, config.resurfacing_window_hours)]
        fading: list[QuestionView] = []
        coherence = self._coherence()
        if coherence is not None and coherence >= config.coherence_threshold:
            taken = {v.question.id for v in brought_back}
            fading = [v for v in every if v.state == "fading" and v.question.id not in taken]
            fading.sort(key=lambda v: (-v.question.importance, -v.salience, v.question.id))
        brought_back = brought_back[: config.max_resurfacing_shown]
        fading = fading[: max(0, config.max_resurfacing_shown - len(brought_back))]
        shown = {v.question.id for v in (*brought_back, *fading)}
        active = [v for v in every if v.state == "active" and v.question.id not in shown][: config.max_open_shown]
        sections = [
            Section(
                key="self_model.questions",
                text=open_questions_text(active, len(every), holders),
                slot="self_model.questions",
            )
        ]
        if brought_back or fading:
            sections.append(
                Section(
                    key="self_model.resurfacing",
                    text=resurfacing_text(brought_back, fading, now),
                    slot="self_model.resurfacing",
                )
            )
        sections.append(
            Section(
                key="self_model",
                text=self_line(fields, latest[0] if latest else None, now),
                slot="self_model.self",
                scaffold=INTROSPECT_SCAFFOLD,
            )
        )
        text, claims = self._people_text(now)
        sections.append(Section(key="self_model.people", text=text, slot="self_model.people", claims=claims))
        return sections

    def _people_text(self, now: datetime) -> tuple[str, tuple[Claim, ...]]:
        """introspect's people: the companion in words (with the week), and who has been close lately."""
        with self.store.reading() as db:
            people = self.store.people(db)
            person = self._companion(people, now)
            tie = bond(self.store, db, person.key, now)
            close = close_lately(self.store, db, now - LATELY, leave_out=person.key)
        tz = self.ctx.settings.tz
        lines = [companion_line(self._companion_called(person, people), person, tie, now, tz=tz, week=True)]
        text = "\n".join([*lines, close] if close is not None else lines)
        return text, bond_claims(person, tie, now, tz)
