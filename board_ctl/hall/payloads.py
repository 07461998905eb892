"""The JSON payloads of docs/mqtt.md, built from a game's model (its journal) and what
the service shows live (clocks, link, phase). Pure functions: the contract in one file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import chess

from board_ctl.core.effects import Alert, AlertCleared, MoveMade
from board_ctl.hall.gamefeed import GameModel
from board_ctl.sensorlog import SIDE_NAMES

V = 1


@dataclass(frozen=True)
class Live:
    """What the service shows beside the journal, taken on its loop thread."""

    game_id: str | None  # None: no game (waiting for the start position)
    phase: str  # setup, playing, over
    link: str
    t: float  # game time of the clocks
    clocks: tuple[float | None, float | None]
    fen: str  # the position (the start position while setting up)
    tags: tuple[tuple[str, str], ...] = ()  # the next game's tags, while setting up


def _link(text: str) -> str:
    """The contract's two words for the service's link text ("lost, reconnecting")."""
    return "connected" if text.startswith("connected") else "lost"


def _head(board: str, game: str | None, now_ms: int) -> dict[str, Any]:
    return {"v": V, "board": board, "game": game, "time": now_ms}


def move_payload(board: str, model: GameModel, seq: int, move: MoveMade,
                 now_ms: int) -> dict[str, Any]:
    return {**_head(board, model.game_id, now_ms), "seq": seq, "ply": move.ply,
            "san": move.san, "uci": move.move.uci(), "fen": model.board.fen(),
            "clock": move.clock, "elapsed": move.elapsed, "t": move.t}


def alert_payload(board: str, model: GameModel, seq: int, alert: Alert,
                  now_ms: int) -> dict[str, Any]:
    return {**_head(board, model.game_id, now_ms), "seq": seq, "code": alert.code,
            "side": SIDE_NAMES[alert.side] if alert.side is not None else None,
            "squares": [chess.square_name(s) for s in alert.squares], "text": alert.text,
            "t": alert.t}


def clear_payload(board: str, model: GameModel, seq: int, cleared: AlertCleared,
                  now_ms: int) -> dict[str, Any]:
    return {**_head(board, model.game_id, now_ms), "seq": seq, "code": cleared.code,
            "t": cleared.t}


def reply_payload(board: str, command_id: object, ok: bool, error: str | None,
                  game: str | None, now_ms: int) -> dict[str, Any]:
    return {"v": V, "board": board, "id": command_id, "ok": ok, "error": error,
            "game": game, "time": now_ms}


def _player(tags: dict[str, str], side: str) -> dict[str, Any]:
    return {"name": tags.get(side) or None, "fide_id": tags.get(f"{side}FideId") or None}


def _hall_tags(tags: dict[str, str]) -> dict[str, Any]:
    board_no = tags.get("Board", "")
    return {"event": tags.get("Event") or None, "site": tags.get("Site") or None,
            "round": tags.get("Round") or None,
            "board_no": int(board_no) if board_no.isdigit() else None,
            "white": _player(tags, "White"), "black": _player(tags, "Black")}


def state_payload(board: str, model: GameModel | None, live: Live | None,
                  now_ms: int) -> dict[str, Any]:
    """The board's whole state: the game `model` (live: when it is the service's current
    game, its clocks, link and phase are the service's; else the game as its journal
    ended), or the board waiting for the start position (`model` None)."""
    if model is None:
        assert live is not None
        board_fen = chess.Board(live.fen)
        return {**_head(board, None, now_ms), **_hall_tags(dict(live.tags)),
                "start_fen": live.fen, "fen": live.fen,
                "turn": SIDE_NAMES[board_fen.turn], "ply": 0, "last_move": None,
                "clock": None, "alerts": [], "result": "*", "termination": "",
                "link": _link(live.link), "phase": "setup"}
    moves = model.record.moves
    last = moves[-1] if moves else None
    result = model.result
    current = live is not None and live.game_id == model.game_id
    turn = model.board.turn
    clock: dict[str, Any] | None = None
    if current and live is not None and None not in live.clocks:
        running = SIDE_NAMES[turn] if live.phase == "playing" and result is None else None
        clock = {"white": live.clocks[0], "black": live.clocks[1], "running": running,
                 "t": live.t}
    elif not current and any(v is not None for v in model.last_clock.values()):
        clock = {**model.last_clock, "running": None, "t": last.t if last else 0.0}
    return {
        **_head(board, model.game_id, now_ms), **_hall_tags(model.tags),
        "start_fen": model.start_fen, "fen": model.board.fen(),
        "turn": SIDE_NAMES[turn], "ply": len(moves),
        "last_move": {"ply": last.ply, "san": last.san, "uci": last.move.uci()} if last else None,
        "clock": clock,
        "alerts": [{"code": a.code, "side": a.side, "squares": a.squares, "text": a.text,
                    "t": a.t, "acknowledged_by": a.acknowledged_by}
                   for a in model.alerts.values()],
        "result": result.result if result else "*",
        "termination": result.termination if result else "",
        "link": _link(live.link) if current and live is not None else "connected",
        "phase": "over" if result is not None else ("playing" if current else "over"),
    }
