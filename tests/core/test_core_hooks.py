"""Every hook, exercised through a real host by a test named for it (``test_hook_<name>``), and the one
dispatcher that calls them: kinds from the specs, wrong call sites raising at the caller, tracing."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest

from ego_core import (
    Check,
    Clock,
    Command,
    Ember,
    HookKind,
    Memory,
    PluginContext,
    Redactor,
    ScaffoldContext,
    Section,
    Settings,
    Tool,
    ToolOutcome,
    hookimpl,
    spec,
)
from ego_core.kernel.dispatch import HostHooks
from ego_core.kernel.hookspecs import hook_kinds, hook_names
from ego_core.mcp.portable import export_file, import_file
from ego_core.testing import HostFactory, ToolRunner, configure_logging, mcp_client, tool_text

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
MEMORY = Memory(id="mem_0123456789ab", content="a walk by the river", timestamp=NOW)
EMPTY = {"type": "object", "properties": {}}


def hook_tests_in_repository() -> set[str]:
    names: set[str] = set()
    for path in [*ROOT.glob("tests/**/*.py"), *ROOT.glob("plugins/*/tests/*.py"), *ROOT.glob("bench/tests/*.py")]:
        names.update(re.findall(r"def (test_hook_\w+)\(", path.read_text(encoding="utf-8")))
    return names


def test_every_hook_has_a_test_named_for_it() -> None:
    tests = hook_tests_in_repository()
    missing = [name for name in hook_names() if not any(t == f"test_hook_{name}" for t in tests)]
    assert not missing, f"no test_hook_<name> for {missing}"


def test_every_hook_declares_its_kind_and_has_a_typed_call() -> None:
    kinds = hook_kinds()
    assert set(kinds) == set(hook_names())
    assert kinds["on_wake_up"] is HookKind.COLLECTOR
    for name in hook_names():
        method = getattr(HostHooks, name)
        parameters = {p.name for p in inspect.signature(method).parameters.values() if p.kind is p.KEYWORD_ONLY}
        spec_parameters = set(inspect.signature(getattr(_spec_class(name), name)).parameters) - {"self", "ctx"}
        assert parameters == spec_parameters, name


def _spec_class(name: str) -> type:
    from ego_core.kernel.hookspecs import ALL_SPECS

    return next(cls for cls in ALL_SPECS if name in vars(cls))


# --------------------------------------------------------------------------------------------------
# The dispatcher


class HeardSpecs:
    @spec(HookKind.NOTIFICATION)
    def on_heard(self, memory: Memory, together: Sequence[str], ctx: PluginContext) -> Sequence[str] | None:
        """A hook a test plugin publishes, as the memory plugin publishes its own."""


class Publisher:
    hookspecs = (HeardSpecs,)


class Listener:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl(optionalhook=True)
    def on_heard(self, memory: Memory) -> list[str]:
        self.seen.append(memory.id)
        return [f"heard {memory.id}"]

    @hookimpl
    def on_wake_up(self) -> str:
        return "listening"


def test_a_call_site_with_a_wrong_argument_set_raises_there_and_fails_no_plugin(make_host: HostFactory) -> None:
    listener = Listener()
    host = make_host({"listener": listener, "publisher": Publisher()})
    with pytest.raises(TypeError, match=r"hook on_heard\(\) takes memory, together: missing memory, together"):
        host.dispatcher.fan_out("on_heard")
    with pytest.raises(TypeError, match="unexpected draft"):
        host.hooks.call("on_heard", memory=MEMORY, together=(), draft="x")
    with pytest.raises(TypeError, match="takes no arguments: unexpected memory"):
        host.dispatcher.fan_out("on_wake_up", memory=MEMORY)
    with pytest.raises(TypeError, match="'on_hear' is not an ego hook"):
        host.hooks.call("on_hear", memory=MEMORY, together=())
    with pytest.raises(TypeError, match="call it per plugin"):
        host.dispatcher.fan_out("on_startup")
    assert listener.seen == []
    assert host.failures == []
    assert all(status.state == "enabled" for status in host.statuses())


def test_trace_hooks_logs_one_record_per_implementation_called(
    make_host: HostFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ego_core.kernel.config import load_settings

    monkeypatch.setenv("EGO_TRACE_HOOKS", "1")
    settings = load_settings(data_dir=tmp_path / "data")
    assert settings.trace_hooks
    logs = tmp_path / "logs"
    configure_logging(logs, "INFO")
    host = make_host({"a": Listener(), "b": Listener(), "publisher": Publisher()}, settings=settings)
    heard = ["heard mem_0123456789ab"]
    assert sorted(host.hooks.call("on_heard", memory=MEMORY, together=())) == [("a", heard), ("b", heard)]
    records = [json.loads(line) for path in logs.glob("*.jsonl") for line in path.read_text().splitlines()]
    calls = [r for r in records if r.get("event") == "hook_call" and r["hook"] == "on_heard"]
    assert sorted(r["plugin"] for r in calls) == ["a", "b"]
    assert all(r["outcome"] == "ok" and r["duration_ms"] >= 0 for r in calls)


def test_without_trace_hooks_no_hook_call_is_logged(make_host: HostFactory, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    configure_logging(logs, "DEBUG")
    host = make_host({"a": Listener(), "publisher": Publisher()})
    host.hooks.call("on_heard", memory=MEMORY, together=())
    assert "hook_call" not in "".join(p.read_text() for p in logs.glob("*.jsonl"))


def test_a_slow_set_up_hook_is_expected_work_and_a_slow_session_hook_is_a_warning(
    make_host: HostFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading a model in on_startup or doctor_checks is expected: `ego doctor` must not say "all ok" and warn in
    one run. A hook an agent waits on (a published one here) still warns."""
    import ego_core.kernel.dispatch

    monkeypatch.setattr(ego_core.kernel.dispatch, "SLOW_HOOK_MS", -1.0)  # every call counts as slow
    logs = tmp_path / "logs"
    configure_logging(logs, "INFO")

    class Starter(Listener):
        @hookimpl
        def on_startup(self) -> None:
            return None

    host = make_host({"a": Starter(), "publisher": Publisher()})
    host.start()
    host.hooks.call("on_heard", memory=MEMORY, together=())
    records = [json.loads(line) for path in logs.glob("*.jsonl") for line in path.read_text().splitlines()]
    levels = {r["hook"]: r["level"] for r in records if r.get("event") == "slow_hook" and r["plugin"] == "a"}
    assert levels == {"on_startup": "info", "on_heard": "warning"}


