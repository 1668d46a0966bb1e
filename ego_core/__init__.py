"""ego core: hook specifications, plugin host, redaction, configuration, MCP server and CLI."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ego-core")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

from ego_core.errors import InvalidArgumentError, ToolError
from ego_core.hookspecs import hookimpl, hookspec
from ego_core.redaction import PRIVATE_MARK
from ego_core.types import (
    Check,
    Command,
    ConsolidationRun,
    EmotionalTrace,
    Memory,
    MemoryLink,
    RecallHit,
    RecallNote,
    RecallQuery,
    Redactor,
    RememberDraft,
    Response,
    ScaffoldContext,
    ScaffoldLine,
    Section,
    Tool,
    ToolOutcome,
)

__all__ = [
    "PRIVATE_MARK",
    "Check",
    "Command",
    "ConsolidationRun",
    "EmotionalTrace",
    "InvalidArgumentError",
    "Memory",
    "MemoryLink",
    "RecallHit",
    "RecallNote",
    "RecallQuery",
    "Redactor",
    "RememberDraft",
    "Response",
    "ScaffoldContext",
    "ScaffoldLine",
    "Section",
    "Tool",
    "ToolError",
    "ToolOutcome",
    "__version__",
    "hookimpl",
    "hookspec",
]
