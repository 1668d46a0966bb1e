"""What plugins register at startup: redactors, embedders, tools and CLI commands.

Each ``collect_*`` asks every active plugin through its registration hook and keeps what is valid; a plugin
whose registration raises or registers something wrong gets a recorded failure, the others are unaffected.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

import attrs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from ego_core.embedding import Embedder, EmbedderFactory, EmbedderSettings, EmbeddingError
from ego_core.kernel.dispatch import HostHooks
from ego_core.kernel.redaction import RESERVED_PREFIX, secret_redactor
from ego_core.kernel.status import CORE_PLUGIN_ID, FailureLog
from ego_core.offerings import Prompt, Resource, ResourceTemplate, check_prompt, check_resource, template_shape
from ego_core.types import Command, Redactor, Tool, ToolHandler, ToolResult


class ToolConflictError(RuntimeError):
    """Two plugins registered a tool with the same name."""


class Registries:
    def __init__(self, hooks: HostHooks, failures: FailureLog) -> None:
        self._hooks = hooks
        self._failures = failures
        self.tools: dict[str, tuple[str, Tool]] = {}
        self.embedders: dict[str, tuple[str, EmbedderFactory]] = {}

    # ------------------------------------------------------------------------------------------
    # Redactors

    def collect_redactors(self, plugin_ids: Sequence[str]) -> list[Redactor]:
        """Every plugin's redactors. One registered before its hook raised is kept: dropping a rule could only
        let more through."""
        collected: list[Redactor] = []
        owners = {secret_redactor().name: CORE_PLUGIN_ID}
        hook = "register_redactors"
        for plugin_id in plugin_ids:

            def add(redactor: Redactor, _plugin: str = plugin_id) -> None:
                _check_redactor(redactor)
                if redactor.name.startswith(RESERVED_PREFIX) and _plugin != CORE_PLUGIN_ID:
                    self._failures.record(
                        _plugin,
                        "register",
                        f"redactor name {redactor.name!r} uses the prefix {RESERVED_PREFIX!r}, which is "
                        f"reserved for the core; name it {_plugin}.<rule>. It was not registered",
                        hook,
                    )
                    return
                if redactor.name in owners:
                    self._failures.record(
                        _plugin,
                        "register",
                        f"redactor {redactor.name!r} is already registered by plugin {owners[redactor.name]!r}; "
                        "the first one is kept",
                        hook,
                    )
                    return
                owners[redactor.name] = _plugin
                collected.append(redactor)

            self._hooks.register_redactors(plugin_id, register=add)
        return collected

    # ------------------------------------------------------------------------------------------
    # Embedders

    def collect_embedders(self, plugin_ids: Sequence[str]) -> None:
        self.embedders = {}
        for plugin_id in plugin_ids:

            def add(name: str, factory: EmbedderFactory, _plugin: str = plugin_id) -> None:
                if not isinstance(name, str) or not name or not callable(factory):
                    raise TypeError(
                        "register_embedders expects register(name: str, factory: Callable[[EmbedderSettings], "
                        f"Embedder]), got ({type(name).__name__}, {type(factory).__name__})"
                    )
                if name in self.embedders:
                    self._failures.record(
                        _plugin,
                        "register",
                        f"embedder {name!r} already provided by {self.embedders[name][0]}",
                        "register_embedders",
                    )
                    return
                self.embedders[name] = (_plugin, factory)

            self._hooks.register_embedders(plugin_id, register=add)

    def embedder_names(self) -> list[str]:
        return sorted(self.embedders)

    def make_embedder(self, name: str, settings: EmbedderSettings) -> Embedder:
        if name not in self.embedders:
            known = ", ".join(self.embedder_names()) or "none"
            raise EmbeddingError(f"unknown embedder {name!r}; available: {known}")
        return self.embedders[name][1](settings)

    # ------------------------------------------------------------------------------------------
    # Tools

    def collect_tools(self, plugin_ids: Sequence[str]) -> None:
        """Every plugin's tools, all or nothing per plugin. A name claimed twice raises :class:`ToolConflictError`."""
        self.tools = {}
        for plugin_id in plugin_ids:
            pending: dict[str, Tool] = {}
            conflicts: list[str] = []

            def add(
                tool: Tool, _plugin: str = plugin_id, _pending: dict[str, Tool] = pending, _clash: list[str] = conflicts
            ) -> None:
                if not isinstance(tool, Tool):
                    raise TypeError(f"register_tools expects ego_core.Tool, got {type(tool).__name__}")
                try:
                    Draft202012Validator.check_schema(dict(tool.input_schema))
                except SchemaError as exc:
                    raise ValueError(f"tool {tool.name!r} has an invalid input schema: {exc.message}") from None
                tool = _with_context_parameter(tool)
                if tool.name in self.tools or tool.name in _pending:
                    owner = self.tools[tool.name][0] if tool.name in self.tools else _plugin
                    _clash.append(
                        f"tool {tool.name!r} is registered by both plugin {owner!r} "
                        f"and plugin {_plugin!r}; disable one of them (--disable)"
                    )
                    return
                _pending[tool.name] = tool

            outcome = self._hooks.register_tools(plugin_id, register=add)
            if conflicts:
                raise ToolConflictError(conflicts[0])
            if outcome is not None and outcome.ok:
                for name, tool in pending.items():
                    self.tools[name] = (plugin_id, tool)

    # ------------------------------------------------------------------------------------------
    # Commands

    def collect_commands(self, plugin_ids: Sequence[str], reserved: Collection[str] = ()) -> list[tuple[str, Command]]:
        """Commands from ``register_commands``, as (plugin id, command).

        A command whose name is taken (a ``reserved`` name, or an earlier plugin's command or group) is skipped
        and recorded as a registration failure of the later plugin. Plugins may share a group.
        """
        found: list[tuple[str, Command]] = []
        top_level: dict[str, tuple[str, str]] = dict.fromkeys(reserved, (CORE_PLUGIN_ID, "command"))
        grouped: dict[tuple[str, str], str] = {}
        for plugin_id in plugin_ids:

            def add(command: Command, _plugin: str = plugin_id) -> None:
                if not isinstance(command, Command):
                    raise TypeError(f"register_commands expects ego_core.Command, got {type(command).__name__}")
                clash = _command_clash(command, top_level, grouped)
                if clash:
                    self._failures.record(_plugin, "register", f"{clash}; it was skipped", "register_commands")
                    return
                if command.group is None:
                    top_level[command.name] = (_plugin, "command")
                else:
                    top_level.setdefault(command.group, (_plugin, "group"))
                    grouped[(command.group, command.name)] = _plugin
                found.append((_plugin, command))

            self._hooks.register_commands(plugin_id, register=add)
        return found


