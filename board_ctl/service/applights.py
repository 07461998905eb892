"""What the square LEDs show when an app (a chess program on a DGT or ChessLink port)
asks to light squares: the referee's frame first, always.

While an alert is open, or the frame guides pieces back, the app's lights are not shown
at all: nothing may hide "put this piece back". Otherwise the app's squares are lit
where the referee's frame leaves the square dark. Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from board_ctl.core.effects import LedFrame, SquareLight


def compose(frame: LedFrame, app: Iterable[SquareLight], alert_open: bool) -> LedFrame:
    if alert_open or frame.guidance:
        return frame
    taken = {light.square for light in frame.squares}
    extra = [light for light in app if light.square not in taken]
    if not extra:
        return frame
    squares = tuple(sorted((*frame.squares, *extra), key=lambda light: light.square))
    return dataclasses.replace(frame, squares=squares)
