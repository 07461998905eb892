"""What a LiveChess client is told about the board, built from the service's ViewState.

LiveChess describes an e-board by its `board` (the piece placement of a FEN), its
`clock`, and for a feed the moves it reconstructed since `start`. A DGT board sees which
piece stands where; ours senses presence only, so `board` is the game's position as the
referee tracks it: the last complete move's position, never a half-made move, and always
from White's side (lichess.org/dgt compares it byte for byte with chessops'
makeBoardFen to find which of your games is on the board).
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass
from typing import Any

import chess

from board_ctl.service.view import ViewState


@dataclass(frozen=True)
class ClockReport:
    white: float  # seconds left
    black: float
    run: bool | None  # True: White's clock runs, False: Black's, None: stopped
    time_ms: int  # epoch ms of the reading, so a client can run the clock on itself

    def json(self) -> dict[str, Any]:
        return {"white": round(self.white), "black": round(self.black), "run": self.run,
                "time": self.time_ms}


@dataclass(frozen=True)
class BoardReport:
    """The board at one moment, as the endpoint reports it."""

    source: str | None  # the port or device the board is on
    active: bool  # the board answers (its link is up)
    placement: str  # FEN piece placement of the game's position
    start: str  # the FEN the moves are counted from
    san: tuple[str, ...]  # every move since `start`
    match: bool  # the sensors show exactly the game's position
    clock: ClockReport | None
    phase: str  # the service's: "setup", "playing" or "over"
    game: int  # the service's game number (0 before the first)


def initial_report(start_fen: str) -> BoardReport:
    """Before the service has shown anything: the start position, the board not heard."""
    return BoardReport(None, False, start_fen.split()[0], start_fen, (), False, None,
                       "setup", 0)


@functools.lru_cache(maxsize=16)
def _position(fen: str) -> tuple[str, chess.Bitboard]:
    """(piece placement, occupied squares) of a FEN: most states repeat the last one's."""
    board = chess.Board(fen)
    return board.board_fen(), board.occupied


def report_from(state: ViewState, time_ms: int) -> BoardReport:
    """The report for a ViewState the service published at epoch `time_ms`."""
    placement, occupied = _position(state.fen)
    white, black = state.clocks
    clock = None
    if white is not None and black is not None:
        run = None if state.running is None else state.running == chess.WHITE
        clock = ClockReport(white, black, run, time_ms)
    return BoardReport(
        source=state.board or None, active=state.link == "connected",
        placement=placement, start=state.start_fen, san=state.moves,
        match=state.occupied == occupied, clock=clock, phase=state.phase,
        game=state.game)


def eboard_json(report: BoardReport, serialnr: str, flipped: bool) -> dict[str, Any]:
    """One element of the `eboards` list (the call and GET /api/v1.0/eboards)."""
    return {
        "serialnr": serialnr,
        "source": report.source,
        "state": "ACTIVE" if report.active else "NOTRESPONDING",
        "battery": None,
        "comment": None,
        "board": report.placement,
        "flipped": flipped,
        "clock": report.clock.json() if report.clock else None,
    }


def first_feed_json(report: BoardReport, serialnr: str, flipped: bool) -> dict[str, Any]:
    """The feed sent at once on subscribing: the board, no moves. LiveChess sends no `san`
    here, and lichess.org/dgt would take a non-empty one, before its own setup, as a move
    just made on the board."""
    return {"serialnr": serialnr, "flipped": flipped, "board": report.placement,
            "clock": report.clock.json() if report.clock else None}


def feed_json(report: BoardReport, serialnr: str, flipped: bool) -> dict[str, Any]:
    """A feed after a move (or a new start): every move since `start`, cumulative."""
    return {**first_feed_json(report, serialnr, flipped), "start": report.start,
            "san": list(report.san), "match": report.match}


def default_serialnr(seed: str) -> str:
    """A stable ten-digit serial number from what names this board (host and port):
    LiveChess serials are digit strings, and lichess.org/dgt takes "0" for no board."""
    return str(1_000_000_000 + zlib.crc32(seed.encode()) % 9_000_000_000)
