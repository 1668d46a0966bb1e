"""Prompts, resources and completion: what the MCP server offers besides tools.

:class:`SurfaceRunner` answers ``prompts/*``, ``resources/*`` and ``completion/complete`` for one host, from
what its plugins registered (:class:`~ego_core.kernel.registries.Offerings`). Every text it sends (a prompt's message,
a resource's contents) passes through the host's redaction pipeline first: a private memory's text never
reaches a person's screen or an attachment this way.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

import anyio.to_thread
import mcp_types as types
from mcp import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS

from ego_core.errors import InvalidArgumentError, ToolError
from ego_core.kernel.logs import log_event
from ego_core.mcp.validation import is_blank
from ego_core.offerings import TEMPLATE_VARIABLE, Prompt, Resource, ResourceTemplate

_log = logging.getLogger("ego.server")

MAX_COMPLETIONS = 100
"""The protocol's limit on the values of one completion answer."""
MAX_PREFIX_CHARS = 200
CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def template_pattern(template: str) -> re.Pattern[str]:
    """The URIs a template names: each ``{variable}`` is one path segment (no ``/``, ``?`` or ``#``)."""
    parts: list[str] = []
    position = 0
    for match in TEMPLATE_VARIABLE.finditer(template):
        parts.append(re.escape(template[position : match.start()]))
        parts.append(f"(?P<{match.group(1)}>[^/?#]+)")
        position = match.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts))


def _invalid(message: str) -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=message)


