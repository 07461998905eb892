"""How a move is recognised: the settled occupancy and the turn's raw events in, readings
out. Pure functions over a `Turn` (they keep the turn's record of the moves the board has
shown), testable without a referee.

`explain` reads the board as one of:

- the position itself (nothing moved, or a piece was put back);
- the position after one legal move of the side to move (a move waiting to be completed);
- a legal move on its way (any subset of its lifts and placements);
- a legal move followed by the opponent's reply, complete or on its way: the first move
  is then complete (FIDE 6.2.1: the opponent has started), which is how play without a
  clock advances (`Answer`);
- none of these (the referee decides: pieces in hand, an attempt that may be illegal, or
  after 1.5 s a position mismatch).

Captures leave only their origin changed, so the square taken is read from the raw
events (`capture_evidence`, `choose`): where the capturing piece was seen coming down, or
the victim taken first. When nothing tells captures apart, `choose` says so (None).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Final, NamedTuple

import chess

from board_ctl.core.position import Position
from board_ctl.core.shapes import Shape, shape_of, transit
from board_ctl.core.squares import named_tuple, squares, subsets
from board_ctl.core.timebase import FOREVER, NEVER, us
from board_ctl.core.turn import Carried, Match, Turn

RELEASED_AFTER = 1.0  # s a legal placement must stand to count as released (FIDE 4.7)
RELEASED_AFTER_US = us(RELEASED_AFTER)
# A piece pushed along the surface closes each square it crosses for 100-400 ms (500 at
# the slowest); a piece put down on a square and left stands there longer.
CROSSING_HELD = 0.6  # s
# It enters each square as the one behind it opens, or up to 30 ms before; the switches'
# ranges leave a gap of tens of ms at most between them.
SLIDE_GAP = 0.08  # s
CROSSING_HELD_US, SLIDE_GAP_US = us(CROSSING_HELD), us(SLIDE_GAP)


class Illegal:
    """What the history says of a capture whose piece came down elsewhere."""

    def __repr__(self) -> str:
        return "ILLEGAL"


ILLEGAL: Final = Illegal()


class Context(NamedTuple):
    """What inference needs besides the turn: the board now, and the moment."""

    t: int
    occupied: chess.Bitboard  # the settled readings (faulty sensors read as the game needs)
    settle: int  # the debounce time
    clock_in_use: bool  # presses, not the opponent, complete moves
    pressing: bool  # a press is completing the move
    leaving: chess.Bitboard = 0  # squares going empty, still settling
    changing: chess.Square | None = None  # the square whose change is being settled


class Answer(NamedTuple):
    """The opponent has begun his reply to one of `match`'s moves (`fitting`) at `cutoff`:
    the move is complete; what happened from `cutoff` on is his. `guess`: a capture whose
    square nothing told, answered by a reply made: recorded as guessed (flagged, with the
    other readings). `others`: another move's readings the sensors read as likely
    (`Doubt`): the record is flagged with them. (Named tuples: one of each is made for
    most plies, and a frozen dataclass costs a setattr per field.)"""

    match: Match
    fitting: list[Shape]
    cutoff: int
    guess: bool = False
    others: tuple[Shape, ...] = ()  # readings as likely, of another move shown (flagged)


class Reading(NamedTuple):
    explained: bool  # the board is accounted for
    agrees: bool = False  # it shows the position, or a move made from it
    answer: Answer | None = None  # a move to complete, the reply having begun
    then_explained: bool = False  # (after completing it, the board counts as explained)


EXPLAINED: Final = Reading(True)
AGREES: Final = Reading(True, agrees=True)
UNEXPLAINED: Final = Reading(False)


# ---------------------------------------------------------------------- capture evidence


def distinct(shapes: list[Shape]) -> list[Shape]:
    """One shape per destination (promotion pieces folded)."""
    seen: dict[chess.Square, Shape] = {}
    for shape in shapes:
        seen.setdefault(shape.move.to_square, shape)
    return list(seen.values())


def capture_evidence(turn: Turn, origin: chess.Square, before: int = FOREVER
                     ) -> tuple[list[chess.Square], list[chess.Square]]:
    """Where a piece lifted from `origin` was seen to capture, likeliest first.

    Landings: enemy squares whose events after the lift end with a placement (even a
    2 ms blip of a fast swap), earliest first: once the piece is down, later events
    are someone else's. Victims taken first: enemy squares emptied before the lift
    and not put back, latest first. A touched enemy piece put back is neither.
    """
    landed, taken = _evidence(turn, origin, before)
    return [sq for _, sq in landed], [sq for _, sq in taken]


def _evidence(turn: Turn, origin: chess.Square, before: int
              ) -> tuple[list[tuple[int, chess.Square]], list[tuple[int, chess.Square]]]:
    """`capture_evidence` with each square's time (landings: when the piece came down)."""
    events = turn.events_on
    board = turn.position.board
    lifted = NEVER  # (the origin's last lift before `before`: its times ascend)
    for when, placed_ in reversed(events.get(origin, ())):
        if when < before and not placed_:
            lifted = when
            break
    landed: list[tuple[int, chess.Square]] = []
    taken: list[tuple[int, chess.Square]] = []
    # (a piece found displaced, 7.4, is no victim)
    theirs, bb = board.occupied_co[not board.turn] & ~turn.displaced, chess.BB_SQUARES
    for square, all_seen in events.items():  # (the squares that saw events: a few)
        if not theirs & bb[square] or not all_seen:
            continue
        seen = all_seen if all_seen[-1][0] < before else [e for e in all_seen if e[0] < before]
        if not seen:
            continue
        if seen[-1][0] >= lifted:  # (events after the lift: the first of them and the last)
            if seen[-1][1]:
                first = next(e for e in seen if e[0] >= lifted)
                landed.append((first[0], square))
        elif not seen[-1][1]:
            taken.append((-seen[-1][0], square))
    if not landed and not taken and lifted != NEVER:
        return pushed_off(turn, origin, lifted, before), taken  # (ranked there)
    elif len(landed) > 1:
        # A piece the hand knocked over (onto a neighbouring square) and put back is
        # read as the victim only where no other square saw the capturing piece land.
        knocked = knocked_by_hand(turn, origin)
        if knocked:
            landed.sort()
            landed.sort(key=lambda found: bool(knocked & bb[found[1]]))  # (stable)
            return landed, sorted(taken)
    return (sorted(landed) if len(landed) > 1 else landed,
            sorted(taken) if len(taken) > 1 else taken)


def pushed_off(turn: Turn, origin: chess.Square, lifted: int, before: int = FOREVER
               ) -> list[tuple[int, chess.Square]]:
    """Victims the piece lifted from `origin` (at `lifted`) pushed off their square as it
    took it, seen nowhere on it: (when, victim) for each enemy piece it attacks that has
    an empty neighbouring square ahead of its travel, on which a piece came down after
    the lift and was taken off again: the victim knocked onto it, then removed.

    One square may lie ahead of two victims (a king taking either of two neighbours):
    the sensors cannot tell which was pushed, and of the two, a legal capture comes
    first (an illegal move is the rarer reading: `choose` takes a legal one only where
    it is the only one so tied)."""
    board = turn.position.board
    targets = board.attacks_mask(origin) & board.occupied_co[not board.turn] & ~turn.displaced
    if not targets:
        return []
    empty, found = ~turn.position.occupied, []
    for square, seen in turn.events_on.items():
        bit = chess.BB_SQUARES[square]
        if not empty & bit:
            continue
        came = next((when for when, placed_ in seen if placed_ and lifted < when < before),
                    None)
        if came is None or _left_standing(seen, before):
            continue  # (a victim pushed off is taken off the board: a piece left there is not)
        for victim in chess.scan_forward(chess.BB_KING_ATTACKS[square] & targets):
            if ahead(origin, victim, square):
                found.append((came, victim))
    if len(found) > 1:
        legal = 0
        for shape in turn.position.moves_from(chess.BB_SQUARES[origin]):
            if shape.captured is not None:
                legal |= chess.BB_SQUARES[shape.captured]
        found.sort(key=lambda pushed: (pushed[0], not legal & chess.BB_SQUARES[pushed[1]],
                                       pushed[1]))
    return found


def _left_standing(seen: list[tuple[int, bool]], before: int) -> bool:
    """Whether the square's last change before `before` put a piece down (a bounce's
    lift in between is no piece taken off)."""
    last = True
    for when, placed_ in seen:
        if when >= before:
            break
        last = placed_
    return last


