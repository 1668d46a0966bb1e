"""Hook specifications: the whole extension surface of ego.

Rules (also in docs/hooks.md):

- Hooks are called with keyword arguments; an implementation may accept any subset of the parameters.
- Every hook can take ``ctx``: the :class:`~ego_core.PluginContext` of the implementing plugin
  (its configuration, data directory, services, logger, clock and hook caller).
- Arguments are frozen attrs values. Return new values; never mutate what you were given.
- Each spec declares its calling kind (:class:`HookKind`); the one dispatcher calls every implementation by
  it. An implementation that raises in a notification, collector or first-result hook is logged and recorded
  (``ego plugins`` shows it) and the others still run. Redaction is the exception: a redactor that raises
  fails closed.
- Do not use ``wrapper=True``/``hookwrapper=True`` implementations; the host refuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ego_core.kernel.markers import HookKind, is_setup, kind_of, spec
from ego_core.types import (
    Check,
    Command,
    Ember,
    Redactor,
    ScaffoldContext,
    ScaffoldItem,
    Section,
    Tool,
    ToolOutcome,
)

if TYPE_CHECKING:
    from ego_core.embedding import EmbedderFactory
    from ego_core.importing import ImportFormat
    from ego_core.kernel.context import PluginContext
    from ego_core.offerings import Prompt, Resource, ResourceTemplate


class RegistrationSpecs:
    """Called once when a host starts, per plugin, with a ``register`` callback."""

    @spec(HookKind.REGISTRATION)
    def register_tools(self, register: Callable[[Tool], None], ctx: PluginContext) -> None:
        """Contribute MCP tools by calling ``register(Tool(...))``.

        When: once per plugin, when the host is built, before ``on_startup`` (your resources are not open yet). The
        tools of a plugin that later fails to start are withdrawn: not listed, not callable, and scaffold lines that
        need them disappear.

        Arguments:
        - ``register``: call it once per tool; anything but an ``ego_core.Tool`` raises ``TypeError``.

        Isolation: all or nothing per plugin: your tools are served only if the hook returns normally. If it raises
        (also a ``TypeError`` or an invalid schema from ``register``), none of them is served and the failure is
        recorded. A tool name claimed by two plugins is a startup error naming both (``ego`` exits with code 2).
        """

    @spec(HookKind.REGISTRATION)
    def register_redactors(self, register: Callable[[Redactor], None], ctx: PluginContext) -> None:
        """Contribute redaction rules: ``register(Redactor(name, redact, order=500))``, ``redact`` a ``str -> str``.

        Every log record of the process (its message, arguments, exception text and structured fields) and whatever
        plugins pass through ``ctx.redact`` (workspace files, gateway payloads, public exports) passes through the
        rules in ascending ``order`` (ties by ``name``). The tool result returned to the agent is not redacted.

        When: once per plugin, when the host is built, before ``on_startup``: a redactor must work before its plugin
        starts (with an empty set of private ids, say).

        Arguments:
        - ``register``: anything but an ``ego_core.Redactor`` (or one with an empty name, a ``redact`` that is not
          callable or an ``order`` that is not a number) raises ``TypeError``, a registration failure.

        Isolation: a rule that raises or returns something other than ``str`` fails closed: the whole text becomes
        ``[WITHHELD: redaction failed]`` and an error without the text is logged. Names are unique: the ``ego.``
        prefix is the core's, and a name another plugin registered first is refused (a registration failure; the
        first is kept), so a rule never replaces another.
        """

    @spec(HookKind.REGISTRATION)
    def register_embedders(self, register: Callable[[str, EmbedderFactory], None], ctx: PluginContext) -> None:
        """Contribute embedding providers by name: ``register("onnx", factory)``.

        A factory is ``Callable[[EmbedderSettings], Embedder]``; an ``Embedder`` has ``model_id``, ``dimension`` and
        ``embed(texts)``: a float32 array ``(len(texts), dimension)`` of L2-normalised rows. A consumer builds one
        with ``ctx.embedder(name, EmbedderSettings(...))``; an unknown name raises ``EmbeddingError`` listing the
        names.

        When: once per plugin, when the host is built, before ``on_startup``.

        Arguments:
        - ``register``: a name that is not a non-empty ``str``, or a factory that is not callable, raises
          ``TypeError`` (a registration failure).

        Isolation: a name already taken is a registration failure of the second plugin; the first provider is kept.
        """

    @spec(HookKind.REGISTRATION)
    def register_commands(self, register: Callable[[Command], None], ctx: PluginContext) -> None:
        """Contribute CLI commands: ``register(Command(name, help, configure, run, group=None, starts_host=True))``.

        ``configure(parser)`` adds ``argparse`` arguments (every command also takes ``--plugins``, ``--disable``,
        ``--config`` and ``--data-dir``); ``run(args, host)`` returns the exit code. With ``starts_host=True`` the
        host is started first (``on_startup`` has run, services are provided) and stopped afterwards. With
        ``starts_host=False`` ``run`` gets the built host and no plugin's ``on_startup`` runs, so no store is opened
        and no service provided: for commands that build what they need themselves (``ego bench locomo``). With
        ``group="memory"`` the command is ``ego memory <name>`` (several plugins may share a group); without a group
        it is ``ego <name>``.

        When: each time the ``ego`` command line runs, after the host is built and before the arguments are parsed,
        once per enabled plugin: a command exists only while its plugin is enabled.

        Arguments:
        - ``register``: anything but an ``ego_core.Command`` raises ``TypeError`` (a registration failure).

        Isolation: a command whose name is taken is skipped and recorded as your registration failure; your other
        commands, and the other plugins', keep working.
        """

    @spec(HookKind.REGISTRATION)
    def register_prompts(self, register: Callable[[Prompt], None], ctx: PluginContext) -> None:
        """Contribute MCP prompts: ``register(Prompt(name, description, render, arguments))``.

        A prompt is a message the person at the client picks (Claude Desktop offers prompts as slash commands): it is
        not in ``tools/list``, so it costs the agent no tokens. ``render(arguments)`` runs in a worker thread at each
        ``prompts/get``; the text it returns passes through the redaction pipeline before it is sent.

        When: once per plugin, when the host is built, before ``on_startup`` (``render`` runs later, while your
        resources are open).

        Arguments:
        - ``register``: anything but an ``ego_core.Prompt``, a name that is not lower-case words joined by ``-``, or
          an argument name that is invalid or repeated raises (``TypeError``/``ValueError``), a registration failure.

        Isolation: all or nothing per plugin, like ``register_tools``: if the hook raises, none of your prompts is
        listed. A prompt name another plugin registered first is refused (a registration failure); the first is kept,
        and your other prompts too. The prompts of a plugin that fails to start are withdrawn.
        """

    @spec(HookKind.REGISTRATION)
    def register_resources(self, register: Callable[[Resource | ResourceTemplate], None], ctx: PluginContext) -> None:
        """Contribute read-only MCP resources (``register(Resource(uri, ...))``) and resource templates
        (``register(ResourceTemplate("ego://episodes/{episode_id}", ...))``).

        ``read`` runs in a worker thread at every ``resources/read``, so it shows the current state; a template's
        ``read`` gets its variables by name and returns ``None`` when there is no such resource. The text passes
        through the redaction pipeline before it is sent.

        When: once per plugin, when the host is built, before ``on_startup``.

        Arguments:
        - ``register``: anything but a ``Resource`` or ``ResourceTemplate``, a URI without a ``scheme://``, a
          template without ``{variables}`` (or a resource with them) raises, a registration failure.

        Isolation: all or nothing per plugin, like ``register_prompts``. A URI (template) another plugin registered
        first is refused (a registration failure); the first is kept. The resources of a plugin that fails to start
        are withdrawn.
        """

    @spec(HookKind.REGISTRATION)
    def register_import_formats(self, register: Callable[[ImportFormat], None], ctx: PluginContext) -> None:
        """Contribute readers for ``ego import --from NAME PATH``: ``register(ImportFormat(name, description, read))``.

        ``read(path, options)`` reads the source (a file or directory) and returns records per plugin id, each in
        that plugin's export-record schema (what its ``export_records`` writes, so its ``check_records`` and
        ``import_records`` take them unchanged), with ids derived from the source. Several plugins may contribute to
        one format, each reading its own part; the core merges their records. ``read`` never writes: the core runs
        every plugin's ``check_records`` on the merged records and calls ``import_records`` only when all pass, as
        ``ego import FILE`` does.

        When: once per plugin, each time ``ego import --from FORMAT PATH`` runs (after ``on_startup``).

        Arguments:
        - ``register``: call it once per format (or part of a format) this plugin reads. Anything but an
          ``ImportFormat``, or a name other than 1-40 of ``a-z 0-9 - _`` starting with a letter, raises, a
          registration failure.
        """


class LifecycleSpecs:
    @spec(HookKind.LIFECYCLE)
    def on_startup(self, ctx: PluginContext) -> None:
        """Open resources (files, databases, clients) and provide services (``ctx.provide(name, obj)``).

        When: when the host starts: an MCP connection opens (stdio, and each in-memory test client) or the HTTP
        server starts, and before ``ego plugins``, ``ego doctor`` and plugin commands run. Plugins start in
        dependency order (a plugin after the plugins it ``requires``), otherwise by plugin id. Starting is counted,
        so nested users share one start. A host may start again after it stops, so ``on_startup`` must work again
        after ``on_shutdown``.

        Isolation: a plugin whose ``on_startup`` raises is marked failed (``[startup] on_startup raised ...``): its
        tools and services are withdrawn, and so are the plugins that ``require`` it. The server keeps serving the
        rest.
        """

    @spec(HookKind.LIFECYCLE)
    def on_shutdown(self, ctx: PluginContext) -> None:
        """Close resources.

        When: when the host stops (the last connection closes, the HTTP server stops, a CLI command ends), in reverse
        start order; not for plugins that failed to start. Afterwards every service is withdrawn.

        Isolation: an exception is logged and recorded (``[call:on_shutdown]``); the other plugins still shut down.
        """

    @spec(HookKind.COLLECTOR, setup=True)
    def doctor_checks(self, ctx: PluginContext) -> Sequence[Check] | None:
        """Health checks shown by ``ego doctor`` (store integrity, model, ...).

        When: by ``ego doctor``, after the host has started. A plugin whose ``on_startup`` failed is asked too (with
        its own ``ctx``), since its checks are the ones that can say why: read your files without assuming
        ``on_startup`` ran (``ctx.read_database()``).

        Returns: ``ego_core.Check(name, ok, detail="")`` items, or ``None``. Each is printed as ``[ok] <plugin id>:
        <name>: <detail>`` or ``[FAIL] ...``; ``ego doctor`` exits with 1 if any check fails.

        Isolation: one that raises is logged and recorded, and ``ego doctor`` reports it as a ``[FAIL] plugin <id>:
        [call:doctor_checks] raised ...`` line (exit 1). A result that is not a sequence of ``Check`` is a ``[FAIL]
        <plugin id>: doctor_checks`` line.
        """


class PortableSpecs:
    """``ego export`` / ``ego import``: each plugin's state as JSON-able records in one JSON Lines file."""

    @spec(HookKind.PORTABLE)
    def export_records(self, include_private: bool, ctx: PluginContext) -> Iterable[Mapping[str, Any]] | None:
        """This plugin's state as records: JSON-able mappings, each with a string ``"type"`` (``"meta"``, ``"memory"``,
        ...), in a stable order: exporting the same state twice gives the same lines.

        When: ``ego export FILE`` (``include_private=True`` for ``ego export --include-private FILE``); plugins are
        asked in id order. The core adds ``"plugin": <id>`` and writes one line per record after the header.

        Arguments:
        - ``include_private``: when false (the default export) leave private data out entirely; the core also passes
          every record of such an export through the redaction pipeline.

        Isolation: none, one plugin at a time: an export fails loudly rather than silently dropping a plugin's state.
        """

    @spec(HookKind.PORTABLE)
    def check_records(self, records: Sequence[Mapping[str, Any]], ctx: PluginContext) -> Sequence[str] | None:
        """Problems with the records an import would give this plugin (nothing is written).

        When: ``ego import FILE``, after the file has been parsed and its header checked, for each plugin that has
        records in it, before anything is written.

        Arguments:
        - ``records``: this plugin's records from the file (without the ``"plugin"`` key).

        Returns: human-readable problems (name the record and what is wrong). Any problem from any plugin makes the
        import refuse the whole file and change nothing.
        """

    @spec(HookKind.PORTABLE)
    def import_records(self, records: Sequence[Mapping[str, Any]], ctx: PluginContext) -> int | None:
        """Restore this plugin's records from an export; idempotent (importing the same file again adds nothing).
        Returns how many records were new.

        When: ``ego import FILE``, for each plugin with records in the file, only after every plugin's
        ``check_records`` found no problem.

        Arguments:
        - ``records``: this plugin's records (without the ``"plugin"`` key).

        Isolation: none: an import that fails is reported and can simply be run again.
        """


