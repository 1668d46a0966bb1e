"""The four tools' definitions: one-line descriptions and compact schemas (each field's form is in the docs and
in the error a wrong value gets)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ego_self_model.fields import RELATIONSHIP_FIELDS, UPDATE_SELF_FIELDS

CONSIDER_THEM: Final = "consider_them"
AM_I_BEING_GENUINE: Final = "am_i_being_genuine"
UPDATE_SELF: Final = "update_self"
UPDATE_RELATIONSHIP: Final = "update_relationship"

DESCRIPTIONS: Final = {
    CONSIDER_THEM: "Think about a person and what they might need.",
    AM_I_BEING_GENUINE: "Check that what you're about to say is truly yours.",
    UPDATE_SELF: "Change your self-model or open questions.",
    UPDATE_RELATIONSHIP: "Change what you know about a person.",
}

PERSON: Final[Mapping[str, Any]] = {"type": "string"}

SCHEMAS: Final[Mapping[str, Mapping[str, Any]]] = {
    CONSIDER_THEM: {
        "type": "object",
        "properties": {"person": PERSON},
        "required": ["person"],
        "additionalProperties": False,
    },
    AM_I_BEING_GENUINE: {"type": "object", "properties": {}, "additionalProperties": False},
    UPDATE_SELF: {
        "type": "object",
        "properties": {"field": {"enum": list(UPDATE_SELF_FIELDS)}, "value": {}},
        "required": ["field", "value"],
        "additionalProperties": False,
    },
    UPDATE_RELATIONSHIP: {
        "type": "object",
        "properties": {"person": PERSON, "field": {"enum": list(RELATIONSHIP_FIELDS)}, "value": {}},
        "required": ["person", "field", "value"],
        "additionalProperties": False,
    },
}
