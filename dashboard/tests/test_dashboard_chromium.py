"""Which Chromium drives the browser tests: a named one, the system's, or Playwright's; none is one clear line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from ego_dashboard.browser import CHROMIUM_ENV, ChromiumMissingError, find_chromium, launch_chromium


def test_a_named_chromium_that_is_not_there_fails_with_the_commands_that_install_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHROMIUM_ENV, str(tmp_path / "no-such-chromium"))
    with sync_playwright() as playwright, pytest.raises(ChromiumMissingError) as raised:
        launch_chromium(playwright)
    message = str(raised.value)
    assert "apt-get install chromium" in message
    assert "python -m playwright install chromium" in message


def test_without_a_name_the_system_chromium_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CHROMIUM_ENV, raising=False)
    with sync_playwright() as playwright:
        found = find_chromium(playwright)
        system = shutil.which("chromium") or shutil.which("chromium-browser")
        if system is not None:
            assert found == Path(system)
        else:
            bundled = Path(playwright.chromium.executable_path)
            assert found == (bundled if bundled.is_file() else None)
