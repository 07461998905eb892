"""What a replay executes per ply, against the floor of bench_replay.py: counts, not times.

    python bench/bench_work.py [--games N] [--valgrind]

The same logs as bench_replay.py (the corpus's longest games, every Nth of them, with a
clock and without). Python lines and calls (function calls and generator resumptions)
are counted with sys.settrace; with --valgrind, also the machine instructions, L1 data
cache misses and branch mispredictions, counted by valgrind's cachegrind (each mode is
run twice, with and without the work, and the difference taken, so start-up and reading
the logs do not count). Counts do not move with a shared machine's load: they tell
whether a time ratio comes from running more code or from each line costing more.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import chess

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_replay import floor, render, replay  # noqa: E402

MODES = ("floor", "clock", "no_clock")
CACHEGRIND = {"I   refs:": "instructions", "D1  misses:": "L1 data misses",
              "Mispredicts:": "branch mispredictions"}


def prepared(data: dict[str, Any], mode: str) -> list[Any]:
    """What `run` works on, read beforehand (reading the logs, and importing the
    referee, is not the work)."""
    from board_ctl.sensorlog import read_sensor_log

    for module in ("board_ctl.core.profiles", "board_ctl.core.referee"):
        importlib.import_module(module)  # (replay imports them inside: not to be counted)

    if mode == "floor":
        return [(fen, [chess.Move.from_uci(u) for u in ucis]) for fen, ucis in data["games"]]
    return [read_sensor_log(text.splitlines()) for text in data[mode]]


def run(work: list[Any], mode: str) -> None:
    """The work of one mode over all the games."""
    if mode == "floor":
        for fen, line in work:
            floor(fen, line, True)
    else:
        for log in work:
            replay(log)


def traced(data: dict[str, Any], mode: str) -> Counter[str]:
    work = prepared(data, mode)
    counts: Counter[str] = Counter()

    def local(frame: FrameType, event: str, arg: object) -> Any:
        if event == "line":
            counts["lines"] += 1
        return local

    def on_call(frame: FrameType, event: str, arg: object) -> Any:
        counts["calls"] += 1
        return local

    sys.settrace(on_call)
    try:
        run(work, mode)
    finally:
        sys.settrace(None)
    return counts


def cachegrind(data_path: str, mode: str) -> dict[str, int]:
    """The counts of `mode`'s work: a run with it less a run without."""
    def measure(work: bool) -> dict[str, int]:
        args = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes",
                "--cachegrind-out-file=/dev/null", sys.executable, __file__,
                "--worker", data_path, mode] + (["--work"] if work else [])
        out = subprocess.run(args, capture_output=True, text=True, check=True).stderr
        found = {}
        for line in out.splitlines():
            text = line.split("==", 2)[-1].strip()
            for prefix, name in CACHEGRIND.items():
                if text.startswith(prefix):
                    found[name] = int(text[len(prefix):].split()[0].replace(",", ""))
        return found

    with_work, without = measure(True), measure(False)
    return {name: with_work[name] - without[name] for name in CACHEGRIND.values()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60, help="longest N games of the corpus")
    parser.add_argument("--every", type=int, default=8, help="take every Nth of them")
    parser.add_argument("--valgrind", action="store_true", help="also count with cachegrind")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--work", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        data_path, mode = args.worker
        work = prepared(json.loads(Path(data_path).read_text()), mode)
        if args.work:
            run(work, mode)
        return

    full = render(args.games)
    data = {key: full[key][::args.every] for key in ("games", "clock", "no_clock")}
    plies = sum(len(ucis) for _, ucis in data["games"])
    print(f"{len(data['games'])} games, {plies} plies; per ply, and as a ratio to the floor")
    counts = {mode: traced(data, mode) for mode in MODES}
    if args.valgrind:
        if shutil.which("valgrind") is None:
            sys.exit("--valgrind: valgrind is not installed")
        with tempfile.NamedTemporaryFile("w", suffix=".json") as fh:
            json.dump(data, fh)
            fh.flush()
            for mode in MODES:
                counts[mode].update(cachegrind(fh.name, mode))
    for name in counts["floor"]:
        base = counts["floor"][name] / plies
        row = "  ".join(f"{mode} {counts[mode][name] / plies:10.0f} "
                        f"({counts[mode][name] / counts['floor'][name]:.2f}x)"
                        for mode in MODES[1:])
        print(f"  {name:<22} floor {base:10.0f}  {row}")


if __name__ == "__main__":
    main()
