"""What a port knows of the board when it answers: the pieces an app is shown and the
clock, read at any moment from the last state the service published."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import chess


@dataclass(frozen=True, slots=True)
class ClockState:
    """The game clock as the service last published it. `at` and the `now` given to the
    methods are the port's clock (time.monotonic); `scale` is how much faster than that
    the game's time runs (an emulator played at --speed N)."""

    white: float | None = None  # seconds left; None: no clock in this game
    black: float | None = None
    running: chess.Color | None = None  # whose time runs
    at: float = 0.0
    scale: float = 1.0
    turn: chess.Color = chess.WHITE  # the side to move (the clock's lever)

    @property
    def present(self) -> bool:
        return self.white is not None and self.black is not None

    def remaining(self, now: float) -> tuple[float, float]:
        white = self.white if self.white is not None else 0.0
        black = self.black if self.black is not None else 0.0
        spent = max(0.0, now - self.at) * self.scale
        if self.running == chess.WHITE:
            white -= spent
        elif self.running == chess.BLACK:
            black -= spent
        return max(white, 0.0), max(black, 0.0)

    def next_change(self, now: float) -> float | None:
        """When the running side's whole seconds next change (None: nothing runs)."""
        if self.running is None or not self.present:
            return None
        left = self.remaining(now)[0 if self.running == chess.WHITE else 1]
        if left <= 0:
            return None
        fraction = left - math.floor(left)
        return now + (fraction if fraction > 0 else 1.0) / self.scale + 1e-3


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The board for an app: the pieces it is shown and the clock."""

    pieces: Mapping[chess.Square, chess.Piece] = field(default_factory=dict)
    clock: ClockState = ClockState()