class SurfaceRunner:
    """Answers prompts, resources and completion for one host."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self._patterns = {t: template_pattern(t) for t in host.offerings.templates}

    # ------------------------------------------------------------------------------------------
    # What is served

    def _prompts(self) -> list[tuple[str, Prompt]]:
        found = [(p, item) for p, item in self.host.offerings.prompts.values() if self.host.is_active(p)]
        return sorted(found, key=lambda pair: (pair[0] != "core", pair[0]))  # each plugin's in its own order

    def _resources(self) -> list[tuple[str, Resource]]:
        found = [(p, item) for p, item in self.host.offerings.resources.values() if self.host.is_active(p)]
        return sorted(found, key=lambda pair: pair[1].uri)

    def _templates(self) -> list[tuple[str, ResourceTemplate]]:
        found = [(p, item) for p, item in self.host.offerings.templates.values() if self.host.is_active(p)]
        return sorted(found, key=lambda pair: pair[1].uri_template)

    def _prompt(self, name: str) -> tuple[str, Prompt]:
        for plugin, prompt in self._prompts():
            if prompt.name == name:
                return plugin, prompt
        available = ", ".join(prompt.name for _plugin, prompt in self._prompts()) or "none"
        raise _invalid(f"Unknown prompt: {name[:100]}. Available prompts: {available}.")

    def list_prompts(self) -> list[types.Prompt]:
        return [
            types.Prompt(
                name=prompt.name,
                title=prompt.title,
                description=prompt.description,
                arguments=[
                    types.PromptArgument(name=a.name, description=a.description or None, required=a.required)
                    for a in prompt.arguments
                ]
                or None,
            )
            for _plugin, prompt in self._prompts()
        ]

    def list_resources(self) -> list[types.Resource]:
        return [
            types.Resource(
                uri=item.uri, name=item.name, title=item.title, description=item.description, mime_type=item.mime_type
            )
            for _plugin, item in self._resources()
        ]

    def list_templates(self) -> list[types.ResourceTemplate]:
        return [
            types.ResourceTemplate(
                uri_template=item.uri_template,
                name=item.name,
                title=item.title,
                description=item.description,
                mime_type=item.mime_type,
            )
            for _plugin, item in self._templates()
        ]

    # ------------------------------------------------------------------------------------------
    # prompts/get

    async def get_prompt(self, name: str, arguments: Mapping[str, Any] | None) -> types.GetPromptResult:
        started = time.perf_counter()
        plugin, prompt = self._prompt(name)
        given = check_prompt_arguments(prompt, arguments or {})
        text = await self._run(
            "prompt_get",
            {"prompt": prompt.name, "plugin": plugin, "arg_names": sorted(given)},
            started,
            lambda: self.host.redact(prompt.render(given)),
            what=f"prompt {prompt.name} (plugin {plugin})",
        )
        return types.GetPromptResult(
            description=prompt.description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )

    # ------------------------------------------------------------------------------------------
    # resources/read

    def _find_resource(self, uri: str) -> tuple[str, str, Callable[[], str | None], str]:
        """(plugin, what to log, how to read it, mime type) of the resource at ``uri``."""
        for plugin, item in self._resources():
            if item.uri == uri:
                return plugin, item.uri, item.read, item.mime_type
        for plugin, template in self._templates():
            match = self._patterns[template.uri_template].fullmatch(uri)
            if match is None:
                continue
            params = {key: unquote(value) for key, value in match.groupdict().items()}
            return plugin, template.uri_template, (lambda t=template, p=params: t.read(p)), template.mime_type
        raise _invalid(f"Resource not found: {uri[:200]}")

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        started = time.perf_counter()
        plugin, shown, read, mime_type = self._find_resource(uri)

        def produce() -> str | None:
            text = read()
            return None if text is None else self.host.redact(text)

        text = await self._run(
            "resource_read", {"resource": shown, "plugin": plugin}, started, produce, what=f"resource {shown}"
        )
        if text is None:
            raise _invalid(f"Resource not found: {uri[:200]}")
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime_type, text=text)])

    # ------------------------------------------------------------------------------------------
    # completion/complete

    def _kind_of(self, ref: types.PromptReference | types.ResourceTemplateReference, argument: str) -> str | None:
        if isinstance(ref, types.PromptReference):
            _plugin, prompt = self._prompt(ref.name)
            for declared in prompt.arguments:
                if declared.name == argument:
                    return declared.values
            names = ", ".join(a.name for a in prompt.arguments) or "none"
            raise _invalid(f"Prompt {prompt.name} has no argument {argument[:64]!r}; its arguments: {names}.")
        for _plugin, template in self._templates():
            if template.uri_template == ref.uri:
                if argument not in template.variables:
                    names = ", ".join(template.variables)
                    raise _invalid(
                        f"Resource template {ref.uri} has no variable {argument[:64]!r}; its variables: {names}."
                    )
                return template.values.get(argument)
        for _plugin, resource in self._resources():
            if resource.uri == ref.uri:
                raise _invalid(f"Resource {ref.uri} takes no arguments.")
        raise _invalid(f"Unknown resource template: {ref.uri[:200]}")

    async def complete(
        self, ref: types.PromptReference | types.ResourceTemplateReference, argument: str, value: str
    ) -> types.CompleteResult:
        kind = self._kind_of(ref, argument)
        if kind is None:
            return types.CompleteResult(completion=types.Completion(values=[], total=0, has_more=False))
        prefix = value[:MAX_PREFIX_CHARS]
        results = await anyio.to_thread.run_sync(lambda: self.host.hooks.complete_values(kind=kind, prefix=prefix))
        values = matching_values(results, prefix)
        shown = values[:MAX_COMPLETIONS]
        return types.CompleteResult(
            completion=types.Completion(values=shown, total=len(values), has_more=len(values) > len(shown))
        )

    # ------------------------------------------------------------------------------------------

    async def _run(
        self, event: str, fields: dict[str, Any], started: float, produce: Callable[[], Any], *, what: str
    ) -> Any:
        """``produce()`` in a worker thread, its errors turned into the client's JSON-RPC error, logged as
        ``event``. ``what`` names it in errors: ``prompt wake-up (plugin core)``."""
        name = what.split(" (", maxsplit=1)[0]
        outcome = "ok"
        try:
            return await anyio.to_thread.run_sync(produce)
        except InvalidArgumentError as exc:
            outcome = "invalid"
            raise _invalid(f"Invalid arguments for {name}: `{exc.parameter}`: {exc.expected}.") from None
        except ToolError as exc:
            outcome = "error"
            raise _invalid(exc.message) from None
        except Exception:
            outcome = "crash"
            _log.error("%s crashed", what, exc_info=True)
            raise MCPError(code=INTERNAL_ERROR, message=f"Internal error in {what}; it was logged.") from None
        finally:
            duration = round((time.perf_counter() - started) * 1000, 2)
            log_event(_log, event, **fields, outcome=outcome, duration_ms=duration)


def check_prompt_arguments(prompt: Prompt, arguments: Mapping[str, Any]) -> dict[str, str]:
    """The arguments ``render`` gets: declared ones only, trimmed, one line each, within ``max_chars``; a blank
    optional one is left out; raises the client's -32602 error naming what is wrong (never the value)."""
    declared = {a.name: a for a in prompt.arguments}
    accepted = ", ".join(declared) or "none"
    given: dict[str, str] = {}
    for name, raw in arguments.items():
        argument = declared.get(str(name))
        if argument is None:
            raise _invalid(f"Prompt {prompt.name} has no argument {str(name)[:64]!r}; its arguments: {accepted}.")
        if not isinstance(raw, str):
            raise _invalid(f"Invalid arguments for prompt {prompt.name}: `{argument.name}` must be a string.")
        value = raw.strip()
        if not value or is_blank(value):
            continue
        if CONTROL.search(value):
            raise _invalid(f"Invalid arguments for prompt {prompt.name}: `{argument.name}` must be one line of text.")
        if len(value) > argument.max_chars:
            raise _invalid(
                f"Invalid arguments for prompt {prompt.name}: `{argument.name}` must be at most "
                f"{argument.max_chars} characters."
            )
        given[argument.name] = value
    missing = [a.name for a in prompt.arguments if a.required and a.name not in given]
    if missing:
        raise _invalid(f"Invalid arguments for prompt {prompt.name}: `{missing[0]}` is required.")
    return given


def matching_values(results: Sequence[tuple[str, Sequence[str]]], prefix: str) -> list[str]:
    """The values the plugins gave that start with ``prefix`` (case-insensitively), each once, in the order the
    plugins gave them (each plugin puts its likeliest first)."""
    wanted = prefix.casefold()
    found: dict[str, str] = {}
    for _plugin, given in results:
        for value in [given] if isinstance(given, str) else given:
            if isinstance(value, str) and value.strip() and value.casefold().startswith(wanted):
                found.setdefault(value.casefold(), value)
    return list(found.values())
