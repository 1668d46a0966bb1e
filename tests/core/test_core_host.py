"""The plugin host in-process: discovery, selection, isolation, dependencies, services, lifecycle."""

from __future__ import annotations

import importlib.metadata
import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from ego_core import Clock, HookKind, PluginContext, Section, Tool, build_host, hookimpl, spec
from ego_core.kernel.config import Settings
from ego_core.kernel.discovery import SelectionError
from ego_core.kernel.registries import ToolConflictError
from ego_core.kernel.status import CORE_PLUGIN_ID, MAX_FAILURES_PER_HOOK
from ego_core.services import BODY_SENSE, BodySense

if TYPE_CHECKING:
    from ego_core.testing import FakeDistFactory, HostFactory


def echo_tool(name: str, tier: str = "backend") -> Tool:
    return Tool(
        name=name,
        description=f"{name} tool",
        input_schema={"type": "object", "properties": {}},
        handler=lambda args, _ctx: name,
        tier=tier,  # type: ignore[arg-type]
    )


class ToolPlugin:
    def __init__(self, *names: str) -> None:
        self.names = names

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        for name in self.names:
            register(echo_tool(name))


# --------------------------------------------------------------------------------------------------
# Discovery and selection through real entry points (fake distributions)

GOOD = """
from ego_core import Tool, hookimpl

@hookimpl
def register_tools(register):
    register(Tool(name="{tool}", description="d", input_schema={{"type": "object"}}, handler=lambda _args, _ctx: "ok"))
"""


@pytest.fixture
def fake_eps(fake_dist: FakeDistFactory) -> Callable[..., list[importlib.metadata.EntryPoint]]:
    """Install fake distributions; return exactly their entry points (real installed plugins stay out)."""

    def make(**sources: str) -> list[importlib.metadata.EntryPoint]:
        for plugin_id, source in sources.items():
            fake_dist(f"egotest-{plugin_id}", f"egotest_{plugin_id}", source, ep_name=plugin_id)
        return [ep for ep in importlib.metadata.entry_points(group="ego") if ep.name in sources]

    return make


def test_discovery_loads_every_installed_plugin_by_its_entry_point_name(
    ego_settings: Settings, fake_eps: Callable[..., list[importlib.metadata.EntryPoint]]
) -> None:
    eps = fake_eps(alpha=GOOD.format(tool="alpha_ping"), beta=GOOD.format(tool="beta_ping"))
    host = build_host(ego_settings, entry_points=eps)
    assert host.plugin_ids() == [CORE_PLUGIN_ID, "alpha", "beta"]
    assert {t.name for _, t in host.tools()} == {"wake_up", "introspect", "attune", "alpha_ping", "beta_ping"}
    alpha = host.installed["alpha"]
    assert (alpha.distribution, alpha.version, alpha.entry_point) == ("egotest-alpha", "0.1.0", "egotest_alpha")
    statuses = {s.id: s for s in host.statuses()}
    assert statuses["core"].state == "enabled"
    assert statuses["alpha"].state == "enabled"
    assert statuses["alpha"].hooks == ("register_tools",)


@pytest.mark.parametrize(
    ("enabled", "disabled", "expected"),
    [
        (["alpha"], [], {"alpha_ping"}),
        (None, ["alpha"], {"beta_ping"}),
        (["alpha", "beta"], ["beta"], {"alpha_ping"}),
        ([], [], set()),
    ],
)
def test_selection_serves_exactly_the_chosen_plugins(
    ego_settings: Settings,
    fake_eps: Callable[..., list[importlib.metadata.EntryPoint]],
    enabled: list[str] | None,
    disabled: list[str],
    expected: set[str],
) -> None:
    eps = fake_eps(alpha=GOOD.format(tool="alpha_ping"), beta=GOOD.format(tool="beta_ping"))
    host = build_host(ego_settings, enabled=enabled, disabled=disabled, entry_points=eps)
    assert {t.name for _, t in host.tools()} == {"wake_up", "introspect", "attune", *expected}
    states = {s.id: s.state for s in host.statuses()}
    for plugin_id in ("alpha", "beta"):
        assert states[plugin_id] == ("enabled" if f"{plugin_id}_ping" in expected else "disabled")


