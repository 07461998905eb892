"""Benchmark of `board-ctl run`: latency, idle CPU, memory, with the journal on.

    python bench/bench_service.py [--games N] [--idle SECONDS] [--rounds R]
                                  [--compare REF] [--data-parent DIR]

1. Latency, sensor event -> LED frame, through a real pty: the service runs as its own
   process (`board-ctl run --port LINK --view none`), journaling every game (fsync'd
   before the LEDs show it) in a fresh data directory of its own; this script plays the
   board on the other end of a pty with the firmware's own codec
   (firmware_bridge.protocol): it answers the handshake (saying, as the emulator does,
   that it plays 50 times faster than the game), then plays real games from
   tests/data/games (lift, place, clock press, stamped with the board's millisecond
   clock) and times each clock press, from the write of its CLOCK frame to the read of
   the LEDS frame that shows the other side to move. After each game a resignation ends
   it and a snapshot of the start position starts the next one, so the service runs game
   after game as on a real board.
2. Idle CPU: `board-emulator --interactive` connected (heartbeat snapshots every second),
   nobody moving: the service's user+system time from /proc/PID/stat over --idle seconds.
3. Memory: the service's resident set (VmRSS, and its peak VmHWM) from /proc/PID/status.

The data directory is always a fresh one (never the user's own archive, which a service
would lock, or resume a game from), made under --data-parent and removed at the end: by
default this checkout's own directory, on a real disk as a board's SD card is (the
system's temporary directory may be a tmpfs, where an fsync costs nothing and the figures
would say nothing of a disk). The file system is printed, with a warning when it is a
tmpfs or ramfs. The latency is given for every press and, apart, for the first press of
each game and each game's start (the snapshot that completes the set-up to the game's
first frame: the game's journal is new then); after each game the disk's own cost is
measured in the same conditions (a plain append + fdatasync of a journal-sized line in
the data directory), so that a stall of the disk can be told from one of the service.
With --compare REF (a git commit, e.g. main), the same measurements run on that
commit's code too, interleaved round by round, so both figures come from the same
conditions; the load average before and after is printed with them.

Targets: p99 < 10 ms on a real disk with the journal on, the first move of each game
included; idle CPU < 1 % of one core; RSS < 40 MB.
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
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from firmware_bridge import protocol as P  # noqa: E402

GAMES = ROOT / "tests" / "data" / "games" / "classics.pgn"
TICKS = os.sysconf("SC_CLK_TCK")
START_DEADLINE = 30.0  # s: a service that has not started its game by then has failed
SPEED = 50  # the bench board plays this many times faster than the game (see BenchBoard)


@dataclass
class Code:
    """A tree of the code to measure (this checkout, or a commit exported)."""

    name: str
    root: Path
    samples: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)  # the first press of each game
    starts: list[float] = field(default_factory=list)  # set up -> the game's first frame
    floor: list[float] = field(default_factory=list)  # the disk's own append + fdatasync
    idle: list[tuple[float, float, dict[str, int]]] = field(default_factory=list)
    cpu_per_press: list[tuple[float, int]] = field(default_factory=list)  # (s, presses)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "BOARD_CTL_DATA",
                            "BOARD_CTL_CONFIG")}
        env["PYTHONPATH"] = str(self.root)
        return env


def service_env() -> dict[str, str]:
    """The environment a service of this checkout runs in (used by the other benches)."""
    return Code("this", ROOT).env()


def export_commit(ref: str, into: Path) -> Path:
    """`git archive` of a commit: its code, to run beside this checkout's."""
    into.mkdir()
    done = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"{ref}: not a commit of this repository "
                         f"({done.stderr.decode(errors='replace').strip()})")
    archive = done.stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def start_service(code: Code, port: Path, workdir: Path, data: Path,
                  view: str = "none") -> subprocess.Popen[bytes]:
    config = workdir / "bench.toml"
    config.write_text("[serial]\nconnect_timeout = 10.0\n", encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "board_ctl.cli", "run", "--config", str(config), "--port",
         str(port), "--view", view, "--pgn", str(workdir / "bench.pgn"),
         "--data-dir", str(data)],
        cwd=workdir, env=code.env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if view == "plain" else subprocess.DEVNULL,
        stderr=subprocess.PIPE)


