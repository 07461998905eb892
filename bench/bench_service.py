"""Benchmark of `board-ctl run`: latency, idle CPU, memory.

    python bench/bench_service.py [--games N] [--idle SECONDS]

1. Latency, sensor event -> LED frame, through a real pty: the service runs as its own
   process (`board-ctl run --port LINK --view none`); this script plays the board on the
   other end of a pty with the firmware's own codec (firmware_bridge.protocol): it
   answers the handshake, then plays real games from tests/data/games (lift, place, clock
   press, stamped with the board's millisecond clock) and times each clock press, from
   the write of its CLOCK frame to the read of the LEDS frame that shows the other side to
   move. After each game a resignation ends it and a snapshot of the start position starts
   the next one, so the service runs game after game as on a real board.
2. Idle CPU: `board-emulator --interactive` connected (heartbeat snapshots every second),
   nobody moving: the service's user+system time from /proc/PID/stat over --idle seconds.
3. Memory: the service's resident set (VmRSS, and its peak VmHWM) from /proc/PID/status.

Targets (issue 3): p99 < 5 ms, idle CPU < 1 % of one core, RSS < 80 MB.
"""

from __future__ import annotations

import argparse
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
import tty
from pathlib import Path

import chess
import chess.pgn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from firmware_bridge import protocol as P  # noqa: E402

GAMES = ROOT / "tests" / "data" / "games" / "classics.pgn"
TICKS = os.sysconf("SC_CLK_TCK")


def service_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def start_service(port: Path, workdir: Path, view: str = "none") -> subprocess.Popen[bytes]:
    config = workdir / "bench.toml"
    config.write_text("[serial]\nconnect_timeout = 10.0\n", encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "board_ctl.cli", "run", "--config", str(config), "--port",
         str(port), "--view", view, "--pgn", str(workdir / "bench.pgn")],
        cwd=workdir, env=service_env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if view == "plain" else subprocess.DEVNULL,
        stderr=subprocess.PIPE)


# ---------------------------------------------------------------- latency


class BenchBoard:
    """The board's side of the link on a pty, speaking the firmware's protocol."""

    def __init__(self, link: Path) -> None:
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.slave = slave
        link.unlink(missing_ok=True)
        os.symlink(os.ttyname(slave), link)
        self.decoder = P.Decoder()
        self.sender = P.Sender()
        self.ms = 0
        self.occupied = chess.Board().occupied

    def send(self, mtype: int, *values: object) -> None:
        os.write(self.master, self.sender.frame(mtype, *values))

    def receive(self, timeout: float) -> list[P.Message]:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return []
        messages = self.decoder.feed(os.read(self.master, 4096))
        for msg in messages:
            if msg.type == P.HELLO:
                self.send(P.HELLO_ACK, "bench 0.1", "bench-board")
                self.send(P.SNAPSHOT, self.occupied, self.ms, P.ON_CONNECT)
            elif msg.type == P.REQUEST_SNAPSHOT:
                self.send(P.SNAPSHOT, self.occupied, self.ms, P.ON_REQUEST)
            elif msg.type == P.PING:
                self.send(P.PONG, msg.token)
        return messages

    def wait_leds(self, timeout: float = 5.0) -> tuple[float, P.Message]:
        deadline = time.perf_counter() + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("no LED frame from the service")
            for msg in self.receive(left):
                if msg.type == P.LEDS:
                    return time.perf_counter(), msg

    def square(self, square: int, occupied: bool, gap_ms: int) -> None:
        self.ms += gap_ms
        bit = chess.BB_SQUARES[square]
        self.occupied = self.occupied | bit if occupied else self.occupied & ~bit
        self.send(P.SQUARE, square, occupied, self.ms)

    def play(self, board: chess.Board, move: chess.Move) -> None:
        """Lift and place the pieces of one move (captured piece first)."""
        victim = None
        if board.is_en_passant(move):
            victim = chess.square(chess.square_file(move.to_square),
                                  chess.square_rank(move.from_square))
        elif board.is_capture(move):
            victim = move.to_square
        if victim is not None:
            self.square(victim, False, 700)
        self.square(move.from_square, False, 300 if victim is not None else 700)
        self.square(move.to_square, True, 400)
        if board.is_castling(move):
            rank = chess.square_rank(move.from_square)
            kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
            rook_from = chess.square(7 if kingside else 0, rank)
            rook_to = chess.square(5 if kingside else 3, rank)
            self.square(rook_from, False, 300)
            self.square(rook_to, True, 300)


