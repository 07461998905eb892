"""Render a game with ONE scripted rule violation injected at a chosen ply.

The game's true moves stay the record: after the violation the log goes on with the
real game. Every rendering lists the alert it should raise in `expected_alerts` as
(alert code, index into `moves`).

| code | what the player does at that ply |
| --- | --- |
| touch-move | lifts an own piece that has a legal move, puts it back (held 0.4-1.5 s), then plays the real move with another piece |
| touch-move-enemy | lifts a capturable enemy piece, puts it back, plays the real move (which does not capture it); alert code `touch-move`. Without a clock, never the piece the opponent has just moved (see `_touch_enemy_options_without_clock`) |
| illegal-move | puts the real move's piece on an empty square it cannot reach, presses the clock, 1-3 s later puts it back on its origin, then plays the real move with it and presses again |
| move-changed | puts the real move's piece on another legal empty square (not one that ends the game), leaves it 1-3 s, then moves it on to the real destination |
| position-mismatch | a piece of the side not to move that nothing can capture is knocked over during the mover's thinking time: off its square, or onto a neighbouring empty one, and put back 2-6 s later |
| knocked-over-the-press | the same knock, and the mover makes his move (no promotion) and presses the clock before the piece is put back, 1-3 s after the press; alert code `position-mismatch` |
| clock-no-move | presses the clock without moving, 1-3 s later plays the real move and presses again |

`position-mismatch` knocks over only a piece of the side not to move that nothing can
capture: the mover's own pieces, or capturable ones, would rightly read as touches.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import chess
import chess.pgn

from board_ctl.simulate.render import (
    Hook,
    RenderedGame,
    Renderer,
    RenderStyle,
    captured_square,
    rook_squares,
)

VIOLATION_CODES = (
    "touch-move",
    "touch-move-enemy",
    "illegal-move",
    "move-changed",
    "position-mismatch",
    "clock-no-move",
    "knocked-during-move",
    "knocked-over-the-press",
)
ALERT_CODES = {code: code for code in VIOLATION_CODES} | {
    "touch-move-enemy": "touch-move", "knocked-during-move": "position-mismatch",
    "knocked-over-the-press": "position-mismatch"}
# Without a clock, a knocked piece of the side that just moved is its owner moving on.
NEEDS_CLOCK = {"illegal-move", "clock-no-move", "position-mismatch", "knocked-during-move",
               "knocked-over-the-press"}


class NoEligiblePly(ValueError):
    """The game has no ply where this violation can be staged."""


# Options for a violation at one ply: the squares it could use (empty = not possible).
Options = Callable[[chess.Board, chess.Move, int], list[Any]]
# Makes the hook that stages the violation with one chosen option.
Stager = Callable[[Any], Hook]


def _involved(board: chess.Board, move: chess.Move) -> set[chess.Square]:
    squares = {move.from_square, move.to_square}
    if board.is_castling(move):
        squares |= set(rook_squares(move))
    if (victim := captured_square(board, move)) is not None:
        squares.add(victim)
    return squares


def _is_plain(board: chess.Board, move: chess.Move) -> bool:
    return not (board.is_castling(move) or move.promotion or board.is_capture(move))


# -- touch-move: own piece ------------------------------------------------------------


def _touch_own_options(board: chess.Board, move: chess.Move, ply: int) -> list[chess.Square]:
    mobile = {m.from_square for m in board.legal_moves}
    return sorted(mobile - _involved(board, move))


def _touch_back(sq: chess.Square) -> Hook:
    def hook(r: Renderer, move: chess.Move) -> str | None:
        r.lift(sq)
        r.pause(0.4, 1.5)
        r.place(sq)
        r.pause(0.5, 3.0)
        return None

    return hook


# -- touch-move: enemy piece --------------------------------------------------------------


def _touch_enemy_options(board: chess.Board, move: chess.Move, ply: int) -> list[chess.Square]:
    capturable = {captured_square(board, m) for m in board.legal_moves if board.is_capture(m)}
    capturable.discard(None)
    capturable.discard(captured_square(board, move))
    return sorted(sq for sq in capturable if sq is not None)


def _touch_enemy_options_without_clock(board: chess.Board, move: chess.Move,
                                       ply: int) -> list[chess.Square]:
    """Without a clock nothing but its release ends a move (4.7), and a piece pushed onto
    its victim's square (a swap) lands unseen: the lift and return of the piece just moved
    are its mover's hand as likely as his opponent's touch, on the same sensor events. A
    rendering stays readable, so that piece is never the one touched."""
    landed = set()
    if board.move_stack:
        last = board.pop()
        landed = {last.to_square, *(rook_squares(last)[1:] if board.is_castling(last) else ())}
        board.push(last)
    return [sq for sq in _touch_enemy_options(board, move, ply) if sq not in landed]


# -- illegal-move ------------------------------------------------------------------------


def _occupancy_after(board: chess.Board, move: chess.Move) -> int:
    board.push(move)
    occupied = board.occupied
    board.pop()
    return occupied


def _illegal_options(board: chess.Board, move: chess.Move, ply: int) -> list[chess.Square]:
    if board.is_castling(move) or move.promotion:
        return []
    origin = move.from_square
    reachable = {m.to_square for m in board.legal_moves if m.from_square == origin}
    explained = {_occupancy_after(board, m) for m in board.legal_moves}
    base = board.occupied & ~chess.BB_SQUARES[origin]
    empty = [sq for sq in chess.SQUARES if not board.occupied & chess.BB_SQUARES[sq]]
    options = [
        sq
        for sq in empty
        if sq not in reachable and (base | chess.BB_SQUARES[sq]) not in explained
    ]
    # A human's illegal move lands near the piece: prefer squares close by.
    near = [sq for sq in options if chess.square_distance(sq, origin) <= 2]
    return near or options


def _illegal_then_take_back(x: chess.Square) -> Hook:
    def hook(r: Renderer, move: chess.Move) -> str | None:
        origin = move.from_square
        r.lift(origin)
        r.pause(*r.style.hand)
        r.place(x)
        r.pause(*r.style.clock_delay)
        r.clock()
        r.pause(1.0, 3.0)
        r.lift(x)
        r.pause(*r.style.hand)
        r.place(origin)
        r.pause(0.5, 3.0)
        return None

    return hook


# -- move-changed ---------------------------------------------------------------------------


def _changed_options(board: chess.Board, move: chess.Move, ply: int) -> list[chess.Square]:
    """Squares the piece is first put on: never one whose move ends the game, since left
    standing there (released, 4.7) that move ends it (5.1.1, 5.2.1) and is the record."""
    if not _is_plain(board, move):
        return []
    return sorted(
        m.to_square
        for m in board.legal_moves
        if m.from_square == move.from_square
        and m.to_square != move.to_square
        and _is_plain(board, m)
        and not _ends_game(board, m)
    )


def _ends_game(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    try:
        return board.outcome() is not None
    finally:
        board.pop()


def _released_elsewhere(y: chess.Square) -> Hook:
    def hook(r: Renderer, move: chess.Move) -> str | None:
        r.lift(move.from_square)
        r.carry(move.from_square, y)
        r.place(y)
        r.pause(1.0, 3.0)
        r.lift(y)
        r.pause(*r.style.hand)
        r.place(move.to_square)
        return "move-changed"

    return hook


# -- position-mismatch ------------------------------------------------------------------------


def _knock_options(board: chess.Board, move: chess.Move, ply: int) -> list[chess.Square]:
    """Pieces of the side not to move that no legal move could capture: knocking one
    over cannot look like a move, a capture under way or a touch of the mover's."""
    capturable = {captured_square(board, m) for m in board.legal_moves}
    theirs = chess.SquareSet(board.occupied_co[not board.turn])
    return sorted(sq for sq in theirs
                  if sq not in capturable and sq not in _involved(board, move)
                  and sq != board.king(not board.turn))


