"""Sensor-log simulator: real games rendered as the raw events a human produces at
the board, cleanly or with one scripted rule violation (`classic.py`: under the older
Laws of the `classic` profile, with their own infractions). An independent model of the
player, used to test the controller honestly (it does not use board_ctl.core)."""

from __future__ import annotations

from board_ctl.simulate.render import (
    CAPTURE_STYLES,
    CASTLING_STYLES,
    EP_ORDERS,
    PROMOTE_TIMINGS,
    PROMOTION_STYLES,
    PlyTrace,
    RenderedGame,
    RenderStyle,
    render_game,
)
from board_ctl.simulate.violations import (
    VIOLATION_CODES,
    NoEligiblePly,
    eligible_plies,
    render_violation,
)

__all__ = [
    "CAPTURE_STYLES",
    "CASTLING_STYLES",
    "EP_ORDERS",
    "PROMOTE_TIMINGS",
    "PROMOTION_STYLES",
    "VIOLATION_CODES",
    "NoEligiblePly",
    "PlyTrace",
    "RenderStyle",
    "RenderedGame",
    "eligible_plies",
    "render_game",
    "render_violation",
]
