"""``[plugins.shared_memory]``: how this agent reaches the shared memory, and the gateway's own numbers."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

import attrs

from ego_shared_memory.events import (
    AGENT_ID,
    DEFAULT_AGENTS,
    PROJECT_SLUG,
    RESERVED_AGENTS,
    SOURCE_SYSTEMS,
)


def _url(_instance: object, _attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not value.startswith(("http://", "https://")):
        raise ValueError("gateway_url: expected an http:// or https:// URL, e.g. http://127.0.0.1:8787")


def _store_url(_instance: object, _attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not value.startswith(("sqlite:", "postgresql://", "postgres://")):
        raise ValueError("db: expected sqlite:///absolute/path.db or postgresql://user@host:5432/dbname")


def _agent(_instance: object, _attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and (not AGENT_ID.match(value) or value in RESERVED_AGENTS):
        raise ValueError("agent_id: expected a lower-case id such as claude (a letter, then a-z, 0-9, _ or -)")


def _project(_instance: object, _attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not PROJECT_SLUG.match(value):
        raise ValueError("project: expected a slug of lower-case letters, digits, _ or - (e.g. memory-gateway)")


def _agents(_instance: object, _attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    if not value or any(not AGENT_ID.match(a) or a in RESERVED_AGENTS for a in value):
        raise ValueError('agents: expected a non-empty list of lower-case agent ids, e.g. ["claude", "gemini"]')


def _source_system(_instance: object, _attribute: attrs.Attribute[Any], value: str) -> None:
    if value not in SOURCE_SYSTEMS:
        raise ValueError(f"source_system: expected one of {', '.join(SOURCE_SYSTEMS)}")


def _between(low: float, high: float, what: str) -> Any:
    def check(_instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
        if isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"{attribute.name}: expected {what} from {low:g} to {high:g}")

    return check


@attrs.frozen
class SharedMemoryConfig:
    """Agent side: ``gateway_url`` + ``token`` (or ``db`` for a store on this machine). Unset: no tools.

    Gateway side (``ego gateway serve`` and ``ego shared …`` read the same table): ``agents`` who may get a
    token, the pin budget, the content limits and the ruleset stamp.
    """

    gateway_url: str | None = attrs.field(default=None, validator=_url)
    token: str | None = attrs.field(default=None, repr=False)
    db: str | None = attrs.field(default=None, validator=_store_url)
    agent_id: str | None = attrs.field(default=None, validator=_agent)
    project: str | None = attrs.field(default=None, validator=_project)
    source_system: str = attrs.field(default="other", validator=_source_system)
    limit_recent: int = attrs.field(default=10, validator=_between(1, 50, "an integer"))
    timeout_seconds: float = attrs.field(default=5.0, validator=_between(0.1, 120, "a number of seconds"))
    agents: tuple[str, ...] = attrs.field(default=DEFAULT_AGENTS, converter=tuple, validator=_agents)
    pin_budget_tokens: int = attrs.field(default=400, validator=_between(50, 4000, "an integer"))
    content_warn_chars: int = attrs.field(default=1200, validator=_between(100, 100_000, "an integer"))
    content_max_chars: int = attrs.field(default=4000, validator=_between(100, 100_000, "an integer"))
    ruleset_stamp: str = "EGO_SHARED_RULESET=v1.0"


CONFIG_ENV: Final[Mapping[str, str]] = MappingProxyType(
    {
        "EGO_SHARED_URL": "gateway_url",
        "EGO_SHARED_TOKEN": "token",
        "EGO_SHARED_DB": "db",
        "EGO_SHARED_AGENT": "agent_id",
        "EGO_SHARED_PROJECT": "project",
    }
)
"""Environment variable -> config key; the environment wins over the file (keep the token in the variable)."""

GATEWAY_DB_ENV = "EGO_GATEWAY_DB"
"""The store every ``ego gateway`` / ``ego shared`` command works on when ``--db`` is not given."""


@attrs.frozen
class GatewaySettings:
    """What the gateway and the janitor need from the config."""

    agents: tuple[str, ...] = DEFAULT_AGENTS
    pin_budget_tokens: int = 400
    content_warn_chars: int = 1200
    content_max_chars: int = 4000
    ruleset_stamp: str = "EGO_SHARED_RULESET=v1.0"
    max_recent: int = 200

    @classmethod
    def of(cls, config: SharedMemoryConfig) -> GatewaySettings:
        return cls(
            agents=config.agents,
            pin_budget_tokens=config.pin_budget_tokens,
            content_warn_chars=config.content_warn_chars,
            content_max_chars=max(config.content_max_chars, config.content_warn_chars),
            ruleset_stamp=config.ruleset_stamp,
        )
