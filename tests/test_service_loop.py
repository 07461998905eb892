"""The service loop on a fake board: no threads, a manual clock, the queue stepped by hand.

Game after game, set-up guidance, the sensor log beside the PGN, what --once waits for,
a yanked link (down, back), the board's end, a stop request in the middle of a game."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import chess
import chess.pgn
import pytest

from board_ctl.core import events as ev
from board_ctl.core.effects import Colour
from board_ctl.core.profiles import PROFILES
from board_ctl.replay import replay_events
from board_ctl.sensorlog import StartInfo, load_sensor_log
from board_ctl.service.game import OutputNamer
from board_ctl.service.messages import BoardDone, LinkDown, LinkUp
from board_ctl.service.service import RunOptions, Service
from conftest import read_pgn
from script import events
from servicekit import FakeBoard, RecordingView, pgn_moves

FOOLS_MATE = "-f2 +f3 -e7 +e5 -g2 +g4 -d8 +h4"
START = chess.Board().occupied



class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(tmp_path: Path, once: bool = False, pgn: Path | None = None
         ) -> tuple[Service, FakeBoard, RecordingView, Clock]:
    board, view, clock = FakeBoard(), RecordingView(), Clock()
    service = Service(board, profile=PROFILES["fide"], start=StartInfo(),
                      namer=OutputNamer(tmp_path, pgn=pgn),
                      options=RunOptions(once=once, lost_timeout=3.0, linger=1.5),
                      view=view, clock=clock)
    service.open()
    return service, board, view, clock


def feed(service: Service, items: Iterable[object]) -> None:
    for item in items:
        service.queue.put(item)
    while not service.queue.empty():
        service.step(timeout=0)


def test_setup_guidance_then_game_after_game(tmp_path: Path) -> None:
    service, board, view, _ = make(tmp_path)
    missing = START & ~chess.BB_E2
    feed(service, [ev.Snapshot(0.5, missing)])
    assert service.session is None
    lights = {s.square: s.colour for s in board.frames[-1].squares}
    assert lights == {chess.E2: Colour.GREEN}  # put a piece back on e2
    feed(service, [ev.Placed(2.0, chess.E2)])
    assert service.session is not None and service.session.t0 == 2.0
    assert board.frames[-1].status.white_to_move and not board.frames[-1].squares

    feed(service, events(FOOLS_MATE, t=2.0) + [ev.Tick(9.0)])
    first = service.session
    assert first.over and first.result.result == "0-1"
    assert first.files.pgn.exists()
    assert any(m.startswith("game 1: 0-1 (checkmate)") for m in view.all_messages)

    # the pieces go back: game 2 starts when the start position is there again
    feed(service, events("-h4 +d8 -g4 +g2 -e5 +e7 -f3", t=12.0))
    assert service.session is first  # not yet: f2 is still empty
    feed(service, [ev.Placed(16.0, chess.F2)])
    assert service.session is not first and service.session.number == 2
    feed(service, events("-e2 +e4", t=17.0) + [ev.Tick(19.0)])
    service.close()  # stopping mid-game: the game is finished as it stands and written
    second = service.games[1]
    game = read_pgn(second.pgn)
    assert game is not None and [m.uci() for m in game.mainline_moves()] == ["e2e4"]
    assert game.headers["Result"] == "*"
    assert board.stopped

    # each game's sensor log replays to its own PGN
    for files in service.games:
        log = load_sensor_log(files.sensor)
        assert not log.errors and log.events[0].t >= 0
        record = replay_events(log.start, log.events, PROFILES["fide"])
        assert record.pgn_text() == files.pgn.read_text(encoding="utf-8")


def test_once_lingers_after_the_result_then_stops(tmp_path: Path) -> None:
    service, _, _, clock = make(tmp_path, once=True, pgn=tmp_path / "x.pgn")
    feed(service, [ev.Snapshot(0.0, START), *events(FOOLS_MATE + " Cb", t=1.0)])
    assert service.session is not None and service.session.over
    assert service.step(timeout=0)  # still reading: a late clock press may follow
    feed(service, [ev.ClockPressed(8.0, chess.WHITE)])
    clock.now += 1.0
    assert service.step(timeout=0)
    clock.now += 1.0
    assert not service.step(timeout=0)
    service.close()
    assert service.exit_code == 0
    assert (tmp_path / "x.pgn").exists() and (tmp_path / "x.sensor.jsonl").exists()
    assert (tmp_path / "x.report.jsonl").exists()
    sensor = (tmp_path / "x.sensor.jsonl").read_text().splitlines()
    assert '"ev": "clock", "side": "white"' in sensor[-1]  # the late press is recorded


def test_yanked_link_keeps_the_game_and_once_waits_for_it(tmp_path: Path) -> None:
    service, _, view, clock = make(tmp_path, once=True)
    feed(service, [ev.Snapshot(0.0, START), *events("-e2 +e4 Cw -e7 +e5 Cb")])
    feed(service, [LinkDown(4.0, "the board stopped answering"), ev.Tick(4.5)])
    assert any("board link lost at t=4.0 s" in m and "the 2 moves" in m
               for m in view.all_messages)
    clock.now += 2.0
    assert service.step(timeout=0)  # 2 s away: still waiting
    # it comes back; its snapshot shows White's next move made meanwhile
    after = (START & ~chess.BB_E2 & ~chess.BB_E7 & ~chess.BB_G1) | chess.BB_E4 | chess.BB_E5 \
        | chess.BB_F3
    feed(service, [LinkUp(6.0, "firmware x"), ev.Snapshot(6.0, after), ev.Tick(6.5),
                   ev.Lifted(7.0, chess.B8), ev.Placed(7.5, chess.C6),
                   ev.ClockPressed(8.0, chess.BLACK)])
    assert any(m.startswith("board link back after 2.0 s") for m in view.all_messages)
    assert service.session is not None
    assert [m.san for m in service.session.record.moves] == ["e4", "e5", "Nf3", "Nc6"]
    feed(service, [LinkDown(9.0, "the board stopped answering")])
    clock.now += 3.0
    assert not service.step(timeout=0)  # away lost_timeout: the end of the board's log
    service.close()
    assert service.exit_code == 0 and service.stop_reason == "the board went away"
    text = service.games[0].pgn.read_text(encoding="utf-8")
    assert pgn_moves(text) == ["e4", "e5", "Nf3", "Nc6"]


def test_board_done_finishes_the_log_like_a_replay(tmp_path: Path) -> None:
    service, _, view, _ = make(tmp_path)
    script = events("-e2 +e4 Cw -e7 +e5")  # Black's move left standing, no clock press
    feed(service, [ev.Snapshot(0.0, START), *script])
    feed(service, [BoardDone(5.0, True, "the board emulator played its whole log")])
    assert not service.step(timeout=0)
    service.close()
    record = replay_events(StartInfo(), script, PROFILES["fide"])
    assert service.last_session is not None
    assert [m.san for m in service.last_session.record.moves] == ["e4", "e5"] \
        == [m.san for m in record.moves]
    assert service.exit_code == 0


def test_board_failure_is_exit_status_1(tmp_path: Path) -> None:
    service, _, _, _ = make(tmp_path)
    feed(service, [BoardDone(1.0, False, "the board emulator exited with status 2: boom")])
    service.close()
    assert service.exit_code == 1 and (service.error or "").endswith("boom")


def test_once_without_any_game_is_an_error(tmp_path: Path) -> None:
    service, _, _, clock = make(tmp_path, once=True)
    feed(service, [ev.Snapshot(0.0, START & ~chess.BB_A1), LinkDown(1.0, "gone")])
    clock.now += 5
    assert not service.step(timeout=0)
    service.close()
    assert service.exit_code == 1 and "never showed the start position" in (service.error or "")


@pytest.mark.parametrize("number,name", [(1, "out.pgn"), (2, "out-2.pgn")])
def test_pgn_option_names_every_file(tmp_path: Path, number: int, name: str) -> None:
    import datetime as dt

    files = OutputNamer(tmp_path, pgn=tmp_path / "out.pgn").files(number, dt.datetime.now())
    assert files.pgn.name == name
    assert files.sensor.name == name.replace(".pgn", ".sensor.jsonl")
    assert files.report.name == name.replace(".pgn", ".report.jsonl")


class ObserverLog:
    def __init__(self) -> None:
        self.shown: list[tuple[object, tuple[object, ...]]] = []
        self.messages: list[str] = []
        self.closed = False

    def show(self, state, effects) -> None:  # type: ignore[no-untyped-def]
        self.shown.append((state, tuple(effects)))

    def message(self, text: str) -> None:
        self.messages.append(text)

    def close(self) -> None:
        self.closed = True


def test_observers_see_what_the_view_sees_and_are_closed(tmp_path: Path) -> None:
    view, observer = ObserverLog(), ObserverLog()
    service = Service(FakeBoard(), profile=PROFILES["fide"], start=StartInfo(),
                      namer=OutputNamer(tmp_path), options=RunOptions(once=True),
                      view=view, observers=[observer], clock=Clock())
    service.open()
    service.submit(ev.Snapshot(0.5, START))
    feed(service, events(FOOLS_MATE, t=1.0))
    service.close()
    assert observer.shown == view.shown and observer.messages == view.messages
    assert observer.shown[-1][0].result == "0-1"  # type: ignore[attr-defined]
    assert observer.closed


def test_a_new_game_command_ends_the_game_and_guides_to_the_new_start(tmp_path: Path) -> None:
    from board_ctl.service.messages import NewGame

    service, board, _, _ = make(tmp_path)
    feed(service, [ev.Snapshot(0.5, START)] + events("-e2 +e4 @0.5 -e7 +e5", t=1.0))
    first = service.session
    assert first is not None and len(first.record.moves) == 1  # e5 waits for White
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    feed(service, [NewGame(StartInfo(fen=fen), "setup from a client")])
    assert service.session is None
    game = read_pgn(first.files.pgn)
    assert game is not None and game.headers["Result"] == "*"
    # the game's end completes the move standing on the board, as at the end of a log
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5"]
    target = chess.Board(fen).occupied
    lights = {s.square: s.colour for s in board.frames[-1].squares}
    assert {sq for sq, colour in lights.items() if colour == Colour.RED} == set(
        chess.scan_forward(service.occupied & ~target))
    feed(service, [ev.Snapshot(5.0, target)])
    assert service.session is not None and service.session.start.fen == fen
    feed(service, events("-e2 +e4", t=6.0))
    service.close()
    game2 = read_pgn(service.games[-1].pgn)
    assert game2 is not None and game2.headers["FEN"] == fen
    assert [m.uci() for m in game2.mainline_moves()] == ["e2e4"]


def shown_positions(batched: bool, tmp_path: Path) -> list[tuple[str, int, tuple[str, ...]]]:
    """What the observers were shown of Fool's mate with a slow lift before each move
    (fen, occupancy, moves), each change once; `batched`: every event queued before the
    loop takes any (a loop held up by a slow disk), else one event a step."""
    view = ObserverLog()
    service = Service(FakeBoard(), profile=PROFILES["fide"], start=StartInfo(),
                      namer=OutputNamer(tmp_path), options=RunOptions(once=True),
                      view=view, clock=Clock())
    service.open()
    service.submit(ev.Snapshot(0.5, START))
    service.step(timeout=0)
    items = events(FOOLS_MATE, t=1.0)
    if batched:
        feed(service, items)
    else:
        for item in items:
            feed(service, [item])
    service.close()
    out: list[tuple[str, int, tuple[str, ...]]] = []
    for state, _ in view.shown:
        seen = (state.fen, state.occupied, state.moves)  # type: ignore[attr-defined]
        if not out or out[-1] != seen:
            out.append(seen)
    return out


def test_a_batch_of_events_shows_every_position_it_passed_through(tmp_path: Path) -> None:
    """Apps and the hall read the board through what is shown: a move whose position
    lasted less than the loop's disk wait must still be shown (a DGT or ChessLink host
    that sees only the next move begun cannot tell the move)."""
    one_by_one = shown_positions(False, tmp_path / "steps")
    assert len(one_by_one) > len(FOOLS_MATE.split())  # every lift and put-down
    assert shown_positions(True, tmp_path / "batch") == one_by_one
