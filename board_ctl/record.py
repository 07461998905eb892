"""The game record: effects in; the game report (JSON Lines) and the PGN out."""

from __future__ import annotations

import datetime as dt
import enum
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import chess

from board_ctl.core.effects import (
    Alert,
    AlertCleared,
    Blink,
    Buzzer,
    Colour,
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

UNKNOWN_EVENT = "?"  # a game's Event tag when none was given (the PGN standard's "unknown")

PGN_TERMINATION = {
    "time-forfeit": "time forfeit",
    "late-arrival": "time forfeit",
    "rules-infraction": "rules infraction",
    "adjudication": "adjudication",
}


def report_object(effect: Effect) -> dict[str, Any] | None:
    """The game-report line for an effect (see docs/sensor-log.md)."""
    write = _REPORT_LINES.get(type(effect))
    return write(effect) if write is not None else None


def _move_line(effect: MoveMade) -> dict[str, Any]:
    line: dict[str, Any] = {"t": round(effect.t, 4), "kind": "move", "ply": effect.ply,
                            "uci": effect.move.uci(), "san": effect.san}
    if effect.clock is not None:
        line["clock"] = effect.clock
    if effect.elapsed is not None:
        line["elapsed"] = effect.elapsed
    if effect.uncertain:  # the move recorded first, then the other readings
        line["uncertain"] = [effect.move.uci()] + [o.uci() for o in effect.uncertain]
    return line


def _alert_line(effect: Alert) -> dict[str, Any]:
    side = effect.side
    return {"t": round(effect.t, 4), "kind": "alert", "code": effect.code,
            "side": SIDE_NAMES[side] if side is not None else None,
            "squares": [_SQUARE_NAMES[s] for s in effect.squares], "text": effect.text}


def _penalty_line(effect: Penalty) -> dict[str, Any]:
    return {"t": round(effect.t, 4), "kind": "penalty", "to": SIDE_NAMES[effect.to_side],
            "seconds": effect.seconds, "reason": effect.reason}


_REPORT_LINES: dict[type, Callable[[Any], dict[str, Any]]] = {
    MoveMade: _move_line,
    Alert: _alert_line,
    AlertCleared: lambda e: {"t": round(e.t, 4), "kind": "clear", "code": e.code},
    GameOver: lambda e: {"t": round(e.t, 4), "kind": "result", "result": e.result,
                         "termination": e.termination},
    Penalty: _penalty_line,
    Note: lambda e: {"t": round(e.t, 4), "kind": "note", "text": e.text},
    TagsChanged: lambda e: {"t": round(e.t, 4), "kind": "tags", "tags": dict(e.tags)},
    LedFrame: lambda e: led_object(e),
    TakenBack: lambda e: {"t": round(e.t, 4), "kind": "takeback", "plies": e.plies},
}
_SQUARE_NAMES = chess.SQUARE_NAMES


def _names(kind: type[enum.IntEnum]) -> dict[int, str]:
    """A member's name as the report writes it, by member (one table an enum: IntEnum
    members of different enums compare equal)."""
    return {member: member.name.lower() for member in kind}


_COLOURS, _BLINKS, _BUZZERS = _names(Colour), _names(Blink), _names(Buzzer)


def led_object(frame: LedFrame) -> dict[str, Any]:
    status = frame.status
    squares = _SQUARE_NAMES
    blinks = _BLINKS
    shown: dict[str, Any] = {
        "white_to_move": status.white_to_move,
        "black_to_move": status.black_to_move,
        "alert": blinks[status.alert] if status.alert is not None else "off",
        "game_over": status.game_over,
    }
    if status.remote != Remote.NONE:
        shown.update(_remote_status(frame))
    colours = _COLOURS
    return {
        "t": round(frame.t, 4),
        "kind": "leds",
        "squares": {squares[light.square]: [colours[light.colour], blinks[light.blink]]
                    for light in frame.squares},
        "status": shown,
        "buzzer": _BUZZERS[frame.buzzer],
        "guidance": [[squares[a], squares[b]] for a, b in frame.guidance],
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
    rules: str | None = None  # the [Rules] tag: the profile, where it is not FIDE's Laws
    moves: list[MoveMade] = field(default_factory=list)
    result: GameOver | None = None
    report: list[dict[str, Any]] = field(default_factory=list)
    # Comments by ply: 0 is before the first move; n is after move n.
    comments: dict[int, list[str]] = field(default_factory=dict)

    def add(self, effect: Effect) -> None:
        line = report_object(effect)
        if line is not None:
            self.report.append(line)
        if type(effect) is LedFrame:
            return  # (the commonest effect: a report line only)
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
        add = self.add
        for effect in effects:
            add(effect)

    def report_lines(self) -> list[str]:
        ordered = sorted(self.report, key=_time_of)  # stable: causes stay first
        encode = _JSON.encode
        return [encode(line) for line in ordered]

    def pgn_game(self, date: dt.date | None = None) -> chess.pgn.Game:
        """The game as a python-chess game: its tags, moves, comments and clock times."""
        game = self._pgn_tags(date)
        self._pgn_moves(game)
        return game

    def _pgn_tags(self, date: dt.date | None) -> chess.pgn.Game:
        """A python-chess game holding the tags alone (its start position set up)."""
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
        game.headers["Event"] = tags.get("Event", UNKNOWN_EVENT)
        game.headers["Site"] = tags.get("Site", "?")
        game.headers["Date"] = tags.get("Date", day.strftime("%Y.%m.%d"))
        game.headers["Round"] = tags.get("Round", "-")
        game.headers["White"] = tags.get("White", "?")
        game.headers["Black"] = tags.get("Black", "?")
        result = self.result.result if self.result else "*"
        game.headers["Result"] = result
        if self.time_control:
            game.headers["TimeControl"] = self.time_control
        if self.rules:
            game.headers["Rules"] = self.rules
        for key, value in tags.items():
            if key not in game.headers:
                game.headers[key] = value
        if self.result:
            game.headers["Termination"] = PGN_TERMINATION.get(self.result.termination, "normal")
        else:
            game.headers["Termination"] = "unterminated"
        return game

    def _pgn_moves(self, game: chess.pgn.Game) -> None:
        """The moves, comments and clock times added to `game`."""
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

    def pgn_text(self, date: dt.date | None = None) -> str:
        """The game as PGN export format. The tag section is written here, values
        escaped as the standard says (python-chess 1.11 writes them raw); the movetext
        as python-chess's exporter writes it, from the SAN the referee recorded with each
        move (python-chess itself writes it when a comment holds an annotation it would
        rewrite)."""
        import chess.pgn

        game = self._pgn_tags(date)
        tags = "\n".join(header_line(name, value) for name, value in game.headers.items())
        movetext = self._movetext(game.headers.get("Result", "*"))
        if movetext is None:
            self._pgn_moves(game)
            exporter = chess.pgn.StringExporter(headers=False, variations=True, comments=True)
            movetext = game.accept(exporter)
        return f"{tags}\n\n{movetext}\n"

    def _movetext(self, result: str) -> str | None:
        """The movetext exactly as python-chess's StringExporter (80 columns, comments
        and variations on) writes `pgn_game()`, without building or replaying the game:
        None when a comment holds a ``[%`` annotation (python-chess would rewrite a
        ``[%clk]`` or ``[%emt]`` in it)."""
        comments = self.comments
        if any("[%" in text for texts in comments.values() for text in texts):
            return None
        start = chess.Board(self.start_fen)
        white_to_move, number = start.turn == chess.WHITE, start.fullmove_number
        out = _Columns()
        moves = self.moves
        ending = self.result.termination.replace("-", " ") if self.result else None
        opening = " ".join(comments.get(0, ()))
        if ending is not None and not moves:
            opening = ending
        after_comment = out.comment(opening) if opening else True
        for ply, made in enumerate(moves, start=1):
            if white_to_move:
                out.token(f"{number}. ")
            elif after_comment:
                out.token(f"{number}... ")
            out.token(made.san + " ")
            comment = _annotated(" ".join(comments.get(ply, ())), made.clock, made.elapsed)
            if ending is not None and ply == len(moves):
                comment = f"{comment} {ending}".strip()
            after_comment = out.comment(comment) if comment else False
            if not white_to_move:
                number += 1
            white_to_move = not white_to_move
        out.token(result + " ")
        return out.text()


def _time_of(line: dict[str, Any]) -> float:
    return line["t"]  # type: ignore[no-any-return]


_JSON = json.JSONEncoder(ensure_ascii=False)  # (json.dumps makes one a call with this option)


def _clock_text(seconds: float) -> str:
    """H:MM:SS[.fff] as PGN's [%clk] and [%emt] annotations write a time."""
    seconds = max(0, seconds)
    hours = int(seconds // 3600)
    minutes = int(seconds % 3600 // 60)
    rest = f"{seconds % 3600 % 60:06.3f}".rstrip("0").rstrip(".")
    return f"{hours:d}:{minutes:02d}:{rest}"


def _annotated(comment: str, clock: float | None, elapsed: float | None) -> str:
    """A move's comment with its [%clk] and then its [%emt] appended."""
    for tag, seconds in (("clk", clock), ("emt", elapsed)):
        if seconds is not None:
            if comment and not comment.endswith((" ", "\n")):
                comment += " "
            comment += f"[%{tag} {_clock_text(seconds)}]"
    return comment


class _Columns:
    """Movetext in lines of at most 80 columns, a token never split (as python-chess's
    exporter writes it: a line's trailing blanks dropped, a comment as one token)."""

    WIDTH = 80

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.line = ""

    def token(self, token: str) -> None:
        if self.WIDTH - len(self.line) < len(token):
            if self.line:
                self.lines.append(self.line.rstrip())
            self.line = ""
        self.line += token

    def comment(self, text: str) -> bool:
        """Write a comment; True (a move number is due after it)."""
        self.token("{ " + text.replace("}", "").strip() + " } ")
        return True

    def text(self) -> str:
        if self.line:
            self.lines.append(self.line.rstrip())
        return "\n".join(self.lines).rstrip()
