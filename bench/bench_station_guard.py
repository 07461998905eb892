"""What one hostile board costs the arbiter station (issue 17 §1.4, §1.5): the station's
model (board_ctl.station.model.Hall, what its loop runs for every message) fed

- the baseline: ordinary states of a real game (the time the loop spends on one);
- the freeze: a 139 KB PGN of 20,000 plies, then states with "ply": 99999 and with the
  largest ply accepted; the time the station's loop spends on each, which is the time
  every page waits, as a ratio to the baseline;
- the flood: states from one board, each a new game id; the games and the memory the
  model keeps (tracemalloc), per state sent.

The defaults take a few seconds; the sizes the issue reported (60 + 60 freezing states,
a flood of 30,000) are `--freeze-states 60 --states 30000` (minutes on the code before).
Run it on this checkout and on another (the code before a change) to compare:

    nice python3 bench/bench_station_guard.py [--code DIR] [--freeze-states 5] [--states 2000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose board_ctl is measured (default: this one)")
    parser.add_argument("--freeze-states", type=int, default=5,
                        help="states sent after the PGN, of each kind (default: 5)")
    parser.add_argument("--states", type=int, default=2_000,
                        help="states of the flood (default: 2,000)")
    args = parser.parse_args()
    sys.path[:0] = [str(args.code.resolve()), str(ROOT / "tests")]
    from board_ctl.station.model import Hall
    from stationkit import contract_board

    import board_ctl
    print(f"code: {Path(board_ctl.__file__).parent.parent}")
    board = contract_board("b1")
    hall = Hall()
    now = 1_796_065_300_000
    for message in board.start() + board.play():
        hall.apply(message.topic, message.payload, now)
    state = json.loads(board.state().payload)
    baseline = []
    for n in range(200):  # ordinary states: the game's own, its clock running
        payload = json.dumps({**state, "time": state["time"] + n + 1}).encode()
        started = time.perf_counter()
        hall.apply("board-ctl/b1/state", payload, now + n)
        baseline.append(time.perf_counter() - started)
    ordinary = sorted(baseline)[len(baseline) // 2]
    print(f"baseline: an ordinary state takes {ordinary * 1e3:.3f} ms on the loop (median)")

    moves = "Nf3 Nf6 Ng1 Ng8 " * 5000
    pgn = '[Event "?"]\n[Result "*"]\n\n' + " ".join(
        f"{n // 2 + 1}. {san}" if n % 2 == 0 else san for n, san in enumerate(moves.split())) \
        + " *\n"
    started = time.perf_counter()
    hall.apply("board-ctl/b1/pgn", pgn.encode(), now)
    pgn_s = time.perf_counter() - started
    times = []
    plies = [99999] * args.freeze_states + [1200] * args.freeze_states
    for n, ply in enumerate(plies):
        payload = json.dumps({**state, "ply": ply, "time": state["time"] + 1000 + n}).encode()
        started = time.perf_counter()
        hall.apply("board-ctl/b1/state", payload, now + n)
        times.append(time.perf_counter() - started)
    median = sorted(times)[len(times) // 2]
    print(f"freeze: a {len(pgn) / 1000:.0f} KB PGN of 20,000 plies took {pgn_s:.3f} s; "
          f"then {len(plies)} states took {sum(times):.3f} s on the loop: median "
          f"{median * 1e3:.3f} ms ({median / ordinary:.1f} x an ordinary state), slowest "
          f"{max(times) * 1e3:.1f} ms ({max(times) / ordinary:.0f} x)")

    hall = Hall()  # (a fresh one: the flood alone, without the PGN above)
    for message in board.start():
        hall.apply(message.topic, message.payload, now)
    before_rss = rss_mb()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    started = time.perf_counter()
    for n in range(args.states):
        hall.apply("board-ctl/b1/state", json.dumps(
            {**state, "game": f"fake-{n:06d}", "time": state["time"] + 1000 + n}).encode(), now)
    spent = time.perf_counter() - started
    kept = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    games = len(hall.boards["b1"].games)
    print(f"flood: {args.states} states with new game ids in {spent:.1f} s: {games} games "
          f"kept, {kept / 1e6:.2f} MB traced ({kept / args.states:.0f} bytes a state); "
          f"resident {before_rss:.0f} -> {rss_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
