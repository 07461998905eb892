"""The game record: effects in; the game report (JSON Lines) and the PGN out."""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import chess

from board_ctl.core.effects import (
    Alert,
    AlertCleared,
    Effect,
    GameOver,
    LedFrame,
    MoveMade,
    Note,
    Penalty,
    Remote,
    TagsChanged,
    TakenBack,
)
from board_ctl.pgntags import check_tags, header_line
from board_ctl.sensorlog import SIDE_NAMES

if TYPE_CHECKING:
    import chess.pgn

log = logging.getLogger(__name__)

PGN_TERMINATION = {
    "time-forfeit": "time forfeit",
    "rules-infraction": "rules infraction",
    "adjudication": "adjudication",
}


def report_object(effect: Effect) -> dict[str, Any] | None:
    """The game-report line for an effect (see docs/sensor-log.md)."""
    t = round(effect.t, 4)
    match effect:
        case MoveMade(ply=ply, move=move, san=san, clock=clock, elapsed=elapsed,
                      uncertain=uncertain):
            line: dict[str, Any] = {"t": t, "kind": "move", "ply": ply, "uci": move.uci(),
                                    "san": san}
            if clock is not None:
                line["clock"] = clock
            if elapsed is not None:
                line["elapsed"] = elapsed
            if uncertain:  # the move recorded first, then the other readings
                line["uncertain"] = [move.uci()] + [other.uci() for other in uncertain]
            return line
        case Alert(code=code, side=side, squares=squares, text=text):
            return {"t": t, "kind": "alert", "code": code,
                    "side": SIDE_NAMES[side] if side is not None else None,
                    "squares": [chess.square_name(s) for s in squares], "text": text}
        case AlertCleared(code=code):
            return {"t": t, "kind": "clear", "code": code}
        case GameOver(result=result, termination=termination):
            return {"t": t, "kind": "result", "result": result, "termination": termination}
        case Penalty(to_side=side, seconds=seconds, reason=reason):
            return {"t": t, "kind": "penalty", "to": SIDE_NAMES[side], "seconds": seconds,
                    "reason": reason}
        case Note(text=text):
            return {"t": t, "kind": "note", "text": text}
        case TagsChanged(tags=tags):
            return {"t": t, "kind": "tags", "tags": dict(tags)}
        case LedFrame():
            return led_object(effect)
        case TakenBack(plies=plies):
            return {"t": t, "kind": "takeback", "plies": plies}
    return None


def led_object(frame: LedFrame) -> dict[str, Any]:
    status = frame.status
    return {
        "t": round(frame.t, 4),
        "kind": "leds",
        "squares": {
            chess.square_name(light.square): [light.colour.name.lower(), light.blink.name.lower()]
            for light in frame.squares
        },
        "status": {
            "white_to_move": status.white_to_move,
            "black_to_move": status.black_to_move,
            "alert": status.alert.name.lower() if status.alert is not None else "off",
            "game_over": status.game_over,
            **_remote_status(frame),
        },
        "buzzer": frame.buzzer.name.lower(),
        "guidance": [[chess.square_name(a), chess.square_name(b)] for a, b in frame.guidance],
    }


def _remote_status(frame: LedFrame) -> dict[str, Any]:
    """Against a computer: what the status LEDs say of it (absent otherwise)."""
    status = frame.status
    if status.remote == Remote.NONE:
        return {}
    shown: dict[str, Any] = {"remote": status.remote.name.lower()}
    if status.promotion is not None:
        shown["promotion"] = chess.piece_symbol(status.promotion)
    return shown