def ahead(origin: chess.Square, victim: chess.Square, square: chess.Square) -> bool:
    """Whether `square`, beside `victim`, lies ahead of a piece travelling from `origin`
    onto it: a push carries the victim on, never sideways or back (a square beside the
    victim and not ahead is one a slid piece may cross on its way elsewhere)."""
    df = chess.square_file(victim) - chess.square_file(origin)
    dr = chess.square_rank(victim) - chess.square_rank(origin)
    return ((chess.square_file(square) - chess.square_file(victim)) * df
            + (chess.square_rank(square) - chess.square_rank(victim)) * dr) > 0


def choose(turn: Turn, shapes: list[Shape], before: int = FOREVER,
           pressing: bool = False) -> Shape | None | Illegal:
    """The move among shapes of one occupancy, from the event history; None when
    nothing tells captures apart, ILLEGAL when the history shows a capture elsewhere
    (only at a press: without one, a piece set down elsewhere may be the opponent's touch)."""
    if len(shapes) == 1 and (shapes[0].captured is None or shapes[0].filled):
        return shapes[0]  # (the common case: one move that is no capture)
    candidates = distinct(shapes)
    if candidates[0].captured is None or candidates[0].filled:
        return candidates[0] if len(candidates) == 1 else None
    origin = candidates[0].move.from_square
    timed, taken_timed = _evidence(turn, origin, before)
    if len(timed) > 1 and timed[1][0] == timed[0][0]:
        # (one piece came down ahead of two victims, pushed off: which one, nothing says)
        tied = [sq for when, sq in timed if when == timed[0][0]]
        if sum(shape.captured in tied for shape in candidates) > 1:
            return None
    for _, square in timed + taken_timed:
        for shape in candidates:
            if shape.captured == square:
                return shape
        if pressing and not knocked_by_hand(turn, origin) & chess.BB_SQUARES[square]:
            return ILLEGAL  # (a piece knocked over and put back is no capture there)
    return candidates[0] if len(candidates) == 1 else None


# A knocked piece falls or slides onto a neighbouring square in a fraction of a second
# (a piece carried by hand is in the air 0.2-1.5 s); one knocked off the board is fetched
# from the table and put back seconds later (one lifted by hand and put back, a touch,
# is away 0.2-1.5 s).
KNOCK_FLIGHT = 0.6  # s
KNOCK_OFF = 1.5  # s
KNOCK_FLIGHT_US, KNOCK_OFF_US = us(KNOCK_FLIGHT), us(KNOCK_OFF)
OVERLAP_US = us(0.05)  # (a piece between two squares closes both, up to 20 ms)


def knocked_by_hand(turn: Turn, origin: chess.Square, arrival: int = FOREVER,
                    own_move: chess.Bitboard = 0) -> chess.Bitboard:
    """The pieces of the position the hand moving the piece from `origin` knocked over:
    lifted while that piece was in hand (after its lift, up to KNOCK_FLIGHT after it
    came down at `arrival`), then come down on an empty neighbouring square within
    KNOCK_FLIGHT, or away from the board KNOCK_OFF at least (or still away). An accident,
    no touch (4.2.2). `own_move`: the move's own squares, never knocked."""
    events = turn.events_on
    base = turn.position.occupied
    start = FOREVER
    for when, placed_ in events.get(origin, ()):
        if not placed_:
            start = when
            break
    if start == FOREVER:
        return 0
    last = arrival + KNOCK_FLIGHT_US if arrival != FOREVER else FOREVER
    bb = chess.BB_SQUARES
    found = 0
    for square, seen in events.items():
        bit = bb[square]
        if not base & bit or own_move & bit or square == origin:
            continue
        left = next((when for when, placed_ in seen if not placed_), FOREVER)
        if not start < left <= last:
            continue
        back = next((when for when, placed_ in seen if placed_ and when > left), FOREVER)
        if back - left >= KNOCK_OFF_US:
            found |= bit  # knocked off the board (or still away)
            continue
        for neighbour in chess.scan_forward(chess.BB_KING_ATTACKS[square] & ~base):
            came = next((when for when, placed_ in events.get(neighbour, ()) if placed_
                         and when >= left - OVERLAP_US), FOREVER)
            if came - left <= KNOCK_FLIGHT_US:
                found |= bit  # knocked onto a neighbouring square
                break
    return found


def landings(turn: Turn, match: Match) -> list[Shape]:
    """The match's captures whose piece was seen coming down on the victim's square (by
    the time the board moved on from the capture: later events there are someone else's)."""
    before = match.left_at if match.left_at is not None else FOREVER
    landed, _ = capture_evidence(turn, match.shapes[0].move.from_square, before)
    return [shape for shape in match.shapes if shape.captured in landed[:1]]


def placed(turn: Turn, match: Match) -> bool:
    """A piece was seen arriving: placed on an empty square, or landing on its victim."""
    return match.placed or bool(landings(turn, match))


def landings_of(turn: Turn, origins: chess.Bitboard) -> tuple[chess.Square, ...]:
    """Squares the lifted pieces were seen coming down on, unseen in the occupancy."""
    found: list[chess.Square] = []
    for origin in chess.scan_forward(origins):
        landed, taken = capture_evidence(turn, origin)
        found += landed[:1] or taken[:1]
    return tuple(found)


def with_promotion(turn: Turn, chosen: Shape, shapes: list[Shape]) -> Shape:
    """The promotion the selector chose (a queen by default) among the shapes."""
    if not chosen.move.promotion:
        return chosen
    piece = turn.selected() or chess.QUEEN
    for shape in shapes:
        if shape.move.to_square == chosen.move.to_square and shape.move.promotion == piece:
            return shape
    return chosen


# A player sets the selector as he puts the new piece down, or within moments of it; one
# set seconds after the promoted piece came to rest, while the opponent has a pawn to
# promote, is the opponent's choice made early, for his own promotion (no clock).
CHOICE_AFTER_REST = 3.0  # s
CHOICE_AFTER_REST_US = us(CHOICE_AFTER_REST)


def late_choices(turn: Turn, shapes: list[Shape]) -> list[tuple[int, chess.PieceType]]:
    """Without a clock, the selector settings in `turn` made CHOICE_AFTER_REST after the
    promotion `shapes` came to rest (its squares' last change) where the opponent can
    promote in reply: his, not the mover's. None for a move that is no promotion."""
    if not turn.selections or not shapes[0].move.promotion:
        return []
    move = shapes[0].move
    rest = max((seen[-1][0] for square in (move.from_square, move.to_square)
                if (seen := turn.events_on.get(square))), default=NEVER)
    late = [(when, piece) for when, piece in turn.selections
            if when >= rest + CHOICE_AFTER_REST_US]
    if not late:
        return []
    board = turn.replies_to(shapes[0]).board
    if not any(reply.promotion for reply in board.generate_legal_moves(from_mask=board.pawns)):
        return []  # (no promotion of his: the mover's, however late)
    return late


def exchange_choices(carried: Carried, move: chess.Move, cutoff: int
                     ) -> list[tuple[int, chess.PieceType]]:
    """With a clock, the selector settings among `carried` (the opponent's, his reply read
    as begun at `cutoff`) made after the promotion `move`'s square emptied at the cutoff
    and before he lifted a piece of his own: the mover's. The pawn lifted off the square
    is his hand exchanging it for the new piece (4.6) as likely as the opponent taking it
    first; and nobody sets the selector for a reply whose piece he has not lifted."""
    if not carried.selections or not move.promotion:
        return []
    square = move.to_square
    if not any(not placed_ and when == cutoff for when, placed_ in carried.events.get(square, ())):
        return []  # (his reply began elsewhere)
    own = min((when for sq, seen in carried.events.items() if sq != square
               for when, placed_ in seen if not placed_), default=FOREVER)
    return [(when, piece) for when, piece in carried.selections if when < own]


# ---------------------------------------------------------------------- the raw events


def burst_start(turn: Turn, square: chess.Square | None, t: int, settle: int) -> int:
    """When the change of `square` settling at `t` began: its first raw toggle, bounce
    included (`t` itself when no change is being settled)."""
    if square is None:
        return t
    start = t
    for when, _ in reversed(turn.events_on.get(square, ())):  # (times ascend)
        if when > t:
            continue
        if start - when > settle:
            break
        start = when
    return start


# ---------------------------------------------------------------------- the opponent's reply


