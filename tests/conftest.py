"""Shared test set-up."""

from __future__ import annotations

import os

import pytest


def missing_tool(message: str) -> None:
    """Skip a check whose external tool is absent on a developer's machine; in CI, where
    .ci/run installs every tool, a missing one is a failure, never a silent skip."""
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI must have it: see .ci/run)")
    pytest.skip(message)
