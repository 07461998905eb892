"""The engine: a UCI program in its own process, talked to by python-chess's `chess.engine`
on a thread of its own (an asyncio loop), so that nothing the service loop does ever
waits for it.

`EngineThread.ask(request)` returns at once; the answer comes back through the `deliver`
callback (the service's queue). A newer request cancels the one being searched
(python-chess stops the engine's search), so a takeback or a new game never waits for a
search nobody needs any more. The engine's strength is set once, when it starts: UCI
``Skill Level`` for `level`, ``UCI_LimitStrength``/``UCI_Elo`` for `elo` (or for
`level` on an engine without ``Skill Level``).

Every answer has a deadline (`deadline`): the time the search was given (a fixed time a
move, else what is left on the engine's clock) and a margin. An engine that misses it is
a failed engine, as one that crashed: its process is ended and the request answered with
`EngineFailed` (the opponent starts it again and retries). Every engine process started
here is ended and reaped before the thread lets go of it, on every way out: a start that
fails or times out, a failure in a game, `close()`, and a Ctrl-C or SIGTERM while it
starts (the process has its own process group, so the terminal's Ctrl-C never reaches
it: ending it is our job).
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import random
import shutil
import signal
import subprocess
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
import chess.polyglot

from board_ctl.errors import BoardCtlError
from board_ctl.opponent.messages import (
    Deliver,
    EngineFailed,
    EngineReply,
    JudgeDraw,
    Request,
    Suggest,
    Think,
)

log = logging.getLogger(__name__)

EXTRA_PATH = ("/usr/games",)  # where Debian installs stockfish (not on a service's PATH)
DEBIAN_PACKAGE = "stockfish"
START_TIMEOUT = 10.0  # s for the engine to start and answer `uci`
# An answer's deadline: the search's own time (real seconds), DEADLINE_FACTOR times, and
# DEADLINE_MARGIN s on top (an engine niced under a busy service, a slow Pi).
DEADLINE_FACTOR = 1.5
DEADLINE_MARGIN = 5.0
QUIT_TIMEOUT = 2.0  # s an engine has to leave after `quit` before it is killed
REAP_TIMEOUT = 5.0  # s for a killed engine's process to be reaped (it cannot refuse)
# The engine runs this much nicer than the service: when they compete for a core (a Pi
# with other work, a shared machine) the board's LEDs come first, the search second.
ENGINE_NICENESS = 10
LEVELS = (0, 20)  # `level`: Stockfish's Skill Level range, mapped onto other engines' Elo

# The draw rule: the engine accepts a draw offer when its evaluation, from its own side,
# is at most -ACCEPT_WORSE_CP (it is worse), or within DRAWN_CP of 0 from move
# DRAWN_FROM_MOVE on (a level position late in the game).
ACCEPT_WORSE_CP = 50
DRAWN_CP = 15
DRAWN_FROM_MOVE = 30
MATE_CP = 100_000


class EngineError(BoardCtlError, OSError):
    """The engine cannot be found, started or configured, or it stopped."""


class EngineTimeout(EngineError):
    """The engine missed an answer's deadline (a search that never ends)."""


@dataclass(frozen=True)
class EngineSettings:
    """What [opponent] asks of the engine (see config/board.example.toml)."""

    engine: str = "stockfish"  # a name on PATH (or in /usr/games), or a path
    level: int | None = None  # 0-20: UCI Skill Level
    elo: int | None = None  # UCI_LimitStrength with UCI_Elo
    book: str = ""  # a Polyglot opening book ("": none)


# ---------------------------------------------------------------- finding and configuring


def find_engine(name: str, path: str | None = None,
                extra: tuple[str, ...] = EXTRA_PATH) -> str:
    """The engine's executable: a path, or a name looked up on `path` (default $PATH) and
    in `extra` (/usr/games)."""
    if os.sep in name:
        file = Path(name).expanduser()
        if file.is_file() and os.access(file, os.X_OK):
            return str(file)
        raise EngineError(f"opponent.engine: {name} is not an executable file")
    search = os.pathsep.join([path if path is not None else os.environ.get("PATH", os.defpath),
                              *extra])
    found = shutil.which(name, path=search)
    if found is None:
        hint = (f"install Debian's package {DEBIAN_PACKAGE} (apt-get install {DEBIAN_PACKAGE})"
                if name == DEBIAN_PACKAGE else "give its path")
        where = " or in ".join(["PATH", *extra]) if extra else "PATH"
        raise EngineError(f"opponent.engine: no engine {name!r} on {where}: {hint}")
    return found


