"""The simulator's handling behaviours by name: the handling model a recognition
benchmark renders real games with, each with what the hands do and the ruling a correct
referee reaches (carried by every rendering as its expected moves, result and alerts).

`render_behaviour(game, name, seed=…, use_clock=…)` renders one; `BEHAVIOURS` lists
them all, the older renderings first (clean play, the scripted violations), then the
handling mishaps and habits of real players (slow slides, knocked pieces, knock-off
captures, illegal castling, a blitz scramble). docs/recognition.md describes each.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import chess
import chess.pgn

from board_ctl.simulate.handling import HANDLING_EVENTS, render_handling
from board_ctl.simulate.render import (
    RenderedGame,
    RenderStyle,
    SlowSlide,
    knight_paths,
    knock_off_spots,
    render_game,
)
from board_ctl.simulate.violations import NoEligiblePly, render_violation
from board_ctl.words import count

Needs = Callable[[chess.Board, chess.Move], bool]

BLITZ = "180+2"


@dataclass(frozen=True)
class Behaviour:
    name: str
    hands: str  # what the hands do
    ruling: str  # what a correct referee makes of it (FIDE 2023)
    style: RenderStyle = RenderStyle()  # the handling model's knobs (clock set per log)
    clock_modes: tuple[bool, ...] = (True, False)  # rendered with a clock, without one
    needs: Needs | None = None  # a move the game must have for the behaviour to show
    staged: str | None = None  # a violation or handling event staged at one ply
    profile: str = "fide"  # the rule profile the logs are replayed with
    new: bool = False  # one of the handling behaviours (not an older rendering)


def _slides(board: chess.Board, move: chess.Move) -> bool:
    """A move a hand can push along the board across at least one square: a rook,
    bishop or queen going two squares or more, a pawn's double step, a knight (around
    pieces in the way), the castling king."""
    piece = board.piece_type_at(move.from_square)
    if piece == chess.KNIGHT:
        return any(not any(board.piece_at(sq) for sq in path)
                   for path in knight_paths(move.from_square, move.to_square))
    if piece == chess.PAWN and abs(move.to_square - move.from_square) != 16:
        return False
    between = chess.SquareSet.between(move.from_square, move.to_square)
    return bool(between) and not (between & board.occupied)


def _slid_capture(board: chess.Board, move: chess.Move) -> bool:
    return board.is_capture(move) and not board.is_en_passant(move) \
        and not move.promotion and _slides(board, move)


def _captures(board: chess.Board, move: chess.Move) -> bool:
    return board.is_capture(move)


def _promotes(board: chess.Board, move: chess.Move) -> bool:
    return move.promotion is not None


def _underpromotes(board: chess.Board, move: chess.Move) -> bool:
    return move.promotion not in (None, chess.QUEEN)


def _knocks_off(board: chess.Board, move: chess.Move) -> bool:
    return bool(knock_off_spots(board, move))


SLOW = SlowSlide()
_OLD_VIOLATIONS = ("touch-move", "touch-move-enemy", "illegal-move", "move-changed",
                   "position-mismatch", "clock-no-move", "knocked-during-move",
                   "knocked-over-the-press")
_VIOLATION_CLOCK_ONLY = {"illegal-move", "clock-no-move", "position-mismatch",
                         "knocked-during-move", "knocked-over-the-press"}
_VIOLATION_TEXT = {
    "touch-move": "an own movable piece lifted, put back, another moved",
    "touch-move-enemy": "a capturable enemy piece lifted, put back, not captured",
    "illegal-move": "the piece put on a square it cannot reach, the clock pressed, then "
                    "taken back and the move made",
    "move-changed": "the piece released on another legal square for 1-3 s, then moved on",
    "position-mismatch": "an uncapturable enemy piece knocked over in the mover's time, "
                         "put back 2-6 s later",
    "clock-no-move": "the clock pressed without a move, then the move",
    "knocked-during-move": "a piece beside the move knocked off its square, put back "
                           "2.5-4 s after the placement",
    "knocked-over-the-press": "an enemy piece knocked over, the move made and pressed, the "
                              "piece put back 1-3 s after the press",
}
_VIOLATION_ALERT = {"touch-move-enemy": "touch-move", "knocked-during-move": "position-mismatch",
                    "knocked-over-the-press": "position-mismatch"}

_SCRAMBLE = RenderStyle(time_control=BLITZ, think=(0.05, 2.5), long_think_prob=0.03,
                        long_think=(3.0, 12.0), hand=(0.08, 0.5), king_hand=(0.06, 0.25),
                        clock_delay=(0.08, 0.4), idle_lift_prob=0.0, early_lift_prob=0.5,
                        early_lift=(0.0, 0.100), recapture_think=(0.0, 0.200),
                        bounce_prob=0.5, capture_styles=(0.2, 0.3, 0.3, 0.2))

_LIST: list[Behaviour] = [
    Behaviour("clean", "the default player: thinking 0.3-8 s (5 % 8-40 s), pieces carried "
              "0.2-1.5 s or slid with 15-70 ms blips, contact bounce, every order of "
              "capture, castling, en passant and promotion", "the game; no alert"),
    Behaviour("fast-swaps", "every capture a swap: the victim's square empty 5-60 ms, or "
              "never (the victim pushed off the board)", "the game; no alert",
              RenderStyle(capture_styles=(0.0, 0.0, 0.5, 0.5)), needs=_captures),
    Behaviour("no-noise-from-fen", "from the position after 12 plies, no bounce, no "
              "slides", "the game; no alert",
              RenderStyle(start_ply=12, bounce=False, slides=False)),
    Behaviour("dense-bounce", "0-10 extra bounce pairs after every lift and place, "
              "0.3-2 ms apart", "the game; no alert", RenderStyle(bounce_pairs=(0, 10))),
    Behaviour("victim-set-down", "the victim lifted, set down a moment on a square it "
              "could move to, taken off; the capturing piece lands after",
              "the game; no alert", RenderStyle(capture_styles=(0, 0, 0, 0, 1)),
              needs=_captures),
    Behaviour("promotion-piece-first", "the new piece put on the square before the pawn "
              "is lifted", "the game; no alert", RenderStyle(promotion_styles=(0, 0, 1)),
              needs=_promotes),
    Behaviour("selector-after-lift", "the promotion selector set 10-90 ms after the pawn "
              "is lifted", "the game; no alert",
              RenderStyle(promote_timings=(0, 0, 0, 0, 1), queen_default_prob=0.0),
              needs=_promotes),
    Behaviour("selector-after-press", "an underpromotion's selector set 1-250 ms after "
              "the press (without a clock: after the placement)", "the game; no alert",
              RenderStyle(promote_timings=(0.0, 0.0, 0.0, 1.0), queen_default_prob=0.0),
              needs=_underpromotes),
    *[Behaviour(code, _VIOLATION_TEXT[code],
                f"the game; `{_VIOLATION_ALERT.get(code, code)}` at that ply",
                clock_modes=(True,) if code in _VIOLATION_CLOCK_ONLY else (True, False),
                staged=code)
      for code in _OLD_VIOLATIONS],
    Behaviour("slow-slide", "every move a hand can push is pushed along the surface "
              "(rook, bishop, queen, pawn double step, knight along its L, the castling "
              "king): each square crossed closed 80-500 ms, neighbours overlapping by up "
              "to 30 ms half the time", "the game (each piece where it ends, 4.7); no alert",
              RenderStyle(slow_slide=SLOW, slide_prob=1.0, castling_styles=(0.8, 0.2)),
              needs=_slides, new=True),
    Behaviour("slow-slide-victim-first", "every capture victim first: the victim lifted, "
              "then the capturing piece pushed in as in slow-slide",
              "the game (each capture); no alert",
              RenderStyle(slow_slide=SLOW, slide_prob=1.0, capture_styles=(1.0,)),
              needs=_slid_capture, new=True),
    Behaviour("knocked-restored-quickly", "at one ply the hand making the move knocks a "
              "piece beside it (own or enemy) onto an empty neighbouring square; it is "
              "back on its square 0.15-1.35 s after leaving it", "the game; no alert "
              "(4.2.2: accidental contact)", staged="knocked-restored-quickly", new=True),
    Behaviour("knocked-restored-late", "the same knock, the piece put back 1.7-3.5 s "
              "after the press", "the game; `position-mismatch` (7.4) on the knocked "
              "piece's square and where it lies", clock_modes=(True,),
              staged="knocked-restored-late", new=True),
    Behaviour("knock-off-capture", "every capture that can be made so: the capturing "
              "piece pushes the victim onto an empty square beside it, ahead of its "
              "travel; the victim is taken off 0.1-1 s later (its square empty 5-60 ms "
              "in between, or never)", "the game (each capture); no alert",
              RenderStyle(capture_styles=(0, 0, 0, 0, 0, 1)), needs=_knocks_off, new=True),
    Behaviour("illegal-castling", "at one ply the player castles where the position "
              "forbids it (in check, through or into an attacked square, next to the "
              "enemy king): king then rook placed, clock pressed; 0.5-4 s later both put "
              "back, then the game's move (a king move, 4.3/4.4.3)", "`illegal-move` "
              "(7.5.1), the position reinstated, the penalty; then the game",
              clock_modes=(True,), staged="illegal-castling", new=True),
    Behaviour("blitz-scramble", f"a {BLITZ} game at speed: thinking 0.05-2.5 s (3 % "
              "3-12 s; never below 10 s on the clock), pieces carried 80-500 ms, kings "
              "60-250 ms, presses 80-400 ms after the placement; half the time the "
              "opponent's first lift 0-100 ms BEFORE the press (80-150 ms after the "
              "release at the earliest); recaptures begun 0-200 ms after the press", "the game; no alert",
              _SCRAMBLE, clock_modes=(True,), profile="blitz", new=True),
    Behaviour("set-straight-scramble", "blitz-scramble, and half the moves the mover lifts "
              "the piece he just put down 0.1-1.5 s after it landed (released or not, "
              "4.7) and puts it back 40-400 ms later, before his press",
              "the game; no alert (his own piece, his move not completed)",
              dataclasses.replace(_SCRAMBLE, straighten_prob=0.5), clock_modes=(True,),
              profile="blitz", new=True),
]
BEHAVIOURS: dict[str, Behaviour] = {b.name: b for b in _LIST}
NEW_BEHAVIOURS = tuple(b.name for b in _LIST if b.new)


def _has_move(game: chess.pgn.Game, needs: Needs, start_ply: int) -> bool:
    board = game.board()
    for ply, move in enumerate(game.mainline_moves()):
        if ply >= start_ply and needs(board, move):
            return True
        board.push(move)
    return False


def render_behaviour(game: chess.pgn.Game, name: str, *, seed: int,
                     use_clock: bool = True) -> RenderedGame:
    """The game rendered with behaviour `name`. NoEligiblePly when the game cannot show
    it (no such move, no ply to stage it at); ValueError for an unknown name or a clock
    mode the behaviour is not rendered in."""
    try:
        behaviour = BEHAVIOURS[name]
    except KeyError:
        raise ValueError(f"unknown behaviour {name!r}; one of {', '.join(BEHAVIOURS)}") \
            from None
    if use_clock not in behaviour.clock_modes:
        raise ValueError(f"{name} is rendered only with a clock")
    style = dataclasses.replace(behaviour.style, use_clock=use_clock)
    plies = len(list(game.mainline_moves()))
    if style.start_ply >= plies:
        raise NoEligiblePly(f"the game has only {count(plies, 'ply')}")
    if behaviour.needs is not None and not _has_move(game, behaviour.needs, style.start_ply):
        raise NoEligiblePly(f"no move of this game shows {name}")
    if behaviour.staged in HANDLING_EVENTS:
        rendered = render_handling(game, behaviour.staged, seed=seed, style=style)
    elif behaviour.staged is not None:
        rendered = render_violation(game, behaviour.staged, seed=seed, style=style)
    else:
        rendered = render_game(game, seed=seed, style=style)
    rendered.behaviour = name
    rendered.profile = behaviour.profile
    return rendered
