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


class MovedOn:
    """A game ended by a move left standing (a mate or a draw, unpressed: 5.1.1, 5.2.1):
    its piece lifted and put down on another square it could have gone to is that move
    changed after its release (4.7). The game stands; the record keeps the move that ended
    it, and the alert tells the arbiter the board shows another. Watched from the end until
    the board shows anything but the move standing, its piece in hand, or that piece on
    another of its squares (the players clearing the board: nothing to judge)."""

    __slots__ = ("sensed", "standing", "in_hand", "moved_on", "mover", "san", "to_square")

    def __init__(self, board: chess.Board, sensed: chess.Bitboard) -> None:
        """`board`: after the move that ended the game; `sensed`: the settled sensors."""
        before = board.copy(stack=1)  # (the last move only: a whole game's copy costs a
        last = before.pop()  # Move copy per ply; nothing asked below looks further back)
        self.sensed = self.standing = sensed
        self.to_square = last.to_square
        self.in_hand = sensed & ~chess.BB_SQUARES[last.to_square]
        self.mover = before.turn
        self.san = before.san(last)
        # Where else the piece could have gone: squares empty now (a capture elsewhere
        # would leave the board as the piece in hand does). Castling moves two pieces.
        targets = () if before.is_castling(last) else {
            m.to_square for m in before.legal_moves
            if m.from_square == last.from_square and not sensed & chess.BB_SQUARES[m.to_square]}
        self.moved_on = {self.in_hand | chess.BB_SQUARES[s]: s for s in targets}

    def settled(self, square: chess.Square, occupied: bool) -> Finding | None | bool:
        """A settled change after the end: the alert when the piece was moved on, True
        while the board may still show that, False once it cannot (stop watching)."""
        bit = chess.BB_SQUARES[square]
        self.sensed = self.sensed | bit if occupied else self.sensed & ~bit
        if self.sensed == self.standing or self.sensed == self.in_hand:
            return True
        square = self.moved_on.get(self.sensed, -1)
        if square < 0:
            return False
        return Finding("move-changed", self.mover, (self.to_square, square),
                       f"{NAMES[self.mover]} moved the piece on from "
                       f"{chess.square_name(self.to_square)} to {chess.square_name(square)}"
                       f" after the game ended with {self.san} (FIDE 4.7: the move stands)")
