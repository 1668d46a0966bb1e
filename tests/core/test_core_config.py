"""Configuration: ego.toml + EGO_* variables, structured with cattrs; errors name the key."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from ego_core import build_host, hookimpl
from ego_core.kernel.config import ConfigError, Settings, load_settings, structure_plugin_config


def write_config(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


def load(data_dir: Path, toml: str | None = None, **env: str) -> Settings:
    if toml is not None:
        write_config(data_dir / "ego.toml", toml)
    return load_settings(env={"EGO_DATA_DIR": str(data_dir), **env})


def test_defaults_without_a_config_file(data_dir: Path) -> None:
    settings = load(data_dir, EGO_TIMEZONE="Asia/Tokyo")
    assert settings.data_dir == data_dir
    assert settings.config_path is None
    assert settings.companion_name == "Master"
    assert settings.server.host == "127.0.0.1"
    assert settings.server.port == 8765
    assert settings.server.path == "/mcp"
    assert settings.server.tokens == {}
    assert settings.plugins.enabled is None
    assert settings.plugins.disabled == []
    assert settings.logs_path == data_dir / "logs"
    assert settings.tz.key == "Asia/Tokyo"


def test_data_dir_defaults_to_home_dot_ego_never_tmp() -> None:
    settings = load_settings(env={"EGO_TIMEZONE": "UTC", "EGO_CONFIG": "/dev/null"})
    assert settings.data_dir == Path("~/.ego").expanduser()


def test_toml_values_are_loaded(data_dir: Path) -> None:
    settings = load(
        data_dir,
        """
        timezone = "Europe/Berlin"
        companion_name = "Aiko"
        log_level = "DEBUG"
        [server]
        host = "0.0.0.0"
        port = 9000
        path = "/ego"
        [plugins]
        enabled = ["memory", "dedup"]
        disabled = ["dedup"]
        [plugins.memory]
        embedder = "onnx"
        """.replace("\n        ", "\n"),
    )
    assert settings.config_path == data_dir / "ego.toml"
    assert settings.timezone == "Europe/Berlin"
    assert settings.companion_name == "Aiko"
    assert settings.log_level == "DEBUG"
    assert (settings.server.host, settings.server.port, settings.server.path) == ("0.0.0.0", 9000, "/ego")
    assert settings.plugins.enabled == ["memory", "dedup"]
    assert settings.plugins.disabled == ["dedup"]
    assert dict(settings.plugin_tables) == {"memory": {"embedder": "onnx"}}


def test_environment_overrides_the_file(data_dir: Path, tmp_path: Path) -> None:
    settings = load(
        data_dir,
        'timezone = "Europe/Berlin"\ncompanion_name = "Aiko"\n[server]\nport = 9000\nhost = "0.0.0.0"\n',
        EGO_TIMEZONE="Asia/Tokyo",
        EGO_COMPANION_NAME="Ren",
        EGO_HTTP_PORT="9100",
        EGO_HTTP_HOST="127.0.0.2",
        EGO_LOG_DIR=str(tmp_path / "elsewhere"),
        EGO_LOG_LEVEL="WARNING",
    )
    assert settings.timezone == "Asia/Tokyo"
    assert settings.companion_name == "Ren"
    assert settings.server.port == 9100
    assert settings.server.host == "127.0.0.2"
    assert settings.logs_path == tmp_path / "elsewhere"
    assert settings.log_level == "WARNING"


def test_ego_config_names_the_file_and_it_must_exist(tmp_path: Path, data_dir: Path) -> None:
    path = write_config(tmp_path / "conf" / "mine.toml", 'companion_name = "Kei"\n')
    settings = load_settings(env={"EGO_DATA_DIR": str(data_dir), "EGO_CONFIG": str(path), "EGO_TIMEZONE": "UTC"})
    assert settings.companion_name == "Kei"
    assert settings.config_path == path
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(env={"EGO_DATA_DIR": str(data_dir), "EGO_CONFIG": str(tmp_path / "missing.toml")})
    # an explicit --config (argument) beats EGO_CONFIG
    other = write_config(tmp_path / "other.toml", 'companion_name = "Sora"\n')
    settings = load_settings(config_path=other, env={"EGO_CONFIG": str(path), "EGO_TIMEZONE": "UTC"})
    assert settings.companion_name == "Sora"


def test_tokens_from_the_environment(data_dir: Path) -> None:
    digest_a, digest_b = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    settings = load(data_dir, EGO_HTTP_TOKENS=f"claude={digest_a}, openclaw={digest_b}")
    assert settings.server.tokens == {"claude": digest_a, "openclaw": digest_b}


@pytest.mark.parametrize(
    ("toml", "env", "key", "form"),
    [
        ('[server]\nport = "eighty"\n', {}, "server.port", "int"),
        ("[server]\nport = true\n", {}, "server.port", "int"),
        ("[server]\nport = 70000\n", {}, "server.port", "1 to 65535"),
        ("", {"EGO_HTTP_PORT": "eighty"}, "server.port", "int"),
        ("companion_name = 3\n", {}, "companion_name", "str"),
        ('log_level = "LOUD"\n', {}, "log_level", "DEBUG, INFO, WARNING, ERROR"),
        ('[server.tokens]\nclaude = "plain-token"\n', {}, "server.tokens.claude", "sha256:<64 hex digits>"),
        ('[server]\npath = "mcp"\n', {}, "server.path", "starting with /"),
        ("[plugins]\nmemory = 3\n", {}, "plugins.memory", "table"),
        ('[plugins]\nenabled = "memory"\n', {}, "plugins.enabled", "list"),
        ("", {"EGO_HTTP_TOKENS": "claude"}, "EGO_HTTP_TOKENS", "agent=sha256:<hex>"),
    ],
)
def test_a_bad_value_is_an_error_naming_the_key_and_the_form(
    data_dir: Path, toml: str, env: dict[str, str], key: str, form: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load(data_dir, toml, EGO_TIMEZONE="UTC", **env)
    assert key in str(info.value)
    assert form in str(info.value)


def test_a_secret_put_in_place_of_a_token_hash_is_not_echoed(data_dir: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(data_dir, '[server.tokens]\nclaude = "ego_s3cr3t-value"\n', EGO_TIMEZONE="UTC")
    assert "ego_s3cr3t-value" not in str(info.value)
    assert "ego token new claude" in str(info.value)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('colour = "blue"\n', "config: unknown key(s) colour"),
        ("[server]\nbogus = 1\n", "server: unknown key(s) bogus"),
        # fields ego fills in itself are not keys of the file
        ('config_path = "/etc/other.toml"\n', "config: unknown key(s) config_path"),
        ("[plugin_tables.memory]\nembedder = 'onnx'\n", "config: unknown key(s) plugin_tables"),
    ],
)
def test_an_unknown_key_is_an_error_naming_it(data_dir: Path, toml: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(data_dir, toml, EGO_TIMEZONE="UTC")
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("toml", "env", "message"),
    [
        ('[server]\nport = "eighty"\n', {}, "server.port: expected an integer"),
        ("companion_name = 3\n", {}, "companion_name: expected a string"),
        ('[plugins]\nenabled = "memory"\n', {}, "plugins.enabled: expected a list"),
        ("[server]\ntokens = 3\n", {}, "server.tokens: expected a table"),
        ("[server.tokens]\nclaude = 3\n", {}, "server.tokens.claude: expected a string"),
        ("", {"EGO_HTTP_PORT": "eighty"}, "EGO_HTTP_PORT (server.port): expected an integer"),
        ("", {"EGO_HTTP_PORT": "70000"}, "EGO_HTTP_PORT (server.port): expected a TCP port number from 1 to 65535"),
        ("[server]\nport = 0\n", {}, "server.port: expected a TCP port number from 1 to 65535"),
        ("", {"EGO_LOG_LEVEL": "LOUD"}, "EGO_LOG_LEVEL (log_level): expected one of DEBUG, INFO, WARNING, ERROR"),
    ],
)
def test_errors_are_in_the_words_of_the_check_and_name_the_variable(
    data_dir: Path, toml: str, env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load(data_dir, toml, EGO_TIMEZONE="UTC", **env)
    assert str(info.value) == message


def test_a_token_hash_from_the_environment_names_the_variable(data_dir: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(data_dir, EGO_TIMEZONE="UTC", EGO_HTTP_TOKENS="claude=sha256:abc")
    assert str(info.value).startswith("EGO_HTTP_TOKENS (server.tokens.claude): expected sha256:<64 hex digits>")


def test_invalid_toml_is_an_error_naming_the_file(data_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r"ego\.toml: not valid TOML"):
        load(data_dir, "this is [not toml", EGO_TIMEZONE="UTC")


def test_a_config_file_that_is_not_utf8_is_an_error_naming_the_file(data_dir: Path) -> None:
    (data_dir / "ego.toml").parent.mkdir(parents=True)
    (data_dir / "ego.toml").write_bytes(b"\xff\xfetimezone = 'UTC'\n")
    with pytest.raises(ConfigError, match=r"ego\.toml: not UTF-8 text"):
        load(data_dir)


@pytest.mark.parametrize("value", ['""', "5", "[]", "false"])
def test_a_data_dir_that_is_not_a_path_is_an_error(tmp_path: Path, value: str) -> None:
    config = write_config(tmp_path / "ego.toml", f"data_dir = {value}\n")
    with pytest.raises(ConfigError, match=r"^data_dir: expected a path \(a non-empty string\)"):
        load_settings(env={"EGO_CONFIG": str(config), "EGO_TIMEZONE": "UTC"})


@pytest.mark.parametrize(
    ("toml", "env", "where"),
    [
        ('timezone = "Mars/Olympus_Mons"\n', {}, "timezone: "),
        ("", {"EGO_TIMEZONE": "Nowhere"}, "EGO_TIMEZONE (timezone): "),
    ],
)
def test_a_bad_timezone_names_the_key_and_the_accepted_form(
    data_dir: Path, toml: str, env: dict[str, str], where: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load(data_dir, toml, **env)
    assert str(info.value).startswith(where)
    assert "IANA" in str(info.value)


# --------------------------------------------------------------------------------------------------
# Plugin selection precedence: command line > environment > config file > all installed


def test_env_selection_overrides_the_file(data_dir: Path) -> None:
    toml = '[plugins]\nenabled = ["alpha"]\ndisabled = ["beta"]\n'
    assert load(data_dir, toml, EGO_TIMEZONE="UTC").plugins.enabled == ["alpha"]
    by_env = load(data_dir, toml, EGO_TIMEZONE="UTC", EGO_PLUGINS="beta, gamma").plugins
    assert by_env.enabled == ["beta", "gamma"]
    assert "beta" not in by_env.disabled  # the file cannot take back what the environment asked for
    assert load(data_dir, toml, EGO_TIMEZONE="UTC", EGO_DISABLE_PLUGINS="alpha").plugins.disabled == ["alpha"]
    everything = load(data_dir, toml, EGO_TIMEZONE="UTC", EGO_PLUGINS="").plugins  # set but empty: all installed
    assert (everything.enabled, everything.disabled) == (None, [])
    both = load(data_dir, toml, EGO_TIMEZONE="UTC", EGO_PLUGINS="beta", EGO_DISABLE_PLUGINS="gamma").plugins
    assert (both.enabled, both.disabled) == (["beta"], ["gamma"])


# --------------------------------------------------------------------------------------------------
# Per-plugin configuration


@attrs.frozen
class DemoConfig:
    threshold: float = 0.9
    limit: int = 3
    label: str = "x"
    verbose: bool = False
    names: list[str] = attrs.field(factory=list)


DEMO_ENV = {"EGO_DEMO_THRESHOLD": "threshold", "EGO_DEMO_VERBOSE": "verbose"}


def test_plugin_config_is_structured_with_env_overrides() -> None:
    config = structure_plugin_config(
        "demo", DemoConfig, {"threshold": 0.5, "limit": 7, "names": ["a"]}, DEMO_ENV, env={"EGO_DEMO_VERBOSE": "yes"}
    )
    assert config == DemoConfig(threshold=0.5, limit=7, verbose=True, names=["a"])
    config = structure_plugin_config("demo", DemoConfig, {"threshold": 0.5}, DEMO_ENV, env={"EGO_DEMO_THRESHOLD": "1"})
    assert config.threshold == 1.0


@pytest.mark.parametrize(
    ("table", "env", "key"),
    [
        ({"threshold": "high"}, {}, "plugins.demo.threshold"),
        ({"limit": 2.5}, {}, "plugins.demo.limit"),
        ({}, {"EGO_DEMO_VERBOSE": "perhaps"}, "plugins.demo.verbose"),
        ({"names": "abc"}, {}, "plugins.demo.names"),
        ({"typo": 1}, {}, "typo"),
    ],
)
def test_bad_plugin_config_names_the_plugin_key(table: dict[str, object], env: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        structure_plugin_config("demo", DemoConfig, table, DEMO_ENV, env=env)


def _check_window(_instance: object, _attribute: attrs.Attribute[float], value: float) -> None:
    if value < 0:
        raise ValueError("window: expected a number of seconds >= 0")


def _check_even(_instance: object, _attribute: attrs.Attribute[int], value: int) -> None:
    if value % 2:
        raise ValueError("expected an even number")


@attrs.frozen
class InnerConfig:
    mode: str = attrs.field(default="a", validator=attrs.validators.in_(("a", "b")))


@attrs.frozen
class ValidatedConfig:
    window: float = attrs.field(default=5.0, validator=_check_window)
    pairs: int = attrs.field(default=2, validator=_check_even)
    inner: InnerConfig = attrs.field(factory=InnerConfig)


VALIDATED_ENV = {"EGO_DEMO_WINDOW": "window", "EGO_DEMO_PAIRS": "pairs"}


@pytest.mark.parametrize(
    ("table", "env", "message"),
    [
        # a validator that names its field is not repeated
        ({"window": -1}, {}, "plugins.demo.window: expected a number of seconds >= 0"),
        # a validator that does not name its field still gets it
        ({"pairs": 3}, {}, "plugins.demo.pairs: expected an even number"),
        ({"window": "soon"}, {}, "plugins.demo.window: expected a number"),
        ({"inner": {"mode": "c"}}, {}, "plugins.demo.inner.mode: 'mode' must be in ('a', 'b') (got 'c')"),
        ({"inner": 3}, {}, "plugins.demo.inner: expected a table"),
        ({}, {"EGO_DEMO_WINDOW": "-2"}, "EGO_DEMO_WINDOW (plugins.demo.window): expected a number of seconds >= 0"),
        ({}, {"EGO_DEMO_PAIRS": "many"}, "EGO_DEMO_PAIRS (plugins.demo.pairs): expected an integer"),
        ({"windw": 1}, {}, "plugins.demo: unknown key(s) windw"),
    ],
)
def test_plugin_config_errors_name_the_key_and_say_what_the_check_said(
    table: dict[str, object], env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        structure_plugin_config("demo", ValidatedConfig, table, VALIDATED_ENV, env=env)
    assert str(info.value) == message


class ConfiguredPlugin:
    config_class = DemoConfig
    config_env = DEMO_ENV

    def __init__(self) -> None:
        self.seen: object = None

    @hookimpl
    def on_startup(self, ctx: object) -> None:
        self.seen = getattr(ctx, "config", None)


def test_the_host_gives_each_plugin_its_structured_config(
    ego_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EGO_DEMO_VERBOSE", "true")
    settings = attrs.evolve(ego_settings, plugin_tables={"demo": {"limit": 9}})
    plugin = ConfiguredPlugin()
    host = build_host(settings, autoload=False, plugins={"demo": plugin})
    host.start()
    try:
        assert plugin.seen == DemoConfig(limit=9, verbose=True)
        assert host.context("demo").config == DemoConfig(limit=9, verbose=True)
    finally:
        host.stop()


def test_a_plugin_without_config_class_gets_its_raw_table(ego_settings: Settings) -> None:
    class Plain:
        @hookimpl
        def on_startup(self) -> None:
            return None

    settings = attrs.evolve(ego_settings, plugin_tables={"plain": {"a": 1}})
    host = build_host(settings, autoload=False, plugins={"plain": Plain()})
    assert host.context("plain").config == {"a": 1}


def test_bad_plugin_config_is_a_startup_error(ego_settings: Settings) -> None:
    settings = attrs.evolve(ego_settings, plugin_tables={"demo": {"limit": "many"}})
    with pytest.raises(ConfigError, match=r"plugins\.demo\.limit"):
        build_host(settings, autoload=False, plugins={"demo": ConfiguredPlugin()})
