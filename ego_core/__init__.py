"""ego core: the public surface for plugin authors.

Everything a plugin needs is importable from ``ego_core`` itself (and its test fixtures from
``ego_core.testing``); every other ``ego_core.*`` module is private and may change without notice.
"""

from __future__ import annotations

import os as _os

# ego sends nothing anywhere. onnxruntime (imported by chromadb and by the onnx embedding provider) has telemetry
# on Linux and macOS since 1.2x: importing it writes ~/.cache/Microsoft/DeveloperTools/.onnxruntime/deviceid (a
# persistent device id) and onnxruntime.db (an offline queue of events about the OS, CPU and process), and
# uploads them. It reads ORT_DISABLE_TELEMETRY once, when it initialises: set before any plugin can import it, it
# creates no uploader, no device id and no queue. Hugging Face's hub client (model downloads) has its own switch.
_os.environ["ORT_DISABLE_TELEMETRY"] = "1"
_os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

from ego_core.embedding import (
    Embedder,
    EmbedderFactory,
    EmbedderSettings,
    EmbeddingError,
    EmbedRole,
    SimilarityProfile,
    Vectors,
)
from ego_core.errors import InvalidArgumentError, ToolError, UsageError
from ego_core.importing import (
    IMPORT_SOURCE,
    ImportFormat,
    ImportFormatError,
    ImportOptions,
    NoteEntry,
    find_date,
    local_moment,
    markdown_files,
    note_entries,
    read_json,
    read_text,
    source_moment,
    stable_id,
)
from ego_core.kernel.config import ConfigError, Settings
from ego_core.kernel.context import Clock, PluginContext, Services
from ego_core.kernel.host import PluginHost
from ego_core.kernel.logs import log_event
from ego_core.kernel.markers import HookKind, hookimpl, hookspec, spec
from ego_core.kernel.plugin import Plugin, PluginBase
from ego_core.kernel.redaction import PRIVATE_MARK
from ego_core.kernel.storage import (
    Database,
    DatabaseVersionError,
    fsync_directory,
    open_atomically,
    open_database,
    write_atomically,
    write_transaction,
)
from ego_core.mcp.factory import build_host
from ego_core.mcp.validation import is_blank
from ego_core.moved import install as _install_moved_paths
from ego_core.moved import moved_name as _moved_name
from ego_core.offerings import Prompt, PromptArgument, Resource, ResourceTemplate
from ego_core.progress import Progress
from ego_core.responses import (
    WORD_CUT_LEAST,
    calendar_days,
    compose_sections,
    duration_words,
    estimate_tokens,
    part_of_day,
    relative_age,
    text_width,
    truncate,
    when_words,
    word_break,
)
from ego_core.services import (
    BODY_SENSE,
    MEMORY_STORE,
    BodySense,
    EmotionTally,
    MemoryService,
)
from ego_core.slots import SLOTS, Slot
from ego_core.types import (
    CLAIM_KINDS,
    EMOTIONS,
    LINE_REST,
    LINK_TYPES,
    Check,
    Claim,
    ClaimKind,
    Command,
    ConsolidationRun,
    Ember,
    EmotionalTrace,
    LinkType,
    Memory,
    MemoryLink,
    RecallHit,
    RecallNote,
    RecallQuery,
    Redactor,
    RememberDraft,
    Response,
    ScaffoldContext,
    ScaffoldItem,
    ScaffoldLine,
    Section,
    SurfacedHow,
    Tool,
    ToolHandler,
    ToolOutcome,
    ToolResult,
)
from ego_core.version import __version__

__all__ = [
    "BODY_SENSE",
    "CLAIM_KINDS",
    "EMOTIONS",
    "IMPORT_SOURCE",
    "LINE_REST",
    "LINK_TYPES",
    "MEMORY_STORE",
    "PRIVATE_MARK",
    "SLOTS",
    "WORD_CUT_LEAST",
    "BodySense",
    "Check",
    "Claim",
    "ClaimKind",
    "Clock",
    "Command",
    "ConfigError",
    "ConsolidationRun",
    "Database",
    "DatabaseVersionError",
    "EmbedRole",
    "Embedder",
    "EmbedderFactory",
    "EmbedderSettings",
    "EmbeddingError",
    "Ember",
    "EmotionTally",
    "EmotionalTrace",
    "HookKind",
    "ImportFormat",
    "ImportFormatError",
    "ImportOptions",
    "InvalidArgumentError",
    "LinkType",
    "Memory",
    "MemoryLink",
    "MemoryService",
    "NoteEntry",
    "Plugin",
    "PluginBase",
    "PluginContext",
    "PluginHost",
    "Progress",
    "Prompt",
    "PromptArgument",
    "RecallHit",
    "RecallNote",
    "RecallQuery",
    "Redactor",
    "RememberDraft",
    "Resource",
    "ResourceTemplate",
    "Response",
    "ScaffoldContext",
    "ScaffoldItem",
    "ScaffoldLine",
    "Section",
    "Services",
    "Settings",
    "SimilarityProfile",
    "Slot",
    "SurfacedHow",
    "Tool",
    "ToolError",
    "ToolHandler",
    "ToolOutcome",
    "ToolResult",
    "UsageError",
    "Vectors",
    "__version__",
    "build_host",
    "calendar_days",
    "compose_sections",
    "duration_words",
    "estimate_tokens",
    "find_date",
    "fsync_directory",
    "hookimpl",
    "hookspec",
    "is_blank",
    "local_moment",
    "log_event",
    "markdown_files",
    "note_entries",
    "open_atomically",
    "open_database",
    "part_of_day",
    "read_json",
    "read_text",
    "relative_age",
    "source_moment",
    "spec",
    "stable_id",
    "text_width",
    "truncate",
    "when_words",
    "word_break",
    "write_atomically",
    "write_transaction",
]

_install_moved_paths()


def __getattr__(name: str) -> object:
    return _moved_name(name)
