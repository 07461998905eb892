"""FIDE 5 and 6.9: how a game ends by itself. Checkmate, stalemate, a dead position
(python-chess's insufficient material), fivefold repetition and the 75-move rule end it
at once (5.1.1, 5.2.1, 5.2.2, 9.6); in `casual` so do threefold repetition and the
fifty-move rule. A mating or drawing move ends the game without a press once it has
stood GAME_END_HOLD (6.2.1: the game ended with it). A fallen flag loses, unless the
opponent cannot mate by any series of legal moves (6.9: a draw).
"""

from __future__ import annotations

import chess

from board_ctl.core.clock import flag_result
from board_ctl.core.rules import Action, End, Finding
from board_ctl.core.squares import NAMES
from board_ctl.core.timebase import us

GAME_END_HOLD = 2.0  # s a mating or drawing placement must stand to end the game unpressed
GAME_END_HOLD_US = us(GAME_END_HOLD)

TERMINATIONS = {
    chess.Termination.CHECKMATE: "checkmate",
    chess.Termination.STALEMATE: "stalemate",
    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient-material",
    chess.Termination.FIVEFOLD_REPETITION: "fivefold-repetition",
    chess.Termination.SEVENTYFIVE_MOVES: "seventy-five-moves",
}


class Endings:
    def __init__(self, auto_claimable_draws: bool = False) -> None:
        self.auto_claimable_draws = auto_claimable_draws

    def after_move(self, board: chess.Board) -> tuple[str, str] | None:
        """(result, termination) if the position on `board` ends the game, else None."""
        outcome = board.outcome(claim_draw=False)
        if outcome is not None:
            termination = TERMINATIONS.get(outcome.termination, outcome.termination.name.lower())
            return outcome.result(), termination
        if self.auto_claimable_draws:
            if board.is_repetition(3):
                return "1/2-1/2", "threefold-repetition"
            if board.is_fifty_moves():
                return "1/2-1/2", "fifty-moves"
        return None

    @staticmethod
    def ends_game(board: chess.Board, move: chess.Move) -> bool:
        """Whether `move` would mate, stalemate or leave a dead position (board unchanged)."""
        board.push(move)
        try:
            return board.is_checkmate() or board.is_stalemate() or board.is_insufficient_material()
        finally:
            board.pop()

    @staticmethod
    def win_for(board: chess.Board, winner: chess.Color) -> str:
        """Win for `winner`, or a draw when `winner` could not mate by any series (5.1.2, 6.9)."""
        if board.has_insufficient_material(winner):
            return "1/2-1/2"
        return "1-0" if winner == chess.WHITE else "0-1"

    @staticmethod
    def flag(board: chess.Board, side: chess.Color) -> list[Action]:
        """`side`'s flag fell: the alert, and the result."""
        king = board.king(side)
        return [Finding("flag", side, (king,) if king is not None else (),
                        f"{NAMES[side]}'s time ran out"), End(*flag_result(board, side))]
