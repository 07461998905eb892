"""bench/bench_work.py counts what a replay executes, so its figures must not depend on
the process: two runs with different hash seeds print the very same counts."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from servicekit import ROOT, child_env


def counts(seed: str) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_work.py"), "--games", "2", "--every", "1"],
        env=child_env(PYTHONHASHSEED=seed), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.slow
def test_the_counts_are_the_same_in_every_process() -> None:
    first, second = counts("1"), counts("2")
    assert first == second
    for name in ("calls", "lines"):
        row = re.search(rf"{name} +floor +(\d+) +clock +(\d+) \(([\d.]+)x\) +no_clock +(\d+)", first)
        assert row is not None, first
        floor, clock, ratio, no_clock = int(row[1]), int(row[2]), float(row[3]), int(row[4])
        # (each mode did its work; the referee now makes fewer calls a ply than the floor,
        # which generates every legal move: no order between them is asserted)
        assert floor > 0 and clock > 0 and no_clock > 0
        assert abs(ratio - clock / floor) < 0.01
