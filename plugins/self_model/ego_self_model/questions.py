"""Open questions: their salience now, the ``self_model.questions`` service, and resurfacing by a new memory."""

from __future__ import annotations

import logging
import secrets
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

import attrs
import numpy as np

from ego_core import MemoryService, Vectors
from ego_self_model.api import OpenQuestion, QuestionState
from ego_self_model.config import SelfModelConfig
from ego_self_model.fields import key_of
from ego_self_model.people import find, names_of
from ego_self_model.salience import age_days, dormant_days, salience, state_of
from ego_self_model.store import Person, Question, StateStore

_log = logging.getLogger("ego.plugin.self_model")


def new_question_id() -> str:
    return "q_" + secrets.token_hex(6)


@attrs.frozen
class QuestionView:
    """A question as it is at one moment: how present it is, and for how long it has been out of mind."""

    question: Question
    salience: float
    state: QuestionState
    dormant_days: int


def view(question: Question, now: datetime, config: SelfModelConfig) -> QuestionView:
    value = salience(question.importance, age_days(question.surfaced, now), config)
    return QuestionView(
        question=question,
        salience=value,
        state=state_of(value, config),
        dormant_days=dormant_days(question.surfaced, question.importance, now, config),
    )


def views(questions: Sequence[Question], now: datetime, config: SelfModelConfig) -> list[QuestionView]:
    """Views of ``questions``, the most salient first (then the more important, then the older)."""
    found = [view(q, now, config) for q in questions]
    found.sort(key=lambda v: (-v.salience, -v.question.importance, v.question.created, v.question.id))
    return found


def held_by(question: Question, person: Person) -> bool:
    """Whether ``question`` is held with ``person`` (bound to their name or one of their aliases)."""
    return question.person is not None and key_of(question.person) in {key_of(n) for n in names_of(person)}


def questions_with(
    questions: Sequence[Question], person: Person, now: datetime, config: SelfModelConfig
) -> list[QuestionView]:
    """The unresolved questions among ``questions`` held with ``person``, the most salient first."""
    return views([q for q in questions if q.resolved is None and held_by(q, person)], now, config)


def held_with(store: StateStore, person: Person, now: datetime, config: SelfModelConfig) -> QuestionView | None:
    """The most salient unresolved question held with ``person``, or None (opens its own read)."""
    with store.reading() as db:
        questions = store.questions(db)
    found = questions_with(questions, person, now, config)
    return found[0] if found else None


def holder_name(question: Question, people: Sequence[Person]) -> str | None:
    """The name of whom ``question`` is held with: the person's name, or the name as it was given."""
    if question.person is None:
        return None
    person = find(people, question.person)
    return person.name if person is not None else question.person


@attrs.frozen
class Held:
    """A question just held: the question it carries forward, whom it is held with, a superseded id not found."""

    question: Question
    carried: str | None = None
    name: str | None = None
    missing: str | None = None

    def text(self) -> str:
        """The answer of ``update_self(field="new_question")``."""
        q = self.question
        parts = [f'New open question {q.id}: "{q.text}" (importance {q.importance}).']
        if self.carried is not None:
            parts.append(f"It carries forward {self.carried}.")
        if self.name is not None:
            parts.append(f"Held with {self.name}.")
        if self.missing is not None:
            parts.append(f"(supersedes {self.missing} not found — held as a fresh question.)")
        return " ".join(parts)


def hold(
    store: StateStore,
    db: sqlite3.Connection,
    question: Question,
    *,
    person: str | None,
    supersedes: str | None,
    vector: Vectors | None,
    model: str | None,
    now: datetime,
) -> Held:
    """Keep ``question`` (within the write transaction ``db``), held with ``person`` (resolved through names and
    aliases; kept as given when nobody is called so) and carrying forward the question ``supersedes``: its
    lineage continues, its person is inherited when none is given, and it is resolved (if it was open)."""
    people = store.people(db)
    old = store.question(db, supersedes) if supersedes is not None else None
    if person is not None:
        found = find(people, person)
        holder: str | None = found.name if found is not None else person
    else:
        holder = old.person if old is not None else None
    lineage = (*old.lineage, old.id) if old is not None else ()
    question = attrs.evolve(question, person=holder, lineage=lineage)
    store.add_question(db, question, vector, model)
    if old is not None and old.resolved is None:
        store.resolve(db, old.id, None, now)
        store.clear_companions(db, old.id)
    return Held(
        question=question,
        carried=old.id if old is not None else None,
        name=holder_name(question, people),
        missing=supersedes if supersedes is not None and old is None else None,
    )