def lines(turn: Turn) -> list[Match]:
    """The mover's moves the opponent may be answering, the likeliest first.

    A placement seen on the board outweighs a capture's bare lift: when the piece
    just placed is lifted again, that is more likely the opponent taking it than
    the mover capturing with it unseen.
    """
    return list(likeliest(turn))


def likeliest(turn: Turn) -> Iterator[Match]:
    """`lines`, one at a time: a caller that stops at the first that fits (the one just
    released, most often) never asks whether the others' pieces were seen arriving."""
    if turn.ambiguous is not None:
        yield turn.ambiguous
        return
    seen = turn.seen
    if len(seen) < 2:
        yield from seen  # (one move shown, or none: nothing to order)
        return
    known: dict[int, bool] = {}

    def shown(m: Match) -> bool:  # (placed, each asked once)
        found = known.get(id(m))
        if found is None:
            found = known[id(m)] = m.placed or placed(turn, m)
        return found

    released, standing = turn.released, turn.match
    # A placement that stood (released) outweighs one that flashed by in a slide; a
    # square a slid piece only crossed on the way of another move seen comes last.
    for m in reversed(seen):
        if (m in released or m is standing) and shown(m):
            yield m
    # A square crossed on the way to a placement that then stood (released, or standing
    # now) was no stop at all: the piece was seen going on and coming to rest.
    crossings = []
    for m in reversed(seen):
        if not (m in released or m is standing) and shown(m):
            by = list(passed_by(turn, seen, m, slid=True))
            if not by:
                yield m
            elif not any(o in released or o is standing for o in by):
                crossings.append(m)
    # A capture no sensor saw happen at all (nothing on its victim's square, nothing taken
    # first or pushed off) needs a swap faster than the switches: the least likely line.
    unseen = []
    for m in reversed(seen):
        if not shown(m):
            if traceless(turn, m):
                unseen.append(m)
            else:
                yield m
    yield from crossings
    yield from unseen


def traceless(turn: Turn, match: Match) -> bool:
    """Whether `match` is a capture whose piece nobody saw land that left no trace: no raw
    event on a victim's square after the piece was lifted, no victim taken first, none
    pushed off. Only a swap faster than the switches (or a scan that missed it) makes
    one; the opponent's hand lifting the piece that stood is likelier."""
    if match.placed:
        return False
    before = match.left_at if match.left_at is not None else FOREVER
    landed, taken = _evidence(turn, match.shapes[0].move.from_square, before)
    return not landed and not taken


def crossed(turn: Turn, seen: list[Match], match: Match, slid: bool = False) -> bool:
    """Whether a placement seen is a square its piece crossed on the way of another move
    seen after it from the same square: a slow push holds each square it crosses past
    the debounce, for less than CROSSING_HELD. `slid`: and it was pushed in or on: it
    entered the square as the one behind it opened, or left it as the one ahead closed
    (within SLIDE_GAP; a hand lifting a piece and putting it down takes longer). Then it
    is no move of its own."""
    return next(passed_by(turn, seen, match, slid), None) is not None


def passed_by(turn: Turn, seen: list[Match], match: Match, slid: bool = False
              ) -> Iterator[Match]:
    """The moves seen whose way `match`'s placement was only a square crossed on
    (`crossed`)."""
    if not match.placed or match.left_at is None or match.left_at - match.since > CROSSING_HELD_US:
        return
    move = match.shapes[0].move
    square = chess.BB_SQUARES[move.to_square]
    for other in seen:
        if (other is not match and other.since > match.since
                and other.shapes[0].move.from_square == move.from_square):
            for shape in other.shapes:
                way = transit(shape)
                if way & square:
                    if not slid:
                        yield other
                        break
                    # its neighbours on the way: the square behind, the one ahead
                    beside = ((way | chess.BB_SQUARES[move.from_square]
                               | chess.BB_SQUARES[shape.move.to_square]) & ~square
                              & chess.BB_KING_ATTACKS[move.to_square])
                    if (_slid_from(turn, beside, match.since)
                            or _slid_on(turn, beside, match.left_at)):
                        yield other
                        break


def _slid_from(turn: Turn, behind: chess.Bitboard, entered: int) -> bool:
    """Whether a square behind opened within SLIDE_GAP of the piece entering the next."""
    for square in chess.scan_forward(behind):
        for when, placed_ in turn.events_on.get(square, ()):
            if not placed_ and abs(when - entered) <= SLIDE_GAP_US:
                return True
    return False


def _slid_on(turn: Turn, ahead: chess.Bitboard, left: int) -> bool:
    """Whether a square ahead closed within SLIDE_GAP of the piece leaving the one behind
    it: pushed on, not lifted (a hand carrying a piece one square takes longer)."""
    for square in chess.scan_forward(ahead):
        for when, placed_ in turn.events_on.get(square, ()):
            if placed_ and abs(when - left) <= SLIDE_GAP_US:
                return True
    return False


def answers(turn: Turn, line: Shape, occupied: chess.Bitboard) -> bool:
    """Whether the board shows the opponent's reply to `line`, made or under way."""
    # The opponent holding pieces of his own, even ones that cannot move (the common
    # case: he has lifted the piece he will move). Read without making `line`.
    position = turn.position
    board = position.board
    after = (position.occupied & ~line.vacated) | line.filled  # (line.after, inline)
    emptied = after & ~occupied
    if emptied and not occupied & ~after:
        his = board.occupied_co[not board.turn]
        if line.captured is not None:
            his &= ~chess.BB_SQUARES[line.captured]
        if not emptied & ~his:
            return True
    reply = turn.replies_to(line)
    return bool(reply.full(occupied)) or reply.partial(occupied) or reply.crossing(occupied)


REPLY, HAND, NOT_YET, CROSSING = "reply", "hand", "not yet", "crossing"

# A piece is carried by hand for 0.2-1.5 s; the opponent answers only once it is down,
# and he needs a moment to see it there. A piece next to where the piece in hand can go,
# lifted while it may still be in hand, is as likely knocked over by that hand.
HAND_IN_AIR = 1.5  # s
HAND_IN_AIR_US = us(HAND_IN_AIR)


def knocked_in_hand(turn: Turn, origin: chess.Square, lifted: chess.Bitboard,
                    now: int = FOREVER, landed_only: bool = False
                    ) -> tuple[chess.Bitboard, chess.Bitboard, int]:
    """Of the pieces `lifted` (standing before the turn), those the hand carrying the
    piece from `origin` may have knocked over at `now`; where they and that piece came
    down since; and until when that reading holds (unless the board changes first).

    Each stands next to a square that piece can cross or land on, left its square after
    the piece was lifted and within HAND_IN_AIR of it, and came down on an empty
    neighbouring square within KNOCK_FLIGHT or nowhere (knocked pieces fall, they are not
    carried). The piece in hand then comes down after it (on a square it can go to, not
    where the knocked piece fell): until HAND_IN_AIR after its lift it may still be in
    hand; seen coming down, the knocked piece is put back at once, or is the opponent's
    (his reply) once away KNOCK_OFF. `landed_only`: only where it was seen coming down."""
    if not lifted:
        return 0, 0, FOREVER
    events = turn.events_on
    position = turn.position
    reach = 0  # the squares the piece in hand can cross or land on
    for shape in position.moves_from(chess.BB_SQUARES[origin]):
        move = shape.move
        reach |= (chess.BB_SQUARES[move.to_square] | shape.filled
                  | chess.between(origin, move.to_square))
    beside = chess.BB_KING_ATTACKS[origin]
    for square in chess.scan_forward(reach):
        beside |= chess.BB_KING_ATTACKS[square]
    lifts = [when for when, placed_ in events.get(origin, ()) if not placed_]
    knocks = put = 0
    until = FOREVER
    for square in chess.scan_forward(lifted & beside):
        left = next((when for when, placed_ in events.get(square, ()) if not placed_),
                    FOREVER)
        in_hand = max((when for when in lifts if when < left), default=NEVER)
        if left - in_hand > HAND_IN_AIR_US:
            continue
        # It falls on one square: the first a piece came down on, one the piece in hand
        # cannot reach before one it can (that one is more likely where it came down).
        fell, best = 0, (True, left + KNOCK_FLIGHT_US)
        for neighbour in chess.scan_forward(chess.BB_KING_ATTACKS[square] & ~position.occupied):
            came = next((when for when, placed_ in events.get(neighbour, ()) if placed_
                         and when >= left - OVERLAP_US), FOREVER)
            key = (bool(reach & chess.BB_SQUARES[neighbour]), came)
            if came <= left + KNOCK_FLIGHT_US and key <= best:
                fell, best = chess.BB_SQUARES[neighbour], key
        landed = 0  # where the piece in hand came down since
        for target in chess.scan_forward(reach & ~fell):
            if any(placed_ and when > left for when, placed_ in events.get(target, ())):
                landed |= chess.BB_SQUARES[target]
        expires = left + KNOCK_OFF_US if landed else in_hand + HAND_IN_AIR_US
        if now > expires or landed_only and not landed:
            continue
        knocks |= chess.BB_SQUARES[square]
        put |= fell | landed
        until = min(until, expires + 1)
    return knocks, put, until


