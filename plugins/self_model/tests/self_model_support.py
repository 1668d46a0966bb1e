"""Helpers for the self_model tests: fixed moments, a desires stand-in, the state files, tool-name checks."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ego_core import PluginContext, PluginHost, Section, hookimpl
from ego_core.testing import export_file
from ego_desires.api import DESIRE_LEVELS, DesireSample
from ego_self_model.api import PEOPLE, People

EGO = [sys.executable, "-m", "ego_core.mcp.cli"]
NOON = datetime(2026, 3, 14, 12, 0, tzinfo=UTC)
QUESTION_ID = re.compile(r"\b(q_[0-9a-f]{12})\b")
SAVED_ID = re.compile(r"^Saved \(id: (mem_[0-9a-f]{12})\)")


def question_id(text: str) -> str:
    found = QUESTION_ID.search(text)
    assert found, text
    return found.group(1)


def saved_id(text: str) -> str:
    found = SAVED_ID.match(text)
    assert found, text
    return found.group(1)


class DesiresStandIn:
    """Provides ``desires.levels`` (and a wake_up line like the desires plugin's) with levels a test sets."""

    def __init__(self, **levels: float) -> None:
        self.current: dict[str, float] = dict(levels)
        self.broken = False

    def levels(self) -> Mapping[str, float]:
        if self.broken:
            raise RuntimeError("the desires stand-in was told to fail")
        return dict(self.current)

    def history(self, since: datetime, until: datetime) -> Sequence[DesireSample]:
        return ()

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        ctx.provide(DESIRE_LEVELS, self)

    @hookimpl
    def on_wake_up(self) -> Section:
        return Section(key="desires", text="You feel a pull toward something new, and a little lonely.", order=20)


def state_files(data_dir: Path) -> dict[str, bytes]:
    """The bytes of the self_model database and its write-ahead log (the shared-memory index is left out:
    readers update it)."""
    folder = data_dir / "self_model"
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if not p.name.endswith("-shm")}


def export_lines(host: PluginHost, path: Path, *, include_private: bool = False) -> list[dict[str, Any]]:
    """The self_model records of an ``ego export`` of ``host`` (written to ``path``)."""
    export_file(host, path, include_private=include_private)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line.get("plugin") == "self_model"]


class PeopleReader:
    """Reads the ``self_model.people`` service, as the desires and notions plugins do."""

    def __init__(self) -> None:
        self.ctx: PluginContext | None = None

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        self.ctx = ctx

    def service(self) -> People:
        assert self.ctx is not None
        people = self.ctx.services.get(PEOPLE, People)
        assert people is not None
        return people

    def shared(self) -> dict[str, int]:
        """How many moments each known person shared with the agent, by name."""
        return {person.name: person.shared for person in self.service().known()}
