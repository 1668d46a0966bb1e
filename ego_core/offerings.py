"""MCP prompts and resources: what plugins register besides tools (``register_prompts``, ``register_resources``).

A prompt is a message the person at the client picks (Claude Desktop shows prompts as slash commands); a
resource is a read-only view they can attach. Neither is listed in ``tools/list``: they cost the agent no
tokens until someone uses them. Their text goes through the redaction pipeline before it leaves the process.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

import attrs

PROMPT_NAME = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
"""Prompt names: lower case words joined by ``-`` (``wake-up``), as clients show them as slash commands."""
ARGUMENT_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
URI = re.compile(r"^[a-z][a-z0-9+.-]*://\S+$")
TEMPLATE_VARIABLE = re.compile(r"\{([^{}]*)\}")


def _arguments(value: Iterable[PromptArgument]) -> tuple[PromptArgument, ...]:
    return tuple(value)


def _frozen(value: Mapping[str, str] | None) -> Mapping[str, str]:
    return MappingProxyType(dict(value or {}))


@attrs.frozen
class PromptArgument:
    """One argument of a :class:`Prompt`.

    ``values`` names the kind of value it takes (``"person"``, ``"desire"``, ``"episode"``, or a kind of your
    own): ``completion/complete`` offers what the plugins' ``complete_values`` hooks give for that kind.
    """

    name: str
    description: str = ""
    required: bool = False
    values: str | None = None
    max_chars: int = 200


PromptRender = Callable[[Mapping[str, str]], str]


@attrs.frozen
class Prompt:
    """An MCP prompt contributed through ``register_prompts``.

    ``render`` gets the arguments the client gave (only declared ones, trimmed, each at most ``max_chars``;
    every required one present) and returns the text of the one user message the prompt is. Raise
    ``InvalidArgumentError(argument, expected)`` for a value it cannot use.
    """

    name: str
    description: str
    render: PromptRender
    arguments: tuple[PromptArgument, ...] = attrs.field(default=(), converter=_arguments)
    title: str | None = None


ResourceRead = Callable[[], str]
TemplateRead = Callable[[Mapping[str, str]], str | None]


@attrs.frozen
class Resource:
    """A read-only MCP resource at a fixed ``uri`` (``ego://self``), contributed through ``register_resources``.

    ``read`` returns its current text (run in a worker thread on every read); the core passes it through the
    redaction pipeline before it is sent.
    """

    uri: str
    name: str
    description: str
    read: ResourceRead
    mime_type: str = "text/plain"
    title: str | None = None


@attrs.frozen
class ResourceTemplate:
    """Resources named by a URI template (``ego://episodes/{episode_id}``), contributed through
    ``register_resources``.

    Each ``{variable}`` matches one path segment (percent-decoded). ``read`` gets the variables and returns the
    text, or ``None`` when there is no such resource (the client gets "resource not found"). ``values`` maps a
    variable to the kind of value it takes, for completion (see :class:`PromptArgument`).
    """

    uri_template: str
    name: str
    description: str
    read: TemplateRead
    values: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen)
    mime_type: str = "text/plain"
    title: str | None = None

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(TEMPLATE_VARIABLE.findall(self.uri_template))


def check_prompt(prompt: Any) -> None:
    """Raise ``TypeError``/``ValueError`` for a prompt the core cannot serve."""
    if not isinstance(prompt, Prompt):
        raise TypeError(f"register_prompts expects ego_core.Prompt, got {type(prompt).__name__}")
    if not isinstance(prompt.name, str) or not PROMPT_NAME.match(prompt.name):
        raise ValueError(f"prompt name {prompt.name!r}: expected lower-case words joined by '-' (e.g. 'wake-up')")
    if not callable(prompt.render):
        raise TypeError(f"prompt {prompt.name!r}: render must be callable")
    seen: set[str] = set()
    for argument in prompt.arguments:
        if not isinstance(argument, PromptArgument):
            raise TypeError(f"prompt {prompt.name!r}: arguments must be ego_core.PromptArgument")
        if not ARGUMENT_NAME.match(argument.name) or argument.name in seen:
            raise ValueError(f"prompt {prompt.name!r}: argument name {argument.name!r} is invalid or repeated")
        seen.add(argument.name)


def check_resource(resource: Any) -> None:
    """Raise ``TypeError``/``ValueError`` for a resource or template the core cannot serve."""
    if isinstance(resource, Resource):
        if not URI.match(resource.uri) or TEMPLATE_VARIABLE.search(resource.uri):
            raise ValueError(f"resource uri {resource.uri!r}: expected scheme://path without {{variables}}")
        if not callable(resource.read):
            raise TypeError(f"resource {resource.uri!r}: read must be callable")
        return
    if isinstance(resource, ResourceTemplate):
        template = resource.uri_template
        variables = resource.variables
        if not URI.match(template) or not variables:
            raise ValueError(f"resource template {template!r}: expected scheme://path with at least one {{variable}}")
        if len(set(variables)) != len(variables) or not all(ARGUMENT_NAME.match(v) for v in variables):
            raise ValueError(f"resource template {template!r}: variables must be distinct lower-case names")
        unknown = sorted(set(resource.values) - set(variables))
        if unknown:
            raise ValueError(f"resource template {template!r}: values names unknown variables {unknown}")
        if not callable(resource.read):
            raise TypeError(f"resource template {template!r}: read must be callable")
        return
    raise TypeError(
        f"register_resources expects ego_core.Resource or ego_core.ResourceTemplate, got {type(resource).__name__}"
    )


def template_shape(template: str) -> str:
    """A template with its variable names left out: two templates of one shape would match the same URIs."""
    return TEMPLATE_VARIABLE.sub("{}", template)
