"""Sensor-log simulator: real games rendered as the raw events a human produces at
the board, cleanly, with one scripted rule violation, with a named handling behaviour
(behaviours.py: slow slides, knocked pieces, illegal castling, a scramble), or under the
older Laws of the `classic` profile with their own infractions (classic.py). An independent model of the
player, used to test the controller honestly (it does not use board_ctl.core)."""

from __future__ import annotations

from board_ctl.simulate.behaviours import BEHAVIOURS, Behaviour, render_behaviour
from board_ctl.simulate.handling import HANDLING_EVENTS, render_handling
from board_ctl.simulate.render import (
    CAPTURE_STYLES,
    CASTLING_STYLES,
    EP_ORDERS,
    PROMOTE_TIMINGS,
    PROMOTION_STYLES,
    PlyTrace,
    RenderedGame,
    RenderStyle,
    SlowSlide,
    render_game,
)
from board_ctl.simulate.violations import (
    VIOLATION_CODES,
    NoEligiblePly,
    eligible_plies,
    render_violation,
)

__all__ = [
    "BEHAVIOURS",
    "CAPTURE_STYLES",
    "CASTLING_STYLES",
    "EP_ORDERS",
    "HANDLING_EVENTS",
    "PROMOTE_TIMINGS",
    "PROMOTION_STYLES",
    "VIOLATION_CODES",
    "Behaviour",
    "NoEligiblePly",
    "PlyTrace",
    "RenderStyle",
    "RenderedGame",
    "SlowSlide",
    "eligible_plies",
    "render_behaviour",
    "render_game",
    "render_handling",
    "render_violation",
]
