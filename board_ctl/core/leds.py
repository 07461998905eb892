"""The LEDs as a pure function of the game state: what the players and the arbiter see.

Square colours: green where a piece must go back, red where a piece must leave, blue the
touched piece that must move, yellow (fast blink) the candidate squares of a capture the
board could not see, orange a sensor found faulty, white both kings on a draw, red the
losing king; white on a player's first rank during the game, how many times he moved
his king into check (`classic`). Nothing is lit for a move that is not yet completed
(FIDE 12.6).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import chess

from board_ctl.core.effects import (
    Alert,
    Blink,
    Buzzer,
    Colour,
    Effect,
    GameOver,
    LedFrame,
    Remote,
    SquareLight,
    StatusLights,
)


@dataclass(frozen=True, slots=True)
class LedView:
    board: chess.Board
    occupied: chess.Bitboard  # what the sensors show
    expected: chess.Bitboard  # what the position needs
    alerts: tuple[Alert, ...]
    candidates: tuple[chess.Square, ...]
    must_move: chess.Square | None
    result: GameOver | None
    faulty: chess.Bitboard = 0  # sensors not believed
    # Playing a computer (board_ctl.core.rules.remote): its move to make, or a hint, and what
    # the status LEDs say of it; `restoring`: the board must come back to the position.
    shown: tuple[SquareLight, ...] = ()
    remote: Remote = Remote.NONE
    promotion: chess.PieceType | None = None
    restoring: bool = False


_RESTORE_CODES = ("illegal-move", "position-mismatch", "declared-move")


def pair_up(
    missing: Iterable[chess.Square], extra: Iterable[chess.Square]
) -> tuple[tuple[chess.Square, chess.Square], ...]:
    """Pair each extra square (from) with the nearest missing one (to), greedily."""
    todo = list(missing)
    pairs = []
    for source in sorted(extra):
        if not todo:
            break
        target = min(todo, key=lambda sq: (chess.square_distance(source, sq), sq))
        todo.remove(target)
        pairs.append((source, target))
    return tuple(pairs)


_TO_MOVE = {chess.WHITE: StatusLights(white_to_move=True),
            chess.BLACK: StatusLights(black_to_move=True)}


def _buzzer(effects: Iterable[Effect]) -> Buzzer:
    buzzer = Buzzer.SILENT
    for effect in effects:
        if isinstance(effect, GameOver):
            buzzer = Buzzer.RESULT
        elif isinstance(effect, Alert) and buzzer == Buzzer.SILENT:
            buzzer = Buzzer.CHIRP
    return buzzer


def led_frame(t: float, view: LedView, effects: Iterable[Effect] = ()) -> LedFrame:
    if (view.result is None and not view.alerts and not view.candidates
            and view.must_move is None and not view.faulty and not view.shown
            and view.remote is Remote.NONE and view.promotion is None
            and not view.restoring):
        return nothing_lit(t, view.board.turn, effects)
    return full_led_frame(t, view, effects)


def nothing_lit(t: float, turn: chess.Color, effects: Iterable[Effect] = ()) -> LedFrame:
    """No square lit, the side to move shown: most frames of a game, built directly."""
    return LedFrame(t, (), _TO_MOVE[turn], _buzzer(effects), ())


def full_led_frame(t: float, view: LedView, effects: Iterable[Effect] = ()) -> LedFrame:
    """led_frame without its shortcut (tests check the shortcut gives the same frame)."""
    lights: dict[chess.Square, SquareLight] = {}

    def light(square: chess.Square, colour: Colour, blink: Blink = Blink.STEADY) -> None:
        lights[square] = SquareLight(square, colour, blink)

    guidance: tuple[tuple[chess.Square, chess.Square], ...] = ()
    codes = {alert.code: alert for alert in view.alerts}
    if view.result is not None:
        _result_lights(view, light)
    else:
        for code in ("touch-move", "move-changed", "wrong-side"):
            if code in codes:
                for square in codes[code].squares:
                    light(square, Colour.BLUE)
        if view.must_move is not None:
            light(view.must_move, Colour.BLUE, Blink.SLOW)
        if "king-exposed" in codes:  # the count of kings moved into check, on his first rank
            for square in codes["king-exposed"].squares:
                light(square, Colour.WHITE)
        if view.restoring or any(code in codes for code in _RESTORE_CODES):
            missing = view.expected & ~view.occupied
            extra = view.occupied & ~view.expected
            guidance = pair_up(chess.scan_forward(missing), chess.scan_forward(extra))
            for square in chess.scan_forward(missing):
                light(square, Colour.GREEN, Blink.SLOW)
            for square in chess.scan_forward(extra):
                light(square, Colour.RED, Blink.SLOW)
        for square in view.candidates:
            light(square, Colour.YELLOW, Blink.FAST)
        for square in chess.scan_forward(view.faulty):
            light(square, Colour.ORANGE, Blink.SLOW)
    for shown in view.shown:  # a computer's move to make is shown whole, also at the end
        lights[shown.square] = shown
    over = view.result is not None
    status = StatusLights(
        white_to_move=not over and view.board.turn == chess.WHITE,
        black_to_move=not over and view.board.turn == chess.BLACK,
        alert=Blink.FAST if view.alerts else None,
        game_over=over,
        remote=view.remote,
        promotion=view.promotion,
    )
    squares = tuple(lights[sq] for sq in sorted(lights))
    return LedFrame(t, squares, status, _buzzer(effects), guidance)


def _result_lights(view: LedView, light) -> None:  # type: ignore[no-untyped-def]
    assert view.result is not None
    kings = {c: view.board.king(c) for c in chess.COLORS}
    if view.result.result == "1/2-1/2":
        for square in kings.values():
            if square is not None:
                light(square, Colour.WHITE)
        return
    loser = chess.BLACK if view.result.result == "1-0" else chess.WHITE
    if kings[loser] is not None:
        light(kings[loser], Colour.RED)
