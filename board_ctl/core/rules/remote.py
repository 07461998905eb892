"""A remote side: a player who is not at the board (a computer), whose moves the person at
the board makes for it.

The remote side's move is the game's as soon as it is chosen (`OpponentMoved`): it is
recorded then, and its clock stops then. The board lags the game by that move until the
person has made it; making it is like restoring a position, so until the board shows the
game's position nothing the person does with the pieces is judged (no touch-move, no
penalty, no alert), and the LEDs show the move to make:

- the moving piece's square blue, where it goes green (red where a piece is taken, the
  destination of a capture, or the pawn taken en passant); castling lights the king's
  squares steady and the rook's blinking; a promotion's piece is on the status LEDs;
- anything else the board shows differently blinks: green where a piece is missing, red
  where one is extra (a wrong execution is shown as what to put where).

The move counts as made once the board shows the game's position and, where presence
cannot tell (a capture, whose square stays occupied; a promotion, whose new piece
replaces the pawn), a piece was seen coming down there, or the board has stood so for
a moment, or the person lifts one of his own pieces (his turn has begun). While the
remote side is choosing its move, the board must show the game's position: a change is
shown as what to put back, without an alert.

A takeback (casual) takes the last full move back: the board is then guided back the
same way, with the generic what-to-put-where lights. A hint lights the remote side's
suggestion for the person (from blue, to green, both blinking) until the board changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from board_ctl.core.effects import Blink, Colour, Remote, SquareLight
from board_ctl.core.timebase import us

REMOTE_HOLD = 1.0  # s the board must stand unchanged in the game's position when nothing
# else shows the capturing piece came down (a piece pushed off its square unseen)
PROMOTION_HOLD = 2.0  # s for a promotion: the pawn put down is often replaced after a pause
# Without a clock the person's own move is complete once released (FIDE 4.7): after
# RELEASED_AFTER (1 s) without a change on the board, but a promotion waits longer, as the
# pawn put down is often replaced by the new piece after a pause (4.6), also when the
# selector was set before.
PROMOTION_RELEASE = 3.0

FROM = Colour.BLUE  # the piece that must move
TO = Colour.GREEN  # where it goes
TAKE = Colour.RED  # the piece that must leave the board


def move_lights(board: chess.Board, move: chess.Move, blink: Blink = Blink.STEADY
                ) -> tuple[SquareLight, ...]:
    """The squares that show `move` (played in `board`): see the module's docstring."""
    lights: dict[chess.Square, SquareLight] = {}
    if board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        kingside = board.is_kingside_castling(move)
        rook_from = chess.square(7 if kingside else 0, rank)
        if board.piece_type_at(move.to_square) == chess.ROOK:  # king-takes-rook encoding
            rook_from = move.to_square
        king_to = chess.square(6 if kingside else 2, rank)
        rook_to = chess.square(5 if kingside else 3, rank)
        rook_blink = Blink.SLOW if blink == Blink.STEADY else blink
        for square, colour, how in ((rook_from, FROM, rook_blink), (rook_to, TO, rook_blink),
                                    (move.from_square, FROM, blink), (king_to, TO, blink)):
            lights[square] = SquareLight(square, colour, how)
    else:
        lights[move.from_square] = SquareLight(move.from_square, FROM, blink)
        captured = board.is_capture(move) and not board.is_en_passant(move)
        lights[move.to_square] = SquareLight(move.to_square, TAKE if captured else TO, blink)
        if board.is_en_passant(move):
            victim = move.to_square - 8 if board.turn == chess.WHITE else move.to_square + 8
            lights[victim] = SquareLight(victim, TAKE, blink)
    return tuple(lights[square] for square in sorted(lights))


