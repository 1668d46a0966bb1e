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

from ego_core.config import ConfigError, Settings
from ego_core.context import Clock, PluginContext, Services
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
from ego_core.factory import build_host
from ego_core.hookspecs import hookimpl, hookspec
from ego_core.host import PluginHost
from ego_core.logs import log_event
from ego_core.offerings import Prompt, PromptArgument, Resource, ResourceTemplate
from ego_core.plugin import Plugin, PluginBase
from ego_core.progress import Progress
from ego_core.redaction import PRIVATE_MARK
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
    DESIRE_LEVELS,
    MEMORY_STORE,
    NOTIONS_STORE,
    OPEN_QUESTIONS,
    PEOPLE,
    PRECIOUS_INTENSITY,
    PRECIOUS_MAX_IMPORTANCE,
    PRECIOUS_RETURNS,
    Absence,
    AbsenceBand,
    BodySense,
    DesireLevels,
    DesireSample,
    EmotionTally,
    KnownPerson,
    MemoryService,
    NotionStore,
    NotionView,
    OpenQuestion,
    OpenQuestions,
    People,
    Preciousness,
    QuestionState,
    TrustChange,
    preciousness,
)
from ego_core.storage import Database, DatabaseVersionError, write_transaction
from ego_core.types import (
    CLAIM_KINDS,
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
from ego_core.validation import is_blank
from ego_core.version import __version__

__all__ = [
    "BODY_SENSE",
    "CLAIM_KINDS",
    "DESIRE_LEVELS",
    "LINE_REST",
    "LINK_TYPES",
    "MEMORY_STORE",
    "NOTIONS_STORE",
    "OPEN_QUESTIONS",
    "PEOPLE",
    "PRECIOUS_INTENSITY",
    "PRECIOUS_MAX_IMPORTANCE",
    "PRECIOUS_RETURNS",
    "PRIVATE_MARK",
    "WORD_CUT_LEAST",
    "Absence",
    "AbsenceBand",
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
    "DesireLevels",
    "DesireSample",
    "EmbedRole",
    "Embedder",
    "EmbedderFactory",
    "EmbedderSettings",
    "EmbeddingError",
    "Ember",
    "EmotionTally",
    "EmotionalTrace",
    "InvalidArgumentError",
    "KnownPerson",
    "LinkType",
    "Memory",
    "MemoryLink",
    "MemoryService",
    "NotionStore",
    "NotionView",
    "OpenQuestion",
    "OpenQuestions",
    "People",
    "Plugin",
    "PluginBase",
    "PluginContext",
    "PluginHost",
    "Preciousness",
    "Progress",
    "Prompt",
    "PromptArgument",
    "QuestionState",
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
    "SurfacedHow",
    "Tool",
    "ToolError",
    "ToolHandler",
    "ToolOutcome",
    "ToolResult",
    "TrustChange",
    "UsageError",
    "Vectors",
    "__version__",
    "build_host",
    "calendar_days",
    "compose_sections",
    "duration_words",
    "estimate_tokens",
    "hookimpl",
    "hookspec",
    "is_blank",
    "log_event",
    "part_of_day",
    "preciousness",
    "relative_age",
    "text_width",
    "truncate",
    "when_words",
    "word_break",
    "write_transaction",
]
