"""The sensor log: JSON Lines of raw board events (see shared/spec/sensor-log.md).

Reading never stops at a bad line: each one becomes a `SensorLogError` carrying its
line number, and the rest of the log is still read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import chess

from board_ctl.core import events as ev
from board_ctl.core.timebase import MAX_SECONDS
from board_ctl.core.timecontrol import TimeControl
from board_ctl.errors import SensorLogError

SIDES = {"white": chess.WHITE, "black": chess.BLACK}
_TAG_NAME = re.compile(r"[A-Za-z0-9_]+")
_TAGS_OF_OUR_OWN = {"FEN", "SetUp", "Result", "TimeControl", "Termination"}
SIDE_NAMES = {chess.WHITE: "white", chess.BLACK: "black"}
PROMOTION_PIECES = {"q": chess.QUEEN, "r": chess.ROOK, "b": chess.BISHOP, "n": chess.KNIGHT}


@dataclass(frozen=True)
class StartInfo:
    """The optional first line: starting position, time control and PGN tags."""

    fen: str = chess.STARTING_FEN
    time_control: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    remote: chess.Color | None = None  # the side a computer plays (None: both at the board)
    # What was wrong with the line and left out (the rest of it still counts).
    problems: tuple[str, ...] = field(default=(), compare=False)


@dataclass
class SensorLog:
    start: StartInfo
    events: list[ev.Event]
    errors: list[SensorLogError]


def _square(obj: dict[str, Any], key: str = "sq") -> chess.Square:
    name = obj.get(key)
    if not isinstance(name, str) or name.lower() not in chess.SQUARE_NAMES:
        raise ValueError(f"{key!r} must be a square name such as \"e4\", not {name!r}")
    return chess.parse_square(name.lower())


def _side(obj: dict[str, Any]) -> chess.Color:
    name = obj.get("side")
    if name not in SIDES:
        raise ValueError(f"'side' must be \"white\" or \"black\", not {name!r}")
    return SIDES[name]


def _start(obj: dict[str, Any]) -> StartInfo:
    fen = obj.get("fen", chess.STARTING_FEN)
    if not isinstance(fen, str):
        raise ValueError("'fen' must be a string")
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise ValueError(f"bad FEN {fen!r}: {exc}") from None
    if not board.is_valid():
        raise ValueError(f"FEN {fen!r} is not a legal position ({board.status()!r})")
    problems: list[str] = []
    raw_tc = obj.get("time_control")
    tc: str | None = None
    if raw_tc is not None:
        try:
            tc = str(TimeControl.parse(raw_tc if isinstance(raw_tc, str) else ""))
        except ValueError as exc:
            problems.append(f"{exc}; the game is replayed without a clock")
    tags = obj.get("tags", {})
    if not isinstance(tags, dict):
        problems.append("'tags' must be an object of PGN tags; left out")
        tags = {}
    good: dict[str, str] = {}
    for name, value in tags.items():
        if not _TAG_NAME.fullmatch(name) or name in _TAGS_OF_OUR_OWN:
            problems.append(f"tag {name!r} left out: not a PGN tag name, or one the game "
                            "record sets itself")
        elif not isinstance(value, str) or '"' in value or "\n" in value:
            problems.append(f"tag {name!r} left out: its value must be one line of text "
                            "without double quotes")
        else:
            good[name] = value
    remote = obj.get("remote")
    if remote is not None and remote not in SIDES:
        problems.append(f"'remote' must be \"white\" or \"black\", not {remote!r}; left out")
        remote = None
    return StartInfo(fen=board.fen(), time_control=tc, tags=good,
                     remote=None if remote is None else SIDES[remote], problems=tuple(problems))


def _snapshot(obj: dict[str, Any], t: float) -> ev.Snapshot:
    names = obj.get("occupied")
    if not isinstance(names, list):
        raise ValueError("'occupied' must be a list of square names")
    bits = 0
    for name in names:
        bits |= chess.BB_SQUARES[_square({"sq": name})]
    return ev.Snapshot(t, bits)


def _clock(obj: dict[str, Any], t: float) -> ev.ClockPressed:
    """A press; with ``white`` and ``black``, an external clock's display after it."""
    side = _side(obj)
    if "white" not in obj and "black" not in obj:
        return ev.ClockPressed(t, side)
    values = (obj.get("white"), obj.get("black"))
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise ValueError("'white' and 'black' must both be the clock's remaining seconds, "
                         f"not {values[0]!r} and {values[1]!r}")
    return ev.ClockPressed(t, side, (float(values[0]), float(values[1])))  # type: ignore[arg-type]


def _uci(obj: dict[str, Any]) -> chess.Move:
    text = obj.get("uci")
    try:
        if not isinstance(text, str):
            raise ValueError
        move = chess.Move.from_uci(text)
    except ValueError:
        raise ValueError(f"'uci' must be a move such as \"e7e5\", not {text!r}") from None
    if not move:
        raise ValueError("'uci' must be a move, not the null move")
    return move


_PARSERS: dict[str, Callable[[dict[str, Any], float], ev.Event]] = {
    "lift": lambda o, t: ev.Lifted(t, _square(o)),
    "place": lambda o, t: ev.Placed(t, _square(o)),
    "clock": _clock,
    "resign": lambda o, t: ev.Resigned(t, _side(o)),
    "draw-offer": lambda o, t: ev.DrawOffered(t, _side(o)),
    "draw-accept": lambda o, t: ev.DrawAccepted(t, _side(o)),
    "claim": lambda o, t: ev.DrawClaimed(t, _side(o)),
    "snapshot": _snapshot,
    # The remote side (a computer) and the buttons for playing it.
    "opponent-move": lambda o, t: ev.OpponentMoved(t, _uci(o)),
    "hint": lambda o, t: ev.HintAsked(t),
    "hint-move": lambda o, t: ev.HintGiven(t, _uci(o)),
    "takeback": lambda o, t: ev.TakebackAsked(t),
}


