"""Replay cost per ply against python-chess's own per-ply cost, with and without a clock.

    python bench/bench_replay.py [--games N] [--rounds R] [--compare CHECKOUT]

The corpus's N longest games are rendered as sensor logs twice, with clock presses and
without (then moves are completed by the opponent starting), and replayed through the
referee, all raw events included. Two floors are measured on the same games: what any
move-by-move program pays per ply (generate the legal moves, write the SAN, push the
move), and the same plus `board.outcome()` (the game-end check every referee needs).

The whole replay pipeline is measured too, as `board-ctl replay` runs it in one process:
the log read from its text, the referee, the record, the report's lines and the PGN's
text (and each of those parts alone: the reader, the writers).

Everything is CPU time (process_time, not wall time), measured in rounds in which floors
and replays take turns game by game, so the ratios hold on a loaded, shared machine where
absolute figures do not; min and median over the rounds are printed. With `--compare`, every round also
runs the very same logs through another checkout's board_ctl (e.g. a worktree at main),
in its own process, so before and after come from one run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import chess

if TYPE_CHECKING:
    from board_ctl.sensorlog import SensorLog

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "tests"))


def floor(fen: str, line: list[chess.Move], outcome: bool) -> float:
    """CPU s that any move-by-move program pays for this game (and outcome() too)."""
    start = time.process_time()
    board = chess.Board(fen)
    for move in line:
        list(board.legal_moves)
        board.san(move)
        board.push(move)
        if outcome:
            board.outcome()
    return time.process_time() - start


def replay(log: SensorLog, latencies: list[float] | None = None) -> float:
    """CPU s to replay this log, referee only."""
    from board_ctl.core.profiles import PROFILES
    from board_ctl.core.referee import Referee

    start = time.process_time()
    referee = Referee(log.start.fen, PROFILES["fide"])
    feed = referee.feed
    if latencies is None:
        for event in log.events:
            feed(event)
    else:
        for event in log.events:
            before = time.perf_counter()
            feed(event)
            latencies.append(time.perf_counter() - before)
    referee.finish()
    return time.process_time() - start


PGN_DATE = dt.date(2026, 1, 1)  # (the PGN's Date tag: the same text every run)


def pipeline(text: str, parts: dict[str, float]) -> float:
    """CPU s of the whole replay of a log's text: read, referee and record, report lines,
    PGN text; each part's CPU s added to `parts`."""
    from board_ctl.core.profiles import PROFILES
    from board_ctl.replay import replay_log
    from board_ctl.sensorlog import read_sensor_log

    t0 = time.process_time()
    log = read_sensor_log(io.StringIO(text))
    t1 = time.process_time()
    record = replay_log(log, PROFILES["fide"])
    t2 = time.process_time()
    "\n".join(record.report_lines())
    t3 = time.process_time()
    record.pgn_text(PGN_DATE)
    t4 = time.process_time()
    parts["read"] += t1 - t0
    parts["referee+record"] += t2 - t1
    parts["report"] += t3 - t2
    parts["pgn"] += t4 - t3
    return t4 - t0


def worker(data_path: str) -> None:
    """One round in this process: both floors and both replays, printed as JSON. They
    take turns game by game, so a slower spell of a shared machine falls on all four
    alike and the ratios hold."""
    from board_ctl.sensorlog import read_sensor_log

    import chess.pgn  # noqa: F401  (imported once a process: not a cost of any ply)

    data = json.loads(Path(data_path).read_text())
    games = [(fen, [chess.Move.from_uci(u) for u in ucis]) for fen, ucis in data["games"]]
    clock_logs = [read_sensor_log(text.splitlines()) for text in data["clock"]]
    no_clock_logs = [read_sensor_log(text.splitlines()) for text in data["no_clock"]]
    plies = sum(len(line) for _, line in games)
    cpu = dict.fromkeys(("plain", "outcome", "clock", "no_clock", "pipeline_clock",
                         "pipeline_no_clock"), 0.0)
    parts = {mode: dict.fromkeys(("read", "referee+record", "report", "pgn"), 0.0)
             for mode in ("clock", "no_clock")}
    for (fen, line), clock_log, no_clock_log, clock_text, no_clock_text in zip(
            games, clock_logs, no_clock_logs, data["clock"], data["no_clock"]):
        cpu["plain"] += floor(fen, line, False)
        cpu["outcome"] += floor(fen, line, True)
        cpu["clock"] += replay(clock_log)
        cpu["no_clock"] += replay(no_clock_log)
        cpu["pipeline_clock"] += pipeline(clock_text, parts["clock"])
        cpu["pipeline_no_clock"] += pipeline(no_clock_text, parts["no_clock"])
    latencies: list[float] = []  # (a pass of its own: timing each event costs CPU too)
    for log in clock_logs:
        replay(log, latencies)
    latencies.sort()
    print(json.dumps({**{k: v / plies for k, v in cpu.items()},
                      **{f"{mode}:{part}": v / plies for mode, by in parts.items()
                         for part, v in by.items()},
                      "p50": statistics.median(latencies),
                      "p99": latencies[int(len(latencies) * 0.99)]}))


