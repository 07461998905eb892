"""The app ports on the real service loop (a fake board stepped by the test, as in
test_service_loop), each on a real pty read by a test host: an app's LED commands on the
square LEDs, never over an open alert; its clock commands on the terminal view; the
game's record untouched by either."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest

from board_ctl.apps.ports import AppPorts, chesslink_port, dgt_port
from board_ctl.core import events as ev
from board_ctl.core.effects import Colour, LedFrame
from board_ctl.core.profiles import PROFILES
from board_ctl.sensorlog import StartInfo
from board_ctl.service.applights import compose
from board_ctl.service.game import OutputNamer
from board_ctl.service.service import RunOptions, Service
from chesslinkclient import ChessLinkClient, led_command
from dgtclient import SET_LEDS, UPDATE_NICE, DgtClient, field_of
from servicekit import FakeBoard, RecordingView, wait_until

START = chess.Board().occupied


class AppRig:
    def __init__(self, tmp_path: Path) -> None:
        self.board = FakeBoard()
        self.view = RecordingView()
        self.ports = AppPorts([
            dgt_port(f"pty:{tmp_path / 'dgt'}", "1234567890", start_fen=chess.STARTING_FEN),
            chesslink_port(f"pty:{tmp_path / 'cl'}", start_fen=chess.STARTING_FEN)])
        self.service = Service(self.board, profile=PROFILES["fide"], start=StartInfo(),
                               namer=OutputNamer(tmp_path, tmp_path / "game.pgn"),
                               options=RunOptions(), view=self.view, observers=[self.ports],
                               clock=lambda: 100.0)
        said = self.ports.start(self.service.submit)
        assert said[0].startswith("the DGT board protocol on pty:")
        self.service.open()
        self.dgt = DgtClient(str(tmp_path / "dgt"))
        self.chesslink = ChessLinkClient(str(tmp_path / "cl"))

    def feed(self, *items: object) -> None:
        for item in items:
            self.service.queue.put(item)
        self.drain()

    def drain(self) -> None:
        while not self.service.queue.empty():
            self.service.step(timeout=0)

    def take_command(self) -> None:
        """What an app asked reaches the loop through its queue: handle it."""
        wait_until(lambda: not self.service.queue.empty(), what="the app's command")
        self.drain()

    def lit(self) -> dict[chess.Square, Colour]:
        return {light.square: light.colour for light in self.board.frames[-1].squares}

    def close(self) -> None:
        self.dgt.close()
        self.chesslink.close()
        self.service.close()


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[AppRig]:
    made = AppRig(tmp_path)
    yield made
    made.close()


def test_app_leds_show_where_the_referee_leaves_the_board_dark(rig: AppRig) -> None:
    rig.feed(ev.Snapshot(0.0, START))
    rig.dgt.send(SET_LEDS, 4, 1, field_of(chess.G1), field_of(chess.F3), 0)
    rig.take_command()
    assert rig.lit() == {chess.G1: Colour.BLUE, chess.F3: Colour.GREEN}
    assert rig.service.state().frame is not None  # the view is shown what the LEDs show
    assert {s.square for s in rig.service.state().frame.squares} == {chess.G1, chess.F3}
    rig.chesslink.send("X")
    rig.chesslink.wait(lambda: "x" in rig.chesslink.replies)
    rig.dgt.send(SET_LEDS, 4, 0, 0x40, 0, 0)  # and the DGT app's off
    rig.take_command()
    assert rig.lit() == {}


def test_an_open_alert_hides_the_apps_leds_until_it_clears(rig: AppRig) -> None:
    """Black's rook knocked off a8 during White's thought: position-mismatch, the LEDs
    guide it back; the app's lit squares (a ChessLink app's pattern) wait until the
    alert is cleared, then come back. Before the referee's priority, the app's lights
    were drawn over the guidance frame."""
    rig.feed(ev.Snapshot(0.0, START))
    rig.chesslink.send(led_command({chess.E2: 0xFF, chess.E4: 0xFF}))
    rig.take_command()
    assert rig.lit() == {chess.E2: Colour.BLUE, chess.E4: Colour.GREEN}
    rig.feed(ev.Lifted(1.0, chess.A8), ev.Tick(1.2), ev.Tick(3.0))
    assert "position-mismatch" in rig.service.session.referee.alerts
    guidance = rig.lit()
    assert chess.A8 in guidance and chess.E2 not in guidance and chess.E4 not in guidance
    rig.feed(ev.Placed(4.0, chess.A8), ev.Tick(4.2), ev.Tick(5.0))
    assert not rig.service.session.referee.alerts
    assert rig.lit() == {chess.E2: Colour.BLUE, chess.E4: Colour.GREEN}
    # The game's record keeps the referee's frames only.
    rig.service.close()
    report = [json.loads(line) for line in (rig.service.games[0].report).read_text(
        encoding="utf-8").splitlines()]
    frames = [line for line in report if line.get("kind") == "leds"]
    assert frames and not any({"e2", "e4"} & f["squares"].keys() for f in frames)


def test_clock_commands_are_shown_on_the_view(rig: AppRig) -> None:
    rig.feed(ev.Snapshot(0.0, START))
    rig.dgt.send(UPDATE_NICE)
    body = bytes([0x03, 0x0C, *b" YOUR MV", 0, 0x00])
    rig.dgt.send(0x2B, len(body), body)
    rig.take_command()
    assert "DGT app: clock display 'YOUR MV'" in rig.view.all_messages
    rig.dgt.wait(lambda: bool(rig.dgt.acks), what="the ack")


def test_both_apps_read_the_moves(rig: AppRig) -> None:
    rig.feed(ev.Snapshot(0.0, START))
    rig.dgt.send(UPDATE_NICE)
    rig.dgt.board_dump()  # (answered after the mode: it is set)
    rig.chesslink.request("W0203", "w")
    rig.feed(ev.Lifted(1.0, chess.E2), ev.Placed(1.5, chess.E4), ev.Tick(1.7))
    after = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"
    rig.dgt.wait(lambda: rig.dgt.board_fen() == after, what="e2-e4 read by the DGT host")
    rig.chesslink.wait(lambda: rig.chesslink.board_fen() == after, what="e4 by ChessLink")


def test_compose_is_pure_and_puts_the_referee_first() -> None:
    from board_ctl.core.effects import Blink, SquareLight, StatusLights

    frame = LedFrame(1.0, (SquareLight(chess.E1, Colour.RED),), StatusLights())
    app = (SquareLight(chess.E1, Colour.BLUE), SquareLight(chess.E4, Colour.GREEN, Blink.SLOW))
    shown = compose(frame, app, alert_open=False)
    assert [(s.square, s.colour) for s in shown.squares] == [(chess.E1, Colour.RED),
                                                              (chess.E4, Colour.GREEN)]
    assert compose(frame, app, alert_open=True) is frame
    guiding = LedFrame(1.0, (), StatusLights(), guidance=((chess.A8, chess.A8),))
    assert compose(guiding, app, alert_open=False) is guiding
