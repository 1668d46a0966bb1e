"""ego self_model: who the agent is becoming, open questions that fade and resurface, the people it knows."""

from __future__ import annotations

from ego_self_model.config import SelfModelConfig
from ego_self_model.fields import RELATIONSHIP_FIELDS, UPDATE_SELF_FIELDS
from ego_self_model.plugin import SelfModelPlugin
from ego_self_model.salience import salience, state_of
from ego_self_model.store import DB_NAME

__all__ = [
    "DB_NAME",
    "RELATIONSHIP_FIELDS",
    "UPDATE_SELF_FIELDS",
    "SelfModelConfig",
    "SelfModelPlugin",
    "salience",
    "state_of",
]