def render(count: int) -> dict:
    from board_ctl.simulate import RenderStyle, render_game
    from corpus import corpus

    games = sorted(corpus(), key=lambda g: -len(list(g.mainline_moves())))[:count]
    clock = [render_game(g, seed=i) for i, g in enumerate(games)]
    no_clock = [render_game(g, seed=i, style=RenderStyle(use_clock=False))
                for i, g in enumerate(games)]
    return {"games": [(r.start_fen, [m.uci() for m in r.moves]) for r in clock],
            "clock": [r.jsonl() for r in clock], "no_clock": [r.jsonl() for r in no_clock],
            "events": sum(r.jsonl().count("\n") for r in clock)}


def run_round(data_path: str, checkout: Path | None) -> dict:
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)  # its board_ctl, this script's measuring code
    out = subprocess.run([sys.executable, str(HERE), "--worker", data_path], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60, help="longest N games of the corpus")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT",
                        help="also measure another checkout's board_ctl in the same rounds")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return

    data = render(args.games)
    trees: list[tuple[str, Path | None]] = [("this checkout", None)]
    if args.compare:
        trees.append((str(args.compare), args.compare.resolve()))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(data, fh)
    try:
        rounds: dict[str, list[dict]] = {name: [] for name, _ in trees}
        for _ in range(args.rounds):  # interleaved: each tree sees the same moments
            for name, checkout in trees:
                rounds[name].append(run_round(fh.name, checkout))
    finally:
        os.unlink(fh.name)

    plies = sum(len(m) for _, m in data["games"])
    print(f"games {args.games}, plies {plies}, raw events {data['events']} "
          f"({data['events'] / plies:.1f} per ply), {args.rounds} interleaved rounds, CPU time")
    for name, results in rounds.items():
        print(f"\n{name}")
        for key, label in (("plain", "floor: legal moves + SAN + push"),
                           ("outcome", "floor + outcome()"),
                           ("clock", "replay, with clock presses"),
                           ("no_clock", "replay, without a clock"),
                           ("pipeline_clock", "pipeline, with clock presses"),
                           ("pipeline_no_clock", "pipeline, without a clock")):
            if key not in results[0]:
                continue  # (a checkout whose bench measured no pipeline)
            values = [r[key] * 1e6 for r in results]
            print(f"  {label:<36} min {min(values):7.1f} us  median "
                  f"{statistics.median(values):7.1f} us per ply")
        for mode in ("clock", "no_clock"):
            for floor in ("plain", "outcome"):
                ratios = [r[mode] / r[floor] for r in results]
                print(f"  ratio {mode.replace('_', '-'):<8} / {floor:<8}  min {min(ratios):5.2f}x  "
                      f"median {statistics.median(ratios):5.2f}x")
        for mode in ("clock", "no_clock"):
            key = f"pipeline_{mode}"
            ratios = [r[key] / r["outcome"] for r in results]
            print(f"  ratio pipeline {mode.replace('_', '-'):<8} / outcome   min "
                  f"{min(ratios):5.2f}x  median {statistics.median(ratios):5.2f}x  (of which "
                  + ", ".join(f"{part} {statistics.median(r[f'{mode}:{part}'] / r['outcome'] for r in results):.2f}x"
                              for part in ("read", "referee+record", "report", "pgn"))
                  + ")")
        p50 = statistics.median(r["p50"] for r in results)
        p99 = statistics.median(r["p99"] for r in results)
        print(f"  per-event latency (clock) p50 {p50 * 1e6:.1f} us, p99 {p99 * 1e6:.1f} us")


if __name__ == "__main__":
    main()
