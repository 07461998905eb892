"""Commands to a board (docs/mqtt.md, "Commands to a board"): checked where they arrive,
carried out on the service's loop thread, journaled with who gave them, answered once.

A command's id is recorded with what it did: in the game's journal (the order's event
line, an acknowledgement's line) in the same write as the change, and in the board's
command ledger beside it. A command the broker delivers again (QoS 1 after a lost
acknowledgement, a station that resends) is answered as the first time and not done
again, also after a restart.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import chess

from board_ctl.archive import JOURNAL, Archive
from board_ctl.core import events as ev
from board_ctl.journal import decode_record
from board_ctl.errors import TagError
from board_ctl.pgntags import check_tag
from board_ctl.sensorlog import RESULTS
from board_ctl.service.messages import Command, NewGame
from board_ctl.words import count

if TYPE_CHECKING:
    from board_ctl.service.service import Service

log = logging.getLogger(__name__)

VERBS = ("ack", "result", "players", "new-game", "clock")
MAX_COMMAND = 16 * 1024  # bytes: a players command with every text at its longest fits
MAX_ID = 64
MAX_TEXT = 200
MAX_CLOCK = 100 * 3600.0  # s: more than any time control gives
FIDE_ID_DIGITS = 12


class CommandError(ValueError):
    """A command that cannot be done as sent: the reply's error (`command_id`: the
    command's id when it could be read)."""

    def __init__(self, message: str, command_id: object = None) -> None:
        super().__init__(message)
        self.command_id = command_id


@dataclass(frozen=True)
class Outcome:
    ok: bool
    error: str | None = None
    game: str | None = None  # the game it applied to (None: the board's next game)


@dataclass(frozen=True)
class Order:
    """A checked command: `verb`, its sender's `id` (as sent) and `by`, and its fields."""

    verb: str
    id: object
    by: str
    game: str | None  # the game the sender means (None: the board's current one)
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return str(self.id)


# ---------------------------------------------------------------- checking


def shown(value: object, limit: int = 40) -> str:
    """`value` for a reply: its repr cut to `limit` characters (a command may hold a
    16 KiB string, or an integer Python will not turn into text)."""
    try:
        text = repr(value)
    except ValueError:  # an int beyond sys.get_int_max_str_digits()
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def parse(verb: str, payload: bytes) -> Order:
    """The order a command's payload gives; CommandError saying what is wrong, whatever
    the payload (issue: one malformed command must never stop the board's link)."""
    try:
        return _parse(verb, payload)
    except CommandError:
        raise
    except Exception as exc:  # a check missing below: refused all the same
        log.warning("command %s refused: %s: %s", verb, type(exc).__name__, shown(str(exc), 200))
        raise CommandError(f"cannot read the command: {type(exc).__name__}", None) from None


def _parse(verb: str, payload: bytes) -> Order:
    if len(payload) > MAX_COMMAND:
        raise CommandError(f"a command has at most {count(MAX_COMMAND, 'byte')}, not {len(payload)}",
                           None)
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:  # (ValueError: an int of 5,000 digits)
        raise CommandError(f"not JSON: {shown(str(exc), 120)}", None) from None
    except RecursionError:  # json recurses once a level: "[[[[..." runs it out
        raise CommandError("not JSON a board reads: nested too deep", None) from None
    if not isinstance(data, dict):
        raise CommandError("a command is a JSON object", None)
    command_id = data.get("id")
    if isinstance(command_id, bool) or not isinstance(command_id, (str, int)) or \
            _too_long(command_id) or command_id == "":
        raise CommandError(f"'id' must be a string or an integer (up to {MAX_ID} "
                           f"characters), not {shown(command_id)}", None)
    try:
        if verb not in VERBS:
            raise CommandError(f"unknown command {verb!r} (known: {', '.join(VERBS)})")
        by = _text(data, "by", required=True)
        game = data.get("game")
        if game is not None and not isinstance(game, str) or isinstance(game, str) and \
                len(game) > MAX_ID:
            raise CommandError(f"'game' must be a game id or null, not {shown(game)}")
        return Order(verb, command_id, by, game, _CHECKS[verb](data))
    except CommandError as exc:
        raise CommandError(str(exc), command_id) from None


def _too_long(command_id: str | int) -> bool:
    """More than MAX_ID characters (an integer is not made into text to know it)."""
    if isinstance(command_id, int):
        return not -10 ** (MAX_ID - 1) < command_id < 10 ** MAX_ID
    return len(command_id) > MAX_ID