@pytest.mark.parametrize(("enabled", "disabled"), [(["gamma"], []), (None, ["gamma"])])
def test_an_unknown_plugin_id_is_an_error_listing_the_installed_ones(
    ego_settings: Settings,
    fake_eps: Callable[..., list[importlib.metadata.EntryPoint]],
    enabled: list[str] | None,
    disabled: list[str],
) -> None:
    eps = fake_eps(alpha=GOOD.format(tool="alpha_ping"), beta=GOOD.format(tool="beta_ping"))
    with pytest.raises(SelectionError, match=r"unknown plugin 'gamma'; installed plugins: alpha, beta"):
        build_host(ego_settings, enabled=enabled, disabled=disabled, entry_points=eps)


def test_settings_selection_and_command_line_precedence(
    ego_settings: Settings, fake_eps: Callable[..., list[importlib.metadata.EntryPoint]]
) -> None:
    eps = fake_eps(alpha=GOOD.format(tool="alpha_ping"), beta=GOOD.format(tool="beta_ping"))

    def served(settings: Settings, **kwargs: Any) -> set[str]:
        host = build_host(settings, entry_points=eps, **kwargs)
        return {t.name for _, t in host.tools()} - {"wake_up", "introspect", "attune"}

    file_like = attrs.evolve(ego_settings, plugins=attrs.evolve(ego_settings.plugins, enabled=["alpha"]))
    assert served(file_like) == {"alpha_ping"}
    assert served(file_like, enabled=["beta"]) == {"beta_ping"}  # the command line wins
    assert served(file_like, disabled=["alpha"]) == set()  # --disable adds to the settings' list
    disabled_in_file = attrs.evolve(ego_settings, plugins=attrs.evolve(ego_settings.plugins, disabled=["beta"]))
    assert served(disabled_in_file) == {"alpha_ping"}
    assert served(disabled_in_file, enabled=["alpha", "beta"]) == {"alpha_ping", "beta_ping"}


def test_duplicate_plugin_ids_keep_the_first_and_record_the_clash(
    ego_settings: Settings, fake_dist: FakeDistFactory
) -> None:
    fake_dist("egotest-one", "egotest_one", GOOD.format(tool="one_ping"), ep_name="same")
    fake_dist("egotest-two", "egotest_two", GOOD.format(tool="two_ping"), ep_name="same")
    eps = [ep for ep in importlib.metadata.entry_points(group="ego") if ep.name == "same"]
    host = build_host(ego_settings, entry_points=eps)
    assert len([t for _, t in host.tools() if t.name in ("one_ping", "two_ping")]) == 1
    [failure] = [f for f in host.failures if f.stage == "duplicate"]
    assert "egotest-one" in failure.reason
    assert "egotest-two" in failure.reason


# --------------------------------------------------------------------------------------------------
# Isolation


def test_a_plugin_whose_import_raises_is_recorded_and_skipped(
    ego_settings: Settings, fake_eps: Callable[..., list[importlib.metadata.EntryPoint]]
) -> None:
    eps = fake_eps(good=GOOD.format(tool="good_ping"), broken="raise ImportError('no module named chromadb')\n")
    host = build_host(ego_settings, entry_points=eps)
    assert host.tool_served("good_ping")
    [status] = [s for s in host.statuses() if s.id == "broken"]
    assert status.state == "failed"
    assert "[load] import failed: ImportError: no module named chromadb" in status.reason


def test_a_plugin_with_an_unknown_hook_is_refused(make_host: HostFactory) -> None:
    class Typo:
        @hookimpl
        def on_wakeup(self) -> None:  # not a hook
            return None

        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            register(echo_tool("typo_tool"))

    host = make_host({"typo": Typo()})
    assert not host.tool_served("typo_tool")
    [status] = [s for s in host.statuses() if s.id == "typo"]
    assert status.state == "failed"
    assert "unknown hook 'on_wakeup'" in status.reason


def test_a_wrapper_implementation_is_refused(make_host: HostFactory) -> None:
    class Wrapper:
        @hookimpl(wrapper=True)
        def on_wake_up(self) -> Iterator[None]:
            return (yield)

    host = make_host({"wrapper": Wrapper()})
    assert not host.is_active("wrapper")
    assert "as a wrapper" in next(s.reason for s in host.statuses() if s.id == "wrapper")