def status_side(msg: P.Message) -> bool | None:
    white, black, _over, _alert = P.unpack_status(msg.status)
    return True if white else False if black else None


def bench_latency(workdir: Path, games: int) -> list[float]:
    link = workdir / "bench-board"
    board_end = BenchBoard(link)
    service = start_service(link, workdir)
    samples: list[float] = []
    try:
        _, first = board_end.wait_leds(timeout=20)  # connected; game 1 started
        with GAMES.open(encoding="utf-8") as stream:
            for _ in range(games):
                game = chess.pgn.read_game(stream)
                assert game is not None
                board = game.board()
                for move in game.mainline_moves():
                    board_end.play(board, move)
                    board_end.receive(0.01)  # the hand leaves the board; the service settles
                    mover = board.turn
                    board.push(move)
                    board_end.ms += 500
                    sent = time.perf_counter()
                    board_end.send(P.CLOCK, P.WHITE if mover else P.BLACK, board_end.ms)
                    while True:
                        got, msg = board_end.wait_leds()
                        if status_side(msg) != mover:
                            break
                    samples.append((got - sent) * 1000)
                    if board.is_game_over():
                        break
                # end the game, set the pieces up again: the next game starts
                if not board.is_game_over():
                    board_end.ms += 1000
                    loser = P.WHITE if board.turn else P.BLACK
                    board_end.send(P.BUTTON, P.RESIGN, loser, board_end.ms)
                    board_end.wait_leds()
                board_end.occupied = chess.Board().occupied
                board_end.ms += 2000
                board_end.send(P.SNAPSHOT, board_end.occupied, board_end.ms, P.HEARTBEAT)
                while True:
                    _, msg = board_end.wait_leds()
                    if status_side(msg) is True:
                        break
    finally:
        service.terminate()
        _, err = service.communicate(timeout=20)
        if service.returncode not in (0, -15):
            print(err.decode(errors="replace"), file=sys.stderr)
        os.close(board_end.master)
        os.close(board_end.slave)
        link.unlink(missing_ok=True)
    return samples


# ---------------------------------------------------------------- idle CPU and memory


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def memory_kb(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def bench_idle(workdir: Path, seconds: float) -> tuple[float, float, dict[str, int]]:
    link = workdir / "emulator-board"
    emulator = subprocess.Popen(
        [sys.executable, "-m", "firmware_bridge.emulator", "--link", str(link),
         "--interactive"], cwd=ROOT, env=service_env(), stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not link.exists():
        if time.monotonic() > deadline or emulator.poll() is not None:
            raise RuntimeError("the emulator did not start")
        time.sleep(0.02)
    service = start_service(link, workdir, view="plain")
    try:
        assert service.stdout is not None
        while b"game 1 started" not in service.stdout.readline():  # connected, playing
            if service.poll() is not None:
                raise RuntimeError(service.stderr.read().decode() if service.stderr else "")
        time.sleep(1.0)  # let start-up work finish before measuring
        before, t0 = cpu_seconds(service.pid), time.monotonic()
        emu_before = cpu_seconds(emulator.pid)
        time.sleep(seconds)
        used, elapsed = cpu_seconds(service.pid) - before, time.monotonic() - t0
        emu_used = cpu_seconds(emulator.pid) - emu_before
        memory = memory_kb(service.pid)
    finally:
        service.terminate()
        service.wait(timeout=20)
        if emulator.stdin is not None:
            emulator.stdin.close()
        emulator.wait(timeout=20)
    return used / elapsed * 100, emu_used / elapsed * 100, memory


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=8, help="games to play for the latency")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-service-") as tmp:
        workdir = Path(tmp)
        samples = bench_latency(workdir, args.games)
        print(f"latency, clock press -> LED frame through the pty ({len(samples)} presses, "
              f"{args.games} games):")
        print(f"  p50 {percentile(samples, 50):.2f} ms   p90 {percentile(samples, 90):.2f} ms"
              f"   p99 {percentile(samples, 99):.2f} ms   max {max(samples):.2f} ms"
              f"   mean {statistics.mean(samples):.2f} ms   (target p99 < 5 ms)")
        cpu, emu_cpu, memory = bench_idle(workdir, args.idle)
        print(f"idle CPU over {args.idle:g} s, emulator connected, nobody moving: "
              f"{cpu:.2f} % of one core   (target < 1 %; the emulator itself: {emu_cpu:.2f} %)")
        print(f"resident memory: {memory.get('VmRSS', 0) / 1024:.1f} MB "
              f"(peak {memory.get('VmHWM', 0) / 1024:.1f} MB)   (target < 80 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
