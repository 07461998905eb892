"""Shared test set-up."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def missing_tool(message: str) -> None:
    """Skip a check whose external tool is absent on a developer's machine; in CI, where
    .ci/run installs every tool, a missing one is a failure, never a silent skip."""
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI must have it: see .ci/run)")
    pytest.skip(message)


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`board-ctl run` archives every game in its data directory (and resumes an unfinished
    one): each test gets its own, never the user's (child processes inherit it)."""
    monkeypatch.setenv("BOARD_CTL_DATA", str(tmp_path / "data"))
