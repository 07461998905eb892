"""The built-in board: `board-emulator` in a child process on a real pty, playing a
sensor log (the demo game shipped in board_ctl/data/ unless `emulator.log` names one),
talked to through `LinkBoard` exactly as a USB board is.

When the emulator has played its log and the service has read everything (its PING
answered), it exits and removes the link; the backend then reports `BoardDone`.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import json
import logging
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import IO

import chess

from board_ctl.core.effects import LedFrame
from board_ctl.errors import ConfigError, HardwareError, SensorLogError
from board_ctl.sensorlog import StartInfo, read_start
from board_ctl.service.backends import Put
from board_ctl.service.linkboard import LinkBoard
from board_ctl.service.messages import BoardDone, LinkDown

log = logging.getLogger(__name__)

DEMO_LOG = "demo-opera-game.jsonl"
_EXIT_WAIT = 1.0  # s: a link that drops this close to the emulator's exit is its end


# The emulator is the very package this service imported, never one found in the working
# directory: `python -m` would put the working directory first on the child's path, and
# a planted firmware_bridge/ there (a writable state directory, a downloaded folder)
# would run. -P keeps it off; our package's own directory is appended (so a checkout
# that is not installed works too, and nothing on the normal path is shadowed).
_EMULATOR_BOOT = ("import sys; sys.path.append(sys.argv[1]); "
                  "from firmware_bridge.emulator import main; sys.exit(main(sys.argv[2:]))")


def emulator_command(python: str = sys.executable) -> list[str]:
    """The command that starts board-emulator from this installation (its arguments
    follow)."""
    import firmware_bridge

    root = Path(firmware_bridge.__file__).resolve().parent.parent
    return [python, "-P", "-c", _EMULATOR_BOOT, str(root)]


def demo_log() -> Traversable:
    return importlib.resources.files("board_ctl").joinpath("data", DEMO_LOG)


class EmulatorBoard:
    def __init__(self, log_path: Path | None, speed: float, *, connect_timeout: float = 10.0,
                 python: str = sys.executable, extra_args: tuple[str, ...] = (),
                 player: tuple[str, ...] | None = None, fen: str = chess.STARTING_FEN) -> None:
        self.log_path = log_path
        # Against a computer the emulator plays the person's side itself (its player
        # mode, firmware_bridge.player): these are its arguments, instead of a log.
        self.player = player
        self.fen = fen
        self.speed = speed
        self.connect_timeout = connect_timeout
        self.python = python
        self.extra_args = extra_args
        self.description = "board emulator"
        # One board, whatever it plays: its games never resume on a real board (nor on
        # an emulator at another link), and a game of its own resumes only when it shows
        # that game's position: its pieces stand where that game left them (keep_game),
        # as a real board keeps its pieces through a power cut.
        self.identity = "board emulator (built in)"
        self.kept: dict[str, object] | None = None  # the game its pieces stand in (keep_game)
        self.proc: subprocess.Popen[bytes] | None = None
        self.link_board: LinkBoard | None = None
        self._stack = contextlib.ExitStack()
        self._dir: Path | None = None
        self._errors: IO[bytes] | None = None
        self._filter = _EndOfLogFilter(self)

    # --- the log

    def _log_file(self) -> Path:
        if self.log_path is None:
            return self._stack.enter_context(importlib.resources.as_file(demo_log()))
        return self.log_path

    @property
    def scale(self) -> float:
        """How much faster than real time the emulator plays (its --speed)."""
        return self.link_board.scale if self.link_board is not None else self.speed

    def start_info(self) -> StartInfo:
        """The log's start line: the game starts from its FEN, with its tags."""
        if self.player is not None:
            return StartInfo(fen=self.fen)
        with contextlib.ExitStack() as stack:
            path = (stack.enter_context(importlib.resources.as_file(demo_log()))
                    if self.log_path is None else self.log_path)
            try:  # as the emulator reads it: utf-8-sig, an unplayable start refused
                start = read_start(path)
            except SensorLogError as exc:
                where = f"{path}:" if exc.line is not None else ""
                raise ConfigError(f"emulator.log: {where}{exc}") from None
        # What the start line had that cannot be used (a tag that is no PGN tag, a time
        # control no clock shows) is left out; the operator is told, as replay tells.
        for problem in start.problems:
            log.warning("emulator.log %s: its start line: %s", path, problem)
        return start

    # --- the process

    def start(self, put: Put) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="board-ctl-"))
        if self.player is not None:
            self.description = (f"board emulator playing the person's side at "
                                f"{self.speed:g}x")
            source = ["--fen", self.fen, *self.player]
            if self.kept is not None:
                memory = self._dir / "kept-game.json"
                memory.write_text(json.dumps(self.kept), encoding="utf-8")
                source += ["--remember", str(memory)]
                self.kept = None  # once: a later start is a board already played on
        else:
            log_file = self._log_file()
            self.description = (f"board emulator playing {log_file.name} at {self.speed:g}x"
                                if self.log_path else
                                f"board emulator playing the demo game at {self.speed:g}x")
            source = ["--log", str(log_file)]
        link = self._dir / "board"
        self._errors = (self._dir / "emulator.err").open("w+b")
        cmd = [*emulator_command(self.python), "--link", str(link),
               *source, "--speed", f"{self.speed:g}", *self.extra_args]
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=self._errors, start_new_session=True)
        except OSError as exc:
            self.stop()
            raise HardwareError(f"cannot start the board emulator: {exc}") from None
        try:
            self._wait_for_link(time.monotonic() + self.connect_timeout)
        except HardwareError:
            self.stop()
            raise
        threading.Thread(target=self._drain_stdout, name="emulator-stdout", daemon=True).start()
        logging.getLogger("firmware_bridge.link").addFilter(self._filter)
        self.link_board = LinkBoard(str(link), connect_timeout=self.connect_timeout,
                                    time_scale=self.speed)
        self.link_board.on_down = self._on_down
        started = False
        try:
            self.link_board.start(put)
            started = True
        finally:
            if not started:
                self.stop()

    def keep_game(self, game: chess.Board, touched: list[chess.Square],
                  occupied: chess.Bitboard) -> None:
        """The unfinished game the service will resume, told before `start`: this is the
        same board as before the restart, and a real board keeps its pieces through a
        power cut, so the emulator's pieces stand where the game left them (`occupied`,
        as its sensors last reported), and its person knows the game (its start, its
        moves, the pieces he had touched in the turn under way), as any player knows the
        game he was playing (firmware_bridge.player). Only when it plays a side."""
        if self.player is None:
            return
        self.kept = {"fen": game.root().fen(), "moves": [m.uci() for m in game.move_stack],
                     "touched": [chess.square_name(sq) for sq in touched],
                     "occupied": [chess.square_name(sq) for sq in chess.SquareSet(occupied)]}

    def _wait_for_link(self, deadline: float) -> None:
        """Read the emulator's first line, ``LINK <path> -> <pty>``, by the deadline."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf = b""
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0.0))
            chunk = os.read(fd, 4096) if ready else b""
            if not chunk:
                why = "exited" if ready else "did not open its link in time"
                raise HardwareError(f"the board emulator {why}: {self.error_tail()}")
            buf += chunk
        log.info("board emulator: %s", buf.split(b"\n", 1)[0].decode(errors="replace"))

    def _drain_stdout(self) -> None:
        """The emulator prints a LINK line for each new pty (after a yank): keep reading."""
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            log.debug("board emulator: %s", line.decode(errors="replace").rstrip())

    def exited(self, timeout: float) -> int | None:
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def _on_down(self, down: LinkDown) -> object:
        """Reader thread: a link that drops as the emulator exits is the end of its log."""
        code = self.exited(_EXIT_WAIT)
        if code is None:
            return down
        if code == 0:
            return BoardDone(down.t, True, "the board emulator played its whole log"
                             if self.player is None else
                             "the board emulator's person has played his games")
        return BoardDone(down.t, False,
                         f"the board emulator exited with status {code}: {self.error_tail()}")

    def error_tail(self) -> str:
        if self._errors is None:
            return ""
        self._errors.seek(0)
        lines = self._errors.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "(no message)"

    def send_leds(self, frame: LedFrame) -> None:
        if self.link_board is not None:
            self.link_board.send_leds(frame)

    def stop(self) -> None:
        if self.link_board is not None:
            self.link_board.stop()
        logging.getLogger("firmware_bridge.link").removeFilter(self._filter)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            if self.exited(5.0) is None:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        if self._errors is not None:
            self._errors.close()
            self._errors = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        self._stack.close()


class _EndOfLogFilter(logging.Filter):
    """Keeps "board link lost" out of the log when the emulator simply finished."""

    def __init__(self, board: EmulatorBoard) -> None:
        super().__init__()
        self.board = board

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.WARNING and " lost: " in record.getMessage():
            return self.board.exited(_EXIT_WAIT) is None
        return True
