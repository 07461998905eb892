"""bench/bench_service.py runs on a data directory of its own: the user's archive (here
with a game in progress, as after a power cut) is neither resumed nor touched, and the
benchmark ends (the old one resumed that game and then waited forever)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from board_ctl.archive import Archive
from servicekit import ROOT, child_env
from test_archive import archive_of


@pytest.mark.slow
def test_the_bench_never_uses_the_users_archive(tmp_path: Path) -> None:
    users = tmp_path / "home" / ".local" / "share" / "board-ctl"
    archive_of(users, 2)  # the second game is in progress
    before = {p: p.read_bytes() for p in users.rglob("*") if p.is_file()}
    env = child_env(HOME=str(tmp_path / "home"), BOARD_CTL_DATA=str(users))
    env.pop("XDG_DATA_HOME", None)
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_service.py"), "--games", "1",
         "--idle", "0.5", "--data-parent", str(tmp_path / "bench")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    assert "p99" in result.stdout and "RSS" in result.stdout
    # the disk's own cost and a game's start, measured in the same run as the service
    assert "the disk: append+fdatasync" in result.stdout, result.stdout
    assert "a game's start" in result.stdout and "first press of a game" in result.stdout
    assert {p: p.read_bytes() for p in users.rglob("*") if p.is_file()} == before
    assert Archive(users).unfinished() is not None  # still the user's, to resume


def test_the_bench_measures_on_this_checkouts_disk_by_default() -> None:
    """Not the system's temporary directory (often a tmpfs, where an fsync costs nothing)."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_service.py"), "--help"],
        env=child_env(TMPDIR="/dev/shm"), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    help_text = " ".join(result.stdout.split())
    assert f"default: this checkout, {ROOT}" in help_text, help_text
    assert "/dev/shm" not in help_text