def strength_options(options: Mapping[str, chess.engine.Option], settings: EngineSettings,
                     name: str) -> tuple[dict[str, int | bool], str]:
    """The UCI options that set the engine's strength, and how the PGN names it."""
    if settings.elo is not None:
        elo = _option(options, "UCI_Elo")
        if elo is None or _option(options, "UCI_LimitStrength") is None:
            raise EngineError(f"opponent.elo: {name} has no UCI_Elo option; use level")
        low, high = elo.min, elo.max
        if low is not None and high is not None and not low <= settings.elo <= high:
            raise EngineError(f"opponent.elo: {name} plays at Elo {low}-{high}, "
                              f"not {settings.elo}")
        return {"UCI_LimitStrength": True, "UCI_Elo": settings.elo}, f"Elo {settings.elo}"
    if settings.level is None:
        return {}, ""
    level = settings.level
    skill = _option(options, "Skill Level")
    if skill is not None:
        if skill.min is not None and skill.max is not None and not skill.min <= level <= skill.max:
            raise EngineError(f"opponent.level: {name}'s Skill Level is {skill.min}-"
                              f"{skill.max}, not {level}")
        return {"Skill Level": level}, f"level {level}"
    elo = _option(options, "UCI_Elo")
    if elo is not None and elo.min is not None and elo.max is not None \
            and _option(options, "UCI_LimitStrength") is not None:
        mapped = elo.min + round((elo.max - elo.min) * (level - LEVELS[0]) / (LEVELS[1] - LEVELS[0]))
        return {"UCI_LimitStrength": True, "UCI_Elo": mapped}, f"level {level}"
    raise EngineError(f"opponent.level: {name} has neither a Skill Level nor a UCI_Elo option")


def _option(options: Mapping[str, chess.engine.Option], name: str) -> chess.engine.Option | None:
    return options.get(name)  # python-chess's option map ignores case, as UCI does


def _nicer(pid: int) -> None:
    """The engine's process ENGINE_NICENESS nicer than ours (not fatal where refused)."""
    try:
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, pid, min(ours + ENGINE_NICENESS, 19))
    except (OSError, AttributeError) as exc:  # (AttributeError: no such call off POSIX)
        log.debug("engine priority unchanged: %s", exc)


def search_time(request: Request) -> float:
    """The real seconds a request's search may take: its fixed time, else what is left on
    the engine's clock (and its increment): past that it has lost on time anyway."""
    limit = request.limit
    if limit.time is not None:
        return float(limit.time)
    if isinstance(request, Think):
        white = request.board.turn == chess.WHITE
        clock = limit.white_clock if white else limit.black_clock
        increment = (limit.white_inc if white else limit.black_inc) or 0.0
        if clock is not None:
            return float(clock) + float(increment)
    return START_TIMEOUT  # (a depth or nodes limit: none of the opponent's requests)


def deadline(request: Request, margin: float = DEADLINE_MARGIN) -> float:
    """The real seconds the engine has to answer `request` before it counts as failed."""
    return search_time(request) * DEADLINE_FACTOR + margin


def accepts_draw(score_cp: int, fullmove_number: int) -> bool:
    """The draw rule (see ACCEPT_WORSE_CP): the engine's evaluation from its own side."""
    if score_cp <= -ACCEPT_WORSE_CP:
        return True
    return abs(score_cp) <= DRAWN_CP and fullmove_number >= DRAWN_FROM_MOVE


# ---------------------------------------------------------------- the engine's thread


_RUNNING: weakref.WeakSet[EngineThread] = weakref.WeakSet()  # started, not yet closed


@atexit.register
def _close_all() -> None:
    """A program that exits without closing its engine (an uncaught exception, a path
    that forgot): its engines are ended all the same (a daemon thread would just stop,
    and its process outlive us as an orphan)."""
    for engine in list(_RUNNING):
        engine.close()


