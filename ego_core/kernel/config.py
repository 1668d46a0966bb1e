"""Configuration: ``ego.toml`` + ``EGO_*`` environment variables, structured by cattrs into attrs classes.

Precedence, highest first: command-line options, environment variables, the config file, defaults.
Every error names the key (``server.port``, ``plugins.memory.embedder``) or the variable and the form
that is expected.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import attrs
import cattrs
import cattrs.v
from cattrs.cols import list_structure_factory
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError

T = TypeVar("T")

DEFAULT_DATA_DIR = Path("~/.ego")
CONFIG_FILE_NAME = "ego.toml"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
LANGUAGES = ("en", "ja")
"""The owner's languages: what the owner's own surfaces (the dashboard) speak; tool text stays English."""
AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""An agent id names its space, ``<data dir>/agents/<id>``: a plain directory name."""


def valid_agent_id(agent: str) -> bool:
    return bool(AGENT_ID.match(agent)) and ".." not in agent


class ConfigError(ValueError):
    """A configuration value is missing or malformed; the message names the key and the expected form."""


def _system_timezone() -> str:
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and _valid_zone(tz):
        return tz
    try:
        target = os.readlink("/etc/localtime")
    except OSError:
        return "UTC"
    marker = "zoneinfo/"
    name = target.split(marker, 1)[1] if marker in target else ""
    return name if name and _valid_zone(name) else "UTC"


def _valid_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


@attrs.frozen
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    path: str = "/mcp"
    tokens: dict[str, str] = attrs.field(factory=dict)
    """agent id -> ``sha256:<hex>`` of that agent's bearer token (``ego token new <agent>`` makes one)."""


@attrs.frozen
class PluginSelection:
    enabled: list[str] | None = None
    disabled: list[str] = attrs.field(factory=list)


@attrs.frozen
class Settings:
    data_dir: Path
    config_path: Path | None = None
    timezone: str = "UTC"
    companion_name: str = "Master"
    language: str = "en"
    """The owner's language (one of :data:`LANGUAGES`), for what ego shows the owner; ``ego init`` sets it."""
    log_dir: Path | None = None
    log_level: str = "INFO"
    log_arguments: bool = False
    """Debugging aid: write tool arguments' values to the log (redacted); by default only names, types, sizes."""
    trace_hooks: bool = False
    """Log one record per hook implementation called (hook, plugin, duration, outcome)."""
    claims: bool = False
    """Add the structured facts behind each answer (``ego_core.Claim``) to its tool result's
    ``_meta["ego/claims"]``: what ``ego bench life`` checks against a scenario; clients ignore it."""
    random_seed: int | None = None
    """Seed of the plugins' random source (``ctx.random``): the same seed gives the same involuntary recollections
    and other chance events, for tests and reproducible runs. None (the default): seeded by the system."""
    server: ServerConfig = attrs.field(factory=ServerConfig)
    plugins: PluginSelection = attrs.field(factory=PluginSelection)
    plugin_tables: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    """Raw ``[plugins.<id>]`` tables; each plugin's table is structured into its own config class."""
    agent: str | None = None
    """The agent whose space these settings serve (``<data dir>/agents/<agent>``: an HTTP token's agent, or
    ``ego --agent``); ``None`` for the data dir itself. Plugins holding an identity of their own (the shared
    memory's) check it against this agent, so that no agent acts as another."""

    @property
    def logs_path(self) -> Path:
        return self.log_dir if self.log_dir is not None else self.data_dir / "logs"

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


# --------------------------------------------------------------------------------------------------
# The converter