def _knock_over_the_press_options(board: chess.Board, move: chess.Move, ply: int
                                  ) -> list[chess.Square]:
    return [] if move.promotion else _knock_options(board, move, ply)


def _knocked_over(sq: chess.Square, over_the_press: bool = False) -> Hook:
    """`over_the_press`: the mover makes his move and presses the clock while the piece
    is still displaced; it is put back in the opponent's time."""
    def hook(r: Renderer, move: chess.Move) -> str | None:
        r.pause(0.3, 2.0)
        r.lift(sq)
        # Knocked off its square, or knocked onto a neighbouring empty one.
        empty = [n for n in chess.SquareSet(chess.BB_KING_ATTACKS[sq]) if n not in r.occupied
                 and n not in _involved(r.board, move)]
        landing = r.rng.choice(empty) if empty and r.rng.random() < 0.5 else None
        if landing is not None:
            r.pause(0.05, 0.3)
            r.place(landing)
        label = None
        if over_the_press:
            r.pause(1.5, 3.0)
            label = r.play(move)
            r.pause(*r.style.clock_delay)
            r.clock()
            r.pressed = True  # (run() presses no more for this ply)
            r.pause(1.0, 3.0)
        else:
            r.pause(2.0, 6.0)
        if landing is not None:
            r.lift(landing)
            r.pause(0.2, 0.8)
        r.place(sq)
        r.pause(0.5, 2.0)
        return label

    return hook


