"""The service loop: one queue, one loop thread.

The board backend's threads only put raw events (and link messages) on the queue; this
loop takes everything waiting there at once (a batch) and

1. records each raw event in the current game's sensor log (written per line),
2. feeds it to the referee, staging the event and its effects in the game's journal,
3. makes the batch durable: one fsync of the journal for the whole batch (group
   commit: the promise "on disk before shown" holds at the cost of one fsync per batch,
   not one per raw event),
4. sends the resulting LED frames to the board's square LEDs and the Pi's status LEDs
   and buzzer (first, so nothing delays them),
5. shows the view and the observers (app ports, publishers) every state the batch went
   through, in order, not only the last: a position that lasted less than the batch's
   wait (a press and the reply's first lift, behind a slow fsync) is still shown,
6. at the end of a game writes the PGN and the report.

With an archive (`board-ctl run --data-dir`; the service locks it), every game also has
a folder there and a crash-safe journal. A disk that fills up, or a data directory
deleted during a game, does not stop the game: the operator is told which file and which
disk (log, view, the status alert LED blinking fast until the next game); what cannot be
written waits in memory and is written as soon as the disk takes it again; a deleted
journal is written again from what the service holds. At start-up, an unfinished game
in the archive (the service was killed, or the power went) is resumed from its journal
instead of waiting for a new one: its
referee is rebuilt from the journal's events, its timeline goes on where the journal
stops (the time away is charged to nobody), and the board's snapshot at connection is
reconciled by the referee (the LEDs guide the players back to the game's position, and a
move completed while the power was off is recognised).

A game starts when the board shows the start position (at once when it is set up at
connection); after a result, setting the pieces up again starts the next game. With
`once`, the service stops when the game ends or when the board has nothing more to
report (the emulator played its log, or the link stayed away `lost_timeout` s).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import logging
import queue
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import chess

from board_ctl.core import events as ev
from board_ctl.core.effects import (
    Blink,
    Colour,
    Effect,
    LedFrame,
    Remote,
    SquareLight,
    StatusLights,
)
from board_ctl.archive import JOURNAL, Archive, DataDirLock, GameEntry
from board_ctl.core.leds import led_frame
from board_ctl.core.profiles import PROFILES, Profile
from board_ctl.core.referee import Referee
from board_ctl.errors import BoardCtlError
from board_ctl.journal import DAMAGED, JournalWriter
from board_ctl.opponent.messages import EngineFailed, EngineReply
from board_ctl.sensorlog import StartInfo
from board_ctl.service.backends import Board
from board_ctl.service.game import GameFiles, GameSession, OutputNamer, rebuilt
from board_ctl.service.messages import BoardDone, Command, LinkDown, LinkUp, NewGame
from board_ctl.storage import (
    AppendFile,
    StorageError,
    describe,
    fsync_directory,
    make_directory,
    unique_name,
)
from board_ctl.service.applights import compose
from board_ctl.service.sdnotify import Notifier
from board_ctl.service.statuslights import StatusOutputs
from board_ctl.service.view import NullView, View, ViewState
from board_ctl.words import count

if TYPE_CHECKING:  # the engine's driver is loaded only when a game has an opponent
    from board_ctl.opponent.opponent import Opponent

log = logging.getLogger(__name__)

POLL = 0.25  # s: the loop wakes at least this often (stop requests, watchdog, timeouts)
# Squares an unfinished game's position may differ by, at the board's first report, and
# still be the position (a castling made while the power was off changes four).
NEAR_POSITION = 4
# `board-ctl run --once`'s exit status when the engine has given up: the game is saved
# unfinished (and stays resumable in the archive).
ENGINE_GAVE_UP = 3
# Stops that leave the game in progress resumable (not ended): a signal, a failed engine.
STOPPED = "stopped"
STOPPED_ENGINE = "the engine gave up"
BATCH = 256  # queue items at most in one batch (one fsync): the LEDs never wait long
STORAGE_CHECK_EVERY = 1.0  # s: files deleted under the service, writes to retry
# The disk's work no LED waits for is done once the board has been still this long (s)
# (a player thinking), and at the latest this long after it was put off.
DISK_IDLE, DISK_LATEST = 0.3, 10.0


@dataclass(frozen=True)
class RunOptions:
    once: bool = False
    lost_timeout: float = 3.0  # with once: a board away this long has finished
    linger: float = 1.5  # with once: after the result, read on until the board is quiet


def setup_frame(t: float, occupied: chess.Bitboard, expected: chess.Bitboard) -> LedFrame:
    """Guidance while setting up: green where a piece is missing, red where one is extra."""
    lights = [SquareLight(sq, Colour.GREEN, Blink.SLOW)
              for sq in chess.scan_forward(expected & ~occupied)]
    lights += [SquareLight(sq, Colour.RED, Blink.SLOW)
               for sq in chess.scan_forward(occupied & ~expected)]
    return LedFrame(t, tuple(sorted(lights, key=lambda light: light.square)), StatusLights())


@dataclass(slots=True)
class Staged:
    """Effects fed in a batch, to be shown at its end with the state they left."""

    effects: Sequence[Effect]
    session: GameSession
    state: ViewState | None = None  # (filled in once something else is taken, or at the end)


@dataclass
class HeldGame:
    """This board's unfinished game, found at start-up: it goes on when the board shows
    its position (or a new game starts when the board shows the start position)."""

    entry: GameEntry
    journal: JournalWriter  # reopened, to go on with it or to abandon it
    referee: Referee  # rebuilt from the journal: where the game stood
    moves: list[str]  # SAN of its moves
    looked: bool = False  # the board's first report was judged

    def summary(self) -> str:
        return moves_summary(self.moves)


def moves_summary(moves: Sequence[str]) -> str:
    """ "6 plies (1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6)": how many (counted as `board-ctl games`
    counts them), and the last few."""
    shown = " ".join(f"{i // 2 + 1}. {san}" if i % 2 == 0 else san
                     for i, san in enumerate(moves[-6:], start=len(moves[:-6])))
    return (f"{count(len(moves), 'ply')} ({'... ' if len(moves) > 6 else ''}"
            f"{shown or 'none yet'})")


class Service:
    def __init__(self, board: Board, *, profile: Profile, start: StartInfo,
                 namer: OutputNamer, options: RunOptions = RunOptions(),
                 view: View | None = None, status: StatusOutputs | None = None,
                 notifier: Notifier | None = None, archive: Archive | None = None,
                 observers: Sequence[View] = (), opponent: Opponent | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.board = board
        self.opponent = opponent  # a computer playing one side of every game
        if opponent is not None:
            opponent.deliver = self.submit  # its answers come back through the queue
        self.archive = archive  # every game's folder and journal (None: no archive)
        self.profile = profile
        self.start = start
        self.namer = namer
        self.options = options
        self.view: View = view or NullView()
        # Consumers beside the view (publishers, endpoints): shown the same states and
        # messages from the loop thread, so each must hand its work to its own thread.
        self.observers: tuple[View, ...] = tuple(observers)
        self.status = status
        self.notifier = notifier or Notifier({})
        self._clock = clock
        self.queue: queue.Queue[object] = queue.Queue()
        self.session: GameSession | None = None
        self._held: HeldGame | None = None  # this board's unfinished game, not yet resumed
        self._after_shown: list[Callable[[], None]] = []  # disk work no LED waits for
        self._after_shown_since: float | None = None  # (wall clock) put off since then
        self.games: list[GameFiles] = []  # every game's files (a finished game's referee
        # and record are let go: the service runs for months)
        self.last_session: GameSession | None = None  # the latest game, also once closed
        self.expected = chess.Board(start.fen).occupied
        self.occupied: chess.Bitboard | None = None  # raw, from the events (None: not seen)
        self.frame: LedFrame | None = None  # the referee's (or the setup guidance's)
        self.shown: LedFrame | None = None  # what the LEDs show: the frame, and apps' lights
        self.app_lights: dict[str, tuple[SquareLight, ...]] = {}  # by app port
        self.link = "connected"
        self.exit_code = 0
        self.error: str | None = None  # why exit_code is not 0
        self.stop_reason = ""
        self._stop_requested = False
        self._done = False
        self._closed = False
        self._lost_since: float | None = None
        self._over_since: float | None = None
        self._last_event = 0.0  # wall clock of the last board event (not a Tick)
        self._t = 0.0  # link time of the last item
        # (link time, wall clock) of the last board event; None before the board's first
        self._event_at: tuple[float, float] | None = None
        self._shown_occupied: chess.Bitboard | None = None
        # effects fed but not yet shown, each with its session and the state it left:
        # they wait for the batch's journal commit, then every state is shown in turn
        # (the state is filled in when the next item is taken, or at the flush: a batch of
        # one event, the common case, costs no state before its LED frame)
        self._pending: list[Staged] = []
        self._lock: DataDirLock | None = None
        self._storage_errors: dict[Path, str] = {}  # files the disk refuses now
        self._storage_fault = False  # the alert LED blinks fast until the next game
        self._next_storage_check = 0.0

    # ------------------------------------------------------------------ running

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def submit(self, item: object) -> None:
        """Put an item on the loop's queue (safe from any thread)."""
        self.queue.put(item)

    def request_stop(self) -> None:
        """Ask the loop to finish the game and stop (safe from a signal handler)."""
        self._stop_requested = True

    def run(self) -> int:
        """Connect, loop until done, shut down; the exit status."""
        try:
            self.open()
        except BaseException:
            if self.opponent is not None:  # its process is ours to end, on every way out
                self.opponent.close()
            raise
        try:
            while self.step():
                pass
        finally:
            self.close()
        return self.exit_code

    def open(self) -> None:
        """Take the data directory, check the output directories, resume an unfinished
        game, connect the board. Raises BoardCtlError (the data directory in use, a
        directory that cannot be written, no board) having left nothing behind."""
        if self.archive is not None:
            self._lock = self.archive.lock()
        started = False
        try:
            self._check_outputs()
            self._adopt_prepared()
            self._board_keeps_its_game()
            self.board.start(self.queue.put)  # raises BoardCtlError if the board is not there
            started = True
            if self.opponent is not None:  # it thinks in real seconds, the game's / the scale
                self.opponent.scale = float(getattr(self.board, "scale", 1.0) or 1.0)
            # Before the loop takes the board's first events (they wait on the queue):
            # they belong to the resumed game.
            self._recover()
        except BaseException:
            if started:
                self.board.stop()
            self._release()
            raise
        self._prepare()
        held = self._held
        if held is not None:  # show the game where it stood until the board reports
            self._send_frame(led_frame(held.referee.now, held.referee.led_view()))
            self._publish(())
        self._message(f"board: {self.board.description}")
        self.notifier.ready(f"board {self.board.description}")
        self._opponent_update()

    def _check_outputs(self) -> None:
        """Each game's PGN, report and sensor log must be writable where they go: found
        now, not when the first game starts (and not by leaving a game behind)."""
        for directory in self.namer.directories():
            try:
                make_directory(directory)
                with tempfile.TemporaryFile(dir=directory):
                    pass
            except OSError as exc:
                raise StorageError(describe(exc, "the games' files in", directory.absolute())
                                   + " (set [output] dir, or --pgn)") from None

    def step(self, timeout: float = POLL) -> bool:
        """Handle everything on the queue (waiting up to `timeout` for the first item),
        as one batch; False once done."""
        if self._stop_requested and not self._done:
            self._end(STOPPED)
        if self._done:
            return False
        try:
            item = self.queue.get(timeout=timeout) if timeout > 0 else self.queue.get_nowait()
        except queue.Empty:
            item = None
        taken = 0
        while item is not None:
            self._take(item)
            taken += 1
            try:
                item = self.queue.get_nowait() if taken < BATCH else None
            except queue.Empty:
                item = None
        self._flush()
        self._housekeeping()
        return not self._done

    def close(self) -> None:
        """Finish the game in progress (PGN written), stop the board and the outputs."""
        if self._closed:
            return
        self._closed = True
        self._shutdown()

    def handle(self, item: object) -> None:
        """One queue item, durable and shown (the loop's body; tests may call it)."""
        self._take(item)
        self._flush()

    def _take(self, item: object) -> None:
        """One queue item: fed, staged in the journal; its effects wait for `_flush`."""
        self._states_staged(self._pending)
        if isinstance(item, (LinkDown, LinkUp, BoardDone)):
            self._flush()
            self._board_message(item)
            return
        if isinstance(item, NewGame):
            self._flush()
            self._new_game(item)
            return
        if isinstance(item, (EngineReply, EngineFailed)):
            self._engine_reply(item)
            return
        if isinstance(item, Command):
            self._flush()  # what came before it is durable and shown first
            item.run(self)
            self._opponent_update()  # (an arbiter's order may have ended the game)
            return
        event = cast(ev.Event, item)
        tick = isinstance(event, ev.Tick)
        if not tick:
            self._last_event = self._clock()
            self._event_at = (event.t, self._last_event)
            self._track(event)
        self._t = event.t
        if self._held is not None and not tick:
            judged = self._judge_held(event)
            if judged is None:
                return
            event = judged
        session = self.session
        if session is not None and session.over and not tick and self._set_up_again():
            self._flush()
            self._close_session(later=True)  # its files' syncs once the new game shows
            session = None
        if session is None:
            if not tick and self.occupied == self.expected:
                self._begin_game(event.t)
            elif not tick:
                self._setup_guidance(event.t)
            return
        if self._remote_button(event, session):
            return
        effects = session.feed(event)
        if effects or session.referee.occupied != self._shown_occupied:
            self._stage(effects, session)  # a piece lifted or put down: shown
        if self.opponent is not None:
            if isinstance(event, (ev.HintAsked, ev.TakebackAsked)) and not (
                    self.profile.hints and self.profile.takebacks):
                self._message("takebacks and hints are for the casual profile "
                              "(--profile casual)")
            self._opponent_update()

    def _stage(self, effects: Sequence[Effect], session: GameSession) -> None:
        """Effects to show at the end of the batch, with the state they leave: a loop held
        up (a slow disk) takes many events at once, and a position that lasted less than
        that wait is still shown to the apps and the hall."""
        self._pending.append(Staged(effects, session))
        self._shown_occupied = session.referee.occupied

    def _states_staged(self, pending: list[Staged]) -> None:
        """The state now is the one the last staged effects left (nothing fed since)."""
        if pending and pending[-1].state is None:
            pending[-1].state = self.state()

    def _flush(self) -> None:
        """The batch on disk (one journal fsync), then shown: LED frames first."""
        pending, self._pending = self._pending, []
        sessions = {id(staged.session): staged.session for staged in pending}
        if self.session is not None and self.session.waiting:  # events with no effect yet
            sessions[id(self.session)] = self.session
        for session in sessions.values():
            self._commit(session)
        for staged in pending:
            for effect in staged.effects:
                if isinstance(effect, LedFrame):
                    self._send_frame(effect)  # first: this is the latency that matters
        if self.archive is not None:  # a new game's folder name, durable once it shows
            for directory in self.archive.unsettled_names():
                self._after_shown.append(functools.partial(fsync_directory, directory))
        self._run_after_shown()
        self._states_staged(pending)  # (after the frames: no LED waits for it)
        for staged in pending:
            session = staged.session
            was_over = self._over_since is not None
            assert staged.state is not None
            self._publish(staged.effects, dataclasses.replace(staged.state, frame=self.shown))
            if session.over and not was_over and session is self.session:
                self._game_over(session)

    def _run_after_shown(self, force: bool = False) -> None:
        """The disk's work no LED waits for (a finished game's files synced and closed,
        a new game's folder name synced), done when the board has been still for
        DISK_IDLE s (a player thinking: no move waits on the disk meanwhile), at the
        latest DISK_LATEST s after it was put off; `force`: now."""
        if not self._after_shown:
            return
        now = self._clock()
        if self._after_shown_since is None:
            self._after_shown_since = now
        if not force and now - self._last_event < DISK_IDLE and \
                now - self._after_shown_since < DISK_LATEST:
            return
        self._after_shown_since = None
        while self._after_shown:
            self._after_shown.pop(0)()

    def journal_note(self, record: dict[str, Any]) -> bool:
        """A record of who did what to the current game (an arbiter's order, an alert
        acknowledged) into its journal, durable before this returns when the disk takes
        it; a disk that refuses it keeps it waiting and is said, as for any event. False
        when there is no game, or no journal."""
        session = self.session
        if session is None or session.journal is None:
            return False
        session.journal.stage([record])
        self._commit(session)
        return True

    # ------------------------------------------------------------------ the computer

    _BUTTONS = {ev.Resigned: "resign", ev.DrawOffered: "draw offer",
                ev.DrawAccepted: "draw accept", ev.DrawClaimed: "claim"}

    def _remote_button(self, event: ev.Event, session: GameSession) -> bool:
        """A button of the computer's side pressed on the board: only the computer speaks
        for it (its draw acceptance comes from the engine), so it is not fed to the game."""
        side = session.referee.remote.side
        if side is None or not isinstance(
                event, (ev.Resigned, ev.DrawOffered, ev.DrawAccepted, ev.DrawClaimed)):
            return False
        if event.side != side:
            return False
        self._message(f"{'White' if side else 'Black'}'s {self._BUTTONS[type(event)]} button "
                      "is the computer's side: ignored (use your own side's buttons)")
        return True

    def _opponent_update(self) -> None:
        session, opponent = self.session, self.opponent
        if opponent is not None and session is not None:
            failed = opponent.failed
            opponent.update(session.referee, session.number)
            if opponent.failed != failed:
                self._engine_shown()

    def _engine_reply(self, reply: EngineReply | EngineFailed) -> None:
        """The engine's answer: fed to the game as an event of this moment (its move, a
        hint, its acceptance of a draw), recorded like a board event."""
        session, opponent = self.session, self.opponent
        if session is None or opponent is None:
            return
        failed = opponent.failed
        event, text = opponent.answer(reply, session.referee, session.number)
        if text:
            self._message(text)
        if event is not None:
            event = dataclasses.replace(event, t=max(self._t, self._link_now()))
            self._t = event.t
            self._stage(session.feed(event), session)
        self._opponent_update()
        if opponent.failed != failed:
            self._engine_shown()
        if opponent.failed is not None and failed is None and self.options.once:
            # nobody is there to restart anything: the game is saved as it stands
            self.exit_code = ENGINE_GAVE_UP
            self.error = f"{opponent.failed}; the game is saved unfinished"
            self._end(STOPPED_ENGINE)

    def _engine_shown(self) -> None:
        """The engine given up on, or back: the LEDs and the views say so at once."""
        if self.frame is not None:
            self._send_frame(self.frame)
        self._publish(())

    def _link_now(self) -> float:
        """Now on the board's timeline: its last event's time and the time since then.
        Before the board has reported anything, the latest link time seen (its ticks):
        the time since the service was made is no time of the board's (a start-up of 4 s
        at the emulator's 10x put a computer's answer 40 s ahead of the board, and every
        event after it at that one instant until the board caught up)."""
        if self._event_at is None:
            return self._t
        t, wall = self._event_at
        scale = self.opponent.scale if self.opponent is not None else 1.0
        return t + (self._clock() - wall) * scale

    def feed_order(self, event: ev.Event) -> bool:
        """An arbiter's order (ev.ARBITER_EVENTS) into the game at the board now: journaled,
        logged and shown like a board event; a finished game's files are written again.
        False when there is no game."""
        session = self.session
        if session is None:
            return False
        was_over = session.over
        self._stage(session.feed(dataclasses.replace(event, t=self._t)), session)
        self._flush()
        if was_over:
            self._write_outputs(session)  # a result or tags corrected after the end
        return True

    # ------------------------------------------------------------------ games

    def _track(self, event: ev.Event) -> None:
        if isinstance(event, ev.Snapshot):
            self.occupied = event.occupied
        elif isinstance(event, (ev.Lifted, ev.Placed)) and self.occupied is not None:
            bit = chess.BB_SQUARES[event.square]
            self.occupied = (self.occupied | bit if isinstance(event, ev.Placed)
                             else self.occupied & ~bit)

    def _set_up_again(self) -> bool:
        """After a result, the start position again: the next game (not with once)."""
        return not self.options.once and self.occupied == self.expected

    def _begin_game(self, t: float) -> None:
        number = len(self.games) + 1
        now = dt.datetime.now()
        files = self.namer.files(number, now)
        game_id, journal = "", None
        start = self.start if self.opponent is None else self.opponent.start_info(self.start)
        if self.archive is not None:  # made on disk at the first commit, with the game
            game_id, journal = self.archive.new_game(start, now, self.profile.name,
                                                     files.as_record(), commit=False,
                                                     board=self._identity())
        session = GameSession(number, start, self.profile, files, t0=t, journal=journal,
                              game_id=game_id)
        self.session = self.last_session = session
        self.games.append(files)
        self._over_since = None
        self._storage_fault = False
        self._storage_errors = {}
        where = f"; archived as {game_id}" if game_id else ""
        self._message(f"game {number} started; sensor log {files.sensor}{where}"
                      f"{self._opponent_side(start)}")
        self.notifier.status(f"game {number} playing")
        self._stage(session.begin(), session)
        self._opponent_update()

    def _opponent_side(self, start: StartInfo) -> str:
        """'; Stockfish plays Black (drawn)': the computer's side in this game."""
        opponent = self.opponent
        if opponent is None or start.remote is None:
            return ""
        drawn = " (drawn)" if opponent.settings.side == "random" else ""
        return f"; {opponent.label} plays {'White' if start.remote else 'Black'}{drawn}"

    def _new_game(self, command: NewGame) -> None:
        """End the game in progress (unfinished, archived as such) and wait for the board
        to show the next game's start, guiding the pieces there."""
        if self.session is not None:
            self._message(f"game {self.session.number} ended: {command.reason}")
            self._close_session()
        if self._held is not None:
            self._abandon_held(command.reason)
        if command.start is not None:
            self.start = command.start
            self.expected = chess.Board(command.start.fen).occupied
        if self.occupied == self.expected:
            self._begin_game(self._t)
            self._flush()
        else:
            self._setup_guidance(self._t)
        self._publish(())

    def _identity(self) -> str:
        """Which board this is (`Board.identity`; a board that does not say: its
        description)."""
        return str(getattr(self.board, "identity", "") or self.board.description)

    def _board_keeps_its_game(self) -> None:
        """A board that starts with the service (the built-in emulator) is the same board
        after a restart as before it: told the unfinished game before it starts, its
        pieces stand where the game left them (a real board keeps them through a power
        cut) and its person knows the game (as a player knows the one he was playing)."""
        keep = getattr(self.board, "keep_game", None)
        if keep is None or self.archive is None or self.session is not None:
            return
        entry = self.archive.unfinished(self._identity())
        if entry is None or not entry.recovered.records:
            return
        recovered = entry.recovered
        referee, _ = rebuilt(recovered, PROFILES.get(recovered.profile, self.profile))
        if referee.result is None:
            keep(referee.board, [sq for _, sq in referee.game.turn.touched], referee.occupied)

    def _adopt_prepared(self) -> None:
        """A journal left in the folder made ahead (its new name lost at a power cut) is
        put back among the games, before anything looks for an unfinished one."""
        if self.archive is None:
            return
        try:
            adopted = self.archive.adopt_prepared()
        except OSError as exc:
            raise StorageError(describe(exc, "the data directory", self.archive.root)) \
                from None
        if adopted is not None:
            self._message(f"recovery: game {adopted}'s journal was found in "
                          f"{self.archive.prepared} (its folder's name did not reach the "
                          f"disk before the power went): put back as {adopted}")

    def _recover(self) -> None:
        """Find this board's unfinished game in the archive, if there is one, saying
        what was found. It is held until the board shows where it stands
        (`_judge_held`); a game over in its events whose end never made it to the
        journal is settled at once."""
        if self.archive is None or self.session is not None:
            return
        entry = self.archive.unfinished(self._identity())
        if entry is None:
            return
        recovered = entry.recovered
        for problem in recovered.problems:
            self._message(f"recovery: {problem}")
        journal_path = entry.folder / JOURNAL
        if recovered.intact_lines == 0 and not recovered.records:  # not even its start
            damaged = unique_name(journal_path, DAMAGED)
            journal_path.replace(damaged)
            self._message(f"recovery: nothing in {journal_path} could be recovered; kept as "
                          f"{damaged.name}, and a new game starts when the board is set up")
            return
        # now, not when the board has been looked at: a journal that cannot be written
        # (a damaged one rewritten on a full disk) stops the start, saying why
        journal = JournalWriter.reopen(journal_path, recovered)
        if recovered.damaged:
            self._message(f"recovery: the damaged journal is kept as "
                          f"{journal_path.name}{DAMAGED} (or a numbered copy) beside the "
                          f"rewritten one")
        profile = PROFILES.get(recovered.profile, self.profile)
        referee, record = rebuilt(recovered, profile)
        self._held = HeldGame(entry, journal, referee, [m.san for m in record.moves])
        if referee.result is not None:  # over, but its end never made it to the journal
            self._resume(self._held)
            return
        self._message(f"game {entry.game_id} was left unfinished on this board after "
                      f"{self._held.summary()}: it goes on when the board shows its "
                      f"position; a board set up in the start position starts a new game "
                      f"instead")

    def _judge_held(self, event: ev.Event) -> ev.Event | None:
        """The unfinished game held at start-up, and a board event: the game goes on if
        the board shows its position (the event to feed it is returned); the start
        position set up abandons it and starts a new game; anything else waits, the
        LEDs showing what to set up where (None: nothing more to do with the event).

        At the first look only (the board as the power cut left it), a position that
        differs by a few squares resumes too: the referee recognises a move made
        meanwhile, and guides pieces knocked over back. Later, while pieces are being
        set up, only the position itself does: a half-made setup is no move."""
        held = self._held
        assert held is not None
        first, held.looked = not held.looked, True
        occupied = self.occupied
        if occupied is None:  # the board has not said what stands on it (no snapshot)
            self._resume(held, "")
            return event
        game = (held.referee.occupied, held.referee.board.occupied)
        if occupied in game:
            self._resume(held, "the board shows its position")
            return event if isinstance(event, ev.Snapshot) else ev.Snapshot(event.t, occupied)
        if occupied == self.expected:
            self._abandon_held("the board shows the start position")
            self._begin_game(event.t)
            return None
        if first and min(chess.popcount(occupied ^ g) for g in game) <= NEAR_POSITION:
            self._resume(held, "the board shows its position but for a few squares: "
                                     "the LEDs show what to put back where (a move made "
                                     "meanwhile is recognised)")
            return event
        if first:
            self._message(
                f"game {held.entry.game_id} waits for its position: set the pieces up as "
                f"the LEDs show (green: a piece missing, red: one too many) to go on with "
                f"it, or set up the start position for a new game (the unfinished one is "
                f"then abandoned; `board-ctl games --abandon {held.entry.game_id}` does it "
                f"without the board)")
        self._guide(setup_frame(event.t, occupied, held.referee.board.occupied))
        return None

    def _abandon_held(self, why: str) -> None:
        held, self._held = self._held, None
        if held is None or self.archive is None:
            return
        game_id = held.entry.game_id
        try:
            self.archive.abandon(held.entry, held.journal)
        except BoardCtlError as exc:
            self._alarm(f"{exc}; game {game_id} could not be marked abandoned: the next "
                        f"start on this board offers it again")
        self._message(f"game {game_id} abandoned ({why}): its {count(len(held.moves), 'ply')} "
                      f"stay in the archive (`board-ctl export {game_id}`)")

    def _resume(self, held: HeldGame, why: str = "") -> None:
        """Go on with the unfinished game: the restart journaled, its referee rebuilt,
        its files written again."""
        self._held = None
        entry, journal = held.entry, held.journal
        recovered = entry.recovered
        profile = PROFILES.get(recovered.profile, self.profile)
        files = self._resumed_files(entry)
        journal.stage([{"t": round(recovered.last_t, 6), "kind": "resume"}])
        if GameFiles.from_record(recovered.files) != files:
            journal.files(files.as_record())
        session = GameSession(1, recovered.start, profile, files, t0=None, journal=journal,
                              recovered=recovered, game_id=entry.game_id)
        self.session = self.last_session = session
        self.games.append(files)
        self._message(self._recovered_text(entry, session, why))
        if recovered.start.remote is not None and self.opponent is None:
            self._message("this game was played against a computer: start board-ctl run "
                          "with --opponent to go on with it")
        self.notifier.status(f"game {entry.game_id} resumed")
        self._commit(session)
        if session.over:  # over in its events, but its end never made it to the journal
            self._over_since = self._clock()
            self._write_outputs(session)
            self._end_journal(session)
        self._opponent_update()

    def _resumed_files(self, entry: GameEntry) -> GameFiles:
        """A resumed game goes on in the files it had (its partial PGN is replaced by the
        whole game, not left beside it), unless --pgn names others: then its earlier,
        partial files are removed (the journal has the whole game)."""
        before = GameFiles.from_record(entry.recovered.files)
        if before is not None and self.namer.pgn is None:
            return before
        files = self.namer.files(1, dt.datetime.now())
        if before is not None and before != files:
            old = [p for p in before.paths() if p.exists() and p not in files.paths()]
            for path in old:
                path.unlink(missing_ok=True)
            if old:
                self._message(f"game {entry.game_id} goes on in {files.pgn}: its earlier "
                              f"partial files are removed ({', '.join(map(str, old))})")
        return files

    @staticmethod
    def _recovered_text(entry: GameEntry, session: GameSession, why: str) -> str:
        recovered = entry.recovered
        before = (f", resumed {count(recovered.resumes, 'time')} before"
                  if recovered.resumes else "")
        problems = (f"; {count(len(recovered.problems), 'problem')}, see above"
                    if recovered.problems else "")
        return (f"resuming game {entry.game_id} from its journal"
                f"{': ' + why if why else ''}: "
                f"{moves_summary([m.san for m in session.record.moves])}, "
                f"{count(len(recovered.events), 'board event')} up to "
                f"t={recovered.last_t:.3f} s{before}{problems}; sensor log "
                f"{session.files.sensor}")

    def _setup_guidance(self, t: float) -> None:
        if self.occupied is None:
            return
        self._guide(setup_frame(t, self.occupied, self.expected))

    def _guide(self, frame: LedFrame) -> None:
        """A setting-up frame, shown when it changes what the LEDs show."""
        last = self.frame
        if last is None or (frame.squares, frame.status) != (last.squares, last.status):
            self._send_frame(frame)
            self._publish([frame])

    def _send_frame(self, frame: LedFrame) -> None:
        if self._storage_fault:  # the status alert LED says: look at the log
            frame = dataclasses.replace(
                frame, status=dataclasses.replace(frame.status, alert=Blink.FAST))
        if self.opponent is not None and self.opponent.failed is not None:
            # the computer's LED off (it thinks no more), the alert LED: look at the log
            frame = dataclasses.replace(frame, status=dataclasses.replace(
                frame.status, alert=Blink.FAST, remote=Remote.NONE))
        self.frame = frame
        self._show_leds(frame)

    def _show_leds(self, frame: LedFrame) -> None:
        """The frame on the LEDs, with what apps ask to light where it leaves them dark
        (never while an alert is open)."""
        frame = self._composed(frame)
        self.shown = frame
        self.board.send_leds(frame)
        if self.status is not None:
            self.status.show(frame)

    def _composed(self, frame: LedFrame) -> LedFrame:
        if not self.app_lights:
            return frame
        session = self.session
        alert_open = session is not None and bool(session.referee.alerts)
        lights = [light for lit in self.app_lights.values() for light in lit]
        return compose(frame, lights, alert_open)

    def set_app_lights(self, source: str, lights: tuple[SquareLight, ...]) -> None:
        """The squares an app (`source`) asks to light, replacing what it lit before;
        shown at once if the LEDs change."""
        if lights:
            self.app_lights[source] = lights
        else:
            self.app_lights.pop(source, None)
        if self.frame is None:
            return
        wanted, shown = self._composed(self.frame), self.shown
        if shown is not None and (wanted.squares, wanted.status) == (shown.squares,
                                                                     shown.status):
            return
        self._show_leds(self.frame)
        self._publish(())

    def message(self, text: str) -> None:
        """A line for the terminal view and the log (from a command on the loop thread)."""
        self._message(text)

    def _game_over(self, session: GameSession) -> None:
        self._over_since = self._clock()
        result = session.result
        assert result is not None
        self._write_outputs(session)
        self._end_journal(session)
        # the disk's work of the game's end now, not at the next game's first frame
        session.sensor_log.sync()
        self._prepare()
        self._message(f"game {session.number}: {result.result} ({result.termination}); "
                      f"{_pgn_said(session)}")
        self.notifier.status(f"game {session.number} over: {result.result}")
        if not self.options.once:
            self._message("set the pieces up again for a new game")

    def _close_session(self, ended: bool = True, later: bool = False) -> None:
        """Finish the game in progress. `ended`: it is over for good. A game stopped
        with the service (`ended` False) stays unfinished in the archive, and the next
        start resumes it: nothing is settled or guessed now (a piece in hand stays in
        hand), and its PGN so far has the moves completed. `later`: its files are
        synced and closed after the LEDs show the next frame (the next game's first)."""
        session = self.session
        if session is None:
            return
        self._flush()
        resumable = not ended and not session.over and session.journal is not None
        if not session.written:
            if not resumable:
                self._stage(session.finish(), session)
                self._flush()
            if not session.written:
                self._write_outputs(session)
                state = "stopped in progress" if resumable else "ended unfinished"
                self._message(f"game {session.number} {state}; {_pgn_said(session)}")
        if resumable:
            self._commit(session)
            self._message(f"game {session.game_id} is not over: it stays unfinished in the "
                          f"archive and goes on at the next start on this board, once the "
                          f"board shows its position (set up the start position there for "
                          f"a new game instead; `board-ctl games --abandon "
                          f"{session.game_id}` abandons it now)")
        else:
            self._end_journal(session)
        if later:
            self._after_shown.append(session.close)
        else:
            session.close()
        self.session = None

    # ------------------------------------------------------------------ storage

    def _prepare(self) -> None:
        """The next game's journal made ahead (Archive.prepare), while nothing waits on
        the disk. A disk that refuses is said when the game's start needs it."""
        if self.archive is None or self._lock is None:
            return
        try:
            self.archive.prepare()
        except OSError as exc:
            log.debug("the next game's journal is not made ahead: %s", exc)

    def _commit(self, session: GameSession) -> None:
        session.commit()
        self._storage_report(session)

    def _write_outputs(self, session: GameSession) -> None:
        for error in session.write_outputs():
            self._alarm(f"{error}; the game is in its journal: `board-ctl export "
                        f"{session.game_id or 'GAME'}` writes it later"
                        if session.journal is not None else error)

    def _end_journal(self, session: GameSession) -> None:
        error = session.end_journal()
        if error is not None:
            self._alarm(f"{error}; the game's end is not journaled (a restart would "
                        f"resume it)")
        self._storage_report(session)

    def _storage_report(self, session: GameSession) -> None:
        """Say when a file of the game starts or stops being refused by its disk."""
        now = session.storage_errors()
        for path, error in now.items():
            if path not in self._storage_errors:
                self._alarm(f"{error}; the game goes on and nothing is lost while the "
                            f"service runs: what cannot be written waits in memory")
        for path in self._storage_errors.keys() - now.keys():
            self._message(f"{path} is written again: everything that waited is on disk")
        self._storage_errors = now

    def _check_storage(self) -> None:
        """Once a second: the game's files still where they were (a data directory
        deleted during the game is made again, with everything so far), and writes the
        disk refused tried again."""
        now = self._clock()
        if now < self._next_storage_check:
            return
        self._next_storage_check = now + STORAGE_CHECK_EVERY
        session = self.session
        if self._lock is not None and self._lock.missing():
            try:
                self._lock.acquire()
            except BoardCtlError as exc:
                self._alarm(f"the data directory {self._lock.root} was deleted and cannot be "
                            f"taken again: {exc}")
            else:
                self._alarm(f"the data directory {self._lock.root} was deleted during the "
                            f"game; made again")
        if session is None:
            return
        files: list[AppendFile] = [session.sensor_log.file]
        if session.journal is not None:
            files.append(session.journal.file)
        for file in files:
            why = file.missing()
            if why is None:
                continue
            try:
                file.restore()
            except StorageError as exc:
                self._alarm(f"the {file.what} {file.path} was {why} during the game and "
                            f"cannot be written again: {exc}")
            else:
                self._alarm(f"the {file.what} {file.path} was {why} during the game: "
                            f"written again with everything so far "
                            f"({count(file.size, 'byte')})")
        if session.waiting:
            self._commit(session)

    def _alarm(self, text: str) -> None:
        """A storage problem: shown (or, with no view, logged as an error: the operator
        must be told), and the alert LED blinks fast."""
        if isinstance(self.view, NullView):
            log.error("%s", text)
        else:
            log.info("%s", text)
        self.view.message(text)
        for observer in self.observers:
            observer.message(text)
        self.notifier.status(text[:200])
        if not self._storage_fault:
            self._storage_fault = True
            if self.frame is not None:
                self._send_frame(self.frame)

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # ------------------------------------------------------------------ the board

    def _board_message(self, item: LinkDown | LinkUp | BoardDone) -> None:
        if isinstance(item, LinkDown):
            self._lost_since = self._clock()
            self.link = "lost, reconnecting"
            kept = len(self.session.record.moves) if self.session else 0
            self._message(f"board link lost at t={item.t:.1f} s ({item.reason}); the {kept} "
                          f"moves recorded are kept; reconnecting")
            if self.options.once and self._over_since is not None:
                self._end("the game is over and the board went away")
        elif isinstance(item, LinkUp):
            away = self._clock() - self._lost_since if self._lost_since is not None else 0.0
            self._lost_since = None
            self.link = "connected"
            self._message(f"board link back after {away:.1f} s ({item.detail}); "
                          f"reconciling the game with the board's snapshot")
        else:
            session = self.session
            if session is not None and not session.finished:
                # the log ends here, as in a replay
                self._stage(session.finish(), session)
                self._flush()
            self._message(item.detail)
            if not item.ok:
                self.exit_code = 1
                self.error = item.detail
            self._end(item.detail)
        self._publish(())

    def _housekeeping(self) -> None:
        self.notifier.pet()
        self._check_storage()
        self._run_after_shown()
        if not self.options.once or self._done:
            return
        now = self._clock()
        if (self._over_since is not None and now - self._over_since >= self.options.linger
                and now - self._last_event >= self.options.linger):
            self._end("the game is over")
        elif self._lost_since is not None and now - self._lost_since >= self.options.lost_timeout:
            self._message(f"the board has been away {self.options.lost_timeout:g} s: "
                          f"taking that as the end of its log")
            self._end("the board went away")

    def _end(self, reason: str) -> None:
        self.stop_reason = reason
        self._done = True

    def _shutdown(self) -> None:
        self.notifier.stopping()
        try:
            # stopped (SIGTERM, Ctrl-C, an engine given up) in the middle of a game: it
            # resumes at the next start
            self._close_session(ended=self.stop_reason not in (STOPPED, STOPPED_ENGINE))
            if self._held is not None:  # never resumed: it stays as it was
                self._held.journal.close()
            self._run_after_shown(force=True)  # everything on disk before the end
        finally:
            self.board.stop()
            if self.opponent is not None:
                self.opponent.close()
            if self.status is not None:
                self.status.close()
            for observer in self.observers:
                observer.close()
            self.notifier.close()
            self._release()
        if not self.games and self.options.once and self.exit_code == 0 and \
                not self._stop_requested:
            self.exit_code = 1
            self.error = "no game was played: the board never showed the start position"
            if self._held is not None:
                self.error += (f", nor the position of the unfinished game "
                               f"{self._held.entry.game_id}")

    # ------------------------------------------------------------------ the view

    def _message(self, text: str) -> None:
        log.info("%s", text)
        self.view.message(text)
        for observer in self.observers:
            observer.message(text)

    def _publish(self, effects: Sequence[Effect], state: ViewState | None = None) -> None:
        """Show `state` (now's when None) with `effects` to the view and the observers."""
        if state is None:
            state = self.state()
        self._shown_occupied = state.occupied
        self.view.show(state, effects)
        for observer in self.observers:
            observer.show(state, effects)

    def state(self) -> ViewState:
        session = self.session
        occupied = self.occupied if self.occupied is not None else 0
        if session is None:
            held = self._held
            return ViewState("setup", len(self.games), self.start.fen, self.start.fen,
                             occupied, self.shown, board=self.board.description,
                             link=self.link, t=self._t,
                             waiting=held.entry.game_id if held is not None else "")
        referee = session.referee
        result = referee.result
        alerts = tuple((a.code, a.text) for a in referee.alerts.values())
        if self.opponent is not None and self.opponent.failed is not None:
            alerts += (("engine-failed", f"{self.opponent.failed}: the game waits"),)
        return ViewState(
            phase="over" if result else "playing", game=session.number,
            fen=referee.board.fen(), start_fen=session.start.fen, occupied=referee.occupied,
            frame=self.shown, alerts=alerts,
            moves=tuple(m.san for m in session.record.moves),
            result=result.result if result else None,
            termination=result.termination if result else "",
            board=self.board.description, link=self.link, t=referee.now,
            clocks=(referee.clock.remaining(chess.WHITE, referee.now),
                    referee.clock.remaining(chess.BLACK, referee.now)),
            running=referee.clock.turn if referee.clock.running and not result else None)


def _pgn_said(session: GameSession) -> str:
    """Where the game's PGN is, or that there is none: a PGN the disk refused (said
    above, with its file and disk) must not be named as written."""
    return (f"PGN {session.files.pgn}" if session.pgn_written
            else "no PGN written (see above)")