def _promote(obj: dict[str, Any], t: float) -> ev.PromotionChosen:
    piece = obj.get("piece")
    if not isinstance(piece, str) or piece.lower() not in PROMOTION_PIECES:
        raise ValueError(f"'piece' must be one of q, r, b, n, not {piece!r}")
    return ev.PromotionChosen(t, PROMOTION_PIECES[piece.lower()])


_PARSERS["promote"] = _promote


def parse_line(text: str, line: int) -> ev.Event | StartInfo | None:
    """One log line as an event (or StartInfo); None for a blank line."""
    if not text.strip():
        return None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SensorLogError(f"not valid JSON ({exc.msg} at column {exc.colno})", line) from None
    if not isinstance(obj, dict):
        raise SensorLogError("not a JSON object", line)
    kind = obj.get("ev")
    t = obj.get("t", 0.0 if kind == "start" else None)
    if (isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= MAX_SECONDS
            or not math.isfinite(t)):  # (bounded first: a 4,000-digit int overflows isfinite)
        raise SensorLogError(f"'t' must be a number of seconds from 0 to {MAX_SECONDS:.0e}, "
                             f"not {str(t)[:24]}", line)
    try:
        if kind == "start":
            return _start(obj)
        parser = _PARSERS.get(kind)  # type: ignore[arg-type]
        if parser is None:
            raise ValueError(f"unknown event {kind!r}")
        return parser(obj, float(t))
    except ValueError as exc:
        raise SensorLogError(str(exc), line) from None


def iter_sensor_log(
    lines: Iterable[str],
) -> Iterator[tuple[int, ev.Event | StartInfo | SensorLogError]]:
    """Yield (line number, event or StartInfo or error) for every non-blank line."""
    last_t = 0.0
    for number, text in enumerate(lines, start=1):
        try:
            item = parse_line(text, number)
        except SensorLogError as exc:
            yield number, exc
            continue
        if item is None:
            continue
        if isinstance(item, StartInfo):
            if number != 1:
                yield number, SensorLogError("'start' is only allowed on the first line", number)
                continue
            for problem in item.problems:
                yield number, SensorLogError(problem, number)
        elif item.t < last_t:
            yield number, SensorLogError(
                f"time goes backwards ({item.t} after {last_t}); line skipped", number
            )
            continue
        else:
            last_t = item.t
        yield number, item


def read_sensor_log(stream: IO[str] | Iterable[str]) -> SensorLog:
    start = StartInfo()
    events: list[ev.Event] = []
    errors: list[SensorLogError] = []
    for _, item in iter_sensor_log(stream):
        if isinstance(item, SensorLogError):
            errors.append(item)
        elif isinstance(item, StartInfo):
            start = item
        else:
            events.append(item)
    return SensorLog(start, events, errors)


def event_to_json(event: ev.Event) -> dict[str, Any]:
    """The sensor-log object for an event (the inverse of `parse_line`)."""
    t = round(event.t, 6)
    match event:
        case ev.Lifted(square=sq):
            return {"t": t, "ev": "lift", "sq": chess.square_name(sq)}
        case ev.Placed(square=sq):
            return {"t": t, "ev": "place", "sq": chess.square_name(sq)}
        case ev.ClockPressed(side=side, times=None):
            return {"t": t, "ev": "clock", "side": SIDE_NAMES[side]}
        case ev.ClockPressed(side=side, times=(white, black)):
            return {"t": t, "ev": "clock", "side": SIDE_NAMES[side], "white": white,
                    "black": black}
        case ev.PromotionChosen(piece=piece):
            return {"t": t, "ev": "promote", "piece": chess.piece_symbol(piece)}
        case ev.Resigned(side=side):
            return {"t": t, "ev": "resign", "side": SIDE_NAMES[side]}
        case ev.DrawOffered(side=side):
            return {"t": t, "ev": "draw-offer", "side": SIDE_NAMES[side]}
        case ev.DrawAccepted(side=side):
            return {"t": t, "ev": "draw-accept", "side": SIDE_NAMES[side]}
        case ev.DrawClaimed(side=side):
            return {"t": t, "ev": "claim", "side": SIDE_NAMES[side]}
        case ev.Snapshot(occupied=bits):
            return {"t": t, "ev": "snapshot",
                    "occupied": [chess.square_name(s) for s in chess.scan_forward(bits)]}
        case ev.OpponentMoved(move=move):
            return {"t": t, "ev": "opponent-move", "uci": move.uci()}
        case ev.HintAsked():
            return {"t": t, "ev": "hint"}
        case ev.HintGiven(move=move):
            return {"t": t, "ev": "hint-move", "uci": move.uci()}
        case ev.TakebackAsked():
            return {"t": t, "ev": "takeback"}
    raise TypeError(f"not a sensor-log event: {event!r}")


def start_to_json(start: StartInfo) -> dict[str, Any]:
    obj: dict[str, Any] = {"t": 0.0, "ev": "start", "fen": start.fen}
    if start.time_control:
        obj["time_control"] = start.time_control
    if start.tags:
        obj["tags"] = start.tags
    if start.remote is not None:
        obj["remote"] = SIDE_NAMES[start.remote]
    return obj


def dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False)
