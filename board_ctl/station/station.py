"""The station: the hall's model, the arbiter's commands and their journal, the round's
pairings, and the pages' live feed, all on one asyncio loop.

MQTT messages arrive on paho's thread and are handed to the loop at once (`deliver`);
everything else runs on the loop, so the model needs no lock."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from board_ctl.errors import BoardCtlError
from board_ctl.station.actionlog import ActionLog
from board_ctl.station.contract import RESULTS, command_topic
from board_ctl.station.model import NOT_BOARDS, Board, Change, Game, Hall
from board_ctl.station.pairings import ROUND, Pairing, parse_pairings
from board_ctl.station.results import ResultLog
from board_ctl.station.views import card, detail

log = logging.getLogger(__name__)
FLUSH_S = 0.05          # coalesce a burst of messages into one page update per board
SUBSCRIBER_BACKLOG = 500


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class CommandError(BoardCtlError, ValueError):
    """An arbiter's command that cannot be sent (unknown board, bad value)."""


class Station:
    def __init__(self, data_dir: Path, publish: Callable[[str, str], None],
                 prefix: str = "board-ctl", event: str = "?", site: str = "?",
                 clock_ms: Callable[[], int] = wall_ms, broker_user: str | None = None) -> None:
        # the station's own broker user is no board, whatever reaches it on its topics
        self.hall = Hall(prefix, NOT_BOARDS + ((broker_user,) if broker_user else ()))
        self.prefix = prefix
        self.event = event
        self.site = site
        self.data_dir = data_dir
        self.publish = publish
        self.clock_ms = clock_ms
        self.broker_connected = False
        self.broker_error = ""
        data_dir.mkdir(parents=True, exist_ok=True)
        self.actions = ActionLog(data_dir / "actions.jsonl")
        self.results = ResultLog(data_dir / "results.jsonl")  # what the ladder is made of
        self.pending: dict[str, dict[str, Any]] = {}
        self.pairings: list[Pairing] = self._load_pairings()
        # Pairings sent and acknowledged by their board: (round, board_no) -> board id.
        self.delivered: dict[tuple[str, int], str] = {}
        self._sent_pairing: dict[tuple[str, int], str] = {}  # -> the command id in flight
        self._subscribers: list[tuple[asyncio.Queue[str], bool]] = []
        self._dirty: set[str] = set()
        self._flush_handle: asyncio.TimerHandle | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.on_round_change: Callable[[str], None] | None = None
        self._recover_journal()

    # ---- MQTT in -------------------------------------------------------------------

    def deliver(self, topic: str, payload: bytes) -> None:
        """From paho's thread: hand the message to the loop."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.receive, topic, payload)

    def connection(self, connected: bool, reason: str) -> None:
        """From paho's thread: the broker connection came or went."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._set_connection, connected, reason)

    def _set_connection(self, connected: bool, reason: str) -> None:
        self.broker_connected = connected
        self.broker_error = "" if connected else reason
        self._broadcast({"type": "broker", "connected": connected, "error": self.broker_error})

    def receive(self, topic: str, payload: bytes) -> Change | None:
        change = self.hall.apply(topic, payload, self.clock_ms())
        if change is None:
            return None
        if change.reply is not None:
            self._on_reply(change)
        if change.kind in ("state", "status"):
            self._offer_pairings(change.board)
        self._mark(change.board)
        game = self.hall.boards[change.board].game
        if game is not None and game.round and self.on_round_change is not None:
            self.on_round_change(game.round)
        return change

    # ---- commands ------------------------------------------------------------------

    def command(self, user: str, board_id: str, kind: str, body: dict[str, Any],
                game: str | None = None) -> str:
        """Journal the arbiter's command, then publish it; returns its id. With `game`,
        the board refuses it unless that game is still the one it holds (a command that
        waited for an offline board, or one the arbiter chose before the next game
        began, never lands on another game)."""
        if board_id not in self.hall.boards:
            raise CommandError(f"no board {board_id!r}")
        topic = command_topic(self.prefix, board_id, kind)
        command_id = uuid.uuid4().hex
        payload = {"v": 1, "id": command_id, "by": user, **body}
        if game is not None:
            payload["game"] = game
        entry = {"time": self.clock_ms(), "kind": "command", "user": user, "board": board_id,
                 "command": kind, "id": command_id, "payload": body, "game": game}
        self.actions.write(entry)  # on disk before it leaves
        self.pending[command_id] = entry
        self.publish(topic, json.dumps(payload, ensure_ascii=False))
        self._mark(board_id)
        return command_id

    def acknowledge(self, user: str, board_id: str, code: str) -> str:
        game = self._game(board_id)
        if not any(a.code == code for a in game.open_alerts()):
            raise CommandError(f"board {board_id} has no open {code!r} alert")
        return self.command(user, board_id, "ack", {"code": code}, game.game)

    def set_result(self, user: str, board_id: str, result: str, reason: str) -> str:
        if result not in RESULTS:
            raise CommandError(f"result {result!r}: one of {', '.join(RESULTS)}")
        game = self._game(board_id)
        return self.command(user, board_id, "result",
                            {"result": result, "reason": reason.strip() or "arbiter's decision"},
                            game.game)

    def set_clock(self, user: str, board_id: str, white_ms: int, black_ms: int) -> str:
        game = self._game(board_id)
        if game.clock is None:
            raise CommandError(f"board {board_id}'s game has no clock")
        if white_ms < 0 or black_ms < 0:
            raise CommandError("a clock cannot be set below zero")
        return self.command(user, board_id, "clock",
                            {"white": white_ms / 1000, "black": black_ms / 1000}, game.game)

    def _game(self, board_id: str):  # type: ignore[no-untyped-def]
        board = self.hall.boards.get(board_id)
        if board is None or board.game is None:
            raise CommandError(f"board {board_id!r} has no game")
        return board.game

    def _on_reply(self, change: Change) -> None:
        reply = change.reply
        assert reply is not None
        entry = self.pending.pop(reply.id, None)
        if entry is None:
            return  # answered already (a board republishes), or not this station's
        self.actions.write({"time": self.clock_ms(), "kind": "reply", "board": reply.board,
                            "id": reply.id, "ok": reply.ok, "error": reply.error,
                            "game": reply.game, "board_time": reply.time_ms})
        if entry["command"] == "players":
            key = (str(entry["payload"]["round"]), int(entry["payload"]["board_no"]))
            self._sent_pairing.pop(key, None)
            if reply.ok:
                self.delivered[key] = reply.board
        if entry["command"] == "result" and reply.ok:  # the arbiter's own result: confirmed
            game = self._held_game(reply.board, reply.game or entry.get("game"))
            if game is not None:
                self.results.confirm(game, entry["payload"]["result"], entry["user"],
                                     self.clock_ms(), "command")
        if entry["command"] == "clock" and reply.ok:
            self.hall.record_clock_correction(
                reply.board, round(entry["payload"]["white"] * 1000),
                round(entry["payload"]["black"] * 1000), reply.time_ms or self.clock_ms())

    # ---- the ladder's results -------------------------------------------------------

    def _held_game(self, board_id: str, game_id: object) -> Game | None:
        board = self.hall.boards.get(board_id)
        return board.games.get(game_id) if board is not None and \
            isinstance(game_id, str) else None

    def unconfirmed(self) -> list[Game]:
        """Finished games whose result no arbiter has confirmed (or confirmed otherwise)."""
        return [game for game in self.hall.finished_games()
                if self.results.confirmed(game.board, game.game) != game.result]

    def confirm_result(self, user: str, board_id: str, game_id: str, result: str) -> None:
        """An arbiter confirms the result a board shows: it enters the ladder. `result`
        is the one the arbiter saw; refused if the board says another by now."""
        game = self._held_game(board_id, game_id)
        if game is None:
            raise CommandError(f"board {board_id!r} has no game {game_id!r} in the station")
        if not game.finished:
            raise CommandError(f"board {board_id}'s game {game_id} is not finished")
        if game.result != result:
            raise CommandError(f"board {board_id}'s game {game_id} now shows {game.result}, "
                               f"not {result}: look again")
        self.actions.write({"time": self.clock_ms(), "kind": "confirm-result", "user": user,
                            "board": board_id, "game": game_id, "result": result,
                            "white": game.white.name, "black": game.black.name})
        self.results.confirm(game, result, user, self.clock_ms(), "confirmed")

    def _recover_journal(self) -> None:
        """Commands journaled but never answered (the station stopped) wait for their
        reply again: a board answers a repeated id once, and its reply may be on the way."""
        answered: set[str] = set()
        entries = self.actions.read()
        for entry in entries:
            if entry.get("kind") == "reply":
                answered.add(str(entry.get("id")))
                if entry.get("ok") and entry.get("id") in self.pending:
                    sent = self.pending[entry["id"]]
                    if sent["command"] == "players":
                        key = (str(sent["payload"]["round"]), int(sent["payload"]["board_no"]))
                        self.delivered[key] = sent["board"]
            elif entry.get("kind") == "command":
                self.pending[str(entry.get("id"))] = entry
        for command_id in answered:
            self.pending.pop(command_id, None)

    def journal(self, board_id: str | None = None) -> list[dict[str, Any]]:
        entries = self.actions.read()
        if board_id is not None:
            entries = [e for e in entries if e.get("board") == board_id]
        return entries

    # ---- pairings ------------------------------------------------------------------

    def _load_pairings(self) -> list[Pairing]:
        path = self.data_dir / "pairings.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return [Pairing(**item) for item in data]
        except FileNotFoundError:
            return []
        except (ValueError, TypeError) as exc:
            log.error("%s: cannot read the saved pairings (%s); import them again", path, exc)
            return []

    def import_pairings(self, user: str, text: str, source: str = "pairings") -> list[Pairing]:
        """Replace the pairings of the rounds in the file (others stay); send each to its
        board when that board is between games. PairingsError leaves everything as it was."""
        new = parse_pairings(text, source)
        rounds = {p.round for p in new}
        kept = [p for p in self.pairings if p.round not in rounds]
        self.pairings = sorted(kept + new, key=lambda p: (int(p.round), p.board_no))
        for key in [k for k in self.delivered if k[0] in rounds]:
            del self.delivered[key]
        path = self.data_dir / "pairings.json"
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps([asdict(p) for p in self.pairings], indent=1), encoding="utf-8")
        tmp.replace(path)
        self.actions.write({"time": self.clock_ms(), "kind": "pairings", "user": user,
                            "source": source, "rounds": sorted(rounds, key=int),
                            "boards": len(new)})
        for board_id in list(self.hall.boards):
            self._offer_pairings(board_id)
        for round_name in rounds:
            if self.on_round_change is not None:
                self.on_round_change(round_name)
        self._broadcast({"type": "pairings"})
        return new

    def board_for(self, pairing: Pairing) -> Board | None:
        if pairing.board_id is not None:
            return self.hall.boards.get(pairing.board_id)
        for board in self.hall.boards.values():
            game = board.game
            if game is not None and game.board_no == pairing.board_no:
                return board
        return None

    def _offer_pairings(self, board_id: str, force: bool = False, user: str = "station") -> None:
        """Send the board its pairing when its game has not begun (ply 0, no result): tags
        sent mid-game would relabel the game being played. The arbiter can force it."""
        board = self.hall.boards.get(board_id)
        if board is None or board.status == "offline":
            return
        game = board.game
        between_games = game is None or (game.ply == 0 and game.result == "*")
        for pairing in self._open_pairings():
            key = (pairing.round, pairing.board_no)
            if self.board_for(pairing) is not board:
                continue
            if key in self.delivered or key in self._sent_pairing:
                continue
            if not (between_games or force):
                continue
            if game is not None and game.round == pairing.round and \
                    game.white.name == pairing.white and game.black.name == pairing.black:
                self.delivered[key] = board_id  # the board has it already
                continue
            command_id = self.command(user, board_id, "players",
                                      pairing.players_command(self.event, self.site))
            self._sent_pairing[key] = command_id

    def _open_pairings(self) -> list[Pairing]:
        """The pairings of the newest imported round only: an older round's are done."""
        if not self.pairings:
            return []
        newest = max(int(p.round) for p in self.pairings)
        return [p for p in self.pairings if int(p.round) == newest]

    def send_pairing_now(self, user: str, round_name: str, board_no: int) -> str:
        pairing = next((p for p in self.pairings
                        if p.round == round_name and p.board_no == board_no), None)
        if pairing is None:
            raise CommandError(f"no pairing for round {round_name} board {board_no}")
        board = self.board_for(pairing)
        if board is None:
            raise CommandError(f"no board has announced board number {board_no} yet")
        key = (pairing.round, pairing.board_no)
        self.delivered.pop(key, None)
        command_id = self.command(user, board.board, "players",
                                  pairing.players_command(self.event, self.site))
        self._sent_pairing[key] = command_id
        return command_id

    def pairing_status(self) -> list[dict[str, Any]]:
        rows = []
        for pairing in self.pairings:
            key = (pairing.round, pairing.board_no)
            board = self.board_for(pairing)
            if key in self.delivered:
                status = "delivered"
            elif key in self._sent_pairing:
                status = "sent, waiting for the board's reply"
            elif board is None:
                status = "no board with this number yet"
            elif pairing not in self._open_pairings():
                status = "not sent (an earlier round)"
            else:
                status = "waiting for the board's game to end"
            rows.append({**asdict(pairing), "board": board.board if board else None,
                         "status": status})
        return rows

    def rounds(self) -> list[str]:
        names = {p.round for p in self.pairings}
        for board in self.hall.boards.values():
            names.update(g.round for g in board.games.values() if g.round)
        # A board may name its round anything: only ASCII digits are a number ("²" is a
        # digit to str.isdigit(), and int() refuses it).
        def key(name: str) -> tuple[bool, int, str]:
            number = ROUND.fullmatch(name) is not None
            return (not number, int(name) if number else 0, name)
        return sorted(names, key=key)

    # ---- the pages' feed -----------------------------------------------------------

    def subscribe(self, arbiter: bool) -> asyncio.Queue[str]:
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=SUBSCRIBER_BACKLOG)
        self._subscribers.append((queue, arbiter))
        return queue

    def unsubscribe(self, queue: asyncio.Queue[str]) -> None:
        self._subscribers = [(q, a) for q, a in self._subscribers if q is not queue]

    def snapshot(self, arbiter: bool) -> dict[str, Any]:
        return {"type": "snapshot", "now_ms": self.clock_ms(),
                "broker": {"connected": self.broker_connected, "error": self.broker_error},
                "boards": [card(b, arbiter) for b in self.sorted_boards()]}

    def sorted_boards(self) -> list[Board]:
        def key(board: Board) -> tuple[int, int, str]:
            game = board.game
            number = game.board_no if game is not None and game.board_no is not None else None
            return (0 if number is not None else 1, number or 0, board.board)
        return sorted(self.hall.boards.values(), key=key)

    def board_detail(self, board_id: str, arbiter: bool) -> dict[str, Any] | None:
        board = self.hall.boards.get(board_id)
        if board is None:
            return None
        view = detail(board, arbiter)
        view["now_ms"] = self.clock_ms()
        if arbiter:
            view["journal"] = self.journal(board_id)[-200:]
            view["pending"] = [e for e in self.pending.values() if e.get("board") == board_id]
        return view

    def _mark(self, board_id: str) -> None:
        if not self._subscribers:
            return  # nobody watching: a page that connects starts from a snapshot
        self._dirty.add(board_id)
        if self._flush_handle is None and self.loop is not None and self._subscribers:
            self._flush_handle = self.loop.call_later(FLUSH_S, self.flush)

    def flush(self) -> None:
        self._flush_handle = None
        dirty, self._dirty = self._dirty, set()
        for board_id in sorted(dirty):
            board = self.hall.boards.get(board_id)
            if board is None:
                continue
            pending = sum(1 for e in self.pending.values() if e.get("board") == board_id)
            views = {}
            for arbiter in (False, True):
                view = card(board, arbiter)
                if arbiter:
                    view["pending"] = pending
                views[arbiter] = json.dumps({"type": "board", "now_ms": self.clock_ms(),
                                             "board": view})
            self._send(views)

    def _broadcast(self, message: dict[str, Any]) -> None:
        text = json.dumps(message)
        self._send({False: text, True: text})

    def _send(self, views: dict[bool, str]) -> None:
        for queue, arbiter in list(self._subscribers):
            try:
                queue.put_nowait(views[arbiter])
            except asyncio.QueueFull:
                # A page that stopped reading: drop it; its EventSource reconnects and
                # starts again from a snapshot.
                self.unsubscribe(queue)

    def subscribed(self, queue: asyncio.Queue[str]) -> bool:
        return any(q is queue for q, _ in self._subscribers)

    def close(self) -> None:
        self.actions.close()