def test_an_unconstructible_plugin_class_is_recorded(make_host: HostFactory) -> None:
    class NeedsArgs:
        def __init__(self, value: int) -> None:
            self.value = value

    host = make_host({"needs": NeedsArgs})
    assert "constructing NeedsArgs raised TypeError" in next(s.reason for s in host.statuses() if s.id == "needs")


class Sections:
    def __init__(self, text: str) -> None:
        self.text = text

    @hookimpl
    def on_wake_up(self) -> Section:
        return Section(key="s", text=self.text)


class RaisingWake:
    @hookimpl
    def on_wake_up(self) -> Section:
        raise RuntimeError("wake up went wrong")


def test_a_raising_notification_hook_is_isolated_logged_and_recorded(
    make_host: HostFactory, caplog: pytest.LogCaptureFixture
) -> None:
    host = make_host({"a": Sections("from a"), "bad": RaisingWake(), "z": Sections("from z")})
    with caplog.at_level(logging.WARNING):
        results = host.hooks.on_wake_up()
    assert sorted((plugin, section.text) for plugin, section in results) == [("a", "from a"), ("z", "from z")]
    [failure] = host.failures
    assert (failure.plugin, failure.stage, failure.hook) == ("bad", "call", "on_wake_up")
    assert "RuntimeError: wake up went wrong" in failure.reason
    assert any(getattr(r, "ego", {}).get("event") == "plugin_failure" for r in caplog.records)
    status = next(s for s in host.statuses() if s.id == "bad")
    assert status.state == "enabled"  # still serving its other hooks
    assert "[call:on_wake_up] raised RuntimeError" in status.reason


def test_a_hook_raising_on_every_call_is_recorded_once_and_logged_each_time(
    make_host: HostFactory, caplog: pytest.LogCaptureFixture
) -> None:
    class RaisingNumbered:
        calls = 0

        @hookimpl
        def on_wake_up(self) -> Section:
            RaisingNumbered.calls += 1
            raise RuntimeError(f"failure number {RaisingNumbered.calls}")

    host = make_host({"bad": RaisingWake(), "numbered": RaisingNumbered()})
    with caplog.at_level(logging.WARNING):
        for _ in range(MAX_FAILURES_PER_HOOK + 50):
            host.hooks.on_wake_up()
    logged = [r for r in caplog.records if getattr(r, "ego", {}).get("event") == "plugin_failure"]
    assert len(logged) == 2 * (MAX_FAILURES_PER_HOOK + 50)
    assert [f.reason for f in host.failures if f.plugin == "bad"] == ["raised RuntimeError: wake up went wrong"]
    # distinct reasons are kept up to a bound per plugin and hook, the newest ones
    numbered = [f.reason for f in host.failures if f.plugin == "numbered"]
    assert len(numbered) == MAX_FAILURES_PER_HOOK
    assert numbered[-1] == f"raised RuntimeError: failure number {MAX_FAILURES_PER_HOOK + 50}"


def test_async_hook_implementations_are_refused_naming_the_hook(make_host: HostFactory) -> None:
    class AsyncWake:
        @hookimpl
        async def on_wake_up(self) -> Section:
            return Section(key="s", text="never seen")

        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            register(echo_tool("async_tool"))

    class AsyncRegistration:
        @hookimpl
        async def register_tools(self, register: Callable[[Tool], None]) -> None:
            register(echo_tool("never_registered"))

    host = make_host({"async_wake": AsyncWake(), "async_reg": AsyncRegistration(), "fine": Sections("fine")})
    assert host.hooks.on_wake_up() == [("fine", Section(key="s", text="fine"))]
    assert not host.tool_served("async_tool")
    statuses = {s.id: s for s in host.statuses()}
    for plugin_id, hook in (("async_wake", "on_wake_up"), ("async_reg", "register_tools")):
        assert statuses[plugin_id].state == "failed"
        [failure] = [f for f in host.failures if f.plugin == plugin_id]
        assert failure.stage == "validate"
        assert f"implements {hook!r} as async def" in failure.reason
        assert "hooks may not" in failure.reason


def test_a_hook_that_returns_a_coroutine_is_recorded_not_used(make_host: HostFactory) -> None:
    async def later() -> Section:
        return Section(key="s", text="never seen")

    class Sneaky:
        @hookimpl
        def on_wake_up(self) -> Any:
            return later()

    host = make_host({"sneaky": Sneaky(), "fine": Sections("fine")})
    assert host.hooks.on_wake_up() == [("fine", Section(key="s", text="fine"))]
    [failure] = host.failures
    assert (failure.plugin, failure.stage, failure.hook) == ("sneaky", "call", "on_wake_up")
    assert "returned an awaitable" in failure.reason


