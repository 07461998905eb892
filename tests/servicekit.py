"""Helpers for the service tests: real processes on real ptys, a garbage-injecting relay,
a reed-switch matrix on gpiozero mock pins, and a view that records what it is shown."""

from __future__ import annotations

import io
import os
import queue
import random
import re
import select
import subprocess
import sys
import threading
import time
import tty
from collections.abc import Callable, Sequence
from pathlib import Path

import chess
import chess.pgn
from gpiozero.pins.mock import MockFactory, MockPin

from board_ctl.core.effects import Effect, LedFrame
from conftest import stop_process
from board_ctl.simulate import RenderedGame, RenderStyle, render_game
from board_ctl.service.view import ViewState

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "tests" / "data" / "games"
FAST = RenderStyle(think=(0.3, 2.5), long_think_prob=0.0)  # shorter logs, same physics


class FakeBoard:
    """A board for Service with no link: it records the LED frames sent to it; `put`
    is the service's queue (tests put events on it)."""

    description = "fake board"

    def __init__(self, description: str = "fake board", identity: str = "fake board") -> None:
        self.description = description
        self.identity = identity
        self.frames: list[LedFrame] = []
        self.put: Callable[[object], None] | None = None
        self.stopped = False

    def start(self, put: Callable[[object], None]) -> None:
        self.put = put

    def send_leds(self, frame: LedFrame) -> None:
        self.frames.append(frame)

    def stop(self) -> None:
        self.stopped = True


def game_from(pgn: str, index: int) -> chess.pgn.Game:
    with (GAMES / pgn).open(encoding="utf-8") as stream:
        for _ in range(index):
            chess.pgn.skip_game(stream)
        game = chess.pgn.read_game(stream)
    assert game is not None
    return game


def excerpt(game: chess.pgn.Game, start: int, end: int | None = None) -> chess.pgn.Game:
    """Plies start..end of a game, as a game from the position before ply `start`
    (the result kept only when the excerpt runs to the end)."""
    board = game.board()
    moves = list(game.mainline_moves())
    for move in moves[:start]:
        board.push(move)
    part = chess.pgn.Game()
    part.setup(board.fen())  # the FEN header
    node: chess.pgn.GameNode = part
    for move in moves[start:end]:
        node = node.add_variation(move)
    part.headers["Result"] = game.headers["Result"] if end is None else "*"
    return part


def render(pgn: str, index: int, seed: int, style: RenderStyle = FAST,
           plies: tuple[int, int | None] | None = None) -> RenderedGame:
    game = game_from(pgn, index)
    if plies is not None:
        game = excerpt(game, *plies)
    return render_game(game, seed=seed, style=style)


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "BOARD_CTL_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def without_date(pgn: str) -> str:
    return re.sub(r'^\[Date "[^"]*"\]\n', "", pgn, flags=re.M)


EMT = re.compile(r"\[%emt (\d+):(\d+):([\d.]+)\]")


def move_times(pgn: str) -> list[float]:
    return [int(h) * 3600 + int(m) * 60 + float(s) for h, m, s in EMT.findall(pgn)]


def pgn_moves(pgn: str) -> list[str]:
    """The SAN of the PGN's main line."""
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    board = game.board()
    sans = []
    for move in game.mainline_moves():
        sans.append(board.san(move))
        board.push(move)
    return sans


def comparable(pgn: str) -> str:
    """The PGN without its Date and with each [%emt] made the same: the move times of a
    game played through the emulator at N x are the log's to within N ms (its clock ticks
    in milliseconds), so they are compared apart, with that tolerance."""
    text = EMT.sub("[%emt]", without_date(pgn))
    return " ".join(text.split())  # the line breaks move with the comments' widths


