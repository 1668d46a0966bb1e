"""The redaction pipeline: one choke point for everything that leaves the process.

Log records (ours and third-party libraries'), workspace files, gateway payloads and public exports pass
through :class:`RedactionPipeline`. Rules run in ascending ``order`` (ties by name). A rule that raises
fails closed: the whole text is withheld and replaced by :data:`WITHHELD`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from ego_core.kernel.secrets import mask_secrets
from ego_core.types import Redactor

PRIVATE_MARK = "[REDACTED_PRIVATE_MEMORY]"
WITHHELD = "[WITHHELD: redaction failed]"
SECRETS_ORDER = 100
RESERVED_PREFIX = "ego."
"""Redactor names starting with this belong to the core (``ego.secrets``); plugins use ``<plugin id>.<rule>``."""

_log = logging.getLogger("ego.redaction")
_reentry = threading.local()


def _secrets_only(text: str) -> str:
    try:
        return mask_secrets(text)
    except Exception:
        return WITHHELD


def secret_redactor() -> Redactor:
    return Redactor(name="ego.secrets", redact=mask_secrets, order=SECRETS_ORDER)


class RedactionPipeline:
    """Applies redactors in order; fails closed."""

    def __init__(self, redactors: Iterable[Redactor] = ()) -> None:
        self._lock = threading.Lock()
        self._redactors: tuple[Redactor, ...] = ()
        self.failures = 0
        self.extend(redactors)

    @property
    def redactors(self) -> tuple[Redactor, ...]:
        return self._redactors

    def extend(self, redactors: Iterable[Redactor]) -> None:
        with self._lock:
            merged = {r.name: r for r in self._redactors}
            for redactor in redactors:
                merged[redactor.name] = redactor
            self._redactors = tuple(sorted(merged.values(), key=lambda r: (r.order, r.name)))

    def __call__(self, text: str) -> str:
        if getattr(_reentry, "active", False):
            # Called while logging one of our own failures: only the core's rules, never plugin code.
            return _secrets_only(text)
        _reentry.active = True
        try:
            return self._apply(text)
        finally:
            _reentry.active = False

    def _apply(self, text: str) -> str:
        for redactor in self._redactors:
            try:
                result: object = redactor.redact(text)
            except Exception as exc:  # fail closed whatever the rule did
                self.failures += 1
                # The message must not contain the text; the exception type is enough to debug.
                _log.error("redactor %s raised %s; the text was withheld", redactor.name, type(exc).__name__)
                return WITHHELD
            if not isinstance(result, str):
                self.failures += 1
                _log.error("redactor %s returned %s, not str; the text was withheld", redactor.name, type(result))
                return WITHHELD
            text = result
        return text

    def value(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, Mapping):
            return {str(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self.value(v) for v in value]
        return value


def default_pipeline() -> RedactionPipeline:
    return RedactionPipeline([secret_redactor()])
