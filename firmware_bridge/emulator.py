"""board-emulator: the board's microcontroller, played by a process on a pseudo-terminal.

    board-emulator --link PATH --log GAME.jsonl [--speed N] [--start-at S] [--until U]
                   [--record LEDS.jsonl] [--heartbeat SEC] [--yank-at T [--yank-for SEC]]
    board-emulator --link PATH --interactive [--log GAME.jsonl]

It makes a pty, points the symlink PATH at its slave end (so ``BoardLink(PATH)`` or
``board-ctl run --port PATH`` opens it like /dev/ttyACM0), and speaks the firmware's
protocol through the same codec (firmware_bridge/protocol.py). It stays quiet until the
host's HELLO, answers it, sends a SNAPSHOT of the board at log time S, then plays the
sensor log from S at N times real speed, stamping each event with its own millisecond
clock at the event's scheduled time. It answers REQUEST_SNAPSHOT and PING, sends a
heartbeat SNAPSHOT every second, records the LED frames it receives, and once the log is
played sends a PING and exits when the host's PONG shows it has read everything (or
holds still at log time U, if given, until killed). ``--yank-at T`` pulls the cable at
log time T: the pty vanishes for a while and comes back as a new device, and the events
in between are lost (the board's next connect SNAPSHOT tells the host what it missed).

Interactive mode: type squares and buttons (``help`` lists them); the LED frames the
host sends are printed as text and a small board picture. ``clock`` presses the lever of
the side to move as a player sees it: the side the host's status LEDs show (after an
illegal move, still the same side); until the host has shown it since the last press,
the other side than the one that pressed.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import logging
import os
import random
import select
import signal
import sys
import time
import tty
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import chess

from board_ctl.core import events as ev
from board_ctl.core.effects import Buzzer, LedFrame
from board_ctl.errors import SensorLogError
from board_ctl.sensorlog import load_sensor_log
from board_ctl.words import count
from firmware_bridge import protocol as P
from firmware_bridge.clock_device import ClockDevice, with_clock_times
from firmware_bridge.link import wire_to_leds

if TYPE_CHECKING:  # (player imports this module)
    from firmware_bridge.player import Remembered

log = logging.getLogger(__name__)

EMULATOR_FIRMWARE = "emulator 0.1.0"
_BUTTONS: dict[type, int] = {ev.Resigned: P.RESIGN, ev.DrawOffered: P.DRAW_OFFER,
            ev.DrawAccepted: P.DRAW_ACCEPT, ev.DrawClaimed: P.CLAIM}
_UNSIDED: dict[type, int] = {ev.TakebackAsked: P.TAKEBACK, ev.HintAsked: P.HINT}
_PROMOTIONS = {chess.QUEEN: P.PROMOTE_Q, chess.ROOK: P.PROMOTE_R,
               chess.BISHOP: P.PROMOTE_B, chess.KNIGHT: P.PROMOTE_N}


class LinkError(OSError):
    """The link cannot be made (exit status 2: a bad --link), or another emulator has
    it (status 1)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def link_board_id(path: Path) -> str:
    """The board id an emulator at `path` says it is (HELLO_ACK): the same from one run
    to the next, as a real board's, so a host resumes a game left unfinished on it, and
    only on it; another link is another board. (A hash: the protocol keeps ids short.)"""
    digest = hashlib.sha1(os.path.abspath(path).encode("utf-8")).hexdigest()[:12]
    return f"emulator-{digest}"


