"""The ``shared_memory`` plugin: one append-only, permissioned memory for several agents.

- Agent side: the tools ``shared_snapshot`` and ``shared_append``, when ``[plugins.shared_memory]`` names a
  gateway (``gateway_url`` + ``token``) or a store on this machine (``db`` + ``agent_id``); unset, no tools.
- Operator side: ``ego gateway serve | token …`` and ``ego shared list | search | cleanup | consolidate |
  janitor | conflicts | audit | export-md | export | import``, each on the store given by ``--db`` or
  ``EGO_GATEWAY_DB``.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import ClassVar

from ego_core import (
    Check,
    Command,
    ConfigError,
    PluginContext,
    Resource,
    ResourceTemplate,
    ScaffoldLine,
    Section,
    Tool,
    ToolError,
    hookimpl,
)
from ego_shared_memory.cli import commands
from ego_shared_memory.client import GatewayClient, LocalClient, PendingAppends, SharedClient, UnreachableError
from ego_shared_memory.config import CONFIG_ENV, GatewaySettings, SharedMemoryConfig
from ego_shared_memory.readers import READERS, Readers
from ego_shared_memory.tools import SharedTools

SNAPSHOT_URI = "ego://shared/snapshot"
PENDING_FILE = "pending_appends.json"
"""In the plugin's data directory: appends whose outcome stayed unknown (fingerprints and run ids only)."""


def _configured(config: SharedMemoryConfig) -> bool:
    return config.gateway_url is not None or config.db is not None


def _check(config: SharedMemoryConfig, agent: str | None) -> None:
    if config.gateway_url is not None and config.db is not None:
        raise ConfigError("plugins.shared_memory: set gateway_url (a gateway) or db (a local store), not both")
    if config.gateway_url is not None and not config.token:
        raise ConfigError(
            "plugins.shared_memory.token (EGO_SHARED_TOKEN): a gateway needs this agent's token; make one with "
            "`ego gateway token create <agent_id>` and put it in EGO_SHARED_TOKEN"
        )
    if config.db is not None and config.agent_id is None and agent is None:
        raise ConfigError(
            "plugins.shared_memory.agent_id (EGO_SHARED_AGENT): a local store needs the agent id this agent writes as"
        )


class SharedMemoryPlugin:
    """Entry point ``shared_memory``."""

    config_class: ClassVar[type[SharedMemoryConfig]] = SharedMemoryConfig
    config_env: ClassVar[Mapping[str, str]] = CONFIG_ENV
    requires: ClassVar[tuple[str, ...]] = ()
    local_state: ClassVar[str] = "fingerprints of appends whose outcome is unknown, kept until they are resent"

    def __init__(self) -> None:
        self._client: SharedClient | None = None
        self._tools: SharedTools | None = None

    def _client_or_fail(self) -> SharedClient:
        if self._client is None:
            raise UnreachableError("the shared_memory plugin is not started")
        return self._client

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None], ctx: PluginContext) -> None:
        config: SharedMemoryConfig = ctx.config
        if not _configured(config):
            return
        default_scopes = None
        writer = config.agent_id or ctx.settings.agent
        if config.project is not None and writer is not None:
            default_scopes = ["global", f"project:{config.project}", f"agent:{writer}"]
        elif config.project is not None:
            default_scopes = ["global", f"project:{config.project}"]
        self._tools = SharedTools(
            self._client_or_fail,
            run_id=f"run_{ctx.now():%Y%m%d}_{secrets.token_hex(4)}",
            source_system=config.source_system,
            limit_recent=config.limit_recent,
            default_scopes=default_scopes,
            pending=PendingAppends(ctx.data_dir / PENDING_FILE),
        )
        for tool in self._tools.tools():
            register(tool)

    @hookimpl
    def register_resources(self, register: Callable[[Resource | ResourceTemplate], None], ctx: PluginContext) -> None:
        """``ego://shared/snapshot``, when configured: what shared_snapshot shows (pinned, then recent)."""
        if not _configured(ctx.config):
            return
        register(
            Resource(
                SNAPSHOT_URI,
                "shared-snapshot",
                "The memory shared with the other agents: pinned entries, then the most recent.",
                read=partial(self._snapshot_text, ctx),
                title="Shared memory",
            )
        )

    def _snapshot_text(self, ctx: PluginContext) -> str:
        if self._tools is None:
            raise ToolError("The shared memory is not configured.")
        try:
            return self._tools.snapshot({}, ctx).data
        except ToolError as exc:  # the tool's words are for the agent; a reader of the resource gets the reason
            reason, cut, _rest = exc.message.partition(". Stop here")
            raise ToolError(reason + "." if cut else reason) from None

    @hookimpl
    def register_commands(self, register: Callable[[Command], None], ctx: PluginContext) -> None:
        for command in commands(ctx):
            register(command)

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        config: SharedMemoryConfig = ctx.config
        if not _configured(config):
            return
        # serving one agent's space (HTTP, --agent): every call is that agent's, refused when the configured
        # identity (the token's agent, agent_id) is another's; a local store is written as that agent by default
        agent = ctx.settings.agent
        _check(config, agent)
        ctx.provide(READERS, Readers(config, agent))
        if config.gateway_url is not None:
            assert config.token is not None
            self._client = GatewayClient(config.gateway_url, config.token, timeout=config.timeout_seconds, agent=agent)
        else:
            writer = config.agent_id or agent
            assert config.db is not None
            assert writer is not None
            self._client = LocalClient(config.db, writer, GatewaySettings.of(config), agent=agent)

    @hookimpl
    def on_shutdown(self) -> None:
        if self._client is not None:
            self._client.close()
        self._client = None

    @hookimpl
    def on_wake_up(self, ctx: PluginContext) -> Section | None:
        """No line of its own (wake_up stays short): a scaffold line points at shared_snapshot when it serves."""
        if self._client is None:
            return None
        pointer = ScaffoldLine("shared_snapshot shows what the other agents know.", {"shared_snapshot"})
        return Section(key="shared_memory", text="", slot="shared_memory", scaffold=(pointer,))

    @hookimpl
    def doctor_checks(self, ctx: PluginContext) -> Sequence[Check]:
        config: SharedMemoryConfig = ctx.config
        if not _configured(config):
            return [Check("shared memory", True, "not configured: set gateway_url + token, or db + agent_id")]
        client = self._client
        if client is None:
            return [Check("shared memory", False, "not started (see ego plugins)")]
        try:
            snap = client.snapshot(None, 0)
        except UnreachableError as exc:
            return [Check("shared memory", False, f"{client.describe()}: {exc.reason}")]
        except Exception as exc:  # a refusal: reachable, but this agent may not read its default scopes
            return [Check("shared memory", False, f"{client.describe()}: {type(exc).__name__}: {exc}")]
        return [
            Check("shared memory", True, f"{client.describe()} readable as {snap['agent_id']} ({snap['snapshot_id']})")
        ]