def fresh_data_dir(parent: Path) -> Path:
    """A data directory of its own: nothing to resume, nobody else's lock."""
    return Path(tempfile.mkdtemp(prefix="bench-data-", dir=parent))


def file_system(path: Path) -> str:
    from board_ctl.storage import disk_of

    return disk_of(path)


MEMORY_FILE_SYSTEMS = {"tmpfs", "ramfs"}


def file_system_type(path: Path) -> str:
    """The type of the file system `path` is on (ext4, tmpfs ...), as `stat -f` says."""
    from board_ctl.storage import file_system_type as of

    return of(path)


# ---------------------------------------------------------------- latency


class BenchBoard:
    """The board's side of the link on a pty, speaking the firmware's protocol.

    Its millisecond clock runs with real time (the link holds a board's clock to the
    host's) and it says, as the emulator does, that it plays SPEED times faster than the
    game: a gap of N ms of game time between two events is N / SPEED ms of real time."""

    def __init__(self, link: Path) -> None:
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.slave = slave
        link.unlink(missing_ok=True)
        os.symlink(os.ttyname(slave), link)
        self.decoder = P.Decoder()
        self.sender = P.Sender()
        self.started = time.perf_counter()
        self.occupied = chess.Board().occupied
        self.bounces = 0  # extra open/close pairs after each change, in the same ms

    @property
    def ms(self) -> int:
        """The board's clock."""
        return int((time.perf_counter() - self.started) * 1000)

    def advance(self, game_ms: float) -> None:
        """Let `game_ms` of game time pass, answering the host meanwhile."""
        deadline = time.perf_counter() + game_ms / 1000 / SPEED
        while (left := deadline - time.perf_counter()) > 0:
            self.receive(left)

    def send(self, mtype: int, *values: object) -> None:
        os.write(self.master, self.sender.frame(mtype, *values))

    def receive(self, timeout: float) -> list[P.Message]:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return []
        messages = self.decoder.feed(os.read(self.master, 4096))
        for msg in messages:
            if msg.type == P.HELLO:
                self.send(P.HELLO_ACK, f"bench 0.1 speed={SPEED:g}", "bench-board")
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
        self.advance(gap_ms)
        bit = chess.BB_SQUARES[square]
        self.occupied = self.occupied | bit if occupied else self.occupied & ~bit
        self.send(P.SQUARE, square, occupied, self.ms)
        for _ in range(self.bounces):  # a chattering contact, reported raw
            self.send(P.SQUARE, square, not occupied, self.ms)
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


FLOOR_SAMPLES = 40  # the disk's own append + fdatasync, measured after each game
FLOOR_RECORD = b"x" * 150 + b"\n"  # about a journal record


def disk_floor(data: Path, samples: int = FLOOR_SAMPLES) -> list[float]:
    """What the disk itself costs, in the same conditions as the service's run: a plain
    append + fdatasync of a journal-sized line in the data directory, ms each."""
    path = data / "floor.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    out = []
    try:
        for _ in range(samples):
            started = time.perf_counter()
            os.write(fd, FLOOR_RECORD)
            os.fdatasync(fd)
            out.append((time.perf_counter() - started) * 1000)
            time.sleep(0.005)
    finally:
        os.close(fd)
        path.unlink()
    return out