def _with_context_parameter(tool: Tool) -> Tool:
    """``tool``, or for a handler written before handlers took ``ctx`` (one positional parameter: ``handler(args)``)
    a copy whose handler takes ``(args, ctx)`` and passes only ``args``, with a DeprecationWarning naming the tool."""
    handler: Callable[..., Any] = tool.handler
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):  # no signature to read (some builtins): called as written
        return tool
    if _binds(signature, 2) or not _binds(signature, 1):
        return tool
    warnings.warn(
        f"tool {tool.name!r}: its handler takes only the arguments; tool handlers take (args, ctx), and a "
        "handler(args) will stop working in ego-core 1.0",
        DeprecationWarning,
        stacklevel=3,  # the plugin's register(...) call
    )
    adapted: ToolHandler
    if inspect.iscoroutinefunction(handler):

        async def adapted_async(args: Mapping[str, Any], _ctx: object) -> ToolResult:
            result: ToolResult = await handler(args)
            return result

        adapted = adapted_async
    else:

        def adapted_sync(args: Mapping[str, Any], _ctx: object) -> ToolResult | Awaitable[ToolResult]:
            result: ToolResult | Awaitable[ToolResult] = handler(args)
            return result

        adapted = adapted_sync
    return attrs.evolve(tool, handler=adapted)


def _binds(signature: inspect.Signature, count: int) -> bool:
    """Whether a call with ``count`` positional arguments fits ``signature``."""
    try:
        signature.bind(*([None] * count))
    except TypeError:
        return False
    return True