def _text(data: dict[str, Any], key: str, required: bool = False,
          limit: int = MAX_TEXT) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise CommandError(f"'{key}' must be {'a non-empty' if required else 'a'} string, "
                           f"not {shown(value)}")
    if len(value) > limit or any(c in value for c in '\n\r{}"'):
        raise CommandError(f"'{key}' must be one line of at most {limit} characters, "
                           "without quotes or braces")
    return value.strip()


def _ack(data: dict[str, Any]) -> dict[str, Any]:
    return {"code": _text(data, "code", required=True, limit=40)}


def _result(data: dict[str, Any]) -> dict[str, Any]:
    result = data.get("result")
    if result not in RESULTS:
        raise CommandError(f"'result' must be one of {', '.join(RESULTS)}, not {shown(result)}")
    return {"result": result, "reason": _text(data, "reason")}


def _seconds(data: dict[str, Any], key: str) -> float:
    value = data.get(key)
    # (compared before isfinite, which cannot take an integer beyond any float)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not 0 <= value <= MAX_CLOCK or not math.isfinite(value):
        raise CommandError(f"'{key}' must be the seconds on that clock (0 to {MAX_CLOCK:g}), "
                           f"not {shown(value)}")
    return float(value)


def _clock(data: dict[str, Any]) -> dict[str, Any]:
    return {"white": _seconds(data, "white"), "black": _seconds(data, "black")}


def _players(data: dict[str, Any]) -> dict[str, Any]:
    """The PGN tags the command sets ("" removes one)."""
    tags: dict[str, str] = {}
    for side, tag in (("white", "White"), ("black", "Black")):
        player = data.get(side)
        if player is None:
            continue
        if not isinstance(player, dict):
            raise CommandError(f"'{side}' must be an object such as "
                               '{"name": "Anna Smith", "fide_id": "1503014"}')
        if "name" in player:
            tags[tag] = _text(player, "name")
        if "fide_id" in player:
            fide_id = player["fide_id"]
            if fide_id is None or isinstance(fide_id, str):
                text = fide_id or ""
            elif isinstance(fide_id, int) and not isinstance(fide_id, bool) and \
                    0 <= fide_id < 10 ** FIDE_ID_DIGITS:
                text = str(fide_id)
            else:
                text = "-"
            if not (text == "" or (text.isascii() and text.isdigit() and
                                   len(text) <= FIDE_ID_DIGITS)):
                raise CommandError(f"'{side}.fide_id' must be digits or null, "
                                   f"not {shown(fide_id)}")
            tags[f"{tag}FideId"] = text
    for key, tag in (("event", "Event"), ("site", "Site"), ("round", "Round")):
        if key in data:
            tags[tag] = _text(data, key)
    if "board_no" in data:
        board_no = data["board_no"]
        if board_no is not None and (isinstance(board_no, bool) or not isinstance(board_no, int)
                                     or board_no < 1):
            raise CommandError(f"'board_no' must be a positive integer or null, "
                               f"not {shown(board_no)}")
        tags["Board"] = "" if board_no is None else str(board_no)
    if not tags:
        raise CommandError("nothing to set: give white, black, event, site, round or board_no")
    for name, value in tags.items():
        try:
            check_tag(name, value)  # the same check as every tag that enters a record
        except TagError as exc:
            raise CommandError(str(exc)) from None
    return {"tags": tags}


def _new_game(data: dict[str, Any]) -> dict[str, Any]:
    fen = data.get("fen")
    if fen is None:
        return {"fen": None}
    try:
        board = chess.Board(fen) if isinstance(fen, str) and len(fen) <= 100 else None
    except ValueError as exc:
        raise CommandError(f"'fen' is not a FEN: {shown(str(exc), 120)}") from None
    if board is None or not board.is_valid():
        raise CommandError(f"'fen' must be a legal position's FEN or null, not {shown(fen)}")
    return {"fen": board.fen()}


_CHECKS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "ack": _ack, "result": _result, "players": _players, "new-game": _new_game,
    "clock": _clock,
}


# ---------------------------------------------------------------- the ledger


