"""The LiveChess-compatible endpoint: a WebSocket server in its own thread.

The service shows it every new ViewState from its loop thread (it is one of the
service's observers); `show` only hands the state to the endpoint's asyncio loop and
returns, so no client, however slow or gone, ever delays an LED frame. Everything else
happens on that loop: requests are answered, feeds are sent without waiting on any
client (a client that stopped reading is skipped, one that left is forgotten), and a
`setup` goes back to the service as a `NewGame` command on its queue.

Served at ``ws://HOST:PORT/api/v1.0`` (the subset of DGT LiveChess 2.x that
lichess.org/dgt and chess.com use):

- ``eboards``: this board (serial number, source, ACTIVE or NOTRESPONDING, the game's
  position, orientation, clock);
- ``subscribe`` to the ``eboardevent`` feed: the board at once, then after every
  completed move (either side) all moves since the start, cumulative;
- ``unsubscribe``;
- ``call`` with method ``setup`` (a new game from a FEN: the LEDs guide the pieces
  there, and the moves start again from []) or ``flip``;

and ``GET /api/v1.0/eboards`` over plain HTTP. Anything else gets an error response
naming what was wrong; the connection stays open.

What clients may hold is bounded ([livechess] max_connections, max_subscriptions): a
connection beyond the cap is refused at its handshake (HTTP 503 saying why), a subscribe
beyond a connection's cap gets an error. A move's feed is encoded once for all the
subscriptions (each message is that param with the subscription's id spliced in).

Memory: every connection costs some tens of kB while it is open (its buffers, its
parser, asyncio's transport); closed, that is freed, but the C allocator keeps most of
it for reuse rather than giving it back to the system, and asyncio's socket transport is
left in a reference cycle (itself, its read callback) that only a full collection frees.
So the resident set follows the most connections ever open at once: the cap bounds it.
When the last of a batch of connections has closed, one full collection (see
COLLECT_AFTER) frees the cycles at once instead of at some later, larger one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import chess
from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request as HttpRequest
from websockets.http11 import Response as HttpResponse
from websockets.typing import Origin

from board_ctl.config import LiveChessConfig
from board_ctl.core.effects import Effect
from board_ctl.errors import HardwareError
from board_ctl.livechess.address import Listen
from board_ctl.livechess.eboard import (
    BoardReport,
    eboard_json,
    feed_json,
    first_feed_json,
    initial_report,
    report_from,
)
from board_ctl.livechess.protocol import (
    Feed,
    Request,
    RequestError,
    call_response,
    encode_id,
    error_response,
    feed_response,
    field,
    parse_request,
)
from board_ctl.sensorlog import StartInfo
from board_ctl.service.messages import NewGame
from board_ctl.service.view import ViewState

log = logging.getLogger(__name__)

WS_PATH = "/api/v1.0"
EBOARDS_PATH = "/api/v1.0/eboards"
FEED = "eboardevent"
# Browser pages allowed to connect (any page could otherwise restart the game in progress
# with a `setup`); programs that send no Origin header are always allowed.
DEFAULT_ORIGINS = ("https://lichess.org", "https://www.chess.com", "https://chess.com")
START_TIMEOUT = 10.0  # s to bind and start serving
STOP_TIMEOUT = 5.0  # s to close the connections and the thread
CLOSE_TIMEOUT = 1.0  # s a client has to answer our close (the service is stopping)
# The caps' defaults, [livechess] max_connections and max_subscriptions: lichess.org/dgt
# opens one connection and subscribes once; a few pages and reloads fit easily.
MAX_CONNECTIONS = LiveChessConfig.max_connections
MAX_SUBSCRIPTIONS = LiveChessConfig.max_subscriptions
COLLECT_AFTER = 32  # connections closed since the last full collection: collect when
# none is left open (the asyncio transports' cycles; see the module's docstring),
COLLECT_DELAY = 1.0  # s after the last one closed


def epoch_ms() -> int:
    return time.time_ns() // 1_000_000


class _Client:
    """One connection: the feed ids it subscribed to."""

    def __init__(self, connection: ServerConnection) -> None:
        self.connection = connection
        # in subscription order: the id as the client sent it -> the id as JSON (encoded
        # once, spliced into every feed message)
        self.feeds: dict[Any, str] = {}


class LiveChessEndpoint:
    """`board-ctl run --livechess`: an observer of the service, and a LiveChess server."""

    def __init__(self, listen: Listen, *, serialnr: str, start: StartInfo,
                 origins: Sequence[str] = DEFAULT_ORIGINS,
                 max_connections: int = MAX_CONNECTIONS,
                 max_subscriptions: int = MAX_SUBSCRIPTIONS,
                 clock: Callable[[], int] = epoch_ms) -> None:
        self.listen = listen
        self.max_connections = max_connections
        self.max_subscriptions = max_subscriptions  # per connection
        self._admitted: set[ServerConnection] = set()  # handshakes let through, not closed
        self._closed_since_collect = 0
        self.serialnr = serialnr
        self.base_start = start  # a setup keeps its time control and tags
        self.origins = tuple(origins)
        self._now_ms = clock
        self._report: BoardReport = initial_report(start.fen)
        self._flipped = False
        self._clients: dict[ServerConnection, _Client] = {}
        self._sent_key: tuple[object, ...] | None = None  # what the last feeds said
        # A setup asked for and not yet in the service's states: (its FEN, the game then).
        self._awaiting: tuple[str, int] | None = None
        self._submit: Callable[[object], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._start_error: BaseException | None = None
        self.port = listen.port  # the bound port once started
        self._latest: tuple[ViewState, int] | None = None  # the last state shown, and when
        self._wake_pending = False  # our loop is asked to take the latest state

    # ------------------------------------------------------------------ life cycle

    @property
    def url(self) -> str:
        return self.listen.url(self.port)

    def start(self, submit: Callable[[object], None]) -> None:
        """Bind and serve from a thread of our own; `submit` puts a command on the
        service's queue. A HardwareError says why the address cannot be used."""
        self._submit = submit
        self._thread = threading.Thread(target=self._run, name="livechess", daemon=True)
        self._thread.start()
        if not self._started.wait(START_TIMEOUT):
            raise HardwareError(f"livechess: not serving on {self.url} after "
                                f"{START_TIMEOUT:g} s")
        error = self._start_error
        if error is not None:
            self._thread.join(STOP_TIMEOUT)
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            raise HardwareError(f"livechess: cannot listen on {self.listen.host}:"
                                f"{self.listen.port}: {reason}") from None
        log.info("LiveChess endpoint on %s", self.url)

    def close(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:  # the loop is already gone
                pass
        if self._thread is not None:
            self._thread.join(STOP_TIMEOUT)
            if self._thread.is_alive():
                log.warning("livechess: the server thread did not stop within %g s",
                            STOP_TIMEOUT)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._serve(loop))
        except BaseException as exc:  # reported to start(), never to the service's loop
            if not self._started.is_set():
                self._start_error = exc
                self._started.set()
            else:
                log.exception("livechess: the server stopped")
        finally:
            self._loop = None
            loop.close()

    async def _serve(self, loop: asyncio.AbstractEventLoop) -> None:
        origins: list[Origin | None] | None = None  # "*": any page may connect
        if "*" not in self.origins:
            origins = [None, *(Origin(o) for o in self.origins)]
        server: Server = await serve(
            self._connection, self.listen.host, self.listen.port, origins=origins,
            process_request=self._http, server_header="board_ctl LiveChess endpoint",
            close_timeout=CLOSE_TIMEOUT, logger=log,
            # no permessage-deflate: a zlib stream pair per connection costs some 300 kB
            # (malloc'd by zlib, kept by the allocator after it closes) and every
            # feed message a compression, for a few hundred bytes on 127.0.0.1
            compression=None)
        self._stop = asyncio.Event()
        sockets = list(server.sockets)
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        self._loop = loop
        self._take_latest()  # what was shown before we ran
        self._started.set()
        try:
            await self._stop.wait()
        finally:
            server.close()
            await server.wait_closed()

    # ------------------------------------------------------------------ the service's side

    def show(self, state: ViewState, effects: Sequence[Effect]) -> None:
        """From the service's loop thread: leave the state for our loop and return.

        Only the latest state counts (feeds are cumulative), so a burst of states wakes
        our thread once: the loop thread pays one attribute write, and a wake-up only
        when none is pending."""
        self._latest = (state, self._now_ms())
        loop = self._loop
        if loop is None or self._wake_pending:
            return
        self._wake_pending = True
        try:
            loop.call_soon_threadsafe(self._take_latest)
        except RuntimeError:  # closing: nobody is listening any more
            pass

    def _take_latest(self) -> None:
        self._wake_pending = False  # first: a state shown from now on wakes us again
        latest = self._latest
        if latest is not None:
            self._on_state(*latest)

    def message(self, text: str) -> None:
        pass

    def _on_state(self, state: ViewState, time_ms: int) -> None:
        self._report = report_from(state, time_ms)
        self._feed_if_changed()

    def _feed_if_changed(self) -> None:
        """Feeds go out when the moves, the start, the phase or the orientation change;
        not while a setup is on its way (the old game's moves are not the client's)."""
        report = self._report
        if self._awaiting is not None:
            fen, game = self._awaiting
            if report.start != fen or (report.phase != "setup" and report.game == game):
                return
            self._awaiting = None
        key = (report.game, report.start, report.san, report.phase, self._flipped)
        if key != self._sent_key:
            self._sent_key = key
            self._send_feeds()

    def _send_feeds(self) -> None:
        """Every subscription gets the board and its moves, without waiting on anyone."""
        feed = Feed(feed_json(self._report, self.serialnr, self._flipped), self._now_ms())
        for client in list(self._clients.values()):
            for encoded_id in client.feeds.values():
                broadcast([client.connection], feed.to(encoded_id))

    # ------------------------------------------------------------------ clients

    async def _connection(self, connection: ServerConnection) -> None:
        client = self._clients[connection] = _Client(connection)
        peer = connection.remote_address
        log.info("livechess: client %s connected", peer)
        try:
            async for message in connection:
                for reply in self._answer(client, message):
                    await connection.send(reply)
                self._feed_if_changed()  # after the reply: a flip's feed
        except ConnectionClosed:
            pass
        finally:
            del self._clients[connection]
            self._admitted.discard(connection)
            log.info("livechess: client %s left", peer)
            self._closed_since_collect += 1
            if not self._clients and self._closed_since_collect >= COLLECT_AFTER:
                # a moment later: the transports close after their handlers have returned
                asyncio.get_running_loop().call_later(COLLECT_DELAY, self._collect)

    def _collect(self) -> None:
        """The closed connections' cycles freed, if none has connected meanwhile."""
        if not self._clients and self._closed_since_collect >= COLLECT_AFTER:
            self._closed_since_collect = 0
            gc.collect()

    def _answer(self, client: _Client, message: str | bytes) -> list[str]:
        """The responses to one message, in order (an error response for a bad one)."""
        try:
            request = parse_request(message)
            if request.call == "eboards":
                return [call_response(request.id, [self._eboard()], self._now_ms())]
            if request.call == "subscribe":
                return self._subscribe(client, request)
            if request.call == "unsubscribe":
                return self._unsubscribe(client, request)
            if request.call == "call":
                return self._call(request)
            raise RequestError(f"unknown call {request.call!r}: this board answers eboards, "
                               f"subscribe, unsubscribe and call", request.id)
        except RequestError as exc:
            log.info("livechess: %s", exc)
            return [error_response(exc.id, str(exc), self._now_ms())]

    def _eboard(self) -> dict[str, Any]:
        return eboard_json(self._report, self.serialnr, self._flipped)

    def _subscribe(self, client: _Client, request: Request) -> list[str]:
        what = "subscribe"
        feed = field(request.param, "feed", str, what, request.id)
        if feed != FEED:
            raise RequestError(f"subscribe: unknown feed {feed!r}: this board serves "
                               f"{FEED!r}", request.id)
        # Lenient where clients are: some send no feed id (their feeds then carry the
        # request's id) or no serial number (this is the only board).
        param = request.param
        feed_id = (field(param, "id", (int, float, str), what, request.id) if "id" in param
                   else request.id)
        inner = param.get("param")
        if inner is None:
            inner = {}
        elif not isinstance(inner, dict):
            raise RequestError("subscribe: \"param\" must be an object such as "
                               "{\"serialnr\": ...}", request.id)
        serialnr = (field(inner, "serialnr", (str, int), what, request.id)
                    if "serialnr" in inner else self.serialnr)
        if str(serialnr) != self.serialnr:
            raise RequestError(f"subscribe: no e-board with serialnr {serialnr!r} (this "
                               f"board is {self.serialnr!r}: ask eboards)", request.id)
        if feed_id not in client.feeds:
            if len(client.feeds) >= self.max_subscriptions:
                raise RequestError(f"subscribe: this connection has {len(client.feeds)} "
                                   f"subscriptions, the most one may have: unsubscribe one "
                                   f"first", request.id)
            client.feeds[feed_id] = encode_id(feed_id)
        now = self._now_ms()
        first = first_feed_json(self._report, self.serialnr, self._flipped)
        return [call_response(request.id, None, now), feed_response(feed_id, first, now)]

    def _unsubscribe(self, client: _Client, request: Request) -> list[str]:
        feed_id = field(request.param, "id", (int, float, str), "unsubscribe", request.id)
        if feed_id not in client.feeds:
            raise RequestError(f"unsubscribe: no feed {feed_id!r} on this connection",
                               request.id)
        del client.feeds[feed_id]
        return [call_response(request.id, None, self._now_ms())]

    def _call(self, request: Request) -> list[str]:
        method = field(request.param, "method", str, "call", request.id)
        param = request.param.get("param")
        if method == "setup":
            self._setup(request, param)
        elif method == "flip":
            self._flip(request, param)
        else:
            raise RequestError(f"call: unknown method {method!r}: this board takes setup "
                               f"and flip", request.id)
        return [call_response(request.id, None, self._now_ms())]

    def _setup(self, request: Request, param: Any) -> None:
        """A new game from the FEN: the one in progress ends (kept as unfinished), the
        LEDs guide the pieces to the new position, and the moves count from there."""
        fen = field(param, "fen", str, "setup", request.id)
        try:
            board = chess.Board(fen)
        except ValueError as exc:
            raise RequestError(f"setup: not a FEN ({exc}): {fen!r}", request.id) from None
        if not board.is_valid():
            raise RequestError(f"setup: not a legal position ({board.status()!r}): {fen!r}",
                               request.id)
        if self._submit is None:
            raise RequestError("setup: the board is not running", request.id)
        start = dataclasses.replace(self.base_start, fen=board.fen(), problems=())
        self._awaiting = (start.fen, self._report.game)
        self._submit(NewGame(start, f"a LiveChess client set up {start.fen}"))
        log.info("livechess: setup %s", start.fen)

    def _flip(self, request: Request, param: Any) -> None:
        """The orientation a client asks for, reported back. The squares themselves are
        the board's wiring: `board` stays the position from White's side."""
        if isinstance(param, dict) and "flip" in param:
            self._flipped = field(param, "flip", bool, "flip", request.id)
        else:
            self._flipped = not self._flipped

    def _admit(self, connection: ServerConnection) -> bool:
        """Under the cap, counting the handshakes let through and not yet closed (one
        refused later, by its origin, closes its transport and stops counting)."""
        self._admitted = {c for c in self._admitted
                          if c.transport is not None and not c.transport.is_closing()}
        if len(self._admitted) >= self.max_connections:
            return False
        self._admitted.add(connection)
        return True

    # ------------------------------------------------------------------ plain HTTP

    def _http(self, connection: ServerConnection, request: HttpRequest) -> HttpResponse | None:
        path = urlsplit(request.path).path.rstrip("/")
        if path == EBOARDS_PATH:
            response = connection.respond(HTTPStatus.OK, json.dumps([self._eboard()]))
            del response.headers["Content-Type"]
            response.headers["Content-Type"] = "application/json"
            return response
        if path == WS_PATH:
            if not self._admit(connection):
                log.info("livechess: a connection refused: %d open, the most allowed",
                         self.max_connections)
                return connection.respond(
                    HTTPStatus.SERVICE_UNAVAILABLE,
                    f"too many LiveChess connections: {self.max_connections} are open, the "
                    f"most this board serves ([livechess] max_connections)\n")
            return None  # the WebSocket handshake goes on
        return connection.respond(
            HTTPStatus.NOT_FOUND, f"{path or '/'}: not here. This board serves a WebSocket at "
                                  f"{WS_PATH} and GET {EBOARDS_PATH}\n")

