"""Helpers shared by the memory plugin's tests (a module, not conftest, so imports are unambiguous)."""

from __future__ import annotations

import re

SAVED_ID = re.compile(r"Saved \(id: (mem_[0-9a-f]{12})\)")


def saved_id(text: str) -> str:
    """The id in a ``remember`` response (fails the test when it saved nothing)."""
    found = SAVED_ID.search(text)
    assert found, text
    return found.group(1)
