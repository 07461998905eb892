"""The sensor log: JSON Lines of raw board events (see docs/sensor-log.md).

Reading never stops at a bad line: each one becomes a `SensorLogError` carrying its
line number, and the rest of the log is still read. Only a `start` line whose position
cannot be played stops it (`BadStartError`): replaying the moves from another position
would record a game that was never played.

What a log may hold (anything else is a bad line, reported and skipped):

- ``t``: seconds since the game started, a number from 0 to 10^12 (the core's
  MAX_SECONDS, about 31,700 years): logs stamped with Unix-epoch seconds are fine, read
  to the microsecond up to 2^32 s (the year 2106), beyond that to a float's own
  precision. Times never go backwards.
- an external clock's ``white`` and ``black``: seconds on its display, finite numbers
  >= 0. One that is not is reported and the press kept without the times; one above
  what a clock shows (999:59:59) is kept as read, with a warning naming the line: the
  referee refuses it as a clock fault, as it would at the board.
- a line: at most 65,536 characters; the file is UTF-8, with or without a byte-order
  mark; undecodable bytes make only their own line bad.
- ``tags`` on the start line: PGN tags, checked by `board_ctl.pgntags`; a bad one is
  reported and left out. ``profile``: the rule profile the game was played under (a name
  of `board_ctl.core.profiles`); ``default_time``: seconds after which the side to move
  at the start, not come, loses. A bad one is reported and left out.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import chess

from board_ctl.core import events as ev
from board_ctl.core.profiles import PROFILES
from board_ctl.core.timebase import MAX_SECONDS
from board_ctl.core.timecontrol import MAX_CLOCK_SECONDS, TimeControl
from board_ctl.errors import SensorLogError
from board_ctl.pgntags import check_tags
from board_ctl.printable import quoted

SIDES = {"white": chess.WHITE, "black": chess.BLACK}
SIDE_NAMES = {chess.WHITE: "white", chess.BLACK: "black"}
PROMOTION_PIECES = {"q": chess.QUEEN, "r": chess.ROOK, "b": chess.BISHOP, "n": chess.KNIGHT}

MAX_T = MAX_SECONDS  # the latest time a log may hold (the core's bound)
UNIX_TIME_FROM = 1e9  # s (2001): a first event this late is stamped with the date, not from 0
MAX_LINE = 65536  # characters in one line; a longer one is skipped unread
MAX_DEFAULT_TIME = 86400.0  # s: a default time of a day at most


class BadStartError(SensorLogError):
    """A start line whose position cannot be played: the log cannot be replayed."""


class SensorLogWarning(SensorLogError):
    """A line kept as it is, but worth a word (a reading no clock can show)."""


class _Warning(str):
    """A problem of a line that is not an error: the line is kept as it is."""


@dataclass(frozen=True)
class StartInfo:
    """The optional first line: starting position, time control and PGN tags."""

    fen: str = chess.STARTING_FEN
    time_control: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    remote: chess.Color | None = None  # the side a computer plays (None: both at the board)
    # The players' opponent is not at the board (an online game, `board-ctl run
    # --livechess`): without a clock a move released is complete (core/remoteplay.py).
    release_completes: bool = False
    profile: str | None = None  # the rule profile played under (None: not said)
    default_time: float | None = None  # s: the side to move at the start, not come, loses
    # What was wrong with the line and left out (the rest of it still counts).
    problems: tuple[str, ...] = field(default=(), compare=False)


@dataclass
class SensorLog:
    start: StartInfo
    events: list[ev.Event]
    errors: list[SensorLogError]
    lines: list[int] = field(default_factory=list)  # the line number of each event
    start_line: int | None = None  # the start line's number, if the log has one
    # Lines kept as they are but worth a word (a clock reading no clock can show).
    warnings: list[SensorLogError] = field(default_factory=list)


def number(obj: dict[str, Any], key: str, low: float, high: float, what: str,
           *, below: bool = False) -> float:
    """obj[key] as a float in [low, high] ([low, high) with `below`), else ValueError.

    Compared before any conversion: a JSON integer may have thousands of digits."""
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{key!r} must be {what}, not {quoted(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{key!r} must be {what}, not {value}")
    if value < low or value > high or (below and value == high):
        shown = _digits(value) if isinstance(value, int) else value
        limits = (f"at least {low:g}" if high == math.inf else
                  f"from {low:g} to {'below ' if below else ''}{high:.10g}")
        raise ValueError(f"{key!r} must be {what}, {limits}, not {shown}")
    return float(value)


def _time(obj: dict[str, Any]) -> float:
    return number(obj, "t", 0, MAX_T, "the seconds since the game started")


def _square(obj: dict[str, Any], key: str = "sq") -> chess.Square:
    name = obj.get(key)
    if not isinstance(name, str) or name.lower() not in chess.SQUARE_NAMES:
        raise ValueError(f"{key!r} must be a square name such as \"e4\", not {quoted(name)}")
    return chess.parse_square(name.lower())


def _side(obj: dict[str, Any]) -> chess.Color:
    name = obj.get("side")
    if not isinstance(name, str) or name not in SIDES:
        raise ValueError(f"'side' must be \"white\" or \"black\", not {quoted(name)}")
    return SIDES[name]


def parse_time_control(text: object) -> TimeControl:
    """A PGN TimeControl, or ValueError (TimeControlError) saying why not; the core
    bounds every time in it by what a clock can show."""
    if not isinstance(text, str):
        raise ValueError(f"a time control is text such as \"5400+30\", not {quoted(text)}")
    return TimeControl.parse(text)


def _digits(value: int, unit: str = "") -> str:
    text = str(value)
    return text + unit if len(text) <= 20 else f"a number of {len(text)} digits"


def _start(obj: dict[str, Any]) -> StartInfo:
    problems: list[str] = []
    fen = obj.get("fen", chess.STARTING_FEN)
    if not isinstance(fen, str):
        raise BadStartError(f"'fen' must be a FEN string, not {quoted(fen)}: the game "
                            "cannot be replayed from an unknown position")
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise BadStartError(f"bad FEN {quoted(fen)}: {exc}: the game cannot be replayed "
                            "from an unknown position") from None
    if not board.is_valid():
        raise BadStartError(f"FEN {quoted(fen)} is not a legal position "
                            f"({board.status()!r}): the game cannot be replayed from it")
    raw_tc = obj.get("time_control")
    tc: str | None = None
    if raw_tc is not None:
        try:
            tc = str(parse_time_control(raw_tc))
        except ValueError as exc:
            problems.append(f"{exc}; the game is replayed without a clock")
    tags = obj.get("tags", {})
    if not isinstance(tags, dict):
        problems.append("'tags' must be an object of PGN tags; left out")
        tags = {}
    good, bad = check_tags(tags)
    problems.extend(bad)
    remote = obj.get("remote")
    if remote is not None and remote not in SIDES:
        problems.append(f"'remote' must be \"white\" or \"black\", not {quoted(remote)}; "
                        "left out")
        remote = None
    release = obj.get("release_completes", False)
    if not isinstance(release, bool):
        problems.append(f"'release_completes' must be true or false, not {quoted(release)}; "
                        "left out")
        release = False
    profile = obj.get("profile")
    if profile is not None and (not isinstance(profile, str) or profile not in PROFILES):
        problems.append(f"'profile' must be one of {', '.join(sorted(PROFILES))}, not "
                        f"{quoted(profile)}; left out")
        profile = None
    default_time = None
    if obj.get("default_time") is not None:
        try:
            default_time = number(obj, "default_time", 1, MAX_DEFAULT_TIME,
                                  "seconds after the start")
        except ValueError as exc:
            problems.append(f"{exc}; left out (no default time)")
    return StartInfo(fen=board.fen(), time_control=tc, tags=good,
                     remote=None if remote is None else SIDES[remote],
                     release_completes=release, profile=profile, default_time=default_time,
                     problems=tuple(problems))


def _snapshot(obj: dict[str, Any], t: float, problems: list[str]) -> ev.Snapshot:
    names = obj.get("occupied")
    if not isinstance(names, list):
        raise ValueError("'occupied' must be a list of square names")
    bits = 0
    for name in names:
        bits |= chess.BB_SQUARES[_square({"sq": name})]
    return ev.Snapshot(t, bits)


def _clock(obj: dict[str, Any], t: float, problems: list[str]) -> ev.ClockPressed:
    """A press; with ``white`` and ``black``, an external clock's display after it.

    Times that are no number of seconds are reported and left out: the press itself
    still counts. Times beyond any clock's display are kept, with a warning: the referee
    refuses them as a clock fault, as it would have at the board."""
    side = _side(obj)
    if "white" not in obj and "black" not in obj:
        return ev.ClockPressed(t, side)
    what = "the seconds the clock shows"
    try:
        times = (number(obj, "white", 0, math.inf, what),
                 number(obj, "black", 0, math.inf, what))
    except ValueError as exc:
        problems.append(f"{exc}; the press is kept without the clock's times")
        return ev.ClockPressed(t, side)
    for name, value in zip(("white", "black"), times):
        if value > MAX_CLOCK_SECONDS:
            problems.append(_Warning(
                f"{name!r} is {value:g} s, more than a clock shows (999:59:59): kept as "
                "read, for the referee to judge (a clock fault)"))
    return ev.ClockPressed(t, side, times)


def _uci(obj: dict[str, Any]) -> chess.Move:
    text = obj.get("uci")
    try:
        if not isinstance(text, str):
            raise ValueError
        move = chess.Move.from_uci(text)
    except ValueError:
        raise ValueError(f"'uci' must be a move such as \"e7e5\", not {quoted(text)}") from None
    if not move:
        raise ValueError("'uci' must be a move, not the null move")
    return move


def _promote(obj: dict[str, Any], t: float, problems: list[str]) -> ev.PromotionChosen:
    piece = obj.get("piece")
    if not isinstance(piece, str) or piece.lower() not in PROMOTION_PIECES:
        raise ValueError(f"'piece' must be one of q, r, b, n, not {quoted(piece)}")
    return ev.PromotionChosen(t, PROMOTION_PIECES[piece.lower()])


def _text(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key, "")
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string, not {quoted(value)}")
    return value


RESULTS = ("1-0", "0-1", "1/2-1/2")


def _arbiter_result(obj: dict[str, Any], t: float, problems: list[str]) -> ev.ArbiterResult:
    result = obj.get("result")
    if not isinstance(result, str) or result not in RESULTS:
        raise ValueError(f"'result' must be one of {', '.join(RESULTS)}, not {quoted(result)}")
    return ev.ArbiterResult(t, result, _text(obj, "reason"), _text(obj, "by"), _text(obj, "ref"))


def _set_clocks(obj: dict[str, Any], t: float, problems: list[str]) -> ev.ClocksSet:
    what = "the seconds the arbiter set"
    white = number(obj, "white", 0, MAX_CLOCK_SECONDS, what)
    black = number(obj, "black", 0, MAX_CLOCK_SECONDS, what)
    return ev.ClocksSet(t, white, black, _text(obj, "by"), _text(obj, "ref"))


def _tags(obj: dict[str, Any], t: float, problems: list[str]) -> ev.TagsSet:
    tags = obj.get("tags")
    if not isinstance(tags, dict):
        raise ValueError("'tags' must be an object of PGN tags")
    good, bad = check_tags(tags)
    if bad:
        raise ValueError("; ".join(bad))
    return ev.TagsSet(t, tuple(sorted(good.items())), _text(obj, "by"), _text(obj, "ref"))


_PARSERS: dict[str, Callable[[dict[str, Any], float, list[str]], ev.Event]] = {
    "lift": lambda o, t, p: ev.Lifted(t, _square(o)),
    "place": lambda o, t, p: ev.Placed(t, _square(o)),
    "clock": _clock,
    "resign": lambda o, t, p: ev.Resigned(t, _side(o)),
    "draw-offer": lambda o, t, p: ev.DrawOffered(t, _side(o)),
    "draw-accept": lambda o, t, p: ev.DrawAccepted(t, _side(o)),
    "claim": lambda o, t, p: ev.DrawClaimed(t, _side(o)),
    "snapshot": _snapshot,
    "promote": _promote,
    # The remote side (a computer) and the buttons for playing it.
    "opponent-move": lambda o, t, p: ev.OpponentMoved(t, _uci(o)),
    "hint": lambda o, t, p: ev.HintAsked(t),
    "hint-move": lambda o, t, p: ev.HintGiven(t, _uci(o)),
    "takeback": lambda o, t, p: ev.TakebackAsked(t),
    "arbiter-result": _arbiter_result,
    "set-clocks": _set_clocks,
    "tags": _tags,
}


def _json(text: str, line: int) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SensorLogError(f"not valid JSON ({exc.msg} at column {exc.colno})", line) from None
    except RecursionError:
        raise SensorLogError("not valid JSON (nested too deeply)", line) from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise SensorLogError(f"not valid JSON ({exc})", line) from None


def parse_line_checked(text: str, line: int,
                       problems: list[str]) -> ev.Event | StartInfo | None:
    """One log line as an event (or StartInfo); None for a blank line. What is wrong
    but left out, the rest of the line still counting, is added to `problems`."""
    if not text.strip():
        return None
    if len(text) > MAX_LINE + 1:  # a line and its newline
        raise SensorLogError(f"longer than {MAX_LINE} characters; skipped", line)
    obj = _json(text, line)
    if not isinstance(obj, dict):
        raise SensorLogError("not a JSON object", line)
    kind = obj.get("ev")
    try:
        if kind == "start":
            if "t" in obj:
                _time(obj)
            return _start(obj)
        t = _time(obj)
        parser = _PARSERS.get(kind) if isinstance(kind, str) else None
        if parser is None:
            raise ValueError(f"unknown event {quoted(kind)}")
        return parser(obj, t, problems)
    except BadStartError as exc:
        raise BadStartError(exc.reason, line) from None
    except ValueError as exc:
        raise SensorLogError(str(exc), line) from None


def parse_line(text: str, line: int) -> ev.Event | StartInfo | None:
    """One log line as an event (or StartInfo, its problems inside); None for a blank
    line. An event's own left-out parts (an impossible clock reading) are dropped
    silently here: `iter_sensor_log` reports them."""
    return parse_line_checked(text, line, [])


class _TooLong(str):
    """A line cut at MAX_LINE characters; the rest of it was skipped unread."""


def _lines(stream: IO[str] | Iterable[str]) -> Iterator[str]:
    """The stream's lines, none longer than MAX_LINE + 1 characters kept in memory."""
    readline = getattr(stream, "readline", None)
    if readline is None:
        yield from stream
        return
    while True:
        text = readline(MAX_LINE + 2)
        if not text:
            return
        if len(text) > MAX_LINE + 1 or (len(text) == MAX_LINE + 2 and not text.endswith("\n")):
            rest = text
            while rest and not rest.endswith("\n"):  # skip the rest of the line
                rest = readline(MAX_LINE)
            yield _TooLong(text[:MAX_LINE])
        else:
            yield text


