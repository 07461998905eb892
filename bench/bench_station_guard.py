"""What one hostile board costs the arbiter station (issue 17 §1.4, §1.5): the station's
model (board_ctl.station.model.Hall, what its loop runs for every message) fed

- the freeze: a 139 KB PGN of 20,000 plies, then 60 states with "ply": 99999 and 60 with
  the largest ply accepted; the time the station's loop spends on them, which is the
  time every page waits;
- the flood: 30,000 states from one board, each a new game id; the memory the model
  keeps (tracemalloc) and the process's resident size before and after.

Run it on this checkout and on another (the code before a change) to compare:

    nice python3 bench/bench_station_guard.py [--code DIR] [--states 30000]
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
    parser.add_argument("--states", type=int, default=30_000)
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

    moves = "Nf3 Nf6 Ng1 Ng8 " * 5000
    pgn = '[Event "?"]\n[Result "*"]\n\n' + " ".join(
        f"{n // 2 + 1}. {san}" if n % 2 == 0 else san for n, san in enumerate(moves.split())) \
        + " *\n"
    started = time.perf_counter()
    hall.apply("board-ctl/b1/pgn", pgn.encode(), now)
    pgn_s = time.perf_counter() - started
    times = []
    for n, ply in enumerate([99999] * 60 + [1200] * 60):
        payload = json.dumps({**state, "ply": ply, "time": state["time"] + n + 1}).encode()
        started = time.perf_counter()
        hall.apply("board-ctl/b1/state", payload, now + n)
        times.append(time.perf_counter() - started)
    print(f"freeze: a {len(pgn) / 1000:.0f} KB PGN of 20,000 plies took {pgn_s:.3f} s; "
          f"then 120 states {sum(times):.3f} s on the loop (slowest {max(times):.3f} s)")

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
          f"kept, {kept / 1e6:.1f} MB traced; resident {before_rss:.0f} -> {rss_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
