"""What a claim of perpetual check costs (the `classic` profile): every position of the
corpus where a repetition with every move of one side a check first occurs, judged by
`perpetual_check`, against a baseline measured in the same run: the Opera game's sensor
log replayed through the referee (a whole game, 33 plies with every sensor event).

    nice python bench/bench_perpetual.py [--repeat N]

Prints the verdicts (upheld, refused, left to the arbiter) and the cost of a claim as a
ratio to the baseline: the median and the worst position. The referee is synchronous: a
claim holds up the board for that long.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import chess  # noqa: E402

from board_ctl.core.profiles import PROFILES  # noqa: E402
from board_ctl.core.rules.perpetual import checking_side, perpetual_check  # noqa: E402
from board_ctl.replay import replay_log  # noqa: E402
from board_ctl.sensorlog import read_sensor_log  # noqa: E402
from board_ctl.simulate import render_game  # noqa: E402
from corpus import corpus  # noqa: E402


def claim_positions() -> list[chess.Board]:
    found = []
    for game in corpus():
        board = game.board()
        for move in game.mainline_moves():
            board.push(move)
            if board.is_repetition(2) and checking_side(board):
                found.append(board.copy())
                break
    return found


def best_of(repeat: int, work) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="best of N timings (3)")
    args = parser.parse_args()
    opera = next(g for g in corpus() if "Morphy" in g.headers.get("White", ""))
    text = render_game(opera, seed=1).jsonl()

    def baseline() -> None:
        replay_log(read_sensor_log(io.StringIO(text)), PROFILES["classic"])

    base = best_of(args.repeat, baseline)
    positions = claim_positions()
    verdicts = {True: 0, False: 0, None: 0}
    costs = []
    for board in positions:
        verdicts[perpetual_check(board)] += 1
        costs.append(best_of(args.repeat, lambda b=board: perpetual_check(b)))
    print(f"{len(positions)} claim positions: {verdicts[True]} upheld, {verdicts[False]} "
          f"refused, {verdicts[None]} left to the arbiter")
    print(f"a claim costs, as a share of replaying the Opera game: median "
          f"{statistics.median(costs) / base:.2f}x, worst {max(costs) / base:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
