"""The ``self_model.people`` service: which of some memories were shared with which person."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from ego_self_model.store import StateStore

CHUNK = 500


class PeopleService:
    """Implements ``ego_core.People`` over the shared moments (person, memory id) of the state store."""

    def __init__(self, store: StateStore) -> None:
        self.store = store

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
