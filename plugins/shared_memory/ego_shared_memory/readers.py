"""The ``shared_memory.readers`` service: clients for the shared memory as the agent's tools read it, for a host's
other readers (the dashboard) that must not import this plugin."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ego_shared_memory.client import GatewayClient, LocalClient, RefusedError, SharedClient, UnreachableError
from ego_shared_memory.config import GatewaySettings, SharedMemoryConfig

READERS = "shared_memory.readers"


class GatewayRequests(GatewayClient):
    """A gateway client that makes any of the gateway's calls (an event by id, the janitor's endpoints), sent
    and retried as the agent's own calls are."""

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        return self._call(method, path, json=dict(body)) if body is not None else self._call(method, path)


class Readers:
    """New clients on the configured shared memory; the caller closes them. ``unreachable`` and ``refused`` are
    the errors they raise (``reason``; ``status`` and ``payload``)."""

    unreachable: type[UnreachableError] = UnreachableError
    refused: type[RefusedError] = RefusedError

    def __init__(self, config: SharedMemoryConfig, agent: str | None = None) -> None:
        self._config = config
        self._agent = agent

    def agent(self) -> SharedClient:
        """A client as the agent's tools have it: the gateway with the agent's token, or the local store."""
        config, agent = self._config, self._agent
        if config.gateway_url is not None and config.token is not None:
            return GatewayClient(config.gateway_url, config.token, timeout=config.timeout_seconds, agent=agent)
        writer = config.agent_id or agent
        if config.db is not None and writer is not None:
            return LocalClient(config.db, writer, GatewaySettings.of(config), agent=agent)
        raise ValueError("the shared memory plugin is not configured (gateway_url or db)")

    def gateway(self, token: str | None = None) -> GatewayRequests | None:
        """Any call to the gateway with ``token`` (the agent's when None, an operator's for the janitor); None
        when the plugin uses a local store."""
        config = self._config
        chosen = token or config.token
        if config.gateway_url is None or chosen is None:
            return None
        return GatewayRequests(config.gateway_url, chosen, timeout=config.timeout_seconds)