def _victims(match: Match) -> chess.Bitboard:
    victims = 0
    for shape in match.shapes:
        if shape.captured is not None:
            victims |= chess.BB_SQUARES[shape.captured]
    return victims


def knocked_only(turn: Turn, line: Shape, lifted: chess.Bitboard, put: chess.Bitboard,
                 now: int, pressed: bool = False) -> int | None:
    """Whether the pieces `lifted` and `put` (against the position after `line`, its
    victims aside) are all the hand making `line` knocking pieces over and putting its
    own down (`knocked_in_hand`): until when that reading holds, or None. `pressed`: the
    clock was pressed, the hand has left: a knock tells only where the piece in hand was
    seen coming down after it, and then it holds (the press, not the opponent, says when
    the move was made)."""
    knocks, hands, until = knocked_in_hand(turn, line.move.from_square, lifted,
                                           NEVER if pressed else now, pressed)
    if not knocks or lifted & ~knocks or put & ~hands:
        return None
    return until


def reply_put_down(turn: Turn, match: Match, line: Shape, since: int,
                   occupied: chess.Bitboard, press_to_come: bool, now: int = FOREVER) -> str:
    """Whether the opponent's reply to `line`, a capture whose piece nobody saw land, is
    seen putting a piece down (REPLY), in a way the mover's own hand explains (HAND), or
    not yet (NOT_YET).

    The capturing piece is still in the mover's hand, as far as the board knows: a lift
    of a piece it could be taking is the mover clearing his victim (perhaps set down for a
    moment elsewhere), no evidence of the reply. With a clock (`press_to_come`: its press
    will say when the move is made), a piece put down on a square the piece in hand could
    have gone to is more likely it than the opponent's, no evidence either. (Without a
    clock the reply is what completes a capture pushed off unseen: then it counts.)
    """
    position = turn.position
    after = line.after(position.occupied)
    put = occupied & ~after
    if match is not turn.ambiguous:  # (a completed capture: the mover's hand has left)
        lifted = after & ~occupied  # pieces gone from the position after `line`
        victims = _victims(match)
        until = knocked_only(turn, line, lifted & ~victims, put, now)
        if until is not None:
            # His hand, carrying the piece, knocked those over (4.2.2): until they are
            # away too long for that, when the board is read again.
            if turn.knock_excused is None or until < turn.knock_excused:
                turn.knock_excused = until
            return HAND
        if lifted and not lifted & ~victims:
            return HAND  # only the mover's possible victims were lifted
        if put and not lifted and not put & ~_push_off_squares(position, line, victims):
            return HAND  # a victim pushed off its square ahead of the capturing piece
        landing = 0  # where the piece in hand could have been put down
        if press_to_come:
            for shape in position.moves_from(chess.BB_SQUARES[line.move.from_square]):
                landing |= shape.filled
        if put and not put & ~landing:
            return HAND  # only where the mover's piece could have landed
    if put == chess.BB_SQUARES[line.move.from_square] and not press_to_come:
        # A piece on the square the capturing piece left: the opponent's, pushed onto it
        # from his square beside it (`pushed_onto_the_square_left`), may be crossing it
        # on his reply's way; one that stood CROSSING_HELD there may as well be the
        # mover's, put back: no reply seen (a slide that goes on says so).
        entered = _pushed_on(turn, line.move.from_square,
                             (position.occupied & ~occupied) & chess.BB_KING_ATTACKS[
                                 line.move.from_square])
        if entered is not None:
            if now - entered < CROSSING_HELD_US:
                if turn.crossing is None or entered + CROSSING_HELD_US < turn.crossing:
                    turn.crossing = entered + CROSSING_HELD_US  # (read again then)
                return CROSSING
            return HAND
    if put:
        return REPLY
    events = turn.events_on
    if any(reply.captured is not None and events.get(reply.captured, [(NEVER, False)])
           [-1][0] >= since for reply in turn.replies_to(line).full(occupied)):
        return REPLY
    return NOT_YET


def _push_off_squares(position: Position, line: Shape, victims: chess.Bitboard
                      ) -> chess.Bitboard:
    """The empty squares beside `victims` ahead of the piece of `line` travelling onto
    them: where a victim pushed off by the capturing piece comes down (`pushed_off`)."""
    origin, found = line.move.from_square, 0
    for victim in chess.scan_forward(victims):
        for square in chess.scan_forward(chess.BB_KING_ATTACKS[victim] & ~position.occupied):
            if ahead(origin, victim, square):
                found |= chess.BB_SQUARES[square]
    return found


def reply_complete(turn: Turn, occupied: chess.Bitboard) -> bool:
    """Whether the opponent's reply is complete, not just the mover's move under way.

    A capture in progress (attacker and victim lifted) looks exactly like a capture
    followed by a capture in reply; only a reply whose own square saw events since
    the board left the move is believed.
    """
    events = turn.events_on
    for match in lines(turn):
        since = match.left_at or 0
        for line in distinct(match.shapes):
            for reply in turn.replies_to(line).full(occupied):
                seen = events.get(reply.captured, []) if reply.captured is not None else []
                if reply.filled or (seen and seen[-1][0] >= since):
                    return True
    return False


def arrived_and_answered(turn: Turn, occupied: chess.Bitboard) -> bool:
    """A move whose piece arrived and still stands there is done; the opponent answers it.

    Once the piece is seen arriving (placed, or landing on its victim), the mover
    could only go on by lifting it again; a change elsewhere is the opponent's. So too
    for a promotion: the pawn replaced by the new piece (4.6) is lifted from that square
    (no longer arrived); a piece lifted elsewhere, that the pawn could have taken
    instead, is no capture under way but the reply.
    """
    for match in turn.seen:
        for shape in match.shapes if match.placed else landings(turn, match):
            arrived = shape.filled | chess.BB_SQUARES[shape.move.to_square]
            if not arrived & ~occupied and answers(turn, shape, occupied):
                return True
    return False


WAIT: Final = "wait"


# A hand taking a piece lifts it, then reaches for its own: 0.3-1.5 s, 2 s at the most.
TAKING_REACH = 2.0  # s
TAKING_REACH_US = us(TAKING_REACH)


class Doubt(NamedTuple):
    """A slide's last stop before a capture, lifted off, and the opponent's piece come down
    on it, where it could have taken it, though his own piece was lifted longer than a
    hand taking a piece reaches for its own (TAKING_REACH): the piece gone on to the
    capture, its victim swapped off unseen, is as likely as a victim held that long. The
    capture is read, flagged with the stop. `capture`: the capture's move shown; `shapes`:
    its readings the reply answers."""

    capture: Match
    shapes: list[Shape]


