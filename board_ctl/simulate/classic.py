"""Real games rendered as played under the older Laws of the seed handbooks (the board's
`classic` profile), with the infractions those Laws judge their own way.

The game's true moves stay the record; each rendering lists the alerts it should raise
(`expected_alerts`) and, when an infraction ends the game, the result and the moves
played by then (`RenderedGame.moves` is cut there). The start line says
`"profile": "classic"`, so a replay without `--profile` plays it under those Laws; a
rendering that needs the clock's times carries a time control.

| code | what the player does | alerts |
| --- | --- | --- |
| king-into-check | steps his king onto an empty square next to it that the enemy attacks, presses the clock, 1-3 s later puts it back and plays the real move (a king move: the king was touched) | illegal-move, king-exposed |
| king-into-check-thrice | the same, at three of his plies: the third loses | the same, three times; the game ends there |
| wrong-claim | claims a draw before his move (no repetition, fewer than 50 moves), then plays the real move | wrong-claim (5 minutes from his clock) |
| offer-out-of-turn | presses his clock, then the offer button | offer-out-of-turn |
| offer-repeated | offers with his move (after placing, before pressing); the reply declines it; he offers again with his next move | offer-repeated |

This module, like the rest of the simulator, knows nothing of the referee: what it
expects comes from python-chess and the texts.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import chess
import chess.pgn

from board_ctl.simulate.render import SIDE_NAMES, Hook, RenderedGame, Renderer, RenderStyle
from board_ctl.simulate.violations import NoEligiblePly
from board_ctl.words import count

CLASSIC_CODES = ("king-into-check", "king-into-check-thrice", "wrong-claim",
                 "offer-out-of-turn", "offer-repeated")
TIME_CONTROL = "5400"  # 90 minutes: the 5-minute claim penalty shows on the clock
KING_EXPOSURES_LOSE = 3  # 000: "三次就要判負", the third king moved into check loses

# Options at one ply (what the infraction can use there; empty: not possible).
Options = Callable[[chess.Board, chess.Move, int], list[Any]]


def _into_check_options(board: chess.Board, move: chess.Move, ply: int) -> list[chess.Square]:
    """Empty squares next to the mover's king that the enemy attacks, when the real move
    is a plain king step (the king, touched, must move: the real move then stands)."""
    king = board.king(board.turn)
    if (king is None or move.from_square != king or board.is_castling(move)
            or board.is_check()):
        return []
    return sorted(sq for sq in chess.SquareSet(chess.BB_KING_ATTACKS[king] & ~board.occupied)
                  if board.is_attacked_by(not board.turn, sq) and sq != move.to_square)


def _king_into_check(square: chess.Square) -> Hook:
    def hook(r: Renderer, move: chess.Move) -> str | None:
        king = move.from_square
        r.lift(king)
        r.pause(*r.style.hand)
        r.place(square)
        r.pause(*r.style.clock_delay)
        r.clock()
        r.pause(1.0, 3.0)
        r.lift(square)
        r.pause(*r.style.hand)
        r.place(king)
        r.pause(0.5, 3.0)
        return None

    return hook


def _claim_options(board: chess.Board, move: chess.Move, ply: int) -> list[None]:
    """A claim the position after the move cannot uphold: it has not stood before (no
    repetition, and so no perpetual check either) and the fifty moves are far off. Not
    just after the opponent's capture: pushed off without a clock, it is complete only
    once the reply begins, and a claim is none (the board takes it for one made while
    the opponent still has the move)."""
    if board.move_stack:
        last = board.pop()
        captured = board.is_capture(last)
        board.push(last)
        if captured:
            return []
    board.push(move)
    try:
        fresh = not board.is_repetition(2) and board.halfmove_clock < 90
        over = board.is_game_over(claim_draw=False)
    finally:
        board.pop()
    return [None] if fresh and not over and ply >= 2 else []


def _claim_first(_: None) -> Hook:
    def hook(r: Renderer, move: chess.Move) -> str | None:
        r.emit("claim", side=SIDE_NAMES[r.board.turn])
        r.pause(0.5, 2.0)
        return None

    return hook


def _not_last(board: chess.Board, move: chess.Move, ply: int) -> list[None]:
    board.push(move)
    try:
        over = board.is_game_over(claim_draw=False)
    finally:
        board.pop()
    return [] if over else [None]


def _offer_after_press(_: None) -> Hook:
    def hook(r: Renderer, move: chess.Move) -> str | None:
        label = r.play(move)
        r.pause(*r.style.clock_delay)
        r.clock()
        r.pressed = True
        r.pause(0.3, 1.5)
        r.emit("draw-offer", side=SIDE_NAMES[r.board.turn])
        return label

    return hook


def _offer_with_move(_: None) -> Hook:
    def hook(r: Renderer, move: chess.Move) -> str | None:
        label = r.play(move)
        r.pause(0.3, 1.0)
        r.emit("draw-offer", side=SIDE_NAMES[r.board.turn])
        return label  # (the clock is pressed after it, as ever)

    return hook


def _options_by_ply(game: chess.pgn.Game, options_at: Options, style: RenderStyle
                    ) -> dict[int, list[Any]]:
    board = game.board()
    moves = list(game.mainline_moves())
    for move in moves[: style.start_ply]:
        board.push(move)
    found: dict[int, list[Any]] = {}
    for ply, move in enumerate(moves[style.start_ply:]):
        if options := options_at(board, move, ply):
            found[ply] = options
        board.push(move)
    return found


def _classic_start(renderer: Renderer, time_control: str | None) -> None:
    """The log's start line says the game is played under the older Laws."""
    start: dict[str, Any] = {"t": 0.0, "ev": "start", "fen": renderer.start_fen,
                             "profile": "classic"}
    if time_control:
        start["time_control"] = time_control
    if renderer.lines and renderer.lines[0].get("ev") == "start":
        renderer.lines[0] = start
    else:
        renderer.lines.insert(0, start)


