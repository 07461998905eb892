"""The reading of a turn: what the sensors saw since the last completed move, explained.

A pure object with typed inputs and outputs, held by the referee. Its inputs are the
turn's record (`turn.py`: the position, every raw transition per square, the moves the
board has shown, the touches) and a `Context` (the settled occupancy, the moment, whether
a press is completing the move); its outputs are a `Reading` (what the board shows now)
or an `Answer` (the opponent's reply has begun).
"""

from __future__ import annotations

from board_ctl.core import inference as infer
from board_ctl.core.inference import Answer, Context, Reading
from board_ctl.core.turn import Turn


class TurnReading:
    """Reads a turn's record (see the module's docstring)."""

    def explain(self, turn: Turn, ctx: Context) -> Reading:
        """What the board shows now; keeps the turn's record of the moves shown."""
        return infer.explain(turn, ctx)

    def answer(self, turn: Turn, ctx: Context) -> Answer | bool:
        """The opponent's reply begun to a move shown (an Answer), or whether the board is
        accounted for otherwise."""
        return infer.answer(turn, ctx)
