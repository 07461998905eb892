"""An app's LED request as our square lights.

An app lights squares to show a move to make (its engine's, an online opponent's) or a
square to look at; it does not say which is which. The board's colours already mean
that for a computer's move: blue for the piece to move, green for where it goes. So a
lit square holding a piece of the side to move is blue, any other green; blinking when
the app's pattern blinks.
"""

from __future__ import annotations

from collections.abc import Mapping

import chess

from board_ctl.apps.session import Lights
from board_ctl.core.effects import Blink, Colour, SquareLight


def square_lights(lights: Lights, pieces: Mapping[chess.Square, chess.Piece],
                  turn: chess.Color) -> tuple[SquareLight, ...]:
    blink = Blink.SLOW if lights.blink else Blink.STEADY
    out = []
    for square in sorted(lights.squares):
        piece = pieces.get(square)
        colour = Colour.BLUE if piece is not None and piece.color == turn else Colour.GREEN
        out.append(SquareLight(square, colour, blink))
    return tuple(out)
