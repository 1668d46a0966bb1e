"""The JSON log stays strict JSON and free of third-party noise."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import pytest

from ego_core.kernel.logs import log_event
from ego_core.testing import configure_logging


def strict(line: str) -> dict[str, object]:
    def refuse(constant: str) -> float:
        raise AssertionError(f"non-standard JSON constant {constant}")

    record: dict[str, object] = json.loads(line, parse_constant=refuse)
    return record


def test_non_finite_numbers_are_written_as_strings(tmp_path: Path) -> None:
    configure_logging(tmp_path, "INFO")
    log_event(logging.getLogger("ego.test"), "numbers", nan=math.nan, inf=math.inf, nested={"x": -math.inf})
    [line] = [line for p in tmp_path.glob("*.jsonl") for line in p.read_text().splitlines()]
    record = strict(line)
    assert (record["nan"], record["inf"], record["nested"]) == ("nan", "inf", {"x": "-inf"})


@pytest.mark.parametrize(("level", "kept"), [("INFO", False), ("DEBUG", True)])
def test_a_stateless_http_session_end_is_not_logged_at_info(tmp_path: Path, level: str, kept: bool) -> None:
    configure_logging(tmp_path, level)
    logging.getLogger("mcp.server.streamable_http").info("Terminating session: None")
    logging.getLogger("mcp.server.streamable_http").warning("something that matters")
    text = "".join(p.read_text() for p in tmp_path.glob("*.jsonl"))
    assert ("Terminating session" in text) is kept
    assert "something that matters" in text
