"""Helpers shared by the memory plugin's tests (a module, not conftest, so imports are unambiguous)."""

from __future__ import annotations

import re
from pathlib import Path

from ego_memory.embedding.onnx import PACKAGED_TOKENIZER_FILE, packaged_model_file

SAVED_ID = re.compile(r"Saved \(id: (mem_[0-9a-f]{12})\)")


def saved_id(text: str) -> str:
    """The id in a ``remember`` response (fails the test when it saved nothing)."""
    found = SAVED_ID.search(text)
    assert found, text
    return found.group(1)


RESULT_LINE = re.compile(r"^\d+\. \[[^\]]+\] (.*)$", re.MULTILINE)


def recalled_contents(text: str) -> list[str]:
    """The contents of a ``recall`` response's results, best first (recall shows no ids: search_memories does)."""
    return RESULT_LINE.findall(text.partition("\n\n---\n")[0])


def recall_block(text: str, content: str) -> str:
    """The two lines of the recall result showing ``content``: ``N. [age] content`` and its metadata line."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if RESULT_LINE.match(line) and line.endswith(f"] {content}"):
            return line + "\n" + lines[index + 1]
    raise AssertionError(f"{content!r} not in\n{text}")


def packaged_model_dir(target: Path) -> Path:
    """A model directory (``model.onnx``, ``tokenizer.json``) linking the int8 all-MiniLM-L6-v2 that ego installs:
    for the tests of the ``model_dir`` option (nothing beside the clone is read)."""
    target.mkdir(parents=True, exist_ok=True)
    (target / "model.onnx").symlink_to(packaged_model_file("the tests", "reinstall the test environment"))
    (target / "tokenizer.json").symlink_to(PACKAGED_TOKENIZER_FILE)
    return target