def render_classic_clean(game: chess.pgn.Game, *, seed: int,
                         style: RenderStyle = RenderStyle()) -> RenderedGame:
    """The game rendered cleanly, its log saying it is played under the older Laws."""
    renderer = Renderer(game, seed, style)
    _classic_start(renderer, None)
    return renderer.rendered(renderer.run(), [])


def render_classic(game: chess.pgn.Game, code: str, *, seed: int, ply: int | None = None,
                   style: RenderStyle = RenderStyle()) -> RenderedGame:
    """The game with the infraction `code` (CLASSIC_CODES) at `ply` (a random eligible
    one if None; for king-into-check-thrice, the first of three of the same side's)."""
    if code not in CLASSIC_CODES:
        raise ValueError(f"unknown infraction {code!r}; one of {', '.join(CLASSIC_CODES)}")
    if not style.use_clock and code in ("king-into-check", "king-into-check-thrice",
                                        "offer-out-of-turn"):
        raise ValueError(f"{code} needs clock presses (style.use_clock)")
    choose = random.Random(f"{seed}:classic:{code}")
    hooks: dict[int, Hook] = {}
    alerts: list[tuple[str, int]] = []
    end: int | None = None  # the ply the game ends at, if the infraction ends it
    if code in ("king-into-check", "king-into-check-thrice"):
        options = _options_by_ply(game, _into_check_options, style)
        plies = _plies_for(options, code, ply, choose)
        for at in plies:
            hooks[at] = _king_into_check(choose.choice(options[at]))
            alerts += [("illegal-move", at), ("king-exposed", at)]
        if code == "king-into-check-thrice":
            end = plies[-1]
    elif code == "wrong-claim":
        options = _options_by_ply(game, _claim_options, style)
        at = _plies_for(options, code, ply, choose)[0]
        hooks[at] = _claim_first(None)
        alerts.append(("wrong-claim", at))
    elif code == "offer-out-of-turn":
        options = _options_by_ply(game, _not_last, style)
        at = _plies_for(options, code, ply, choose)[0]
        hooks[at] = _offer_after_press(None)
        alerts.append(("offer-out-of-turn", at))
    else:  # offer-repeated: with his move at `at`, declined by the reply, again at at + 2
        options = _options_by_ply(game, _not_last, style)
        pairs = {p: [None] for p in options if p + 2 in options and p + 1 in options}
        at = _plies_for(pairs, code, ply, choose)[0]
        hooks[at] = _offer_with_move(None)
        hooks[at + 2] = _offer_with_move(None)
        alerts.append(("offer-repeated", at + 2))
    renderer = Renderer(game, seed, style)
    _classic_start(renderer, TIME_CONTROL if code == "wrong-claim" and style.use_clock
                   else None)
    rendered = renderer.rendered(renderer.run(hooks), alerts)
    if end is not None:  # the third king moved into check lost the game there
        board = chess.Board(renderer.start_fen)
        for move in rendered.moves[:end]:
            board.push(move)
        rendered.moves = rendered.moves[:end]
        offender = board.turn
        # (a win needs a mating side: 10.5 "a lone king cannot win", FIDE 6.9)
        rendered.result = ("1/2-1/2" if board.has_insufficient_material(not offender)
                           else "0-1" if offender == chess.WHITE else "1-0")
    return rendered


def _plies_for(options: dict[int, list[Any]], code: str, ply: int | None,
               choose: random.Random) -> list[int]:
    """The plies to stage `code` at: one, or three of the same side's for the thrice."""
    if not options:
        raise NoEligiblePly(f"no ply of this game can stage {code}")
    if code != "king-into-check-thrice":
        if ply is None:
            return [choose.choice(sorted(options))]
        if ply not in options:
            raise NoEligiblePly(f"{code} cannot be staged at ply {ply}")
        return [ply]
    for parity in (0, 1) if choose.random() < 0.5 else (1, 0):
        side = sorted(p for p in options if p % 2 == parity and (ply is None or p >= ply))
        if len(side) >= KING_EXPOSURES_LOSE:
            return side[:KING_EXPOSURES_LOSE]
    raise NoEligiblePly(f"no side of this game has {count(KING_EXPOSURES_LOSE, 'ply')} for {code}")
