"""The Chromium that drives the dashboard's browser tests, benchmark and screenshots.

Debian's Chromium when it is installed (``apt-get install chromium``); otherwise the Chromium that Playwright
downloads (``python -m playwright install chromium``) where the network allows it. Nothing is downloaded here.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

CHROMIUM_ENV = "EGO_CHROMIUM"
SYSTEM_CHROMIUM = ("chromium", "chromium-browser")
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
MISSING = (
    "no Chromium for the browser tests: install Debian's (`apt-get install chromium`) or Playwright's "
    "(`python -m playwright install chromium`), or set EGO_CHROMIUM to a Chromium executable"
)


class ChromiumMissingError(RuntimeError):
    """Neither a named, a system nor a Playwright Chromium is installed."""


def find_chromium(playwright: Playwright) -> Path | None:
    """``$EGO_CHROMIUM``, else the system's Chromium on PATH, else Playwright's own browser if downloaded."""
    named = os.environ.get(CHROMIUM_ENV)
    if named:
        return Path(named) if Path(named).is_file() else None
    for name in SYSTEM_CHROMIUM:
        found = shutil.which(name)
        if found:
            return Path(found)
    bundled = Path(playwright.chromium.executable_path)
    return bundled if bundled.is_file() else None


def launch_chromium(playwright: Playwright) -> Browser:
    """A headless Chromium, or :class:`ChromiumMissingError` whose message names the command that installs one."""
    executable = find_chromium(playwright)
    if executable is None:
        raise ChromiumMissingError(MISSING)
    return playwright.chromium.launch(executable_path=str(executable), args=BROWSER_ARGS)
