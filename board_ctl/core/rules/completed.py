"""FIDE 4.7: a piece released on a square as a legal move cannot be moved to another
square. The board sees the release as the piece standing on a legal square for
RELEASED_AFTER (1 s) and then lifted again (inference keeps the turn's released moves);
the warning comes when the move actually made differs from the one released.
"""

from __future__ import annotations

import chess

from board_ctl.core.rules import Finding
from board_ctl.core.shapes import Shape
from board_ctl.core.squares import NAMES
from board_ctl.core.turn import Match


class MoveChanged:
    def __init__(self, enforced: bool = True) -> None:
        self.enforced = enforced

    def check(self, board: chess.Board, released: list[Match], shape: Shape) -> Finding | None:
        """The alert for `shape` made on `board` (before the move) after these releases."""
        if not self.enforced:
            return None
        # A released placement that the final move only extends (the rook of a castling
        # placed first, a pawn later replaced by the promoted piece) is not a change.
        vacated, filled = shape.vacated, shape.filled
        changed = next((m for m in released if m.key[0] & ~vacated or m.key[1] & ~filled), None)
        if changed is None:
            return None
        first = changed.shapes[0].move
        mover = board.turn
        return Finding("move-changed", mover, (first.to_square, shape.move.to_square),
                       f"{NAMES[mover]} released the piece on {chess.square_name(first.to_square)}"
                       f" ({board.san(first)}) and then moved it to "
                       f"{chess.square_name(shape.move.to_square)} (FIDE 4.7)")
