"""Engines that misbehave: one that never answers `go`, one that never answers `uci`, one
that prints garbage, one behind a shell script, and Debian's Stockfish behind a proxy
that swallows a search. The fake engines are small scripts in tests/engines/.

What must hold: a missed deadline is a failed engine (ended, started again, asked again,
then given up on with the LEDs and the log saying so); every engine process board-ctl
starts is ended and reaped on every way out (checked in the process table: no process
left running, none a zombie, none an orphan of PID 1); `--once` with an engine given up
saves the game unfinished and exits with status 3."""

from __future__ import annotations

import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest

from board_ctl.archive import Archive
from board_ctl.core import events as ev
from board_ctl.core.effects import Blink, Remote
from board_ctl.core.profiles import PROFILES
from board_ctl.opponent.engine import (
    DEADLINE_FACTOR,
    DEADLINE_MARGIN,
    EngineError,
    EngineSettings,
    EngineThread,
    deadline,
    find_engine,
)
from board_ctl.opponent.messages import EngineFailed, EngineReply, Think
from board_ctl.opponent.opponent import RETRIES, Opponent, OpponentSettings
from board_ctl.sensorlog import StartInfo
from board_ctl.service.game import OutputNamer
from board_ctl.service.service import ENGINE_GAVE_UP, RunOptions, Service
from conftest import missing_tool
from servicekit import FakeBoard, RecordingView, board_ctl, child_env, wait_until

ENGINES = Path(__file__).resolve().parent / "engines"
START = chess.Board().occupied


@pytest.fixture
def engines(tmp_path: Path) -> Path:
    """The fake engines copied under this test's own folder: its path in a process's
    command line marks the processes this test started, and no other's."""
    folder = tmp_path / "engines"
    shutil.copytree(ENGINES, folder)
    return folder


def processes(marker: str) -> list[tuple[int, int, str]]:
    """(pid, parent pid, state) of every process whose command line names `marker`
    (a zombie's is empty: found by its parent being ours instead, see zombies())."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        if marker in cmdline:
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            found.append((int(entry.name), int(ppid), state))
    return found


def state_of(pid: int) -> str | None:
    """A process's state letter (Z: a zombie, not reaped), or None once it is gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def assert_ended(pids: list[int]) -> None:
    assert pids, "no engine process was started"
    left = {pid: state_of(pid) for pid in pids if state_of(pid) is not None}
    assert not left, f"engine processes left (Z: a zombie): {left}"


def thread(settings: EngineSettings, margin: float = 0.3
           ) -> tuple[EngineThread, queue.Queue[object]]:
    answers: queue.Queue[object] = queue.Queue()
    return EngineThread(settings, answers.put, margin=margin), answers


def think(key: str, seconds: float = 0.05) -> Think:
    return Think(key, chess.Board(), chess.engine.Limit(time=seconds))


# ---------------------------------------------------------------- the deadline


def test_the_deadline_is_the_search_time_and_a_margin() -> None:
    board = chess.Board()
    fixed = Think("a", board, chess.engine.Limit(time=2.0))
    assert deadline(fixed) == 2.0 * DEADLINE_FACTOR + DEADLINE_MARGIN
    # with a clock: all it has left and its increment (the side to move is White)
    clocked = Think("b", board, chess.engine.Limit(white_clock=30.0, black_clock=500.0,
                                                   white_inc=2.0, black_inc=9.0))
    assert deadline(clocked) == 32.0 * DEADLINE_FACTOR + DEADLINE_MARGIN
    black = board.copy()
    black.push_uci("e2e4")
    assert deadline(Think("c", black, clocked.limit), margin=1.0) == \
        509.0 * DEADLINE_FACTOR + 1.0


def test_an_engine_that_never_answers_go_is_a_failed_engine(engines: Path) -> None:
    engine, answers = thread(EngineSettings(engine=str(engines / "hangs_on_go.py")))
    engine.start()
    try:
        engine.ask(think("first"))
        failed = answers.get(timeout=10)  # before the fix: nothing, ever
        assert isinstance(failed, EngineFailed) and failed.key == "first"
        assert failed.reason == "HangsOnGo did not answer within 0.375 s"
        first = engine.pids[0]
        assert state_of(first) is None  # ended and reaped before the failure was said
        engine.ask(think("again"))  # started again for the next request
        again = answers.get(timeout=10)
        assert isinstance(again, EngineFailed) and again.key == "again"
        assert len(engine.pids) == 2
    finally:
        engine.close()
    assert_ended(engine.pids)


