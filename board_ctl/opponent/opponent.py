"""The computer as the remote side of the service's games.

The service calls it on its loop thread: `start_info` when a game begins (which side the
engine plays, its name in the PGN tags), `update` after every item (is the engine to
move, to judge a draw offer, to give a hint? then ask the engine, once per position),
`answer` when the engine's reply comes back through the queue (the event to feed the
referee: its move, its acceptance of a draw, a hint). The engine itself searches on its
own thread and process (board_ctl.opponent.engine): nothing here waits for it.

Times: the engine is told the clocks in its own seconds, the game's divided by the
board's time scale (an emulator playing N times faster), so that it spends the game's
time at any speed; a fixed `movetime` is game seconds too.

A failed engine (it crashed, answered nonsense, or missed its deadline) is started again
and asked again, RETRIES times for one position; then the opponent gives up on that
position: `failed` says why until the game needs something else of the engine (a
takeback, a new game), and the service shows it (the LEDs, the view, the log).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, replace

import chess
import chess.engine

from board_ctl.core import events as ev
from board_ctl.core.referee import Referee
from board_ctl.core.timecontrol import TimeControl
from board_ctl.opponent.engine import EngineSettings, EngineThread
from board_ctl.opponent.messages import (
    EngineFailed,
    EngineReply,
    JudgeDraw,
    Request,
    Suggest,
    Think,
)
from board_ctl.sensorlog import StartInfo

log = logging.getLogger(__name__)

DEFAULT_MOVETIME = 1.0  # s (game time) a move without a time control or a set movetime
ANALYSIS_TIME = 1.0  # s (game time) to judge a draw offer or find a hint
MIN_WALL = 0.02  # s: never ask an engine for less real time than this
RETRIES = 2  # a failing engine is started again this often for one position
_SIDES = {"white": chess.WHITE, "black": chess.BLACK}
_NAMES = {chess.WHITE: "White", chess.BLACK: "Black"}


@dataclass(frozen=True)
class OpponentSettings:
    engine: EngineSettings
    side: str = "black"  # white | black | random: the engine's side
    movetime: float | None = None  # s a move (game time); None: its clock, else 1 s


class Opponent:
    def __init__(self, settings: OpponentSettings, rng: random.Random | None = None) -> None:
        self.settings = settings
        self.rng = rng or random.Random()
        # where the engine's answers go: the service's queue (Service sets it)
        self.deliver: Callable[[object], None] | None = None
        self.engine = EngineThread(settings.engine, self._deliver, self.rng)
        self.scale = 1.0  # the board's time scale (set by the service once connected)
        self._asked: tuple[str, object] | None = None  # the request in flight
        self._judged: set[object] = set()  # draw offers answered (by position)
        self._failures: dict[object, int] = {}
        self.failed: str | None = None  # why the engine was given up on, while it is

    @property
    def label(self) -> str:
        return self.engine.label

    def start(self) -> None:
        """Start the engine (EngineError, one line, when it cannot)."""
        self.engine.start()

    def close(self) -> None:
        self.engine.close()

    def _deliver(self, item: object) -> None:  # the engine's thread
        if self.deliver is not None:
            self.deliver(item)

    # --- the service's hooks (loop thread)

    def start_info(self, start: StartInfo) -> StartInfo:
        """A game's start: the engine's side (drawn for each game if `random`) and its
        name in that side's PGN tag."""
        side = (self.rng.choice((chess.WHITE, chess.BLACK)) if self.settings.side == "random"
                else _SIDES[self.settings.side])
        tags = dict(start.tags)
        tags[_NAMES[side]] = self.label
        return replace(start, remote=side, tags=tags)

    def update(self, referee: Referee, game: int) -> None:
        """Ask the engine what the game now needs of it, if it has not been asked.
        (Called after every item on the loop: the common case returns at once.)"""
        wanted = self._wanted(referee, game)
        if self._failures and wanted not in self._failures:
            self._failures = {}  # the game moved on: a position met again is asked again
        if wanted is None:
            self.failed = None
            if self._asked is not None:
                self.engine.cancel()
                self._asked = None
            return
        if self._asked == wanted:
            return
        if self._failures.get(wanted, 0) > RETRIES:
            return  # given up on this position: said so already
        self.failed = None
        self._asked = wanted
        self.engine.ask(self._request(referee, *wanted))

    def answer(self, reply: EngineReply | EngineFailed, referee: Referee, game: int
               ) -> tuple[ev.Event | None, str | None]:
        """The event an engine reply makes (to be stamped with the time), and a message."""
        request = reply.request
        kind = _kind(request)
        if self._wanted(referee, game) != (kind, reply.key):
            return None, None  # for a position gone by (a takeback, a new game)
        self._asked = None
        board = referee.board
        if isinstance(reply, EngineFailed):
            failures = self._failures[(kind, reply.key)] = \
                self._failures.get((kind, reply.key), 0) + 1
            if failures > RETRIES:
                self.failed = f"{reply.reason}; gave up after {failures} tries"
                return None, (f"{self.failed}: the game waits (restart board-ctl, or check "
                              "the engine)")
            return None, f"{reply.reason}; starting it again"
        if isinstance(request, Think):
            assert reply.move is not None
            book = " (book)" if reply.from_book else ""
            return (ev.OpponentMoved(0.0, reply.move),
                    f"{self.label} plays {board.san(reply.move)}{book}")
        if isinstance(request, Suggest):
            assert reply.move is not None
            return ev.HintGiven(0.0, reply.move), f"hint: {board.san(reply.move)}"
        assert isinstance(request, JudgeDraw)
        self._judged.add(reply.key)
        score = f"{(reply.score_cp or 0) / 100:+.2f}"
        if reply.accept:
            return (ev.DrawAccepted(0.0, request.side),
                    f"{self.label} accepts the draw (its evaluation {score})")
        return None, f"{self.label} declines the draw (its evaluation {score}); the game goes on"

    # --- what the game needs

    def _wanted(self, referee: Referee, game: int) -> tuple[str, object] | None:
        """What the game needs of the engine now: (kind, the position's key), or None."""
        remote = referee.remote
        side = remote.side
        if side is None or referee.result is not None or remote.execution is not None:
            return None
        board = referee.board
        if board.turn == side:
            key = (game, len(board.move_stack), board.board_fen(), board.turn)
            if referee.draws.offer == (not side) and key not in self._judged:
                return "draw", key
            return "move", key
        if remote.hint_wanted:
            return "hint", (game, len(board.move_stack), board.board_fen(), board.turn)
        return None

    def _request(self, referee: Referee, kind: str, key: object) -> Request:
        board = referee.board.copy()
        side = referee.remote.side
        assert side is not None
        if kind == "draw":
            return JudgeDraw(key, board, side, self._analysis())
        if kind == "move":
            return Think(key, board, self._limit(referee, side))
        return Suggest(key, board, self._analysis())

    def _analysis(self) -> chess.engine.Limit:
        return chess.engine.Limit(time=max(ANALYSIS_TIME / self.scale, MIN_WALL))

    def _limit(self, referee: Referee, side: chess.Color) -> chess.engine.Limit:
        """The engine's real time: its clock and increment (in its own seconds), or a
        fixed time a move."""
        scale = self.scale
        movetime = self.settings.movetime
        clock = referee.clock
        if not clock.timed:
            seconds = movetime if movetime is not None else DEFAULT_MOVETIME
            return chess.engine.Limit(time=max(seconds / scale, MIN_WALL))
        now = max(referee.now, clock.now or 0.0)
        white = clock.remaining(chess.WHITE, now) or 0.0
        black = clock.remaining(chess.BLACK, now) or 0.0
        tc = clock.tc
        increments = {}
        to_go = None
        for colour in chess.COLORS:
            number = clock.moves_made(colour) + 1
            period = tc.period_for_move(number) if tc.periods else None
            # UCI knows increments only: a delay is as good as one for the next move
            increments[colour] = (period.bonus_per_move if period is not None else 0) / scale
            if colour == side and period is not None and period.moves is not None:
                to_go = _moves_to_go(tc, number)
        fixed = None
        if movetime is not None:  # never more than half what is left on its clock
            own = white if side == chess.WHITE else black
            fixed = max(min(movetime, own / 2) / scale, MIN_WALL)
        return chess.engine.Limit(
            time=fixed,
            white_clock=max(white / scale, MIN_WALL), black_clock=max(black / scale, MIN_WALL),
            white_inc=increments[chess.WHITE], black_inc=increments[chess.BLACK],
            remaining_moves=to_go)


def _kind(request: Request) -> str:
    return "move" if isinstance(request, Think) else "hint" if isinstance(request, Suggest) \
        else "draw"


def _moves_to_go(tc: TimeControl, number: int) -> int | None:
    """Moves left, this one included, until the period of move `number` ends."""
    periods = tc.periods
    before = 0
    for period in periods:
        if period.moves is None:
            return None
        if number <= before + period.moves:
            return before + period.moves - number + 1
        before += period.moves
    last = periods[-1] if periods else None
    if last is None or last.moves is None:
        return None
    return last.moves - (number - before - 1) % last.moves