# --------------------------------------------------------------------------------------------------
# One test per hook


def test_hook_register_tools(make_host: HostFactory) -> None:
    class Tools:
        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            register(Tool(name="ping", description="Ping.", input_schema=EMPTY, handler=lambda _args, _ctx: "pong"))

    host = make_host({"tools": Tools()})
    assert host.tool("ping") is not None
    assert host.tool("ping")[0] == "tools"  # type: ignore[index]


def test_hook_register_redactors(make_host: HostFactory) -> None:
    class Rules:
        @hookimpl
        def register_redactors(self, register: Callable[[Redactor], None]) -> None:
            register(Redactor(name="rules.kettle", redact=lambda text: text.replace("kettle", "[K]"), order=200))

    host = make_host({"rules": Rules()})
    assert host.context("rules").redact("the kettle sang") == "the [K] sang"


def test_hook_register_embedders(make_host: HostFactory) -> None:
    class Provider:
        @hookimpl
        def register_embedders(self, register: Callable[[str, Any], None]) -> None:
            register("constant", lambda settings: f"embedder for {settings.model}")

    host = make_host({"provider": Provider()})
    from ego_core import EmbedderSettings

    assert host.context("provider").embedder("constant", EmbedderSettings(model="m")) == "embedder for m"


def test_hook_register_commands(make_host: HostFactory) -> None:
    class Commands:
        @hookimpl
        def register_commands(self, register: Callable[[Command], None]) -> None:
            register(Command(name="hum", help="hum", configure=lambda p: None, run=lambda a, h: 0, group="tune"))

    host = make_host({"commands": Commands()})
    found = {(c.group, c.name): plugin for plugin, c in host.commands()}
    assert found[("tune", "hum")] == "commands"
    assert found[(None, "serve")] == "core"  # the core's own commands come through the same hook


class Lifecycle:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        self.log.append(f"start {ctx.plugin_id}")
        ctx.provide("lifecycle.thing", self)

    @hookimpl
    def on_shutdown(self, ctx: PluginContext) -> None:
        self.log.append(f"stop {ctx.plugin_id}")


