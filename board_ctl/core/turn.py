"""What happened on the board since the last completed move: the record inference reads.

A `Turn` keeps the position the move is made from, the pieces touched (settled lifts),
every raw transition per square (what tells a capture's square), the moves the board has
shown (`Match`: the occupancy after a legal move), which of them stood long enough to be
released (FIDE 4.7), and the promotion selector's settings. Times are whole microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import chess

from board_ctl.core.position import Key, Position
from board_ctl.core.shapes import Shape
from board_ctl.core.timebase import FOREVER

RawEvents = list[tuple[int, bool]]  # (time, placed) raw transitions of one square


@dataclass(slots=True)
class Carried:
    """What happened from the moment the opponent's reply began: his, not the mover's."""

    events: dict[chess.Square, RawEvents]
    touched: list[tuple[int, chess.Square]]
    selections: list[tuple[int, chess.PieceType]]


class Mirror(NamedTuple):
    """A move completed by the press while the board reads as two (or more) legal moves as
    likely, whose positions differ (a piece knocked onto a square the moving piece could
    also have gone to): held open until the board shows one of them (the knocked piece put
    back) or play goes on. `readings`: the flagged one first; `occupied`: the board at the
    press; `squares`: every square any reading or the board differs on."""

    readings: tuple[Shape, ...]
    pressed: int  # the move's time (the press)
    opened: int  # the press judged: what the sensors saw from then on comes after the move
    occupied: chess.Bitboard
    squares: chess.Bitboard


class Match:
    """The board showed the position after one of these moves (same occupancy) from `since`.

    (A plain slotted class: one is made for most placements, and each is a moment of the
    game, compared by identity.)"""

    __slots__ = ("shapes", "since", "left_at", "ends_game", "goes_on", "key", "placed",
                 "promoting")

    def __init__(self, shapes: list[Shape], since: int, left_at: int | None = None) -> None:
        first = shapes[0]
        self.shapes = shapes
        self.since = since
        self.left_at = left_at  # when the board last moved away from it
        self.ends_game: bool | None = None  # computed on first need
        # found by the cheap pre-check: none of its moves ends the game
        self.goes_on = False
        self.key: Key = (first.vacated, first.filled)  # the occupancy change of its shapes
        self.placed = bool(first.filled)  # a piece seen arriving (a capture: one in hand)
        self.promoting = bool(first.move.promotion)

    def __repr__(self) -> str:
        moves = ", ".join(shape.move.uci() for shape in self.shapes)
        return f"Match([{moves}], since={self.since}, left_at={self.left_at})"


class Turn:
    """What happened on the board since the last completed move. (A plain slotted class:
    one is made for every ply.)"""

    __slots__ = ("position", "started", "touched", "events_on", "lifted_raw", "match", "seen",
                 "released", "must_move", "ambiguous", "waiting_reply", "replies",
                 "selections", "made", "knocked", "displaced", "crossing", "asking",
                 "knocked_before", "knock_excused", "mirror")

    def __init__(self, position: Position, started: int) -> None:
        self.position = position
        self.started = started
        self.touched: list[tuple[int, chess.Square]] = []
        self.events_on: dict[chess.Square, RawEvents] = {}
        self.lifted_raw: set[chess.Square] = set()  # raw state: lifted, not back
        self.match: Match | None = None
        self.seen: list[Match] = []  # the opponent may answer any of them
        self.released: list[Match] = []  # legal placements left after 4.7
        self.must_move: chess.Square | None = None  # after an illegal move: 7.5.1 with 4.3
        self.ambiguous: Match | None = None  # a completed capture whose square is unknown
        self.waiting_reply = False  # the opponent may be answering an unseen capture
        self.replies: dict[chess.Move, Position] = {}
        # The promotion selector's settings, (time, piece): each belongs to the move of the
        # side that set it; the latest before the move was completed counts.
        self.selections: list[tuple[int, chess.PieceType]] = []
        self.made: Shape | None = None  # a move made with other squares differing (7.4)
        self.knocked: chess.Bitboard = 0  # pieces found displaced beside a move made: no touches
        # Pieces displaced before the turn began and untouched since (a move was completed
        # with them away, 7.4): no move of this turn's; read as the position has them.
        self.displaced: chess.Bitboard = 0
        # The pieces the last move's hand knocked over (4.2.2): their owner putting them
        # back now is no touch out of turn.
        self.knocked_before: chess.Bitboard = 0
        # A slid piece read as crossing a square (a move on its way): until when that
        # reading holds; the square still held then, it was a stop.
        self.crossing: int | None = None
        # Without a clock, an opponent's piece lifted beside the mover's hand read as
        # knocked over by it, not as his reply begun: until when that reading holds.
        self.knock_excused: int | None = None
        # The last move was read so, or otherwise as likely: the squares of its readings,
        # lit to ask the players to check it until the board next changes.
        self.asking: tuple[chess.Square, ...] = ()
        # The move completed by the press, its readings held open (see `Mirror`).
        self.mirror: Mirror | None = None

    @property
    def board(self) -> chess.Board:
        return self.position.board

    def raw(self, t: int, square: chess.Square, placed: bool) -> None:
        self.events_on.setdefault(square, []).append((t, placed))

    def touch(self, t: int, square: chess.Square) -> None:
        """A piece of the position lifted (settled): touched, once."""
        for _, sq in self.touched:
            if sq == square:
                return
        self.touched.append((t, square))

    def selected(self, before: int = FOREVER) -> chess.PieceType | None:
        """The promotion piece the selector was last set to before `before`."""
        return next((piece for when, piece in reversed(self.selections) if when < before), None)

    def forget(self, square: chess.Square) -> None:
        """What a square reported is no touch and no evidence (its sensor is faulty)."""
        self.touched = [(when, sq) for when, sq in self.touched if sq != square]
        self.events_on.pop(square, None)
        self.lifted_raw.discard(square)

    def abandon(self) -> None:
        """Nothing on the board is a move any more (an illegal attempt was judged)."""
        self.match = None
        self.crossing = None
        self.knock_excused = None
        self.touched.clear()
        self.released.clear()
        self.events_on.clear()
        self.seen.clear()

    def replies_to(self, shape: Shape) -> Position:
        """The position after `shape`, where the opponent's reply is read (cached)."""
        found = self.replies.get(shape.move)
        if found is None:
            board = self.position.board.copy(stack=False)
            board.push(shape.move)
            found = self.replies[shape.move] = Position(board)
        return found

    def split_at(self, cutoff: int) -> Carried:
        """Keep what happened before `cutoff`; return the raw events, touches and
        selector settings from then on (the opponent's, his reply having begun then)."""
        later: dict[chess.Square, RawEvents] = {}
        kept = self.events_on  # (trimmed in place: most squares saw nothing after the cutoff)
        for sq, seen in kept.items():  # (times ascend: most lists lie on one side)
            if not seen or seen[-1][0] < cutoff:
                continue  # (none later: the opponent's record has no list for it)
            if seen[0][0] >= cutoff:
                kept[sq], later[sq] = [], seen
            else:
                kept[sq] = [e for e in seen if e[0] < cutoff]
                later[sq] = [e for e in seen if e[0] >= cutoff]
        touched: list[tuple[int, chess.Square]] = []
        their_touches: list[tuple[int, chess.Square]] = []
        for touch in self.touched:
            (touched if touch[0] < cutoff else their_touches).append(touch)
        self.touched = touched
        their_selections = []
        if self.selections:
            their_selections = [(when, piece) for when, piece in self.selections
                                if when >= cutoff]
            self.selections = [(when, piece) for when, piece in self.selections
                               if when < cutoff]
        return Carried(later, their_touches, their_selections)

    def adopt(self, carried: Carried, lifted: chess.Bitboard, t: int, settle: int) -> None:
        """Take over what the opponent did since his reply began (from `split_at` of the
        turn before): his touches, his lifts that outlasted the debounce, and the pieces
        he holds now (`lifted`), as this turn's touches; his raw events and selector
        settings as its own."""
        events, touched = carried.events, carried.touched
        if (len(touched) == 1 and len(events) == 1 and not self.events_on
                and not carried.selections and not self.selections):
            # The commonest reply begun: one piece lifted, its square's events all his, the
            # turn new. What `_adopt` finds then, without its look at each square.
            when, square = touched[0]
            bit = chess.BB_SQUARES[square]
            if square in events and not lifted & ~bit:
                self.touched = [(when, square)] if self.position.occupied & bit else []
                self.events_on = events
                return
        self._adopt(carried, lifted, t, settle)

    def _adopt(self, carried: Carried, lifted: chess.Bitboard, t: int, settle: int) -> None:
        """`adopt`, every case."""
        events = carried.events  # (squares with events from the cutoff on, only)
        first = {sq: when for when, sq in reversed(carried.touched)}
        for sq, seen in events.items():
            if sq not in first:  # (a touch already counts from its own time)
                lift = first_real_lift(seen, settle)
                if lift is not None:
                    first[sq] = lift
        bb = chess.BB_SQUARES
        for sq in first:  # (the pieces held that no touch or lift counts yet: most often none)
            lifted &= ~bb[sq]
        if lifted:
            for sq in chess.scan_forward(lifted):
                held = events.get(sq)
                first[sq] = held[0][0] if held else t
        occupied = self.position.occupied
        self.touched = sorted([(when, sq) for sq, when in first.items() if occupied & bb[sq]])
        if self.events_on:
            self.events_on.update(events)
        else:
            self.events_on = events  # (a new turn's: the carried record is its own now)
        if carried.selections or self.selections:
            self.selections = sorted(carried.selections + self.selections)


def first_real_lift(seen: RawEvents, settle: int) -> int | None:
    """The first lift in these raw events that lasted past the debounce."""
    last = len(seen) - 1
    for i, (when, placed) in enumerate(seen):
        if not placed and (seen[i + 1][0] if i < last else FOREVER) - when >= settle:
            return when
    return None