def test_first_result_skips_raising_and_none_answers(make_host: HostFactory) -> None:
    class JudgeSpecs:
        @spec(HookKind.FIRST_RESULT, firstresult=True)
        def judge(self, draft: Any, ctx: PluginContext) -> str | None:
            """The first answer wins."""

    class Judges:
        hookspecs = (JudgeSpecs,)

    class Raising:
        @hookimpl(optionalhook=True, tryfirst=True)
        def judge(self) -> str:
            raise ValueError("boom")

    class Silent:
        @hookimpl(optionalhook=True)
        def judge(self) -> None:
            return None

    class Veto:
        @hookimpl(optionalhook=True, trylast=True)
        def judge(self, draft: Any) -> str:
            return f"duplicate of {draft}"

    host = make_host({"judges": Judges(), "raising": Raising(), "silent": Silent(), "veto": Veto()})
    assert host.hooks.call("judge", draft="d") == [("veto", "duplicate of d")]
    assert [f.plugin for f in host.failures] == ["raising"]


def test_an_implementation_asking_for_an_unknown_argument_is_recorded(make_host: HostFactory) -> None:
    class Greedy:
        @hookimpl
        def on_wake_up(self, ctx: PluginContext) -> str:
            return "fine"

    class Other:
        def on_tool_called(self, tool: str, nonsense: str) -> None:
            return None

    host = make_host({"greedy": Greedy()})
    assert host.hooks.on_wake_up() == [("greedy", "fine")]
    # pluggy itself refuses an implementation whose parameters are not in the spec
    refused = make_host({"other": type("O", (), {"on_tool_called": hookimpl(Other.on_tool_called)})()})
    assert not refused.is_active("other")
    assert "nonsense" in next(s.reason for s in refused.statuses() if s.id == "other")


def test_a_raising_register_tools_is_isolated(make_host: HostFactory) -> None:
    class Broken:
        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            register(echo_tool("half"))
            raise RuntimeError("registration failed")

    host = make_host({"broken": Broken(), "fine": ToolPlugin("fine_tool")})
    assert host.tool_served("fine_tool")
    assert any(f.plugin == "broken" and f.stage == "register" for f in host.failures)
    # all or nothing: the tool registered before the error is not served either
    assert not host.tool_served("half")
    assert "half" not in {t.name for _, t in host.tools()}


def test_a_tool_registration_that_fails_late_leaves_the_name_free(make_host: HostFactory) -> None:
    class Broken:
        @hookimpl
        def register_tools(self, register: Callable[[Tool], None]) -> None:
            register(echo_tool("shared_name"))
            register(
                Tool(name="bad", description="d", input_schema={"type": "nonsense"}, handler=lambda _args, _ctx: "")
            )

    # "broken" registers first: its half-done registration must not make "z_fine"'s tool a conflict
    host = make_host({"broken": Broken(), "z_fine": ToolPlugin("shared_name")})
    assert host.tool("shared_name") is not None
    assert host.tool("shared_name")[0] == "z_fine"  # type: ignore[index]
    assert "invalid input schema" in next(f.reason for f in host.failures if f.plugin == "broken")


def test_registering_something_that_is_not_a_redactor_or_embedder_is_recorded(make_host: HostFactory) -> None:
    from ego_core import Redactor

    class Sloppy:
        @hookimpl
        def register_redactors(self, register: Callable[[Any], None]) -> None:
            register(lambda text: text)

        @hookimpl
        def register_embedders(self, register: Callable[..., None]) -> None:
            register(3, lambda settings: None)

    class AlsoSloppy:
        @hookimpl
        def register_redactors(self, register: Callable[[Any], None]) -> None:
            register(Redactor("also.order", lambda t: t, order="early"))  # type: ignore[arg-type]

        @hookimpl
        def register_embedders(self, register: Callable[..., None]) -> None:
            register("not-callable", "a factory")

    host = make_host({"sloppy": Sloppy(), "also": AlsoSloppy(), "fine": ToolPlugin("fine_tool")})
    assert host.tool_served("fine_tool")
    reasons = [(f.plugin, f.stage, f.hook, f.reason) for f in host.failures]
    assert ("sloppy", "register", "register_redactors") in [r[:3] for r in reasons]
    assert any(r[0] == "sloppy" and "expects ego_core.Redactor, got function" in r[3] for r in reasons)
    assert any(r[0] == "sloppy" and r[2] == "register_embedders" and "TypeError" in r[3] for r in reasons)
    assert any(r[0] == "also" and "order must be a number" in r[3] for r in reasons)
    assert any(r[0] == "also" and r[2] == "register_embedders" for r in reasons)
    assert host.embedder_names() == []
    assert [r.name for r in host.redaction.redactors] == ["ego.secrets"]
    assert host.redaction("Authorization: Bearer abcdefghijklmnop") == "Authorization: Bearer [REDACTED]"


