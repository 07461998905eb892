"""A board's publisher: its games, from their journals, to the hall's broker.

It is one of the service's observers: `show` (on the loop thread) only keeps what the
service shows live (clocks, link, phase, which game) and wakes the publisher's own
thread, so publishing never delays an LED frame. That thread reads the games' journals
(the durable record) from where the broker's acknowledgements stopped, publishes each
move, alert and clear in journal order (QoS 1, at most WINDOW unacknowledged), then the
retained state and PGN, and keeps its place (progress.py). On a connection to a broker
that lost the board's session (restarted without its store), and on the first connection
of the service, it goes back to the start of the first game not wholly acknowledged: the
broker gets everything again, in order; subscribers drop what they have by (game, ply).
On a connection to a broker that kept the session, it goes back only to where the
acknowledgements had reached REWIND_KEPT s before the connection was lost: a broker
killed keeps what it saved to disk before, and a hall of a thousand boards whose
connections drop under load must not send every game again at each drop (that load
drops more connections: a livelock).

Commands arrive on the connection's thread, are checked there (commands.py), put on the
service's queue, and answered (and acknowledged to the broker) once done. `cmd/resend`
(the station has not all of a game) is the publisher's own: that game is published again
from its journal's start, in the room the games being published leave in the window.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as mqtt

from board_ctl.archive import JOURNAL, Archive
from board_ctl.core.effects import Alert, AlertCleared, Effect, MoveMade
from board_ctl.errors import BoardCtlError, ConfigError
from board_ctl.hall import payloads
from board_ctl.hall.commands import CommandError, CommandLedger, HallCommand, Order, Outcome, parse
from board_ctl.hall.connection import (
    Acked,
    Connected,
    Connection,
    ConnectionEvent,
    Disconnected,
    Refused,
    Unreachable,
)
from board_ctl.hall.gamefeed import GameModel, JournalTail
from board_ctl.hall.payloads import Live
from board_ctl.hall.progress import AckHistory, AckWindow, Place, ProgressFile
from board_ctl.hall.settings import MqttSettings
from board_ctl.service.view import ViewState
from board_ctl.words import count

if TYPE_CHECKING:
    from board_ctl.service.service import Service

log = logging.getLogger(__name__)

WINDOW = 200  # journal messages sent and not yet acknowledged, at most
POLL = 0.25  # s: the publisher's thread wakes at least this often
PGN_EVERY = 1.0  # s between two PGNs of a game being played (its end is published at once)
SAVE_EVERY = 0.5  # s between two writes of the progress file
DRAIN = 5.0  # s the publisher may take at the service's end to send what is left
RESENDS = 8  # games waiting to be published again (cmd/resend), at most
# s of acknowledged messages sent again on a connection to a broker that kept the board's
# session: it may have lost what it acknowledged since its last save to disk (the shipped
# config saves every 30 s: autosave_interval), and the station heals anything older
REWIND_KEPT = 90.0


class MqttError(BoardCtlError, ConnectionError):
    """The broker cannot be used as configured."""


class MqttRefused(ConfigError):
    """The broker refused the board's login: the user, the password or the ACL is wrong."""


_REWIND = object()  # (inbox) from the first game not acknowledged again
Line = tuple[Place, str | None, bytes | None]  # a journal line as sent: its leaf, payload