def recently_triggered(item: QuestionView, now: datetime, hours: float) -> bool:
    triggered = item.question.triggered
    return triggered is not None and triggered <= now and now - triggered <= timedelta(hours=hours)


class OpenQuestionsService:
    """Implements ``ego_self_model.api.OpenQuestions``; provided as ``self_model.questions``."""

    def __init__(self, store: StateStore, now: Callable[[], datetime], config: SelfModelConfig) -> None:
        self._store = store
        self._now = now
        self._config = config

    def unresolved(self) -> Sequence[OpenQuestion]:
        with self._store.reading() as db:
            questions = self._store.questions(db)
        return [
            OpenQuestion(
                id=v.question.id,
                text=v.question.text,
                importance=v.question.importance,
                salience=v.salience,
                state=v.state,
                created=v.question.created,
            )
            for v in views(questions, self._now(), self._config)
        ]


@attrs.frozen
class Resurfaced:
    """A question a new memory brought back, as it was just before (its state and time out of mind)."""

    view: QuestionView
    similarity: float


def question_vectors(store: StateStore, memory: MemoryService, questions: Sequence[Question]) -> dict[str, Vectors]:
    """Each question's vector from the configured model; questions without one are embedded once, and kept."""
    model = memory.embedding_model
    with store.reading() as db:
        stored = store.vectors(db, [q.id for q in questions])
    vectors: dict[str, Vectors] = {}
    missing: list[Question] = []
    for question in questions:
        vector_model, vector = stored.get(question.id, (None, None))
        if vector is not None and vector_model == model:
            vectors[question.id] = vector
        else:
            missing.append(question)
    if missing:
        fresh = memory.embed([q.text for q in missing], "query")
        with store.writing() as db:
            for question, vector in zip(missing, fresh, strict=True):
                store.set_vector(db, question.id, vector, model)
                vectors[question.id] = np.asarray(vector, dtype=np.float32)
    return vectors


def resurface(
    store: StateStore,
    memory: MemoryService,
    memory_id: str,
    now: datetime,
    config: SelfModelConfig,
) -> Resurfaced | None:
    """Bring back the fading or dormant question most similar to the stored memory (cosine ≥ the threshold).

    The memory's own stored vector is used; questions are compared only when some are out of mind and not
    brought back within the cooldown. The chosen question is in mind again from ``now``.
    """
    with store.reading() as db:
        questions = store.questions(db)
    cooldown = timedelta(hours=config.resurface_cooldown_hours)
    candidates = [
        v
        for v in views(questions, now, config)
        if v.state != "active"
        and not (v.question.triggered is not None and timedelta(0) <= now - v.question.triggered < cooldown)
    ]
    if not candidates:
        return None
    found = memory.embeddings([memory_id]).get(memory_id)
    if found is None:
        return None
    target = np.asarray(found, dtype=np.float32).reshape(-1)
    vectors = question_vectors(store, memory, [v.question for v in candidates])
    threshold = config.resurface_similarity
    if threshold is None:
        threshold = memory.similarity_profile.related
    best: Resurfaced | None = None
    for candidate in candidates:
        vector = vectors.get(candidate.question.id)
        if vector is None or vector.shape != target.shape:
            continue
        similarity = float(np.dot(vector, target))
        if similarity < threshold:
            continue
        if best is None or (similarity, candidate.question.importance) > (
            best.similarity,
            best.view.question.importance,
        ):
            best = Resurfaced(view=candidate, similarity=similarity)
    if best is None:
        return None
    with store.writing() as db:
        current = store.question(db, best.view.question.id)
        if current is None or current.resolved is not None:
            return None
        store.bring_back(db, current.id, now)
    return best
