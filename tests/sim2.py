"""sim2: an independent sensor-log simulator (a second opinion on board_ctl).

Written from docs/sensor-log.md and the rules of docs/rules.md only, without
looking at board_ctl.simulate, so that its habits are not the product's habits.

`render(game, seed, **knobs)` turns a python-chess game into sensor-log objects (the
JSON Lines of the spec, as dicts, the optional `start` line first).  `render_case`
returns the same lines together with what a correct controller must report: the moves,
the result, and the alert codes (none at all for a clean game).

How a human is modelled (every choice below is allowed by the spec; the ones that are a
judgement call are marked JUDGEMENT):

* contact bounce: 1-6 extra toggles spread over 1-15 ms, at lifts and at placements;
* slides: a slid piece fires every empty square it crosses for 20-90 ms ("tens of
  milliseconds"; JUDGEMENT: 81-90 ms is longer than some debouncers' window), and with
  `overlap` the next square can fire before the one behind it releases (a piece
  straddling two squares; JUDGEMENT, the spec neither allows nor forbids it);
* captures: victim first (0.1-4 s before the attacker is lifted), attacker first, a
  fast swap where the victim square is empty for 2-40 ms, or a push-off where it never
  empties (only generated when the capture is the one legal capture from its origin:
  otherwise RULES.md says the controller must ask, so nothing can be asserted);
* castling: king first with one hand (king placed, then rook), or king and rook lifted
  together (rook 0-100 ms after the king), placed in either order; a rook may be slid
  while the king is in the air;
* en passant in every physically possible order;
* promotion: the new piece put straight on the last rank, or the pawn placed there and
  exchanged 0.2-3 s later; the selector before, during or after the placement, or late
  (50-200 ms after the clock press: JUDGEMENT, taken as skew like a late placement, so
  the game's piece is expected), or very late (0.6-2 s after the press: the move was
  confirmed with a queen, which is what is expected, and the game stops there);
* clock presses 50 ms to 3 s after the move, sometimes 50-250 ms *before* the last
  placement (skew, JUDGEMENT: RULES.md allows ~150-300 ms of grace); or no clock at all;
* clean noise: a piece held up to 30 s; the piece to move lifted, put back and then moved
  (same piece: no touch-move); an own piece that has no legal move lifted and put back
  (FIDE 4.5: no obligation); a brief touch-down (< 0.8 s) on a legal square on the way
  (the piece is still held, FIDE 4.7 allows it; JUDGEMENT); draw offers declined by
  moving;
* endings: mate (with or without a clock press after it), stalemate and the other
  automatic ends, resignation, agreement (offer after the move and before the press),
  threefold and fifty-move claims by the player having the move.

Violations (`violation=` knob) are scripted at one ply; see `VIOLATIONS`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, fields
from typing import Any

import chess
import chess.pgn

SIDE = {chess.WHITE: "white", chess.BLACK: "black"}

TERMINATION = {
    chess.Termination.CHECKMATE: "checkmate",
    chess.Termination.STALEMATE: "stalemate",
    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient-material",
    chess.Termination.SEVENTYFIVE_MOVES: "seventy-five-moves",
    chess.Termination.FIVEFOLD_REPETITION: "fivefold-repetition",
}

# violation kind -> the alert code the spec names for it
VIOLATIONS = {
    "touch-own": "touch-move",
    "touch-enemy": "touch-move",
    "illegal": "illegal-move",
    "illegal-capture": "illegal-move",
    "move-changed": "move-changed",
    "knock": "position-mismatch",
    "displace": "position-mismatch",
    "clock-no-move": "clock-no-move",
    "rook-first-castle": "illegal-move",  # RULES.md sec. 3: 4.4.2, illegal at the press
}


@dataclass
class Knobs:
    clock: bool | None = None  # None: decided per game (75 % with clock presses)
    bounce_p: float = 0.5  # chance a transition bounces
    bounce_toggles: tuple[int, int] = (1, 6)
    bounce_ms: tuple[float, float] = (1.0, 15.0)
    slide_p: float = 0.3
    blip_ms: tuple[float, float] = (20.0, 90.0)
    slide_gap_ms: tuple[float, float] = (15.0, 100.0)  # between two squares' closings
    overlap_p: float = 0.0  # a slid piece fires the next square before leaving the last
    long_hold_p: float = 0.03
    long_hold_s: tuple[float, float] = (3.0, 30.0)
    press_delay_s: tuple[float, float] = (0.05, 3.0)
    skew_p: float = 0.0
    skew_ms: tuple[float, float] = (50.0, 250.0)
    think_s: tuple[float, float] = (0.3, 8.0)
    capture_styles: dict[str, float] = field(default_factory=lambda: {
        "victim_first": 3, "attacker_first": 3, "swap_blip": 1, "swap_never": 1})
    victim_pause_s: tuple[float, float] = (0.1, 4.0)
    swap_blip_ms: tuple[float, float] = (2.0, 40.0)
    castle_styles: dict[str, float] = field(default_factory=lambda: {
        "one_hand": 1, "both_lifted": 1})
    castle_rook_delay_ms: tuple[float, float] = (0.0, 100.0)
    castle_pause_s: tuple[float, float] = (0.1, 2.5)
    ep_orders: tuple[str, ...] = ("VFT", "FVT", "FTV")
    promo_styles: dict[str, float] = field(default_factory=lambda: {"direct": 1, "swap": 1})
    promo_swap_wait_s: tuple[float, float] = (0.2, 3.0)
    selector_timings: tuple[str, ...] = ("before", "during", "after")
    retouch_p: float = 0.03
    immovable_touch_p: float = 0.02
    immovable_hold_s: tuple[float, float] = (0.3, 1.3)
    touchdown_p: float = 0.03
    touchdown_s: tuple[float, float] = (0.1, 0.8)
    declined_offer_p: float = 0.01
    mate_clock_p: float = 0.5  # press the clock after a mating move anyway
    start_ply: int | None = None  # start from the position after this many plies
    max_plies: int | None = None  # cut the game short (no result then)
    time_control: str | None = None
    digits: int = 4  # timestamp rounding
    # "auto" (the game's own end), "none", "agree", "resign-mover", "resign-waiter",
    # "claim-about-to" (9.2.1: claim, then the move making the third occurrence)
    ending: str = "auto"
    violation: str | None = None
    violation_ply: int | None = None  # ply index (into the rendered moves) to break at


@dataclass
class Case:
    """A rendered log and what a correct controller must make of it."""

    lines: list[dict[str, Any]]
    start_fen: str
    moves: list[str]  # expected moves (uci), all of them for a clean game
    result: tuple[str, str] | None  # (result, termination), None: no result expected
    alerts: set[str]  # the exact set of alert codes expected
    tolerated: set[str] = field(default_factory=set)  # extra codes a judgement allows
    moves_exact: bool = True  # False: only `moves` as a prefix is asserted
    notes: list[str] = field(default_factory=list)
    styles: dict[str, int] = field(default_factory=dict)  # what the log exercised

    def jsonl(self) -> str:
        import json
        return "".join(json.dumps(obj) + "\n" for obj in self.lines)


class NotApplicable(Exception):
    """The requested violation cannot be scripted in this game."""


def _pick(rng: random.Random, weights: dict[str, float]) -> str:
    keys = [k for k, w in weights.items() if w > 0]
    return rng.choices(keys, [weights[k] for k in keys])[0]


def _path(frm: chess.Square, to: chess.Square, piece: chess.PieceType) -> list[chess.Square]:
    """Squares a slid piece crosses between frm and to (not including them)."""
    if piece == chess.KNIGHT:
        fx, fy = chess.square_file(frm), chess.square_rank(frm)
        tx, ty = chess.square_file(to), chess.square_rank(to)
        dx, dy = tx - fx, ty - fy
        if abs(dx) == 2:
            sx = 1 if dx > 0 else -1
            return [chess.square(fx + sx, fy), chess.square(fx + sx, ty)]
        sy = 1 if dy > 0 else -1
        return [chess.square(fx, fy + sy), chess.square(tx, fy + sy)]
    between = list(chess.SquareSet(chess.between(frm, to)))
    between.sort(key=lambda s: chess.square_distance(frm, s))
    return between


class _Sim:
    def __init__(self, board: chess.Board, rng: random.Random, k: Knobs, clock: bool) -> None:
        self.board = board
        self.rng = rng
        self.k = k
        self.clock = clock
        self.occ = set(chess.SquareSet(board.occupied))
        self.events: list[tuple[float, int, dict[str, Any]]] = []
        self.seq = 0
        self.free: dict[chess.Square, float] = {}  # a square's raw events end here
        self.t = 0.0
        self.selector_used = False
        self.styles: dict[str, int] = {}
        self.notes: list[str] = []

    # -- bookkeeping ----------------------------------------------------------------
    def u(self, lo_hi: tuple[float, float]) -> float:
        return self.rng.uniform(*lo_hi)

    def tag(self, name: str) -> None:
        self.styles[name] = self.styles.get(name, 0) + 1

    def emit(self, t: float, obj: dict[str, Any]) -> None:
        obj = {"t": t, **obj}
        self.events.append((t, self.seq, obj))
        self.seq += 1

    def _at(self, sq: chess.Square, t: float) -> float:
        return max(t, self.free.get(sq, -1.0) + 0.0004)

    def _toggles(self, sq: chess.Square, t: float, final: str, bounce: bool | None) -> float:
        """The raw events of one transition of sq ending in `final`; returns the last t."""
        other = "place" if final == "lift" else "lift"
        if bounce is None:
            bounce = self.rng.random() < self.k.bounce_p
        names = [final]
        if bounce:
            extra = self.rng.randint(*self.k.bounce_toggles)
            extra += extra % 2  # the sensor must end in the final state
            names += [other, final] * (extra // 2)
        if len(names) == 1:
            times = [t]
        else:
            span = self.u(self.k.bounce_ms) / 1000.0
            inner = sorted(self.rng.uniform(0.0, span) for _ in range(len(names) - 2))
            times = [t] + [t + x for x in inner] + [t + span]
        for name, when in zip(names, times):
            self.emit(when, {"ev": name, "sq": chess.square_name(sq)})
        self.free[sq] = times[-1]
        return times[-1]

    def lift(self, sq: chess.Square, t: float, bounce: bool | None = None) -> float:
        assert sq in self.occ, f"lift of empty {chess.square_name(sq)}"
        t = self._at(sq, t)
        self.occ.discard(sq)
        self._toggles(sq, t, "lift", bounce)
        return t

    def place(self, sq: chess.Square, t: float, bounce: bool | None = None) -> float:
        assert sq not in self.occ, f"place on occupied {chess.square_name(sq)}"
        t = self._at(sq, t)
        self.occ.add(sq)
        self._toggles(sq, t, "place", bounce)
        return t

    def blip(self, sq: chess.Square, t: float, dur: float) -> float:
        assert sq not in self.occ
        t = self._at(sq, t)
        self.emit(t, {"ev": "place", "sq": chess.square_name(sq)})
        self.emit(t + dur, {"ev": "lift", "sq": chess.square_name(sq)})
        self.free[sq] = t + dur
        return t + dur

    def side_event(self, t: float, ev: str, side: chess.Color) -> None:
        self.emit(t, {"ev": ev, "side": SIDE[side]})

    def hold(self) -> float:
        if self.rng.random() < self.k.long_hold_p:
            self.tag("long_hold")
            return self.u(self.k.long_hold_s)
        return self.rng.uniform(0.3, 1.6)

    # -- one piece from a to b -----------------------------------------------------
    def carry(self, frm: chess.Square, to: chess.Square, t: float, piece: chess.PieceType,
              allow_slide: bool = True, allow_touchdown: bool = True) -> tuple[float, float]:
        """Move one piece from frm to the empty square to; returns (place t, end t)."""
        path = _path(frm, to, piece)
        if (allow_slide and self.rng.random() < self.k.slide_p
                and all(s not in self.occ for s in path)):
            return self.slide(frm, to, path, t)
        self.lift(frm, t)
        t2 = t + self.hold()
        if allow_touchdown and self.rng.random() < self.k.touchdown_p:
            # touch the piece down on a legal square on the way, still holding it
            others = [m.to_square for m in self.board.legal_moves
                      if m.from_square == frm and m.to_square != to
                      and m.to_square not in self.occ and not m.promotion
                      and not self.board.is_castling(m)]
            if others:
                self.tag("touchdown")
                mid = self.rng.choice(others)
                self.place(mid, t2)
                t2 = self.lift(mid, t2 + self.u(self.k.touchdown_s)) + self.rng.uniform(0.1, 0.6)
        tp = self.place(to, t2)
        return tp, self.free[to]

    def slide(self, frm: chess.Square, to: chess.Square, path: list[chess.Square],
              t: float) -> tuple[float, float]:
        """Slide a piece along the board: every empty square crossed blips."""
        self.tag("slide")
        overlap = self.rng.random() < self.k.overlap_p
        if overlap:
            self.tag("slide_overlap")
        squares = path + [to]
        cur = t
        lift_t = t
        if overlap:
            lift_t = t + self.rng.uniform(0.004, 0.03)  # the next square closes first
        else:
            self.lift(frm, t, bounce=self.rng.random() < 0.3)
            cur = self.free[frm] + self.u(self.k.slide_gap_ms) / 1000.0
        tp = t
        for n, sq in enumerate(squares):
            if sq == to:
                tp = self.place(to, max(cur, t + 0.001) if overlap else cur)
                break
            dur = self.u(self.k.blip_ms) / 1000.0
            if n == 0 and overlap:
                dur = max(dur, lift_t - cur + 0.005)
            end = self.blip(sq, cur, dur)
            if overlap:
                cur = end - dur * self.rng.uniform(0.05, 0.5)
            else:
                cur = end + self.u(self.k.slide_gap_ms) / 1000.0
        if overlap:
            self.lift(frm, lift_t, bounce=self.rng.random() < 0.3)
        return tp, max(self.free[to], self.free.get(frm, 0.0))

    def push_along(self, frm: chess.Square, path: list[chess.Square], t: float) -> float:
        """A piece slid over path (into a victim); returns when it arrives."""
        self.tag("slide")
        self.lift(frm, t, bounce=self.rng.random() < 0.3)
        cur = self.free[frm] + self.u(self.k.slide_gap_ms) / 1000.0
        for sq in path:
            end = self.blip(sq, cur, self.u(self.k.blip_ms) / 1000.0)
            cur = end + self.u(self.k.slide_gap_ms) / 1000.0
        return cur

    # -- the kinds of move ---------------------------------------------------------
    def play(self, move: chess.Move, t: float) -> tuple[float, float, float]:
        """Perform `move` from time t: returns (first lift t, last place t, end t)."""
        b = self.board
        piece = b.piece_type_at(move.from_square)
        assert piece is not None
        if b.is_castling(move):
            return self.castle(move, t)
        if b.is_en_passant(move):
            return self.en_passant(move, t)
        if b.is_capture(move):
            return self.capture(move, t, piece)
        first = t
        tp, end = self.carry(move.from_square, move.to_square, t, piece,
                             allow_slide=not move.promotion,
                             allow_touchdown=not move.promotion)
        return first, tp, end

    def capture(self, move: chess.Move, t: float, piece: chess.PieceType
                ) -> tuple[float, float, float]:
        b = self.board
        frm, to = move.from_square, move.to_square
        style = _pick(self.rng, self.k.capture_styles)
        captures_from = {m.to_square for m in b.legal_moves
                         if m.from_square == frm and b.is_capture(m)}
        if style == "swap_never" and len(captures_from) > 1:
            style = "swap_blip"  # a push-off is only decidable when it is the one capture
        if style == "swap_never" and move.promotion:
            style = "attacker_first"
        self.tag("capture_" + style)
        if style == "victim_first":
            first = self.lift(to, t)
            t2 = self.free[to] + self.u(self.k.victim_pause_s)
            self.lift(frm, t2)
            tp = self.place(to, t2 + self.hold())
            return first, tp, self.free[to]
        if style == "attacker_first":
            first = self.lift(frm, t)
            t2 = t + self.rng.uniform(0.1, 1.5)
            self.lift(to, t2)
            tp = self.place(to, self.free[to] + self.rng.uniform(0.05, 1.0))
            return first, tp, self.free[to]
        path = _path(frm, to, piece)
        slid = (piece != chess.KNIGHT and self.rng.random() < self.k.slide_p
                and all(s not in self.occ for s in path))
        first = t
        if slid:  # pushed along the board into the victim
            arrive = self.push_along(frm, path, t)
        else:
            self.lift(frm, t)
            arrive = t + self.hold()
        if style == "swap_never":
            self.occ.discard(to)
            self.occ.add(to)
            return first, arrive, arrive
        gap = self.u(self.k.swap_blip_ms) / 1000.0
        self.lift(to, arrive, bounce=False)
        tp = self.place(to, arrive + gap, bounce=self.rng.random() < 0.3)
        return first, tp, self.free[to]

    def en_passant(self, move: chess.Move, t: float) -> tuple[float, float, float]:
        b = self.board
        frm, to = move.from_square, move.to_square
        victim = to - 8 if b.turn == chess.WHITE else to + 8
        order = self.rng.choice(self.k.ep_orders)
        self.tag("ep_" + order)
        cur = t
        first = None
        tp = t
        for step in order:
            if step == "V":
                s = self.lift(victim, cur)
            elif step == "F":
                s = self.lift(frm, cur)
            else:
                s = tp = self.place(to, cur)
            first = s if first is None else first
            cur = s + self.rng.uniform(0.15, 1.5)
        end = max(self.free[victim], self.free[frm], self.free[to])
        return first, max(tp, self.free[victim] if order.endswith("V") else tp), end

    def castle(self, move: chess.Move, t: float, style: str | None = None
               ) -> tuple[float, float, float]:
        b = self.board
        rank = chess.square_rank(move.from_square)
        kingside = b.is_kingside_castling(move)
        k_from = move.from_square
        k_to = chess.square(6 if kingside else 2, rank)
        r_from = chess.square(7 if kingside else 0, rank)
        r_to = chess.square(5 if kingside else 3, rank)
        style = style or _pick(self.rng, self.k.castle_styles)
        self.tag("castle_" + style)
        if style == "one_hand":
            path = _path(k_from, k_to, chess.KING)
            if self.rng.random() < self.k.slide_p and all(s not in self.occ for s in path):
                _, end = self.slide(k_from, k_to, path, t)
            else:
                self.lift(k_from, t)
                self.place(k_to, t + self.hold())
                end = self.free[k_to]
            t2 = end + self.u(self.k.castle_pause_s)
            self.lift(r_from, t2)
            tp = self.place(r_to, t2 + self.rng.uniform(0.2, 1.2))
            return t, tp, self.free[r_to]
        if style == "both_lifted":
            k_t = t
            r_t = t + self.u(self.k.castle_rook_delay_ms) / 1000.0
        elif style == "near_simultaneous":  # rook first, within 30 ms
            r_t = t
            k_t = t + self.rng.uniform(0.0, 0.03)
        elif style == "rook_first":  # FIDE 4.4.2: no castling
            r_t = t
            k_t = t + self.rng.uniform(0.3, 1.5)
        else:
            raise ValueError(style)
        first = min(k_t, r_t)
        # the rook may be slid over the squares the king has left
        r_path = _path(r_from, r_to, chess.ROOK)
        self.lift(k_from, k_t)
        slid_rook = (style != "rook_first" and self.rng.random() < self.k.slide_p
                     and all(s not in self.occ for s in r_path))
        later = max(k_t, r_t) + self.rng.uniform(0.3, 1.5)
        if slid_rook:
            cur = self.push_along(r_from, r_path, r_t)
            self.place(r_to, max(cur, k_t + 0.02))
            tp = self.place(k_to, max(later, self.free[r_to] + 0.05))
            return first, tp, self.free[k_to]
        self.lift(r_from, r_t)
        gap = self.rng.uniform(0.02, 0.8)
        if self.rng.random() < 0.5:
            self.place(k_to, later)
            tp = self.place(r_to, self.free[k_to] + gap)
            end = self.free[r_to]
        else:
            self.place(r_to, later)
            tp = self.place(k_to, self.free[r_to] + gap)
            end = self.free[k_to]
        return first, tp, end


def _game_moves(game: chess.pgn.Game) -> tuple[chess.Board, list[chess.Move]]:
    return game.board(), list(game.mainline_moves())


def render_case(game: chess.pgn.Game, seed: int, **knobs: Any) -> Case:
    names = {f.name for f in fields(Knobs)}
    unknown = set(knobs) - names
    if unknown:
        raise TypeError(f"unknown knobs: {sorted(unknown)}")
    k = Knobs(**knobs)
    rng = random.Random(seed)
    board, moves = _game_moves(game)
    if k.start_ply:
        for m in moves[: k.start_ply]:
            board.push(m)
        moves = moves[k.start_ply:]
        board = chess.Board(board.fen())  # repetition history starts at the FEN
    if k.max_plies is not None:
        moves = moves[: k.max_plies]
    start_fen = board.fen()
    clock = k.clock if k.clock is not None else rng.random() < 0.75
    sim = _Sim(board, rng, k, clock)
    lines_head: list[dict[str, Any]] = []
    if start_fen != chess.STARTING_FEN or k.time_control or rng.random() < 0.2:
        head: dict[str, Any] = {"t": 0.0, "ev": "start", "fen": start_fen}
        if k.time_control:
            head["time_control"] = k.time_control
        lines_head.append(head)

    expected: list[str] = []
    alerts: set[str] = set()
    tolerated: set[str] = set()
    moves_exact = True
    result: tuple[str, str] | None = None

    # the end of the game, decided before rendering (an offer is made during the last ply)
    final = board.copy()
    for m in moves:
        final.push(m)
    outcome = final.outcome(claim_draw=False)
    header = game.headers.get("Result", "*")
    ending = None
    if k.violation is None or k.violation in ("knock", "displace"):
        mover_last = final.turn  # the side to move after the last move
        if outcome is not None:
            ending = "auto"
            result = (outcome.result(), TERMINATION[outcome.termination])
        elif k.ending == "none":
            ending = None
        elif k.ending == "agree" and len(moves) >= 2:
            ending = "agree"
            result = ("1/2-1/2", "agreement")
        elif k.ending in ("resign-mover", "resign-waiter"):
            loser = mover_last if k.ending == "resign-mover" else not mover_last
            ending = k.ending
            winner = not loser
            # FIDE 5.1.2: resigning to a side that cannot mate by any series is a draw
            won = "1-0" if winner == chess.WHITE else "0-1"
            result = ("1/2-1/2" if final.has_insufficient_material(winner) else won,
                      "resignation")
        elif k.ending == "claim-about-to":
            if not final.is_repetition(3):
                raise NotApplicable("the last move does not make a threefold repetition")
            ending = "claim-about-to"
            result = ("1/2-1/2", "threefold-repetition")
        elif k.ending != "auto" or k.max_plies is not None:
            ending = None
        elif final.is_repetition(3):
            ending = "claim"
            result = ("1/2-1/2", "threefold-repetition")
        elif final.halfmove_clock >= 100:
            ending = "claim"
            result = ("1/2-1/2", "fifty-moves")
        elif header in ("1-0", "0-1"):
            winner = chess.WHITE if header == "1-0" else chess.BLACK
            if final.has_insufficient_material(winner):
                ending = None  # FIDE 5.1.2 would make it a draw; keep out of the way
            else:
                ending = "resign-mover" if final.turn != winner else "resign-waiter"
                result = (header, "resignation")
        elif header == "1/2-1/2" and len(moves) >= 2:
            ending = "agree"
            result = ("1/2-1/2", "agreement")
    vply = None
    if k.violation is not None:
        if k.violation not in VIOLATIONS:
            raise ValueError(f"unknown violation {k.violation!r}")
        vply = k.violation_ply if k.violation_ply is not None else rng.randrange(
            2, max(3, len(moves) - 1))
        alerts.add(VIOLATIONS[k.violation])
        if k.violation in ("knock", "displace"):
            tolerated.add("wrong-side")  # JUDGEMENT: the spec's wrong-side also fits
        if k.violation == "touch-enemy":
            tolerated.add("wrong-side")
        if k.violation == "illegal-capture":
            # the victim lifted is one no legal move takes: unexplained while in hand
            tolerated |= {"wrong-side", "position-mismatch"}

    t = 0.0
    for i, move in enumerate(moves):
        b = sim.board
        mover = b.turn
        think = sim.u(k.think_s)
        if not clock:
            think = max(think, 0.2)
        t += think
        if vply == i:
            stop, t = _violation(sim, k, move, t)
            if stop:
                moves_exact = False
                break
        if ending == "claim-about-to" and i == len(moves) - 1:
            # FIDE 9.2.1: the claim first (before touching a piece), then the move
            # that makes the third occurrence, without pressing the clock
            sim.tag("claim_about_to")
            sim.side_event(t, "claim", mover)
            t += rng.uniform(0.5, 2.0)
        # clean pre-move noise
        if rng.random() < k.retouch_p and not b.is_castling(move):
            sim.tag("retouch")
            sim.lift(move.from_square, t)
            sim.place(move.from_square, t + rng.uniform(0.3, 1.5))
            t = sim.free[move.from_square] + rng.uniform(0.2, 1.5)
        elif rng.random() < k.immovable_touch_p:
            stuck = [s for s in chess.SquareSet(b.occupied_co[mover])
                     if not any(m.from_square == s for m in b.legal_moves)
                     and s != move.from_square]
            if stuck:
                sim.tag("immovable_touch")
                s = rng.choice(stuck)
                sim.lift(s, t)
                sim.place(s, t + sim.u(k.immovable_hold_s))
                t = sim.free[s] + rng.uniform(0.2, 1.5)
        # the selector for a promotion
        sel_piece = None
        sel_timing = None
        sel_after_t = 0.0
        if move.promotion:
            if move.promotion != chess.QUEEN or sim.selector_used or rng.random() < 0.5:
                sel_piece = chess.piece_symbol(move.promotion)
                timings = list(k.selector_timings)
                if not clock:
                    timings = [x for x in timings if x not in ("late", "very_late")] or ["after"]
                sel_timing = rng.choice(timings)
                if sel_timing in ("late", "very_late"):
                    probe = b.copy(stack=False)
                    probe.push(move)
                    if probe.is_game_over():
                        sel_timing = "after"  # no press may follow a game-ending move
                if (sel_timing == "before" and not clock and b.move_stack
                        and b.move_stack[-1].promotion):
                    # JUDGEMENT: without a clock the opponent's promotion is not final
                    # until this side starts; a selector set now is ambiguous (the spec
                    # lets it belong to the opponent's move), so set it in hand instead
                    sel_timing = "during"
                sim.tag("selector_" + sel_timing)
                if move.promotion != chess.QUEEN:
                    sim.selector_used = True
            if sel_timing == "before":
                sim.emit(t, {"ev": "promote", "piece": sel_piece})
                t += rng.uniform(0.2, 2.0)
        first, tp, end = sim.play(move, t)
        if move.promotion:
            sim.tag("promotion")
            style = _pick(rng, k.promo_styles)
            sim.tag("promo_" + style)
            if sel_timing == "during":
                sim.emit(rng.uniform(first + 0.01, max(first + 0.02, tp - 0.01)),
                         {"ev": "promote", "piece": sel_piece})
            if style == "swap":
                t_sw = end + sim.u(k.promo_swap_wait_s)
                sim.lift(move.to_square, t_sw)
                tp = sim.place(move.to_square, sim.free[move.to_square]
                               + rng.uniform(0.1, 1.0))
                end = sim.free[move.to_square]
            if sel_timing == "after":
                sel_after_t = end + rng.uniform(0.05, 0.8)
                sim.emit(sel_after_t, {"ev": "promote", "piece": sel_piece})
        played = move
        truncated = False
        if sel_timing == "very_late" and move.promotion != chess.QUEEN:
            played = chess.Move(move.from_square, move.to_square, chess.QUEEN)
            sim.notes.append(f"ply {i}: selector long after the press, queen expected")
            # the rest of the game cannot follow: stop after this move
            truncated = True
            ending = None
            after = b.copy()
            after.push(played)
            o = after.outcome(claim_draw=False)
            result = (o.result(), TERMINATION[o.termination]) if o is not None else None
        expected.append(played.uci())
        b.push(played)
        last = i == len(moves) - 1 or truncated
        game_over = b.outcome(claim_draw=False) is not None
        # draw offers: after the move, before the press
        after_t = None  # an offer or a selector after the move: the press follows it
        if sel_timing == "after":
            after_t = sel_after_t
        if last and ending == "agree":
            after_t = max(end, after_t or 0.0) + rng.uniform(0.1, 1.0)
            sim.side_event(after_t, "draw-offer", mover)
        elif not last and not game_over and rng.random() < k.declined_offer_p:
            sim.tag("declined_offer")
            after_t = max(end, after_t or 0.0) + rng.uniform(0.1, 1.0)
            sim.side_event(after_t, "draw-offer", mover)
        press = clock and (not game_over or rng.random() < k.mate_clock_p)
        if last and ending == "claim-about-to":
            press = False
        if press:
            if after_t is None and rng.random() < k.skew_p and tp - first > 0.35:
                sim.tag("skew")
                skew = min(sim.u(k.skew_ms) / 1000.0, tp - first - 0.3)
                t_press = tp - skew
            else:
                t_press = max(end, after_t or 0.0) + sim.u(k.press_delay_s)
            sim.side_event(t_press, "clock", mover)
            t = max(t_press, end)
            if game_over:
                sim.tag("press_after_end")
            if sel_timing == "late":  # skewed behind the press, like a late placement
                sim.emit(t_press + rng.uniform(0.05, 0.2), {"ev": "promote", "piece": sel_piece})
                t = max(t, t_press + 0.25)
            elif sel_timing == "very_late":  # the move is long confirmed: a queen
                sim.emit(t_press + rng.uniform(0.6, 2.0), {"ev": "promote", "piece": sel_piece})
                t = max(t, t_press + 2.1)
        else:
            t = max(end, after_t or 0.0)
        if truncated:
            break
        if game_over:
            sim.tag("ended_" + TERMINATION[b.outcome(claim_draw=False).termination])
            break
    else:
        # the game's end by a button
        if ending == "claim":
            sim.tag("claim")
            t += rng.uniform(0.3, 3.0)
            sim.side_event(t, "claim", sim.board.turn)
        elif ending in ("resign-mover", "resign-waiter"):
            sim.tag(ending)
            loser = sim.board.turn if ending == "resign-mover" else not sim.board.turn
            t += rng.uniform(0.5, 5.0)
            sim.side_event(t, "resign", loser)
        elif ending == "agree":
            sim.tag("agree")
            t += rng.uniform(0.3, 3.0)
            sim.side_event(t, "draw-accept", sim.board.turn)
        t += rng.uniform(0.5, 2.0)
    if vply is not None and k.violation not in ("knock", "displace"):
        result = None
    evs = sorted(sim.events, key=lambda e: (round(e[0], k.digits), e[1]))
    lines = list(lines_head)
    for when, _, obj in evs:
        obj["t"] = round(when, k.digits)
        lines.append(obj)
    if vply is None or k.violation in ("knock", "displace"):
        # the log must leave the board as the game left it
        _check_log(lines, start_fen, sim.board.occupied)
    return Case(lines, start_fen, expected, result, alerts, tolerated, moves_exact,
                sim.notes, sim.styles)


def _check_log(lines: list[dict[str, Any]], fen: str, final: chess.Bitboard) -> None:
    """Every lift empties an occupied square, every place fills an empty one, and the
    board ends as the game does."""
    occ = set(chess.SquareSet(chess.Board(fen).occupied))
    for obj in lines:
        if obj["ev"] in ("lift", "place"):
            sq = chess.parse_square(obj["sq"])
            if obj["ev"] == "lift":
                assert sq in occ, obj
                occ.discard(sq)
            else:
                assert sq not in occ, obj
                occ.add(sq)
    assert occ == set(chess.SquareSet(final)), "the log does not end on the game's board"


def _violation(sim: _Sim, k: Knobs, move: chess.Move, t: float) -> tuple[bool, float]:
    """Script the violation at this ply. Returns (stop the game here?, new t)."""
    b = sim.board
    rng = sim.rng
    mover = b.turn
    kind = k.violation
    legal = list(b.legal_moves)
    sim.tag("violation_" + str(kind))
    if not sim.clock and kind in CLOCK_ONLY:
        raise NotApplicable(f"{kind} needs a clock: {CLOCK_ONLY[kind]}")

    def finish_with(m: chess.Move, t0: float) -> float:
        _, tp, end = sim.play(m, t0)
        if not sim.clock:  # the end of the log completes the move
            return end + 3.0
        tpress = end + rng.uniform(0.3, 1.5)
        sim.side_event(tpress, "clock", mover)
        return tpress + 3.0

    def quiet_moves() -> list[chess.Move]:
        return [m for m in legal if not b.is_capture(m) and not b.is_castling(m)
                and not m.promotion]

    if kind == "touch-own":
        quiet = quiet_moves()
        if not quiet:
            raise NotApplicable("no quiet move")
        m = move if move in quiet else rng.choice(quiet)
        movable = {x.from_square for x in legal} - {m.from_square}
        if not movable:
            raise NotApplicable("no other movable piece")
        a = rng.choice(sorted(movable))
        sim.lift(a, t)
        sim.place(a, t + rng.uniform(0.4, 2.0))
        t = sim.free[a] + rng.uniform(0.3, 2.0)
        finish_with(m, t)
        return True, t
    if kind == "touch-enemy":
        targets = {x.to_square for x in legal if b.is_capture(x) and not b.is_en_passant(x)}
        if not sim.clock and b.move_stack:
            # without a clock the piece the opponent just moved may still be in his hand:
            # lifting it again can be his (FIDE 4.7 territory), so it proves nothing
            targets.discard(b.peek().to_square)
        quiet = [m for m in quiet_moves()]
        if not targets or not quiet:
            raise NotApplicable("nothing capturable")
        v = rng.choice(sorted(targets))
        m = move if move in quiet else rng.choice(quiet)
        sim.lift(v, t)
        sim.place(v, t + rng.uniform(0.4, 2.0))
        t = sim.free[v] + rng.uniform(0.3, 2.0)
        finish_with(m, t)
        return True, t
    if kind == "illegal":
        own = list(chess.SquareSet(b.occupied_co[mover]))
        legal_pairs = {(x.from_square, x.to_square) for x in legal}
        empties = [s for s in chess.SQUARES if s not in sim.occ]
        cands = []
        for a in own:
            piece = b.piece_type_at(a)
            for s in empties:
                if (a, s) in legal_pairs:
                    continue
                # plausible: a pseudo-legal move (pinned piece, king into check) or a
                # near miss (one square off a legal destination)
                pseudo = b.is_pseudo_legal(chess.Move(a, s)) or b.is_pseudo_legal(
                    chess.Move(a, s, chess.QUEEN))
                near = any(x.from_square == a and chess.square_distance(x.to_square, s) == 1
                           for x in legal)
                if pseudo or (near and piece != chess.PAWN):
                    cands.append((0 if pseudo else 1, a, s))
        if not cands:
            raise NotApplicable("no illegal move")
        best = min(c[0] for c in cands)
        _, a, s = rng.choice([c for c in cands if c[0] == best])
        sim.tag("illegal_pseudo" if best == 0 else "illegal_near")
        sim.lift(a, t)
        sim.place(s, t + rng.uniform(0.4, 1.5))
        tpress = sim.free[s] + rng.uniform(0.3, 1.5)
        sim.side_event(tpress, "clock", mover)
        return True, tpress + 3.0
    if kind == "illegal-capture":
        legal_pairs = {(x.from_square, x.to_square) for x in legal}
        cands = []
        for a in chess.SquareSet(b.occupied_co[mover]):
            if b.piece_type_at(a) == chess.KING:
                continue
            has_capture = any(x.from_square == a and b.is_capture(x) for x in legal)
            for v in chess.SquareSet(b.occupied_co[not mover]):
                if b.piece_type_at(v) == chess.KING or (a, v) in legal_pairs:
                    continue
                if chess.square_distance(a, v) <= 2:
                    cands.append((0 if has_capture else 1, a, v))
        if not cands:
            raise NotApplicable("no illegal capture")
        best = min(c[0] for c in cands)
        _, a, v = rng.choice([c for c in cands if c[0] == best])
        sim.tag("illegal_capture_other_legal" if best == 0 else "illegal_capture_alone")
        if rng.random() < 0.5:
            sim.lift(v, t)
            sim.lift(a, t + rng.uniform(0.3, 1.5))
        else:
            sim.lift(a, t)
            sim.lift(v, t + rng.uniform(0.3, 1.5))
        sim.place(v, max(sim.free[v], sim.free[a]) + rng.uniform(0.2, 1.0))
        tpress = sim.free[v] + rng.uniform(0.3, 1.5)
        sim.side_event(tpress, "clock", mover)
        return True, tpress + 3.0
    if kind == "move-changed":
        by_from: dict[int, list[chess.Move]] = {}
        for x in quiet_moves():
            by_from.setdefault(x.from_square, []).append(x)
        pairs = [(x, y) for ms in by_from.values() for x in ms for y in ms if x != y]
        if not pairs:
            raise NotApplicable("no piece with two quiet moves")
        first, second = rng.choice(pairs)
        sim.lift(first.from_square, t)
        sim.place(first.to_square, t + rng.uniform(0.3, 1.2))
        t2 = sim.free[first.to_square] + rng.uniform(2.0, 4.0)  # released, >= 1.5 s
        sim.lift(first.to_square, t2)
        sim.place(second.to_square, t2 + rng.uniform(0.3, 1.2))
        tpress = sim.free[second.to_square] + rng.uniform(0.3, 1.5)
        sim.side_event(tpress, "clock", mover)
        return True, tpress + 3.0
    if kind in ("knock", "displace"):
        capturable = {x.to_square for x in legal if b.is_capture(x)}
        ep = {x.to_square ^ 8 for x in legal if b.is_en_passant(x)}
        involved = {move.from_square, move.to_square}
        cands = [s for s in chess.SquareSet(b.occupied_co[not mover])
                 if s not in capturable and s not in ep and s not in involved
                 and b.piece_type_at(s) != chess.KING]
        if not cands:
            raise NotApplicable("no uncapturable enemy piece")
        x = rng.choice(cands)
        away = rng.uniform(2.0, 5.0)
        if kind == "knock":
            sim.lift(x, t)
            sim.place(x, t + away)
            t = sim.free[x] + rng.uniform(0.5, 2.0)
        else:
            dests = [s for s in chess.SQUARES if s not in sim.occ
                     and s not in (move.to_square,)
                     and chess.square_distance(s, x) <= 2]
            if not dests:
                raise NotApplicable("nowhere to displace to")
            y = rng.choice(dests)
            sim.lift(x, t)
            sim.place(y, t + rng.uniform(0.1, 0.5))
            sim.lift(y, sim.free[y] + away)
            sim.place(x, sim.free[y] + rng.uniform(0.2, 0.8))
            t = sim.free[x] + rng.uniform(0.5, 2.0)
        return False, t
    if kind == "clock-no-move":
        sim.side_event(t, "clock", mover)
        return True, t + 3.0
    if kind == "rook-first-castle":
        if not b.is_castling(move):
            raise NotApplicable("not a castling ply")
        sim.castle(move, t, style="rook_first")
        tpress = max(sim.free.values()) + rng.uniform(0.3, 1.5)
        sim.side_event(tpress, "clock", mover)
        return True, tpress + 3.0
    raise ValueError(kind)


# Violations that cannot be told in a game played without the clock (JUDGEMENT, from the
# spec: without presses "a move becomes final when the other side starts its move").
CLOCK_ONLY = {
    "illegal": "an illegal move is completed by the press (7.5.1)",
    "illegal-capture": "an illegal move is completed by the press (7.5.1)",
    "clock-no-move": "a lone press in a game without presses is a physical no-op",
    "rook-first-castle": "4.4.2 is judged at the press",
    "knock": "before the opponent starts, the side that just moved may still be moving: "
             "its piece in hand is a move in progress, not a knocked piece",
    "displace": "as for knock",
}


def render(game: chess.pgn.Game, seed: int, **knobs: Any) -> list[dict[str, Any]]:
    """The sensor-log objects of `game` played at the board (see the module doc)."""
    return render_case(game, seed, **knobs).lines


def violation_plies(game: chess.pgn.Game, kind: str) -> list[int]:
    """Plies where `kind` can be scripted (a cheap pre-filter; render may still refuse)."""
    board, moves = _game_moves(game)
    out = []
    for i, m in enumerate(moves):
        if kind == "rook-first-castle" and board.is_castling(m):
            out.append(i)
        elif kind != "rook-first-castle" and i >= 1:
            out.append(i)
        board.push(m)
    return out


def expected_in_profile(case: Case, profile: str) -> tuple[list[str], tuple[str, str] | None]:
    """The moves and result a clean log must give in `profile`.

    The casual profile ends the game by itself at a threefold repetition or at fifty
    moves (RULES.md section 4: "auto or claim"); the other profiles wait for a claim.
    """
    if profile != "casual" or not case.moves_exact:
        return case.moves, case.result
    board = chess.Board(case.start_fen)
    for n, uci in enumerate(case.moves):
        board.push_uci(uci)
        if board.outcome(claim_draw=False) is not None:
            break
        if board.is_repetition(3):
            return case.moves[: n + 1], ("1/2-1/2", "threefold-repetition")
        if board.is_fifty_moves():
            return case.moves[: n + 1], ("1/2-1/2", "fifty-moves")
    return case.moves, case.result
