"""The referee: raw board events in; moves, alerts, LED frames and the result out.

The referee never sees pieces, only which squares are occupied. It keeps the game in a
python-chess `Board` and explains each settled occupancy as one of:

- the position itself (nothing moved, or a piece was put back);
- the position after one legal move of the side to move (a move waiting to be completed);
- a legal move on its way (any subset of its lifts and placements);
- a legal move followed by the opponent's reply, complete or on its way: the first move
  is then complete (FIDE 6.2.1: the opponent has started), which is how play without a
  clock advances;
- pieces in the mover's hand, or a move attempt that may be illegal (said nothing about
  before the clock press, FIDE 12.6);
- none of these: after 1.5 s, a position mismatch (knocked-over or displaced pieces).

A clock press completes the move on the board. Captures leave only their origin changed,
so the square taken is read from the event history (where the capturing piece was seen
coming down, or the victim taken first). When nothing tells two captures apart the
candidates blink until the capturing piece is lifted and put back, or the opponent's
reply rules all but one out; only if the game moves on without that (the opponent's
press, the end of the game) is one taken, with a note in the record.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import chess

from board_ctl.core import events as ev
from board_ctl.core.clock import ChessClock, ClockReading, ExternalClock, PressResult, flag_result
from board_ctl.core.debounce import DEFAULT_SETTLE, Debouncer, SettledChange
from board_ctl.core.effects import (
    Alert,
    AlertCleared,
    Effect,
    GameOver,
    LedFrame,
    MoveMade,
    Note,
    Penalty,
    TakenBack,
)
from board_ctl.core.leds import LedView, led_frame
from board_ctl.core.profiles import PROFILES, Profile
from board_ctl.core.remote import Execution, RemoteState, plies_to_take_back
from board_ctl.core.shapes import Shape, shape_of
from board_ctl.core.timebase import FOREVER, NEVER, TimeRangeError, seconds, to_us, us
from board_ctl.core.timecontrol import TimeControl
from board_ctl.errors import BoardCtlError

log = logging.getLogger(__name__)

# Durations in seconds (as the spec and the shell speak of them) and, for the core's
# integer clock, in microseconds.
MISMATCH_AFTER = 1.5  # s a board may differ unexplained before the alert (spec)
RELEASED_AFTER = 1.0  # s a legal placement must stand to count as released (FIDE 4.7)
CLOCK_GRACE = 0.3  # s after a press for a placement skewed behind it (6.2.4)
PRESS_SKEW = 0.05  # s: a toggle this close to a press may belong to a move still landing
GAME_END_HOLD = 2.0  # s a mating or drawing placement must stand to end the game unpressed
ROOK_FIRST_MARGIN = 0.3  # s: a rook lifted this much before the king was touched first
CHATTER_TOGGLES = 24  # raw toggles of one square within CHATTER_WINDOW: a failing switch
CHATTER_WINDOW = 2.0
MISMATCH_AFTER_US = us(MISMATCH_AFTER)
RELEASED_AFTER_US = us(RELEASED_AFTER)
CLOCK_GRACE_US = us(CLOCK_GRACE)
PRESS_SKEW_US = us(PRESS_SKEW)
GAME_END_HOLD_US = us(GAME_END_HOLD)
ROOK_FIRST_MARGIN_US = us(ROOK_FIRST_MARGIN)
CHATTER_WINDOW_US = us(CHATTER_WINDOW)
MAX_FIRINGS = 64 + 8  # timers one event can fire: a settle per square, and the others


class TimerStall(BoardCtlError, RuntimeError):
    """A timer fired and left itself due at the same moment (a bug): raised in debug mode;
    otherwise the loop stops and logs it rather than spin."""

class _Illegal:
    """What the history says of a capture shape whose piece came down elsewhere."""


ILLEGAL = _Illegal()
_NAMES = {chess.WHITE: "White", chess.BLACK: "Black"}
_PROMOTIONS = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)
_Key = tuple[int, int]  # (vacated, filled): the occupancy change that identifies a shape


def _squares(bits: chess.Bitboard) -> tuple[chess.Square, ...]:
    return tuple(chess.scan_forward(bits))


def _subsets(bits: chess.Bitboard) -> Iterator[chess.Bitboard]:
    subset = 0
    while True:
        yield subset
        subset = (subset - bits) & bits
        if not subset:
            return


def _names(squares: tuple[chess.Square, ...] | list[chess.Square]) -> str:
    return ", ".join(chess.square_name(s) for s in squares)


class _Position:
    """A position, and the shapes of its legal moves, worked out only where asked."""

    __slots__ = ("board", "occupied", "_shapes", "_full", "_from", "_to")

    def __init__(self, board: chess.Board) -> None:
        self.board = board
        self.occupied = board.occupied
        self._shapes: dict[chess.Move, Shape] = {}
        self._full: dict[_Key, list[Shape]] = {}
        self._from: dict[chess.Square, list[Shape]] = {}
        self._to: dict[chess.Square, list[Shape]] = {}

    def moves_from(self, mask: chess.Bitboard) -> Iterator[Shape]:
        """Legal moves from these squares (cached square by square: the board asks often)."""
        return self._cached(self._from, mask, "from_mask")

    def moves_to(self, mask: chess.Bitboard) -> Iterator[Shape]:
        """Legal moves onto these squares, cached the same way."""
        return self._cached(self._to, mask, "to_mask")

    def _cached(self, cache: dict[chess.Square, list[Shape]], mask: chess.Bitboard,
                side: str) -> Iterator[Shape]:
        for square in chess.scan_forward(mask):
            found = cache.get(square)
            if found is None:
                moves = self.board.generate_legal_moves(**{side: chess.BB_SQUARES[square]})
                found = cache[square] = list(map(self._shape, moves))
            yield from found

    def _shape(self, move: chess.Move) -> Shape:
        shape = self._shapes.get(move)
        if shape is None:
            shape = self._shapes[move] = shape_of(self.board, move)
        return shape

    def full(self, occupied: chess.Bitboard) -> list[Shape]:
        """The legal moves after which the board is occupied exactly so."""
        key = (self.occupied & ~occupied, occupied & ~self.occupied)
        found = self._full.get(key)
        if found is None:
            found = self._full[key] = [
                shape for shape in map(self._shape, self._moves_for(*key))
                if shape.vacated == key[0] and shape.filled == key[1]
            ]
        return found

    def _moves_for(self, vacated: chess.Bitboard, filled: chess.Bitboard) -> Iterable[chess.Move]:
        """The few legal moves that can have this shape, without generating all of them."""
        board = self.board
        if vacated.bit_count() == 1:
            origin = chess.lsb(vacated)
            if filled.bit_count() == 1:  # a quiet move, a promotion: test the moves directly
                target = chess.lsb(filled)
                if board.pawns & vacated and chess.square_rank(target) in (0, 7):
                    moves = [chess.Move(origin, target, piece) for piece in _PROMOTIONS]
                else:
                    moves = [chess.Move(origin, target)]
                return [move for move in moves if board.is_legal(move)]
            if not filled:
                return board.generate_legal_captures(from_mask=vacated)
            return ()
        if vacated.bit_count() == 2 and filled:  # castling, en passant
            return board.generate_legal_moves(from_mask=vacated)
        return ()

    def partial(self, occupied: chess.Bitboard) -> bool:
        """Whether a legal move is on its way to this occupancy."""
        emptied, filled = self.occupied & ~occupied, occupied & ~self.occupied
        board = self.board
        own = board.occupied_co[board.turn]
        if not filled and emptied & own == emptied and emptied.bit_count() == 1:
            if not emptied & board.rooks:  # the common case: one own piece in hand
                return any(board.generate_legal_moves(from_mask=emptied))
        # Moves of the lifted pieces; captures of lifted victims; a promotion's new piece
        # placed before the pawn is lifted; castling begun with the rook.
        targets = emptied & ~own
        if not emptied & own:
            targets |= filled
        if board.ep_square is not None and targets:
            targets |= chess.BB_SQUARES[board.ep_square]
        lifted = emptied & own
        if lifted & board.rooks:
            lifted |= board.kings & own
        shapes = itertools.chain(self.moves_from(lifted), self.moves_to(targets))
        return any(shape.allows_partial(emptied, filled) for shape in shapes)

    def movable(self, square: chess.Square) -> bool:
        if square in self._from:
            return bool(self._from[square])
        return any(self.board.generate_legal_moves(from_mask=chess.BB_SQUARES[square]))

    def capturable(self, square: chess.Square) -> bool:
        board, bit = self.board, chess.BB_SQUARES[square]
        if any(board.generate_legal_moves(to_mask=bit)):
            return bool(board.occupied & bit)
        return any(self._shape(m).captured == square for m in board.generate_legal_ep())


@dataclass(slots=True)
class _Match:
    """The board showed the position after one of these moves (same occupancy) from `since`."""

    shapes: list[Shape]
    since: int  # us
    left_at: int | None = None  # when the board last moved away from it
    ends_game: bool | None = None  # computed on first need

    @property
    def key(self) -> _Key:
        return (self.shapes[0].vacated, self.shapes[0].filled)

    @property
    def placed(self) -> bool:
        """A piece was seen arriving; a capture's state is only a piece in hand."""
        return bool(self.shapes[0].filled)