@dataclass
class GameRecord:
    """Collects a game's effects; writes its report and its PGN."""

    start_fen: str = chess.STARTING_FEN
    tags: dict[str, str] = field(default_factory=dict)
    time_control: str | None = None
    moves: list[MoveMade] = field(default_factory=list)
    result: GameOver | None = None
    report: list[dict[str, Any]] = field(default_factory=list)
    # Comments by ply: 0 is before the first move; n is after move n.
    comments: dict[int, list[str]] = field(default_factory=dict)

    def add(self, effect: Effect) -> None:
        line = report_object(effect)
        if line is not None:
            self.report.append(line)
        match effect:
            case MoveMade():
                self.moves.append(effect)
            case TakenBack(plies=plies):
                kept = max(len(self.moves) - plies, 0)
                undone = " ".join(m.san for m in self.moves[kept:])
                del self.moves[kept:]
                for ply in sorted(p for p in self.comments if p > kept):
                    self.comments.setdefault(kept, []).extend(self.comments.pop(ply))
                self.comments.setdefault(kept, []).append(f"taken back: {undone}")
            case GameOver():
                self.result = effect
            case Alert(code=code, text=text):
                self.comments.setdefault(len(self.moves), []).append(f"{code}: {text}")
            case Note(text=text):
                self.comments.setdefault(len(self.moves), []).append(text)
            case TagsChanged(tags=tags):
                for name, value in tags:  # an empty value removes the tag
                    if value:
                        self.tags[name] = value
                    else:
                        self.tags.pop(name, None)

    def extend(self, effects: list[Effect]) -> None:
        for effect in effects:
            self.add(effect)

    def report_lines(self) -> list[str]:
        ordered = sorted(self.report, key=lambda line: line["t"])  # stable: causes stay first
        return [json.dumps(line, ensure_ascii=False) for line in ordered]

    def pgn_game(self, date: dt.date | None = None) -> chess.pgn.Game:
        import chess.pgn  # here: chess.pgn pulls in chess.engine and asyncio

        # The tags were checked where they came in; a tag that still cannot be written
        # truthfully is left out rather than cost the game its PGN.
        tags, problems = check_tags(self.tags)
        for problem in problems:
            log.warning("PGN: %s", problem)
        game = chess.pgn.Game()
        board = chess.Board(self.start_fen)
        if self.start_fen != chess.STARTING_FEN:
            game.setup(board)
        day = date or dt.date.today()
        game.headers["Event"] = tags.get("Event", "board_ctl game")
        game.headers["Site"] = tags.get("Site", "?")
        game.headers["Date"] = tags.get("Date", day.strftime("%Y.%m.%d"))
        game.headers["Round"] = tags.get("Round", "-")
        game.headers["White"] = tags.get("White", "?")
        game.headers["Black"] = tags.get("Black", "?")
        result = self.result.result if self.result else "*"
        game.headers["Result"] = result
        if self.time_control:
            game.headers["TimeControl"] = self.time_control
        for key, value in tags.items():
            if key not in game.headers:
                game.headers[key] = value
        if self.result:
            game.headers["Termination"] = PGN_TERMINATION.get(self.result.termination, "normal")
        else:
            game.headers["Termination"] = "unterminated"
        node: chess.pgn.GameNode = game
        if self.comments.get(0):
            game.comment = " ".join(self.comments[0])
        for ply, made in enumerate(self.moves, start=1):
            node = node.add_variation(made.move)
            if self.comments.get(ply):
                node.comment = " ".join(self.comments[ply])
            if made.clock is not None:
                node.set_clock(made.clock)
            if made.elapsed is not None:
                node.set_emt(made.elapsed)
        if self.result:
            ending = f"{self.result.termination.replace('-', ' ')}"
            node.comment = f"{node.comment} {ending}".strip() if node is not game else ending
        return game

    def pgn_text(self, date: dt.date | None = None) -> str:
        """The game as PGN export format. The tag section is written here, values
        escaped as the standard says (python-chess 1.11 writes them raw), the movetext
        by python-chess."""
        import chess.pgn

        game = self.pgn_game(date)
        tags = "\n".join(header_line(name, value) for name, value in game.headers.items())
        exporter = chess.pgn.StringExporter(headers=False, variations=True, comments=True)
        return f"{tags}\n\n{game.accept(exporter)}\n"