def went_on_unseen(turn: Turn, match: Match, fitting: list[Shape], occupied: chess.Bitboard,
                   now: int) -> bool | str | Doubt:
    """Whether the piece of `match`, set down and lifted again before it stood
    (CROSSING_HELD), went on to a capture beyond it nobody saw land (its victim swapped
    off as it came down): the opponent's lift answers both. The opponent taking it where
    it stood must put his piece down there; a reply to the capture, anywhere else. So:
    True when only a reply to the capture has come down, or the piece was seen pushed on
    from the stop (the stop was no move), WAIT while neither has (where his piece comes
    down will tell), a Doubt where his piece came down on the stop next to the capture's
    victim long after it emptied (`_doubt`), False otherwise."""
    if (not match.placed or match.left_at is None or match is turn.match
            or match in turn.released or match.left_at - match.since > CROSSING_HELD_US):
        return False
    move = match.shapes[0].move
    stop = chess.BB_SQUARES[move.to_square]
    since = match.left_at
    onward = [(other, shape) for other in turn.seen
              if other is not match and other.shapes[0].move.from_square == move.from_square
              and not (other.placed or placed(turn, other))
              for shape in other.shapes if shape.captured is not None and transit(shape) & stop]
    beyond = [shape for _, shape in onward]
    if beyond and _pushed_on_from(turn, match, beyond):
        return True  # (seen going on: whatever comes down on the stop later is no taking)
    if occupied & stop:
        events = turn.events_on.get(move.to_square, ())
        if not any(not placed_ and when >= since for when, placed_ in events):
            return False  # (still standing there)
        taking = [(s, reply) for s in fitting for reply in turn.replies_to(s).full(occupied)
                  if reply.move.to_square == move.to_square]
        if taking:
            # Lifted, and the opponent's piece that came down there took it; unless it came
            # down a moment ago and may be pushed on across it (set down or pushed onto it:
            # a slide starts on the square next to its own): where it stops tells.
            # (Across the stop: where the mover's piece went on, the square is free.)
            entered = next((when for when, placed_ in reversed(events) if placed_), NEVER)
            if now - entered < CROSSING_HELD_US and any(
                    _may_go_on(turn, line, reply) for line in beyond for _, reply in taking):
                read_again(turn, entered + CROSSING_HELD_US)
                return WAIT
            return _doubt(turn, match, onward, taking, occupied)
    if any(_reply_seen(turn, s, occupied, since, now) for s in fitting):
        return False
    if not beyond:
        return False
    return True if any(_reply_seen(turn, s, occupied, since, now) for s in beyond) else WAIT


def _doubt(turn: Turn, match: Match, onward: list[tuple[Match, Shape]],
           taking: list[tuple[Shape, Shape]], occupied: chess.Bitboard) -> Doubt | bool:
    """The opponent's piece stands on the stop, where it could have taken the mover's: a
    Doubt when a capture beyond has its victim next to the stop, ahead (the slide's last
    square: going on, the piece came down on the victim swapped off unseen, and nothing
    else), which his reply answers too, and his own piece was lifted later than a hand
    taking the piece there reaches for it; False (taken there) otherwise."""
    move = match.shapes[0].move
    near = chess.BB_KING_ATTACKS[move.to_square]
    close = [(other, shape) for other, shape in onward
             if near & chess.BB_SQUARES[shape.move.to_square]
             and ahead(move.from_square, move.to_square, shape.move.to_square)
             and answers(turn, shape, occupied)]
    if not close:
        return False
    emptied = match.left_at if match.left_at is not None else NEVER
    lifted = min((when for _, reply in taking for when, placed_ in turn.events_on.get(
        reply.move.from_square, ()) if not placed_ and when >= emptied), default=FOREVER)
    if lifted - emptied <= TAKING_REACH_US:
        return False  # (his capture, the piece taken first: a capture made every day)
    capture = close[0][0]
    return Doubt(capture, [shape for other, shape in close if other is capture])


def _pushed_on_from(turn: Turn, match: Match, beyond: list[Shape]) -> bool:
    """Whether the piece of `match` left its stop pushed on along the way of a capture
    `beyond`: a square ahead on that way closed within SLIDE_GAP of the stop opening (the
    slide going on, as a push does; a hand lifting the piece off, the opponent's taking
    it there, closes nothing ahead). It stood there no longer than a square crossed."""
    move = match.shapes[0].move
    origin, stop = move.from_square, move.to_square
    way = 0
    for shape in beyond:
        way |= transit(shape) | chess.BB_SQUARES[shape.move.to_square]
    next_squares = 0
    for square in chess.scan_forward(way & chess.BB_KING_ATTACKS[stop]):
        if ahead(origin, stop, square):
            next_squares |= chess.BB_SQUARES[square]
    if not next_squares:
        return False
    return any(not placed_ and when >= match.since and _slid_on(turn, next_squares, when)
               for when, placed_ in turn.events_on.get(stop, ()))


def _reply_seen(turn: Turn, line: Shape, occupied: chess.Bitboard, since: int,
                now: int = FOREVER, crossing: bool = True) -> bool:
    """Whether the board shows a reply to `line` made, seen: a piece put down, or a
    capture whose square saw events since `since` (a capture in hand looks made too).
    A piece come down less than CROSSING_HELD before `now` on a square another of its
    moves crosses, pushed onto it or set down on the first square of a slide, may yet be
    pushed on: not yet (`crossing`: where the square it stops on matters)."""
    events = turn.events_on
    for reply in turn.replies_to(line).full(occupied):
        if reply.filled:
            if not crossing:
                return True
            square = reply.move.to_square
            entered = next((when for when, placed_ in reversed(events.get(square, ()))
                            if placed_), NEVER)
            if now - entered >= CROSSING_HELD_US or not _may_go_on(turn, line, reply):
                return True
            if now != FOREVER:
                read_again(turn, entered + CROSSING_HELD_US)  # (stopped, or gone on)
            continue
        if reply.captured is None:
            continue
        seen = events.get(reply.captured, ())
        if seen and seen[-1][0] >= since:
            return True
        if now != FOREVER:
            # His capture in hand, nothing seen on its square: a piece away HAND_IN_AIR
            # came down, swapped faster than the switches (or he is thinking with it).
            lifted = next((when for when, placed_ in reversed(events.get(
                reply.move.from_square, ())) if not placed_), NEVER)
            if lifted >= since:
                if now - lifted >= HAND_IN_AIR_US:
                    return True
                read_again(turn, lifted + HAND_IN_AIR_US)
    return False


def _may_go_on(turn: Turn, line: Shape, reply: Shape) -> bool:
    """Whether the reply's piece, come down on its square, may be on its way further: a
    square another of its moves (in reply to `line`) crosses."""
    square = chess.BB_SQUARES[reply.move.to_square]
    return any(transit(other) & square for other in turn.replies_to(line).moves_from(
        chess.BB_SQUARES[reply.move.from_square]))


def read_again(turn: Turn, when: int) -> None:
    """Have the board read again at `when` (a reading waiting on time alone: a piece
    that may be crossing a square, a piece that may still be in hand)."""
    if turn.crossing is None or when < turn.crossing:
        turn.crossing = when
    turn.waiting_reply = True


def answer(turn: Turn, ctx: Context) -> Answer | bool:
    """If the board shows the opponent answering a move, that move is complete: the
    Answer to commit. True when the board is accounted for otherwise (the reply may be
    answering a capture nobody saw land, or the capture's square is still undecided:
    `turn.ambiguous`); False when no reply is seen."""
    waiting = False
    leaving = ctx.leaving
    also: tuple[Shape, ...] = ()  # (a stop's readings as likely as the capture beyond it)
    for match in likeliest(turn):
        fitting = [s for s in match.shapes if answers(turn, s, ctx.occupied)]
        if leaving and fitting:
            # A lift still settling: a slid piece may have closed the next square before
            # leaving its own. Read the reply seen with that square empty, as it is.
            fitting = [s for s in match.shapes if answers(turn, s, ctx.occupied & ~leaving)]
        if fitting and len(match.shapes) > 1 and not match.placed:
            # Captures: where the sensors tell which (the piece seen landing on a victim's
            # square, a victim taken first), the opponent's reply answers that one, or the
            # move is not answered yet. (Two victims a push-off ties tell neither.)
            told = choose(turn, match.shapes, match.left_at if match.left_at is not None
                          else FOREVER)
            if isinstance(told, Shape):
                fitting = [s for s in fitting if s.move.to_square == told.move.to_square]
        if fitting and ctx.pressing and not match.placed and not placed(turn, match):
            # At the press: no reply in what the hand carrying the piece knocked over.
            # (each capture's own victim aside: another's may be the piece knocked over)
            position, bb = turn.position, chess.BB_SQUARES
            fitting = [s for s in fitting if knocked_only(
                turn, s, s.after(position.occupied) & ~ctx.occupied & ~(
                    bb[s.captured] if s.captured is not None else 0),
                ctx.occupied & ~s.after(position.occupied), ctx.t, pressed=True) is None]
        if fitting and not ctx.clock_in_use:
            went_on = went_on_unseen(turn, match, fitting, ctx.occupied, ctx.t)
            if went_on is WAIT:
                turn.waiting_reply = True
                return True
            if isinstance(went_on, Doubt):  # (the capture read, the stop flagged beside it)
                also, match, fitting = tuple(fitting), went_on.capture, went_on.shapes
                break
            if went_on:
                continue
        if fitting and not match.placed and not placed(turn, match) and not ctx.pressing:
            # A piece in hand that no one saw land may still be on its way. With a clock,
            # its press says when it landed; failing that, a reply that puts a piece down
            # the mover's hand does not explain. Without one, any reply his hand does not
            # explain (it may be a capture pushed off unseen in turn: nothing put down).
            since = match.left_at if match.left_at is not None else ctx.t
            verdicts = [reply_put_down(turn, match, s, since, ctx.occupied, ctx.clock_in_use,
                                       ctx.t)
                        for s in fitting]
            if ctx.clock_in_use:
                fitting = [s for s, verdict in zip(fitting, verdicts) if verdict == REPLY]
                waiting = waiting or NOT_YET in verdicts
            elif CROSSING in verdicts:
                turn.waiting_reply = True  # (his piece may be crossing: where it goes tells)
                return True
            else:
                fitting = [s for s, verdict in zip(fitting, verdicts) if verdict != HAND]
                if fitting and traceless(turn, match) and any(
                        m is not match and (m.placed or placed(turn, m)) for m in turn.seen):
                    # Nothing saw that capture, and the piece was seen standing on the
                    # way: a reply under way (his piece lifted) may as well be his hand
                    # taking the piece where it stood, and knocking one over. Only a reply
                    # made answers the capture (a piece come down, a capture seen on its
                    # square); until then, the board tells more.
                    made = [s for s in fitting if _reply_seen(
                        turn, s, ctx.occupied & ~leaving, since, ctx.t, crossing=False)]
                    waiting = waiting or not made
                    fitting = made
        if fitting:
            break
    else:
        turn.waiting_reply = waiting
        return waiting
    # What happened since the board left the move is the opponent's, not the mover's.
    cutoff = match.left_at if match.left_at is not None else ctx.t
    chosen = choose(turn, fitting, before=cutoff, pressing=ctx.pressing)
    if chosen is ILLEGAL:
        return False
    if chosen is None:  # still undecided; the reply will tell
        if not ctx.clock_in_use and not ctx.pressing and any(
                _reply_seen(turn, s, ctx.occupied & ~leaving, cutoff, ctx.t, crossing=False)
                for s in fitting):
            # His reply is made and nothing told the square: the move is complete all the
            # same (no press will come), recorded as guessed, flagged, with the others.
            return named_tuple(Answer, (match, fitting, cutoff, True, also))
        turn.ambiguous = Match(distinct(fitting), match.since, cutoff)
        return True
    return named_tuple(Answer, (match, fitting, cutoff, False, also))


