"""The station's web pages (Starlette): the hall for spectators, the arbiter's pages
behind a login, the live feed as server-sent events, the broadcast PGN.

Security: every write is a POST under /arbiter, which needs a signed-in session and the
session's CSRF token (a form field or the X-CSRF-Token header); the session cookie is
HttpOnly and SameSite=Strict and carries only a random session id, kept on the server,
so signing out ends it for good."""

from __future__ import annotations

import asyncio
import functools
import hmac
import json
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from board_ctl.errors import BoardCtlError
from board_ctl.station.broadcast import round_pgn
from board_ctl.station.feeds import FeedGate, FeedLimits, FeedResponse
from board_ctl.station.pairings import ROUND
from board_ctl.station.policy import SecurityHeaders
from board_ctl.station.push import Pusher
from board_ctl.station.station import CommandError, Station
from board_ctl.station.users import User, make_user

log = logging.getLogger(__name__)
SESSION_S = 12 * 3600
KEEPALIVE_S = 15.0
LOGIN_FAILURES = 5          # then (name, address) is locked for LOCK_S, twice as long each time
LOCK_S = 60.0
MAX_LOCK_S = 3600.0
FAILURES_KEPT = 1000        # (name, address) pairs remembered before the stale are forgotten
MAX_UPLOAD = 1_000_000
CLOCK_TEXT = re.compile(r"(?:(\d{1,3}):)?(\d{1,3}):([0-5]\d)(?:\.(\d{1,3}))?|"
                        r"(\d{1,6})(?:\.(\d{1,3}))?", re.ASCII)
MAX_CLOCK_MS = 100 * 3600 * 1000  # what a board accepts (cmd/clock): more than any control


def parse_clock(text: str) -> int:
    """`1:30:00`, `25:00`, `4:59.5` or plain seconds, as milliseconds (at most 100 h);
    ValueError saying what a time looks like. Integers only: no float can overflow."""
    match = CLOCK_TEXT.fullmatch(text.strip())
    if match is None:
        shown = text if len(text) <= 20 else text[:20] + "..."
        raise ValueError(f"{shown!r} is not a time (h:mm:ss, m:ss or seconds)")
    hours, minutes, seconds, fraction, plain, plain_fraction = match.groups()
    if plain is not None:
        ms = int(plain) * 1000 + (int(plain_fraction.ljust(3, "0")) if plain_fraction else 0)
    else:
        ms = (int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds)) * 1000
        ms += int(fraction.ljust(3, "0")) if fraction else 0
    if ms > MAX_CLOCK_MS:
        raise ValueError(f"{text.strip()!r} is more than the 100 hours a clock can be set to")
    return ms


@dataclass
class _Tries:
    """Failed sign-ins of one (name, address): the recent ones, and the locks so far."""
    recent: list[float]
    locks: int = 0
    until: float = 0.0  # locked until then

    def last(self) -> float:
        return max(self.recent[-1] if self.recent else 0.0, self.until)


@dataclass
class WebSession:
    user: str
    csrf: str
    expires: float


