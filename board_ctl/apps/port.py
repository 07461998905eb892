"""One app port: its line, its protocol session, and the position its app is shown, in
a thread of its own.

The service's loop thread only hands each new state to `post` (a deque and a wake-up
byte): nothing an app does, or fails to do, ever delays an LED frame. The thread waits on
the line and the wake-up pipe with a deadline (the next clock reading or automatic report,
a request cut short, the setup debounce, reopening a line that went away), and:

- turns each state into the pieces its app is shown (`AppPosition`) and sends what the
  protocol sends on a change (field updates, a status report, the clock);
- answers requests; the squares an app asks to light go to the service through
  `on_lights`, what it asks its clock to show through `on_note`;
- writes without blocking: an app that stops reading has its unread output dropped
  past `OUTBOX_LIMIT` bytes (counted) and gets the whole board again when it reads.

Before the first game (and after a new game is asked for) the service publishes the raw
occupancy, which the referee has not debounced: the port holds a change until the board
has stood still `SETUP_SETTLE` seconds of game time, so no bounce reaches the app there
either.
"""

from __future__ import annotations

import collections
import logging
import os
import select
import threading
import time
from collections.abc import Callable
from typing import Protocol

import chess

from board_ctl.apps.lights import square_lights
from board_ctl.apps.position import AppPosition
from board_ctl.apps.session import Lights, Output
from board_ctl.apps.snapshot import ClockState, Snapshot
from board_ctl.apps.transport import LineGone, Transport
from board_ctl.core.debounce import DEFAULT_SETTLE
from board_ctl.core.effects import SquareLight
from board_ctl.errors import HardwareError
from board_ctl.service.view import ViewState
from board_ctl.words import count

log = logging.getLogger(__name__)

OUTBOX_LIMIT = 16384  # bytes an app may leave unread before they are dropped
REOPEN_EVERY = 1.0  # s between tries to open a line that went away
SETUP_SETTLE = DEFAULT_SETTLE  # s of game time the raw occupancy must hold while setting up
NOTES_PER_SECOND = 5  # clock commands shown at most, per port (an app may send many)
IDLE_WAIT = 1.0  # s: the thread wakes at least this often
STOP_FLUSH = 0.5  # s a stopping port waits for its app to take the last changes


class Session(Protocol):
    name: str
    answered: int

    @property
    def ignored(self) -> int: ...

    def receive(self, data: bytes, now: float, board: Snapshot) -> Output: ...

    def deadline(self) -> float | None: ...

    def expire(self, now: float, board: Snapshot) -> Output: ...

    def changed(self, changes: tuple[tuple[chess.Square, chess.Piece | None], ...],
                board: Snapshot, now: float) -> bytes: ...

    def resync(self, board: Snapshot, now: float) -> bytes: ...

    def due(self, now: float, board: Snapshot) -> float | None: ...

    def tick(self, now: float, board: Snapshot) -> bytes: ...

    def reset(self) -> None: ...


LightsSink = Callable[[str, tuple[SquareLight, ...]], None]
NoteSink = Callable[[str], None]