# ---------------------------------------------------------------------- explaining the board


def leave_match(turn: Turn, ctx: Context) -> None:
    """The board no longer shows the move it showed: note when it left, and whether the
    piece had stood long enough to count as released (FIDE 4.7)."""
    match = turn.match
    if match is None:
        return
    released = match in turn.released
    if not released or match.left_at is None:  # (one released keeps when it was first
        # left, unless it stood again: `explain`)
        match.left_at = burst_start(turn, ctx.changing, ctx.t, ctx.settle)
        if (not released and ctx.t - match.since >= RELEASED_AFTER_US
                and (match.placed or placed(turn, match))):
            turn.released.append(match)  # a piece in hand is not released
    turn.match = None


def explain(turn: Turn, ctx: Context) -> Reading:
    """What the board shows now (see the module's docstring); keeps the turn's record of
    the moves shown (`match`, `seen`, `released`) up to date."""
    occupied, position = ctx.occupied, turn.position
    if turn.ambiguous is not None:
        captured = turn.ambiguous.shapes[0].after(position.occupied)
        # A candidate square alone lifted may be the capturing piece being shown to
        # the board (lifted to be put back), or the opponent starting: wait and see.
        showing = any(occupied == captured & ~chess.BB_SQUARES[s.move.to_square]
                      for s in turn.ambiguous.shapes)
        if occupied == captured or showing:
            return EXPLAINED
        found = answer(turn, ctx)
        if isinstance(found, Answer):
            return Reading(True, answer=found, then_explained=True)
        return EXPLAINED if found else UNEXPLAINED
    if occupied == position.occupied:
        reply_landing = ctx.leaving and (  # (before the match is left)
            answering(turn, ctx) or pushed_onto_the_square_left(turn, ctx))
        if turn.match is not None:
            leave_match(turn, ctx)
        begun = promotion_placed_first(turn, ctx)
        if begun is not None:
            return Reading(True, answer=begun)
        if not reply_landing:
            turn.seen.clear()
        return AGREES
    if turn.match is not None:  # (the commonest completion without a clock, at once)
        replied = reply_to_the_move_standing(turn, ctx)
        if replied is not None:
            return replied
    full = position.full(occupied)
    if full:
        key = (full[0].vacated, full[0].filled)
        match = turn.match
        if match is None or match.key != key:
            # (With a clock, the board back at a move whose piece was seen standing is,
            # before the press, the mover's piece put back, his opponent's lift beside it
            # or not: below.)
            if ctx.leaving and answering(turn, ctx) and not (
                    ctx.clock_in_use and any(m.key == key and (m.placed or placed(turn, m))
                                             for m in turn.seen)):
                leave_match(turn, ctx)  # the moves seen stand; the lift settles it
                return AGREES
            standing = match is not None and still_standing(turn, match)
            if match is not None:
                leave_match(turn, ctx)
            if standing:
                # The mover's piece never left where it arrived: this placement is not
                # his (another move would have lifted it), but the opponent's reply
                # begun, a promotion piece put down before the pawn is lifted (4.6).
                found = answer(turn, ctx)
                if isinstance(found, Answer):
                    return Reading(True, answer=found)
            again = None
            if turn.seen:
                again = next((m for m in turn.seen if m.key == key), None)
                turn.seen = [m for m in turn.seen if m.key != key]
            if again is not None and again in turn.released and not full[0].move.promotion:
                # Back where it was released: the move stood all along, and what
                # happened in between was the opponent's (a touch of that piece); but
                # with a clock, before the press, the mover's hand setting his piece
                # straight (the opponent touches it after the press): his reply starts
                # when the board next leaves it.
                turn.match = again
                if ctx.clock_in_use:
                    again.left_at = None
            else:
                turn.match = Match(full, ctx.t)
            turn.seen.append(turn.match)
        return AGREES
    if turn.match is not None:
        leave_match(turn, ctx)
    # (with no move seen, no reply can be complete, nor a move arrived and answered)
    if position.partial(occupied) and (not turn.seen or (
            not reply_complete(turn, occupied) and not arrived_and_answered(turn, occupied))):
        return EXPLAINED  # the mover's move under way
    if turn.seen:
        found = answer(turn, ctx)
        if isinstance(found, Answer):  # (the common completion without a clock)
            return named_tuple(Reading, (True, False, found, False))
        if found:
            return EXPLAINED
    return UNEXPLAINED


def pushed_onto_the_square_left(turn: Turn, ctx: Context) -> bool:
    """Whether the piece come down on a square a move seen left (the board showing the
    position again) is an opponent's piece pushed onto it, not the mover's put back: it
    closed as a neighbouring square of the opponent's, still settling, opened within
    SLIDE_GAP (a slid piece straddles both). The mover's piece went on, unseen: a capture
    whose victim was swapped off as it came down."""
    square = ctx.changing
    if square is None or not turn.seen or ctx.clock_in_use:
        return False
    board = turn.position.board
    behind = ctx.leaving & board.occupied_co[not board.turn] & chess.BB_KING_ATTACKS[square]
    if not behind or not any(m.shapes[0].move.from_square == square for m in turn.seen):
        return False
    return _pushed_on(turn, square, behind) is not None


def _pushed_on(turn: Turn, square: chess.Square, behind: chess.Bitboard) -> int | None:
    """When the piece last come down on `square` was pushed onto it from one of the
    squares `behind` (one opened within SLIDE_GAP of its closing), or None."""
    entered = next((when for when, placed_ in reversed(turn.events_on.get(square, ()))
                    if placed_), NEVER)
    return entered if _slid_from(turn, behind, entered) else None