class EmulatorProcess:
    """board-emulator in a child process; waits (bounded) for its LINK line."""

    def __init__(self, link: Path, *args: str, timeout: float = 15.0) -> None:
        self.link = link
        self.stderr_path = link.parent / f"{link.name}.emulator.err"
        self.stderr = self.stderr_path.open("w+b")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "firmware_bridge.emulator", "--link", str(link), *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.stderr, cwd=ROOT,
            env=child_env())
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        buf = b""
        while b"\n" not in buf:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(fd, 4096) if ready else b""
            if not chunk:  # (it is stopped: a test that fails here leaves nothing running)
                stop_process(self.proc)
                self.stderr.close()
                raise RuntimeError(f"emulator did not start: {self.errors()}")
            buf += chunk
        assert buf.startswith(b"LINK "), buf
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for _ in self.proc.stdout:
            pass

    def errors(self) -> str:
        """What the emulator wrote to stderr (also after close)."""
        return self.stderr_path.read_bytes().decode(errors="replace")

    def close(self, timeout: float = 15.0) -> int:
        """Wait for the emulator to end (its log played), stopping it after `timeout`."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        finally:
            self.stderr.close()
        self._drainer.join(5)  # it has read to the end: its pipe can be closed
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return self.proc.returncode


def board_ctl(*args: str, cwd: Path, timeout: float = 60.0,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([sys.executable, "-m", "board_ctl.cli", *args], cwd=cwd,
                              env=env or child_env(), capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        # What it printed is the only clue to why it hung: show the end of it.
        printed = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
        problems = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        raise AssertionError(f"board-ctl {' '.join(args[:1])} still running after {timeout} s;"
                             f" it printed:\n{printed[-4000:]}\nstderr:\n{problems[-2000:]}"
                             ) from None


# ---------------------------------------------------------------- garbage on the wire


class GarbageRelay:
    """A second pty between the service and the emulator that adds line noise.

    Board to host: whole frames pass unchanged, with random garbage (random bytes, a
    MicroPython banner) between them. Host to board: bytes pass unchanged; whatever a
    third process writes into our link reaches the emulator as noise too.
    """

    NOISE = (b"\r\nMicroPython v1.22.2 on 2024-02-22; Raspberry Pi Pico with RP2040\r\n>>> ",
             b"Traceback (most recent call last):\r\n  File \"main.py\"\r\n")

    def __init__(self, board_link: Path, link: Path, seed: int = 7,
                 rate: float = 0.3) -> None:
        self.link = link
        self.rng = random.Random(seed)
        self.rate = rate
        self.injected = 0
        self.board = os.open(board_link, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.board)
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        link.unlink(missing_ok=True)
        os.symlink(os.ttyname(self.slave), link)
        self._stop = threading.Event()
        self._buf = b""
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _noise(self) -> bytes:
        if self.rng.random() < 0.3:
            return self.rng.choice(self.NOISE)
        return bytes(self.rng.getrandbits(8) for _ in range(self.rng.randint(1, 40)))

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([self.board, self.master], [], [], 0.1)
                if self.board in ready:
                    data = os.read(self.board, 4096)
                    if not data:
                        break
                    self._to_host(data)
                if self.master in ready:
                    os.write(self.board, os.read(self.master, 4096))
        except OSError:  # the emulator went away (end of its log): so does the link
            pass
        finally:
            self.link.unlink(missing_ok=True)
            for fd in (self.master, self.slave, self.board):
                os.close(fd)

    def _to_host(self, data: bytes) -> None:
        """Forward whole frames (0x00 ... 0x00), garbage between some of them."""
        self._buf += data
        out = b""
        while True:
            start = self._buf.find(b"\x00")
            if start < 0:
                break
            end = self._buf.find(b"\x00", start + 1)
            if end < 0:
                break
            if end == start + 1:  # two delimiters in a row: the second opens the frame
                self._buf = self._buf[start + 1:]
                continue
            out += self._buf[start:end + 1]
            self._buf = self._buf[end + 1:]
            if self.rng.random() < self.rate:
                out += self._noise()
                self.injected += 1
        if out:
            os.write(self.master, out)

    def close(self) -> None:
        self._stop.set()
        self.thread.join(timeout=5)


# ---------------------------------------------------------------- a matrix on mock pins


class MatrixRowPin(MockPin):
    """A row output of the reed-switch matrix: changing it re-reads the columns."""

    def __init__(self, factory: MockFactory, info: object, matrix: ReedMatrix) -> None:
        super().__init__(factory, info)
        self.matrix = matrix

    def _change_state(self, value: bool) -> bool:
        changed = super()._change_state(value)
        if changed:
            self.matrix.update()
        return changed


class ReedMatrix:
    """8x8 reed switches with one diode each: a column reads low while a selected (low)
    row has a closed switch (an occupied square) on it."""

    def __init__(self, factory: MockFactory, rows: Sequence[int], cols: Sequence[int],
                 occupied: int) -> None:
        self.occupied = occupied
        self._lock = threading.RLock()
        self.rows = [factory.pin(pin, pin_class=MatrixRowPin, matrix=self) for pin in rows]
        self.cols = [factory.pin(pin) for pin in cols]

    def update(self) -> None:
        with self._lock:
            for c, col in enumerate(self.cols):
                if col.function != "input":
                    continue
                low = any(row.function == "output" and not row.state
                          and self.occupied >> (r * 8 + c) & 1
                          for r, row in enumerate(self.rows))
                if low:
                    col.drive_low()
                else:
                    col.drive_high()

    def set(self, square: chess.Square, occupied: bool) -> None:
        with self._lock:
            bit = chess.BB_SQUARES[square]
            self.occupied = self.occupied | bit if occupied else self.occupied & ~bit
            self.update()


# ---------------------------------------------------------------- a view that records


class RecordingView:
    """Hands every (state, effects) and message to the test through queues."""

    def __init__(self) -> None:
        self.effects: queue.Queue[tuple[ViewState, Effect]] = queue.Queue()
        self.messages: queue.Queue[str] = queue.Queue()
        self.all_messages: list[str] = []
        self.last: ViewState | None = None

    def show(self, state: ViewState, effects: Sequence[Effect]) -> None:
        self.last = state
        for effect in effects:
            self.effects.put((state, effect))

    def message(self, text: str) -> None:
        self.all_messages.append(text)
        self.messages.put(text)

    def close(self) -> None:
        pass

    def wait_effect(self, match: Callable[[Effect], bool], timeout: float = 5.0) -> Effect:
        deadline = time.monotonic() + timeout
        seen: list[Effect] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching effect within {timeout} s; saw {seen}")
            try:
                _, effect = self.effects.get(timeout=left)
            except queue.Empty:
                continue
            seen.append(effect)
            if match(effect):
                return effect

    def wait_message(self, match: Callable[[str], bool], timeout: float = 5.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching message within {timeout} s; "
                                     f"messages: {self.all_messages}")
            try:
                text = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if match(text):
                return text


def wait_until(check: Callable[[], bool], timeout: float = 5.0, what: str = "") -> None:
    """Poll a condition with a deadline (for pin states that change on gpiozero threads)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.005)
