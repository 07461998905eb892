"""Handling mishaps staged at ONE ply of a real game: pieces knocked by the moving hand,
and castling that the position forbids.

Like the violations (violations.py), each rendering keeps the game's true moves as the
record and lists the alerts a correct referee raises as (alert code, index into
`moves`), with the squares the alert must name where the ruling says which.

| event | what the player does at that ply | ruling (FIDE 2023) |
| --- | --- | --- |
| knocked-restored-quickly | while making the move (its piece in the hand), the hand knocks a piece next to it, own or enemy, onto an empty neighbouring square; it is back on its square 0.15-1.35 s after it left it, before or after the placement or the press | the move; no alert (4.2.2: accidental contact) |
| knocked-restored-late | the same, and the piece is put back 1.7-3.5 s after the press | the move; `position-mismatch` (7.4) on the piece's square and where it lies |
| illegal-castling | castles where the position forbids it (in check, through or into an attacked square, next to the enemy king): king then rook placed, clock pressed; 0.5-4 s later both put back; then the game's move, a king move (4.3 and 4.4.3: the king was touched first) | `illegal-move` (7.5.1) and its penalty; then the move |

A knocked piece lands on an empty square next to its own, never back toward the hand
that hit it, and never on a square of the move. Illegal castling is staged only where
the game's move is a king move, or the king has no legal move (then any move is free):
anything else would be a further touch-move offence the ruling does not list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import chess
import chess.pgn

from board_ctl.simulate.render import (
    CASTLING_STYLES,
    TICKS,
    Hook,
    RenderedGame,
    Renderer,
    RenderStyle,
    _pick,
    rook_squares,
)
from board_ctl.simulate.violations import choose_staging, options_along

HANDLING_EVENTS = ("knocked-restored-quickly", "knocked-restored-late", "illegal-castling")
NEEDS_CLOCK = {"knocked-restored-late", "illegal-castling"}

QUICK_RESTORE = (0.15, 1.35)  # s off its square (observed: within 1.2 s)
LATE_RESTORE = (1.7, 3.5)  # s after the press (observed: 1.8-3 s)
REINSTATE_AFTER = (0.5, 4.0)  # s from the press to the illegal castling undone

Knock = tuple[chess.Square, chess.Square]  # (the knocked piece's square, where it lands)


# -- knocked pieces -------------------------------------------------------------------------


def _hand_squares(move: chess.Move) -> set[chess.Square]:
    """Where the hand is while it makes the move: the origin, the target and the
    straight line between them that the piece is carried over."""
    return {move.from_square, move.to_square} | set(
        chess.SquareSet.between(move.from_square, move.to_square))


def knock_options(board: chess.Board, move: chess.Move, ply: int) -> list[Knock]:
    """(knocked square, landing square) for a plain move or capture: a piece (own or
    enemy, not the move's) next to where the hand is, knocked onto an empty neighbour
    of its square that is not nearer the hand and not one of the move's squares."""
    if board.is_castling(move) or move.promotion or board.is_en_passant(move):
        return []
    hand = _hand_squares(move)
    options: set[Knock] = set()
    for knocked in chess.SquareSet(board.occupied):
        if knocked in hand:
            continue
        for h in hand:
            if chess.square_distance(knocked, h) != 1:
                continue
            kf, kr = chess.square_file(knocked), chess.square_rank(knocked)
            away = (kf - chess.square_file(h), kr - chess.square_rank(h))
            for land in chess.SquareSet(chess.BB_KING_ATTACKS[knocked]):
                lf, lr = chess.square_file(land), chess.square_rank(land)
                if (board.piece_at(land) is None and land not in hand
                        and (lf - kf) * away[0] + (lr - kr) * away[1] >= 0):
                    options.add((knocked, land))
    return sorted(options)


def knocked_in_move(knock: Knock, late: bool) -> Hook:
    """The move made with the hand knocking `knock[0]` onto `knock[1]` on the way; the
    piece put back within QUICK_RESTORE of leaving its square, or LATE_RESTORE after
    the press. The hook presses the clock itself (when the game wants a press)."""
    knocked, land = knock

    def hook(r: Renderer, move: chess.Move) -> str | None:
        a, to = move.from_square, move.to_square
        rng = r.rng
        if r.board.is_capture(move):  # the victim off first, then the capturing piece
            r.lift(to)
            r.pause(0.3, 1.5)
        pressing = r.will_press(move)
        # Times in s from the moving piece's lift, merged and emitted in order.
        knock_t = rng.uniform(0.05, 0.8)
        fall = rng.uniform(0.02, 0.25)
        placed_t = knock_t + rng.uniform(0.05, 0.8)
        press_t = placed_t + rng.uniform(*r.style.clock_delay)
        back = rng.uniform(0.05, 0.30)  # picking it up from where it fell, to its square
        if late:
            home_t = press_t + rng.uniform(*LATE_RESTORE)
        else:
            home_t = knock_t + rng.uniform(max(QUICK_RESTORE[0], fall + back + 0.03),
                                          QUICK_RESTORE[1])
        plan: list[tuple[float, Callable[[], None]]] = [
            (0.0, lambda: r.lift(a)),
            (knock_t, lambda: r.lift(knocked)),
            (knock_t + fall, lambda: r.place(land)),
            (placed_t, lambda: r.place(to)),
            (home_t - back, lambda: r.lift(land)),
            (home_t, lambda: r.place(knocked)),
        ]
        if pressing:
            plan.append((press_t, lambda: r.clock()))
            r.pressed = True
        start = r.tick
        for at, act in sorted(plan, key=lambda item: item[0]):
            r.tick = max(r.tick, start + round(at * TICKS))
            act()
        r.notes.append(f"knocked:{chess.square_name(knocked)}>{chess.square_name(land)}")
        return "knocked-restored-late" if late else "knocked-restored-quickly"

    return hook


def _late_knock_options(board: chess.Board, move: chess.Move, ply: int) -> list[Knock]:
    """Only where a press follows: not a move that ends the game."""
    board.push(move)
    ends = board.outcome(claim_draw=False) is not None
    board.pop()
    return [] if ends else knock_options(board, move, ply)


# -- illegal castling -------------------------------------------------------------------------


def castling_forbidden(board: chess.Board, castle: chess.Move) -> str | None:
    """Why castling `castle` (king e-file to g or c) is illegal in a position where the
    rights stand and the squares between king and rook are empty; None when legal."""
    us, them = board.turn, not board.turn
    king_to = castle.to_square
    r_from, r_to = rook_squares(castle)
    if board.is_check():
        return "in-check"
    enemy_king = board.king(them)
    if enemy_king is not None and chess.square_distance(king_to, enemy_king) <= 1:
        return "next-to-the-king"
    crossed = chess.square(5 if chess.square_file(king_to) == 6 else 3,
                           chess.square_rank(king_to))
    if board.is_attacked_by(them, crossed):
        return "through-attack"
    after = board.copy(stack=False)
    after.remove_piece_at(castle.from_square)
    after.remove_piece_at(r_from)
    after.set_piece_at(king_to, chess.Piece(chess.KING, us))
    after.set_piece_at(r_to, chess.Piece(chess.ROOK, us))
    if after.is_attacked_by(them, king_to):
        return "into-check"
    return None


def illegal_castling_options(board: chess.Board, move: chess.Move, ply: int
                             ) -> list[tuple[chess.Move, str]]:
    """(castling move, why illegal) the mover could physically make here, where the
    game's move may follow it (a king move, or any when the king cannot move)."""
    king = board.king(board.turn)
    if king is None:
        return []
    king_moves = any(m.from_square == king for m in board.legal_moves)
    if king_moves and move.from_square != king:
        return []
    options = []
    for rook in chess.SquareSet(board.castling_rights & board.occupied_co[board.turn]):
        if chess.square_rank(rook) != chess.square_rank(king) or \
                board.piece_type_at(rook) != chess.ROOK:
            continue
        if chess.SquareSet.between(king, rook) & board.occupied:
            continue
        king_to = chess.square(6 if rook > king else 2, chess.square_rank(king))
        castle = chess.Move(king, king_to)
        if board.is_legal(castle):
            continue
        reason = castling_forbidden(board, castle)
        if reason is not None:
            options.append((castle, reason))
    return options


def castle_then_take_back(option: tuple[chess.Move, str]) -> Hook:
    castle, reason = option

    def hook(r: Renderer, move: chess.Move) -> str | None:
        k_from, k_to = castle.from_square, castle.to_square
        r_from, r_to = rook_squares(castle)
        style = _pick(r.rng, CASTLING_STYLES, r.style.castling_styles)
        r.castle_squares(style, k_from, k_to, r_from, r_to)
        r.pause(*r.style.clock_delay)
        r.clock()
        r.pause(*REINSTATE_AFTER)
        pieces = [(r_to, r_from), (k_to, k_from)]
        if r.rng.random() < 0.5:
            pieces.reverse()
        for i, (now, home) in enumerate(pieces):
            if i:
                r.pause(0.1, 0.8)
            r.lift(now)
            r.pause(*r.style.hand)
            r.place(home)
        r.pause(0.3, 3.0)
        r.notes.append(f"illegal-castling:{castle.uci()}:{reason}:{style}")
        return None  # the game's move follows, played as ever

    return hook


# -- staging --------------------------------------------------------------------------------

Options = Callable[[chess.Board, chess.Move, int], list[Any]]
PLANS: dict[str, tuple[Options, Callable[[Any], Hook]]] = {
    "knocked-restored-quickly": (knock_options, lambda k: knocked_in_move(k, late=False)),
    "knocked-restored-late": (_late_knock_options, lambda k: knocked_in_move(k, late=True)),
    "illegal-castling": (illegal_castling_options, castle_then_take_back),
}


def _expected(event: str, option: Any, ply: int
              ) -> tuple[list[tuple[str, int]], list[tuple[str, ...] | None]]:
    if event == "knocked-restored-late":
        return [("position-mismatch", ply)], [tuple(sorted(chess.square_name(s)
                                                           for s in option))]
    if event == "illegal-castling":
        return [("illegal-move", ply)], [None]
    return [], []


def options_by_ply(game: chess.pgn.Game, event: str, style: RenderStyle
                   ) -> dict[int, list[Any]]:
    if event not in PLANS:
        raise ValueError(f"unknown handling event {event!r}; one of {', '.join(HANDLING_EVENTS)}")
    if event in NEEDS_CLOCK and not style.use_clock:
        raise ValueError(f"{event} needs clock presses (style.use_clock)")
    return options_along(game, PLANS[event][0], style.start_ply)


def render_handling(game: chess.pgn.Game, event: str, *, seed: int, ply: int | None = None,
                    style: RenderStyle = RenderStyle()) -> RenderedGame:
    """The game rendered with one handling `event` at `ply` (a random eligible one if
    None), carrying the ruling's expected alerts and squares."""
    ply, option = choose_staging(options_by_ply(game, event, style), event, seed, ply)
    renderer = Renderer(game, seed, style)
    traces = renderer.run({ply: PLANS[event][1](option)})
    alerts, squares = _expected(event, option, ply)
    return renderer.rendered(traces, alerts, squares)
