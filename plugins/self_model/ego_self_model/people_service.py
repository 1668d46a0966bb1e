"""The ``self_model.people`` service: which of some memories were shared with which person, and how long each
has been away, and how their trust level changed."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime

from ego_self_model.absence import absence_in
from ego_self_model.api import Absence, KnownPerson, TrustChange
from ego_self_model.fields import key_of
from ego_self_model.people import companion_names, find, most_named
from ego_self_model.render import trust_words
from ego_self_model.store import Person, StateStore

CHUNK = 500


class PeopleService:
    """Implements ``ego_self_model.api.People`` over the shared moments (person, memory id, time) of the state store."""

    def __init__(self, store: StateStore, companion: str) -> None:
        self.store = store
        self.companion = companion

    def sharing(self, memory_ids: Sequence[str]) -> Mapping[str, Sequence[str]]:
        ids = list(dict.fromkeys(memory_ids))
        found: dict[str, list[str]] = defaultdict(list)
        with self.store.reading() as db:
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    "SELECT coalesce(p.name, s.person), s.memory_id FROM shared s LEFT JOIN people p"
                    f" ON p.key = s.person WHERE s.memory_id IN ({marks}) ORDER BY s.person, s.memory_id",
                    chunk,
                )
                for name, memory_id in rows:
                    found[str(name)].append(str(memory_id))
        return dict(found)

    def _find(self, people: list[Person], name: str) -> Person | None:
        """The person called ``name``; one of the companion's names finds the companion by any of them."""
        found = find(people, name)
        names = companion_names(self.companion)
        if found is not None or key_of(name) not in {key_of(n) for n in names}:
            return found
        return next((p for n in names if (p := find(people, n)) is not None), None)

    def absence(self, person: str | None, at: datetime) -> Absence | None:
        wanted = self.companion if person is None else person
        if not isinstance(wanted, str) or not key_of(wanted):
            return None
        with self.store.reading() as db:
            people = self.store.people(db)
            known = self._find(people, wanted)
            if known is None and person is None:
                known = most_named(people, self.store.public_counts())
            key, name = (known.key, known.name) if known is not None else (key_of(wanted), wanted.strip())
            companion = self._find(people, self.companion) or most_named(people, self.store.public_counts())
            home = person is None or (companion is not None and companion.key == key)
            return absence_in(self.store, db, key, name, at, lives_with=home)

    def trust_history(self, person: str) -> list[TrustChange]:
        if not isinstance(person, str) or not key_of(person):
            return []
        with self.store.reading() as db:
            known = self._find(self.store.people(db), person)
            if known is None:
                return []
            rows = self.store.trust_history(db, known.key)
        return [TrustChange(at=at, trust=trust) for _key, at, trust in rows]

    def known(self) -> list[KnownPerson]:
        with self.store.reading() as db:
            people = self.store.people(db)
            counts = {
                str(row[0]): int(row[1])
                for row in db.execute("SELECT person, count(*) FROM shared WHERE private = 0 GROUP BY person")
            }
        return [
            KnownPerson(name=p.name, trust=p.trust, trust_words=trust_words(p.trust), shared=counts.get(p.key, 0))
            for p in sorted(people, key=lambda p: p.name.casefold())
        ]