def test_registering_something_that_is_not_a_tool_is_recorded(make_host: HostFactory) -> None:
    class Sloppy:
        @hookimpl
        def register_tools(self, register: Callable[[Any], None]) -> None:
            register({"name": "dict_tool"})

    host = make_host({"sloppy": Sloppy()})
    assert "expects ego_core.Tool" in next(f.reason for f in host.failures if f.plugin == "sloppy")


def test_a_tool_name_claimed_twice_is_a_startup_error_naming_both(make_host: HostFactory) -> None:
    with pytest.raises(ToolConflictError) as info:
        make_host({"first": ToolPlugin("recall"), "second": ToolPlugin("recall")})
    assert "'recall'" in str(info.value)
    assert "'first'" in str(info.value)
    assert "'second'" in str(info.value)
    with pytest.raises(ToolConflictError, match="'core'"):
        make_host({"impostor": ToolPlugin("wake_up")})


def test_the_core_plugin_is_essential(ego_settings: Settings) -> None:
    host = build_host(ego_settings, autoload=False)
    assert host.plugin_ids() == [CORE_PLUGIN_ID]
    assert [t.name for _, t in host.tools()] == ["attune", "introspect", "wake_up"]
    with pytest.raises(ValueError, match="core"):
        host.add_plugin(CORE_PLUGIN_ID, object(), essential=True)


# --------------------------------------------------------------------------------------------------
# Dependencies, lifecycle and services


class Base:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        self.log.append("start base")
        ctx.provide(BODY_SENSE, Body())

    @hookimpl
    def on_shutdown(self) -> None:
        self.log.append("stop base")

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(echo_tool("base_tool"))


class Dependent:
    requires = ("base",)

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.body: BodySense | None = None

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        self.log.append("start dependent")
        self.body = ctx.services.get(BODY_SENSE, BodySense)

    @hookimpl
    def on_shutdown(self) -> None:
        self.log.append("stop dependent")

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(echo_tool("dependent_tool"))


class Body:
    def body_state(self) -> dict[str, Any]:
        return {"time_phase": "morning"}

    def time_phase(self) -> str:
        return "morning"


def test_plugins_start_in_dependency_order_and_stop_in_reverse(make_host: HostFactory) -> None:
    log: list[str] = []
    dependent = Dependent(log)
    host = make_host({"aaa_dependent": dependent, "base": Base(log)})
    # "aaa_dependent" sorts first but requires "base"
    host.start()
    host.start()  # counted: a second user shares the same start
    assert log == ["start base", "start dependent"]
    assert isinstance(dependent.body, Body)
    host.stop()
    assert log == ["start base", "start dependent"]
    host.stop()
    assert log == ["start base", "start dependent", "stop dependent", "stop base"]
    assert host.services.get(BODY_SENSE) is None


def test_an_unmet_dependency_is_reported_with_the_reason(make_host: HostFactory) -> None:
    host = make_host({"dependent": Dependent([])})
    assert not host.tool_served("dependent_tool")
    status = next(s for s in host.statuses() if s.id == "dependent")
    assert status.state == "failed"
    assert "requires plugin(s) base, which are not enabled or failed" in status.reason
    assert status.requires == ("base",)  # still shown although the plugin was dropped


