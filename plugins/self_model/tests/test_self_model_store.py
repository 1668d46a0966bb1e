"""The state database: a damaged file or one from a newer version stops the plugin (the file is kept), and the
rest of ego keeps serving."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from ego_core import PluginHost, Settings
from ego_self_model import DB_NAME


def test_a_damaged_database_is_kept_and_the_plugin_is_marked_failed(
    self_host: Callable[..., PluginHost], ego_settings: Settings
) -> None:
    folder = ego_settings.data_dir / "self_model"
    folder.mkdir(parents=True)
    damaged = b"this is not a database, but it is somebody's file" * 100
    (folder / DB_NAME).write_bytes(damaged)
    host = self_host()
    host.start()
    assert not host.is_active("self_model")
    (failure,) = [f for f in host.failures if f.plugin == "self_model"]
    assert failure.stage == "startup"
    assert DB_NAME in failure.reason
    assert (folder / DB_NAME).read_bytes() == damaged
    assert host.tool_served("wake_up")
    assert not host.tool_served("update_self")


def test_a_database_from_a_newer_version_is_refused(self_host: Callable[..., PluginHost], ego_settings: Any) -> None:
    host = self_host()
    host.start()
    host.stop()
    path = ego_settings.data_dir / "self_model" / DB_NAME
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    db.close()
    again = self_host()
    again.start()
    assert not again.is_active("self_model")
    (failure,) = [f for f in again.failures if f.plugin == "self_model"]
    assert "newer ego-self-model" in failure.reason
    assert "schema version 99" in failure.reason