def _json(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class BoardPublisher:
    def __init__(self, settings: MqttSettings, archive: Archive, *,
                 state_dir: Path | None = None, window: int = WINDOW,
                 pgn_every: float = PGN_EVERY, wall: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.archive = archive
        self.dir = state_dir or archive.root / "hall" / settings.board_id
        self.window_size = window
        self.pgn_every = pgn_every
        self.drain_for = DRAIN  # s the publisher may take at the end to send what is left
        self._wall = wall
        self.progress = ProgressFile(self.dir / "progress.json")
        self.ledger = CommandLedger(self.dir / "commands.jsonl")
        self.connection = Connection(settings, self._event, self._command,
                                     subscriptions=(settings.topic("cmd/#"),))
        self._service: Service | None = None
        # shared with other threads: the inbox (deque appends are atomic) and the wake
        self._inbox: deque[object] = deque()
        self._wake = threading.Event()
        self._live: Live | None = None
        self._first = threading.Event()  # the first connection's outcome is known
        self.first_outcome: ConnectionEvent | None = None
        self._start_waits = False
        self._closing: float | None = None  # wall time by which to stop
        self._thread: threading.Thread | None = None
        # the publisher thread's own
        self._window = AckWindow(self.progress.load())
        self.rewind_kept = REWIND_KEPT
        self._history = AckHistory(REWIND_KEPT, wall(), self._window.done)
        self._lost_at: float | None = None  # when the last connection was lost
        self._skip: Place | None = None  # acknowledged already: read, not sent again
        # The stream's journal lines read, as messages (leaf and payload; None: no message):
        # those to send, in order, and those sent, from just after where any rewind may go
        # back to. A rewind within the game being read moves what was sent after its place
        # back to the head of those to send, without reading the journal from its start.
        self._unsent: deque[Line] = deque()
        self._sent: deque[Line] = deque()
        self._connected = False
        self._generation = 0
        self._games: list[str] = []  # games still to read, in order
        self._model: GameModel | None = None
        self._tail: JournalTail | None = None
        self._known: str = ""  # the latest game id seen
        self._state_sig: object = None
        self._pgn_version = -1
        self._pgn_at = 0.0
        self._at_end = True  # the latest game's journal is read to its end
        self._retry_at = 0.0  # after a message the connection would not take
        self._saved: Place | None = self._window.done
        self._resends: deque[str] = deque()  # games the station asked for again
        self._again: tuple[GameModel, JournalTail] | None = None  # the one being sent
        self._saved_at = 0.0
        # (read: journal lines read for the stream, again after a rewind to a game's start)
        self.stats = {"published": 0, "acked": 0, "connections": 0, "commands": 0, "read": 0}
        self.native_ids: list[int] = self.connection.native_ids  # its threads (CPU figures)

    # ------------------------------------------------------------------ the service side

    def attach(self, service: Service) -> None:
        """The service whose games are published and whose queue takes the commands."""
        self._service = service

    def show(self, state: ViewState, effects: Sequence[Effect]) -> None:
        """(Loop thread) what the service shows now; the work is the publisher's thread's."""
        service = self._service
        session = service.session if service is not None else None
        tags = tuple(service.start.tags.items()) if service is not None and session is None \
            else ()
        self._live = Live(session.game_id if session is not None else None, state.phase,
                          state.link, state.t, state.clocks, state.fen, tags)
        self.ensure_running()
        self._wake.set()

    def message(self, text: str) -> None:
        pass

    def close(self) -> None:
        self.stop()

    # ------------------------------------------------------------------ lifecycle

    def start(self, wait: float = 0.0) -> None:
        """Connect (in the background) and start publishing. With `wait`, wait up to that
        long for the broker's answer: MqttRefused if it refuses the login (a wrong password,
        an unknown user); a broker not there yet is only logged (the board plays on and
        publishes everything once it is)."""
        self.ledger.load(self.archive)
        self._start_waits = wait > 0
        thread = threading.Thread(target=self._run, daemon=True,
                                  name=f"publisher-{self.settings.board_id}")
        thread.start()
        self._thread = thread  # (once started: else ensure_running would start another)
        self.connection.start()
        if wait <= 0:
            return
        self._first.wait(wait)
        outcome = self.first_outcome
        if isinstance(outcome, Refused):
            self.stop(drain=0.0)
            raise MqttRefused(
                f"{self.settings.url} refused board {self.settings.board_id} (user "
                f"{self.settings.username!r}): {outcome.reason}; check [mqtt] username and "
                f"password_file, and the broker's password file")
        if not isinstance(outcome, Connected):
            why = outcome.reason if isinstance(outcome, Unreachable) else "no answer yet"
            log.warning("MQTT broker %s not reachable (%s): the board plays on, and "
                        "publishes every move once the broker answers", self.settings.url, why)

    def stop(self, drain: float | None = None) -> None:
        """Publish what the journals still hold (up to `drain` s), say offline, disconnect."""
        self.request_stop(drain)
        self.join()

    def request_stop(self, drain: float | None = None) -> None:
        if self._thread is None or self._closing is not None:
            return
        self._closing = self._wall() + (self.drain_for if drain is None else drain)
        self._wake.set()

    def join(self) -> None:
        if self._thread is None:
            return
        self._thread.join(timeout=max((self._closing or 0.0) - self._wall(), 0.0) + 5)
        self._thread = None
        self.connection.close(goodbye=(self.settings.topic("status"), b"offline"))
        self.ledger.close()

    @property
    def done(self) -> Place | None:
        """Where the broker's acknowledgements have reached."""
        return self._window.done

    # ------------------------------------------------------------------ other threads in

    def _event(self, event: ConnectionEvent) -> None:
        """(Connection thread) hand it over."""
        said = False
        if not self._first.is_set() and not isinstance(event, Acked):
            self.first_outcome = event
            said = self._start_waits  # start() says it
            self._first.set()
        if isinstance(event, Refused) and not said:
            log.error("MQTT broker %s refused board %s (user %r): %s", self.settings.url,
                      self.settings.board_id, self.settings.username, event.reason)
        self._inbox.append(event)
        self._wake.set()

    def _command(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        """(Connection thread) a command: checked, then onto the service's queue."""
        prefix = self.settings.topic("cmd/")
        verb = message.topic[len(prefix):] if message.topic.startswith(prefix) else ""
        if message.retain:  # a retained command would be done again by every restart
            log.warning("retained command on %s ignored (commands are never retained)",
                        message.topic)
            client.ack(message.mid, message.qos)
            return
        self.stats["commands"] += 1
        try:
            order = parse(verb, bytes(message.payload))
        except CommandError as exc:
            self._inbox.append(("reply", payloads.reply_payload(
                self.settings.board_id, exc.command_id, False, str(exc), None,
                int(self._wall() * 1000)), client, message.mid))
            self._wake.set()
            return
        if order.verb == "resend":  # the publisher's own: no change to any game
            self._inbox.append(("resend", order, client, message.mid))
            self._wake.set()
            return
        service = self._service
        if service is None:
            client.ack(message.mid, message.qos)
            return

        def answer(order: Order, outcome: Outcome) -> None:  # on the loop thread
            self._inbox.append(("reply", payloads.reply_payload(
                self.settings.board_id, order.id, outcome.ok, outcome.error, outcome.game,
                int(self._wall() * 1000)), client, message.mid))
            self._wake.set()

        service.submit(HallCommand(order, self.ledger, answer))

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        self.native_ids.append(threading.get_native_id())
        failures = 0
        try:
            while True:
                self._wake.wait(POLL)
                self._wake.clear()
                self.connection.ensure_running()
                try:
                    self._step()
                    failures = 0
                except Exception:  # never take the service, nor the board's link, down
                    failures += 1
                    log.exception("MQTT publisher of board %s: from the first game not "
                                  "acknowledged again", self.settings.board_id)
                    self._stalled()
                    self._retry_at = self._wall() + min(POLL * 2 ** failures, 30.0)
                if self._closing is not None and (
                        self._wall() >= self._closing or self._drained()
                        or not self.stats["connections"]):  # (never connected: no wait)
                    break
        finally:
            self._save_progress(force=True)
            if self._tail is not None:
                self._tail.close()

    def _step(self) -> None:
        self._take_inbox()
        self._learn_games()
        self._at_end = False
        if self._connected and self._wall() >= self._retry_at:
            self._pump(force_pgn=self._closing is not None)
        self._save_progress()

    def ensure_running(self) -> bool:
        """Start the publisher's thread again if it died (it never should: see _run);
        True if it had to. The service calls it with every change it shows."""
        thread = self._thread
        if thread is None or thread.is_alive() or self._closing is not None:
            return False
        log.error("the MQTT publisher of board %s stopped: started again",
                  self.settings.board_id)
        self._inbox.append(_REWIND)
        thread = threading.Thread(target=self._run, daemon=True,
                                  name=f"publisher-{self.settings.board_id}")
        thread.start()
        self._thread = thread
        return True

    def _drained(self) -> bool:
        """Everything journaled is published and acknowledged (read just now)."""
        return self._connected and not self._games and self._window.waiting == 0 and \
            self._at_end

    def _take_inbox(self) -> None:
        while self._inbox:
            item = self._inbox.popleft()
            if isinstance(item, Acked):
                if item.generation == self._generation:
                    if item.refused:
                        log.error("the broker did not take a message of board %s: %s (check "
                                  "the broker's ACL and [mqtt] topic_prefix)",
                                  self.settings.board_id, item.refused)
                    self.stats["acked"] += 1
                    if self._window.ack(item.mid):
                        self._history.note(self._wall(), self._window.done)
                        self._forget_sent()
            elif isinstance(item, Connected):
                self._on_connected(item)
            elif isinstance(item, Disconnected):
                if item.generation == self._generation:
                    self._connected = False
                    self._lost_at = self._wall()
                    log.warning("MQTT broker %s lost (%s): reconnecting; the journal keeps "
                                "everything to publish", self.settings.url, item.reason)
            elif item is _REWIND:
                self._stalled()
            elif isinstance(item, tuple) and item[0] == "reply":
                _, payload, client, mid = item
                self._publish("reply", payload)
                self.connection.ack(client, mid)
            elif isinstance(item, tuple) and item[0] == "resend":
                _, order, client, mid = item
                error = self._resend(order.game)
                self._publish("reply", payloads.reply_payload(
                    self.settings.board_id, order.id, error is None, error,
                    order.game if error is None else None, int(self._wall() * 1000)))
                self.connection.ack(client, mid)

    def _resend(self, game: str) -> str | None:
        """Queue `game` to be published again; why not, or None."""
        if not (self.archive.games_dir / game / JOURNAL).is_file():
            return f"no game {game} in this board's archive"
        busy = [model.game_id for model, _ in ([self._again] if self._again else [])]
        if game in self._resends or game in busy:
            return None  # (asked already: sent once)
        if len(self._resends) >= RESENDS:
            return f"{count(len(self._resends), 'game')} being published again already: ask later"
        self._resends.append(game)
        return None

    def _on_connected(self, event: Connected) -> None:
        self._generation = event.generation
        self._connected = True
        self.stats["connections"] += 1
        log.info("MQTT broker %s: board %s connected (session %s)", self.settings.url,
                 self.settings.board_id, "kept" if event.session_present else "new")
        self.connection.publish(self.settings.topic("status"), b"online", retain=True)
        resume = None
        if event.session_present and self._lost_at is not None:
            resume = self._history.at(self._lost_at - self.rewind_kept)
        self._rewind(resume)

    def _rewind(self, resume: Place | None = None) -> None:
        """Back to just after `resume`, or (None) to the start of the first game not wholly
        acknowledged (a game being sent again goes back to the head of its queue)."""
        if self._again is not None:
            model, tail = self._again
            tail.close()
            self._resends.appendleft(model.game_id)
            self._again = None
        self._window.reset()
        self._state_sig, self._pgn_version = None, -1
        if resume is not None and self._replay_from(resume):
            return
        self._sent.clear()
        self._unsent.clear()
        if self._tail is not None:
            self._tail.close()
        self._tail, self._model = None, None
        done = self._window.done
        live = self._live.game_id if self._live is not None else None
        first = resume.game if resume is not None else done.game if done is not None else live
        self._skip = resume
        self._games = self._archive_games(since=first) if first else []
        if self._games:
            self._known = max(self._known, self._games[-1])

    def _replay_from(self, resume: Place) -> bool:
        """Send again, from what was sent, the lines of the game being read after `resume`;
        False if what was sent does not reach back to it."""
        model = self._model
        if model is None or resume.game != model.game_id:
            return False
        sent, unsent = self._sent, self._unsent
        first = sent[0][0] if sent else unsent[0][0] if unsent else None
        if first is not None and first > Place(resume.game, resume.line + 1):
            return False  # (forgotten already: older than any rewind was to ask)
        if first is None and self._tail is not None and self._tail.line > resume.line:
            return False
        while sent and sent[-1][0] > resume:
            unsent.appendleft(sent.pop())
        return True

    def _forget_sent(self) -> None:
        """Drop what no rewind can ask for again: what was acknowledged before the oldest
        place the history keeps."""
        floor = self._history.floor
        sent = self._sent
        while sent and floor is not None and sent[0][0] <= floor:
            sent.popleft()

    def _stalled(self, resume: Place | None = None) -> None:
        """The connection did not take a message: from the first unacknowledged message
        again, shortly (a reconnection, if the connection is gone, decides again how far
        back); after a fault, from the first game not wholly acknowledged."""
        self._rewind(resume)
        self._retry_at = self._wall() + POLL

    def _archive_games(self, since: str) -> list[str]:
        games_dir = self.archive.games_dir
        if not games_dir.is_dir():
            return []
        return sorted(p.name for p in games_dir.iterdir()
                      if p.name >= since and (p / JOURNAL).is_file())

    def _learn_games(self) -> None:
        """A new game at the board: it (and any that came and went between two looks)
        is read after those before it."""
        live = self._live
        if live is None or live.game_id is None or live.game_id <= self._known:
            return
        if self._window.done is None:  # the first game ever: published from its start,
            self._window.done = Place(live.game_id, 0)  # also after a restart
            self._save_progress(force=True)
        # (the first game ever published: none before it)
        for game in self._archive_games(since=self._known) if self._known else []:
            if game > self._known and game not in self._games:
                self._games.append(game)
        if live.game_id not in self._games and (self._model is None or
                                                self._model.game_id != live.game_id):
            self._games.append(live.game_id)
        self._known = live.game_id

    def _pump(self, force_pgn: bool = False) -> None:
        self._at_end = False
        while self._window.waiting < self.window_size:
            if self._unsent:
                item = self._unsent[0]
                place, leaf, data = item
                mid = None if leaf is None else self._send(leaf, data or b"")
                if leaf is not None and mid is None:
                    self._stalled(self._window.done)
                    return
                self._unsent.popleft()
                self._window.add(place, mid)
                self._sent.append(item)
                continue
            if self._model is None:
                if not self._games:
                    break
                game = self._games.pop(0)
                self._model = GameModel(game)
                self._tail = JournalTail(self.archive.games_dir / game / JOURNAL)
                self._state_sig, self._pgn_version = None, -1
            assert self._tail is not None
            records = self._tail.read(self.window_size - self._window.waiting)
            self.stats["read"] += len(records)
            skip = self._skip
            for line, record in records:
                if skip is not None and skip.game == self._model.game_id and \
                        line <= skip.line:
                    self._model.take(record)  # (the game's state is built from its start)
                    continue
                self._unsent.append(self._line(line, record))
            if records:
                continue
            if not self._games:  # the latest game: it may still grow
                self._at_end = True
                break
            self._publish_state(final=True)  # a game the board has left: as it ended
            self._tail.close()
            self._tail, self._model = None, None
        if not self._games:
            self._publish_state(force_pgn=force_pgn)
        self._pump_again()

    def _pump_again(self) -> None:
        """The games the station asked for again (cmd/resend), each from its journal's
        start, in the window's room; a game the board has left ends with its state (not
        retained: the retained state stays the current game's, published again after)."""
        while self._window.waiting < self.window_size:
            if self._again is None:
                if not self._resends:
                    return
                game = self._resends.popleft()
                self._again = (GameModel(game),
                               JournalTail(self.archive.games_dir / game / JOURNAL))
            model, tail = self._again
            records = tail.read(self.window_size - self._window.waiting)
            for line, record in records:
                if not self._take(line, record, model):
                    self._stalled(self._window.done)
                    return
            if records:
                continue
            tail.close()
            self._again = None
            live = self._live.game_id if self._live is not None else None
            if model.game_id != live:
                self._publish("state", payloads.state_payload(
                    self.settings.board_id, model, None, int(self._wall() * 1000)))
            self._state_sig = None  # the current game's state again, after this one

    def _line(self, line: int, record: dict[str, Any], model: GameModel | None = None) -> Line:
        """What a journal line of `model`'s game (default: the stream's) publishes."""
        model = model or self._model
        assert model is not None
        effect = model.take(record)
        now = int(self._wall() * 1000)
        board = self.settings.board_id
        place = Place(model.game_id, line)
        if isinstance(effect, MoveMade):
            return place, "move", _json(payloads.move_payload(board, model, line, effect, now))
        if isinstance(effect, Alert):
            return place, "alert", _json(payloads.alert_payload(board, model, line, effect, now))
        if isinstance(effect, AlertCleared):
            return place, "clear", _json(payloads.clear_payload(board, model, line, effect, now))
        return place, None, None

    def _take(self, line: int, record: dict[str, Any], model: GameModel) -> bool:
        """Publish what a journal line of a game sent again holds; False if the connection
        did not take it."""
        place, leaf, data = self._line(line, record, model)
        mid = None if leaf is None else self._send(leaf, data or b"")
        if leaf is not None and mid is None:
            return False
        self._window.add(place, mid)
        return True

    def _publish_state(self, final: bool = False, force_pgn: bool = False) -> None:
        """The retained state (when it changed) and PGN (at most every pgn_every s while
        the game is played; at once when it ends or the board leaves it)."""
        model, live = self._model, self._live
        current = not final and live is not None and model is not None and \
            live.game_id == model.game_id
        if not final and live is not None and live.game_id is None and (
                model is None or model.ended):
            # the board waits for the next game's start position
            sig: object = ("setup", live.link, live.fen, live.tags)
            if sig != self._state_sig:
                self._state_sig = sig
                self._publish("state", payloads.state_payload(
                    self.settings.board_id, None, live, int(self._wall() * 1000)), retain=True)
            return
        if model is None:
            return
        running = live.phase if current and live is not None else "final"
        sig = (model.game_id, model.version, running, live.link if current and live else "")
        if sig != self._state_sig:
            self._state_sig = sig
            self._publish("state", payloads.state_payload(
                self.settings.board_id, model, live if current else None,
                int(self._wall() * 1000)), retain=True)
        if model.version != self._pgn_version:
            now = self._wall()
            if final or force_pgn or model.result is not None or \
                    now - self._pgn_at >= self.pgn_every:
                self._pgn_version, self._pgn_at = model.version, now
                pgn = model.pgn().encode("utf-8")
                self.connection.publish(self.settings.topic("pgn"), pgn, retain=True)

    def _publish(self, leaf: str, payload: dict[str, Any], retain: bool = False) -> int | None:
        return self._send(leaf, _json(payload), retain)

    def _send(self, leaf: str, data: bytes, retain: bool = False) -> int | None:
        self.stats["published"] += 1
        return self.connection.publish(self.settings.topic(leaf), data, retain)

    def _save_progress(self, force: bool = False) -> None:
        done = self._window.done
        if done is None or done == self._saved:
            return
        now = self._wall()
        if force or now - self._saved_at >= SAVE_EVERY:
            try:
                self.progress.save(done)
            except OSError as exc:
                log.error("cannot keep the MQTT progress in %s: %s", self.progress.path, exc)
                return
            self._saved, self._saved_at = done, now