def test_a_search_superseded_while_hung_does_not_hang_the_next(engines: Path) -> None:
    """A newer request cancels a hung search: python-chess then waits for a bestmove that
    never comes; the newer request's own deadline ends that engine."""
    engine, answers = thread(EngineSettings(engine=str(engines / "hangs_on_go.py")))
    engine.start()
    try:
        engine.ask(think("old", 60.0))
        engine.ask(think("new"))
        failed = answers.get(timeout=10)
        assert isinstance(failed, EngineFailed) and failed.key == "new"
        with pytest.raises(queue.Empty):
            answers.get(timeout=0.3)  # nothing for the cancelled one
    finally:
        engine.close()
    assert_ended(engine.pids)


# ---------------------------------------------------------------- every process ended


@pytest.mark.parametrize("script, env, timeout, message", [
    ("never_uci.py", {}, 0.5, "did not answer within 0.5 s"),
    ("garbage.py", {}, 0.5, "did not answer within 0.5 s"),
    ("garbage.py", {"GARBAGE_EXIT": "1"}, 30,
     "engine process died unexpectedly (exit code: 3)"),
])
def test_an_engine_that_fails_to_start_leaves_no_process(
        engines: Path, monkeypatch: pytest.MonkeyPatch, script: str, env: dict[str, str],
        timeout: float, message: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    engine, _ = thread(EngineSettings(engine=str(engines / script)))
    with pytest.raises(EngineError, match=message.replace("(", r"\(").replace(")", r"\)")):
        engine.start(timeout=timeout)
    assert_ended(engine.pids)  # before the fix: still running (or not reaped)
    assert not processes(str(engines))


@pytest.mark.slow  # (about 2 s: the close waits out QUIT_TIMEOUT before ending the group)
def test_closing_ends_an_engine_started_through_a_script(engines: Path) -> None:
    """The engine is a shell script's child (no exec): its whole process group ends."""
    engine, _ = thread(EngineSettings(engine=str(engines / "wrapper.sh")))
    engine.start()
    assert len(processes(str(engines))) == 2  # the script and the engine under it
    engine.close()
    assert_ended(engine.pids)
    assert not processes(str(engines))  # before the fix: the python child left running


def test_a_close_during_the_start_ends_the_engine(engines: Path) -> None:
    engine, _ = thread(EngineSettings(engine=str(engines / "never_uci.py")))
    errors: list[BaseException] = []

    def start() -> None:
        try:
            engine.start(30)
        except EngineError as exc:
            errors.append(exc)
    started = threading.Thread(target=start)
    started.start()
    wait_until(lambda: bool(engine.pids), what="the engine's process")
    engine.close()
    started.join(10)
    assert not started.is_alive()  # not the 30 s start timeout
    assert [str(e) for e in errors] == [f"opponent.engine: {engines / 'never_uci.py'} "
                                        "stopped while starting"]
    assert_ended(engine.pids)


def wait_for_engine(marker: str, parent: int) -> None:
    wait_until(lambda: any(ppid == parent for _, ppid, _ in processes(marker)),
               timeout=30, what="board-ctl to start the engine")


@pytest.mark.slow
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_the_engine_starts_ends_it(tmp_path: Path, engines: Path,
                                                  signum: int, status: int) -> None:
    """Ctrl-C (the engine is in a process group of its own: the terminal's SIGINT never
    reaches it) or SIGTERM while board-ctl waits for the engine's `uciok`."""
    run = subprocess.Popen(
        [sys.executable, "-m", "board_ctl.cli", "run", "--opponent",
         str(engines / "never_uci.py"), "--once", "--view", "plain"], cwd=tmp_path,
        env=child_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        wait_for_engine(str(engines), run.pid)
        run.send_signal(signum)
        out, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == status, err
    assert err.strip() == (f"board-ctl run: {signal.Signals(signum).name} while starting: "
                           "stopped, nothing started is left running")
    assert not processes(str(engines))  # before the fix: never_uci.py, a child of PID 1


@pytest.mark.slow
def test_a_service_that_fails_after_the_engine_started_ends_it(tmp_path: Path,
                                                               engines: Path) -> None:
    """An exception on the way (here: no board on the port) after the engine started."""
    result = board_ctl("run", "--opponent", str(engines / "wrapper.sh"), "--port",
                       str(tmp_path / "no-such-board"), "--once", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert not processes(str(engines))


# ---------------------------------------------------------------- the game waits, and says so


def rig(tmp_path: Path, engine: str, once: bool, margin: float = 0.2
        ) -> tuple[Service, FakeBoard, RecordingView, Opponent]:
    opponent = Opponent(OpponentSettings(EngineSettings(engine=engine), "black",
                                         movetime=0.05))
    opponent.engine.margin = margin
    opponent.start()
    board, view = FakeBoard(), RecordingView()
    service = Service(board, profile=PROFILES["casual"], start=StartInfo(),
                      namer=OutputNamer(tmp_path), options=RunOptions(once=once),
                      view=view, archive=Archive(tmp_path / "data"), opponent=opponent)
    return service, board, view, opponent


def e4(service: Service) -> None:
    """The board set up, then 1. e4 released: the engine (Black) is to move."""
    for event in (ev.Snapshot(0.5, START), ev.Lifted(1.0, chess.E2), ev.Placed(1.5, chess.E4),
                  ev.Tick(3.0)):
        service.submit(event)


@pytest.mark.slow  # (six engines started and given up on)
def test_an_engine_given_up_on_is_shown_and_the_game_goes_on_after_a_takeback(
        tmp_path: Path, engines: Path) -> None:
    service, board, view, opponent = rig(tmp_path, str(engines / "hangs_on_go.py"), False)
    runner = threading.Thread(target=service.run, daemon=True)
    runner.start()
    try:
        e4(service)
        given_up = view.wait_message(lambda m: "gave up" in m, timeout=30)
        assert given_up == ("HangsOnGo did not answer within 0.275 s; gave up after "
                            f"{RETRIES + 1} tries: the game waits (restart board-ctl, or "
                            "check the engine)")
        starting = [m for m in view.all_messages if m.endswith("starting it again")]
        assert len(starting) == RETRIES
        # the LEDs: the computer's LED off (it thinks no more), the alert LED fast
        wait_until(lambda: board.frames[-1].status.remote == Remote.NONE
                   and board.frames[-1].status.alert == Blink.FAST, what="the LEDs")
        assert view.last is not None and ("engine-failed", given_up.split(" (restart")[0]
                                          ) in view.last.alerts
        # the person takes his move back: the engine is not needed, the LEDs say so
        service.submit(ev.TakebackAsked(4.0))
        wait_until(lambda: opponent.failed is None and board.frames[-1].status.alert is None,
                   what="the failure no longer shown")
        assert len(opponent.engine.pids) == RETRIES + 1
        # and the same move again: the engine is asked again (and fails again, said again)
        for event in (ev.Lifted(4.5, chess.E4), ev.Placed(5.0, chess.E2), ev.Tick(6.5),
                      ev.Lifted(7.0, chess.E2), ev.Placed(7.5, chess.E4), ev.Tick(9.0)):
            service.submit(event)
        wait_until(lambda: len([m for m in view.all_messages if "gave up" in m]) == 2,
                   timeout=30, what="the engine given up on again")
        wait_until(lambda: board.frames[-1].status.alert == Blink.FAST, what="the LEDs")
        assert len(opponent.engine.pids) == 2 * (RETRIES + 1)
    finally:
        service.request_stop()
        runner.join(30)
    assert not runner.is_alive()
    assert_ended(opponent.engine.pids)


def test_once_with_an_engine_given_up_saves_the_game_and_exits_3(tmp_path: Path,
                                                                  engines: Path) -> None:
    service, board, view, opponent = rig(tmp_path, str(engines / "hangs_on_go.py"), True)
    done: list[int] = []
    runner = threading.Thread(target=lambda: done.append(service.run()), daemon=True)
    runner.start()
    e4(service)
    runner.join(60)  # before the fix: it waits for ever
    assert not runner.is_alive(), "--once went on waiting for the engine"
    assert done == [ENGINE_GAVE_UP] == [3]
    assert service.error == (f"HangsOnGo did not answer within 0.275 s; gave up after "
                             f"{RETRIES + 1} tries; the game is saved unfinished")
    with open(service.games[0].pgn, encoding="utf-8") as stream:
        pgn = chess.pgn.read_game(stream)
    assert pgn is not None and pgn.headers["Result"] == "*"
    assert [m.uci() for m in pgn.mainline_moves()] == ["e2e4"]
    unfinished = Archive(tmp_path / "data").unfinished()  # resumed at the next start
    assert unfinished is not None
    assert [r["san"] for r in unfinished.recovered.records if r.get("kind") == "move"] == ["e4"]
    assert_ended(opponent.engine.pids)


@pytest.fixture
def stockfish() -> str:
    try:
        return find_engine("stockfish")
    except EngineError:
        missing_tool("Debian's stockfish is not installed (apt-get install stockfish)")
        raise


@pytest.mark.slow
def test_stockfish_whose_search_hangs_is_started_again_and_plays(
        tmp_path: Path, engines: Path, stockfish: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    stalls = tmp_path / "stalls"
    stalls.write_text("1")  # its first search never comes back
    monkeypatch.setenv("PROXY_STALLS", str(stalls))
    service, board, view, opponent = rig(tmp_path, str(engines / "stockfish_proxy.py"),
                                         False, margin=1.0)
    runner = threading.Thread(target=service.run, daemon=True)
    runner.start()
    try:
        e4(service)
        # its move ("Stockfish plays ..."), not the game's start ("... Stockfish 15.1 plays Black")
        said = view.wait_message(lambda m: m.startswith("Stockfish") and " plays " in m,
                                 timeout=30)
        failures = [m for m in view.all_messages if "did not answer within" in m]
        assert len(failures) == 1 and failures[0].endswith("; starting it again")
        assert stalls.read_text() == "0" and len(opponent.engine.pids) == 2
        assert opponent.failed is None
    finally:
        service.request_stop()
        runner.join(30)
    assert_ended(opponent.engine.pids)
    assert not processes(str(engines))  # the proxy's Stockfish with it


@pytest.mark.slow
def test_a_search_that_never_stops_does_not_hold_the_next_game(
        tmp_path: Path, engines: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The game ends (the engine lost on time) while its search hangs: python-chess sends
    `stop` and waits for a bestmove that never comes. The next game's first search must
    not wait behind it (up to its own deadline, with an hour's clock more than that)."""
    stalls = tmp_path / "stalls"
    stalls.write_text("1")
    monkeypatch.setenv("PROXY_STALLS", str(stalls))
    engine, answers = thread(EngineSettings(engine=str(engines / "stockfish_proxy.py")),
                             margin=1.0)
    engine.start()
    try:
        hour = chess.engine.Limit(white_clock=3600.0, black_clock=3600.0)
        engine.ask(Think("lost on time", chess.Board(), hour))
        wait_until(lambda: stalls.read_text() == "0", what="the search swallowed")
        engine.cancel()  # the game is over
        blitz = chess.engine.Limit(white_clock=5.0, black_clock=5.0)
        engine.ask(Think("next game", chess.Board(), blitz))
        reply = answers.get(timeout=30)  # before the fix: failed, its deadline spent waiting
        assert isinstance(reply, EngineReply) and reply.key == "next game"
        assert len(engine.pids) == 2  # ended and started again
    finally:
        engine.close()
    assert_ended(engine.pids)
    assert not processes(str(engines))


@pytest.mark.slow
def test_board_ctl_once_against_an_engine_that_hangs(tmp_path: Path, engines: Path) -> None:
    """The whole path: board-ctl run --once, the emulator's person, an engine that never
    answers `go` (the default deadline margin: some 20 s in all)."""
    pgn = tmp_path / "game.pgn"
    result = board_ctl("run", "--opponent", str(engines / "hangs_on_go.py"), "--movetime",
                       "0.2", "--once", "--speed", "10", "--view", "plain", "--pgn", str(pgn),
                       "--data-dir", str(tmp_path / "data"), cwd=tmp_path, timeout=120)
    assert result.returncode == 3, result.stderr + result.stdout[-2000:]
    assert result.stderr.strip() == (
        f"board-ctl run: HangsOnGo did not answer within "
        f"{0.2 / 10 * DEADLINE_FACTOR + DEADLINE_MARGIN:.3g} s; gave up after "
        f"{RETRIES + 1} tries; the game is saved unfinished")
    assert "stays unfinished in the archive and goes on at the next start" in result.stdout
    with open(pgn, encoding="utf-8") as stream:
        game = chess.pgn.read_game(stream)
    assert game is not None and game.headers["Result"] == "*"
    assert len(list(game.mainline_moves())) == 1  # the person's first move, kept
    assert not processes(str(engines))


@pytest.mark.slow
def test_board_ctl_with_an_engine_that_never_answers_uci(tmp_path: Path,
                                                         engines: Path) -> None:
    result = board_ctl("run", "--opponent", str(engines / "never_uci.py"), "--once",
                       cwd=tmp_path, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip() == (f"board-ctl run: --opponent: {engines / 'never_uci.py'} "
                                     "did not answer within 10 s")
    assert not processes(str(engines))  # before the fix: a child of PID 1, running on
