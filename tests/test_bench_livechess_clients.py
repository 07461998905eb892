"""bench/bench_livechess_clients.py runs, small, both ways, and says what it measured:
the caps hold in its figures (the subscriptions accepted, the connections served)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from board_ctl.livechess.endpoint import MAX_CONNECTIONS, MAX_SUBSCRIPTIONS
from servicekit import ROOT, child_env

BENCH = ROOT / "bench" / "bench_livechess_clients.py"


def bench(tmp_path: Path, *args: str) -> str:
    result = subprocess.run([sys.executable, str(BENCH), *args], cwd=tmp_path,
                            env=child_env(), capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.slow
def test_the_subscriptions_bench(tmp_path: Path) -> None:
    out = bench(tmp_path, "subscriptions", "--subscriptions", "40", "--moves", "3")
    accepted = [int(n) for n in re.findall(r"accepted\s+(\d+)", out)]
    assert accepted == [1, MAX_SUBSCRIPTIONS], out
    assert re.search(r"CPU per move, 40 asked / one: [\d.]+x", out), out


@pytest.mark.slow
def test_the_churn_bench(tmp_path: Path) -> None:
    out = bench(tmp_path, "churn", "--rounds", "2", "--connections", str(MAX_CONNECTIONS + 4),
                "--trim")
    rounds = re.findall(r"round \d+\s+served\s+(\d+) refused\s+(\d+)\s+RSS\s+[\d.]+ MB", out)
    assert rounds == [(str(MAX_CONNECTIONS), "4")] * 2, out
    assert "after malloc_trim RSS" in out
