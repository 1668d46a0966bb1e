"""Recall filters, applied inside Chroma (``where``) and SQLite alike."""

from __future__ import annotations

from typing import Any

import attrs

from ego_core import Memory


@attrs.frozen
class Filters:
    emotion: str | None = None
    category: str | None = None
    ts_from: float | None = None
    ts_to: float | None = None
    valence: tuple[float, float] | None = None
    arousal: tuple[float, float] | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in attrs.astuple(self, recurse=False))

    def chroma_where(self) -> dict[str, Any] | None:
        clauses: list[dict[str, Any]] = []
        if self.emotion is not None:
            clauses.append({"emotion": self.emotion})
        if self.category is not None:
            clauses.append({"category": self.category})
        if self.ts_from is not None:
            clauses.append({"ts": {"$gte": self.ts_from}})
        if self.ts_to is not None:
            clauses.append({"ts": {"$lte": self.ts_to}})
        for key, bounds in (("valence", self.valence), ("arousal", self.arousal)):
            if bounds is not None:
                clauses.append({key: {"$gte": bounds[0]}})
                clauses.append({key: {"$lte": bounds[1]}})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def sql(self, alias: str = "m") -> tuple[str, list[Any]]:
        parts: list[str] = []
        params: list[Any] = []
        if self.emotion is not None:
            parts.append(f"{alias}.emotion = ?")
            params.append(self.emotion)
        if self.category is not None:
            parts.append(f"{alias}.category = ?")
            params.append(self.category)
        if self.ts_from is not None:
            parts.append(f"{alias}.ts >= ?")
            params.append(self.ts_from)
        if self.ts_to is not None:
            parts.append(f"{alias}.ts <= ?")
            params.append(self.ts_to)
        for key, bounds in (("valence", self.valence), ("arousal", self.arousal)):
            if bounds is not None:
                parts.append(f"{alias}.{key} BETWEEN ? AND ?")
                params.extend(bounds)
        return (" AND ".join(parts), params)

    def matches(self, memory: Memory) -> bool:
        trace = memory.emotional_trace
        ts = memory.timestamp.timestamp()
        return (
            (self.emotion is None or trace.primary == self.emotion)
            and (self.category is None or memory.category == self.category)
            and (self.ts_from is None or ts >= self.ts_from)
            and (self.ts_to is None or ts <= self.ts_to)
            and (self.valence is None or self.valence[0] <= trace.valence <= self.valence[1])
            and (self.arousal is None or self.arousal[0] <= trace.arousal <= self.arousal[1])
        )
