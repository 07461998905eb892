"""Replay cost per ply against python-chess's own per-ply cost, and per-event latency.

    python bench/bench_replay.py [--games N] [--repeat R]

Both are measured in the same run on the same games, interleaved, in CPU time (not
wall time), so the ratio holds on a noisy, shared machine where absolute figures do not. The baseline is what any move-by-move
program pays: generate the legal moves, write the SAN, push the move.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import chess

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from board_ctl.core.profiles import PROFILES  # noqa: E402
from board_ctl.core.referee import Referee  # noqa: E402
from board_ctl.sensorlog import read_sensor_log  # noqa: E402
from board_ctl.simulate import render_game  # noqa: E402
from corpus import corpus  # noqa: E402


def python_chess_per_ply(games: list[list[chess.Move]], fens: list[str]) -> float:
    plies, start = 0, time.process_time()
    for moves, fen in zip(games, fens):
        board = chess.Board(fen)
        for move in moves:
            list(board.legal_moves)
            board.san(move)
            board.push(move)
            plies += 1
    return (time.process_time() - start) / plies


def replay_per_ply(logs: list, plies: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    start = time.process_time()
    for log in logs:
        referee = Referee(log.start.fen, PROFILES["fide"])
        for event in log.events:
            before = time.perf_counter()
            referee.feed(event)
            latencies.append(time.perf_counter() - before)
        referee.finish()
    return (time.process_time() - start) / plies, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60, help="longest N games of the corpus")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    games = sorted(corpus(), key=lambda g: -len(list(g.mainline_moves())))[: args.games]
    rendered = [render_game(g, seed=i) for i, g in enumerate(games)]
    logs = [read_sensor_log(r.jsonl().splitlines()) for r in rendered]
    moves = [r.moves for r in rendered]
    fens = [r.start_fen for r in rendered]
    plies = sum(len(m) for m in moves)
    events = sum(len(log.events) for log in logs)

    # Interleaved, best of each: both sides see the same moments of a shared machine.
    baselines, runs = [], []
    for _ in range(args.repeat):
        baselines.append(python_chess_per_ply(moves, fens))
        runs.append(replay_per_ply(logs, plies))
    baseline = min(baselines)
    ours, latencies = min(runs, key=lambda run: run[0])
    latencies.sort()
    p50 = statistics.median(latencies)
    p99 = latencies[int(len(latencies) * 0.99)]
    print(f"games {len(games)}, plies {plies}, raw events {events} "
          f"({events / plies:.1f} per ply)")
    print(f"python-chess per ply (legal moves + SAN + push): {baseline * 1e6:8.1f} us")
    print(f"board_ctl replay per ply (all events):          {ours * 1e6:8.1f} us")
    print(f"ratio replay / python-chess:                     {ours / baseline:8.2f}x")
    print(f"per-event latency p50 {p50 * 1e6:.1f} us, p99 {p99 * 1e6:.1f} us, "
          f"max {latencies[-1] * 1e6:.1f} us")


if __name__ == "__main__":
    main()
