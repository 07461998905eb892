"""Lateness: a player who comes to the board after the default time loses (the older
Laws' 10.15: more than an hour late; FIDE 6.7.1's default time). Off unless a default time
is set (`[game] default_time`, the sensor log's `default_time`).

The board sees a player come only by his hands: the side to move at the start is there
once he lifts one of his pieces (or completes a move). The clock of the side to move at
the start runs from t = 0, and so does his lateness. Whether his opponent came is not
seen (someone at the board thinking about his first reply looks the same as nobody): that
is left to the arbiter, as are both players late (10.17).
"""

from __future__ import annotations

import chess

from board_ctl.core.rules import Action, End, Finding
from board_ctl.core.rules.endings import Endings
from board_ctl.core.squares import NAMES
from board_ctl.core.timebase import to_us


class Lateness:
    def __init__(self, default_time: float | None) -> None:
        self.default_us = None if default_time is None else to_us(default_time)
        # When the side to move at the start loses, if he has not come by then (None: off,
        # or he came). (An attribute: the referee looks at it for every event.)
        self.deadline = self.default_us

    def seen(self, board: chess.Board, touched: list[tuple[int, chess.Square]]) -> bool:
        """Whether the side to move at the start has shown up: a move made, or one of his
        pieces lifted (disarms the rule for good)."""
        if self.deadline is not None and (board.move_stack or any(
                board.color_at(square) == board.turn for _, square in touched)):
            self.deadline = None
        return self.deadline is None

    def expired(self, board: chess.Board) -> list[Action]:
        """The default time passed with the side to move not come: he loses (a draw if
        his opponent could not mate by any series of moves, the older Laws' 10.5)."""
        self.deadline = None
        late = board.turn
        assert self.default_us is not None
        minutes = self.default_us / 60_000_000
        return [Finding("late", late, (), f"{NAMES[late]} did not come to the board within "
                        f"{minutes:g} minutes of the start: the game is lost (10.15)"),
                End(Endings.win_for(board, not late), "late-arrival")]