def _structure_int(value: object, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("expected an integer")
    try:
        return int(value)
    except ValueError:
        raise ValueError("expected an integer") from None


def _structure_float(value: object, _: type) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError("expected a number")
    try:
        return float(value)
    except ValueError:
        raise ValueError("expected a number") from None


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _structure_bool(value: object, _: type) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError("expected true or false")


def _structure_str(value: object, _: type) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


def _structure_path(value: object, _: type) -> Path:
    if not isinstance(value, str | Path) or not str(value):
        raise ValueError("expected a path (a non-empty string)")
    return Path(os.path.expandvars(str(value))).expanduser()


def _is_list(cls: Any) -> bool:
    return cls is list or get_origin(cls) is list


def make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    converter.register_structure_hook(int, _structure_int)
    converter.register_structure_hook(float, _structure_float)
    converter.register_structure_hook(bool, _structure_bool)
    converter.register_structure_hook(str, _structure_str)
    converter.register_structure_hook(Path, _structure_path)

    def list_hook(cls: Any) -> Callable[[Any, Any], list[Any]]:
        """Lists reject a string (cattrs would otherwise turn ``"abc"`` into ``["a", "b", "c"]``)."""
        inner = list_structure_factory(cls, converter)

        def structure_list(value: Any, target: Any) -> list[Any]:
            if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
                raise TypeError("expected a list")
            result: list[Any] = inner(value, target)
            return result

        return structure_list

    converter.register_structure_hook_factory(_is_list, list_hook)
    converter.register_unstructure_hook(Path, str)
    return converter


converter = make_converter()


_MAPPING_KEY = re.compile(r"\[['\"]([^'\"]*)['\"]\]")
_FIELD_MARK = "\x1f"
"""Separates a field name found for a class-level error (an attrs validator) from the problem."""


def _failing_attribute(exc: BaseException) -> tuple[str | None, frozenset[str]]:
    """The attrs field whose validator raised ``exc`` and the fields of the class whose ``__init__`` raised,
    both found in the traceback (attrs passes validators the attribute)."""
    fields: frozenset[str] = frozenset()
    found: str | None = None
    tb = exc.__traceback__
    while tb is not None:
        local_values = tb.tb_frame.f_locals
        owner = local_values.get("self")
        if tb.tb_frame.f_code.co_name == "__init__" and owner is not None and attrs.has(type(owner)):
            fields = frozenset(field.name for field in attrs.fields(type(owner)))
        for value in local_values.values():
            if isinstance(value, attrs.Attribute):
                found = value.name
        tb = tb.tb_next
    return (found if found in fields else None), fields


def _is_table_type(target: Any) -> bool:
    origin = get_origin(target) or target
    return attrs.has(target) or (isinstance(origin, type) and issubclass(origin, Mapping | dict))


def _message(exc: BaseException) -> str:
    """The exception's own message (attrs validators put extra values after it in ``args``: leave them out)."""
    if exc.args and isinstance(exc.args[0], str):
        return exc.args[0].strip()
    return str(exc).strip()


def _format_exception(exc: BaseException, target: Any) -> str:
    """One problem, in the words of whoever raised it (our structure hooks, an attrs validator)."""
    if isinstance(exc, ForbiddenExtraKeysError):
        return f"unknown key(s) {', '.join(sorted(exc.extra_fields))}"
    if isinstance(exc, KeyError):
        return "required key missing"
    if target is not None and get_origin(target) is Literal:
        return "expected one of: " + ", ".join(str(v) for v in get_args(target))
    if isinstance(exc, AttributeError) and str(exc).endswith("has no attribute 'items'"):
        return "expected a table"
    if isinstance(exc, TypeError | AttributeError) and target is not None and _is_table_type(target):
        return "expected a table"
    message = _message(exc) if isinstance(exc, ValueError | TypeError) else ""
    if not message:
        return cattrs.v.format_exception(exc, target)
    if target is None:  # raised by the class itself: an attrs validator (or __attrs_post_init__)
        field, fields = _failing_attribute(exc)
        name, sep, rest = message.partition(": ")
        if sep and name in fields and field in (None, name):
            return f"{name}{_FIELD_MARK}{rest}"  # the message names its field: do not repeat it
        if field is not None:
            return f"{field}{_FIELD_MARK}{message}"
    return message


def _problems(exc: BaseException, where: str) -> list[tuple[str, str]]:
    """``(key, problem)`` for every problem in a cattrs error; keys are dotted from ``where``."""
    root = "$"
    found: list[tuple[str, str]] = []
    for line in cattrs.transform_error(exc, path=root, format_exception=_format_exception):
        problem, _, path = line.rpartition(" @ ")
        field, mark, rest = problem.partition(_FIELD_MARK)
        if mark:
            path, problem = f"{path}.{field}", rest
        relative = _MAPPING_KEY.sub(r".\1", path[len(root) :]).lstrip(".")
        key = ".".join(part for part in (where, relative) if part) or "config"
        found.append((key, problem))
    return found


def _name(key: str, sources: Mapping[str, str]) -> str:
    """``key``, or ``VARIABLE (key)`` when the value (or the table holding it) came from a variable."""
    parts = key.split(".")
    for end in range(len(parts), 0, -1):
        variable = sources.get(".".join(parts[:end]))
        if variable is not None:
            return f"{variable} ({key})"
    return key


def structure(data: Mapping[str, Any], cls: type[T], where: str, sources: Mapping[str, str] | None = None) -> T:
    """Structure ``data`` into ``cls``; on failure raise ConfigError naming ``where.<key>``.

    ``where`` is the dotted key of ``data`` (``""`` for the top level, ``"plugins.memory"``); ``sources`` maps
    dotted keys whose value came from the environment to the variable's name, which the error then names too.
    """
    sources = sources or {}
    try:
        return converter.structure(dict(data), cls)
    except (ClassValidationError, IterableValidationError, ForbiddenExtraKeysError) as exc:
        problems = _problems(exc, where)
    except (ValueError, TypeError) as exc:
        problems = [(where or "config", str(exc))]
    raise ConfigError("; ".join(f"{_name(key, sources)}: {problem}" for key, problem in problems)) from None


# --------------------------------------------------------------------------------------------------
# Loading


def _split_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _parse_tokens(value: str) -> dict[str, str]:
    tokens: dict[str, str] = {}
    for item in _split_list(value):
        agent, sep, digest = item.partition("=")
        if not sep or not agent.strip() or not digest.strip():
            raise ConfigError("EGO_HTTP_TOKENS: expected agent=sha256:<hex>[,agent=sha256:<hex>...]")
        tokens[agent.strip()] = digest.strip()
    return tokens


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; save the config file as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file ({exc.strerror})") from None


def config_location(env: Mapping[str, str], config_path: Path | None, data_dir: Path | None) -> tuple[Path, bool]:
    """Where the config file is, and whether it was named explicitly (then it must exist)."""
    if config_path is not None:
        return config_path.expanduser(), True
    if env.get("EGO_CONFIG"):
        return Path(env["EGO_CONFIG"]).expanduser(), True
    base = data_dir or Path(env.get("EGO_DATA_DIR") or DEFAULT_DATA_DIR).expanduser()
    return base / CONFIG_FILE_NAME, False


_DERIVED_FIELDS = frozenset({"config_path", "plugin_tables", "agent"})
"""Fields of :class:`Settings` that ego fills in itself; in a config file they are unknown keys."""


def load_settings(
    *,
    config_path: Path | None = None,
    data_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Build :class:`Settings` from defaults, the config file and the environment."""
    env = os.environ if env is None else env
    path, explicit = config_location(env, config_path, data_dir)
    raw: dict[str, Any] = {}
    if path.exists():
        raw = _read_toml(path)
    elif explicit:
        raise ConfigError(f"config file not found: {path} (from --config or EGO_CONFIG)")
    unknown = sorted(set(raw) - ({field.name for field in attrs.fields(Settings)} - _DERIVED_FIELDS))
    if unknown:
        raise ConfigError(f"config: unknown key(s) {', '.join(unknown)}")

    plugins_raw = raw.pop("plugins", {})
    if not isinstance(plugins_raw, dict):
        raise ConfigError("plugins: expected a table ([plugins])")
    selection_raw = {k: plugins_raw[k] for k in ("enabled", "disabled") if k in plugins_raw}
    tables: dict[str, Mapping[str, Any]] = {}
    for key, value in plugins_raw.items():
        if key in ("enabled", "disabled"):
            continue
        if not isinstance(value, dict):
            raise ConfigError(f"plugins.{key}: expected a table ([plugins.{key}]) or one of enabled, disabled")
        tables[key] = value

    sources: dict[str, str] = {}
    """dotted key -> the environment variable its value came from"""
    env_overrides: dict[str, Any] = {}
    for var, key in (
        ("EGO_TIMEZONE", "timezone"),
        ("EGO_COMPANION_NAME", "companion_name"),
        ("EGO_LANGUAGE", "language"),
        ("EGO_LOG_DIR", "log_dir"),
        ("EGO_LOG_LEVEL", "log_level"),
        ("EGO_LOG_ARGUMENTS", "log_arguments"),
        ("EGO_TRACE_HOOKS", "trace_hooks"),
        ("EGO_CLAIMS", "claims"),
        ("EGO_RANDOM_SEED", "random_seed"),
    ):
        if env.get(var):
            env_overrides[key] = env[var]
            sources[key] = var
    server_raw = raw.pop("server", {})
    if not isinstance(server_raw, dict):
        raise ConfigError("server: expected a table ([server])")
    server_raw = dict(server_raw)
    if env.get("EGO_HTTP_TOKENS"):
        server_raw["tokens"] = _parse_tokens(env["EGO_HTTP_TOKENS"])
        sources["server.tokens"] = "EGO_HTTP_TOKENS"
    for var, key in (("EGO_HTTP_HOST", "host"), ("EGO_HTTP_PORT", "port")):
        if env.get(var):
            server_raw[key] = env[var]
            sources[f"server.{key}"] = var
    if "EGO_PLUGINS" in env:
        selection_raw["enabled"] = _split_list(env["EGO_PLUGINS"]) if env["EGO_PLUGINS"].strip() else None
        sources["plugins.enabled"] = "EGO_PLUGINS"
        # the environment outranks the file: its choice is not cut down by the file's `disabled`
        selection_raw.pop("disabled", None)
    if env.get("EGO_DISABLE_PLUGINS"):
        selection_raw["disabled"] = _split_list(env["EGO_DISABLE_PLUGINS"])
        sources["plugins.disabled"] = "EGO_DISABLE_PLUGINS"

    if data_dir is not None:
        resolved_data_dir: Any = data_dir
    elif env.get("EGO_DATA_DIR"):
        resolved_data_dir = env["EGO_DATA_DIR"]
        sources["data_dir"] = "EGO_DATA_DIR"
    else:
        resolved_data_dir = raw.get("data_dir", str(DEFAULT_DATA_DIR))
    raw.pop("data_dir", None)

    document = {**raw, **env_overrides}
    document["data_dir"] = resolved_data_dir
    document["server"] = server_raw
    document["plugins"] = selection_raw
    document.setdefault("timezone", _system_timezone())
    settings = structure(document, Settings, "", sources)
    settings = attrs.evolve(settings, config_path=path if path.exists() else None, plugin_tables=tables)
    validate(settings, sources)
    return settings


def validate(settings: Settings, sources: Mapping[str, str] | None = None) -> None:
    """Checks beyond types. ``sources`` (dotted key -> variable) names the variable a bad value came from."""
    sources = sources or {}
    if not _valid_zone(settings.timezone):
        raise ConfigError(
            f"{_name('timezone', sources)}: unknown time zone {settings.timezone!r}; "
            "expected an IANA name such as Europe/Berlin or Asia/Tokyo"
        )
    if settings.language not in LANGUAGES:
        raise ConfigError(f"{_name('language', sources)}: expected one of {', '.join(LANGUAGES)}")
    if settings.log_level.upper() not in LOG_LEVELS:
        raise ConfigError(f"{_name('log_level', sources)}: expected one of {', '.join(LOG_LEVELS)}")
    for agent, digest in settings.server.tokens.items():
        if not valid_agent_id(agent):
            raise ConfigError(
                f"{_name(f'server.tokens.{agent}', sources)}: the agent id names the agent's own space "
                "(<data dir>/agents/<id>); expected 1-64 letters, digits, '.', '_' or '-'"
            )
        if not digest.startswith("sha256:") or len(digest) != len("sha256:") + 64:
            raise ConfigError(
                f"{_name(f'server.tokens.{agent}', sources)}: expected sha256:<64 hex digits> (the hash of the "
                f"token, never the token itself); create one with `ego token new {agent}`"
            )
    if not 0 < settings.server.port < 65536:
        raise ConfigError(f"{_name('server.port', sources)}: expected a TCP port number from 1 to 65535")
    if not settings.server.path.startswith("/"):
        raise ConfigError("server.path: expected a URL path starting with /")


def structure_plugin_config(
    plugin_id: str,
    cls: type[T],
    table: Mapping[str, Any],
    env_keys: Mapping[str, str],
    env: Mapping[str, str] | None = None,
) -> T:
    """Structure ``[plugins.<id>]`` (with the plugin's declared ``EGO_*`` overrides) into ``cls``."""
    env = os.environ if env is None else env
    where = f"plugins.{plugin_id}"
    merged = dict(table)
    sources: dict[str, str] = {}
    for var, key in env_keys.items():
        if env.get(var):
            merged[key] = env[var]
            sources[f"{where}.{key}"] = var
    return structure(merged, cls, where, sources)