def _check_redactor(redactor: object) -> None:
    if not isinstance(redactor, Redactor):
        raise TypeError(f"register_redactors expects ego_core.Redactor, got {type(redactor).__name__}")
    if not isinstance(redactor.name, str) or not redactor.name:
        raise TypeError("a Redactor needs a non-empty str name")
    if not callable(redactor.redact):
        raise TypeError(f"redactor {redactor.name!r}: redact must be callable")
    if isinstance(redactor.order, bool) or not isinstance(redactor.order, int | float):
        raise TypeError(f"redactor {redactor.name!r}: order must be a number")


def _command_clash(
    command: Command, top_level: Mapping[str, tuple[str, str]], grouped: Mapping[tuple[str, str], str]
) -> str:
    """Why ``command`` cannot be added (``""`` when it can)."""

    def taken(name: str) -> str:
        owner, kind = top_level[name]
        if owner == CORE_PLUGIN_ID and kind == "command":
            return f"the core command 'ego {name}'"
        return f"plugin {owner!r}'s {'command group' if kind == 'group' else 'command'} 'ego {name}'"

    if command.group is None:
        if command.name in top_level:
            return f"command 'ego {command.name}' clashes with {taken(command.name)}"
        return ""
    full = f"ego {command.group} {command.name}"
    if command.group in top_level and top_level[command.group][1] != "group":
        return f"command '{full}' clashes with {taken(command.group)}"
    if (command.group, command.name) in grouped:
        return f"command '{full}' is already registered by plugin {grouped[(command.group, command.name)]!r}"
    return ""


class Offerings:
    """The prompts, resources and resource templates the host's plugins registered, with their plugin ids."""

    def __init__(self, hooks: HostHooks, failures: FailureLog) -> None:
        self._hooks = hooks
        self._failures = failures
        self.prompts: dict[str, tuple[str, Prompt]] = {}
        self.resources: dict[str, tuple[str, Resource]] = {}
        self.templates: dict[str, tuple[str, ResourceTemplate]] = {}

    def collect(self, plugin_ids: Sequence[str]) -> None:
        """Ask every plugin; all or nothing per plugin and hook (a hook that raises registers nothing), a name or
        URI another plugin registered first is refused and recorded, the first kept."""
        self.prompts, self.resources, self.templates = {}, {}, {}
        for plugin_id in plugin_ids:
            self._collect_prompts(plugin_id)
            self._collect_resources(plugin_id)

    def _refuse(self, plugin_id: str, hook: str, what: str, owner: str) -> None:
        self._failures.record(
            plugin_id, "register", f"{what} is already registered by plugin {owner!r}; the first one is kept", hook
        )

    def _collect_prompts(self, plugin_id: str) -> None:
        pending: dict[str, Prompt] = {}

        def add(prompt: Prompt) -> None:
            check_prompt(prompt)
            if prompt.name in self.prompts or prompt.name in pending:
                owner = self.prompts[prompt.name][0] if prompt.name in self.prompts else plugin_id
                self._refuse(plugin_id, "register_prompts", f"prompt {prompt.name!r}", owner)
                return
            pending[prompt.name] = prompt

        outcome = self._hooks.register_prompts(plugin_id, register=add)
        if outcome is not None and outcome.ok:
            self.prompts.update({name: (plugin_id, prompt) for name, prompt in pending.items()})

    def _collect_resources(self, plugin_id: str) -> None:
        resources: dict[str, Resource] = {}
        templates: dict[str, ResourceTemplate] = {}

        def add(item: Resource | ResourceTemplate) -> None:
            check_resource(item)
            if isinstance(item, Resource):
                if item.uri in self.resources or item.uri in resources:
                    owner = self.resources[item.uri][0] if item.uri in self.resources else plugin_id
                    self._refuse(plugin_id, "register_resources", f"resource {item.uri!r}", owner)
                    return
                resources[item.uri] = item
                return
            shape = template_shape(item.uri_template)
            taken = {template_shape(t): p for t, (p, _item) in self.templates.items()} | dict.fromkeys(
                (template_shape(t) for t in templates), plugin_id
            )
            if shape in taken:
                self._refuse(plugin_id, "register_resources", f"resource template {item.uri_template!r}", taken[shape])
                return
            templates[item.uri_template] = item

        outcome = self._hooks.register_resources(plugin_id, register=add)
        if outcome is not None and outcome.ok:
            self.resources.update({uri: (plugin_id, item) for uri, item in resources.items()})
            self.templates.update({uri: (plugin_id, item) for uri, item in templates.items()})
