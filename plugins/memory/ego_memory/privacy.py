"""Keeping private memories from leaking: a redactor that masks their text wherever it appears.

The memory plugin registers it with the core's redaction pipeline, so log records, workspace files, gateway
payloads and public exports never carry a private memory's content, in full or in the truncated forms tool
responses use. Over-masking (a public text that happens to contain a private one) is the safe direction.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

from ego_core import PRIVATE_MARK
from ego_core.responses import truncate

MIN_NEEDLE = 8
RENDERED_LIMITS = (70, 80, 100, 120, 160)


def needles(content: str) -> set[str]:
    """Every form in which ``content`` can appear in a rendering: full, folded, per line, truncated."""
    found = {content, " ".join(content.split())}
    found.update(line.strip() for line in content.splitlines())
    for limit in RENDERED_LIMITS:
        rendered = truncate(content, limit)
        found.add(rendered.removesuffix("…").rstrip())
    return {n for n in found if len(n) >= MIN_NEEDLE}


class PrivateContentRedactor:
    """Callable redactor over the set of private memory contents (thread-safe, rebuilt on change)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._contents: dict[str, str] = {}
        self._pattern: re.Pattern[str] | None = None

    def load(self, items: Iterable[tuple[str, str]]) -> None:
        with self._lock:
            self._contents = dict(items)
            self._rebuild()

    def add(self, memory_id: str, content: str) -> None:
        with self._lock:
            self._contents[memory_id] = content
            self._rebuild()

    def remove(self, memory_id: str) -> None:
        with self._lock:
            if self._contents.pop(memory_id, None) is not None:
                self._rebuild()

    def _rebuild(self) -> None:
        all_needles = {n for content in self._contents.values() for n in needles(content)}
        if not all_needles:
            self._pattern = None
            return
        ordered = sorted(all_needles, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(n) for n in ordered))

    def __call__(self, text: str) -> str:
        pattern = self._pattern
        if pattern is None:
            return text
        return pattern.sub(PRIVATE_MARK, text)
