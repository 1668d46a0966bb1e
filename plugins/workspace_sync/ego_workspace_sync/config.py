"""Configuration of the workspace sync plugin: the ``[plugins.workspace_sync]`` table and ``EGO_WORKSPACE_DIR``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Final

import attrs


def _check_workspace_dir(_instance: object, _attribute: attrs.Attribute[Path | None], value: Path | None) -> None:
    if value is not None and not value.is_absolute():
        raise ValueError(
            "workspace_dir: expected an absolute path (~ and $VARS are expanded), e.g. ~/openclaw/workspace"
        )


@attrs.frozen
class WorkspaceSyncConfig:
    """``[plugins.workspace_sync]``.

    ``workspace_dir``: the OpenClaw workspace to mirror memories into (``~`` and ``$VARS`` expanded). Unset
    (the default) leaves the plugin idle: it writes nothing. Environment: ``EGO_WORKSPACE_DIR``.
    """

    workspace_dir: Path | None = attrs.field(default=None, validator=_check_workspace_dir)


CONFIG_ENV: Final[Mapping[str, str]] = MappingProxyType({"EGO_WORKSPACE_DIR": "workspace_dir"})
"""Environment variable -> config key; the environment wins over the config file."""