def bench_latency(code: Code, workdir: Path, data: Path, games: int,
                  bounces: int = 0) -> list[float]:
    """Every press's latency, the first press of each game's, each game's start (the
    snapshot that completes the set-up to the frame of its first move), and the disk's
    own floor after each game: added to `code`, in ms. Returns this run's presses."""
    link = workdir / "bench-board"
    board_end = BenchBoard(link)
    board_end.bounces = bounces
    service = start_service(code, link, workdir, data)
    samples, firsts, starts, floor = code.samples, code.first, code.starts, code.floor
    presses_before = len(samples)
    doing = "waiting for the service to start"
    try:
        _, first = board_end.wait_leds(timeout=START_DEADLINE)  # connected; game 1 started
        cpu_before = cpu_seconds(service.pid)
        with GAMES.open(encoding="utf-8") as stream:
            for played in range(games):
                game = chess.pgn.read_game(stream)
                if game is None:
                    raise SystemExit(f"bench_service: --games {games}: {GAMES.name} has "
                                     f"{played} games; use --rounds for more presses")
                board = game.board()
                for move in game.mainline_moves():
                    doing = f"playing {game.headers.get('White')} - " \
                            f"{game.headers.get('Black')}, {board.fullmove_number}. {move}"
                    board_end.play(board, move)
                    mover = board.turn
                    board.push(move)
                    board_end.advance(500)  # the hand goes to the clock
                    sent = time.perf_counter()
                    board_end.send(P.CLOCK, P.WHITE if mover else P.BLACK, board_end.ms)
                    while True:
                        got, msg = board_end.wait_leds()
                        if status_side(msg) != mover:
                            break
                    samples.append((got - sent) * 1000)
                    if len(board.move_stack) == 1:
                        firsts.append(samples[-1])
                    if board.is_game_over():
                        break
                # end the game, set the pieces up again: the next game starts
                doing = "setting up the next game"
                if not board.is_game_over():
                    board_end.advance(1000)
                    loser = P.WHITE if board.turn else P.BLACK
                    board_end.send(P.BUTTON, P.RESIGN, loser, board_end.ms)
                    board_end.wait_leds()
                board_end.occupied = chess.Board().occupied
                board_end.advance(2000)
                floor += disk_floor(data)
                sent = time.perf_counter()
                board_end.send(P.SNAPSHOT, board_end.occupied, board_end.ms, P.HEARTBEAT)
                while True:
                    got, msg = board_end.wait_leds()
                    if status_side(msg) is True:
                        break
                starts.append((got - sent) * 1000)
        code.cpu_per_press.append((cpu_seconds(service.pid) - cpu_before,
                                   len(samples) - presses_before))
    except TimeoutError:
        service.terminate()
        _, err = service.communicate(timeout=20)
        raise TimeoutError(f"{code.name}: no LED frame from the service while {doing}; "
                           f"its stderr: {err.decode(errors='replace')[-2000:]}") from None
    finally:
        if service.poll() is None:
            service.terminate()
            _, err = service.communicate(timeout=20)
            if service.returncode not in (0, -15):
                print(err.decode(errors="replace"), file=sys.stderr)
        os.close(board_end.master)
        os.close(board_end.slave)
        link.unlink(missing_ok=True)
    return samples[presses_before:]


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