def test_an_explicitly_requested_plugin_with_an_unmet_dependency_is_a_startup_error(
    ego_settings: Settings, fake_eps: Callable[..., list[importlib.metadata.EntryPoint]]
) -> None:
    source = GOOD.format(tool="dep_ping") + "\nrequires = ('base',)\n"
    eps = fake_eps(dependent=source, base=GOOD.format(tool="base_ping"))
    with pytest.raises(SelectionError) as info:
        build_host(ego_settings, enabled=["dependent"], entry_points=eps)
    assert "plugin 'dependent' requires base, which is not enabled" in str(info.value)
    assert "--plugins base,dependent" in str(info.value)
    host = build_host(ego_settings, enabled=["base", "dependent"], entry_points=eps)
    assert host.tool_served("dep_ping")
    host = build_host(ego_settings, disabled=["base"], entry_points=eps)
    assert not host.tool_served("dep_ping")
    assert "requires plugin(s) base" in next(s.reason for s in host.statuses() if s.id == "dependent")


def test_a_plugin_whose_startup_fails_is_withdrawn_with_its_dependents(make_host: HostFactory) -> None:
    class FailingBase(Base):
        @hookimpl
        def on_startup(self, ctx: PluginContext) -> None:
            raise OSError("store is locked")

    log: list[str] = []
    host = make_host({"base": FailingBase(log), "dependent": Dependent(log)})
    host.start()
    assert not host.tool_served("base_tool")
    assert not host.tool_served("dependent_tool")
    assert host.tool_served("wake_up")
    reasons = {s.id: (s.state, s.reason) for s in host.statuses()}
    assert reasons["base"][0] == "failed"
    assert "on_startup raised OSError: store is locked" in reasons["base"][1]
    assert reasons["dependent"][0] == "failed"
    assert "required plugin(s) base failed to start" in reasons["dependent"][1]
    assert host.hooks.on_shutdown("base") is None  # withdrawn plugins receive no more calls
    assert host.hooks.on_shutdown("dependent") is None
    host.stop()
    assert log == []


def test_services_refuse_a_second_provider_and_check_the_kind(make_host: HostFactory) -> None:
    host = make_host()
    host.services.provide("x.thing", Body(), plugin="x")
    host.services.provide("x.thing", Body(), plugin="x")  # the same plugin may replace its own
    with pytest.raises(RuntimeError, match="already provided by plugin 'x'"):
        host.services.provide("x.thing", Body(), plugin="y")
    assert isinstance(host.services.get("x.thing", BodySense), Body)
    with pytest.raises(TypeError, match="not a int"):
        host.services.get("x.thing", int)
    assert host.services.get("absent") is None
    assert host.services.names() == ["x.thing"]


def test_plugin_context(make_host: HostFactory, ego_settings: Settings) -> None:
    from datetime import UTC, datetime

    moment = datetime(2025, 1, 31, 9, 0, tzinfo=UTC)
    host = make_host({"p": ToolPlugin("p_tool")}, clock=Clock(moment))
    ctx = host.context("p")
    assert ctx.data_dir == ego_settings.data_dir / "p"
    assert ctx.data_dir.is_dir()
    assert ctx.now() == moment
    assert ctx.tool_served("p_tool")
    assert not ctx.tool_served("recall")
    assert ctx.redact("Authorization: Bearer abcdefghijklmnop") == "Authorization: Bearer [REDACTED]"
    assert ctx.log.name == "ego.plugin.p"
    with pytest.raises(ValueError, match="timezone-aware"):
        host.clock.set(datetime(2025, 1, 1))


def test_embedders_are_registered_by_name(make_host: HostFactory) -> None:
    from ego_core.embedding import EmbedderSettings, EmbeddingError

    made: list[EmbedderSettings] = []

    class Provider:
        @hookimpl
        def register_embedders(self, register: Callable[[str, Any], None]) -> None:
            register("fake", lambda settings: made.append(settings) or "an embedder")

    class Clash:
        @hookimpl
        def register_embedders(self, register: Callable[[str, Any], None]) -> None:
            register("fake", lambda settings: "another")

    host = make_host({"provider": Provider(), "z_clash": Clash()})
    assert host.embedder_names() == ["fake"]
    assert host.make_embedder("fake", EmbedderSettings(model="m")) == "an embedder"
    assert made == [EmbedderSettings(model="m")]
    assert "already provided by provider" in next(f.reason for f in host.failures if f.plugin == "z_clash")
    with pytest.raises(EmbeddingError, match="unknown embedder 'nope'; available: fake"):
        host.make_embedder("nope", EmbedderSettings())
