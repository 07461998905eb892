"""bench/bench_events.py splits a replay's time by event: every event fed is counted once,
and the events that complete moves are the moves of the games."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from servicekit import ROOT, child_env


@pytest.mark.slow
def test_every_event_is_counted_and_every_move_completed_once() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_events.py"), "--games", "2",
         "--rounds", "1"], env=child_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    plies = int(re.search(r"plies (\d+)", result.stdout)[1])  # type: ignore[index]
    modes = result.stdout.split("\n\n")[1:]
    assert [m.split(":")[0] for m in modes] == ["with clock presses", "without a clock"]
    for mode in modes:
        rows = re.findall(r"^  (\S+(?: \+\w+)*) +(\d+) events .* ([\d.]+) us a ply", mode, re.M)
        assert rows, mode
        moves = sum(int(n) for kind, n, _ in rows if kind.endswith("+move"))
        # (a game may end on a move no event completes: a mate shown, its hold run out)
        assert plies - 2 <= moves <= plies, mode
        header = re.search(r": ([\d.]+) us per ply, (\d+) events", mode)
        assert header is not None, mode
        assert sum(int(n) for _, n, _ in rows) == int(header[2])  # each counted once
        total = float(header[1])
        assert abs(sum(float(us) for _, _, us in rows) - total) < 0.1 * len(rows), mode
    assert "ClockPressed +settled +move" in modes[0]
    assert "ClockPressed" not in modes[1]
