"""Each agent its own self: one host per agent over HTTP, each with its own space under the data dir.

An ego is one self. When several agents share one HTTP server (one bearer token each), the token chooses the
agent and the agent's space, ``<data dir>/agents/<agent id>/``: its own memories, desires, self-model. No
request field can choose another space. Agents share what they mean to share through the shared-memory
gateway, never through each other's memories. The log is shared (``<data dir>/logs``) and passes through one
pipeline holding every agent's redaction rules, so no agent's private text reaches it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from ego_core.kernel.config import ConfigError, Settings, valid_agent_id
from ego_core.kernel.host import PluginHost
from ego_core.kernel.logs import install_pipeline
from ego_core.kernel.redaction import RESERVED_PREFIX, RedactionPipeline, secret_redactor
from ego_core.types import Redactor

AGENTS_DIR = "agents"


def check_agent_id(agent: str) -> str:
    if not valid_agent_id(agent):
        raise ConfigError(
            f"agent id {agent!r}: expected 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return agent


def agent_settings(settings: Settings, agent: str) -> Settings:
    """The settings of one agent's space: its own data dir, and ``agent`` naming it; the configuration and the log
    stay shared."""
    root = settings.data_dir.expanduser()
    space = root / AGENTS_DIR / check_agent_id(agent)
    return attrs.evolve(settings, data_dir=space, log_dir=settings.logs_path, agent=agent)


def known_agents(settings: Settings) -> list[str]:
    """The agents that have a space: those with a token under ``[server.tokens]`` (``ego serve --http`` serves
    them, creating the space on first use) and those whose space already exists under ``<data dir>/agents``."""
    found = set(settings.server.tokens)
    spaces = settings.data_dir.expanduser() / AGENTS_DIR
    if spaces.is_dir():
        found.update(path.name for path in spaces.iterdir() if path.is_dir() and valid_agent_id(path.name))
    return sorted(found)


def known_agent_settings(settings: Settings, agent: str) -> Settings:
    """:func:`agent_settings` for an agent that has a space (``ego --agent ID``); an unknown id is a
    :class:`ConfigError` naming the known ones, never a new empty space made by a typo. Giving an agent a space
    is one explicit step: ``ego agent new ID``, or its token line under ``[server.tokens]`` (HTTP creates the
    space of every agent with a token)."""
    check_agent_id(agent)
    known = known_agents(settings)
    if agent not in known:
        listed = f"known agents: {', '.join(known)}" if known else "no agent has a space yet"
        raise UnknownAgentError(
            f"unknown agent {agent!r} ({listed}); create its space with `ego agent new {agent}` (or configure "
            f"its token for HTTP: `ego token new {agent}`, and the printed line under [server.tokens])"
        )
    return agent_settings(settings, agent)


def create_space(settings: Settings, agent: str) -> tuple[Path, bool]:
    """Create ``<data dir>/agents/<agent>`` (private to the user); the path, and whether it was new."""
    space = agent_settings(settings, agent).data_dir
    existed = space.is_dir()
    space.mkdir(parents=True, exist_ok=True, mode=0o700)
    return space, not existed


class UnknownAgentError(ConfigError):
    """``--agent`` names an agent that has no space."""


class AgentHosts:
    """A started-together set of hosts, one per agent, built with one plugin selection."""

    def __init__(self, hosts: Mapping[str, PluginHost]) -> None:
        if not hosts:
            raise ValueError("no agent to serve")
        self.hosts = dict(hosts)

    @classmethod
    def build(cls, host: PluginHost, agents: Iterable[str]) -> AgentHosts:
        """A host per agent, each built like ``host`` (same plugins) on that agent's space."""
        spaces = cls({agent: host.sibling(agent_settings(host.settings, agent)) for agent in sorted(agents)})
        spaces.install_redaction()
        return spaces

    def host_for(self, agent: str | None) -> PluginHost | None:
        return self.hosts.get(agent) if agent is not None else None

    @property
    def any_host(self) -> PluginHost:
        """The hosts serve the same plugins, so any one answers what is the same for all (the tool list)."""
        return next(iter(self.hosts.values()))

    def install_redaction(self) -> None:
        """One log pipeline for the process: the core's rules once, then every agent's plugin rules."""
        redactors: list[Redactor] = [secret_redactor()]
        for agent, host in sorted(self.hosts.items()):
            redactors.extend(
                attrs.evolve(rule, name=f"{agent}/{rule.name}")
                for rule in host.redaction.redactors
                if not rule.name.startswith(RESERVED_PREFIX)
            )
        install_pipeline(RedactionPipeline(redactors))

    def start(self) -> None:
        started: list[PluginHost] = []
        try:
            for host in self.hosts.values():
                host.start()
                started.append(host)
        except BaseException:
            for host in reversed(started):
                host.stop()
            raise
        self.install_redaction()  # plugins may add rules' data at startup; the rules themselves are set

    def stop(self) -> None:
        for host in reversed(list(self.hosts.values())):
            host.stop()