# The commonest line, exactly as board_ctl writes it (json.dumps): a lift or a place
# with a plain non-negative number of seconds and a lower-case square. Such a line is
# read without json; whatever it holds is what json would have read (the number is
# JSON's own grammar, read by float() as json reads it). Any other line, and one of
# these whose time needs a word (out of range, backwards, Unix time), takes the full
# path below.
_PLAIN_SENSOR_LINE = re.compile(
    r'[ \t\n\r]*\{"t": ((?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?), '
    r'"ev": "(lift|place)", "sq": "([a-h][1-8])"\}[ \t\n\r]*').fullmatch
_SENSOR_EVENTS: dict[str, type[ev.Lifted] | type[ev.Placed]] = {"lift": ev.Lifted,
                                                                  "place": ev.Placed}
_SQUARES = {name: square for square, name in enumerate(chess.SQUARE_NAMES)}


def iter_sensor_log(
    lines: IO[str] | Iterable[str],
) -> Iterator[tuple[int, ev.Event | StartInfo | SensorLogError]]:
    """Yield (line number, event or StartInfo or error) for every non-blank line.

    A start line that cannot be played yields a `BadStartError`; it ends nothing here
    (`read_sensor_log` stops at it)."""
    last_t = 0.0
    first = True
    plain = _PLAIN_SENSOR_LINE
    for number_, text in enumerate(_lines(lines), start=1):
        # (not a _TooLong, nor a line too long of blanks)
        found = plain(text) if type(text) is str and len(text) <= MAX_LINE + 1 else None
        if found is not None:
            t = float(found[1])
            if last_t <= t <= MAX_T and (last_t != 0.0 or t < UNIX_TIME_FROM):
                last_t = t
                first = False
                yield number_, _SENSOR_EVENTS[found[2]](t, _SQUARES[found[3]])
                continue
        problems: list[str] = []
        try:
            if isinstance(text, _TooLong):
                raise SensorLogError(f"longer than {MAX_LINE} characters; skipped", number_)
            item = parse_line_checked(text, number_, problems)
        except BadStartError as exc:
            first, was_first = False, first
            yield number_, (exc if was_first else SensorLogError(
                "'start' is only allowed on the first line", number_))
            continue
        except SensorLogError as exc:
            first = False
            yield number_, exc
            continue
        if item is None:
            continue
        for problem in problems:
            kind = SensorLogWarning if isinstance(problem, _Warning) else SensorLogError
            yield number_, kind(problem, number_)
        if isinstance(item, StartInfo):
            if not first:
                yield number_, SensorLogError("'start' is only allowed on the first line",
                                              number_)
                continue
            for problem in item.problems:
                yield number_, SensorLogError(problem, number_)
        elif item.t < last_t:
            yield number_, SensorLogError(
                f"time goes backwards ({item.t} after {last_t}); line skipped", number_
            )
            continue
        else:
            if last_t == 0.0 and item.t >= UNIX_TIME_FROM:
                yield number_, SensorLogWarning(
                    f"t = {item.t:.0f} s looks like Unix time, not seconds since the log's "
                    f"start (docs/sensor-log.md): the moves read the same, but the first "
                    f"move's time ([%emt], a clock) counts from 0", number_)
            last_t = item.t
        first = False
        yield number_, item


