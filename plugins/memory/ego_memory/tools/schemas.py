"""MCP tool definitions of the memory plugin: compact schemas (they are in every prompt), handlers.

Every argument that reaches storage is bounded here (:mod:`ego_memory.record.limits`), except ``body_state``: its keys,
depth and size are checked by remember, whose error names the bound (a schema's ``maxProperties`` error would
only say "must be an object"). Defaults the handlers apply anyway are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ego_core import EMOTIONS, Tool, ToolHandler
from ego_memory.record.limits import (
    MAX_EPISODE_MEMBERS,
    MAX_LABEL_CHARS,
    MAX_SECONDARY,
    MAX_SUMMARY_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
)

DATE = {"type": "string", "format": "date"}


RANGE: Mapping[str, Any] = {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}
"""valence_range and arousal_range: their bounds (-1..1, 0..1) are checked by recall, whose error names them."""


LABEL = {"type": "string", "maxLength": MAX_LABEL_CHARS}

REMEMBER_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "content": {"type": "string", "maxLength": 8000},
        "emotion": {
            **LABEL,
            "description": " ".join(EMOTIONS),
        },
        "secondary": {"type": "array", "items": LABEL, "maxItems": MAX_SECONDARY},
        "intensity": {"type": "number", "minimum": 0, "maximum": 1},
        "valence": {"type": "number", "minimum": -1, "maximum": 1},
        "arousal": {"type": "number", "minimum": 0, "maximum": 1},
        "importance": {"type": "integer", "description": "1-5", "default": 3},
        "category": LABEL,
        "tags": {"type": "array", "items": {"type": "string", "maxLength": MAX_TAG_CHARS}, "maxItems": MAX_TAGS},
        "private": {"type": "boolean"},
        "force": {"type": "boolean"},
        "body_state": {"type": "object"},
        "anticipated_at": {"type": "string", "maxLength": 64},
        "with": {"type": "array", "items": {"type": "string", "maxLength": 100}, "maxItems": 10},
    },
    "required": ["content"],
    "additionalProperties": False,
}

MAX_CONTEXT_CHARS = 8000
"""The longest recall context: as long as the longest memory, so a whole memory can be the cue."""

RECALL_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "context": {"type": "string", "maxLength": MAX_CONTEXT_CHARS},
        "n_results": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        "emotion_filter": {"type": "string"},
        "category_filter": {"type": "string"},
        "date_from": DATE,
        "date_to": DATE,
        "valence_range": RANGE,
        "arousal_range": RANGE,
    },
    "required": ["context"],
    "additionalProperties": False,
}

MEMORY_ID_SCHEMA = {"type": "string", "minLength": 1}

FORGET_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"memory_id": MEMORY_ID_SCHEMA},
    "required": ["memory_id"],
    "additionalProperties": False,
}
LINK_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "source_id": MEMORY_ID_SCHEMA,
        "target_id": MEMORY_ID_SCHEMA,
        "link_type": {"type": "string", "enum": ["similar", "caused_by", "leads_to", "related"]},
    },
    "required": ["source_id", "target_id"],
    "additionalProperties": False,
}
CREATE_EPISODE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "memory_ids": {"type": "array", "items": MEMORY_ID_SCHEMA, "minItems": 1, "maxItems": MAX_EPISODE_MEMBERS},
        "summary": {"type": "string", "minLength": 1, "maxLength": MAX_SUMMARY_CHARS},
    },
    "required": ["memory_ids", "summary"],
    "additionalProperties": False,
}
GET_EPISODE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"episode_id": {"type": "string", "minLength": 1}},
    "required": ["episode_id"],
    "additionalProperties": False,
}
REVISE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "memory_id": MEMORY_ID_SCHEMA,
        "importance": {"type": "integer", "minimum": 1, "maximum": 5},
        "tags": REMEMBER_SCHEMA["properties"]["tags"],
        "private": {"type": "boolean"},
    },
    "required": ["memory_id"],
    "additionalProperties": False,
}
EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

Handler = ToolHandler


def lifecycle_tools(
    forget: Handler, link: Handler, create_episode: Handler, get_episode: Handler, consolidate: Handler
) -> list[Tool]:
    return [
        Tool(
            name="forget", description="Delete one memory by id, for good.", input_schema=FORGET_SCHEMA, handler=forget
        ),
        Tool(
            name="link_memories",
            description="Link two memories (both ways).",
            input_schema=LINK_SCHEMA,
            handler=link,
        ),
        Tool(
            name="create_episode",
            description="Group memories into an episode with a summary.",
            input_schema=CREATE_EPISODE_SCHEMA,
            handler=create_episode,
        ),
        Tool(
            name="get_episode",
            description="An episode and its memories in time order.",
            input_schema=GET_EPISODE_SCHEMA,
            handler=get_episode,
        ),
        Tool(
            name="consolidate",
            description="Replay the last day's memories: strengthen, link, prune; report near-duplicates.",
            input_schema=EMPTY_SCHEMA,
            handler=consolidate,
        ),
    ]


def revise_tool(revise: Handler, *, offered: bool) -> Tool:
    """``revise_memory``: the owner's corrections (the dashboard); offered to the agent only when configured."""
    return Tool(
        name="revise_memory",
        description="Change a memory's importance, tags or privacy (its words stay).",
        input_schema=REVISE_SCHEMA,
        handler=revise,
        tier="backend" if offered else "owner",
    )


def memory_tools(remember: Handler, recall: Handler, search: Handler, remember_log_view: Any) -> list[Tool]:
    return [
        Tool(
            name="remember",
            description="Keep a memory and its emotional trace; it links to similar ones.",
            input_schema=REMEMBER_SCHEMA,
            handler=remember,
            tier="surface",
            log_view=remember_log_view,
        ),
        Tool(
            name="recall",
            description="Bring back memories related to a context, with their associations.",
            input_schema=RECALL_SCHEMA,
            handler=recall,
            tier="surface",
        ),
        Tool(
            name="search_memories",
            description="The recall search as compact lines with ids.",
            input_schema=RECALL_SCHEMA,
            handler=search,
        ),
    ]