def bench_idle(code: Code, workdir: Path, data: Path, seconds: float
               ) -> tuple[float, float, dict[str, int]]:
    link = workdir / "emulator-board"
    emulator = subprocess.Popen(
        [sys.executable, "-P", "-m", "firmware_bridge.emulator", "--link", str(link),
         "--interactive"], cwd=code.root, env=code.env(), stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + START_DEADLINE
    while not link.exists():
        if time.monotonic() > deadline or emulator.poll() is not None:
            raise RuntimeError("the emulator did not start")
        time.sleep(0.02)
    service = start_service(code, link, workdir, data, view="plain")
    try:
        wait_for_game(service, time.monotonic() + START_DEADLINE)
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


def wait_for_game(service: subprocess.Popen[bytes], deadline: float) -> None:
    """Until the service says its game is on (started, or resumed), by the deadline."""
    assert service.stdout is not None
    fd, buf = service.stdout.fileno(), b""
    while b"game 1 started" not in buf and b"resuming game" not in buf:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(left, 0.0))
        chunk = os.read(fd, 4096) if ready else b""
        if not chunk:
            err = service.stderr.read().decode(errors="replace") if service.stderr else ""
            raise RuntimeError(f"the service did not start a game in time: {err}"
                               if not ready else f"the service exited: {err}")
        buf += chunk


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=8,
                        help="games to play for the latency, each round")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle measurement")
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds (with --compare: interleaved, this code then REF's)")
    parser.add_argument("--compare", metavar="REF",
                        help="also measure this git commit's code (e.g. main), same run")
    parser.add_argument("--bounce", type=int, default=0, metavar="N",
                        help="each square change followed by N open/close pairs in the same "
                             "millisecond (a chattering contact reported raw: a burst of "
                             "events for the journal)")
    parser.add_argument("--data-parent", type=Path, default=ROOT,
                        help="where the fresh data directories are made, and removed at the "
                             "end (default: this checkout, %(default)s: a real disk)")
    args = parser.parse_args()
    args.data_parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-service-") as tmp, \
            tempfile.TemporaryDirectory(prefix=".bench-data-", dir=args.data_parent) as data_tmp:
        workdir, data_parent = Path(tmp), Path(data_tmp)
        codes = [Code("this checkout", ROOT)]
        if args.compare:
            codes.append(Code(args.compare, export_commit(args.compare, workdir / "ref")))
        print(f"data directories (fresh, journal fsync'd before the LEDs) on "
              f"{file_system(data_parent)}")
        kind = file_system_type(data_parent)
        if kind in MEMORY_FILE_SYSTEMS:
            print(f"  WARNING: {data_parent} is on a {kind}: an fsync costs nothing there, "
                  f"so these figures say nothing of a disk (give --data-parent on a disk)")
        load_before = os.getloadavg()
        for _ in range(args.rounds):
            for code in codes:
                data = fresh_data_dir(data_parent)
                bench_latency(code, workdir, data, args.games, args.bounce)
        for _ in range(args.rounds):
            for code in codes:
                data = fresh_data_dir(data_parent)
                code.idle.append(bench_idle(code, workdir, data, args.idle))
        load_after = os.getloadavg()
        print(f"load average (1, 5, 15 min) before {fmt_load(load_before)}, after "
              f"{fmt_load(load_after)}, on {os.cpu_count()} CPUs")
        bounces = f", {args.bounce} bounce pair(s) a change" if args.bounce else ""
        print(f"latency, clock press -> LED frame through the pty ({args.games} games "
              f"x {args.rounds} round(s){bounces}), ms:   (target p99 < 10 ms on a disk)")
        for code in codes:
            print(f"  {code.name}:")
            for name, samples in (("every press", code.samples),
                                  ("first press of a game", code.first),
                                  ("a game's start", code.starts),
                                  ("the disk: append+fdatasync", code.floor)):
                print(f"    {name:<27} {len(samples):>4}   p50 "
                      f"{percentile(samples, 50):6.2f}   p90 {percentile(samples, 90):6.2f}   "
                      f"p99 {percentile(samples, 99):6.2f}   max {max(samples):6.2f}   "
                      f"mean {statistics.mean(samples):6.2f}")
        for code in codes:
            used = sum(c for c, _ in code.cpu_per_press)
            presses = sum(n for _, n in code.cpu_per_press)
            print(f"  {code.name:<14} the service's own CPU time: {used / presses * 1000:.2f} "
                  f"ms a move (its events, press and LED frame; less sensitive to the load)")
        if len(codes) == 2:
            new, old = (percentile(c.samples, 99) for c in codes)
            mid_new, mid_old = (percentile(c.samples, 50) for c in codes)
            print(f"  ratio this/{codes[1].name}: p50 {mid_new / mid_old:.2f}, "
                  f"p99 {new / old:.2f}")
        print(f"idle over {args.idle:g} s, emulator connected, nobody moving "
              f"(target < 1 % of one core); resident memory (target < 40 MB):")
        for code in codes:
            cpu = statistics.median(c for c, _, _ in code.idle)
            emu = statistics.median(e for _, e, _ in code.idle)
            rss = max(m.get("VmRSS", 0) for _, _, m in code.idle) / 1024
            peak = max(m.get("VmHWM", 0) for _, _, m in code.idle) / 1024
            print(f"  {code.name:<14} CPU {cpu:5.2f} % (the emulator: {emu:.2f} %)   "
                  f"RSS {rss:.1f} MB (peak {peak:.1f} MB)")
    return 0


def fmt_load(load: tuple[float, float, float]) -> str:
    return ", ".join(f"{x:.2f}" for x in load)


if __name__ == "__main__":
    sys.exit(main())