class CommandLedger:
    """The ids of the commands done, with their outcome: an append-only file (one JSON
    object a line), plus the ids the latest games' journals hold, in case the service
    stopped between the journal's write and the ledger's."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.done: dict[str, Outcome] = {}
        self._stream: Any = None

    def load(self, archive: Archive | None, games: int = 2) -> None:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            lines = []
        for line in lines:
            try:
                data = json.loads(line)
                self.done[str(data["key"])] = Outcome(bool(data["ok"]), data.get("error"),
                                                      data.get("game"))
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line: that command is found in its journal
        if archive is not None:
            self._from_journals(archive, games)

    def _from_journals(self, archive: Archive, games: int) -> None:
        folders = sorted(p for p in archive.games_dir.glob("*") if (p / JOURNAL).is_file()) \
            if archive.games_dir.is_dir() else []
        for folder in folders[-games:]:
            refs: list[tuple[str, bool]] = []
            ended = False
            with (folder / JOURNAL).open(encoding="utf-8", errors="replace") as stream:
                for raw in stream:
                    record = decode_record(raw)
                    if record is None:
                        break
                    ended = ended or record.get("kind") == "end"
                    if record.get("ref"):
                        refs.append((str(record["ref"]), record.get("what") == "new-game"))
            for key, new_game in refs:
                # a new game asked for in a game that is still unfinished was not done
                if key not in self.done and (ended or not new_game):
                    self.done[key] = Outcome(True, None, folder.name)

    def record(self, order: Order, outcome: Outcome) -> None:
        self.done[order.key] = outcome
        line = json.dumps({"key": order.key, "verb": order.verb, "by": order.by,
                           "ok": outcome.ok, "error": outcome.error, "game": outcome.game})
        try:
            if self._stream is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._stream = self.path.open("a", encoding="utf-8")
            self._stream.write(line + "\n")
            self._stream.flush()
            os.fsync(self._stream.fileno())
        except OSError as exc:
            log.error("command ledger %s: %s", self.path, exc)

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


# ---------------------------------------------------------------- doing it


class HallCommand(Command):
    """An order on the service's queue; `answer` gets its outcome (on the loop thread)."""

    def __init__(self, order: Order, ledger: CommandLedger,
                 answer: Callable[[Order, Outcome], None]) -> None:
        self.order = order
        self.ledger = ledger
        self.answer = answer

    def run(self, service: Service) -> None:
        order = self.order
        outcome = self.ledger.done.get(order.key)
        if outcome is None:
            try:
                outcome = _carry_out(service, order)
            except CommandError as exc:
                outcome = Outcome(False, str(exc))
            except Exception as exc:  # answered all the same: the sender must not wait
                log.exception("command %s %s failed", order.verb, order.key)
                outcome = Outcome(False, f"the board could not do it: {type(exc).__name__}")
            self.ledger.record(order, outcome)
            log.info("command %s %s by %s: %s", order.verb, order.key, order.by,
                     "done" if outcome.ok else outcome.error)
        self.answer(order, outcome)


def _game_meant(service: Service, order: Order) -> str | None:
    """The current game's id, if it is the one the order means (CommandError if not)."""
    session = service.session
    current = session.game_id if session is not None else None
    if order.game is not None and order.game != current:
        raise CommandError(f"game {order.game} is not the board's current game "
                           f"({current or 'none: the board waits for the start position'})")
    return current


def _carry_out(service: Service, order: Order) -> Outcome:
    game = _game_meant(service, order)
    session = service.session
    f = order.fields
    if order.verb == "new-game":
        if session is not None:
            service.journal_note({"t": round(session.referee.now, 6), "kind": "order",
                                  "what": "new-game", "fen": f["fen"], "by": order.by,
                                  "ref": order.key})
        start = service.start
        fen = f["fen"] or start.fen
        service.handle(NewGame(replace(start, fen=fen, tags=dict(start.tags), problems=()),
                               f"a new game was asked for by {order.by}"))
        return Outcome(True, None, None)
    if order.verb == "players":
        tags = tuple(sorted(f["tags"].items()))
        in_play = session is not None and not session.over
        if order.game is None:  # the board's tags from now on (the next games too)
            merged = {**service.start.tags, **f["tags"]}
            service.start = replace(service.start,
                                    tags={k: v for k, v in merged.items() if v})
        if session is not None and (in_play or order.game is not None):
            service.feed_order(ev.TagsSet(0.0, tags, order.by, order.key))
            return Outcome(True, None, game)
        return Outcome(True, None, None)
    if session is None or game is None:
        raise CommandError("no game on the board (it waits for the start position)")
    if order.verb == "ack":
        code = f["code"]
        if code not in session.referee.alerts:
            raise CommandError(f"no open alert {code!r} in game {game}")
        service.journal_note({"t": round(session.referee.now, 6), "kind": "ack",
                              "code": code, "by": order.by, "ref": order.key})
        return Outcome(True, None, game)
    if order.verb == "result":
        service.feed_order(ev.ArbiterResult(0.0, f["result"], f["reason"], order.by,
                                            order.key))
        return Outcome(True, None, game)
    if order.verb == "clock":
        if session.over:
            raise CommandError(f"game {game} is over: its clocks are stopped")
        service.feed_order(ev.ClocksSet(0.0, f["white"], f["black"], order.by, order.key))
        return Outcome(True, None, game)
    raise CommandError(f"unknown command {order.verb!r}")  # parse() lets none through