# -- clock-no-move ----------------------------------------------------------------------------


def _clock_options(board: chess.Board, move: chess.Move, ply: int) -> list[None]:
    return [None] if ply >= 2 else []  # not at the very start, where a press looks like a start


def _press_without_move(_: None) -> Hook:
    def hook(r: Renderer, move: chess.Move) -> str | None:
        r.clock()
        r.pause(1.0, 3.0)
        return None

    return hook


# -- knocked-during-move ------------------------------------------------------------------


def _knocked_in_move_options(board: chess.Board, move: chess.Move, ply: int
                             ) -> list[chess.Square]:
    """Pieces beside the moving piece's path (its origin's or target's neighbours), other
    than the move's own and the kings, for a plain move."""
    if not _is_plain(board, move):
        return []
    near = chess.BB_KING_ATTACKS[move.from_square] | chess.BB_KING_ATTACKS[move.to_square]
    return sorted(sq for sq in chess.SquareSet(board.occupied & near)
                  if sq not in _involved(board, move) and board.piece_type_at(sq) != chess.KING)


def _knocked_in_move(sq: chess.Square) -> Hook:
    def hook(r: Renderer, move: chess.Move) -> str | None:
        r.lift(move.from_square)
        r.pause(0.1, 0.4)
        r.lift(sq)  # the hand knocks it off its square
        r.pause(0.1, 0.5)
        r.place(move.to_square)  # the move itself, released (4.7)
        r.pause(2.5, 4.0)
        r.place(sq)  # put back
        r.pause(0.3, 1.0)
        return "knocked-during-move"

    return hook


PLANS: dict[str, tuple[Options, Stager]] = {
    "touch-move": (_touch_own_options, _touch_back),
    "touch-move-enemy": (_touch_enemy_options, _touch_back),
    "illegal-move": (_illegal_options, _illegal_then_take_back),
    "move-changed": (_changed_options, _released_elsewhere),
    "position-mismatch": (_knock_options, _knocked_over),
    "clock-no-move": (_clock_options, _press_without_move),
    "knocked-during-move": (_knocked_in_move_options, _knocked_in_move),
    "knocked-over-the-press": (_knock_over_the_press_options,
                               lambda sq: _knocked_over(sq, over_the_press=True)),
}