class PtyLink:
    """A pseudo-terminal whose slave end the symlink `path` names; we keep the master.

    The link is ours while we run: a lock file beside it (`.NAME.lock`, flock'd, with our
    pid) keeps a second emulator from taking it over, and from deleting it as it exits.
    A link left behind by an emulator that was killed is stale: it is replaced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.master: int | None = None
        self.slave: int | None = None
        self.device = ""
        self.dropped = 0  # frames the host was too slow to take
        self.lock_path = path.with_name(f".{path.name}.lock")
        self._lock: int | None = None

    def claim(self) -> None:
        """Take the link for this process, or raise LinkError saying who has it."""
        folder = self.path.parent
        if not folder.is_dir():
            raise LinkError(f"--link {self.path}: its folder {folder} does not exist")
        while self._lock is None:
            try:
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as exc:
                raise LinkError(f"--link {self.path}: cannot make its lock file "
                                f"{self.lock_path}: {exc.strerror or exc}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
                os.close(fd)
                raise LinkError(f"--link {self.path} is in use by another board-emulator "
                                f"(pid {owner}): stop that one, or give this one another "
                                f"--link", status=1) from None
            try:  # the file we locked must still be the one at the path (see release)
                same = os.stat(self.lock_path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
            self._lock = fd

    def release(self) -> None:
        """Give the link up (at exit): the lock file goes, then the lock."""
        if self._lock is not None:
            self.lock_path.unlink(missing_ok=True)
            os.close(self._lock)
            self._lock = None

    def open(self) -> str:
        self.claim()
        master, slave = os.openpty()
        # Raw: no echo, no CR/LF translation, no ^C signal, so every frame byte passes.
        tty.setraw(slave)
        os.set_blocking(master, False)
        self.master, self.slave = master, slave  # we hold the slave too: a host closing
        self.device = os.ttyname(slave)  # and reopening the port is no hang-up for us
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            tmp.unlink(missing_ok=True)
            os.symlink(self.device, tmp)
            os.replace(tmp, self.path)  # atomically replaces a stale link
        except OSError as exc:
            os.close(master)
            os.close(slave)
            self.master = self.slave = None
            tmp.unlink(missing_ok=True)
            raise LinkError(f"--link {self.path}: cannot make the link: "
                            f"{exc.strerror or exc}") from None
        return self.device

    def close(self) -> None:
        if self.master is None:
            return
        try:
            if os.readlink(self.path) == self.device:
                self.path.unlink()
        except OSError:  # gone already, or no longer a link of ours
            pass
        for fd in (self.master, self.slave):
            if fd is not None:
                os.close(fd)
        self.master = self.slave = None

    @property
    def is_open(self) -> bool:
        return self.master is not None

    def read(self) -> bytes:
        if self.master is None:
            return b""
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, InterruptedError):
            return b""

    def write(self, data: bytes) -> None:
        if self.master is None:
            return
        try:
            n = os.write(self.master, data)
        except BlockingIOError:
            n = 0
        if n < len(data):  # the host stopped reading: as on USB, the frame is lost
            self.dropped += 1


@dataclass
class Emulator:
    link: PtyLink
    script: list[ev.Event]  # events from start_at on, in log order
    occupied: int  # the board at start_at
    speed: float = 1.0
    start_at: float = 0.0
    until: float | None = None
    heartbeat: float = 1.0
    drain_timeout: float = 10.0
    yank_at: float | None = None
    yank_for: float = 0.5
    record: IO[str] | None = None
    interactive: bool = False
    stdin: IO[str] | None = None
    out: IO[str] = field(default_factory=lambda: sys.stdout)
    clock: Any = time.monotonic
    to_move: chess.Color = chess.WHITE  # the side to move at the start (interactive "clock")
    board_id: str = ""  # said at HELLO ("": made from the link's path, link_board_id)

    def __post_init__(self) -> None:
        self.t0 = self.clock()  # our millisecond clock starts here
        self.decoder = P.Decoder()
        self.sender = P.Sender()
        self.connected = False
        self.origin: float | None = None  # when log time start_at plays (the first HELLO)
        self.next = 0
        self.sent = 0
        self._heartbeat_at = 0.0
        self._yanked_until: float | None = None  # the cable is out until then
        self._yank_done = False
        self._ping_token: int | None = None
        self._ping_at = 0.0
        self._drain_started: float | None = None
        self._drained = False
        # Interactive "clock": the side the host's status LEDs show to move (None: not
        # shown since the last press), else the side after the last press.
        self._shown_to_move: chess.Color | None = None
        self._after_press = self.to_move
        self._typed = b""

    # --- time

    def ms(self, at: float) -> int:
        return int(round((at - self.t0) * 1000)) & 0xFFFFFFFF

    def log_time(self, now: float) -> float | None:
        if self.origin is None:
            return None
        return self.start_at + (now - self.origin) * self.speed

    def due(self, event: ev.Event) -> float:
        assert self.origin is not None
        return self.origin + (event.t - self.start_at) / self.speed

    # --- sending

    def send(self, mtype: int, *values: Any) -> None:
        if self.connected and self.link.is_open:
            self.link.write(self.sender.frame(mtype, *values))

    def send_snapshot(self, now: float, reason: int) -> None:
        self.send(P.SNAPSHOT, self.occupied, self.ms(now), reason)
        self._heartbeat_at = now + self.heartbeat

    def emit(self, event: ev.Event, at: float) -> None:
        """Apply an event to the board and report it (if a host is listening)."""
        ms = self.ms(at)
        if isinstance(event, (ev.Lifted, ev.Placed)):
            bit = chess.BB_SQUARES[event.square]
            placed = isinstance(event, ev.Placed)
            self.occupied = self.occupied | bit if placed else self.occupied & ~bit
            self.send(P.SQUARE, event.square, placed, ms)
        elif isinstance(event, ev.ClockPressed) and event.times is not None:
            # the wire's u32 ms is all a clock can say: a log's absurd reading as the most
            white, black = (round(min(x, 0xFFFFFFFF / 1000) * 1000) for x in event.times)
            self.send(P.CLOCK_TIMES, P.WHITE if event.side else P.BLACK, ms, white, black)
        elif isinstance(event, ev.ClockPressed):
            self.send(P.CLOCK, P.WHITE if event.side else P.BLACK, ms)
        elif isinstance(event, ev.PromotionChosen):
            self.send(P.BUTTON, _PROMOTIONS[event.piece], P.NO_SIDE, ms)
        elif isinstance(event, (ev.Resigned, ev.DrawOffered, ev.DrawAccepted, ev.DrawClaimed)):
            self.send(P.BUTTON, _BUTTONS[type(event)], P.WHITE if event.side else P.BLACK, ms)
        elif type(event) in _UNSIDED:
            self.send(P.BUTTON, _UNSIDED[type(event)], P.NO_SIDE, ms)
        elif isinstance(event, ev.Snapshot):  # the log's board reconnected here
            self.occupied = event.occupied
            self.send(P.SNAPSHOT, self.occupied, ms, P.ON_CONNECT)
        else:
            log.debug("no wire message for %r", event)
            return
        if self.connected and self.link.is_open:
            self.sent += 1

    # --- receiving

    def handle(self, msg: P.Message, now: float) -> None:
        t = msg.type
        if t == P.HELLO:
            self.connected = True  # for the replies; withdrawn on a version mismatch
            # The speed lets a host keep the log's own timeline (board_ctl's LinkBoard).
            self.send(P.HELLO_ACK, f"{EMULATOR_FIRMWARE} speed={self.speed:g}",
                      self.board_id or link_board_id(self.link.path))
            if msg.version != P.PROTOCOL_VERSION:
                self.send(P.ERROR, P.ERR_VERSION, "board speaks protocol %d, host sent %d"
                          % (P.PROTOCOL_VERSION, msg.version))
                self.connected = False
                return
            log.info("host connected: %s (%s)", msg.software, msg.ident)
            if self.origin is None:
                self.origin = now
            self.send_snapshot(now, P.ON_CONNECT)
        elif not self.connected:
            return
        elif t == P.REQUEST_SNAPSHOT:
            self.send_snapshot(now, P.ON_REQUEST)
        elif t == P.LEDS:
            self.show_leds(wire_to_leds(now - self.t0, msg.cells, msg.status, msg.buzzer), now)
        elif t == P.PING:
            self.send(P.PONG, msg.token)
        elif t == P.PONG:
            if msg.token == self._ping_token:
                self._drained = True
        elif t == P.ERROR:
            log.warning("host reports error %d: %s", msg.code, msg.text)
        elif t == P.GAP:
            log.info("%s from the host lost", count(msg.missed, "frame"))
        else:
            self.send(P.ERROR, P.ERR_UNSUPPORTED, "board does not take " + msg.name)

    def show_leds(self, frame: LedFrame, now: float) -> None:
        if frame.status.white_to_move != frame.status.black_to_move:
            self._shown_to_move = frame.status.white_to_move
        if self.record is not None:
            log_t = self.log_time(now)
            self.record.write(json.dumps({
                "t": round(frame.t, 4),
                "log_t": None if log_t is None else round(log_t, 4),
                "squares": [{"sq": chess.square_name(s.square), "colour": s.colour.name.lower(),
                             "blink": s.blink.name.lower()} for s in frame.squares],
                "status": {"white_to_move": frame.status.white_to_move,
                           "black_to_move": frame.status.black_to_move,
                           "alert": None if frame.status.alert is None
                           else frame.status.alert.name.lower(),
                           "game_over": frame.status.game_over},
                "buzzer": frame.buzzer.name.lower(),
            }) + "\n")
            self.record.flush()
        if self.interactive:
            self.print(describe_leds(frame))
            self.print(draw_board(self.occupied, frame))

    def print(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    # --- the loop

    def run(self) -> int:
        try:
            self.print(f"LINK {self.link.path} -> {self.link.open()}")
        except LinkError:
            self.link.release()
            raise
        if self.interactive:
            self.print("type `help` for commands; waiting for the host's HELLO")
        try:
            return self._loop()
        finally:
            self.link.close()
            self.link.release()
            log.info("sent %d events; host frames dropped: %d; frames the host did not take:"
                     " %d", self.sent, self.decoder.dropped, self.link.dropped)

    def _loop(self) -> int:
        stdin_open = self.interactive and self.stdin is not None
        while True:
            now = self.clock()
            self._play(now)
            self._yank(now)
            if self.connected and now >= self._heartbeat_at:
                self.send_snapshot(now, P.HEARTBEAT)
            if self._finished():
                if self._drained:
                    log.info("the host has read everything: done")
                    return 0
                if self._drain_started is None:
                    self._drain_started = now
                elif now - self._drain_started > self.drain_timeout:
                    log.warning("the host did not confirm the end within %g s", self.drain_timeout)
                    return 1
                if now >= self._ping_at and self.connected:
                    self._ping_token = random.getrandbits(32)
                    self.send(P.PING, self._ping_token)
                    self._ping_at = now + self.heartbeat
            fds: list[Any] = []
            if self.link.master is not None:
                fds.append(self.link.master)
            if stdin_open:
                fds.append(self.stdin)
            ready, _, _ = select.select(fds, [], [], max(0.0, min(self._wake(now) - now, 0.5)))
            now = self.clock()
            if self.link.master is not None and self.link.master in ready:
                for msg in self.decoder.feed(self.link.read()):
                    self.handle(msg, now)
            if stdin_open and self.stdin is not None and self.stdin in ready:
                # Whole reads from the fd: select() cannot see lines left in a TextIO buffer.
                data = os.read(self.stdin.fileno(), 4096)
                if not data:
                    return 0
                self._typed += data
                while b"\n" in self._typed:
                    line, _, self._typed = self._typed.partition(b"\n")
                    if not self.command(line.decode("utf-8", "replace"), now):
                        return 0

    def _finished(self) -> bool:
        return (not self.interactive and self.until is None and self.origin is not None
                and self.next >= len(self.script) and self._yanked_until is None)

    def _wake(self, now: float) -> float:
        """When something is next due: an event, a heartbeat, the end of a yank."""
        wake = now + 0.5
        if self.connected:
            wake = min(wake, self._heartbeat_at)
        if self.origin is not None and self.next < len(self.script):
            event = self.script[self.next]
            if self.until is None or event.t <= self.until:
                wake = min(wake, self.due(event))
        if self._yanked_until is not None:
            wake = min(wake, self._yanked_until)
        return wake

    def _play(self, now: float) -> None:
        if self.origin is None:
            return
        while self.next < len(self.script):
            event = self.script[self.next]
            if self.until is not None and event.t > self.until:
                return  # hold still at U
            if self.yank_at is not None and not self._yank_done and event.t >= self.yank_at:
                return  # the cable comes out first
            due = self.due(event)
            if due > now:
                return
            self.emit(event, due)
            self.next += 1

    def _yank(self, now: float) -> None:
        if self._yanked_until is not None:
            if now >= self._yanked_until:
                self._yanked_until = None
                self.print(f"LINK {self.link.path} -> {self.link.open()}")
            return
        log_t = self.log_time(now)
        if self.yank_at is None or self._yank_done or log_t is None or log_t < self.yank_at:
            return
        log.info("yanking the cable at log time %.3f for %g s", log_t, self.yank_for)
        self._yank_done = True
        self.link.close()
        self.connected = False  # silent until the next HELLO, like the firmware
        self.decoder.reset()
        self._yanked_until = now + self.yank_for

    # --- interactive

    def command(self, line: str, now: float) -> bool:
        """Run one typed line; False to quit."""
        words = line.lower().split()
        i = 0
        while i < len(words):
            word = words[i]
            arg = words[i + 1] if i + 1 < len(words) else ""
            i += 1
            try:
                if word in ("quit", "exit"):
                    return False
                if word in ("help", "?"):
                    self.print(HELP)
                elif word in ("board", "show"):
                    self.print(draw_board(self.occupied, None))
                elif word in ("snapshot", "snap"):
                    self.send_snapshot(now, P.ON_REQUEST)
                elif word in ("clock", "w", "white", "b", "black"):
                    side = self.side_to_press() if word == "clock" else word in ("w", "white")
                    self.emit(ev.ClockPressed(0.0, side), now)
                    self._shown_to_move, self._after_press = None, not side
                elif word == "promote":
                    i += 1
                    piece = {"q": chess.QUEEN, "r": chess.ROOK, "b": chess.BISHOP,
                             "n": chess.KNIGHT}.get(arg)
                    if piece is None:
                        raise ValueError("promote q, r, b or n")
                    self.emit(ev.PromotionChosen(0.0, piece), now)
                elif word in ("resign", "offer", "draw", "accept", "claim"):
                    i += 1
                    if arg not in ("w", "white", "b", "black"):
                        raise ValueError(f"{word} w|b")
                    kinds: dict[str, Callable[[float, chess.Color], ev.Event]] = {
                        "resign": ev.Resigned, "offer": ev.DrawOffered,
                            "draw": ev.DrawOffered, "accept": ev.DrawAccepted,
                            "claim": ev.DrawClaimed}
                    self.emit(kinds[word](0.0, arg in ("w", "white")), now)
                elif word == "arbiter":
                    self.send(P.BUTTON, P.ARBITER, P.NO_SIDE, self.ms(now))
                elif word in ("takeback", "hint"):
                    self.emit(ev.TakebackAsked(0.0) if word == "takeback" else ev.HintAsked(0.0),
                              now)
                elif word == "garbage":
                    i += 1
                    n = int(arg) if arg.isdigit() else 16
                    if self.link.is_open:  # line noise, as from a REPL banner
                        self.link.write(bytes(random.getrandbits(8) for _ in range(n)))
                else:
                    self.squares(word, now)
            except ValueError as exc:
                self.print(f"? {exc}  (type `help`)")
        if not self.connected:
            self.print("(no host connected: it will see the board in its next snapshot)")
        return True

    def side_to_press(self) -> chess.Color:
        """The lever a player presses: the side the status LEDs show to move, or, before
        the host has answered the last press (several commands on one line), the other
        side than the one that pressed."""
        if self._shown_to_move is not None:
            return self._shown_to_move
        return self._after_press

    def squares(self, word: str, now: float) -> None:
        names = word.replace("-", "").replace("x", "")
        if len(names) == 2 and names in chess.SQUARE_NAMES:
            sq = chess.parse_square(names)
            occupied = bool(self.occupied & chess.BB_SQUARES[sq])
            self.emit(ev.Lifted(0.0, sq) if occupied else ev.Placed(0.0, sq), now)
        elif len(names) == 4 and names[:2] in chess.SQUARE_NAMES and names[2:] in chess.SQUARE_NAMES:
            src, dst = chess.parse_square(names[:2]), chess.parse_square(names[2:])
            if self.occupied & chess.BB_SQUARES[dst]:
                self.emit(ev.Lifted(0.0, dst), now)  # the captured piece comes off first
            self.emit(ev.Lifted(0.0, src), now)
            self.emit(ev.Placed(0.0, dst), now)
        else:
            raise ValueError(f"unknown command {word!r}")


HELP = """\
e2        toggle the piece on e2 (lift if occupied, else place)
e2e4      lift e2 and place on e4 (lifting a piece on e4 first: a capture)
clock     press the lever of the side to move (as the status LEDs show it);
          w / b press white's / black's
