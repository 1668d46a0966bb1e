"""Configuration of the interoception plugin: the ``[plugins.interoception]`` table and its ``EGO_*`` overrides."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import attrs


def _check_cache_seconds(_instance: object, _attribute: attrs.Attribute[float], value: float) -> None:
    if not (math.isfinite(value) and value >= 0):
        raise ValueError("cache_seconds: expected a number of seconds >= 0 (0 reads the system on every call)")


@attrs.frozen
class InteroceptionConfig:
    """``[plugins.interoception]``.

    ``cache_seconds``: how long one reading of CPU load and memory pressure is reused (host clock seconds;
    default 5; 0 reads the system on every call). Environment: ``EGO_INTEROCEPTION_CACHE_SECONDS``.
    """

    cache_seconds: float = attrs.field(default=5.0, validator=_check_cache_seconds)


CONFIG_ENV: Final[Mapping[str, str]] = MappingProxyType({"EGO_INTEROCEPTION_CACHE_SECONDS": "cache_seconds"})
"""Environment variable -> config key; the environment wins over the config file."""
