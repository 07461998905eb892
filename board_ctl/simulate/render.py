"""Render a real game as the raw sensor log a presence-sensing board would record.

This is an independent model of a human at the board (it knows nothing of the
controller): thinking time, lift and place of pieces, contact bounce, slide blips,
the many physical orders of captures, castling, en passant and promotion, the
promotion selector and the clock button. A clean rendering never breaks a rule:
no own movable piece is touched and then not moved, no enemy piece is lifted unless
it is captured, the king is always lifted before the rook when castling. Knobs that
are off by default add the handling of real players (behaviours.py names them): slow
pushes across squares, captures that push the victim off, a timed scramble in which
the opponent reaches for his piece before the press.

All randomness comes from `random.Random(seed)`; time is kept in integer ticks of
0.1 ms so that the log's `t` values are exact and strictly increasing.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from board_ctl.words import count

TICKS = 10_000  # ticks per second (0.1 ms resolution)

CAPTURE_STYLES = ("victim-first", "attacker-first", "swap-blip", "swap-no-blip",
                  "victim-set-down", "knock-off")
CASTLING_STYLES = ("one-hand", "both-lifted")
PROMOTION_STYLES = ("replace-on-square", "direct", "piece-first")
PROMOTE_TIMINGS = ("before-lift", "in-hand", "after-placement", "after-press", "after-lift")
EP_ORDERS = ("move-then-remove", "remove-first", "lift-remove-place")
SIDE_NAMES = {chess.WHITE: "white", chess.BLACK: "black"}


@dataclass(frozen=True)
class SlowSlide:
    """A piece pushed along the surface rather than carried (times in seconds).

    Each square the piece crosses is closed for `closed` (the magnet is over the
    square's switch while the piece crosses it: a slow push). Two neighbouring squares
    of the path (origin, crossed squares, destination) overlap with `overlap_prob`: the
    next closes `overlap` before the last opens (the base straddles both), otherwise the
    next closes a `gap` after the last opens. A knight is pushed along its L (the long
    leg first or the short one, around any piece in the way), the castling king across
    the square between. The ranges are wider than what a careful observer measured
    (100-400 ms closed, up to 20 ms of overlap).
    """

    closed: tuple[float, float] = (0.080, 0.500)
    overlap_prob: float = 0.5
    overlap: tuple[float, float] = (0.0005, 0.030)
    gap: tuple[float, float] = (0.0005, 0.080)
    knights: bool = True


@dataclass(frozen=True)
class RenderStyle:
    """The knobs of the simulated player. Weights need not sum to 1.

    Times are in seconds, ranges are (low, high) drawn uniformly.
    """

    use_clock: bool = True
    bounce: bool = True
    bounce_prob: float = 0.3  # share of lift/place transitions that bounce
    # Bounce density: when set, EVERY lift and place bounces with this many extra pairs
    # of toggles (drawn from the range), each toggle `bounce_gap` s after the one before
    # (real reed switches: 0-10 pairs, 0.3-2 ms apart). None: bounce_prob's 1-2 pairs.
    bounce_pairs: tuple[int, int] | None = None
    bounce_gap: tuple[float, float] = (0.0003, 0.002)
    slides: bool = True
    slide_prob: float = 0.5  # share of slidable moves that are slid
    # Weights by name; a shorter tuple leaves the styles after it out (weight 0).
    # "victim-set-down": attacker lifted, the victim lifted and set down for a moment on a
    # square it could move to, then taken off; the attacker lands on its square.
    capture_styles: tuple[float, ...] = (0.35, 0.35, 0.2, 0.1)  # CAPTURE_STYLES
    castling_styles: tuple[float, float] = (0.6, 0.4)  # CASTLING_STYLES
    # "piece-first": the new piece put on the square before the pawn is lifted (FIDE 4.6)
    promotion_styles: tuple[float, ...] = (0.5, 0.5)  # PROMOTION_STYLES
    # PROMOTE_TIMINGS; "after-press": the selector set 1-250 ms after pressing the clock
    # (without a clock: after the placement); "after-lift": 10-90 ms after lifting the
    # pawn, while the lift is still settling
    promote_timings: tuple[float, ...] = (1.0, 1.0, 1.0, 0.0)
    queen_default_prob: float = 0.4  # queen promotions with no `promote` event at all
    think: tuple[float, float] = (0.3, 8.0)
    long_think_prob: float = 0.05
    long_think: tuple[float, float] = (8.0, 40.0)
    hand: tuple[float, float] = (0.2, 1.5)  # lift to place of a carried piece
    clock_delay: tuple[float, float] = (0.2, 1.2)  # last placement to clock press
    idle_lift_prob: float = 0.05  # lift and replace an own piece that has no legal move
    idle_hold: tuple[float, float] = (0.3, 1.2)  # kept under 1.5 s: never a mismatch
    clock_after_end_prob: float = 0.5  # press the clock after a game-ending move
    claim_draws: bool = True  # `claim` at the end of a claimable threefold / fifty-move draw
    resign: bool = True  # `resign` by the loser of a decisive game that did not end in mate
    start_ply: int = 0  # begin from the position after this many plies (with a `start` line)
    # -- handling behaviours (board_ctl.simulate.behaviours); the defaults leave them out --
    # Slides are slow pushes (SlowSlide) instead of 15-70 ms blips; knights may slide.
    slow_slide: SlowSlide | None = None
    # "knock-off" capture: the victim pushed onto a neighbouring square, taken off after this
    knock_off_removal: tuple[float, float] = (0.1, 1.0)
    # A time control ("180+2") on the start line: the player then never lets his clock
    # run down below `time_reserve` s before a press (the simulated games never flag).
    time_control: str | None = None
    time_reserve: float = 10.0
    # The opponent's first lift `early_lift` s BEFORE the mover's press (a scramble).
    early_lift_prob: float = 0.0
    early_lift: tuple[float, float] = (0.0, 0.100)
    # Thinking time before a recapture on the square just captured on (None: `think`).
    recapture_think: tuple[float, float] | None = None
    # Lift to place of a king's step (None: `hand`): the king shuffles of a scramble.
    king_hand: tuple[float, float] | None = None
    # The mover setting the piece he just put down straight before his press: lifted
    # `straighten_after` s after it landed, put back `straighten_hold` s later.
    straighten_prob: float = 0.0
    straighten_after: tuple[float, float] = (0.1, 1.5)
    straighten_hold: tuple[float, float] = (0.04, 0.4)


@dataclass(frozen=True)
class PlyTrace:
    """What the simulator did for one ply: lines[first_line:end_line] belong to it."""

    ply: int  # index into RenderedGame.moves
    uci: str
    san: str
    style: str  # e.g. "quiet:slide", "capture:swap-no-blip", "castle:both-lifted"
    first_line: int
    end_line: int
    notes: tuple[str, ...] = ()  # e.g. "idle-lift:a8", "promote:n:after-placement"


@dataclass
class RenderedGame:
    """A sensor log and what it should replay to.

    `moves` are the game's moves from `start_fen`; a ply index is an index into
    `moves` (0-based, counted from the log's start position): a game report's 1-based
    `ply` of the same move is that index + 1 when the log starts at the game's start.
    """

    lines: list[dict[str, Any]]
    moves: list[chess.Move]
    expected_alerts: list[tuple[str, int]]  # (alert code, index into moves)
    start_fen: str
    result: str = "*"
    plies: list[PlyTrace] = field(default_factory=list)
    # The squares each expected alert must name, where the ruling says (parallel to
    # expected_alerts; None or a missing entry: any squares).
    expected_squares: list[tuple[str, ...] | None] = field(default_factory=list)
    behaviour: str = ""  # the handling behaviour's name (board_ctl.simulate.behaviours)
    profile: str = "fide"  # the rule profile the log is to be replayed with

    def jsonl(self) -> str:
        return "".join(json.dumps(obj, ensure_ascii=False) + "\n" for obj in self.lines)

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.jsonl(), encoding="utf-8")

    def final_board(self) -> chess.Board:
        board = chess.Board(self.start_fen)
        for move in self.moves:
            board.push(move)
        return board

    def ends_with_capture_in_hand(self) -> bool:
        """The log ends on a capture no event shows landing (a push-off, or a swap whose
        victim's sensor never opened), with nothing after it (no press, no game end). To
        the board that is a piece still in hand: a log's end records no move its piece was
        not seen to make, and says so (`move-unfinished`)."""
        if not self.moves:
            return False
        board = self.final_board()
        if board.is_game_over(claim_draw=False):
            return False
        last = board.pop()
        if not board.is_capture(last):
            return False
        origin = chess.square_name(last.from_square)
        lifted = max((i for i, line in enumerate(self.lines)
                      if line.get("ev") == "lift" and line.get("sq") == origin), default=None)
        if lifted is None:
            return False
        # squares a slid piece crosses are no landing; a place anywhere else is (the
        # target, or the victim pushed off onto a neighbour: it tells the capture)
        crossed = {chess.square_name(sq) for sq in chess.SquareSet(
            chess.between(last.from_square, last.to_square))} | {origin}
        return not any(line.get("ev") == "clock" or
                       (line.get("ev") == "place" and line.get("sq") not in crossed)
                       for line in self.lines[lifted:])


# A hook runs after the thinking time of its ply. It returns a style label when it
# has physically made the ply's move itself, or None to let the normal rendering
# follow.
Hook = Callable[["Renderer", chess.Move], "str | None"]


def _pick(rng: random.Random, names: tuple[str, ...], weights: tuple[float, ...]) -> str:
    return rng.choices(names, weights=_padded(weights, names))[0]


def _padded(weights: tuple[float, ...] | list[float], names: tuple[str, ...]) -> list[float]:
    """Weights for every name: the ones given, 0 for the names after them."""
    return list(weights) + [0.0] * (len(names) - len(weights))


def rook_squares(move: chess.Move) -> tuple[chess.Square, chess.Square]:
    """(rook origin, rook destination) of a standard castling move."""
    rank = chess.square_rank(move.from_square)
    if chess.square_file(move.to_square) > chess.square_file(move.from_square):
        return chess.square(7, rank), chess.square(5, rank)
    return chess.square(0, rank), chess.square(3, rank)


def ep_victim(move: chess.Move) -> chess.Square:
    return chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square))


def knight_paths(origin: chess.Square, target: chess.Square) -> list[list[chess.Square]]:
    """The two L paths of a knight pushed along the board, as the squares crossed:
    the long leg first, or the short leg first."""
    f, r = chess.square_file(origin), chess.square_rank(origin)
    df = chess.square_file(target) - f
    dr = chess.square_rank(target) - r
    sf, sr = (df > 0) - (df < 0), (dr > 0) - (dr < 0)
    if abs(df) == 2:
        return [[chess.square(f + sf, r), chess.square(f + 2 * sf, r)],
                [chess.square(f, r + sr), chess.square(f + sf, r + sr)]]
    return [[chess.square(f, r + sr), chess.square(f, r + 2 * sr)],
            [chess.square(f + sf, r), chess.square(f + sf, r + sr)]]


def knock_off_spots(board: chess.Board, move: chess.Move) -> list[chess.Square]:
    """Empty squares beside the victim, ahead of the capturing piece's travel, where it
    can push the victim off: none beside another square it could capture on (the
    sensors could not tell which capture it was), none for en passant or a promotion."""
    a, v = move.from_square, move.to_square
    if board.is_en_passant(move) or move.promotion or not board.is_capture(move):
        return []
    df = chess.square_file(v) - chess.square_file(a)
    dr = chess.square_rank(v) - chess.square_rank(a)
    others = {m.to_square for m in board.legal_moves
              if m.from_square == a and m.to_square != v and board.is_capture(m)}
    spots = []
    for n in chess.SquareSet(chess.BB_KING_ATTACKS[v] & ~board.occupied):
        ahead = (chess.square_file(n) - chess.square_file(v)) * df + \
            (chess.square_rank(n) - chess.square_rank(v)) * dr
        if ahead > 0 and not any(chess.square_distance(n, o) <= 1 for o in others):
            spots.append(n)
    return spots


def captured_square(board: chess.Board, move: chess.Move) -> chess.Square | None:
    if board.is_en_passant(move):
        return ep_victim(move)
    return move.to_square if board.is_capture(move) else None


class Renderer:
    """The simulated player and the board's sensors (package-internal API).

    `violations.py` drives it through hooks, so its primitives (lift, place, pause,
    clock, …) are usable from outside; everything else is private.
    """

    def __init__(self, game: chess.pgn.Game, seed: int, style: RenderStyle) -> None:
        self.rng = random.Random(seed)
        self.style = style
        board = game.board()
        moves = list(game.mainline_moves())
        if not 0 <= style.start_ply <= len(moves):
            raise ValueError(f"start_ply {style.start_ply} outside the game's "
                             f"{count(len(moves), 'ply', 'plies')}")
        for move in moves[: style.start_ply]:
            board.push(move)
        self.start_fen = board.fen()
        self.board = chess.Board(self.start_fen)  # fresh history: repetitions count from here
        self.moves = moves[style.start_ply :]
        self.result = game.headers.get("Result", "*")
        self.tick = 0
        self.last_tick = -1
        self.lines: list[dict[str, Any]] = []
        if self.start_fen != chess.STARTING_FEN or style.time_control:
            start: dict[str, Any] = {"t": 0.0, "ev": "start", "fen": self.start_fen}
            if style.time_control:
                start["time_control"] = style.time_control
            self.lines.append(start)
        self.occupied: set[chess.Square] = set(chess.SquareSet(self.board.occupied))
        self.notes: list[str] = []
        self.prev_was_promotion = False
        self.selector_after_press: chess.PieceType | None = None
        self.pressed = False  # the clock pressed for this ply already (by a violation's hook)
        self.ply = 0  # the ply being rendered, and whether it is the last
        self.is_last = False
        # A press held back for the opponent's first lift: (side, lift tick, press tick)
        self.deferred_press: tuple[chess.Color, int, int] | None = None
        self._lifting = False
        self.lifted_at = self.placed_at = 0  # ticks of the latest lift and place
        self.clock_left: dict[chess.Color, float] = {}  # with a time control: s left
        self.increment = 0.0
        self.turn_started = 0  # tick of the last press (the running clock's start)
        if style.time_control:
            base, _, inc = style.time_control.partition("+")
            self.clock_left = {chess.WHITE: float(base), chess.BLACK: float(base)}
            self.increment = float(inc or 0)

    # -- time -------------------------------------------------------------------

    def ticks(self, lo: float, hi: float) -> int:
        return max(1, round(self.rng.uniform(lo, hi) * TICKS))

    def pause(self, lo: float, hi: float) -> None:
        self.tick += self.ticks(lo, hi)

    def think(self, span: tuple[float, float] | None = None) -> None:
        s = self.style
        if span is not None:
            self.spend(*span)
        elif self.rng.random() < s.long_think_prob:
            self.spend(*s.long_think)
        else:
            self.spend(*s.think)

    def spend(self, lo: float, hi: float) -> None:
        """A pause of the side to move, never below its time reserve with a time control
        (6 s more are kept for the move and the press that follow)."""
        if not self.clock_left:
            self.pause(lo, hi)
            return
        self.tick += min(self.ticks(lo, hi), max(1, round(self.time_to_spend(6.0) * TICKS)))

    def time_to_spend(self, keep: float) -> float:
        """Seconds the side to move may still use, keeping its reserve and `keep` s."""
        used = (self.tick - self.turn_started) / TICKS
        return self.clock_left[self.board.turn] - used - self.style.time_reserve - keep

    # -- events -----------------------------------------------------------------

    def emit(self, ev: str, **fields: Any) -> None:
        if self.deferred_press is not None and not self._lifting:
            self._flush_press()  # the opponent's first event is no lift: press first
            self.tick = max(self.tick, self.last_tick + self.ticks(0.050, 0.200))
        # Guard: strictly increasing times even when two draws collide.
        self.tick = max(self.tick, self.last_tick + 1)
        self.last_tick = self.tick
        self.lines.append({"t": self.tick / TICKS, "ev": ev, **fields})

    def _bounce(self, sq: chess.Square, first: str) -> None:
        """Extra toggles after a transition: 2 or 4 of them within 2-8 ms, or with a
        bounce density, that many pairs `bounce_gap` apart after every transition."""
        if not self.style.bounce:
            return
        other = "place" if first == "lift" else "lift"
        if self.style.bounce_pairs is not None:
            for i in range(2 * self.rng.randint(*self.style.bounce_pairs)):
                self.tick += self.ticks(*self.style.bounce_gap)
                self.emit(other if i % 2 == 0 else first, sq=chess.square_name(sq))
            return
        if not self.rng.random() < self.style.bounce_prob:
            return
        pairs = self.rng.choice((1, 2))
        span = self.rng.randint(20, 80)
        start = self.tick
        offsets = sorted(self.rng.sample(range(2, span + 1), 2 * pairs))
        for i, off in enumerate(offsets):
            self.tick = start + off
            self.emit(other if i % 2 == 0 else first, sq=chess.square_name(sq))

    def lift(self, sq: chess.Square, bounce: bool = True) -> None:
        if sq not in self.occupied:
            raise AssertionError(f"simulator bug: lift of empty {chess.square_name(sq)}")
        self.occupied.discard(sq)
        self._lifting = True
        self.emit("lift", sq=chess.square_name(sq))
        self.lifted_at = self.last_tick  # (before its bounce)
        if bounce:
            self._bounce(sq, "lift")
        self._lifting = False
        if self.deferred_press is not None:
            lifted = self.lifted_at
            self._flush_press()  # the mover presses just after the opponent's lift
            self.notes.append(f"lift-before-press:{(self.last_tick - lifted) / 10:.1f}ms")

    def place(self, sq: chess.Square, bounce: bool = True) -> None:
        if sq in self.occupied:
            raise AssertionError(f"simulator bug: place on occupied {chess.square_name(sq)}")
        self.occupied.add(sq)
        self.emit("place", sq=chess.square_name(sq))
        self.placed_at = self.last_tick  # (before its bounce)
        if bounce:
            self._bounce(sq, "place")

    def blip(self, sq: chess.Square) -> None:
        """A slid piece passing over an empty square: occupied for 15-70 ms."""
        self.place(sq, bounce=False)
        self.pause(0.015, 0.070)
        self.lift(sq, bounce=False)

    def clock(self, side: chess.Color | None = None) -> None:
        """A clock press, by default by the side to move."""
        side = self.board.turn if side is None else side
        self.emit("clock", side=SIDE_NAMES[side])
        if self.clock_left:
            used = (self.last_tick - self.turn_started) / TICKS
            self.clock_left[side] += self.increment - used
            self.turn_started = self.last_tick
            if self.clock_left[side] < 0:
                raise AssertionError(f"simulator bug: {SIDE_NAMES[side]}'s flag fell")

    def _flush_press(self) -> None:
        assert self.deferred_press is not None
        side, _, press_tick = self.deferred_press
        self.deferred_press = None
        self.tick = max(self.tick, press_tick)
        self.clock(side)

    def promote(self, piece: chess.PieceType) -> None:
        self.emit("promote", piece=chess.piece_symbol(piece))

    # -- carrying a piece ---------------------------------------------------------

    def path(self, origin: chess.Square, target: chess.Square) -> list[chess.Square]:
        """Squares strictly between, in the order a sliding piece crosses them."""
        between = chess.SquareSet.between(origin, target)
        return sorted(between, key=lambda sq: chess.square_distance(sq, origin))

    def slide_path(self, origin: chess.Square, target: chess.Square) -> list[chess.Square] | None:
        """The squares a piece pushed from origin to target crosses, in order, or None
        when it cannot be pushed there (a piece in the way, nothing to cross). Knights
        only with a slow slide: along one of its two L paths that is clear."""
        piece = self.board.piece_at(origin)
        slow = self.style.slow_slide
        if piece is not None and piece.piece_type == chess.KNIGHT:
            if slow is None or not slow.knights:
                return None
            clear = [p for p in knight_paths(origin, target)
                     if not any(sq in self.occupied for sq in p)]
            return self.rng.choice(clear) if clear else None
        return self.path(origin, target) if self.can_slide(origin, target) else None

    def hand_time(self, origin: chess.Square) -> tuple[float, float]:
        """Lift to place of the piece on origin when carried."""
        if self.style.king_hand is not None and self.board.piece_type_at(origin) == chess.KING:
            return self.style.king_hand
        return self.style.hand

    def can_slide(self, origin: chess.Square, target: chess.Square) -> bool:
        piece = self.board.piece_at(origin)
        if piece is None or piece.piece_type == chess.KNIGHT:
            return False
        if piece.piece_type == chess.PAWN and abs(origin - target) != 16:
            return False
        squares = self.path(origin, target)
        return bool(squares) and not any(sq in self.occupied for sq in squares)

    def carry(self, origin: chess.Square, target: chess.Square, slide: bool | None = None) -> bool:
        """Time between lifting a piece from origin and reaching target.

        Sliding (when allowed) leaves a blip on every square in between. Returns
        whether the piece was slid.
        """
        s = self.style
        if slide is None:
            slide = s.slides and self.rng.random() < s.slide_prob
        if s.slow_slide is not None:
            squares = self.slide_path(origin, target) if slide else None
            if not squares:
                self.pause(*self.hand_time(origin))
                return False
            self.pause(0.030, 0.200)
            self.slide_slowly(squares)
            self.pause(0.030, 0.200)
            return True
        if not (slide and self.can_slide(origin, target)):
            self.pause(*self.hand_time(origin))
            return False
        self.pause(0.030, 0.200)
        for i, sq in enumerate(self.path(origin, target)):
            if i:
                self.pause(0.010, 0.120)
            self.blip(sq)
        self.pause(0.030, 0.200)
        return True

    def travel(self, origin: chess.Square, target: chess.Square) -> bool:
        """Move the piece on origin to the empty target: lift, carry, place; or, with a
        slow slide, pushed the whole way, its origin and target overlapping with the
        squares next to them like any two neighbours. Returns whether it was slid."""
        s = self.style
        if s.slow_slide is None:
            self.lift(origin)
            slid = self.carry(origin, target)
            self.place(target)
            return slid
        squares = self.slide_path(origin, target) if s.slides and \
            self.rng.random() < s.slide_prob else None
        if not squares:
            self.lift(origin)
            self.pause(*self.hand_time(origin))
            self.place(target)
            return False
        self.pause(0.020, 0.200)  # the hand on the piece, the push begins
        self.slide_slowly(squares, depart=origin, arrive=target)
        return True

    def slide_slowly(self, squares: list[chess.Square], depart: chess.Square | None = None,
                     arrive: chess.Square | None = None) -> None:
        """The sensor changes of a piece pushed across `squares` (from `depart`, onto
        `arrive`, when given; else it is in the hand before and after): each crossed
        square closed for SlowSlide.closed, neighbours overlapping or a gap apart."""
        model = self.style.slow_slide
        assert model is not None
        prev = depart
        # when the square under the piece opens: from the origin, once the push has
        # carried the piece's middle to the square's edge
        opens_at = self.tick + self.ticks(0.050, 0.300)
        for nxt in [*squares, *([] if arrive is None else [arrive])]:
            end = nxt == arrive
            if prev is None:
                self.place(nxt, bounce=False)
                placed = self.last_tick
            elif self.rng.random() < model.overlap_prob:
                self.tick = max(self.tick, opens_at - self.ticks(*model.overlap))
                self.place(nxt, bounce=end)
                placed = self.last_tick
                self.tick = max(self.tick, opens_at)
                self.lift(prev, bounce=prev == depart)
            else:
                self.tick = max(self.tick, opens_at)
                self.lift(prev, bounce=prev == depart)
                self.tick = max(self.tick, self.lifted_at + self.ticks(*model.gap))
                self.place(nxt, bounce=end)
                placed = self.last_tick
            opens_at = placed + self.ticks(*model.closed)
            prev = nxt
        if arrive is None and prev is not None and prev != depart:
            self.tick = max(self.tick, opens_at)
            self.lift(prev, bounce=False)

    # -- the parts of a ply -----------------------------------------------------------

    def immobile_own(self, exclude: Collection[chess.Square] = ()) -> list[chess.Square]:
        """Squares of the mover's pieces that have no legal move."""
        mobile = {m.from_square for m in self.board.legal_moves}
        own = chess.SquareSet(self.board.occupied_co[self.board.turn])
        return [sq for sq in own if sq not in mobile and sq not in exclude]

    def idle_lift(self, sq: chess.Square, hold: tuple[float, float]) -> None:
        self.lift(sq)
        self.pause(*hold)
        self.place(sq)

    def _thinking(self, allow_idle: bool, move: chess.Move) -> None:
        s = self.style
        if self.deferred_press is not None:  # reaching already: no thinking time
            self.tick = self.deferred_press[1]
            return
        if allow_idle and self.rng.random() < s.idle_lift_prob:
            involved = {move.from_square, move.to_square}
            if self.board.is_castling(move):
                involved |= set(rook_squares(move))
            candidates = self.immobile_own(involved)
            if candidates:
                sq = self.rng.choice(candidates)
                self.pause(0.3, max(0.31, s.think[1] / 2))
                self.idle_lift(sq, s.idle_hold)
                self.notes.append(f"idle-lift:{chess.square_name(sq)}")
        if s.recapture_think is not None and self._recaptures(move):
            self.think(s.recapture_think)
            self.notes.append("recapture")
        else:
            self.think()

    def _recaptures(self, move: chess.Move) -> bool:
        """Whether `move` takes the piece that has just moved (a recapture)."""
        board = self.board
        return bool(board.move_stack) and board.is_capture(move) \
            and board.peek().to_square == move.to_square

    def play(self, move: chess.Move) -> str:
        """Physically make a move; returns the style label used."""
        board = self.board
        if board.is_castling(move):
            return self._castle(move)
        if board.is_en_passant(move):
            return self._en_passant(move)
        if move.promotion:
            return self._promotion(move)
        if board.is_capture(move):
            return self._capture(move)
        return self._quiet(move)

    def _quiet(self, move: chess.Move) -> str:
        if self.style.slow_slide is not None:
            slid = self.travel(move.from_square, move.to_square)
            return "quiet:slow-slide" if slid else "quiet"
        self.lift(move.from_square)
        slid = self.carry(move.from_square, move.to_square)
        self.place(move.to_square)
        return "quiet:slide" if slid else "quiet"

    def _unique_capture(self, move: chess.Move) -> bool:
        """Is this the attacker's only capture? Only then is a push-off unambiguous."""
        captures = {
            m.to_square
            for m in self.board.legal_moves
            if m.from_square == move.from_square
            and self.board.is_capture(m)
            and not self.board.is_en_passant(m)
        }
        return captures == {move.to_square}

    def _set_down_squares(self, move: chess.Move) -> list[chess.Square]:
        """Empty squares the victim could move to (its own side to move): where a player
        clearing it may set it down for a moment."""
        board = self.board.copy(stack=False)
        board.turn = not board.turn
        board.ep_square = None
        return sorted({m.to_square for m in board.pseudo_legal_moves
                       if m.from_square == move.to_square and not board.piece_at(m.to_square)
                       and m.to_square != move.from_square})

    def _capture(self, move: chess.Move) -> str:
        weights = _padded(self.style.capture_styles, CAPTURE_STYLES)
        if not self._unique_capture(move):
            weights[3] = 0.0
        set_down = self._set_down_squares(move)
        if not set_down:
            weights[4] = 0.0
        spots = self.knock_off_spots(move) if weights[5] else []
        if not spots:
            weights[5] = 0.0
        if not any(weights):
            weights[2] = 1.0
        style = _pick(self.rng, CAPTURE_STYLES, tuple(weights))
        a, v = move.from_square, move.to_square
        if style == "victim-first":
            self.lift(v)
            self.pause(0.3, 1.5)
            if self.style.slow_slide is not None:
                slid = self.travel(a, v)
                return "capture:victim-first:slow-slide" if slid else "capture:victim-first"
            self.lift(a)
            self.carry(a, v)
            self.place(v)
        elif style == "knock-off":
            self._knock_off(a, v, self.rng.choice(spots))
        elif style == "attacker-first":
            self.lift(a)
            self.carry(a, v)
            self.lift(v)
            self.pause(0.1, 0.6)
            self.place(v)
        elif style == "swap-blip":
            self.lift(a)
            self.carry(a, v)
            self.lift(v, bounce=False)
            self.pause(0.005, 0.060)
            self.place(v)
        elif style == "swap-no-blip":  # the victim is pushed off, the target never empties
            self.lift(a)
            self.carry(a, v)
            self.pause(0.05, 0.3)
        else:  # victim-set-down: cleared with a stop on another square on its way off
            self.lift(a)
            self.pause(0.2, 0.6)
            self.lift(v)
            self.pause(0.1, 0.3)
            spot = self.rng.choice(set_down)
            self.place(spot)
            self.pause(0.2, 0.8)
            self.lift(spot)
            self.pause(0.2, 0.6)
            self.place(v)
        return f"capture:{style}"

    def knock_off_spots(self, move: chess.Move) -> list[chess.Square]:
        return knock_off_spots(self.board, move)

    def _knock_off(self, a: chess.Square, v: chess.Square, spot: chess.Square) -> None:
        """The capturing piece pushes the victim off its square onto `spot` and takes it
        off the board a moment later; its square may empty for a moment as they pass."""
        self.lift(a)
        self.carry(a, v)
        if self.rng.random() < 0.5:  # the victim leaves before the capturing piece is in
            self.lift(v, bounce=False)
            left = self.last_tick
            arrivals = sorted([(left + self.ticks(0.005, 0.060), v),
                               (left + self.ticks(0.005, 0.150), spot)])
            for at, sq in arrivals:
                self.tick = max(self.tick, at)
                self.place(sq)
                if sq == spot:
                    landed = self.placed_at
        else:  # the square never empties
            self.pause(0.010, 0.150)
            self.place(spot)
            landed = self.placed_at
        self.tick = max(self.tick, landed + self.ticks(*self.style.knock_off_removal))
        self.lift(spot)

    def _castle(self, move: chess.Move) -> str:
        style = _pick(self.rng, CASTLING_STYLES, self.style.castling_styles)
        k_from, k_to = move.from_square, move.to_square
        r_from, r_to = rook_squares(move)
        slid = self.castle_squares(style, k_from, k_to, r_from, r_to)
        return f"castle:{style}:slow-slide" if slid and self.style.slow_slide else f"castle:{style}"

    def castle_squares(self, style: str, k_from: chess.Square, k_to: chess.Square,
                       r_from: chess.Square, r_to: chess.Square) -> bool:
        """King and rook moved for castling, king first, in one of CASTLING_STYLES.
        Returns whether the king was slid."""
        slid = False
        if style == "one-hand":
            if self.style.slow_slide is not None:
                slid = self.travel(k_from, k_to)
            else:
                self.lift(k_from)
                slid = self.carry(k_from, k_to)
                self.place(k_to)
            self.pause(0.1, 0.8)
            self.lift(r_from)
            self.carry(r_from, r_to, slide=False)  # it jumps the king
            self.place(r_to)
        else:
            self.lift(k_from)
            self.pause(0.050, 0.250)
            self.lift(r_from)
            self.pause(0.2, 1.0)
            first, second = (k_to, r_to) if self.rng.random() < 0.5 else (r_to, k_to)
            self.place(first)
            self.pause(0.050, 0.400)
            self.place(second)
        return slid

    def _en_passant(self, move: chess.Move) -> str:
        order = self.rng.choice(EP_ORDERS)
        a, to, v = move.from_square, move.to_square, ep_victim(move)
        if order == "move-then-remove":
            self.lift(a)
            self.carry(a, to)
            self.place(to)
            self.pause(0.2, 1.0)
            self.lift(v)
        elif order == "remove-first":
            self.lift(v)
            self.pause(0.3, 1.2)
            self.lift(a)
            self.carry(a, to)
            self.place(to)
        else:
            self.lift(a)
            self.pause(0.1, 0.5)
            self.lift(v)
            self.pause(0.1, 0.6)
            self.place(to)
        return f"ep:{order}"

    def _promote_timing(self, piece: chess.PieceType) -> str | None:
        """When to set the selector; None for a default queen (no event)."""
        if piece == chess.QUEEN and self.rng.random() < self.style.queen_default_prob:
            return None
        weights = _padded(self.style.promote_timings, PROMOTE_TIMINGS)
        # Without a clock, a selector set before lifting would directly follow the
        # opponent's own promotion and could be read as his choice: avoid it there.
        if not self.style.use_clock and self.prev_was_promotion:
            weights[0] = 0.0
        if not any(weights):
            weights[1] = 1.0
        timing = _pick(self.rng, PROMOTE_TIMINGS, tuple(_padded(weights, PROMOTE_TIMINGS)))
        if timing == "after-press" and not self.style.use_clock:
            return "after-placement"
        return timing

    def _promotion(self, move: chess.Move) -> str:
        piece = move.promotion
        assert piece is not None
        timing = self._promote_timing(piece)
        style = _pick(self.rng, PROMOTION_STYLES, self.style.promotion_styles)
        capture = self.board.is_capture(move)
        victim_first = capture and self.rng.random() < 0.5
        a, to = move.from_square, move.to_square
        if timing == "before-lift":
            self.promote(piece)
            self.pause(0.3, 2.0)
        if victim_first:
            self.lift(to)
            self.pause(0.3, 1.5)
        if style == "piece-first" and (victim_first or not capture):
            # The new piece goes on the square first; the pawn is removed after (4.6).
            self._final_promotion_place(to, piece, timing)
            self.pause(0.3, 1.2)
            self.lift(a)
            if timing == "after-lift":
                self.pause(0.010, 0.090)
                self.promote(piece)
            elif timing == "after-placement":
                self.pause(0.1, 0.6)
                self.promote(piece)
            elif timing == "after-press":
                self.selector_after_press = piece
            self.notes.append(f"promote:{chess.piece_symbol(piece)}:{timing or 'default-queen'}")
            return f"promotion:{style}"
        if style == "piece-first":
            style = "direct"  # (a capture's victim still stands on the square)
        self.lift(a)
        if timing == "after-lift":
            self.pause(0.010, 0.090)
            self.promote(piece)
        if style == "replace-on-square":
            self.carry(a, to)
            if capture and not victim_first:
                self.lift(to)
                self.pause(0.1, 0.6)
            self.place(to)
            self.pause(0.3, 1.5)
            self.lift(to)  # the pawn goes, the new piece comes
        elif capture and not victim_first:
            self.pause(0.1, 0.6)
            self.lift(to)
        self._final_promotion_place(to, piece, timing)
        if timing == "after-placement":
            self.pause(0.1, 0.6)
            self.promote(piece)
        elif timing == "after-press":
            self.selector_after_press = piece  # set once the clock is pressed
        self.notes.append(f"promote:{chess.piece_symbol(piece)}:{timing or 'default-queen'}")
        return f"promotion:{style}"

    def _final_promotion_place(
        self, to: chess.Square, piece: chess.PieceType, timing: str | None
    ) -> None:
        """Fetch the new piece and put it down; the selector may be set meanwhile."""
        if timing == "in-hand":
            self.pause(0.2, 0.8)
            self.promote(piece)
            self.pause(0.2, 0.8)
        else:
            self.pause(0.4, 1.6)
        self.place(to)

    # -- a whole game -------------------------------------------------------------

    def _press_clock(self, is_last: bool) -> bool:
        """Whether to press the clock after the move just pushed."""
        if not self.style.use_clock:
            return False
        if is_last and self.board.outcome(claim_draw=False) is not None:
            return self.rng.random() < self.style.clock_after_end_prob
        return True

    def will_press(self, move: chess.Move) -> bool:
        """Whether the clock is to be pressed after `move` (for a hook pressing itself)."""
        self.board.push(move)
        try:
            return self._press_clock(self.is_last)
        finally:
            self.board.pop()

    def _game_end(self) -> None:
        """The buttons that end a game the moves alone do not end."""
        b = self.board
        if self.deferred_press is not None:
            self._flush_press()
        if self.style.resign and self.result in ("1-0", "0-1") and not b.is_checkmate():
            self.spend(1.0, 10.0)
            self.emit("resign", side="black" if self.result == "1-0" else "white")
        else:
            self._claim()

    def _claim(self) -> None:
        b = self.board
        claimable = b.is_repetition(3) or b.halfmove_clock >= 100
        if (
            self.style.claim_draws
            and self.result == "1/2-1/2"
            and claimable
            and b.outcome(claim_draw=False) is None
        ):
            self.spend(0.5, 3.0)
            self.emit("claim", side=SIDE_NAMES[b.turn])

    def run(self, hooks: dict[int, Hook] | None = None) -> list[PlyTrace]:
        hooks = hooks or {}
        traces: list[PlyTrace] = []
        for i, move in enumerate(self.moves):
            first = len(self.lines)
            self.notes = []
            hook = hooks.get(i)
            self.ply, self.is_last = i, i == len(self.moves) - 1
            self._thinking(allow_idle=hook is None, move=move)
            self.pressed = False  # (a hook may press the clock itself)
            label = hook(self, move) if hook else None
            if label is None:
                label = self.play(move)
            san = self.board.san(move)
            mover = self.board.turn
            self.board.push(move)
            if not self.pressed and self._press_clock(is_last=i == len(self.moves) - 1):
                self._straighten(move, hooked=hook is not None)
                self.pause(*self.style.clock_delay)
                if not self._lift_before_the_press(mover, i + 1 in hooks):
                    self.clock(mover)
            if self.selector_after_press is not None:
                self.pause(0.001, 0.250)  # (no press after a mating move: after the placement)
                self.promote(self.selector_after_press)
                self.selector_after_press = None
            self.prev_was_promotion = move.promotion is not None
            self._check_occupancy(i)
            traces.append(
                PlyTrace(i, move.uci(), san, label, first, len(self.lines), tuple(self.notes))
            )
        self._game_end()
        return traces

    def _straighten(self, move: chess.Move, hooked: bool) -> None:
        """Before his press, the mover may lift the piece he just put down (the king,
        castling) and put it back on its square, setting it straight."""
        s = self.style
        if (s.straighten_prob <= 0 or hooked or self.selector_after_press is not None
                or self.rng.random() >= s.straighten_prob):
            return
        self.pause(*s.straighten_after)
        self.lift(move.to_square)
        self.pause(*s.straighten_hold)
        self.place(move.to_square)
        self.notes.append(f"straightened:{chess.square_name(move.to_square)}")

    def _lift_before_the_press(self, mover: chess.Color, next_hooked: bool) -> bool:
        """In a scramble the opponent may lift his first piece `early_lift` before the
        mover's press: the press is then held back until that lift (deferred_press)."""
        s = self.style
        if (s.early_lift_prob <= 0 or self.is_last or next_hooked
                or self.selector_after_press is not None
                or self.rng.random() >= s.early_lift_prob):
            return False
        lead = self.ticks(*s.early_lift)
        # (not before the mover's hand is off the piece: 80-150 ms after his release)
        lift_tick = max(self.tick - lead, self.last_tick + self.ticks(0.080, 0.150))
        self.deferred_press = (mover, lift_tick, lift_tick + lead)
        return True

    def _check_occupancy(self, ply: int) -> None:
        if self.occupied != set(chess.SquareSet(self.board.occupied)):
            raise AssertionError(f"simulator bug: occupancy differs from the game after ply {ply}")

    def rendered(self, traces: list[PlyTrace], alerts: list[tuple[str, int]],
                 squares: list[tuple[str, ...] | None] | None = None) -> RenderedGame:
        return RenderedGame(
            lines=self.lines,
            moves=list(self.moves),
            expected_alerts=alerts,
            start_fen=self.start_fen,
            result=self.result,
            plies=traces,
            expected_squares=list(squares or []),
        )


def render_game(
    game: chess.pgn.Game, *, seed: int, style: RenderStyle = RenderStyle()
) -> RenderedGame:
    """A clean rendering of the game's main line (no rule broken, no alert expected)."""
    renderer = Renderer(game, seed, style)
    return renderer.rendered(renderer.run(), [])
