"""The reading of a turn: what the sensors saw since the last completed move, explained.

A pure object with typed inputs and outputs, held by the referee. Its inputs are the
turn's record (`turn.py`: the position, every raw transition per square, the moves the
board has shown, the touches) and the settled occupancy; its outputs say what the board
shows:

- `explain` (a `Reading`): as the turn goes on, the board is the position, a legal move
  made or on its way, or a move answered by the opponent (`Answer`): the cheap reading of
  `inference.py`, decisive for almost every event of a game;
- `made` (a `Verdict`): where the board is not one legal move (pieces still in hand at a
  press, pieces knocked or displaced, a move that matches no legal move), every
  explanation of the differences is scored by one cost model over what the sensors saw,
  and the cheapest wins; the next one and the margin are kept, and a small margin makes
  the reading uncertain (the LEDs then ask, and the record says so);
- `knocked`: which pieces lifted in the turn were knocked by the moving hand, not touched.

The model (see `core/README.md`, "The reading of a turn"): each square that differs from
the position after a candidate move holds a piece that moved without being that move. A
piece that came down on such a square came from a square that emptied: knocked over by the
hand making the move (onto a neighbouring square, quickly, beside the moving piece's
path), displaced (an opponent's piece: never a move of the mover's), or moved and released
on purpose. A deliberate change is never dropped to make a legal move fit: its cost is
above an illegal move's, so where the pieces moved and released match no legal move, the
reading is an illegal move. A piece lifted and not put down anywhere is in a hand or off
the board: displaced, never part of a move. Times are whole microseconds.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import chess

from board_ctl.core import inference as infer
from board_ctl.core.inference import Answer, Context, Reading
from board_ctl.core.shapes import Shape
from board_ctl.core.squares import named_tuple
from board_ctl.core.timebase import FOREVER, NEVER, us
from board_ctl.core.turn import Turn

# ---------------------------------------------------------------------- the parameters

# A piece sliding from one square to the next closes both switches for a moment (the
# magnet between them): a square may close up to 20 ms before the one it leaves opens.
OVERLAP = 0.05  # s, with a margin
# A knocked piece falls or slides onto a neighbouring square in a fraction of a second; a
# piece carried by hand is in the air 0.2-1.5 s, and one moved on purpose may go anywhere.
KNOCK_FLIGHT = 0.6  # s: the longest fall of a knocked piece
# Most fall within a quarter of a second (a piece's height takes 0.1-0.2 s to fall; one
# toppling or sliding over takes a little longer): one that took longer, up to
# KNOCK_FLIGHT, may as well have been carried, and costs more as it does.
KNOCK_FALL = 0.25  # s
# The costs, in the units of an unlikely event (think of -log of its odds):
KNOCKED = 3.0  # a piece of the mover's knocked over by his hand during the move
SLOW_FALL = 3.0  # ... and in the air KNOCK_FLIGHT: added in proportion beyond KNOCK_FALL
DISPLACED = 2.0  # an opponent's piece displaced (7.4): never a move of the mover's
OFF_BOARD = 1.5  # a piece lifted and put down nowhere: in a hand, or fallen off the board
FIRST_LIFTED = 2.0  # the piece the hand lifted first taken as knocked, not as the move's
ILLEGAL = 6.0  # an illegal move: rare, but the only reading of pieces moved on purpose
DELIBERATE = 20.0  # a piece moved and released on purpose, taken as no part of the move
IMPOSSIBLE = 100.0  # a piece come down before it left its square
# Two readings closer than this are not told apart by what the sensors saw: uncertain.
MARGIN = 1.5
MOST_LANDINGS = 3  # pieces come down elsewhere around a move at most: a hand knocks a few

OVERLAP_US, KNOCK_FLIGHT_US, KNOCK_FALL_US = us(OVERLAP), us(KNOCK_FLIGHT), us(KNOCK_FALL)


class Explanation(NamedTuple):
    """One reading of the board: `shape`, the legal move made (None: the pieces moved and
    released match no legal move, an illegal move), with the pieces displaced around it."""

    shape: Shape | None
    cost: float
    displaced: chess.Bitboard  # squares that differ from the position after the move
    knocked: chess.Bitboard  # of the mover's squares emptied, those knocked (no touch, 4.2.2)
    order: tuple[int, int] = (0, 0)  # (the mover's first lift, squares differing): ties


class Verdict(NamedTuple):
    """The readings of the board, cheapest first (an illegal move among them)."""

    readings: tuple[Explanation, ...]

    @property
    def best(self) -> Explanation:
        return self.readings[0]

    @property
    def margin(self) -> float:
        """How much cheaper the best reading is than the next (infinite: the only one)."""
        if len(self.readings) < 2:
            return float("inf")
        return self.readings[1].cost - self.readings[0].cost

    @property
    def uncertain(self) -> bool:
        """The sensors cannot tell the two best readings apart."""
        return self.margin < MARGIN

    @property
    def move(self) -> Shape | None:
        """The legal move made, if the best reading is one."""
        return self.readings[0].shape

    @property
    def legal(self) -> Shape | None:
        """The legal move made: the best reading's, or, where the best is an illegal move
        but a legal one is as likely, that one (no penalty rests on a doubt)."""
        best = self.readings[0]
        if best.shape is not None:
            return best.shape
        for reading in self.readings[1:]:
            if reading.cost - best.cost >= MARGIN:
                return None
            if reading.shape is not None:
                return reading.shape
        return None

    @property
    def others_legal(self) -> tuple[Shape, ...]:
        """The other legal moves as likely as `legal` (its reading uncertain), and, where
        an illegal move is as likely, `legal` itself again (flagged so)."""
        chosen = self.legal
        if chosen is None:
            return ()
        cost = next(r.cost for r in self.readings if r.shape is chosen)
        close = [r for r in self.readings if r.shape is not chosen and abs(r.cost - cost) < MARGIN]
        return tuple(ILLEGAL_READING if r.shape is None else r.shape for r in close
                     if r.shape is None or r.shape.move != chosen.move)


    def positions_differ(self, base: chess.Bitboard) -> bool:
        """Uncertain between legal moves that leave different positions (a piece knocked
        onto a square the moving piece could also have gone to): what the board shows
        next can tell them apart, nothing it showed so far does."""
        others = self.others_legal
        if not others:
            return False
        chosen = self.legal
        assert chosen is not None
        afters = [shape.after(base) for shape in (chosen, *others) if shape.move]
        return len(afters) == len(others) + 1 and len(set(afters)) == len(afters)


# A reading that is no legal move (an illegal move), among the readings of an uncertain
# move: recorded as the null move (UCI "0000").
ILLEGAL_READING = named_tuple(Shape, (chess.Move.null(), 0, 0, None, 0))


def _first_lift(events: list[tuple[int, bool]] | None) -> int:
    if events:
        for when, placed in events:
            if not placed:
                return when
    return FOREVER


def _swapped(turn: Turn, kept: chess.Bitboard) -> chess.Bitboard:
    """The squares of `kept` (occupied before the turn and now) that emptied and filled
    again during it, empty longer than a piece between two squares keeps both closed:
    a piece taken off, and one (the same or another) put on."""
    found = 0
    for square, seen in turn.events_on.items():
        if (kept & chess.BB_SQUARES[square]
                and _last_place(seen) - _first_lift(seen) > OVERLAP_US):
            found |= chess.BB_SQUARES[square]
    return found


def _last_place(events: list[tuple[int, bool]] | None) -> int:
    if events:
        for when, placed in reversed(events):
            if placed:
                return when
    return NEVER


def path(shape: Shape) -> chess.Bitboard:
    """The squares the moving pieces stand on or cross: origins, destinations and the
    squares between (none for a knight)."""
    move = shape.move
    squares = (shape.vacated | shape.filled | chess.BB_SQUARES[move.from_square]
               | chess.BB_SQUARES[move.to_square])
    for origin in chess.scan_forward(shape.moved_from):
        for target in chess.scan_forward(shape.filled | chess.BB_SQUARES[move.to_square]):
            squares |= chess.between(origin, target)
    return squares


class TurnReading:
    """Reads a turn's record (see the module's docstring)."""

    # `explain(turn, ctx)`: what the board shows now (a `Reading`); keeps the turn's record
    # of the moves shown. `answer(turn, ctx)`: the opponent's reply begun to a move shown
    # (an `Answer`), or whether the board is accounted for otherwise. The cheap reading's
    # own functions, not wrapped: `explain` runs at every settled change.
    explain = staticmethod(infer.explain)
    answer = staticmethod(infer.answer)

    def answered_before_the_press(self, turn: Turn, ctx: Context, pressed: int
                                  ) -> Answer | None:
        """A press judged while the board shows a capture nobody saw land: a move whose
        piece was seen standing (placed) until just before the press, when the opponent,
        as in blitz, lifted it to take it (EARLY_LIFT); unless it had only crossed that
        square, pushed along the surface on the capture's way (`inference.crossed`, or
        the next square closing as it left: `inference.moved_on`).
        Such a move was made: the capture would need the piece that stood to have gone
        on, unseen."""
        standing = turn.match
        seen = turn.seen
        for match in reversed(seen):
            if (match is standing or not match.placed or match.left_at is None
                    or match.left_at < pressed - infer.EARLY_LIFT_US
                    or infer.crossed(turn, seen, match, slid=True)
                    or infer.moved_on(turn, match.shapes[0].move.to_square, match.left_at)):
                continue
            fitting = [s for s in match.shapes if infer.answers(turn, s, ctx.occupied)]
            if fitting:
                return named_tuple(Answer, (match, fitting, match.left_at, False))
        return None

    # ------------------------------------------------------------------ the model

    def on_its_way(self, turn: Turn, occupied: chess.Bitboard, leaving: chess.Bitboard
                   ) -> bool:
        """Whether a board the cheap reading did not explain is a legal move on its way,
        its piece pushed along the surface: crossing a square of its way (a slow push
        closes each square it crosses for 100-400 ms, past the debounce), or closing the
        next square before the one it leaves has settled empty (`leaving`: lifts still
        settling; a piece between two squares closes both for up to 20 ms)."""
        position = turn.position
        if position.crossing(occupied):
            return True
        if not leaving:
            return False
        occupied &= ~leaving  # (a slid piece is on its way off those squares)
        return (bool(position.full(occupied)) or position.partial(occupied)
                or position.crossing(occupied))

    def made(self, turn: Turn, occupied: chess.Bitboard, pressed: bool = False) -> Verdict:
        """The readings of a board that is not one legal move: the legal moves made (their
        piece arrived) with the other differences as displaced pieces, and the illegal
        move, each scored; cheapest first. `pressed`: the clock was pressed, the hand has
        left: a capture whose piece nobody saw land is made too, when no piece came down
        after the mover's first lift (else his piece came down there) and none was seen
        landing on another capture's square (a swap's blip: then that is the capture)."""
        position = turn.position
        base, board = position.occupied, position.board
        own = board.occupied_co[board.turn]
        emptied, filled = base & ~occupied, occupied & ~base
        events = turn.events_on
        first = FOREVER  # the mover's first lift in the turn
        for square, seen in events.items():
            if own & chess.BB_SQUARES[square]:
                first = min(first, _first_lift(seen))
        readings = [named_tuple(Explanation, (None, ILLEGAL, 0, 0, (FOREVER, 64)))]
        if not emptied & own:
            return Verdict(tuple(readings))  # (no piece of his left its square: no move)
        unseen_captures = pressed and infer._nothing_down_since_lifted(turn, emptied, filled)
        swapped = _swapped(turn, base & occupied)
        for shape in position.moves_from(emptied & own):
            if shape.vacated & ~emptied or shape.filled & ~filled:
                continue
            if not shape.filled:  # a capture: if seen landing (at the press, or unseen
                # with nothing down since the lift, but never beside one seen landing)
                landed, _ = infer.capture_evidence(turn, shape.move.from_square)
                if shape.captured not in landed[:1] and (landed or not unseen_captures):
                    continue
            lifted = _first_lift(events.get(shape.move.from_square))
            arrival = FOREVER
            for square in chess.scan_forward(shape.filled):
                arrival = min(arrival, _last_place(events.get(square)))
            if shape.filled and arrival < lifted - OVERLAP_US:
                continue  # (a piece arrived before it left: another piece stands there)
            after = shape.after(base)
            missing, extra = after & ~occupied, occupied & ~after
            if swapped:  # (a square emptied and filled again: a piece off it, one onto it)
                victim = chess.BB_SQUARES[shape.captured] if shape.captured is not None else 0
                swapped_here = swapped & ~(shape.vacated | shape.filled | victim)
                missing |= swapped_here
                extra |= swapped_here
            cost, knocked = self._displaced(turn, shape, missing, extra, own, first)
            readings.append(named_tuple(Explanation, (
                shape, cost, missing | extra, knocked,
                (lifted, (missing | extra).bit_count()))))
        readings.sort(key=lambda r: (r.cost, r.order))
        return Verdict(tuple(readings))

    def _displaced(self, turn: Turn, shape: Shape, missing: chess.Bitboard,
                   extra: chess.Bitboard, own: chess.Bitboard, first: int
                   ) -> tuple[float, chess.Bitboard]:
        """The cost of the pieces displaced around `shape` (the squares it should leave
        occupied but are empty, `missing`, and those occupied it should leave empty,
        `extra`), paired the cheapest way; and the mover's squares knocked."""
        if not extra:  # (the common case: pieces in hand or off the board only)
            return (OFF_BOARD * missing.bit_count()
                    + self._first_kept(turn, missing, own, first)), 0
        sources = list(chess.scan_forward(missing))
        landings = list(chess.scan_forward(extra))
        if len(landings) > MOST_LANDINGS or len(sources) > 2 * MOST_LANDINGS:
            # (more pieces down elsewhere than hands knock over: moved on purpose)
            return DELIBERATE * len(landings) + OFF_BOARD * len(sources), 0
        near = path(shape)
        near |= _neighbours(near)
        best, best_knocked = IMPOSSIBLE * 64, 0
        # Each landing from one of the sources, or from nowhere (put down from a hand);
        # the sources left over are off the board. (A few squares each: all pairings.)
        options = sources + [None] * len(landings)
        for chosen in itertools.permutations(options, len(landings)):
            cost, knocked, used = 0.0, 0, 0
            for landing, source in zip(landings, chosen):
                if source is None:
                    cost += DELIBERATE  # a piece from off the board, put down by a hand
                    continue
                used |= chess.BB_SQUARES[source]
                pair, was_knocked = self._pair(turn, source, landing, own, first, near)
                cost += pair
                if was_knocked:
                    knocked |= chess.BB_SQUARES[source]
            cost += OFF_BOARD * (missing & ~used).bit_count()
            cost += self._first_kept(turn, missing & ~used, own, first)
            if cost < best:
                best, best_knocked = cost, knocked
        return best, best_knocked

    @staticmethod
    def _first_kept(turn: Turn, away: chess.Bitboard, own: chess.Bitboard, first: int
                    ) -> float:
        """FIRST_LIFTED if the mover's piece lifted first is among those read as off the
        board: the hand went for that piece (4.3), it is no bystander."""
        for square in chess.scan_forward(away & own):
            if _first_lift(turn.events_on.get(square)) <= first + OVERLAP_US:
                return FIRST_LIFTED
        return 0.0

    @staticmethod
    def _pair(turn: Turn, source: chess.Square, landing: chess.Square, own: chess.Bitboard,
              first: int, near: chess.Bitboard) -> tuple[float, bool]:
        """The cost of the piece from `source` having come down on `landing` beside the
        move (whose squares and their neighbours are `near`); whether it was knocked."""
        events = turn.events_on
        left = _first_lift(events.get(source))
        came = _last_place(events.get(landing))
        if came < left - OVERLAP_US:
            return IMPOSSIBLE, False
        if source == landing:  # lifted and put back: a touch (the touch rules judge it)
            return (0.0 if own & chess.BB_SQUARES[source] else DISPLACED), False
        far = chess.square_distance(source, landing) > 1 or came - left > KNOCK_FLIGHT_US
        if not own & chess.BB_SQUARES[source]:
            # An opponent's piece: displaced, whoever did it; but knocked or nudged, it
            # lands next to its square: put down further, someone moved it on purpose.
            return (DELIBERATE if far else DISPLACED), False
        if far or not near & chess.BB_SQUARES[source]:
            return DELIBERATE, False  # moved on purpose: no knock goes so far, or so slowly
        # (two lifts within OVERLAP are one grasp: either was lifted first)
        slow = SLOW_FALL * max(0, came - left - KNOCK_FALL_US) / (KNOCK_FLIGHT_US - KNOCK_FALL_US)
        return KNOCKED + slow + (FIRST_LIFTED if left <= first + OVERLAP_US else 0.0), True

    @staticmethod
    def knocked(turn: Turn, shape: Shape) -> chess.Bitboard:
        """The pieces the hand making `shape` knocked over (no touch, 4.2.2: an
        accident): see `inference.knocked_by_hand`. Looked for only when a piece besides
        the move's own was touched."""
        victim = chess.BB_SQUARES[shape.captured] if shape.captured is not None else 0
        own = shape.moved_from | shape.vacated | shape.filled | victim
        if all(own & chess.BB_SQUARES[square] for _, square in turn.touched):
            return 0  # (the common case: only the move's own pieces touched)
        origin = shape.move.from_square
        lifted = _first_lift(turn.events_on.get(origin))
        landing = shape.filled | chess.BB_SQUARES[shape.move.to_square]
        arrival = FOREVER
        for square in chess.scan_forward(landing):
            for when, placed in turn.events_on.get(square, ()):
                if placed and when > lifted:
                    arrival = min(arrival, when)
                    break
        return infer.knocked_by_hand(turn, origin, arrival, own)

    @staticmethod
    def first_lifted(turn: Turn) -> chess.Square | None:
        """The mover's piece lifted first in the turn (the piece he touched first)."""
        position = turn.position
        own = position.board.occupied_co[position.board.turn] & position.occupied
        first, found = FOREVER, None
        for square, seen in turn.events_on.items():
            if own & chess.BB_SQUARES[square]:
                when = _first_lift(seen)
                if when < first:
                    first, found = when, square
        return found


def _neighbours(squares: chess.Bitboard) -> chess.Bitboard:
    out = 0
    for square in chess.scan_forward(squares):
        out |= chess.BB_KING_ATTACKS[square]
    return out

