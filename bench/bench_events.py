"""Where a replay's time goes: each fed event timed, grouped by its kind and what it set
off (a debounced change settling, a move completed), per ply, with and without a clock.

    python bench/bench_events.py [--games N] [--rounds R]

The same games as `bench_replay.py` (the corpus's N longest, rendered both ways). Timing
each event costs time too, so the totals run above bench_replay's; the split is what
this is for: e.g. which event completes a move, and what that costs in either mode.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[1] / "tests"))


def one_round(logs: list) -> tuple[Counter[str], Counter[str]]:
    """(ns, count) by category, over one replay of every log."""
    from board_ctl.core.profiles import PROFILES
    from board_ctl.core.referee import Referee

    cost: Counter[str] = Counter()
    count: Counter[str] = Counter()
    clock = time.perf_counter_ns
    for log in logs:
        referee = Referee(log.start.fen, PROFILES["fide"])
        for event in log.events:
            firings, plies = referee.firings, len(referee.board.move_stack)
            start = clock()
            referee.feed(event)
            spent = clock() - start
            kind = type(event).__name__
            if referee.firings != firings:
                kind += " +settled"
            if len(referee.board.move_stack) != plies:
                kind += " +move"
            cost[kind] += spent
            count[kind] += 1
        referee.finish()
    return cost, count


def main() -> None:
    from bench_replay import render

    from board_ctl.sensorlog import read_sensor_log

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60, help="longest N games of the corpus")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = render(args.games)
    plies = sum(len(moves) for _, moves in data["games"])
    print(f"games {args.games}, plies {plies}, {args.rounds} rounds; "
          "us per ply by event (median over rounds)")
    for mode, label in (("clock", "with clock presses"), ("no_clock", "without a clock")):
        logs = [read_sensor_log(text.splitlines()) for text in data[mode]]
        rounds = [one_round(logs) for _ in range(args.rounds)]
        kinds = sorted(set().union(*(cost for cost, _ in rounds)),
                       key=lambda k: -statistics.median(c[k] for c, _ in rounds))
        total = statistics.median(sum(c.values()) for c, _ in rounds) / plies / 1000
        events = sum(len(log.events) for log in logs)
        print(f"\n{label}: {total:.1f} us per ply, {events} events")
        for kind in kinds:
            per_ply = statistics.median(c[kind] for c, _ in rounds) / plies / 1000
            n = rounds[0][1][kind]
            each = statistics.median(c[kind] for c, _ in rounds) / n / 1000
            print(f"  {kind:<30} {n:7d} events ({n / plies:4.2f} a ply) {per_ply:6.1f} us a "
                  f"ply {each:6.1f} us each")


if __name__ == "__main__":
    main()
