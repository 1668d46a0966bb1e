"""Per-agent bearer tokens: shown once when made, stored only as their SHA-256."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from ego_shared_memory.events import AGENT_ID, RESERVED_AGENTS
from ego_shared_memory.store import SqlStore
from ego_shared_memory.store.base import Role

PREFIX = "egs_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(store: SqlStore, agent_id: str, *, role: Role, agents: tuple[str, ...], now: datetime) -> str:
    """A new token for ``agent_id`` (an agent token needs an id from ``agents``); returns the token itself."""
    if not AGENT_ID.match(agent_id) or agent_id in RESERVED_AGENTS:
        reserved = ", ".join(sorted(RESERVED_AGENTS))
        raise ValueError(
            f"agent id must be lower-case (a letter, then a-z, 0-9, _ or -, at most 32) and not one of {reserved}"
        )
    if role == "agent" and agent_id not in agents:
        raise ValueError(
            f"{agent_id} is not among the configured agents ({', '.join(agents)}); add it to "
            "[plugins.shared_memory] agents, or make an operator token with --admin"
        )
    token = PREFIX + secrets.token_urlsafe(32)
    store.add_token(hash_token(token), agent_id, role, now)
    return token