promote n set the promotion selector (q, r, b, n)
resign w  | offer w | accept b | claim w   (w or b)
arbiter   the arbiter button;  takeback  |  hint   (against a computer)
snapshot  send a snapshot;  board  show the board;  garbage 20  send line noise
quit"""


def describe_leds(frame: LedFrame) -> str:
    lights = ", ".join(
        chess.square_name(s.square) + " " + s.colour.name.lower()
        + (f" ({s.blink.name.lower()})" if s.blink else "") for s in frame.squares)
    st = frame.status
    status = [text for on, text in ((st.white_to_move, "white to move"),
                                    (st.black_to_move, "black to move"),
                                    (st.game_over, "game over")) if on]
    if st.alert is not None:
        status.append(f"alert ({st.alert.name.lower()})")
    buzzer = "" if frame.buzzer == Buzzer.SILENT else f" | buzzer {frame.buzzer.name.lower()}"
    return f"LEDS {lights or 'all dark'} | {', '.join(status) or 'no status'}{buzzer}"


def draw_board(occupied: int, frame: LedFrame | None) -> str:
    """Rank 8 at the top; `o` occupied, `.` empty, then the LED colour's initial
    (lower case when blinking)."""
    lights = {s.square: s for s in (frame.squares if frame else ())}
    rows = []
    for rank in range(7, -1, -1):
        cells = []
        for file in range(8):
            sq = chess.square(file, rank)
            mark = "o" if occupied & chess.BB_SQUARES[sq] else "."
            light = lights.get(sq)
            if light is not None:
                initial = light.colour.name[0]
                mark += initial.lower() if light.blink else initial
            else:
                mark += " "
            cells.append(mark)
        rows.append(f"{rank + 1} " + " ".join(cells))
    rows.append("  " + " ".join(f + " " for f in "abcdefgh"))
    return "\n".join(rows)


def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="board-emulator",
        description="Play the board's microcontroller on a pseudo-terminal. Exit status: "
                    "0 done (the log played and read by the host, or stopped); 1 the host "
                    "did not read it all, or another board-emulator has the link; 2 a bad "
                    "option, log or link (its folder missing).")
    p.add_argument("--link", required=True, type=Path,
                   help="symlink to create for the pty (the host opens this path)")
    p.add_argument("--log", type=Path, help="sensor log (JSON lines) to play")
    p.add_argument("--speed", type=_positive, default=1.0, help="play N times real speed")
    p.add_argument("--start-at", type=float, default=0.0, metavar="S",
                   help="start at log time S (the board as it was then)")
    p.add_argument("--until", type=float, metavar="U", help="hold still at log time U")
    p.add_argument("--record", type=Path, help="write the LED frames received here (JSON lines)")
    p.add_argument("--heartbeat", type=_positive, default=1.0, help="seconds between snapshots")
    p.add_argument("--drain-timeout", type=_positive, default=10.0,
                   help="give up waiting for the host's PONG after this many seconds")
    p.add_argument("--yank-at", type=float, metavar="T",
                   help="pull the cable at log time T (the pty goes away)")
    p.add_argument("--yank-for", type=_positive, default=0.5, help="seconds the cable stays out")
    p.add_argument("--external-clock", metavar="BASE[+INC]",
                   help="the board has an external clock set to BASE seconds (+INC a move) "
                        "that reports its times with every press")
    p.add_argument("--interactive", action="store_true", help="type the board's events")
    play = p.add_argument_group("playing a computer (the person's side; instead of --log)")
    play.add_argument("--play", choices=("auto", "white", "black"),
                      help="play the person's side of games against the host's computer "
                           "opponent: its own moves, and the computer's it reads from the "
                           "LEDs (auto: the side the LEDs show as the person's)")
    play.add_argument("--fen", default=chess.STARTING_FEN, help="the start position")
    play.add_argument("--seed", type=int, help="seed of the person's choices and hands")
    play.add_argument("--player", choices=("random", "engine"), default="random",
                      help="the person's moves: random legal moves, or a weak engine")
    play.add_argument("--player-engine", default="stockfish", metavar="ENGINE",
                      help="the weak engine for --player engine (name or path)")
    play.add_argument("--clock", action="store_true",
                      help="the person presses his clock lever after each move")
    play.add_argument("--games", type=int, default=1, metavar="N",
                      help="games to play, setting the pieces up again between (0: until "
                           "stopped)")
    play.add_argument("--remember", type=Path, metavar="FILE",
                      help="a game the host resumes: its pieces stand where it left them "
                           "and the person remembers it (JSON: fen, moves in UCI, the "
                           "squares touched in the turn under way, the squares occupied); "
                           "board-ctl's emulator backend writes it when it has an "
                           "unfinished game")
    play.add_argument("--script", default="", metavar="ITEMS",
                      help="buttons and slips: hint@N, takeback@N, offer@N, resign@N "
                           "(his N-th move), mistake@N (the computer's N-th move put on "
                           "a wrong square first)")
    p.add_argument("--board-id", default="", metavar="ID",
                   help="the board id it says to the host (default: one made from the "
                        "link's path, the same at every run)")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="board-emulator: %(message)s", stream=sys.stderr)
    if args.play is not None:
        return _play(args, parser)
    if args.log is None and not args.interactive:
        parser.error("--log is required (or --interactive, or --play)")
    if args.until is not None and args.until < args.start_at:
        parser.error("--until must not be before --start-at")
    script: list[ev.Event] = []
    occupied = chess.Board().occupied
    to_move = chess.WHITE
    if args.log is not None:
        try:
            sensor_log = load_sensor_log(args.log)
        except SensorLogError as exc:  # unreadable, or a start no game can have
            where = f"{args.log}:" if exc.line is not None else ""
            parser.exit(2, f"board-emulator: {where}{exc}\n")
        for error in sensor_log.errors:
            log.warning("%s: %s (skipped)", args.log, error)
        occupied = chess.Board(sensor_log.start.fen).occupied
        to_move = chess.Board(sensor_log.start.fen).turn
        played: Iterable[ev.Event] = sensor_log.events
        if args.external_clock:
            try:
                device = ClockDevice.parse(args.external_clock)
            except ValueError as exc:
                parser.error(str(exc))
            device.running = chess.Board(sensor_log.start.fen).turn == chess.WHITE
            played = with_clock_times(played, device)
        for event in played:
            if event.t >= args.start_at:
                script.append(event)
            elif isinstance(event, ev.Lifted):
                occupied &= ~chess.BB_SQUARES[event.square]
            elif isinstance(event, ev.Placed):
                occupied |= chess.BB_SQUARES[event.square]
            elif isinstance(event, ev.Snapshot):
                occupied = event.occupied
    if args.interactive:
        script = []
    record = args.record.open("w", encoding="utf-8") if args.record else None
    # SIGTERM unwinds like Ctrl-C, so the link is removed on the way out.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    emulator = Emulator(
        PtyLink(args.link), script, occupied, speed=args.speed, start_at=args.start_at,
        until=args.until, heartbeat=args.heartbeat, drain_timeout=args.drain_timeout,
        yank_at=args.yank_at, yank_for=args.yank_for, record=record,
        interactive=args.interactive, stdin=sys.stdin, to_move=to_move,
        board_id=args.board_id)
    try:
        return emulator.run()
    except LinkError as exc:
        print(f"board-emulator: {exc}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        return 130
    finally:
        if record is not None:
            record.close()


def remembered_game(path: Path) -> tuple[Remembered, chess.Bitboard] | None:
    """--remember FILE: the game the host resumes, and where its pieces stand (a real
    board keeps them through a power cut): what the person remembers, and the squares
    the emulator starts occupied. None (said on stderr) if the file cannot be read."""
    from firmware_bridge.player import Remembered
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        board = chess.Board(data["fen"])
        moves = []
        for uci in data["moves"]:
            move = chess.Move.from_uci(uci)
            if move not in board.legal_moves:
                raise ValueError(f"{uci} is not legal in {board.fen()}")
            board.push(move)
            moves.append(move)
        touched = [chess.parse_square(name) for name in data.get("touched", [])]
        occupied = (chess.SquareSet(chess.parse_square(name) for name in data["occupied"])
                    if "occupied" in data else chess.SquareSet(board.occupied))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("person: cannot read the game to remember in %s: %s", path, exc)
        return None
    log.info("person: I remember a game of %d moves", len(moves))
    return Remembered(data["fen"], moves, touched), int(occupied)


def _play(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """--play: a person at the board plays the host's computer opponent."""
    import random as random_

    from board_ctl.errors import BoardCtlError
    from firmware_bridge.player import Person, PlayerEmulator, Script, engine_chooser

    try:
        board = chess.Board(args.fen)
        script = Script.parse(args.script)
    except ValueError as exc:
        parser.error(str(exc))
    seed = args.seed if args.seed is not None else random_.randrange(2**32)
    log.info("person: seed %d", seed)
    chooser, close = None, None
    if args.player == "engine":
        try:
            chooser, close = engine_chooser(args.player_engine, seed)
        except (BoardCtlError, OSError) as exc:
            parser.exit(2, f"board-emulator: {exc}\n")
    kept = remembered_game(args.remember) if args.remember else None
    occupied, memory = board.occupied, None
    if kept is not None:  # a resumed game: its pieces as it left them, he knows it
        remembered, occupied = kept
        memory = lambda: remembered  # noqa: E731
    person = Person(board.fen(), seed=seed, chooser=chooser, use_clock=args.clock,
                    side=None if args.play == "auto" else args.play == "white",
                    script=script, memory=memory, occupied=occupied)
    record = args.record.open("w", encoding="utf-8") if args.record else None
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    emulator = PlayerEmulator(
        PtyLink(args.link), [], occupied, speed=args.speed, heartbeat=args.heartbeat,
        drain_timeout=args.drain_timeout, yank_at=args.yank_at, yank_for=args.yank_for,
        record=record, board_id=args.board_id)
    emulator.person = person
    emulator.games = args.games
    try:
        return emulator.run()
    except LinkError as exc:
        print(f"board-emulator: {exc}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        return 130
    finally:
        for line in person.log:
            log.info("person: %s", line)
        if record is not None:
            record.close()
        if close is not None:
            close()


if __name__ == "__main__":
    sys.exit(main())