def _options_by_ply(game: chess.pgn.Game, code: str, style: RenderStyle) -> dict[int, list[Any]]:
    if code not in PLANS:
        raise ValueError(f"unknown violation {code!r}; one of {', '.join(VIOLATION_CODES)}")
    if code in NEEDS_CLOCK and not style.use_clock:
        raise ValueError(f"{code} needs clock presses (style.use_clock)")
    options_at = PLANS[code][0]
    if code == "touch-move-enemy" and not style.use_clock:
        options_at = _touch_enemy_options_without_clock
    return options_along(game, options_at, style.start_ply)


def options_along(game: chess.pgn.Game, options_at: Options,
                  start_ply: int) -> dict[int, list[Any]]:
    """Each ply (counted from `start_ply`) at which `options_at` finds ways to stage an
    event, with those ways."""
    board = game.board()
    moves = list(game.mainline_moves())
    for move in moves[:start_ply]:
        board.push(move)
    found: dict[int, list[Any]] = {}
    for ply, move in enumerate(moves[start_ply:]):
        if options := options_at(board, move, ply):
            found[ply] = options
        board.push(move)
    return found


def choose_staging(options: dict[int, list[Any]], name: str, seed: int,
                   ply: int | None) -> tuple[int, Any]:
    """The ply to stage `name` at (`ply`, or a random eligible one) and how: drawn from a
    generator of its own, so the rendering's own draws stay as they are."""
    if not options:
        raise NoEligiblePly(f"no ply of this game can stage {name}")
    choose = random.Random(f"{seed}:{name}")
    if ply is None:
        ply = choose.choice(sorted(options))
    elif ply not in options:
        raise NoEligiblePly(f"{name} cannot be staged at ply {ply}")
    return ply, choose.choice(options[ply])


def eligible_plies(
    game: chess.pgn.Game, code: str, style: RenderStyle = RenderStyle()
) -> list[int]:
    """Plies (indices into the rendered moves) where `code` can be staged."""
    return sorted(_options_by_ply(game, code, style))


def render_violation(
    game: chess.pgn.Game,
    code: str,
    *,
    seed: int,
    ply: int | None = None,
    style: RenderStyle = RenderStyle(),
) -> RenderedGame:
    """The game rendered with one `code` violation at `ply` (random eligible ply if None)."""
    ply, option = choose_staging(_options_by_ply(game, code, style), code, seed, ply)
    hook = PLANS[code][1](option)
    renderer = Renderer(game, seed, style)
    traces = renderer.run({ply: hook})
    return renderer.rendered(traces, [(ALERT_CODES[code], ply)])


def touch_move(game: chess.pgn.Game, *, seed: int, ply: int | None = None,
               style: RenderStyle = RenderStyle()) -> RenderedGame:
    return render_violation(game, "touch-move", seed=seed, ply=ply, style=style)


def touch_move_enemy(game: chess.pgn.Game, *, seed: int, ply: int | None = None,
                     style: RenderStyle = RenderStyle()) -> RenderedGame:
    return render_violation(game, "touch-move-enemy", seed=seed, ply=ply, style=style)


def illegal_move(game: chess.pgn.Game, *, seed: int, ply: int | None = None,
                 style: RenderStyle = RenderStyle()) -> RenderedGame:
    return render_violation(game, "illegal-move", seed=seed, ply=ply, style=style)


def move_changed(game: chess.pgn.Game, *, seed: int, ply: int | None = None,
                 style: RenderStyle = RenderStyle()) -> RenderedGame:
    return render_violation(game, "move-changed", seed=seed, ply=ply, style=style)


def knocked_piece(game: chess.pgn.Game, *, seed: int, ply: int | None = None,
                  style: RenderStyle = RenderStyle()) -> RenderedGame:
    return render_violation(game, "position-mismatch", seed=seed, ply=ply, style=style)


def clock_no_move(game: chess.pgn.Game, *, seed: int, ply: int | None = None,
                  style: RenderStyle = RenderStyle()) -> RenderedGame:
    return render_violation(game, "clock-no-move", seed=seed, ply=ply, style=style)