def reply_to_the_move_standing(turn: Turn, ctx: Context) -> Reading | None:
    """The commonest completion without a clock, read in one step: the mover's move stands
    (its piece seen arriving; a quiet move or castling, the last move shown) and the
    opponent has lifted pieces of his own, nothing else changed: his reply has begun. None
    otherwise (the long way then goes on from here). `explain` comes to the same the long
    way: no move of the mover's leaves an opponent's square empty (no pawn can take en
    passant), none is on its way (a piece is down and a victim up), and `answer` finds
    the opponent answering it, the likeliest line when it is the only one or released."""
    match = turn.match
    if match is None or not match.placed or len(match.shapes) != 1:
        return None
    position, seen = turn.position, turn.seen
    if not seen or seen[-1] is not match or position.en_passant:
        return None
    board = position.board
    shape = match.shapes[0]
    if shape.captured is not None or shape.move.promotion:
        return None
    occupied = ctx.occupied
    after = (position.occupied & ~shape.vacated) | shape.filled
    emptied = after & ~occupied
    if not emptied or occupied & ~after or emptied & ~board.occupied_co[not board.turn]:
        return None
    leave_match(turn, ctx)  # (as explain would next, so it may go on from here)
    if len(turn.seen) > 1 and match not in turn.released:
        return None  # (another move shown may be likelier)
    found = named_tuple(Answer, (match, [shape], match.left_at, False, ()))
    return named_tuple(Reading, (True, False, found, False))


def answering(turn: Turn, ctx: Context) -> bool:
    """An opponent's piece already leaving: what just landed may be his, a slid piece
    closing the next square's switch before its own opens (a neighbouring square: a piece
    far away leaving is his reply begun, and what landed is the mover's). A square that
    began opening more than SLIDE_GAP after a landing did not hold the piece that landed
    (a slid piece straddles two squares for tens of ms): it is still settling only because
    the landing's debounce outlasted the gap."""
    board = turn.position.board
    leaving = ctx.leaving & board.occupied_co[not board.turn]
    if leaving and ctx.changing is not None:
        leaving &= chess.BB_KING_ATTACKS[ctx.changing]
        if leaving and ctx.occupied & chess.BB_SQUARES[ctx.changing]:  # (a landing)
            leaving = _left_by(turn, leaving, ctx.t + SLIDE_GAP_US, ctx.settle)
    if not leaving:
        return False
    if any(placed(turn, m) for m in turn.seen):
        return True
    # Without a clock, the mover's piece still in hand after a capture that left no trace
    # (the move the board shows): a piece come down beside his as it opened, within
    # SLIDE_GAP, is his pushed across, not the mover's put down that very moment.
    return (not ctx.clock_in_use and ctx.changing is not None
            and any(traceless(turn, m) for m in turn.seen)
            and _slid_from(turn, leaving, ctx.t))


def _left_by(turn: Turn, leaving: chess.Bitboard, by: int, settle: int) -> chess.Bitboard:
    """The squares of `leaving` whose lift, still settling, began no later than `by`."""
    left = 0
    for square in chess.scan_forward(leaving):
        seen = turn.events_on.get(square)
        if seen and burst_start(turn, square, seen[-1][0], settle) <= by:
            left |= chess.BB_SQUARES[square]
    return left


def still_standing(turn: Turn, match: Match) -> bool:
    """Whether the mover's piece was seen arriving for this move and has not been lifted
    from where it arrived since."""
    if match.placed:
        arrived = match.shapes[0].filled
    else:
        shown = landings(turn, match)
        if not shown:
            return False
        arrived = chess.BB_SQUARES[shown[0].move.to_square]
    for square in chess.scan_forward(arrived):
        if any(not placed_ and when > match.since
               for when, placed_ in turn.events_on.get(square, ())):
            return False
    return True


def promotion_placed_first(turn: Turn, ctx: Context) -> Answer | None:
    """The board shows the position again after a capture, because the opponent put his
    promotion piece on the square the capturing piece left, before lifting his pawn
    (FIDE 4.6 allows either order): the capture stands, and his reply has begun. (Taking
    the capture back would have lifted the piece from where it landed.)"""
    for match in turn.seen:
        origin = match.shapes[0].move.from_square
        if match.placed or match.left_at is None:
            continue
        for shape in landings(turn, match):
            after_landing = [e for e in turn.events_on.get(shape.move.to_square, ())
                             if e[0] > match.since]
            if any(not placed_ for _, placed_ in after_landing):
                continue  # the capturing piece was lifted again: taken back, perhaps
            reply = turn.replies_to(shape)
            if any(m.promotion and m.to_square == origin for m in reply.board.generate_legal_moves(
                    to_mask=chess.BB_SQUARES[origin])):
                return Answer(match, [shape], match.left_at)
    return None


def arrived_with_others(turn: Turn, occupied: chess.Bitboard, pressed: bool = False
                        ) -> Shape | None:
    """A legal move whose piece has arrived (placed on its target, or seen landing on its
    victim) while other squares differ from the position after it: once the move is made,
    those are displaced pieces (FIDE 7.4), whichever side they belong to. Of two pieces
    that could have arrived, the one lifted first moved (the other was knocked after).
    `pressed`: the clock was pressed, the hand has left: a capture whose piece nobody saw
    land (a push-off swap) is made too, as a press completes it without displaced pieces,
    when no piece came down after the mover's first lift (else his piece came down there)."""
    position = turn.position
    emptied = position.occupied & ~occupied
    filled = occupied & ~position.occupied
    found: list[tuple[int, int, Shape]] = []
    unseen_captures = pressed and _nothing_down_since_lifted(turn, emptied, filled)
    for shape in position.moves_from(emptied & position.board.occupied_co[position.board.turn]):
        if shape.vacated & ~emptied or shape.filled & ~filled:
            continue
        if not shape.filled and not unseen_captures:  # a capture: if seen landing on its victim
            landed, _ = capture_evidence(turn, shape.move.from_square)
            if shape.captured not in landed[:1]:
                continue
        others = occupied ^ shape.after(position.occupied)
        if others:
            lifts = [when for when, placed_ in turn.events_on.get(shape.move.from_square, ())
                     if not placed_]
            lifted = lifts[0] if lifts else FOREVER
            if not all(_placed_after(turn, square, lifted)
                       for square in chess.scan_forward(shape.filled)):
                continue  # (a piece arrives after it leaves: another piece stands there)
            # (of one piece's moves, the one that accounts for most of the board)
            found.append((lifted, others.bit_count(), shape))
    return min(found, key=lambda item: item[:2])[2] if found else None


def _nothing_down_since_lifted(turn: Turn, emptied: chess.Bitboard,
                               filled: chess.Bitboard) -> bool:
    """Whether no square was filled after the mover's first lift (with the hand gone, a
    capture nobody saw land can then have been made: his piece came down nowhere else)."""
    own = turn.position.board.occupied_co[turn.position.board.turn]
    first_lift = FOREVER
    for square in chess.scan_forward(emptied & own):
        for when, placed_ in turn.events_on.get(square, ()):
            if not placed_:
                first_lift = min(first_lift, when)
                break
    return not any(_placed_after(turn, square, first_lift)
                   for square in chess.scan_forward(filled))


def _placed_after(turn: Turn, square: chess.Square, t: int) -> bool:
    """Whether the square's last placement came after `t`."""
    for when, placed_ in reversed(turn.events_on.get(square, ())):
        if placed_:
            return when > t
    return False


def made_at(turn: Turn, shape: Shape, before: int) -> int:
    """When the board last changed on a move's own squares (its piece arriving) before
    `before`: the time the move was made."""
    squares_ = shape.vacated | shape.filled
    if shape.captured is not None:
        squares_ |= chess.BB_SQUARES[shape.captured]
    last = NEVER
    for square in chess.scan_forward(squares_):
        for when, _ in turn.events_on.get(square, ()):
            if last < when <= before:
                last = when
    return last if last != NEVER else before


def in_hand(position: Position, occupied: chess.Bitboard) -> bool:
    """One hand, one move: the mover's pieces in hand (at most two, castling) and at most
    one victim lifted, put down or not. A move attempt, perhaps illegal, judged at the
    clock press and not hinted at before it (FIDE 12.6)."""
    emptied = position.occupied & ~occupied
    filled = occupied & ~position.occupied
    own = position.board.occupied_co[position.board.turn]
    lifted = emptied & own
    return (bool(lifted) and lifted.bit_count() <= 2 and (emptied & ~own).bit_count() <= 1
            and filled.bit_count() <= lifted.bit_count())


def reference_occupancy(turn: Turn) -> chess.Bitboard:
    """The occupancy the board should show: the move made (its piece arrived while other
    squares differ), the likeliest move seen, or the position."""
    base = turn.position.occupied
    if turn.made is not None:
        return turn.made.after(base)
    shown = lines(turn)
    return shown[0].shapes[0].after(base) if shown else base


# ---------------------------------------------------------------------- at a press


