"""What the page shows, as JSON: a board's card for the grid, a board in full.

The spectator's view is the arbiter's without the alerts' details, the commands and
the journal: `arbiter=False` leaves them out here, so they never reach a spectator's
browser at all."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import chess
import chess.svg

from board_ctl.station.model import AlertEntry, Board, ClockReading, Game, Move

ALERT_FILL = "#e0102080"
LASTMOVE_COLOURS = {"square light lastmove": "#cdd26a", "square dark lastmove": "#aaa23a"}


@lru_cache(maxsize=4096)
def diagram(fen: str, lastmove: str | None, alert_squares: tuple[str, ...], size: int) -> str:
    """The board as SVG (python-chess), the last move tinted, alert squares in red."""
    position = chess.Board(fen)
    move = chess.Move.from_uci(lastmove) if lastmove else None
    fill = {chess.parse_square(s): ALERT_FILL for s in alert_squares if s in chess.SQUARE_NAMES}
    check = position.king(position.turn) if position.is_check() else None
    return chess.svg.board(position, lastmove=move, fill=fill, check=check, size=size,
                           coordinates=size >= 300, colors=LASTMOVE_COLOURS)


def move_label(ply: int, san: str, start_fen: str = chess.STARTING_FEN) -> str:
    """`23. Nf3` or `23... Nf6`, counted from the game's start position."""
    board = chess.Board(start_fen)
    first = board.fullmove_number
    black_first = board.turn == chess.BLACK
    index = ply - 1 + (1 if black_first else 0)
    number = first + index // 2
    return f"{number}. {san}" if index % 2 == 0 else f"{number}... {san}"


def clock_json(reading: ClockReading | None) -> dict[str, Any] | None:
    if reading is None:
        return None
    return {"white_ms": reading.white_ms, "black_ms": reading.black_ms,
            "running": reading.running, "time_ms": reading.time_ms}


def alert_json(alert: AlertEntry) -> dict[str, Any]:
    return {"code": alert.code, "side": alert.side, "squares": list(alert.squares),
            "text": alert.text, "t_ms": alert.t_ms, "raised_ms": alert.raised_ms,
            "cleared_ms": alert.cleared_ms, "acknowledged_by": alert.acknowledged_by}


def _last_move(game: Game) -> dict[str, Any] | None:
    last: Move | None = game.moves.get(game.ply)
    if last is not None:
        return {"ply": last.ply, "san": last.san, "uci": last.uci,
                "label": move_label(last.ply, last.san, game.start_fen)}
    data = game.last_move
    if data and isinstance(data.get("ply"), int) and isinstance(data.get("san"), str):
        uci = data.get("uci") if isinstance(data.get("uci"), str) else None
        return {"ply": data["ply"], "san": data["san"], "uci": uci,
                "label": move_label(data["ply"], data["san"], game.start_fen)}
    return None


def card(board: Board, arbiter: bool, size: int = 220) -> dict[str, Any]:
    game = board.game
    view: dict[str, Any] = {"id": board.board, "status": board.status or "unknown",
                            "game": None, "setting_up": board.setting_up_ms is not None}
    if game is None:
        view["svg"] = diagram(chess.STARTING_FEN, None, (), size)
        return view
    last = _last_move(game)
    open_alerts = game.open_alerts()
    squares = tuple(sorted({s for a in open_alerts for s in a.squares})) if arbiter else ()
    view.update({
        "game": game.game,
        "board_no": game.board_no,
        "round": game.round,
        "event": game.event,
        "white": {"name": game.white.name, "fide_id": game.white.fide_id},
        "black": {"name": game.black.name, "fide_id": game.black.fide_id},
        "fen": game.fen,
        "turn": game.turn,
        "ply": game.ply,
        "last_move": last,
        "clock": clock_json(game.clock),
        "result": game.result,
        "termination": game.termination,
        "phase": game.phase,
        "link": game.link,
        # not all of the game has reached the station yet: never shown as complete
        "catching_up": game.catching_up,
        "missing_moves": game.missing,
        "svg": diagram(game.fen, last["uci"] if last else None, squares, size),
    })
    if arbiter:
        view["alerts"] = [alert_json(a) for a in open_alerts]
    return view


def detail(board: Board, arbiter: bool) -> dict[str, Any]:
    view = card(board, arbiter, size=420)
    game = board.game
    if game is None:
        view.update(moves=[], clock_history=[], games=[])
        return view
    view["moves"] = [{"ply": m.ply, "san": m.san, "label": move_label(m.ply, m.san, game.start_fen),
                      "clock_ms": m.clock_ms, "elapsed_ms": m.elapsed_ms}
                     for m in game.known_moves()]
    view["clock_history"] = [
        {"ply": e.ply, "white_ms": e.white_ms, "black_ms": e.black_ms,
         "elapsed_ms": e.elapsed_ms, "source": e.source,
         "label": move_label(e.ply, game.moves[e.ply].san, game.start_fen)
         if e.ply in game.moves else ("start" if e.ply == 0 else f"ply {e.ply}")}
        for e in game.clock_history]
    view["games"] = [{"game": g.game, "result": g.result, "plies": g.ply,
                      "white": g.white.name, "black": g.black.name, "round": g.round,
                      "catching_up": g.catching_up}
                     for g in board.games.values()]
    if arbiter:
        view["alert_history"] = [alert_json(a) for a in game.alerts]
    return view