def read_sensor_log(stream: IO[str] | Iterable[str]) -> SensorLog:
    """The whole log; bad lines are in its `errors`. BadStartError if its start line
    names a position that cannot be played."""
    start = StartInfo()
    events: list[ev.Event] = []
    errors: list[SensorLogError] = []
    lines: list[int] = []
    start_line: int | None = None
    warnings: list[SensorLogError] = []
    for number_, item in iter_sensor_log(stream):
        if not isinstance(item, (SensorLogError, StartInfo)):  # (the commonest)
            events.append(item)
            lines.append(number_)
            continue
        if isinstance(item, BadStartError):
            raise item
        if isinstance(item, SensorLogWarning):
            warnings.append(item)
        elif isinstance(item, SensorLogError):
            errors.append(item)
        else:
            start, start_line = item, number_
    return SensorLog(start, events, errors, lines, start_line, warnings)


def open_sensor_log(path: str | Path) -> IO[str]:
    """A log file (or ``-``, standard input) opened to be read as the format says:
    UTF-8 with or without a byte-order mark, a bad byte spoiling only its own line.

    SensorLogError (naming the file) if it cannot be opened, or is not a regular file or
    a pipe: a device such as /dev/zero would be read forever."""
    if str(path) == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", errors="replace")
    try:
        raw = open(path, "rb")  # noqa: SIM115 (handed to the wrapper, closed with it)
    except OSError as exc:
        raise SensorLogError(f"cannot read {path}: {exc.strerror or exc}") from None
    mode = os.fstat(raw.fileno()).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raw.close()
        raise SensorLogError(f"cannot read {path}: not a regular file")
    return io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace")


