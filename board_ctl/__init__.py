"""board_ctl: a reed-switch chessboard controller and arbiter."""

from __future__ import annotations

__version__ = "0.1.0"