class AppPort:
    def __init__(self, label: str, protocol: str, transport: Transport, session: Session, *,
                 start_fen: str = chess.STARTING_FEN, scale: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label  # "DGT", "ChessLink": how messages name the port
        self.protocol = protocol  # "the DGT board protocol"
        self.transport = transport
        self.session = session
        self.scale = scale  # the game's time runs this many times faster than the wall's
        self._now = clock
        self.position = AppPosition(start_fen)
        self.clock_state = ClockState(scale=scale)
        self.on_lights: LightsSink = lambda source, lights: None
        self.on_note: NoteSink = lambda text: None
        self.dropped = 0  # times unread output was dropped
        self.guesses = 0  # squares reported as a best reading
        self.reopened = 0
        self._states: collections.deque[tuple[ViewState, float, float]] = collections.deque()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._outbox = bytearray()
        self._setup: tuple[str, chess.Bitboard, float] | None = None  # (fen, occ, since)
        self._phase = "setup"
        self._app_lights: Lights | None = None
        self._shown_lights: tuple[SquareLight, ...] = ()
        self._notes: collections.deque[float] = collections.deque()
        self._last_note = ""
        self._retry_at: float | None = None

    # ------------------------------------------------------------------ life cycle

    @property
    def name(self) -> str:
        return self.transport.name

    def open(self) -> str:
        """Open the line now; a pty that cannot be made raises HardwareError, a device
        that is not there yet is tried again from the thread. What to tell the user."""
        try:
            self.transport.open()
        except HardwareError as exc:
            if self.transport.is_pty:
                raise
            self._retry_at = self._now() + REOPEN_EVERY
            return (f"{self.label} port {self.name}: not there yet ({exc}); opened when it "
                    f"appears")
        where = f" ({self.transport.device})" if self.transport.is_pty else ""
        return f"{self.protocol} on {self.name}{where}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"app-{self.session.name}",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(5.0)
        self.transport.close()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)

    def summary(self) -> str:
        s = self.session
        return (f"{self.label} port {self.name}: {count(s.answered, 'request')} answered, "
                f"{s.ignored} ignored (unknown, malformed or cut short), "
                f"{count(self.guesses, 'square')} reported as a best reading, output "
                f"dropped {count(self.dropped, 'time')}, line reopened "
                f"{count(self.reopened, 'time')}")

    # ------------------------------------------------------------------ from the service

    def post(self, state: ViewState, now: float, scale: float = 1.0) -> None:
        """A new state (from the service's loop thread: only queued), published at `now`
        with the game's time running `scale` times faster than the wall's."""
        self._states.append((state, now, scale))
        self._wake()

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass  # already woken (or closing)

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._step()
            except LineGone as exc:
                self._gone(str(exc))
            except Exception:  # a bug here must not end the port's thread silently
                log.exception("%s port %s: unexpected error; going on", self.label,
                              self.name)
                time.sleep(0.1)
        self._last_words()

    def _last_words(self) -> None:
        """Stopping: the states still queued (the game's end) reach the app first, as far
        as it reads them within STOP_FLUSH seconds."""
        try:
            now = self._now()
            self._take_states(now)
            if self._setup is not None:
                fen, occupied, _ = self._setup
                self._setup = None
                self._apply(fen, occupied, now)
            deadline = now + STOP_FLUSH
            while self._outbox and self.transport.is_open and self._now() < deadline:
                self._flush(self._now())
                if self._outbox:
                    select.select([], [self.transport.fileno()], [], 0.05)
        except LineGone:
            pass

    def _step(self) -> None:
        now = self._now()
        readers = [self._wake_r]
        writers = []
        if self.transport.is_open:
            readers.append(self.transport.fileno())
            if self._outbox:
                writers.append(self.transport.fileno())
        deadline = self._deadline(now)
        timeout = IDLE_WAIT if deadline is None else min(max(deadline - now, 0.0), IDLE_WAIT)
        ready, _, _ = select.select(readers, writers, [], timeout)
        if self._wake_r in ready:
            try:
                os.read(self._wake_r, 4096)
            except BlockingIOError:
                pass
        now = self._now()
        self._take_states(now)
        if self._setup is not None and now >= self._setup[2] + SETUP_SETTLE / self.scale:
            fen, occupied, _ = self._setup
            self._setup = None
            self._apply(fen, occupied, now)
        if self.transport.is_open and self.transport.fileno() in ready:
            data = self.transport.read()
            if data:
                self._handle(self.session.receive(data, now, self._snapshot()))
        if self.transport.is_open:
            limit = self.session.deadline()
            if limit is not None and now >= limit:
                self._handle(self.session.expire(now, self._snapshot()))
            self._outbox += self.session.tick(now, self._snapshot())
            self._flush(now)
        elif self._retry_at is not None and now >= self._retry_at:
            self._reopen(now)

    def _deadline(self, now: float) -> float | None:
        times = []
        if self._setup is not None:
            times.append(self._setup[2] + SETUP_SETTLE / self.scale)
        if self.transport.is_open:
            for t in (self.session.deadline(), self.session.due(now, self._snapshot())):
                if t is not None:
                    times.append(t)
        elif self._retry_at is not None:
            times.append(self._retry_at)
        return min(times) if times else None

    def _snapshot(self) -> Snapshot:
        return Snapshot(self.position.pieces, self.clock_state)

    def _take_states(self, now: float) -> None:
        while self._states:
            state, at, self.scale = self._states.popleft()
            board = chess.Board(state.fen)
            white, black = state.clocks
            self.clock_state = ClockState(white, black, state.running, at, self.scale,
                                          board.turn)
            self._phase = state.phase
            if state.phase == "setup":  # raw occupancy: hold it until it stands still
                held = self._setup
                if held is None or (held[0], held[1]) != (state.fen, state.occupied):
                    self._setup = (state.fen, state.occupied, at)
                continue
            self._setup = None
            self._apply(state.fen, state.occupied, now)

    def _apply(self, fen: str, occupied: chess.Bitboard, now: float) -> None:
        update = self.position.update(fen, occupied)
        for guess in update.guesses:
            self.guesses += 1
            if self._phase == "playing":
                log.warning("%s port %s: %s", self.label, self.name, guess.text())
        if self.transport.is_open:
            self._outbox += self.session.changed(update.changes, self._snapshot(), now)
        if update.changes:
            self._show_lights()

    def _handle(self, out: Output) -> None:
        self._outbox += out.data
        if out.lights is not None:
            self._app_lights = out.lights
            self._show_lights()
        for note in out.notes:
            self._note(note)

    def _show_lights(self) -> None:
        lights = self._app_lights
        if lights is None:
            return
        shown = square_lights(lights, self.position.pieces, self.position.game.turn)
        if shown != self._shown_lights:
            self._shown_lights = shown
            self.on_lights(self.label, shown)

    def _note(self, note: str) -> None:
        now = self._now()
        while self._notes and now - self._notes[0] > 1.0:
            self._notes.popleft()
        if note == self._last_note or len(self._notes) >= NOTES_PER_SECOND:
            return
        self._notes.append(now)
        self._last_note = note
        self.on_note(f"{self.label} app: {note}")

    def _flush(self, now: float) -> None:
        if not self._outbox:
            return
        written = self.transport.write(bytes(self._outbox))
        del self._outbox[:written]
        if len(self._outbox) > OUTBOX_LIMIT:  # the app stopped reading
            self._outbox.clear()
            self.dropped += 1
            self._outbox += self.session.resync(self._snapshot(), now)

    # ------------------------------------------------------------------ a line that went away

    def _gone(self, reason: str) -> None:
        self.transport.close()
        self._outbox.clear()
        self.session.reset()
        self._retry_at = self._now() + REOPEN_EVERY
        log.warning("%s port: %s; opening it again when it returns", self.label, reason)
        self.on_note(f"{self.label} port {self.name} went away ({reason}); opening it "
                     f"again when it returns")

    def _reopen(self, now: float) -> None:
        try:
            self.transport.open()
        except HardwareError:
            self._retry_at = now + REOPEN_EVERY
            return
        self._retry_at = None
        self.reopened += 1
        log.warning("%s port %s: open again", self.label, self.name)
        self.on_note(f"{self.label} port {self.name} is open again")
