"""Debian's Chromium driven by Playwright (its own browser download cannot work here):
the browser fixture of the station's page tests, and their kept screenshots."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import missing_tool

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@pytest.fixture
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        missing_tool("chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing_tool("Playwright's Python package is not installed (pip install playwright)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def keep_screenshot(page: Any, path: Path) -> None:
    """The page as it is, kept beside the test, and in $BOARD_CTL_ARTIFACTS if set."""
    page.screenshot(path=str(path), full_page=True)
    artifacts = os.environ.get("BOARD_CTL_ARTIFACTS")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(artifacts) / path.name)