def test_hook_on_startup(make_host: HostFactory) -> None:
    log: list[str] = []
    host = make_host({"life": Lifecycle(log)})
    host.start()
    assert log == ["start life"]
    assert host.services.get("lifecycle.thing") is not None


def test_hook_on_shutdown(make_host: HostFactory) -> None:
    log: list[str] = []
    host = make_host({"life": Lifecycle(log)})
    host.start()
    host.stop()
    assert log == ["start life", "stop life"]
    assert host.services.get("lifecycle.thing") is None


def test_hook_doctor_checks(make_host: HostFactory) -> None:
    class Checked:
        @hookimpl
        def doctor_checks(self) -> list[Check]:
            return [Check("kettle", True, "warm")]

    host = make_host({"checked": Checked()})
    assert host.hooks.doctor_checks() == [("checked", [Check("kettle", True, "warm")])]


def test_owner_tools_are_never_offered_to_an_agent(make_host: HostFactory) -> None:
    class Owner:
        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            register(
                Tool(
                    name="mend", description="d", input_schema=EMPTY, handler=lambda _args, _ctx: "mended", tier="owner"
                )
            )
            register(Tool(name="look", description="d", input_schema=EMPTY, handler=lambda _args, _ctx: "looked"))

    host = make_host({"owner": Owner()})
    host.start()
    assert [t.name for _p, t in host.tools() if _p == "owner"] == ["look"]
    assert [t.name for _p, t in host.tools(owner=True) if _p == "owner"] == ["look", "mend"]
    assert (host.tool_served("mend"), host.tool_served("mend", owner=True)) == (False, True)

    async def calls() -> tuple[str, str, bool]:
        async with mcp_client(host) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            refused = await client.call_tool("mend", {})
        owned = await ToolRunner(host, owner=True).call("mend", {})
        assert "mend" not in listed
        return tool_text(refused), tool_text(owned), bool(refused.is_error)

    refused, owned, is_error = anyio.run(calls)
    assert is_error
    assert refused.startswith("Unknown tool: mend.")
    assert owned == "mended"


