"""Helpers shared by the memory plugin's tests (a module, not conftest, so imports are unambiguous)."""

from __future__ import annotations

import re

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
