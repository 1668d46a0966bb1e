"""Fixtures for the in-process core tests."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from ego_core.kernel import logs
from ego_core.kernel.logs import configure_logging


@attrs.define
class JsonLog:
    """Our real handlers (JSON file + stderr) installed on the root logger for one test."""

    directory: Path

    def records(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for path in sorted(self.directory.glob("ego-*.jsonl")):
            found.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
        return found

    def text(self) -> str:
        return "".join(p.read_text(encoding="utf-8") for p in sorted(self.directory.glob("ego-*.jsonl")))

    def events(self, event: str) -> list[dict[str, Any]]:
        return [r for r in self.records() if r.get("event") == event]


class _CurrentStderr:
    """Whatever ``sys.stderr`` is when a record is written (pytest swaps it between setup and call)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


@pytest.fixture
def json_log(tmp_path: Path) -> JsonLog:
    """ego's real handlers: JSON lines under ``tmp_path/logs`` and text on stderr (see it with ``capsys``)."""
    log = JsonLog(tmp_path / "logs")
    configure_logging(log.directory, "DEBUG")
    for handler in logs.installed_handlers():
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(_CurrentStderr())  # type: ignore[arg-type]
    return log  # ego_core.testing's autouse fixture removes the handlers


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No inherited ``EGO_*`` variables; ``EGO_DATA_DIR`` is a fresh temporary directory."""
    import os

    for key in list(os.environ):
        if key.startswith("EGO_"):
            monkeypatch.delenv(key)
    data = tmp_path / "cli-data"
    monkeypatch.setenv("EGO_DATA_DIR", str(data))
    return data


@attrs.frozen
class CliRun:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(clean_env: Path, capsys: pytest.CaptureFixture[str]) -> Callable[..., CliRun]:
    """Run ``ego_core.mcp.cli.main`` in-process; returns exit code, stdout and stderr."""
    from ego_core.mcp.cli import main

    def run(*argv: str) -> CliRun:
        capsys.readouterr()
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        captured = capsys.readouterr()
        return CliRun(code=code, out=captured.out, err=captured.err)

    return run