class Portable:
    def __init__(self) -> None:
        self.items: list[str] = ["kettle"]

    @hookimpl
    def export_records(self, include_private: bool) -> Iterable[Mapping[str, Any]]:
        return [{"type": "item", "name": name} for name in self.items]

    @hookimpl
    def check_records(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        return [f"bad item {r.get('name')!r}" for r in records if not isinstance(r.get("name"), str)]

    @hookimpl
    def import_records(self, records: Sequence[Mapping[str, Any]]) -> int:
        new = [r["name"] for r in records if r["name"] not in self.items]
        self.items.extend(new)
        return len(new)


def test_hook_export_records(make_host: HostFactory, tmp_path: Path) -> None:
    host = make_host({"portable": Portable()})
    host.start()
    assert export_file(host, tmp_path / "out.jsonl", include_private=False).by_type == {("portable", "item"): 1}
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert lines[1] == {"name": "kettle", "plugin": "portable", "type": "item"}


def test_hook_check_records(make_host: HostFactory, tmp_path: Path) -> None:
    from ego_core.mcp.portable import PortableError

    path = tmp_path / "export.jsonl"
    path.write_text(
        '{"format":"ego-export","include_private":false,"plugins":{},"version":1}\n'
        '{"plugin":"portable","type":"item","name":7}\n'
        '{"end":true,"format":"ego-export","records":{"portable":1}}\n'
    )
    portable = Portable()
    host = make_host({"portable": portable})
    host.start()
    with pytest.raises(PortableError, match="bad item 7"):
        import_file(host, path)
    assert portable.items == ["kettle"]


def test_hook_import_records(make_host: HostFactory, tmp_path: Path) -> None:
    source = Portable()
    source.items = ["kettle", "lantern"]
    exporter = make_host({"portable": source})
    exporter.start()
    export_file(exporter, tmp_path / "out.jsonl", include_private=True)
    target = Portable()
    importer = make_host({"portable": target})
    importer.start()
    summary = import_file(importer, tmp_path / "out.jsonl")
    assert summary.added == {"portable": 1}
    assert target.items == ["kettle", "lantern"]


@pytest.mark.anyio
async def test_hook_on_wake_up(make_host: HostFactory) -> None:
    host = make_host({"listener": Listener()}, clock=Clock(NOW))
    async with mcp_client(host) as client:
        text = tool_text(await client.call_tool("wake_up", {}))
    assert "listening" in text


@pytest.mark.anyio
async def test_hook_on_introspect(make_host: HostFactory) -> None:
    class Mirror:
        @hookimpl
        def on_introspect(self) -> Section:
            return Section(key="mirror", text="You have been quiet today.", order=5)

    async with mcp_client(make_host({"mirror": Mirror()})) as client:
        text = tool_text(await client.call_tool("introspect", {}))
    assert text.startswith("You have been quiet today.")


@pytest.mark.anyio
async def test_hook_on_attune(make_host: HostFactory) -> None:
    class Weather:
        def __init__(self) -> None:
            self.people: list[str | None] = []

        @hookimpl
        def on_attune(self, person: str | None) -> Section:
            self.people.append(person)
            return Section(key="weather", text=f"Rain, and {person or 'nobody'} in mind.", order=5)

    weather = Weather()
    async with mcp_client(make_host({"weather": weather})) as client:
        plain = tool_text(await client.call_tool("attune", {}))
        toward = tool_text(await client.call_tool("attune", {"person": "  Aiko "}))
        refused = await client.call_tool("attune", {"mood": "x"})
    assert plain.startswith("Rain, and nobody in mind.")
    assert toward.startswith("Rain, and Aiko in mind.")
    assert "What am I actually feeling right now" in toward
    assert refused.is_error
    assert weather.people == [None, "Aiko"]


@pytest.mark.anyio
async def test_hook_scaffold_for(make_host: HostFactory) -> None:
    class Prompter:
        @hookimpl
        def scaffold_for(self, tool: str, context: ScaffoldContext) -> list[str] | None:
            return ["What is left unsaid?"] if tool == "introspect" else None

    async with mcp_client(make_host({"prompter": Prompter()})) as client:
        text = tool_text(await client.call_tool("introspect", {}))
    assert text.endswith("What is left unsaid?")


@pytest.mark.anyio
async def test_hook_on_tool_called(make_host: HostFactory) -> None:
    seen: list[tuple[str, ToolOutcome]] = []

    class Watcher:
        @hookimpl
        def on_tool_called(self, tool: str, args: Mapping[str, Any], result: ToolOutcome) -> None:
            seen.append((tool, result))

    async with mcp_client(make_host({"watcher": Watcher()})) as client:
        await client.call_tool("wake_up", {})
    [(tool, outcome)] = seen
    assert (tool, outcome.plugin, outcome.is_error, outcome.declined) == ("wake_up", "core", False, False)


@pytest.mark.anyio
async def test_hook_ember_candidates(make_host: HostFactory) -> None:
    class Hearth:
        @hookimpl
        def ember_candidates(self) -> list[Ember]:
            return [Ember("...the kettle left on", 0.3), Ember("...proud about: the bridge held", 0.9)]

    class Draught:
        @hookimpl
        def ember_candidates(self) -> list[Ember]:
            return [Ember("...a letter still unanswered", 0.5), Ember("   ", 1.0)]

    async with mcp_client(make_host({"hearth": Hearth(), "draught": Draught()})) as client:
        text = tool_text(await client.call_tool("wake_up", {}))
    assert "Embers: ...proud about: the bridge held / ...a letter still unanswered" in text
    assert "kettle" not in text


def test_random_source_is_fixed_by_the_seed_per_plugin(make_host: HostFactory, tmp_path: Path) -> None:
    class Quiet:
        pass

    def draws(seed: int | None, plugin: str) -> list[float]:
        host = make_host({plugin: Quiet()}, settings=Settings(data_dir=tmp_path / str(seed), random_seed=seed))
        ctx = host.context(plugin)
        return [ctx.random.random() for _ in range(3)]

    assert draws(7, "alpha") == draws(7, "alpha")
    assert draws(7, "alpha") != draws(7, "beta")
    assert draws(8, "alpha") != draws(7, "alpha")
    assert draws(None, "alpha") != draws(None, "alpha")


def test_settings_carry_the_log_switches(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert (settings.log_arguments, settings.trace_hooks) == (False, False)
    assert attrs.evolve(settings, log_arguments=True).log_arguments