class Sessions:
    """Signed-in arbiters by random session id; in memory, so a restart signs out."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._sessions: dict[str, WebSession] = {}
        # Failed sign-ins by (name, client address): the spectators' page is public, so
        # anyone in the hall reaches the sign-in form, and a lock on the name alone let
        # him lock the arbiters out of the station with five wrong passwords a minute.
        # Each lock of the same pair lasts twice as long (up to an hour): a guesser gets
        # a few hundred tries a day, not 7,200. The address is the connection's, or a
        # trusted proxy's X-Forwarded-For (board-ctl arbiter --forwarded-allow-ips).
        self._failures: dict[tuple[str, str], _Tries] = {}
        self._prune_at = FAILURES_KEPT  # doubles past a spray of fresh names: amortised O(1)
        self._clock = clock

    def create(self, user: str) -> str:
        sid = secrets.token_urlsafe(32)
        self._sessions[sid] = WebSession(user, secrets.token_urlsafe(32),
                                         self._clock() + SESSION_S)
        return sid

    def get(self, sid: Any) -> WebSession | None:
        if not isinstance(sid, str):
            return None
        session = self._sessions.get(sid)
        if session is None or session.expires < self._clock():
            self._sessions.pop(sid, None)
            return None
        return session

    def end(self, sid: Any) -> None:
        if isinstance(sid, str):
            self._sessions.pop(sid, None)

    def locked(self, name: str, client: str) -> bool:
        tries = self._failures.get((name, client))
        return tries is not None and self._clock() < tries.until

    def failed(self, name: str, client: str) -> None:
        now = self._clock()
        if len(self._failures) >= self._prune_at:  # names sprayed: forget the stale ones
            # (a pair is kept while its lock, or the memory of its last one, lasts)
            self._failures = {key: tries for key, tries in self._failures.items()
                              if now - tries.last() < (MAX_LOCK_S if tries.locks else LOCK_S)}
            self._prune_at = max(FAILURES_KEPT, 2 * len(self._failures))
        tries = self._failures.setdefault((name, client), _Tries([]))
        if tries.locks and now - tries.last() >= MAX_LOCK_S:
            tries.locks = 0  # an hour without a try: the next lock is a minute again
        tries.recent = [t for t in tries.recent if now - t < LOCK_S] + [now]
        if len(tries.recent) >= LOGIN_FAILURES:
            tries.until = now + min(LOCK_S * 2 ** tries.locks, MAX_LOCK_S)
            tries.locks += 1
            tries.recent = []

    def succeeded(self, name: str, client: str) -> None:
        self._failures.pop((name, client), None)


def _templates() -> Jinja2Templates:
    folder = resources.files("board_ctl.station") / "templates"
    return Jinja2Templates(directory=str(folder))


def _standings(station: Station) -> list[dict[str, Any]]:
    return station.results.standings()


def build_app(station: Station, users: dict[str, User], secret_key: str,
              secure_cookies: bool = False, pusher: Pusher | None = None,
              ladder: Callable[[Station], list[dict[str, Any]]] | None = None,
              on_start: Callable[[asyncio.AbstractEventLoop], None] | None = None,
              on_stop: Callable[[], None] | None = None,
              feed_limits: FeedLimits | None = None) -> Starlette:
    templates = _templates()
    sessions = Sessions()
    limits = feed_limits or FeedLimits()
    gate = FeedGate(limits)

    def current(request: Request) -> WebSession | None:
        return sessions.get(request.session.get("sid"))

    def page(request: Request, name: str, **context: Any) -> Response:
        session = current(request)
        context.setdefault("arbiter", False)
        context.update(user=session.user if session else None,
                       csrf=session.csrf if session else "",
                       event=station.event, rounds=station.rounds())
        return templates.TemplateResponse(request, name, context)

    def login_required(handler: Callable[[Request, WebSession], Awaitable[Response]]
                       ) -> Callable[[Request], Awaitable[Response]]:
        async def wrapped(request: Request) -> Response:
            session = current(request)
            if session is None:
                if request.method == "GET":
                    return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
                return JSONResponse({"error": "sign in first"}, status_code=401)
            try:
                if request.method == "POST":
                    form = await request.form(max_part_size=MAX_UPLOAD)
                    token = request.headers.get("x-csrf-token") or form.get("csrf")
                    if not isinstance(token, str) or not hmac.compare_digest(token, session.csrf):
                        log.warning("refused a POST to %s by %s: bad CSRF token",
                                    request.url.path, session.user)
                        return JSONResponse({"error": "the page is out of date: reload it"},
                                            status_code=403)
                return await handler(request, session)
            finally:
                await request.close()  # Starlette leaves an uploaded file's temporary open
        return wrapped

    # ---- public --------------------------------------------------------------------

    async def hall(request: Request) -> Response:
        return page(request, "grid.html", feed="/events")

    async def board_page(request: Request) -> Response:
        board_id = request.path_params["board"]
        if board_id not in station.hall.boards:
            return PlainTextResponse(f"no board {board_id}", status_code=404)
        return page(request, "board.html", board=board_id, feed="/events",
                    api=f"/api/board/{board_id}")

    async def api_boards(request: Request) -> Response:
        return JSONResponse(station.snapshot(arbiter=False))

    async def api_board(request: Request) -> Response:
        view = station.board_detail(request.path_params["board"], arbiter=False)
        return JSONResponse(view) if view else JSONResponse({"error": "no such board"}, 404)

    async def events(request: Request) -> Response:
        return _feed(request, arbiter=False)

    def _feed(request: Request, arbiter: bool) -> Response:
        client = request.client.host if request.client else ""
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        refused = gate.enter(client)
        if refused is not None:  # come back later: the browser's EventSource will
            log.info("live page refused to %s: %s", client, refused)
            return Response(f"retry: {limits.busy_retry_ms}\n: busy: {refused}\n\n",
                            media_type="text/event-stream",
                            headers={**headers, "Connection": "close"})  # (no keep-alive)
        queue = station.subscribe(arbiter)
        loop = asyncio.get_running_loop()
        ends = loop.time() + limits.lifetime_s

        async def stream() -> AsyncIterator[str]:
            try:
                yield f"retry: 2000\ndata: {json.dumps(station.snapshot(arbiter))}\n\n"
                while station.subscribed(queue):
                    left = ends - loop.time()
                    if left <= 0:
                        return  # the page reconnects, from a fresh snapshot
                    try:
                        text = await asyncio.wait_for(queue.get(), min(KEEPALIVE_S, left))
                    except asyncio.TimeoutError:
                        if await request.is_disconnected():
                            return
                        yield ": keep-alive\n\n"
                        continue
                    yield f"data: {text}\n\n"
            finally:
                station.unsubscribe(queue)

        def closed() -> None:
            station.unsubscribe(queue)
            gate.leave(client)

        return FeedResponse(stream(), media_type="text/event-stream", headers=headers,
                            send_timeout_s=limits.send_timeout_s, on_close=closed)

    async def broadcast_index(request: Request) -> Response:
        return page(request, "broadcast.html", base=str(request.base_url).rstrip("/"),
                    push=pusher)

    async def broadcast_round(request: Request) -> Response:
        round_name = request.path_params["round"]
        if not ROUND.fullmatch(round_name):  # ASCII digits: "²".isdigit() is true too
            return PlainTextResponse("round-<n>: a round number (1 to 4 digits)", status_code=404)
        round_name = str(int(round_name))
        text = round_pgn(station.hall, round_name, station.pairings, station.event,
                         station.site)
        if not text:
            return PlainTextResponse(f"no game in round {round_name} yet", status_code=404)
        return Response(text, media_type="application/x-chess-pgn; charset=utf-8",
                        headers={"Cache-Control": "no-cache"})

    async def ladder_page(request: Request) -> Response:
        standings = (ladder or _standings)(station)
        return page(request, "ladder.html", standings=standings,
                    rated=list(station.results.rows.values()), waiting=station.unconfirmed())

    # ---- signing in ----------------------------------------------------------------

    async def login_form(request: Request) -> Response:
        request.session.setdefault("login_csrf", secrets.token_urlsafe(16))
        return page(request, "login.html", next=_safe_next(request.query_params.get("next")),
                    login_csrf=request.session["login_csrf"], error=None)

    async def login(request: Request) -> Response:
        form = await request.form()
        name = str(form.get("user", "")).strip()
        password = str(form.get("password", ""))
        next_url = _safe_next(str(form.get("next", "")))
        expected = request.session.get("login_csrf")
        client = request.client.host if request.client else ""
        error = None
        if not expected or not hmac.compare_digest(str(form.get("csrf", "")), str(expected)):
            error = "The sign-in form was out of date: try again."
        elif sessions.locked(name, client):
            error = "Too many failed attempts: wait a minute."
        else:
            user = users.get(name)
            # An unknown name costs the same scrypt as a wrong password: the answer's time
            # must not tell which names are arbiters.
            checked = await asyncio.to_thread((user or _decoy()).check, password)
            if checked and user is not None:
                request.session.pop("login_csrf", None)
                sessions.succeeded(name, client)
                sessions.end(request.session.get("sid"))
                request.session["sid"] = sessions.create(name)
                log.info("%s signed in", name)
                return RedirectResponse(next_url, status_code=303)
            sessions.failed(name, client)
            log.warning("failed sign-in for %r", name)
            error = "Unknown user or wrong password."
        request.session["login_csrf"] = secrets.token_urlsafe(16)
        response = page(request, "login.html", next=next_url, error=error,
                        login_csrf=request.session["login_csrf"])
        response.status_code = 401 if error else 200
        return response

    @login_required
    async def logout(request: Request, session: WebSession) -> Response:
        sessions.end(request.session.get("sid"))
        request.session.clear()
        return RedirectResponse("/", status_code=303)

    # ---- the arbiter ---------------------------------------------------------------

    @login_required
    async def arbiter_hall(request: Request, session: WebSession) -> Response:
        return page(request, "grid.html", arbiter=True, feed="/arbiter/events")

    @login_required
    async def arbiter_board(request: Request, session: WebSession) -> Response:
        board_id = request.path_params["board"]
        if board_id not in station.hall.boards:
            return PlainTextResponse(f"no board {board_id}", status_code=404)
        return page(request, "board.html", arbiter=True, board=board_id,
                    feed="/arbiter/events", api=f"/arbiter/api/board/{board_id}")

    @login_required
    async def arbiter_events(request: Request, session: WebSession) -> Response:
        return _feed(request, arbiter=True)

    @login_required
    async def arbiter_api_board(request: Request, session: WebSession) -> Response:
        view = station.board_detail(request.path_params["board"], arbiter=True)
        return JSONResponse(view) if view else JSONResponse({"error": "no such board"}, 404)

    def _done(command_id: str) -> Response:
        return JSONResponse({"ok": True, "id": command_id})

    @login_required
    async def ack(request: Request, session: WebSession) -> Response:
        form = await request.form()
        command_id = station.acknowledge(session.user, request.path_params["board"],
                                         str(form.get("code", "")))
        return _done(command_id)

    @login_required
    async def result(request: Request, session: WebSession) -> Response:
        """Two steps: the first POST answers what would be done and a one-time token;
        only a second POST with that token sends the result."""
        form = await request.form()
        board_id = request.path_params["board"]
        value, reason = str(form.get("result", "")), str(form.get("reason", ""))
        game = station._game(board_id)
        confirm = form.get("confirm")
        pending = request.session.get("confirm")
        if confirm:
            if not isinstance(pending, dict) or not hmac.compare_digest(
                    str(confirm), str(pending.get("token"))) or \
                    pending.get("board") != board_id or pending.get("result") != value:
                return JSONResponse({"error": "confirm the result again"}, status_code=409)
            request.session.pop("confirm", None)
            if pending.get("game") != game.game:  # the result was for the game before
                return JSONResponse({"error": f"board {game.board_no or board_id} has begun "
                                              "a new game since: the result was not sent"},
                                    status_code=409)
            return _done(station.set_result(session.user, board_id, value, reason))
        if value not in ("1-0", "0-1", "1/2-1/2"):
            return JSONResponse({"error": f"result {value!r}: 1-0, 0-1 or 1/2-1/2"}, 400)
        token = secrets.token_urlsafe(16)
        request.session["confirm"] = {"token": token, "board": board_id, "result": value,
                                      "game": game.game}
        white, black = game.white.name or "White", game.black.name or "Black"
        verb = "Override" if game.result != "*" else "Set"
        text = (f"{verb} the result of board {game.board_no or board_id} "
                f"({white} - {black}) to {value}?")
        if game.result != "*":
            text += f" The board has {game.result}."
        return JSONResponse({"confirm": text, "token": token})

    @login_required
    async def clock(request: Request, session: WebSession) -> Response:
        form = await request.form()
        times = {}
        for side in ("white", "black"):
            try:
                times[side] = parse_clock(str(form.get(side, "")))
            except ValueError as exc:  # the field named: the dialog shows it beside both
                return JSONResponse({"error": f"{side}: {exc}", "field": side},
                                    status_code=400)
        white, black = times["white"], times["black"]
        return _done(station.set_clock(session.user, request.path_params["board"],
                                       white, black))

    @login_required
    async def pairings_page(request: Request, session: WebSession) -> Response:
        return page(request, "pairings.html", arbiter=True,
                    pairings=station.pairing_status(), error=None, imported=None)

    @login_required
    async def pairings_import(request: Request, session: WebSession) -> Response:
        form = await request.form(max_part_size=MAX_UPLOAD)
        upload = form.get("file")
        source = "pairings"
        if isinstance(upload, UploadFile) and upload.filename:
            source = upload.filename
            raw = await upload.read()
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError:
                text = raw.decode("cp1252", "replace")
        else:
            text = str(form.get("text", ""))
        error, imported = None, None
        try:
            imported = len(station.import_pairings(session.user, text, source))
        except BoardCtlError as exc:
            error = str(exc)
        response = page(request, "pairings.html", arbiter=True,
                        pairings=station.pairing_status(), error=error, imported=imported)
        response.status_code = 400 if error else 200
        return response

    @login_required
    async def pairing_send(request: Request, session: WebSession) -> Response:
        form = await request.form()
        board_no = str(form.get("board_no", ""))
        if not re.fullmatch(r"[0-9]{1,6}", board_no):  # int() of anything else raised: a 500
            raise CommandError(f"board {board_no[:20]!r} is not a board number")
        station.send_pairing_now(session.user, str(form.get("round", "")), int(board_no))
        return RedirectResponse("/arbiter/pairings", status_code=303)

    @login_required
    async def confirm_result(request: Request, session: WebSession) -> Response:
        form = await request.form()
        station.confirm_result(session.user, str(form.get("board", "")),
                               str(form.get("game", "")), str(form.get("result", "")))
        return RedirectResponse("/ladder", status_code=303)

    @login_required
    async def journal_page(request: Request, session: WebSession) -> Response:
        return page(request, "journal.html", arbiter=True,
                    entries=list(reversed(station.journal()))[:1000])

    async def on_error(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": str(exc)}, status_code=400)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        station.loop = loop
        if pusher is not None:
            station.on_round_change = pusher.changed
        if on_start is not None:
            on_start(loop)
        try:
            yield
        finally:
            if on_stop is not None:
                on_stop()

    static = resources.files("board_ctl.station") / "static"
    routes = [
        Route("/", hall),
        Route("/board/{board}", board_page),
        Route("/events", events),
        Route("/api/boards", api_boards),
        Route("/api/board/{board}", api_board),
        Route("/broadcast/", broadcast_index),
        Route("/broadcast/round-{round}/games.pgn", broadcast_round),
        Route("/ladder", ladder_page),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/arbiter", arbiter_hall),
        Route("/arbiter/board/{board}", arbiter_board),
        Route("/arbiter/events", arbiter_events),
        Route("/arbiter/api/board/{board}", arbiter_api_board),
        Route("/arbiter/board/{board}/ack", ack, methods=["POST"]),
        Route("/arbiter/board/{board}/result", result, methods=["POST"]),
        Route("/arbiter/board/{board}/clock", clock, methods=["POST"]),
        Route("/arbiter/pairings", pairings_page, methods=["GET"]),
        Route("/arbiter/pairings", pairings_import, methods=["POST"]),
        Route("/arbiter/pairings/send", pairing_send, methods=["POST"]),
        Route("/arbiter/journal", journal_page),
        Route("/arbiter/ladder/confirm", confirm_result, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(static)), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders),
                  Middleware(SessionMiddleware, secret_key=secret_key,  # type: ignore[arg-type]
                             session_cookie="board_ctl_station", max_age=SESSION_S,
                             same_site="strict", https_only=secure_cookies)]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                     exception_handlers={BoardCtlError: on_error})


@functools.cache
def _decoy() -> User:
    """A user nobody can sign in as, checked in place of an unknown name."""
    return make_user("nobody", secrets.token_urlsafe(32))


def _safe_next(value: str | None) -> str:
    """Only a path on this site: a crafted link cannot send a signed-in arbiter away."""
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/arbiter"


def load_secret(path: Path) -> str:
    """The key that signs session cookies: made once, kept (0600) in the data dir."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    import os
    key = secrets.token_hex(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        stream.write(key + "\n")
    return key