@dataclass(slots=True)
class _Turn:
    """What happened on the board since the last completed move."""

    position: _Position
    started: int  # us, like every time below
    touched: list[tuple[int, chess.Square]] = field(default_factory=list)
    # Raw (time, placed) transitions per square: what tells a capture's square.
    events_on: dict[chess.Square, list[tuple[int, bool]]] = field(default_factory=dict)
    lifted_raw: set[chess.Square] = field(default_factory=set)  # raw state: lifted, not back
    match: _Match | None = None
    seen: list[_Match] = field(default_factory=list)  # the opponent may answer any of them
    released: list[_Match] = field(default_factory=list)  # legal placements left after 4.7
    must_move: chess.Square | None = None  # after an illegal move: 7.5.1 with 4.3
    ambiguous: _Match | None = None  # a completed capture whose square is unknown
    waiting_reply: bool = False  # the opponent may be answering an unseen capture
    replies: dict[chess.Move, _Position] = field(default_factory=dict)
    promotion: chess.PieceType | None = None
    promotion_at: int = 0


def reading_running(mover: chess.Color) -> tuple[bool, bool]:
    """(white running, black running) just after ``mover`` pressed."""
    return mover == chess.BLACK, mover == chess.WHITE


class Referee:
    """Feed it events with `feed`; it returns the effects they cause. Pure and synchronous."""

    def __init__(
        self,
        fen: str = chess.STARTING_FEN,
        profile: Profile = PROFILES["fide"],
        settle: float = DEFAULT_SETTLE,
        time_control: TimeControl | None = None,
        remote: chess.Color | None = None,
        debug: bool = False,
    ) -> None:
        self.profile = profile
        self.remote = RemoteState(side=remote)  # a side played from elsewhere (a computer)
        self._remote_on = remote is not None  # (checked on every event: kept a plain bool)
        self.debug = debug  # a timer that stalls raises TimerStall instead of being stopped
        self.firings = 0  # timers fired so far (the property tests bound it per event)
        self.board = chess.Board(fen)
        # The service keeps time from lever presses; the game (and the clock of the side
        # to move) starts at t = 0. Untimed games still measure each move's time.
        self.clock = ChessClock(time_control, start_side=self.board.turn)
        self.clock.start(0.0)
        # An external clock reports its own times with each press: trusted when plausible.
        self.external = ExternalClock(time_control)
        if time_control is not None and time_control.is_timed:
            initial = float(time_control.initial_seconds or 0)
            white_first = self.board.turn == chess.WHITE
            self.external.expect_start(
                ClockReading(initial, initial, white_first, not white_first), 0.0)
        self._reported: tuple[int, tuple[float, float]] | None = None  # the press's times
        self.start_fen = self.board.fen()
        self.debouncer = Debouncer(self.board.occupied, us(settle))
        self.sensed = self.board.occupied  # settled sensor readings
        self.occupied = self.sensed  # the readings, faulty sensors read as the game needs
        self.faulty: chess.Bitboard = 0  # sensors found chattering or stuck: not believed
        self._toggles: dict[chess.Square, list[int]] = {}
        self.turn = _Turn(_Position(self.board), 0)
        self.alerts: dict[str, Alert] = {}
        self.result: GameOver | None = None
        self.illegal_moves = {chess.WHITE: 0, chess.BLACK: 0}
        self.draw_offer: chess.Color | None = None
        self._now = 0  # us: the latest time seen; an earlier event is taken as happening now
        self._unexplained_since: int | None = None
        self._unexplained_lifts: set[chess.Square] = set()
        # A scan after a reconnection that nothing explains: moves were made unseen. What
        # follows is no player's fault until the board and the game agree again.
        self._after_outage = False
        self._from_scan = False  # the last move was taken from a scan, not seen made
        self._clock_decision: int | None = None
        self._pressed: int | None = None  # the press that is completing the move
        self._waiting_pieces: chess.Bitboard = 0  # the opponent's, steady at a press judged later
        self._offer_pending: int | None = None  # a draw offer made with a move on the board
        self._claim_pending: int | None = None  # a claim waiting for the move it declares
        self._switched: PressResult | None = None  # the clock, pressed for an unseen capture
        self._changing: chess.Square | None = None  # the square whose change is settling
        self._last_raw = NEVER  # the latest sensor toggle
        # A clock (a time control, or presses seen): presses, not the opponent, complete moves.
        self._clock_in_use = time_control is not None
        self._last_frame: LedFrame | None = None
        self._led_signature: object = None
        self._dirty = True  # something the LEDs show may have changed
        self._out: list[Effect] = []

    # ------------------------------------------------------------------ public API

    def feed(self, event: ev.Event) -> list[Effect]:
        """The effects of one event. Its time is taken in whole microseconds; one the core
        cannot represent raises TimeRangeError (a ValueError) before anything changes."""
        t = self._entry_time(event.t)
        self._advance(t)
        if self.result is None:
            self._handle(event, t)
        return self._drain()

    def finish(self, t: float | None = None) -> list[Effect]:
        """The log ended (or the service stops): a move left on the board is complete."""
        end = self._now if t is None else self._entry_time(t)
        self._advance(end)
        for change in self.debouncer.flush():
            self._settled(change)
        if self.result is None:
            if self._clock_decision is not None:
                self._decide_clock(end)
            if self.result is None and self.turn.ambiguous is not None:
                self._commit(self.turn.ambiguous.shapes, end, guess=True)
            elif self.result is None and self.turn.match is not None:
                self._complete_match(end, guess=True)
        return self._drain()

    @property
    def side_to_move(self) -> chess.Color:
        return self.board.turn

    @property
    def now(self) -> float:
        """The latest time the referee has seen, in seconds."""
        return seconds(self._now)

    # ------------------------------------------------------------------ time

    def _entry_time(self, t: float) -> int:
        """An event's time in us; never before the referee's present (time never runs back
        inside the core: an event stamped earlier is taken as happening now)."""
        return max(to_us(t), self._now)

    def _flag_deadline(self) -> int | None:
        ms = self.clock.flag_time_ms()
        return None if ms is None else ms * 1000

    def _timers(self) -> list[tuple[int, Callable[[int], None]]]:
        """Every armed timer: (deadline in us, what fires then)."""
        due: list[tuple[int, Callable[[int], None]]] = []
        deadline = self.debouncer.next_deadline()
        if deadline is not None:
            due.append((deadline, self._settle_due))
        if self.result is None:
            if self._clock_decision is not None:
                due.append((self._clock_decision, self._decide_clock))
            if self._unexplained_since is not None and "position-mismatch" not in self.alerts:
                due.append((self._unexplained_since + MISMATCH_AFTER_US, self._mismatch))
            ending = self._game_ending_deadline()
            if ending is not None:
                due.append((ending, self._end_by_placement))
            flag = self._flag_deadline() if self._clock_decision is None else None
            if flag is not None:  # (a press under judgement stopped the clock)
                due.append((flag, self._flag))
            if self._remote_on:
                due += self._remote_due()
        return due

    def _advance(self, t: int) -> None:
        """Fire, in time order, every timer due by t (us, compared exactly).

        Each firing must make progress: the timer that fired is no longer due at that
        moment. One that still is (a bug) is not fired again: in debug mode it raises
        TimerStall; otherwise it is logged and left out until the next event while the
        other timers go on, so no input can make this loop spin.
        """
        flag = self._flag_deadline() if self.result is None else None
        if (not self.debouncer.pending and self._clock_decision is None
                and self._unexplained_since is None and self.turn.match is None
                and (flag is None or flag > t)
                and not (self._remote_on and self._remote_due())):
            self._now = max(self._now, t)  # nothing can be due: the common case, made cheap
            return
        fired: set[tuple[int, object]] = set()
        stalled: set[tuple[int, object]] = set()
        while len(fired) < MAX_FIRINGS:
            earliest: tuple[int, Callable[[int], None], tuple[int, object]] | None = None
            for when, fire in self._timers():
                if when > t or (earliest is not None and when >= earliest[0]):
                    continue
                key = (when, getattr(fire, "__func__", fire))
                if key in fired:  # fired at this very moment, and due again
                    if key not in stalled:
                        stalled.add(key)
                        self._stall(when, fire)
                    continue
                earliest = (when, fire, key)
            if earliest is None:
                break
            when, fire, key = earliest
            fired.add(key)
            self.firings += 1
            self._now = max(self._now, when)
            fire(when)
        else:
            self._stall(self._now, self._advance)
        self._now = max(self._now, t)

    def _stall(self, when: int, fire: Callable[[int], None]) -> None:
        name = getattr(fire, "__name__", repr(fire))
        message = (f"timer {name} due at {seconds(when)} s made no progress: left out until "
                   "the next event")
        if self.debug:
            raise TimerStall(message)
        log.error("%s", message)

    def _settle_due(self, when: int) -> None:
        for change in self.debouncer.advance(when):
            self._settled(change)

    # ------------------------------------------------------------------ events

    def _sensor(self, t: int, square: chess.Square, placed: bool) -> None:
        if self.faulty & chess.BB_SQUARES[square]:
            return  # not believed: neither a touch nor evidence of a capture
        recent = self._toggles.setdefault(square, [])
        recent.append(t)
        while recent[0] < t - CHATTER_WINDOW_US:
            recent.pop(0)
        if len(recent) > CHATTER_TOGGLES:
            self._sensor_fault(t, square, f"switched {len(recent)} times in "
                                          f"{CHATTER_WINDOW:.0f} s")
            return
        if self._remote_on and self._remote_raw(t, square, placed):
            return
        turn = self.turn
        self._last_raw = t
        if (not placed and self._clock_decision is not None
                and self._waiting_pieces & chess.BB_SQUARES[square]):
            # The opponent lifts a piece that stood still through the press: his move has
            # begun, so the pressed move is judged as it stands, before this lift.
            self._decide_clock(t)
            if self.result is not None:
                return
            turn = self.turn
        turn.events_on.setdefault(square, []).append((t, placed))
        was_lifting = self.debouncer.lifting & chess.BB_SQUARES[square]
        self.debouncer.toggle(t, square, placed)
        if (was_lifting and not self.debouncer.lifting & chess.BB_SQUARES[square]
                and self.result is None and turn.match is None and turn.ambiguous is None):
            self._explain(t)  # a lift that proved a blip: what settled meanwhile stands
        if turn.waiting_reply and self.result is None:
            self._explain(t)  # the reply's capture may just have been seen landing
        if placed and square in turn.lifted_raw:
            self._resolve_ambiguity_by_touch(square)
            turn.lifted_raw.discard(square)
        elif not placed:
            turn.lifted_raw.add(square)

    def _handle(self, event: ev.Event, t: int) -> None:
        """`t`: the event's time in us (its own `t` is seconds)."""
        kind = type(event)
        if kind is ev.Lifted or kind is ev.Placed:  # nine events in ten: no pattern matching
            self._sensor(t, event.square, kind is ev.Placed)  # type: ignore[union-attr]
            return
        match event:
            case ev.ClockPressed(_, side, times):
                self._clock(t, side, times)
            case ev.PromotionChosen(_, piece):
                self.turn.promotion, self.turn.promotion_at = piece, t
                match = self.turn.match
                if (self._clock_decision is not None and match is not None
                        and self._promoting(match) and self._placed(match)):
                    self._decide_clock(t)  # the press waited for this choice
            case ev.Snapshot(_, occupied):
                self._snapshot(t, occupied)
                self.external.forget_last()  # reconnected: the clock ran on meanwhile
            case ev.Resigned(_, side):
                self._complete_for(side, t, ending=True)
                if self.result is None:
                    winner = not side
                    self._game_over(t, self._win_for(winner), "resignation")
            case ev.DrawOffered(_, side):
                self._complete_for(side, t)
                self.draw_offer = side
                if side == self.board.turn and self.turn.match is not None:
                    self._offer_pending = t  # made after the move, before the press (9.1.2.1)
                else:
                    self._note(t, f"{_NAMES[side]} offers a draw (=)")
            case ev.DrawAccepted(_, side):
                self._accept_draw(t, side)
            case ev.DrawClaimed(_, side):
                self._claim(t, side)
            case ev.OpponentMoved(_, move):
                self._opponent_moved(t, move)
            case ev.HintAsked():
                self._hint_asked()
            case ev.HintGiven(_, move):
                self._hint_given(move)
            case ev.TakebackAsked():
                self._takeback(t)
            case ev.Tick():
                pass

    def _snapshot(self, t: int, occupied: chess.Bitboard) -> None:
        """A full scan, after a reconnection: the board as it is, all at once, no touches."""
        if not self.debouncer.reset(occupied):
            return
        self.sensed = occupied
        self.occupied = self._reading()
        self._dirty = True
        if self._remote_on and self._remote_settled(t):
            return
        position = self.turn.position
        # (a move seen only as a lift is no explanation: a capture's bare lift looks like it)
        explained = (self.occupied == position.occupied or position.full(self.occupied)
                     or position.partial(self.occupied) or self.turn.ambiguous
                     or any(self._placed(m) for m in self.turn.seen))
        if not explained:
            self._catch_up(t)
        self._explain(t)
        # Events were lost: until the board shows the game again, nothing seen since the
        # scan is proof of a player's irregularity.
        position = self.turn.position
        self._after_outage = not (self.occupied == position.occupied
                                  or position.full(self.occupied))

    def _catch_up(self, t: int) -> None:
        """Moves made while the link was down: the one legal move (or pair of moves, one
        each) after which the board is the position, a move on its way or the next
        player's pieces in hand is taken, with a note in the record."""
        board = self.board
        fits: dict[tuple[tuple[chess.Square, chess.Square], ...], list[Shape]] = {}
        for move in board.legal_moves:
            shape = shape_of(board, move)
            after = self._replies(shape)
            if (self.occupied == after.occupied or after.full(self.occupied)
                    or after.partial(self.occupied) or self._answers(shape)):
                fits.setdefault(((move.from_square, move.to_square),), [shape])
        if not fits:  # both sides moved: look one move further (and the next one begun)
            for move in board.legal_moves:
                shape = shape_of(board, move)
                replies = self._replies(shape)
                for reply in replies.board.legal_moves:
                    answer = shape_of(replies.board, reply)
                    left = answer.after(replies.occupied) ^ self.occupied
                    # (one move begun changes at most four squares: castling)
                    if left and (left.bit_count() > 4 or not self._begun_after(replies, reply)):
                        continue
                    key = ((move.from_square, move.to_square), (reply.from_square, reply.to_square))
                    fits.setdefault(key, [shape, answer])
        if len(fits) != 1:
            return  # nothing fits, or several do: the LEDs will ask for the position back
        for shape in next(iter(fits.values())):
            self._note(t, f"{self.board.san(shape.move)} was made while the board was not "
                          "connected: taken from its scan")
            self._push(self._with_promotion(shape, [shape]), t)
        self._from_scan = True  # a guess from occupancy alone: no penalty rests on it

    def _begun_after(self, replies: _Position, reply: chess.Move) -> bool:
        """Whether the board shows a move begun (or made) in the position after `reply`."""
        board = replies.board.copy(stack=False)
        board.push(reply)
        third = _Position(board)
        return bool(third.full(self.occupied) or third.partial(self.occupied))

    def _complete_for(self, side: chess.Color, t: int, ending: bool = False) -> None:
        """A button of the side not to move ends the mover's turn if a move stands; one
        that ends the game (`ending`) also takes a capture nobody saw land, and the
        button's own side's move if one stands placed."""
        if side == self.board.turn:
            match = self.turn.match
            if ending and match is not None and self._placed(match):
                self._complete_match(t)
            return
        if self.turn.ambiguous is not None:
            self._commit(self.turn.ambiguous.shapes, t, guess=True)
        elif self.turn.match is not None and (ending or self._placed(self.turn.match)):
            self._complete_match(t, guess=True)

    # ------------------------------------------------------------------ occupancy

    def _settled(self, change: SettledChange) -> None:
        if self.result is not None:
            return
        bit = chess.BB_SQUARES[change.square]
        self.sensed = self.sensed | bit if change.occupied else self.sensed & ~bit
        self.occupied = self._reading()
        self._dirty = True
        if self._remote_on and self._remote_settled(change.t):
            return
        turn = self.turn
        if not change.occupied and turn.position.occupied & bit:
            if all(sq != change.square for _, sq in turn.touched):
                turn.touched.append((change.t, change.square))
        self._changing = change.square
        try:
            self._explain(change.t)
        finally:
            self._changing = None
        if self._remote_on:
            self._remote_observe(change.t)
        match = self.turn.match
        if (self._clock_decision is not None and self.result is None and match is not None
                and self.turn.ambiguous is None and self._placed(match)
                and not self._promoting(match)):  # (a promotion's selector may yet come)
            self._complete_match(change.t)  # the press waited for this: the piece has landed

    def _reading(self, deciding: bool = False) -> chess.Bitboard:
        """The sensed occupancy, each faulty sensor read the way that explains the board best.

        A piece missing from its square is in hand until the clock is pressed; only then
        may it have gone to the faulty square (`deciding`).
        """
        if not self.faulty:
            return self.sensed
        position = self.turn.position
        good = self.sensed & ~self.faulty
        as_before = good | (position.occupied & self.faulty)
        # Every way the faulty sensors could read, or, past a few of them (a dead matrix
        # line), each one flipped on its own.
        if self.faulty.bit_count() <= 4:
            others = [good | subset for subset in _subsets(self.faulty)]
        else:
            others = [as_before ^ chess.BB_SQUARES[sq] for sq in _squares(self.faulty)]
        readings = [as_before] + others

        def plausible(reading: chess.Bitboard) -> float:
            full = position.full(reading)
            if full and not full[0].filled and self._landed(_Match(full, 0)):
                return 5  # a capture seen landing: the capturing piece left the bad square
            if reading == position.occupied:
                return 4
            if full and full[0].filled:
                if not full[0].filled & self.faulty or deciding:
                    return 3
                return 1.5  # arrived on the bad square, or still in hand: wait for the press
            if position.partial(reading):
                return 2
            return 1 if full else 0  # a capture nobody saw land: least likely

        return max(readings, key=plausible)  # the first of the best: as before, if it ties

    def _sensor_fault(self, t: int, square: chess.Square, why: str) -> None:
        """A sensor not to be believed any more; the game goes on without it."""
        self.faulty |= chess.BB_SQUARES[square]
        self._alert(t, "suspect-sensor", None, _squares(self.faulty),
                    f"the sensor of {chess.square_name(square)} {why}: it is ignored from "
                    "now on; check its reed switch after the game")
        self.occupied = self._reading()

    def _one_flip(self) -> tuple[chess.Square, list[Shape]] | None:
        """A sensor that did not change though the move needs it to: the only one that,
        read the other way, makes the board a legal move (another square saw the move)."""
        position = self.turn.position
        base, sensed = position.occupied, self.occupied
        emptied, filled = base & ~sensed, sensed & ~base
        if not any(self.turn.events_on.get(sq) for sq in _squares(emptied | filled)):
            return None
        if any(base & ~(base ^ sensed) & chess.BB_SQUARES[sq]
               for sq, seen in self.turn.events_on.items() if seen):
            return None  # a piece lifted and put back (a capture tried there?): not a sensor
        own = position.board.occupied_co[position.board.turn]
        found: dict[chess.Square, list[Shape]] = {}
        for shape in itertools.chain(position.moves_from(emptied & own), position.moves_to(filled)):
            for square in _squares(shape.vacated | shape.filled):
                if self.turn.events_on.get(square):
                    continue
                flipped = sensed ^ chess.BB_SQUARES[square]
                if (shape.vacated, shape.filled) == (base & ~flipped, flipped & ~base):
                    found.setdefault(square, []).append(shape)
        return next(iter(found.items())) if len(found) == 1 else None

    def _explain(self, t: int) -> None:
        if self._remote_on and self.remote.busy(self.board):
            self._remote_wait(t)
            return
        turn, occupied = self.turn, self.occupied
        position = turn.position
        if turn.ambiguous is not None:
            captured = turn.ambiguous.shapes[0].after(position.occupied)
            # A candidate square alone lifted may be the capturing piece being shown to
            # the board (lifted to be put back), or the opponent starting: wait and see.
            showing = any(occupied == captured & ~chess.BB_SQUARES[s.move.to_square]
                          for s in turn.ambiguous.shapes)
            if occupied == captured or showing or self._opponent_started(t):
                self._explained(t)
            else:
                self._unexplained(t)
            return
        # An opponent's piece already leaving: what just landed may be his, a slid piece
        # closing the next square's switch before its own opens.
        answering = bool(
            self.debouncer.pending
            and self.debouncer.lifting & position.board.occupied_co[not position.board.turn]
            and any(self._placed(m) for m in turn.seen))
        if occupied == position.occupied:
            self._after_outage = False  # the board and the game agree again
            self._leave_match(t)
            if not answering:
                turn.seen.clear()
            self._explained(t)
            return
        full = position.full(occupied)
        if full:
            self._after_outage = False
            key = (full[0].vacated, full[0].filled)
            if answering and (turn.match is None or turn.match.key != key):
                self._leave_match(t)  # the moves seen stand; the lift settles it
                self._explained(t)
                return
            if turn.match is None or turn.match.key != key:
                self._leave_match(t)
                again = next((m for m in turn.seen if m.key == key), None)
                turn.seen = [m for m in turn.seen if m.key != key]
                if again is not None and again in turn.released and not full[0].move.promotion:
                    # Back where it was released: the move stood all along, and what
                    # happened in between was the opponent's (a touch of that piece).
                    turn.match = again
                else:
                    turn.match = _Match(full, t)
                turn.seen.append(turn.match)
            self._explained(t)
            return
        self._leave_match(t)
        if (position.partial(occupied) and not self._reply_complete(occupied)
                and not self._arrived_and_answered()):
            self._explained(t)  # the mover's move under way
            return
        if turn.seen and self._opponent_started(t):
            return
        self._unexplained(t)

    def _leave_match(self, t: int) -> None:
        match = self.turn.match
        if match is None:
            return
        released = self.turn.released
        if match not in released:  # one released keeps the time it was first left
            match.left_at = self._burst_start(t)
            if t - match.since >= RELEASED_AFTER_US and self._placed(match):
                released.append(match)  # a piece in hand is not released
        self.turn.match = None

    def _burst_start(self, t: int) -> int:
        """When the change being settled began: its first raw toggle, bounce included."""
        if self._changing is None:
            return t
        times = [w for w, _ in self.turn.events_on.get(self._changing, ()) if w <= t]
        start = t
        for when in reversed(times):
            if start - when > self.debouncer.settle:
                break
            start = when
        return start

    def _arrived_and_answered(self) -> bool:
        """A move whose piece arrived and still stands there is done; the opponent answers it.

        Once the piece is seen arriving (placed, or landing on its victim), the mover
        could only go on by lifting it again; a change elsewhere is the opponent's.
        """
        for match in self.turn.seen:
            if match.shapes[0].move.promotion:
                continue  # a pawn on the last rank waits to be replaced (4.6)
            for shape in match.shapes if match.placed else self._landings(match):
                arrived = shape.filled | chess.BB_SQUARES[shape.move.to_square]
                if not arrived & ~self.occupied and self._answers(shape):
                    return True
        return False

    def _placed(self, match: _Match) -> bool:
        """A piece was seen arriving: placed on an empty square, or landing on its victim."""
        return match.placed or self._landed(match)

    def _lines(self) -> list[_Match]:
        """The mover's moves the opponent may be answering, the likeliest first.

        A placement seen on the board outweighs a capture's bare lift: when the piece
        just placed is lifted again, that is more likely the opponent taking it than
        the mover capturing with it unseen.
        """
        if self.turn.ambiguous is not None:
            return [self.turn.ambiguous]
        seen = self.turn.seen[::-1]
        placed = [m for m in seen if self._placed(m)]
        # A placement that stood (released) outweighs one that flashed by in a slide.
        released = [m for m in placed if m in self.turn.released or m is self.turn.match]
        return released + [m for m in placed if m not in released] + [
            m for m in seen if m not in placed]

    def _replies(self, shape: Shape) -> _Position:
        """The position after `shape`, where the opponent's reply is read (cached per turn)."""
        found = self.turn.replies.get(shape.move)
        if found is None:
            board = self.board.copy(stack=False)
            board.push(shape.move)
            found = self.turn.replies[shape.move] = _Position(board)
        return found

    def _reply_complete(self, occupied: chess.Bitboard) -> bool:
        """Whether the opponent's reply is complete, not just the mover's move under way.

        A capture in progress (attacker and victim lifted) looks exactly like a capture
        followed by a capture in reply; only a reply whose own square saw events since
        the board left the move is believed.
        """
        events = self.turn.events_on
        for match in self._lines():
            since = match.left_at or 0
            for line in self._distinct(match.shapes):
                for reply in self._replies(line).full(occupied):
                    seen = events.get(reply.captured, []) if reply.captured is not None else []
                    if reply.filled or (seen and seen[-1][0] >= since):
                        return True
        return False

    def _answers(self, line: Shape) -> bool:
        """Whether the board shows the opponent's reply to `line`, made or under way."""
        reply = self._replies(line)
        if reply.full(self.occupied) or reply.partial(self.occupied):
            return True
        # The opponent holding pieces of his own, even ones that cannot move.
        emptied = reply.occupied & ~self.occupied
        own = reply.board.occupied_co[reply.board.turn]
        return bool(emptied) and not self.occupied & ~reply.occupied and not emptied & ~own

    def _reply_put_down(self, line: Shape, since: float) -> bool:
        """Whether the opponent's reply to `line` is seen putting a piece down."""
        after = line.after(self.turn.position.occupied)
        if self.occupied & ~after:
            return True
        events = self.turn.events_on
        return any(reply.captured is not None and events.get(reply.captured, [(NEVER, False)])
                   [-1][0] >= since for reply in self._replies(line).full(self.occupied))

    def _opponent_started(self, t: int) -> bool:
        """If the board shows the opponent answering a move, that move is complete."""
        waiting = False
        for match in self._lines():
            fitting = [s for s in match.shapes if self._answers(s)]
            if (fitting and not self._placed(match) and self._clock_in_use
                    and self._pressed is None):
                # A piece in hand that no one saw land may still be on its way: with a
                # clock its press says so; failing that, a reply that puts a piece down.
                waiting = True
                since = match.left_at if match.left_at is not None else t
                fitting = [s for s in fitting if self._reply_put_down(s, since)]
            if fitting:
                break
        else:
            self.turn.waiting_reply = waiting
            if waiting:
                self._explained(t)
            return waiting
        old = self.turn
        # What happened since the board left the move is the opponent's, not the mover's.
        cutoff = match.left_at if match.left_at is not None else t
        chosen = self._choose(fitting, before=cutoff)
        if chosen is ILLEGAL:
            return False
        if chosen is None:
            # Still undecided; the reply will tell.
            old.ambiguous = _Match(self._distinct(fitting), match.since, cutoff)
            self._dirty = True
            self._explained(t)
            return True
        since = match.since
        carried = {sq: [e for e in seen if e[0] >= cutoff] for sq, seen in old.events_on.items()}
        touched_since = [(when, sq) for when, sq in old.touched if when >= cutoff]
        old.touched = [(when, sq) for when, sq in old.touched if when < cutoff]
        old.events_on = {sq: [e for e in seen if e[0] < cutoff] for sq, seen in old.events_on.items()}
        choice = None
        if old.promotion is not None and old.promotion_at >= cutoff:
            choice = (old.promotion, old.promotion_at)  # set after the opponent began: his
            old.promotion = None
        self._commit(fitting, since)
        if self.result is None:
            if choice is not None:
                self.turn.promotion, self.turn.promotion_at = choice
            # The opponent's lifts so far are the new turn's touches.
            lifted = self.turn.position.occupied & ~self.occupied
            touched = dict((sq, when) for when, sq in reversed(touched_since))
            for sq, seen in carried.items():
                lift = self._first_real_lift(seen)
                if lift is not None:
                    touched.setdefault(sq, lift)
            for sq in _squares(lifted):
                touched.setdefault(sq, (carried.get(sq) or [(t, False)])[0][0])
            self.turn.touched = sorted((when, sq) for sq, when in touched.items()
                                       if self.turn.position.occupied & chess.BB_SQUARES[sq])
            self.turn.events_on.update((sq, seen) for sq, seen in carried.items() if seen)
            self._explain(t)
        return True

    def _first_real_lift(self, seen: list[tuple[int, bool]]) -> int | None:
        """The first lift in these raw events that lasted past the debounce."""
        for (when, placed), after in zip(seen, seen[1:] + [(FOREVER, True)]):
            if not placed and after[0] - when >= self.debouncer.settle:
                return when
        return None

    def _explained(self, t: int) -> None:
        if self._unexplained_since is not None:
            self._unexplained_since = None
            if "position-mismatch" in self.alerts:
                self._clear(t, "position-mismatch")
            else:
                self._short_wrong_side(t)
        self._unexplained_lifts = set()
        if "illegal-move" in self.alerts and self.profile.illegal_at_once:
            self._clear(t, "illegal-move")
        if "illegal-move" in self.alerts and self.occupied == self.turn.position.occupied:
            self._clear(t, "illegal-move")  # the position is reinstated

    def _unexplained(self, t: int) -> None:
        position = self.turn.position
        emptied = position.occupied & ~self.occupied
        filled = self.occupied & ~position.occupied
        own = position.board.occupied_co[position.board.turn]
        in_hand = emptied & own
        taken = emptied & ~own
        # One hand, one move: at most two own pieces (castling) and one victim in the air.
        if in_hand and in_hand.bit_count() <= 2 and taken.bit_count() <= 1 \
                and filled.bit_count() <= in_hand.bit_count():
            # The mover's pieces in hand, put down or not: a move attempt, perhaps illegal,
            # judged at the clock press and not hinted at before it (12.6).
            self._explained(t)
            if filled and self.profile.illegal_at_once and "illegal-move" not in self.alerts:
                self._alert(t, "illegal-move", position.board.turn, _squares(emptied | filled),
                            "this placement is not a legal move; put the piece back")
            return
        if self._unexplained_since is None:
            self._unexplained_since = t
        self._unexplained_lifts |= set(_squares(emptied & ~own))

    def _short_wrong_side(self, t: int) -> None:
        """An opponent's piece lifted and put back before the mismatch alert: touched out of turn."""
        board = self.turn.position.board
        touched = [sq for sq in self._unexplained_lifts if board.color_at(sq) == (not board.turn)]
        if touched and self.occupied & chess.BB_SQUARES[touched[0]] \
                and self.remote.side != (not board.turn):  # the remote side touches nothing
            side = not board.turn
            self._alert(t, "wrong-side", side, tuple(touched),
                        f"{_NAMES[side]} lifted a piece on {_NAMES[board.turn]}'s turn")
            self._clear(t, "wrong-side")

    def _mismatch(self, when: int) -> None:
        reference = self._reference_occupancy()
        missing = reference & ~self.occupied
        extra = self.occupied & ~reference
        squares = _squares(missing | extra)
        text = "restore the position"
        if missing:
            text += f": put back the pieces on {_names(_squares(missing))}"
        if extra:
            text += f"; remove the pieces from {_names(_squares(extra))}"
        self._alert(when, "position-mismatch", None, squares, text)

    def _reference_occupancy(self) -> chess.Bitboard:
        lines = self._lines()
        base = self.turn.position.occupied
        return lines[0].shapes[0].after(base) if lines else base

    # ------------------------------------------------------------------ the clock

    def _clock(self, t: int, side: chess.Color,
               times: tuple[float, float] | None = None) -> None:
        self._clock_in_use = True
        if self._remote_on and self.remote.busy(self.board):
            return  # the board lags the game: no move of the person's stands to complete
        if side != self.board.turn and self.turn.ambiguous is not None:
            # The opponent completes his reply while the capture is undecided: decide it,
            # then read his reply in the position it answers.
            self._commit(self.turn.ambiguous.shapes, t, guess=True)
            if self.result is None:
                self._explain(t)
        if side != self.board.turn:
            return  # the lever is already down on that side: nothing happens
        self._pressed = t
        self._reported = None if times is None else (t, times)
        if t - self._last_raw < PRESS_SKEW_US:
            # A square toggled just now: a slide's blip or a bounce still going, or the
            # last placement skewed behind the press. Judge once the board has settled.
            self._defer_press(t)
            return
        if self.debouncer.placing:  # a slid piece's blip, or its landing: wait and see
            self._defer_press(t)
            return
        plies = len(self.board.move_stack)
        for change in self.debouncer.flush():  # the hand has left: what is down is down
            self._settled(SettledChange(min(change.t, t), change.square, change.occupied))
        if self.result is not None or len(self.board.move_stack) != plies:
            return
        if self.faulty:  # the hand has left: a faulty square may now be where it went
            self.occupied = self._reading(deciding=True)
            self._explain(t)
        turn = self.turn
        if turn.ambiguous is not None:
            return  # the capture is complete; it waits for the capturing square
        if turn.match is not None and self._placed(turn.match) and not self._promoting(turn.match):
            self._complete_match(t)
        else:
            self._defer_press(t)

    @staticmethod
    def _promoting(match: _Match) -> bool:
        """A promotion: at a press its selector may still come, within the press's grace
        (the player presses, then sets the piece) or until the opponent starts."""
        return bool(match.shapes[0].move.promotion)

    def _defer_press(self, t: int) -> None:
        """Judge the press CLOCK_GRACE later (a placement skewed behind it, a piece still in
        hand), or as soon as the opponent lifts one of his pieces that stood still."""
        self._clock_decision = t + CLOCK_GRACE_US
        board = self.board
        in_hand = board.occupied_co[board.turn] & ~(self.occupied & self.debouncer.raw)
        victims = 0  # what a piece in hand may yet take: its lift is the mover's
        for move in board.generate_legal_captures(in_hand):
            victims |= chess.BB_SQUARES[move.to_square]
            if board.is_en_passant(move):
                victims |= chess.BB_SQUARES[move.to_square ^ 8]  # the pawn passed by
        self._waiting_pieces = self.debouncer.steady & board.occupied_co[not board.turn] & ~victims

    def _decide_clock(self, when: int) -> None:
        self._clock_decision = None
        plies = len(self.board.move_stack)
        for change in self.debouncer.flush():
            self._settled(SettledChange(min(change.t, when), change.square, change.occupied))
        if self.result is not None or len(self.board.move_stack) != plies:
            return
        turn, pressed = self.turn, self._pressed if self._pressed is not None else when
        if turn.ambiguous is not None:
            return
        if turn.match is None and self.faulty:
            self.occupied = self._reading(deciding=True)
            self._explain(when)
        if turn.match is None:
            taken = self._landed_then_taken(pressed)
            if taken is not None:
                shapes, lifted = taken
                chosen = self._choose(shapes, before=lifted)  # (that lift is not evidence)
                if isinstance(chosen, Shape):
                    self._push(self._with_promotion(chosen, shapes), pressed)
                    if self.result is None:
                        self._explain(when)  # the lift was the opponent's: his turn now
                    return
        stuck = self._one_flip() if turn.match is None else None
        if stuck is not None:
            self._sensor_fault(pressed, stuck[0], "did not change when the move was made")
            self.occupied = self._reading(deciding=True)
            self._explain(when)
        if turn.match is None and turn.seen and self._opponent_started(when):
            if len(self.board.move_stack) != plies or self.turn.ambiguous is not None:
                return  # the move stood at the press; what came since is the reply
        if turn.match is not None:
            self._complete_match(when)
        elif self.occupied == turn.position.occupied:
            if self.profile.clock_without_move_is_illegal and self.remote.side is None:
                # (against a computer a press without a move wrongs nobody: it does nothing)
                self._illegal(pressed, "clock-no-move", (),
                              "the clock was pressed without a move (FIDE 7.5.3)")
            else:
                self._pressed = self._reported = None  # nothing happens: the turn goes on
        else:
            self._illegal_move(pressed)

    def _landed_then_taken(self, pressed: int) -> tuple[list[Shape], int] | None:
        """The move made if a piece that landed before the press, and was lifted just after
        it (too soon to settle), did land: the opponent taking it at once; and when he
        lifted it. (Not a slide's blip: then the piece lands further on, and the move is
        matched there.)"""
        position = self.turn.position
        for square, seen in self.turn.events_on.items():
            bit = chess.BB_SQUARES[square]
            if self.occupied & bit:
                continue
            lifts = [when for when, placed in seen if not placed and when > pressed]
            if lifts and any(placed and when <= pressed for when, placed in seen):
                full = position.full(self.occupied | bit)
                if full:
                    return full, lifts[0]
        return None

    # ------------------------------------------------------------------ completing moves

    def _complete_match(self, t: int, guess: bool = False) -> None:
        match = self.turn.match
        assert match is not None
        self._commit(match.shapes, match.since, guess=guess)

    def _commit(self, shapes: list[Shape], t: int, guess: bool = False) -> None:
        """Complete the move these shapes describe, or wait if the capture is ambiguous."""
        chosen = self._choose(shapes)
        if chosen is ILLEGAL:
            if self._pressed is not None:  # completed by the press: 7.5.1
                landed, taken = self._capture_evidence(shapes[0].move.from_square)
                self._illegal_move(self._pressed, tuple(landed[:1] or taken[:1]))
            return  # otherwise not a move: what follows will show what it is
        if chosen is None and not guess:
            # What follows is the opponent's, or the capturing piece being shown. The press
            # completed the move: the clock goes over now, whatever square it took.
            if self._pressed is not None and self._switched is None:
                self._switched = self._press_clock(self.board.turn, t)
                self._pressed = None
            self.turn.ambiguous = _Match(self._distinct(shapes), t, self._now)
            self._dirty = True
            self.turn.match = None
            self._clock_decision = None
            return
        if not isinstance(chosen, Shape):
            chosen = self._distinct(shapes)[0]
            self._note(t, f"capture square not seen: {chess.square_name(chosen.move.to_square)} "
                          "assumed")
        self._push(self._with_promotion(chosen, shapes), t)

    @staticmethod
    def _distinct(shapes: list[Shape]) -> list[Shape]:
        """One shape per destination (promotion pieces folded)."""
        seen: dict[chess.Square, Shape] = {}
        for shape in shapes:
            seen.setdefault(shape.move.to_square, shape)
        return list(seen.values())

    def _choose(self, shapes: list[Shape], before: int = FOREVER) -> Shape | None | _Illegal:
        """The move among shapes of one occupancy, from the event history; None when
        nothing tells captures apart, ILLEGAL when the history shows a capture elsewhere."""
        candidates = self._distinct(shapes)
        if candidates[0].captured is None or candidates[0].filled:
            return candidates[0] if len(candidates) == 1 else None
        landed, taken = self._capture_evidence(candidates[0].move.from_square, before)
        for square in landed + taken:
            for shape in candidates:
                if shape.captured == square:
                    return shape
            if self._pressed is not None:
                # At the press the hands are the mover's: the piece came down on a square
                # it cannot capture. Without a press, that may be the opponent's touch.
                return ILLEGAL
        return candidates[0] if len(candidates) == 1 else None

    def _capture_evidence(
        self, origin: chess.Square, before: int = FOREVER
    ) -> tuple[list[chess.Square], list[chess.Square]]:
        """Where a piece lifted from `origin` was seen to capture, likeliest first.

        Landings: enemy squares whose events after the lift end with a placement (even a
        2 ms blip of a fast swap), earliest first: once the piece is down, later events
        are someone else's. Victims taken first: enemy squares emptied before the lift
        and not put back, latest first. A touched enemy piece put back is neither.
        """
        events = self.turn.events_on
        board = self.turn.position.board
        lifted = max((w for w, placed in events.get(origin, []) if w < before and not placed),
                     default=NEVER)
        landed: list[tuple[int, chess.Square]] = []
        taken: list[tuple[int, chess.Square]] = []
        for square in chess.scan_forward(board.occupied_co[not board.turn]):
            seen = [e for e in events.get(square, ()) if e[0] < before]
            if not seen:
                continue
            after = [e for e in seen if e[0] >= lifted]
            if after and after[-1][1]:
                landed.append((after[0][0], square))
            elif not after and not seen[-1][1]:
                taken.append((-seen[-1][0], square))
        return [sq for _, sq in sorted(landed)], [sq for _, sq in sorted(taken)]

    def _with_promotion(self, chosen: Shape, shapes: list[Shape]) -> Shape:
        if not chosen.move.promotion:
            return chosen
        piece = self.turn.promotion or chess.QUEEN
        for shape in shapes:
            if shape.move.to_square == chosen.move.to_square and shape.move.promotion == piece:
                return shape
        return chosen

    def _resolve_ambiguity_by_touch(self, square: chess.Square) -> None:
        """The capturing piece lifted and put back on one candidate square decides it."""
        if self.turn.ambiguous is None:
            return
        candidates = self.turn.ambiguous.shapes
        if square not in {s.move.to_square for s in candidates}:
            return
        if self.debouncer.raw != candidates[0].after(self.turn.position.occupied):
            return  # something else moved too: the opponent's reply will decide
        for shape in candidates:
            if shape.move.to_square == square:
                self.turn.ambiguous = None
                self._push(self._with_promotion(shape, candidates), self._now)
                return

    def _push(self, shape: Shape, t: int) -> None:
        board = self.board
        mover = board.turn
        self._from_scan = False
        for code in ("illegal-move", "clock-no-move", "touch-move", "move-changed"):
            self._clear(t, code)  # the previous move's irregularities are settled
        self._check_touch_move(shape, t)
        self._check_changed(shape, t)
        move = shape.move
        san = board.san_and_push(move)
        pressed, self._switched = self._switched, None
        if pressed is None:
            pressed = self._press_clock(mover, t)
        self._pressed = None
        remaining, elapsed = pressed if pressed is not None else (None, None)
        self._out.append(MoveMade(seconds(t), len(board.move_stack), move, san, remaining, elapsed))
        if self._offer_pending is not None and self.draw_offer == mover:
            self._note(self._offer_pending, f"{_NAMES[mover]} offers a draw (=)")
        self._offer_pending = None
        if self.draw_offer is not None and self.draw_offer != mover:
            self.draw_offer = None  # declined by moving
        self._clock_decision = None
        old, self.turn = self.turn, _Turn(_Position(board), t)
        self.occupied = self._reading()
        if self._claim_pending is not None:
            self._judge_pending_claim(t, mover)
            if self.result is not None:
                return
        if not move.promotion and old.promotion and old.promotion_at > t:
            # Set after this move stood on the board: the opponent's choice, made early.
            self.turn.promotion, self.turn.promotion_at = old.promotion, old.promotion_at
        self._check_game_end(t)

    # ------------------------------------------------------------------ rules

    def _check_touch_move(self, shape: Shape, t: int) -> None:
        if not self.profile.touch_move:
            return
        board, turn = self.board, self.turn
        mover = board.turn
        position = turn.position
        moved = shape.moved_from | (chess.BB_SQUARES[shape.captured] if shape.captured is not None
                                    else 0)
        only_the_move = turn.must_move is None and all(
            moved & chess.BB_SQUARES[sq] for _, sq in turn.touched)
        if only_the_move and not board.is_castling(shape.move):
            return  # only the pieces of the move itself were touched: the common case
        touched = sorted(turn.touched)
        own = [(when, sq) for when, sq in touched
               if board.color_at(sq) == mover and position.movable(sq)]
        enemy = [(when, sq) for when, sq in touched
                 if board.color_at(sq) == (not mover) and position.capturable(sq)
                 and self.remote.side is None]  # the person also handles the computer's pieces
        if turn.must_move is not None and position.movable(turn.must_move):
            own.insert(0, (NEVER, turn.must_move))
        moved_from = shape.moved_from
        if board.is_castling(shape.move):
            king, rook = self._castling_squares(shape)
            lifted = dict((sq, when) for when, sq in reversed(turn.touched))
            if rook in lifted and (king not in lifted
                                   or lifted[rook] < lifted[king] - ROOK_FIRST_MARGIN_US):
                self._alert(t, "touch-move", mover, (rook,),
                            f"{_NAMES[mover]} touched the rook before the king: no castling "
                            "with that rook; the rook must move (FIDE 4.4.2)")
                return
        elif self._must_castle(shape, t):
            return
        # 4.3.3: an own and an enemy piece touched (the first of each, in either order):
        # that one must take this one, if it legally can.
        if own and enemy:
            attacker, victim = own[0][1], enemy[0][1]
            if any(shape_of(board, m).captured == victim
                   for m in board.generate_legal_moves(chess.BB_SQUARES[attacker])):
                if (shape.move.from_square, shape.captured) != (attacker, victim):
                    self._touch_alert(t, mover, (attacker, victim),
                                      f"the piece on {chess.square_name(attacker)} must "
                                      f"capture on {chess.square_name(victim)} (FIDE 4.3.3)")
                return
        # Otherwise the first piece touched that can be moved or captured (4.3.1, 4.3.2).
        first = min(own + enemy, default=None)
        if first is None:
            return
        square = first[1]
        if board.color_at(square) == mover and not moved_from & chess.BB_SQUARES[square]:
            self._touch_alert(t, mover, (square,), f"the touched piece on "
                              f"{chess.square_name(square)} must move (FIDE 4.3.1)")
        elif board.color_at(square) != mover and shape.captured != square:
            self._touch_alert(t, mover, (square,), f"the touched piece on "
                              f"{chess.square_name(square)} must be captured (FIDE 4.3.2)")

    def _must_castle(self, shape: Shape, t: int) -> bool:
        """4.4.1: the king, then a rook, touched: castling with it, if legal, is the move."""
        board, turn = self.board, self.turn
        king = board.king(board.turn)
        lifted = dict((sq, when) for when, sq in reversed(turn.touched))
        if king is None or king not in lifted:
            return False
        for castle in board.generate_castling_moves():
            _, rook = self._castling_squares(shape_of(board, castle))
            if rook in lifted and lifted[rook] >= lifted[king] - ROOK_FIRST_MARGIN_US:
                self._touch_alert(t, board.turn, (king, rook),
                                  f"king and rook touched: castling ({board.san(castle)}) "
                                  "was legal and must be played (FIDE 4.4.1)")
                return True
        return False

    def _touch_alert(self, t: int, side: chess.Color, squares: tuple[chess.Square, ...],
                     text: str) -> None:
        self._alert(t, "touch-move", side, squares, f"{_NAMES[side]}: {text}")

    def _castling_squares(self, shape: Shape) -> tuple[chess.Square, chess.Square]:
        king = shape.move.from_square
        rook = next(sq for sq in _squares(shape.moved_from) if sq != king)
        return king, rook

    def _check_changed(self, shape: Shape, t: int) -> None:
        if not self.profile.move_changed:
            return
        # A released placement that the final move only extends (the rook of a castling
        # placed first, a pawn later replaced by the promoted piece) is not a change.
        changed = [m for m in self.turn.released
                   if m.key[0] & ~shape.vacated or m.key[1] & ~shape.filled]
        if changed:
            first = changed[0].shapes[0].move
            mover = self.board.turn
            self._alert(t, "move-changed", mover, (first.to_square, shape.move.to_square),
                        f"{_NAMES[mover]} released the piece on {chess.square_name(first.to_square)}"
                        f" ({self.board.san(first)}) and then moved it to "
                        f"{chess.square_name(shape.move.to_square)} (FIDE 4.7)")

    def _landings_of(self, origins: chess.Bitboard) -> tuple[chess.Square, ...]:
        """Squares the lifted pieces were seen coming down on, unseen in the occupancy."""
        found: list[chess.Square] = []
        for origin in chess.scan_forward(origins):
            landed, taken = self._capture_evidence(origin)
            found += landed[:1] or taken[:1]
        return tuple(found)

    def _illegal_move(self, t: int, captured: tuple[chess.Square, ...] = ()) -> None:
        """`captured`: a square the piece was seen capturing on, unseen in the occupancy."""
        if self._after_outage or self._from_scan:
            self._outage_mismatch(t)
            return
        position = self.turn.position
        emptied = position.occupied & ~self.occupied
        filled = self.occupied & ~position.occupied
        for square in captured or self._landings_of(emptied & position.board.occupied_co[
                position.board.turn]):
            filled |= chess.BB_SQUARES[square]
        own = emptied & position.board.occupied_co[position.board.turn]
        squares = _squares(emptied | filled)
        self._illegal(t, "illegal-move", squares,
                      f"illegal move ({_names(_squares(emptied))} -> {_names(_squares(filled))}"
                      "): the position before it is reinstated and the same piece must move "
                      "(FIDE 7.5.1)")
        if own:
            self.turn.must_move = _squares(own)[0]

    def _abandon_attempt(self) -> None:
        """The press did not complete a move: the mover's clock runs on, and what stands on
        the board is not a move, however it looks; the replacement move starts afresh."""
        self._pressed = self._reported = None
        turn = self.turn
        turn.match = None
        turn.touched.clear()
        turn.released.clear()
        turn.events_on.clear()
        turn.seen.clear()

    def _outage_mismatch(self, t: int) -> None:
        """A press on a board that changed unseen while the link was down: no penalty; the
        position is to be restored (the LEDs show how), and play goes on from it."""
        self._abandon_attempt()
        if "position-mismatch" not in self.alerts:
            self._mismatch(t)
            self._note(t, "moves were made while the board was not connected and its scan "
                          "does not tell which: restore the position shown (no penalty)")

    def _illegal(self, t: int, code: str, squares: tuple[chess.Square, ...], text: str) -> None:
        """A completed illegal move (7.5.1) or a press without a move (7.5.3)."""
        mover = self.board.turn
        self._alert(t, code, mover, squares, f"{_NAMES[mover]}: {text}")
        self._abandon_attempt()
        if not self.profile.penalty_seconds and self.profile.illegal_moves_to_lose is None:
            return
        self.illegal_moves[mover] += 1
        limit = self.profile.illegal_moves_to_lose
        if limit is not None and self.illegal_moves[mover] >= limit:
            self._game_over(t, self._win_for(not mover), "rules-infraction")
            return
        if self.profile.penalty_seconds:
            self._penalty(t, not mover, f"{code} by {_NAMES[mover]}")
            self._note(t, f"{code} by {_NAMES[mover]}: +{self.profile.penalty_seconds // 60} "
                          f"min to {_NAMES[not mover]} (FIDE 7.5.5)")

    def _clock_now(self) -> int:
        """The latest time the clock was given, in us (0 before any)."""
        ms = self.clock.now_ms
        return 0 if ms is None else ms * 1000

    def _switched_at(self, t: int) -> int:
        """When the clock goes over: at the press, or where no press, when the move stood."""
        return max(self._pressed if self._pressed is not None else t, self._clock_now())

    def _press_clock(self, mover: chess.Color, t: int) -> PressResult | None:
        """The clock goes over for the move just completed; an external clock's times,
        reported with the press that completed it, replace what the lever clock computed."""
        at_us = self._switched_at(t)
        at = seconds(at_us)  # (the clock takes seconds and keeps whole ms: exact)
        pressed = self.clock.press(mover, at)
        reported, self._reported = self._reported, None
        if pressed is None or reported is None or reported[0] != self._pressed:
            return pressed
        when, (white, black) = reported
        reading = ClockReading(white, black, *reading_running(mover))
        # the moves made before this press, which the validator cannot count across a
        # reconnection, decide the period (and so the time this press may add)
        self.external.moves_before(self.clock.moves_made(chess.WHITE) - (mover == chess.WHITE),
                                   self.clock.moves_made(chess.BLACK) - (mover == chess.BLACK))
        check = self.external.check(reading, seconds(when))
        if not check.accepted:
            own = (self.clock.remaining(chess.WHITE, at), self.clock.remaining(chess.BLACK, at))
            if own[0] is not None and own[1] is not None:  # the next is judged against these
                self.external.rebase(ClockReading(own[0], own[1], *reading_running(mover)),
                                     seconds(when))
            if "clock-fault" in self.alerts:  # already shown: the board keeps its own time
                return pressed
            self._alert(when, "clock-fault", None, (),
                        f"the clock's times were not used ({check.reason}); the board keeps "
                        "its own: check the clock")
            return pressed
        self._clear(when, "clock-fault")
        self.clock.set_times(white, black, at)
        return PressResult(reading.time(mover), pressed.elapsed)

    def _penalty(self, t: int, to_side: chess.Color, reason: str) -> None:
        """Time for the opponent of the offender (7.5.5, 9.5.3), applied to the clock."""
        added = self.profile.penalty_seconds
        self.external.allow_added_time(to_side, added)  # the arbiter sets it on the clock
        self.clock.add_time(to_side, added, seconds(max(t, self._clock_now())))
        self._out.append(Penalty(seconds(t), to_side, added, reason))

    def _flag(self, when: int) -> None:
        """The side to move ran out of time (FIDE 6.9), unless a mate already stood."""
        match = self.turn.match
        if match is not None and self._placed(match) and all(self._ends_game(s)
                                                             for s in match.shapes):
            self._complete_match(match.since, guess=True)  # 5.1.1: the mate ended the game
            return
        side = self.clock.turn
        assert side is not None
        king = self.board.king(side)
        self._alert(when, "flag", side, (king,) if king is not None else (),
                    f"{_NAMES[side]}'s time ran out")
        result, termination = flag_result(self.board, side)
        self._game_over(when, result, termination)

    def _win_for(self, winner: chess.Color) -> str:
        """Win for `winner`, or a draw when `winner` could not mate by any series (5.1.2, 6.9)."""
        if self.board.has_insufficient_material(winner):
            return "1/2-1/2"
        return "1-0" if winner == chess.WHITE else "0-1"

    # ------------------------------------------------------------------ draws and results

    def _check_game_end(self, t: int) -> None:
        board = self.board
        outcome = board.outcome(claim_draw=False)
        if outcome is not None:
            termination = {
                chess.Termination.CHECKMATE: "checkmate",
                chess.Termination.STALEMATE: "stalemate",
                chess.Termination.INSUFFICIENT_MATERIAL: "insufficient-material",
                chess.Termination.FIVEFOLD_REPETITION: "fivefold-repetition",
                chess.Termination.SEVENTYFIVE_MOVES: "seventy-five-moves",
            }.get(outcome.termination, outcome.termination.name.lower())
            self._game_over(t, outcome.result(), termination)
        elif self.profile.auto_claimable_draws:
            if board.is_repetition(3):
                self._game_over(t, "1/2-1/2", "threefold-repetition")
            elif board.is_fifty_moves():
                self._game_over(t, "1/2-1/2", "fifty-moves")

    def _game_ending_deadline(self) -> int | None:
        """When a move standing on the board may end the game by itself (checked then)."""
        match = self.turn.match
        if match is None or self._clock_decision is not None or match.ends_game is False:
            return None
        return match.since + GAME_END_HOLD_US

    def _landed(self, match: _Match) -> bool:
        """Whether the capturing piece was seen landing on one of its victims (by the time
        the board moved on from the capture: later events there are someone else's)."""
        return bool(self._landings(match))

    def _landings(self, match: _Match) -> list[Shape]:
        """The match's captures whose piece was seen coming down on the victim's square."""
        before = match.left_at if match.left_at is not None else FOREVER
        landed, _ = self._capture_evidence(match.shapes[0].move.from_square, before)
        return [shape for shape in match.shapes if shape.captured in landed[:1]]

    def _ends_game(self, shape: Shape) -> bool:
        board = self.board
        board.push(shape.move)
        try:
            return board.is_checkmate() or board.is_stalemate() or board.is_insufficient_material()
        finally:
            board.pop()

    def _end_by_placement(self, when: int) -> None:
        """A mating or drawing move ends the game without a press (FIDE 6.2.1)."""
        match = self.turn.match
        assert match is not None
        # A piece in hand is not yet a capture: only a piece seen arriving counts.
        match.ends_game = self._placed(match) and all(self._ends_game(s) for s in match.shapes)
        if match.ends_game:
            self._complete_match(when, guess=True)

    def _accept_draw(self, t: int, side: chess.Color) -> None:
        if self.draw_offer is None or self.draw_offer == side:
            return
        self._complete_for(side, t, ending=True)  # the offerer's move stands
        if len(self.board.move_stack) < 2:
            self._note(t, "draw agreement refused: each side must have moved (FIDE 5.2.3)")
            return
        self._complete_for(side, t)
        self._game_over(t, "1/2-1/2", "agreement")

    def _claim(self, t: int, side: chess.Color) -> None:
        self._complete_for(side, t)
        if self.result is not None:
            return
        board, turn = self.board, self.turn
        if side != board.turn:
            self._note(t, f"{_NAMES[side]}'s draw claim ignored: only the player having the "
                          "move may claim (FIDE 9.2, 9.3)")
            return
        declared = turn.match.shapes if turn.match else []
        choice = self._choose(declared) if declared else None
        if not isinstance(choice, Shape):
            choice = None
        declared_from = choice.moved_from if choice is not None else 0
        if any(not declared_from & chess.BB_SQUARES[sq] for _, sq in turn.touched):
            self._note(t, f"{_NAMES[side]}'s draw claim void: a piece was touched first "
                          "(FIDE 9.4)")
            return
        if choice is not None:
            board.push(self._with_promotion(choice, declared).move)
        try:
            threefold, fifty = board.is_repetition(3), board.is_fifty_moves()
        finally:
            if choice is not None:
                board.pop()
        if threefold or fifty:
            if choice is not None:
                self._complete_match(t)
            self._game_over(t, "1/2-1/2", "threefold-repetition" if threefold else "fifty-moves")
            return
        if choice is None:
            # 9.2.1: the claim may come first and the move it declares after, made on the
            # board without pressing the clock: judged once that move stands.
            self._claim_pending = t
            return
        self._wrong_claim(t, side)

    def _judge_pending_claim(self, t: int, claimant: chess.Color) -> None:
        """The claimant's declared move has been made: judge the claim on it (9.2.1)."""
        self._claim_pending = None
        board = self.board
        if board.is_repetition(3) or board.is_fifty_moves():
            self._game_over(t, "1/2-1/2", "threefold-repetition" if board.is_repetition(3)
                            else "fifty-moves")
        else:
            self._wrong_claim(t, claimant)

    def _wrong_claim(self, t: int, side: chess.Color) -> None:
        self._alert(t, "wrong-claim", side, (),
                    f"{_NAMES[side]} claimed a draw that the position does not allow; "
                    "the game goes on (FIDE 9.5.3)")
        self._clear(t, "wrong-claim")
        if self.profile.penalty_seconds:
            self._penalty(t, not side, f"wrong claim by {_NAMES[side]}")
            self._note(t, f"wrong draw claim by {_NAMES[side]}: "
                          f"+{self.profile.penalty_seconds // 60} min to {_NAMES[not side]}")

    def _game_over(self, t: int, result: str, termination: str) -> None:
        if self.turn.ambiguous is not None:  # a completed capture goes into the record
            self._commit(self.turn.ambiguous.shapes, t, guess=True)
            if self.result is not None:
                return
        self.result = GameOver(seconds(t), result, termination)
        for code in list(self.alerts):
            self._clear(t, code)
        self._clock_decision = None
        self._out.append(self.result)

    # ------------------------------------------------------------------ the remote side

    def _opponent_moved(self, t: int, move: chess.Move) -> None:
        """The remote side's move: the game's at once (its clock stops), then made on the
        board by the person, who is shown it (board_ctl.core.remote)."""
        remote, board = self.remote, self.board
        if (remote.side is None or board.turn != remote.side or remote.execution is not None
                or move not in board.legal_moves):
            return  # not its turn, or not a move: nothing it did not choose is recorded
        before = board.copy(stack=False)
        self._clock_decision = None
        self.turn = _Turn(self.turn.position, self.turn.started)  # the person's touches
        # while it thought are not its own
        self._push(shape_of(board, move), t)
        remote.hint, remote.hint_wanted = None, False
        remote.execution = Execution.of_move(before, move, t, board.occupied)
        self._dirty = True
        self._remote_settled(t)

    def _remote_raw(self, t: int, square: chess.Square, placed: bool) -> bool:
        """A raw change while the board lags the game or the remote side is to move: only
        the hands' evidence and the debouncer see it. True when it is handled here."""
        remote, board = self.remote, self.board
        execution = remote.execution
        if execution is not None:
            if (not placed and execution.move is not None and self.occupied == execution.target
                    and board.color_at(square) == board.turn):
                self._executed(t)  # he lifts a piece of his own: his turn has begun
            else:
                execution.raw(t, square, placed)
        if not remote.busy(board):
            return False
        self._last_raw = t
        self.debouncer.toggle(t, square, placed)
        return True

    def _remote_settled(self, t: int) -> bool:
        """A settled change (or a scan): True when the board is not the person's to play
        on, so nothing is judged; the remote side's move is done once the board shows it."""
        remote = self.remote
        if remote.side is None:
            return False
        remote.hint = None  # a hint is lit until the board changes
        execution = remote.execution
        if execution is not None:
            execution.settled(t, self.occupied)
            if execution.proven:
                self._executed(t)
                return True
        if remote.busy(self.board):
            self._remote_wait(t)
            return True
        return False

    def _remote_wait(self, t: int) -> None:
        """While the board is not the person's to play on, no mismatch is pending."""
        self._unexplained_since = None
        self._unexplained_lifts = set()
        self._clear(t, "position-mismatch")

    def _executed(self, t: int) -> None:
        """The board shows the game again: the person's turn starts now."""
        self.remote.execution = None
        self.turn = _Turn(self.turn.position, t)
        self._dirty = True

    def _remote_observe(self, t: int) -> None:
        """Note when the person's move standing on the board last (re)appeared."""
        remote, match = self.remote, self.turn.match
        if remote.side is not None and match is not remote.standing:
            remote.standing, remote.standing_since = match, t

    def _remote_due(self) -> list[tuple[int, Callable[[int], None]]]:
        remote = self.remote
        if remote.side is None or self.result is not None:
            return []
        due: list[tuple[int, Callable[[int], None]]] = []
        execution = remote.execution
        if execution is not None:
            deadline = execution.deadline()
            if deadline is not None:
                due.append((deadline, self._hold_over))
            return due
        self._remote_observe(self._now)
        match = self.turn.match
        if (match is not None and not self._clock_in_use and self.board.turn != remote.side
                and self._clock_decision is None and self.turn.ambiguous is None
                and self._placed(match)):
            # No clock: a legal move released (FIDE 4.7) is complete, as the remote side
            # cannot start its reply on the board.
            due.append((remote.standing_since + RELEASED_AFTER_US, self._released))
        return due

    def _hold_over(self, when: int) -> None:
        execution = self.remote.execution
        if execution is not None and self.occupied == execution.target:
            self._executed(when)
        elif execution is not None:
            execution.reached = None

    def _released(self, when: int) -> None:
        if self.turn.match is not None:
            self._complete_match(when)

    def _hint_asked(self) -> None:
        remote = self.remote
        if (remote.side is not None and self.profile.hints and not remote.busy(self.board)):
            remote.hint_wanted = True

    def _hint_given(self, move: chess.Move) -> None:
        remote = self.remote
        if (remote.side is not None and not remote.busy(self.board)
                and move in self.board.legal_moves):
            remote.hint, remote.hint_wanted = move, False
            self._dirty = True

    def _takeback(self, t: int) -> None:
        """The last full move back (casual): the person's last move and the reply to it;
        the clocks keep their times, the LEDs guide the pieces back."""
        remote, board = self.remote, self.board
        if remote.side is None or not self.profile.takebacks:
            return
        plies = plies_to_take_back(board, not remote.side)
        if not plies:
            return
        for _ in range(plies):
            board.pop()
        self._out.append(TakenBack(seconds(t), plies))
        if self.clock.turn is not None and self.clock.turn != board.turn:
            self.clock.press(self.clock.turn, seconds(max(t, self._clock_now())))
        for code in ("illegal-move", "clock-no-move", "touch-move", "move-changed"):
            self._clear(t, code)
        self.draw_offer = None
        self._offer_pending = self._claim_pending = None
        self._clock_decision = self._pressed = None
        self._switched = None
        self.turn = _Turn(_Position(board), t)
        remote.hint, remote.hint_wanted = None, False
        remote.execution = Execution.restore(t, board.occupied)
        self._dirty = True
        self._remote_settled(t)

    # ------------------------------------------------------------------ effects

    def _alert(self, t: int, code: str, side: chess.Color | None,
               squares: tuple[chess.Square, ...], text: str) -> None:
        alert = Alert(seconds(t), code, side, squares, text)
        self.alerts[code] = alert
        self._out.append(alert)

    def _clear(self, t: int, code: str) -> None:
        if self.alerts.pop(code, None) is not None:
            self._out.append(AlertCleared(seconds(t), code))

    def _note(self, t: int, text: str) -> None:
        self._out.append(Note(seconds(t), text))

    def led_view(self) -> LedView:
        turn = self.turn
        remote, promotion = self.remote.status(self.board, self.result is not None)
        return LedView(
            board=self.board,
            occupied=self.occupied,
            expected=turn.position.occupied,
            alerts=tuple(self.alerts.values()),
            candidates=tuple(s.move.to_square for s in turn.ambiguous.shapes)
            if turn.ambiguous else (),
            must_move=turn.must_move,
            faulty=self.faulty,
            result=self.result,
            shown=self.remote.lights(self.board),
            remote=remote,
            promotion=promotion,
            restoring=self._remote_on and self.remote.busy(self.board)
            and self.occupied != turn.position.occupied,
        )

    def _drain(self) -> list[Effect]:
        if not self._out and not self._dirty:
            return []
        self._dirty = False
        # The frame is a pure function of this signature: skip the work when it is unchanged.
        sound = any(isinstance(e, (Alert, GameOver)) for e in self._out)
        restoring = ("illegal-move" in self.alerts or "position-mismatch" in self.alerts
                     or (self._remote_on and self.remote.busy(self.board)))
        signature = (
            len(self.board.move_stack), self.result,
            tuple((a.code, a.squares) for a in self.alerts.values()),
            self.turn.ambiguous is not None and self.turn.ambiguous.key, self.turn.must_move,
            (self.occupied, self.turn.position.occupied) if restoring else None, sound,
            self.faulty, self._remote_on and self.remote.signature(),
        )
        if signature != self._led_signature:
            self._led_signature = signature
            frame = led_frame(seconds(self._now), self.led_view(), self._out)
            last = self._last_frame
            if last is None or (frame.squares, frame.status, frame.guidance, frame.buzzer) != (
                    last.squares, last.status, last.guidance, last.buzzer):
                self._out.append(frame)
                self._last_frame = frame
        out, self._out = self._out, []
        return out