def landed_then_taken(turn: Turn, occupied: chess.Bitboard, pressed: int,
                      before_only: bool = False) -> tuple[list[Shape], int] | None:
    """The move made if a piece that landed before the press, and was lifted just after
    it, or just before it (`before_only`: only so), too soon to settle, did land: the
    opponent taking it at once; and when he lifted it. (Not a slide's blip: then the
    piece lands further on, and the move is matched there.)"""
    position = turn.position
    latest: tuple[list[Shape], int] | None = None
    for square, seen in turn.events_on.items():
        bit = chess.BB_SQUARES[square]
        if occupied & bit:
            continue
        lifts = [] if before_only else [when for when, placed_ in seen
                                        if not placed_ and when > pressed]
        if lifts and any(placed_ and when <= pressed for when, placed_ in seen):
            full = position.full(occupied | bit)
            if full:
                return full, lifts[0]
        touchdown = _taken_before_the_press(seen, pressed)
        if (touchdown is not None and (latest is None or touchdown > latest[1])
                and not moved_on(turn, square, touchdown)):
            full = [shape for shape in position.full(occupied | bit)
                    if takeable(position.board, shape)]
            if full:  # (the last piece put down is the one taken: those before it went on)
                latest = full, touchdown
    return latest


def takeable(board: chess.Board, shape: Shape) -> bool:
    """Whether the opponent can take the piece `shape` put down (on its square, or en
    passant): a piece just put down is lifted by the opponent before the press only to
    take it."""
    after = board.copy(stack=False)
    after.push(shape.move)
    return bool(after.attackers_mask(after.turn, shape.move.to_square)
                or after.ep_square is not None and after.has_legal_en_passant())


def moved_on(turn: Turn, square: chess.Square, left: int) -> bool:
    """Whether the piece that left `square` at `left` went on along the surface: a
    neighbouring square closed within SLIDE_GAP of its leaving (a slide's next square),
    not a piece lifted off the board."""
    return _slid_on(turn, chess.BB_KING_ATTACKS[square], left)


# In blitz the opponent lifts the piece he takes up to 0.1 s before the press, as soon as
# 80 ms after it was put down: too soon to settle. A touchdown lasts longer than a bounce.
# A hand reaches for a piece the other has just let go of 80 ms later at the soonest (a
# reaction); a slid piece's blip on a square it crosses is shorter (15-85 ms).
TOUCHDOWN = 0.08  # s: the shortest stand of a piece put down and then taken
EARLY_LIFT = 0.3  # s: the earliest before the press the opponent's hand takes it
BOUNCE = 0.01  # s: a reed switch's contacts bounce for a few ms after a change
TOUCHDOWN_US, EARLY_LIFT_US, BOUNCE_US = us(TOUCHDOWN), us(EARLY_LIFT), us(BOUNCE)


def _taken_before_the_press(seen: list[tuple[int, bool]], pressed: int) -> int | None:
    """When a piece put down on this square (the square's last placement) was lifted
    again shortly before the press, too soon to settle: the opponent taking it. None if
    the square's events end otherwise. (Toggles within BOUNCE of each other are one
    change: the contact's bounce.)"""
    if len(seen) < 2 or seen[-1][1]:
        return None
    changes: list[tuple[int, bool]] = []  # (first toggle of a burst, its final state)
    last = NEVER
    for when, placed_ in seen:
        if changes and when - last <= BOUNCE_US:
            changes[-1] = (changes[-1][0], placed_)
        else:
            changes.append((when, placed_))
        last = when
    if len(changes) < 2 or not changes[-2][1]:
        return None
    (put, _), (lifted, _) = changes[-2], changes[-1]
    if lifted - put < TOUCHDOWN_US or not pressed - EARLY_LIFT_US <= lifted <= pressed:
        return None
    return lifted


def one_flip(turn: Turn, occupied: chess.Bitboard) -> tuple[chess.Square, list[Shape]] | None:
    """A sensor that did not change though the move needs it to: the only one that,
    read the other way, makes the board a legal move (another square saw the move)."""
    position = turn.position
    base = position.occupied
    emptied, filled = base & ~occupied, occupied & ~base
    if not any(turn.events_on.get(sq) for sq in squares(emptied | filled)):
        return None
    if any(base & ~(base ^ occupied) & chess.BB_SQUARES[sq]
           for sq, seen in turn.events_on.items() if seen):
        return None  # a piece lifted and put back (a capture tried there?): not a sensor
    own = position.board.occupied_co[position.board.turn]
    found: dict[chess.Square, list[Shape]] = {}
    for shape in itertools.chain(position.moves_from(emptied & own), position.moves_to(filled)):
        for square in squares(shape.vacated | shape.filled):
            if turn.events_on.get(square):
                continue
            flipped = occupied ^ chess.BB_SQUARES[square]
            if (shape.vacated, shape.filled) == (base & ~flipped, flipped & ~base):
                found.setdefault(square, []).append(shape)
    return next(iter(found.items())) if len(found) == 1 else None


def read_faulty(turn: Turn, sensed: chess.Bitboard, faulty: chess.Bitboard,
                deciding: bool = False) -> chess.Bitboard:
    """The sensed occupancy, each faulty sensor read the way that explains the board best.

    A piece missing from its square is in hand until the clock is pressed; only then
    may it have gone to the faulty square (`deciding`).
    """
    if not faulty:
        return sensed
    position = turn.position
    good = sensed & ~faulty
    as_before = good | (position.occupied & faulty)
    # Every way the faulty sensors could read, or, past a few of them (a dead matrix
    # line), each one flipped on its own.
    if faulty.bit_count() <= 4:
        others = [good | subset for subset in subsets(faulty)]
    else:
        others = [as_before ^ chess.BB_SQUARES[sq] for sq in squares(faulty)]

    def plausible(reading: chess.Bitboard) -> float:
        full = position.full(reading)
        if full and not full[0].filled and landings(turn, Match(full, 0)):
            return 5  # a capture seen landing: the capturing piece left the bad square
        if reading == position.occupied:
            return 4
        if full and full[0].filled:
            if not full[0].filled & faulty or deciding:
                return 3
            return 1.5  # arrived on the bad square, or still in hand: wait for the press
        if position.partial(reading):
            return 2
        return 1 if full else 0  # a capture nobody saw land: least likely

    return max([as_before] + others, key=plausible)  # the first of the best: as before


def faulty_may_hide_a_move(position: Position, faulty: chess.Bitboard) -> bool:
    """Whether some legal move of the mover uses one of these (faulty) squares."""
    if not faulty:
        return False
    for move in position.board.legal_moves:
        shape = position.shape(move)
        victim = chess.BB_SQUARES[shape.captured] if shape.captured is not None else 0
        if (shape.vacated | shape.filled | victim | chess.BB_SQUARES[move.to_square]) & faulty:
            return True
    return False


# ---------------------------------------------------------------------- after an outage


def moves_unseen(turn: Turn, occupied: chess.Bitboard, pairs: bool = True
                 ) -> list[Shape] | None:
    """Moves made while the link was down: the one legal move (or, with `pairs`, pair of
    moves, one each) after which the board is the position, a move on its way or the next
    player's pieces in hand; None when nothing fits, or several do."""
    board = turn.board
    fits: dict[tuple[tuple[chess.Square, chess.Square], ...], list[Shape]] = {}
    for move in board.legal_moves:
        shape = shape_of(board, move)
        after = turn.replies_to(shape)
        if (occupied == after.occupied or after.full(occupied)
                or after.partial(occupied) or answers(turn, shape, occupied)):
            fits.setdefault(((move.from_square, move.to_square),), [shape])
    if not fits and pairs:  # both sides moved: look one move further (and the next begun)
        for move in board.legal_moves:
            shape = shape_of(board, move)
            replies = turn.replies_to(shape)
            for reply in replies.board.legal_moves:
                reply_shape = shape_of(replies.board, reply)
                left = reply_shape.after(replies.occupied) ^ occupied
                # (one move begun changes at most four squares: castling)
                if left and (left.bit_count() > 4
                             or not _begun_after(replies, reply, occupied)):
                    continue
                key = ((move.from_square, move.to_square), (reply.from_square, reply.to_square))
                fits.setdefault(key, [shape, reply_shape])
    return next(iter(fits.values())) if len(fits) == 1 else None


def _begun_after(replies: Position, reply: chess.Move, occupied: chess.Bitboard) -> bool:
    """Whether the board shows a move begun (or made) in the position after `reply`."""
    board = replies.board.copy(stack=False)
    board.push(reply)
    third = Position(board)
    return bool(third.full(occupied) or third.partial(occupied))