class EngineThread:
    """The engine process and the asyncio loop that talks to it, on a daemon thread."""

    def __init__(self, settings: EngineSettings, deliver: Deliver,
                 rng: random.Random | None = None, margin: float = DEADLINE_MARGIN) -> None:
        self.settings = settings
        self.deliver = deliver
        self.rng = rng or random.Random()
        self.margin = margin  # s: an answer's deadline beyond its search time (see deadline)
        self.path = find_engine(settings.engine)
        self.book = Path(settings.book).expanduser() if settings.book else None
        if self.book is not None and not self.book.is_file():
            raise EngineError(f"opponent.book: no such file {self.book}")
        self.name = Path(self.path).name  # the engine's own name once it has said it
        self.strength = ""
        self.pids: list[int] = []  # every engine process started, in order
        self._start_timeout = START_TIMEOUT
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._closing = threading.Event()  # close() was called (from any thread)
        self._engine: chess.engine.UciProtocol | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._endings: set[asyncio.Task[None]] = set()  # processes being ended
        self._options: dict[str, int | bool] = {}
        self._task: asyncio.Task[None] | None = None
        self._unsettled = False  # a search was cancelled: is the engine ready again?
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    @property
    def label(self) -> str:
        """The PGN name: ``Stockfish 15.1 (level 3)``."""
        return f"{self.name} ({self.strength})" if self.strength else self.name

    # --- lifecycle (service thread)

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start the engine and wait until it has answered; EngineError if it cannot.
        Whatever ends the wait (a failure, the timeout, a Ctrl-C), no process is left."""
        self._start_timeout = timeout
        self._thread = threading.Thread(target=self._run, name="engine", daemon=True)
        _RUNNING.add(self)
        self._thread.start()
        try:  # (the thread ends a start that takes too long, the process with it)
            if not self._ready.wait(timeout + QUIT_TIMEOUT + REAP_TIMEOUT):
                raise EngineError(f"opponent.engine: {self.path} did not answer within "
                                  f"{timeout:g} s")
        except BaseException:
            self.close()
            raise
        if self._error is not None:
            error = self._error
            self.close()
            if isinstance(error, EngineError):
                raise error
            raise EngineError(f"opponent.engine: cannot start {self.path}: {error}") from None

    def ask(self, request: Request) -> None:
        """Search `request` (cancelling a search under way); the answer is delivered."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._begin, request)

    def cancel(self) -> None:
        """Stop the search under way, if any; nothing is delivered for it."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._cancel_task)

    def close(self) -> None:
        """End the engine (asked to quit, else killed) and its thread; returns once its
        process is reaped."""
        self._closing.set()
        _RUNNING.discard(self)
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stopping.set)
            except RuntimeError:  # the loop closed meanwhile
                pass
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=QUIT_TIMEOUT + REAP_TIMEOUT + 1.0)
            if thread.is_alive():
                log.warning("the engine's thread did not stop; processes %s", self.pids)

    # --- the engine's thread

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # noqa: BLE001 - reported to start(), never lost
            log.exception("engine thread failed")
            self._error = self._error or exc
            self._ready.set()

    async def _main(self) -> None:
        self._stopping = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        if self._closing.is_set():  # close() came before the loop ran
            self._stopping.set()
        try:
            self._error = await self._first_start()
            self._ready.set()
            if self._error is None:
                await self._stopping.wait()
                self._cancel_task()
                if self._task is not None:
                    await asyncio.gather(self._task, return_exceptions=True)
        finally:  # the process ended and reaped, whatever happened
            await self._quit(polite=self._error is None)
            if self._endings:
                await asyncio.gather(*self._endings, return_exceptions=True)

    async def _first_start(self) -> BaseException | None:
        """Start the engine; the error that stopped it (a start that took too long, or
        close() called meanwhile), or None."""
        assert self._stopping is not None
        opening = asyncio.ensure_future(self._open(first=True))
        stopping = asyncio.ensure_future(self._stopping.wait())
        done, _ = await asyncio.wait({opening, stopping}, timeout=self._start_timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if opening in done:
            return opening.exception()
        opening.cancel()
        await asyncio.gather(opening, return_exceptions=True)
        if stopping in done:
            return EngineError(f"opponent.engine: {self.path} stopped while starting")
        return EngineError(f"opponent.engine: {self.path} did not answer within "
                           f"{self._start_timeout:g} s")

    async def _open(self, first: bool = False) -> chess.engine.UciProtocol:
        # setpgrp: a Ctrl-C for the service is not the engine's; its stderr is not ours
        transport, engine = await chess.engine.UciProtocol.popen(
            self.path, setpgrp=True, stderr=subprocess.DEVNULL)
        self._transport, self._engine = transport, engine  # (ended by _quit from now on)
        self.pids.append(transport.get_pid())
        _nicer(transport.get_pid())
        await engine.initialize()
        if first:
            self.name = engine.id.get("name", self.name)
            self._options, self.strength = strength_options(engine.options, self.settings,
                                                            self.name)
        if self._options:
            await engine.configure(self._options)
        log.info("engine %s started (%s)", self.label, self.path)
        return engine

    async def _quit(self, polite: bool = True) -> None:
        """End the current engine process (`polite`: asked to quit first) and wait until
        it is reaped. The ending goes on if the caller is cancelled meanwhile."""
        transport, engine = self._transport, self._engine
        self._transport = self._engine = None
        if transport is None or engine is None:
            return
        assert self._loop is not None
        ending = self._loop.create_task(self._end(transport, engine, polite))
        self._endings.add(ending)
        ending.add_done_callback(self._endings.discard)
        await asyncio.shield(ending)

    @staticmethod
    async def _end(transport: asyncio.SubprocessTransport,
                   engine: chess.engine.UciProtocol, polite: bool) -> None:
        pid = transport.get_pid()
        exited = engine.returncode  # set once the process is reaped and its pipes closed
        if polite and not exited.done():
            try:
                engine.send_line("quit")
                await asyncio.wait_for(asyncio.shield(exited), QUIT_TIMEOUT)
            except (asyncio.TimeoutError, OSError, RuntimeError, AssertionError):
                pass
        if not exited.done():
            try:  # its whole process group: a wrapper script's children with it
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                transport.kill()
            try:
                await asyncio.wait_for(asyncio.shield(exited), REAP_TIMEOUT)
            except asyncio.TimeoutError:
                log.warning("engine process %d not reaped %g s after SIGKILL", pid,
                            REAP_TIMEOUT)
        transport.close()

    def _begin(self, request: Request) -> None:
        self._cancel_task()
        assert self._loop is not None
        self._task = self._loop.create_task(self._serve(request))

    def _cancel_task(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            self._unsettled = True  # python-chess sent `stop`: the engine owes a bestmove

    async def _serve(self, request: Request) -> None:
        try:
            reply = await self._answer(request)
        except asyncio.CancelledError:
            raise
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, OSError) as exc:
            reason = (f"{self.name} {exc}" if isinstance(exc, EngineTimeout)
                      else f"{self.name} failed: {exc or type(exc).__name__}")
            log.info("%s", reason)  # (the opponent says it, with what happens next)
            await self._quit(polite=False)  # the next request starts it again
            self.deliver(EngineFailed(request.key, request, reason))
            return
        self.deliver(reply)

    async def _answer(self, request: Request) -> EngineReply:
        if isinstance(request, Think):
            booked = self._book_move(request.board)
            if booked is not None:
                return EngineReply(request.key, request, move=booked, from_book=True)
        engine = self._engine
        if engine is not None and self._unsettled:
            # A search was stopped: an engine that never ends it would hold this request
            # behind it up to this request's own deadline (a clock's: hours). It must be
            # ready within the margin, or it is ended and started again.
            self._unsettled = False
            # (not cancelled when late: python-chess cannot cancel a command the engine
            # has not reached; ending the engine ends it, its outcome then dropped)
            ping = asyncio.ensure_future(engine.ping())
            ping.add_done_callback(lambda done: done.cancelled() or done.exception())
            await asyncio.wait({ping}, timeout=self.margin)
            if not ping.done() or ping.exception() is not None:
                log.info("%s did not stop its search within %g s: started again",
                         self.name, self.margin)
                await self._quit(polite=False)
                engine = None
        if engine is None:
            try:
                engine = await asyncio.wait_for(self._open(), self._start_timeout)
            except asyncio.TimeoutError:
                raise EngineTimeout(f"did not start within {self._start_timeout:g} s"
                                    ) from None
        allowed = deadline(request, self.margin)
        try:
            return await asyncio.wait_for(self._search(engine, request), allowed)
        except asyncio.TimeoutError:
            raise EngineTimeout(f"did not answer within {allowed:.3g} s") from None

    @staticmethod
    async def _search(engine: chess.engine.UciProtocol, request: Request) -> EngineReply:
        if isinstance(request, Think):
            result = await engine.play(request.board, request.limit)
            if result.move is None:
                raise chess.engine.EngineError("the engine returned no move")
            return EngineReply(request.key, request, move=result.move)
        info = await engine.analyse(request.board, request.limit)
        if isinstance(request, Suggest):
            pv = info.get("pv") or []
            if not pv:
                raise chess.engine.EngineError("the engine gave no line")
            return EngineReply(request.key, request, move=pv[0])
        score = info.get("score")
        if score is None:
            raise chess.engine.EngineError("the engine gave no evaluation")
        cp = score.pov(request.side).score(mate_score=MATE_CP)
        assert cp is not None
        return EngineReply(request.key, request, accept=accepts_draw(
            cp, request.board.fullmove_number), score_cp=cp)

    def _book_move(self, board: chess.Board) -> chess.Move | None:
        if self.book is None:
            return None
        try:
            with chess.polyglot.open_reader(self.book) as reader:
                return reader.weighted_choice(board, random=self.rng).move
        except IndexError:  # out of book
            return None
        except (OSError, ValueError) as exc:
            log.warning("opening book %s unreadable: %s", self.book, exc)
            return None