@dataclass(slots=True)
class Execution:
    """The board is to be brought to the game's position (`target` occupancy): the remote
    side's move to make (`move`), or a position to restore after a takeback. Times are
    the core's microseconds."""

    target: chess.Bitboard
    since: int
    move: chess.Move | None = None
    lights: tuple[SquareLight, ...] = ()
    origin: chess.Square | None = None  # the moving piece's square
    proof_square: chess.Square | None = None  # a square that must see a piece come down
    placements_needed: int = 0
    hold: int = us(REMOTE_HOLD)
    lifted: bool = False  # the moving piece was seen leaving its square
    placements: int = 0  # pieces seen coming down on proof_square since then
    last_change: int = 0  # the latest raw change anywhere on the board
    reached: int | None = None  # since when the settled board shows the target

    @classmethod
    def of_move(cls, board: chess.Board, move: chess.Move, t: int, target: chess.Bitboard
                ) -> Execution:
        """The remote side's `move`, played in `board` (the position before it)."""
        capture = board.is_capture(move) and not board.is_en_passant(move)
        needed = 2 if move.promotion else 1 if capture else 0
        return cls(target, t, move, move_lights(board, move), move.from_square,
                   move.to_square if needed else None, needed,
                   us(PROMOTION_HOLD if move.promotion else REMOTE_HOLD), last_change=t)

    @classmethod
    def restore(cls, t: int, target: chess.Bitboard) -> Execution:
        """The board back to the game's position (after a takeback)."""
        return cls(target, t, hold=us(REMOTE_HOLD), last_change=t)

    def raw(self, t: int, square: chess.Square, placed: bool) -> None:
        """A raw sensor change (bounces and blips included): evidence of the hands."""
        self.last_change = t
        if square == self.origin and not placed:
            self.lifted = True
        elif square == self.proof_square and placed and self.lifted:
            self.placements += 1

    def settled(self, t: int, occupied: chess.Bitboard) -> None:
        if occupied != self.target:
            self.reached = None
        elif self.reached is None:
            self.reached = t

    @property
    def proven(self) -> bool:
        """The board shows the target, and presence alone proves the pieces are there."""
        return (self.reached is not None and self.move is not None
                and self.placements >= self.placements_needed)

    def deadline(self) -> int | None:
        """When the board, standing unchanged in the target, counts as done."""
        if self.reached is None:
            return None
        return max(self.reached, self.last_change) + self.hold


@dataclass(slots=True)
class RemoteState:
    """What the referee keeps of the remote side between events."""

    side: chess.Color | None = None  # the side not at the board (None: both are)
    execution: Execution | None = None
    hint: chess.Move | None = None  # a suggestion lit for the person
    hint_wanted: bool = False  # the hint button was pressed: the remote side may answer
    # The person's move standing on the board, and since when (it completes once released)
    standing: object = None
    standing_since: int = 0
    # The latest raw change anywhere on the board: a move completes by release only once
    # the board has stood still (a capture's piece comes down after its victim left).
    last_raw: int = 0

    def busy(self, board: chess.Board) -> bool:
        """Whether the board is not the person's to play on: the remote side is to move,
        or the board still lags the game (a move to make, a position to restore)."""
        return self.side is not None and (self.execution is not None or board.turn == self.side)

    def status(self, board: chess.Board, over: bool) -> tuple[Remote, chess.PieceType | None]:
        """The status LEDs' remote field, and the shown move's promotion piece."""
        if self.side is None:
            return Remote.NONE, None
        execution = self.execution
        if execution is not None and execution.move is not None:
            return Remote.SHOWN, execution.move.promotion
        if over:
            return Remote.NONE, None
        if board.turn == self.side and execution is None:
            return Remote.THINKING, None
        if self.hint is not None:
            return Remote.HINT, None
        return Remote.NONE, None

    def lights(self, board: chess.Board) -> tuple[SquareLight, ...]:
        if self.execution is not None:
            return self.execution.lights
        if self.hint is not None and self.hint in board.legal_moves:
            return move_lights(board, self.hint, Blink.SLOW)
        return ()

    def signature(self, board: chess.Board, occupied: chess.Bitboard) -> object:
        """What the LEDs show of it changes with this (the board too, while it lags)."""
        execution = self.execution
        return (id(execution) if execution is not None else None, self.hint,
                occupied if self.busy(board) else None)


def plies_to_take_back(board: chess.Board, person: chess.Color) -> int:
    """How many plies a takeback undoes: back to the person's turn before his last move
    (the last full move: his move and the reply to it); 0 when he has not moved."""
    copy = board.copy()
    plies = 0
    while copy.move_stack:
        copy.pop()
        plies += 1
        if copy.turn == person:  # the move just undone was his
            return plies
    return 0