def read_start(path: str | Path) -> StartInfo:
    """Only the start of a log file: its first line's StartInfo (the default when the
    log has none). SensorLogError if the file cannot be read, BadStartError if its
    start line cannot be played."""
    with open_sensor_log(path) as stream:
        try:
            for _, item in iter_sensor_log(stream):
                if isinstance(item, BadStartError):
                    raise item
                if not isinstance(item, SensorLogError):  # bad lines come before
                    return item if isinstance(item, StartInfo) else StartInfo()
        except OSError as exc:
            raise SensorLogError(f"cannot read {path}: {exc.strerror or exc}") from None
    return StartInfo()


def load_sensor_log(path: str | Path) -> SensorLog:
    """`read_sensor_log` of a file (or ``-``); SensorLogError if it cannot be read at
    all, BadStartError if its start line cannot be played."""
    stream = open_sensor_log(path)
    try:
        return read_sensor_log(stream)
    except OSError as exc:  # an I/O error mid-file (a failing disk, a device gone)
        raise SensorLogError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        if str(path) != "-":
            stream.close()


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
        case ev.ArbiterResult(result=result, reason=reason, by=by, ref=ref):
            return _ordered({"t": t, "ev": "arbiter-result", "result": result,
                             "reason": reason}, by, ref)
        case ev.ClocksSet(white=white, black=black, by=by, ref=ref):
            return _ordered({"t": t, "ev": "set-clocks", "white": white, "black": black},
                            by, ref)
        case ev.TagsSet(tags=tags, by=by, ref=ref):
            return _ordered({"t": t, "ev": "tags", "tags": dict(tags)}, by, ref)
    raise TypeError(f"not a sensor-log event: {event!r}")


def _ordered(obj: dict[str, Any], by: str, ref: str) -> dict[str, Any]:
    """An arbiter's order: who gave it and its id, when known."""
    if by:
        obj["by"] = by
    if ref:
        obj["ref"] = ref
    return obj


def start_to_json(start: StartInfo) -> dict[str, Any]:
    obj: dict[str, Any] = {"t": 0.0, "ev": "start", "fen": start.fen}
    if start.time_control:
        obj["time_control"] = start.time_control
    if start.tags:
        obj["tags"] = start.tags
    if start.remote is not None:
        obj["remote"] = SIDE_NAMES[start.remote]
    if start.release_completes:
        obj["release_completes"] = True
    if start.profile is not None:
        obj["profile"] = start.profile
    if start.default_time is not None:
        obj["default_time"] = start.default_time
    return obj


def dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False)