class ComposeSpecs:
    @spec(HookKind.COLLECTOR)
    def on_wake_up(self, ctx: PluginContext) -> Section | None:
        """A section for the session-start response (``wake_up``).

        When: the core's ``wake_up`` tool (surface), at the start of a session. It runs in a worker thread.

        Returns: a ``Section(key, text, order=100, scaffold=())``, a plain ``str`` (it becomes ``Section(key=<plugin
        id>, text=...)``), a list of either, or ``None``. The sections are sorted by ``(order, key)`` and shown after
        the ``Awake: <local time>`` header; empty text is skipped. Their scaffold lines follow the core's. With no
        sections at all, ``wake_up`` says that nothing was carried over yet. Keep a section to one or two lines.

        Isolation: one that raises is skipped, and ``wake_up`` still answers.
        """

    @spec(HookKind.COLLECTOR)
    def ember_candidates(self, ctx: PluginContext) -> Sequence[Ember] | None:
        """Fragments that still smoulder; ``wake_up`` shows the two warmest of all plugins' under ``Embers:``.

        When: the core's ``wake_up``, while it composes its sections.

        Returns: ``ego_core.Ember(text, warmth)`` items, or ``None``. ``text`` is one short fragment (about 60
        characters, starting with ``...``), never the words of a private memory; ``warmth`` (0-1) ranks it. The two
        warmest of all plugins' fragments are shown on one line, ``Embers: a / b``, after the memory section.

        Isolation: one that raises is skipped. Offer few (three at most) and compute them cheaply.
        """

    @spec(HookKind.COLLECTOR)
    def on_introspect(self, ctx: PluginContext) -> Section | None:
        """A section for ``introspect``.

        When: the core's ``introspect`` tool (surface). It runs in a worker thread.

        Returns: as for ``on_wake_up``. The sections are joined with blank lines, and with no sections ``introspect``
        says that there is nothing to reflect on yet.

        Isolation: as for ``on_wake_up``.
        """

    @spec(HookKind.COLLECTOR)
    def on_attune(self, person: str | None, ctx: PluginContext) -> Section | None:
        """A section for the heartbeat check-in between tasks (``attune``).

        When: the core's ``attune`` tool (surface). It runs in a worker thread.

        Arguments:
        - ``person``: whom the agent attunes toward, as given (trimmed), or ``None`` for the companion.

        Returns: as for ``on_wake_up``. The sections are joined with line breaks, and with no sections ``attune``
        says that there is nothing to attune to yet. The whole answer has a budget of 200 tokens with every plugin
        enabled: keep a section to one line (two at most), in words rather than numbers.

        Isolation: as for ``on_wake_up``. A section may write (the desires plugin lets emergent desires arise here),
        but must not change what other hooks read when nothing happened.
        """

    @spec(HookKind.COLLECTOR)
    def on_prompt(self, prompt: str, arguments: Mapping[str, str], ctx: PluginContext) -> Section | None:
        """Lines for a prompt composed from the plugins: the core's ``wake-up`` (the session start) and ``heartbeat``
        (the check-in between tasks).

        When: at each ``prompts/get`` of such a prompt. It runs in a worker thread.

        Arguments:
        - ``prompt``: the prompt's name. Answer only the prompts you have something for.
        - ``arguments``: the prompt's arguments as the client gave them, checked and trimmed (read-only; ``person``
          may be there: whom the agent is with).

        Returns: as for ``on_wake_up``: a ``Section``, a ``str``, a list of them, or ``None``. Every line of every
        section becomes one bullet of the prompt, in ``(order, key)`` order. The core's own steps use order 10
        (``wake_up``, then ``introspect``; in ``heartbeat``, ``attune``), 40 (``heartbeat``'s introspect) and 1000
        (the closing line); plugins use 20-90. Write a step as the agent's instruction file would (OpenClaw's
        AGENTS.md or HEARTBEAT.md), name only tools that are served (``ctx.tool_served``), and keep it to one line.

        Isolation: as for ``on_wake_up``.
        """

    @spec(HookKind.COLLECTOR)
    def complete_values(self, kind: str, prefix: str, ctx: PluginContext) -> Sequence[str] | None:
        """Values of a ``kind`` you know that start with ``prefix``, for ``completion/complete`` on prompt arguments and
        resource-template variables.

        When: at a client's ``completion/complete`` for a prompt argument or a resource-template variable that
        declares a kind of value (``PromptArgument(values=...)``, ``ResourceTemplate(values=...)``). It runs in a
        worker thread, as the person types: keep it quick.

        Arguments:
        - ``kind``: the kind of value asked for. The built-in kinds: ``"person"`` (the people the agent knows, by
          name and alias), ``"desire"`` (desire names), ``"episode"`` (episode ids). Answer only the kinds you know.
        - ``prefix``: what the person typed so far (at most 200 characters).

        Returns: the values that start with ``prefix``, or ``None``. The core merges every plugin's answer, keeps the
        values that start with the prefix (ignoring case) once each, in the order given (put the likeliest first),
        and sends at most 100 (with the total). Never offer private text as a value.

        Isolation: one that raises is skipped.
        """

    @spec(HookKind.COLLECTOR)
    def scaffold_for(self, tool: str, context: ScaffoldContext, ctx: PluginContext) -> Sequence[ScaffoldItem] | None:
        """Scaffold lines appended to a tool's response (the private-memory hint, say).

        When: after every successful tool call (of any plugin, ``wake_up`` and ``introspect`` included), before the
        response is sent; not for error results. It runs in a worker thread.

        Arguments:
        - ``tool``: the name of the tool being answered.
        - ``context``: ``tool``, ``arguments`` (validated, with defaults filled in, read-only) and ``data`` (the
          response data so far; empty for ``wake_up``, ``introspect`` and ``attune``, which gather these lines before
          composing their answer, to fit them in their budget). The arguments may contain private text.

        Returns: ``str`` or ``ScaffoldLine(text, needs=frozenset())`` items, or ``None``, added after the tool's own
        scaffold. A ``ScaffoldLine`` is dropped unless every tool in ``needs`` is served, and duplicate lines are
        dropped. Offer options and questions, not orders.

        Isolation: the lines appear in the order the plugins are called; one that raises is skipped.
        """

    @spec(HookKind.NOTIFICATION)
    def on_tool_called(self, tool: str, args: Mapping[str, Any], result: ToolOutcome, ctx: PluginContext) -> None:
        """Notification after every tool call (implicit desire satisfaction and similar reactions).

        When: after every tool call whose arguments passed validation, including calls that ended in a ``ToolError``
        or a crash; not calls rejected for bad arguments or calls to unknown tools. It runs in a worker thread after
        the response is composed and before it is sent, so keep it quick.

        Arguments:
        - ``tool``: the tool name.
        - ``args``: the validated arguments, with defaults filled in. They may be private.
        - ``result``: ``plugin`` (the id of the plugin that served the tool), ``is_error``, ``text`` (the full
          response text, which may contain private memory content) and ``declined`` (the tool answered without doing
          what was asked: its ``Response`` had ``declined=True``, e.g. dedup refusing a near-duplicate ``remember``;
          reactions to the effect of a call, such as desire satisfaction, skip it like an error).

        Isolation: every implementation runs; one that raises is logged. Do not log or store ``args`` or
        ``result.text``.
        """


ALL_SPECS: tuple[type, ...] = (RegistrationSpecs, LifecycleSpecs, PortableSpecs, ComposeSpecs)


def _hooks_of(spec_class: type) -> list[str]:
    return [name for name in vars(spec_class) if not name.startswith("_")]


def hook_names() -> list[str]:
    return [name for spec_class in ALL_SPECS for name in _hooks_of(spec_class)]


def setup_hooks() -> frozenset[str]:
    """Hooks that run while a process starts, stops, is checked or moves its data (registration, lifecycle,
    ``doctor_checks``, export and import): their time is expected work, such as opening a store or loading a
    model, never an agent waiting on a tool."""
    return frozenset(
        name for spec_class in ALL_SPECS for name in _hooks_of(spec_class) if is_setup(getattr(spec_class, name))
    )


def hook_kinds() -> dict[str, HookKind]:
    """Every hook's calling kind, by name."""
    return {name: kind_of(getattr(spec_class, name)) for spec_class in ALL_SPECS for name in _hooks_of(spec_class)}
