"""Benchmark: the LEDs' latency while the engine searches (issue 10 §1).

    nice python bench/bench_opponent.py [--samples N] [--rounds R]

`board-ctl run --opponent stockfish` runs as its own process on a real pty; this script is
the board at the other end (bench_service.BenchBoard: the firmware's codec). White (the
board) plays 1. e4 (no clock: the move is complete once released); Black is Stockfish.
Then the board reports a piece knocked off and put back again and again (a full scan each
time, as after a reconnection, so no debounce stands between the event and the frame)
and times each scan, from the write of its SNAPSHOT to the read of the LEDS frame that shows the square
(blinking green) or no longer shows it:

- searching: Stockfish is given a minute a move, so every sample falls in its search
  (its process busy on a core of its own, its driver thread in the service's);
- idle: the same with Stockfish given 50 ms: it has announced its move and sits idle.

Rounds alternate (searching, idle, searching, ...) so that the machine's load touches
both alike; the figure to quote is the ratio of their percentiles.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import chess

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_service import SPEED, BenchBoard, percentile, service_env  # noqa: E402

from firmware_bridge import protocol as P  # noqa: E402

import subprocess  # noqa: E402

KNOCKED = chess.H2  # the piece knocked off and put back


def start(link: Path, workdir: Path, movetime: float) -> subprocess.Popen[bytes]:
    config = workdir / "bench.toml"
    config.write_text("[serial]\nconnect_timeout = 10.0\n", encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "board_ctl.cli", "run", "--config", str(config), "--port",
         str(link), "--view", "none", "--opponent", "stockfish", "--engine-side", "black",
         # (game seconds: the bench board says it plays SPEED times faster than the game,
         # and the engine gets the game's times divided by that, so `movetime` is real s)
         "--movetime", str(movetime * SPEED), "--data-dir", str(workdir / "data"),
         "--pgn", str(workdir / "bench.pgn")],
        cwd=workdir, env=service_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)


def remote_field(msg: P.Message) -> int:
    return P.unpack_remote(msg.status)


def engine_cpu(service_pid: int) -> float:
    """CPU seconds of the service's child processes (Stockfish)."""
    total = 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == service_pid:  # ppid
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def own_cpu(pid: int) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def round_of(workdir: Path, movetime: float, samples: int
             ) -> tuple[list[float], float, float]:
    """One service run: 1. e4, then `samples` scans timed; (latencies in ms, engine CPU %,
    the service's own CPU %)."""
    link = workdir / "bench-board"
    board = BenchBoard(link)
    service = start(link, workdir, movetime)
    latencies: list[float] = []
    try:
        board.wait_leds(timeout=30)  # connected: game 1, White to move
        board.square(chess.E2, False, 700)
        board.square(chess.E4, True, 400)  # (no clock: complete once released, 1 s)
        want = P.REMOTE_THINKING if movetime > 1 else P.REMOTE_SHOWN
        deadline = time.monotonic() + 30
        while True:  # the engine is searching, or has shown its move
            _, msg = board.wait_leds(timeout=max(deadline - time.monotonic(), 0.1))
            if remote_field(msg) == want:
                break
        time.sleep(0.3)
        cpu0, t0 = engine_cpu(service.pid), time.monotonic()
        own0 = own_cpu(service.pid)
        for i in range(samples):
            off = i % 2 == 0
            board.advance(40)
            occupied = board.occupied & ~chess.BB_SQUARES[KNOCKED] if off else board.occupied
            sent = time.perf_counter()
            board.send(P.SNAPSHOT, occupied, board.ms, P.HEARTBEAT)
            while True:
                got, msg = board.wait_leds(timeout=5)
                lit = msg.cells[KNOCKED] & 0x0F != 0
                if lit == off:
                    break
            latencies.append((got - sent) * 1000)
            time.sleep(0.01)
        took = time.monotonic() - t0
        busy = (engine_cpu(service.pid) - cpu0) / took * 100
        own = (own_cpu(service.pid) - own0) / took * 100
    finally:
        service.terminate()
        _, err = service.communicate(timeout=30)
        if service.returncode not in (0, -15):
            print(err.decode(errors="replace"), file=sys.stderr)
        os.close(board.master)
        os.close(board.slave)
        link.unlink(missing_ok=True)
    return latencies, busy, own


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200, help="scans timed per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each kind")
    args = parser.parse_args()
    results: dict[str, list[float]] = {"searching": [], "idle": []}
    cpu: dict[str, list[float]] = {"searching": [], "idle": []}
    own: dict[str, list[float]] = {"searching": [], "idle": []}
    with tempfile.TemporaryDirectory(prefix="bench-opponent-") as tmp:
        for round_ in range(args.rounds):
            for kind, movetime in (("searching", 60.0), ("idle", 0.05)):
                workdir = Path(tmp) / f"{kind}-{round_}"
                workdir.mkdir()
                latencies, busy, mine = round_of(workdir, movetime, args.samples)
                results[kind] += latencies
                cpu[kind].append(busy)
                own[kind].append(mine)
    print(f"event -> LED frame through the pty, {args.rounds} rounds x {args.samples} scans "
          "each, alternating:")
    for kind in ("searching", "idle"):
        values = results[kind]
        print(f"  engine {kind:9}  p50 {percentile(values, 50):6.2f} ms  p90 "
              f"{percentile(values, 90):6.2f} ms  p99 {percentile(values, 99):6.2f} ms  "
              f"max {max(values):6.2f} ms   (CPU: Stockfish "
              f"{sum(cpu[kind]) / len(cpu[kind]):.0f} %, the service "
              f"{sum(own[kind]) / len(own[kind]):.0f} % of a core)")
    for p in (50, 99):
        ratio = percentile(results["searching"], p) / percentile(results["idle"], p)
        print(f"  p{p} searching / idle: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
