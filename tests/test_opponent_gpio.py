"""Playing Stockfish on a board wired to the Pi's own pins (gpiozero's MockFactory): the
reed-switch matrix, the takeback and hint buttons, the computer's status LED and the
promotion LEDs, through the service with the real engine."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest
from gpiozero.pins.mock import MockFactory

from board_ctl.config import ButtonPins, GpioConfig, StatusConfig
from board_ctl.core.effects import LedFrame, MoveMade, Remote, StatusLights, TakenBack
from board_ctl.core.profiles import PROFILES
from board_ctl.opponent.engine import EngineError, EngineSettings, find_engine
from board_ctl.opponent.opponent import Opponent, OpponentSettings
from board_ctl.sensorlog import StartInfo
from board_ctl.service.game import OutputNamer
from board_ctl.service.gpioboard import GpioBoard
from board_ctl.service.service import RunOptions, Service
from board_ctl.service.statuslights import StatusOutputs
from conftest import missing_tool
from servicekit import RecordingView, ReedMatrix, wait_until

CFG = GpioConfig(scan_hz=250, buttons=ButtonPins(takeback=9, hint=10, resign_black=15))
STATUS = StatusConfig(computer=2, promote_q=3, promote_r=7, promote_b=8, promote_n=11)


def test_the_computer_and_promotion_leds_follow_the_status() -> None:
    factory = MockFactory()
    outputs = StatusOutputs(STATUS, pin_factory=factory)
    try:
        def show(remote: Remote, promotion: chess.PieceType | None = None) -> None:
            outputs.show(LedFrame(0.0, (), StatusLights(True, False, None, False, remote,
                                                        promotion)))

        def lit(pin: int) -> bool:
            return bool(factory.pin(pin).state)
        show(Remote.THINKING)
        assert outputs.devices["computer"].is_lit is not None  # blinking (its own thread)
        show(Remote.SHOWN, chess.KNIGHT)
        assert lit(2) and lit(11) and not (lit(3) or lit(7) or lit(8))
        show(Remote.SHOWN, chess.QUEEN)
        assert lit(3) and not lit(11)
        show(Remote.NONE)
        assert not any(lit(pin) for pin in (2, 3, 7, 8, 11))
    finally:
        outputs.close()


class Rig:
    def __init__(self, tmp_path: Path) -> None:
        self.factory = MockFactory()
        self.matrix = ReedMatrix(self.factory, CFG.rows, CFG.cols, chess.Board().occupied)
        self.view = RecordingView()
        self.status = StatusOutputs(STATUS, pin_factory=self.factory)
        self.opponent = Opponent(OpponentSettings(EngineSettings(level=0), "black",
                                                  movetime=0.2))
        self.opponent.start()
        self.service = Service(
            GpioBoard(CFG, pin_factory=self.factory), profile=PROFILES["casual"],
            start=StartInfo(), namer=OutputNamer(tmp_path), options=RunOptions(),
            view=self.view, status=self.status, opponent=self.opponent)
        self.thread = threading.Thread(target=self.service.run, daemon=True)

    def move(self, move: chess.Move) -> None:
        self.matrix.set(move.from_square, False)
        if move.to_square != move.from_square:
            self.matrix.set(move.to_square, True)

    def press(self, pin: int) -> None:
        self.factory.pin(pin).drive_low()

    def release(self, pin: int) -> None:
        self.factory.pin(pin).drive_high()


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    try:
        find_engine("stockfish")
    except EngineError:
        missing_tool("Debian's stockfish is not installed (apt-get install stockfish)")
    rig = Rig(tmp_path)
    rig.thread.start()
    yield rig
    rig.service.request_stop()
    rig.thread.join(timeout=10)
    assert not rig.thread.is_alive()
    rig.factory.reset()


def engine_move(rig: Rig) -> chess.Move:
    made = rig.view.wait_effect(lambda e: isinstance(e, MoveMade) and e.ply % 2 == 0,
                                timeout=20)
    assert isinstance(made, MoveMade)
    return made.move


@pytest.mark.slow
def test_buttons_and_leds_against_stockfish_on_gpio(rig: Rig) -> None:
    view = rig.view
    view.wait_message(lambda m: m.startswith("game 1 started"))
    rig.move(chess.Move.from_uci("e2e4"))  # released after a second: the engine's turn
    reply = engine_move(rig)
    wait_until(lambda: rig.factory.pin(2).state, what="the computer LED on: make its move")
    board = chess.Board()
    board.push_uci("e2e4")
    assert board.is_legal(reply) and not board.is_capture(reply)
    rig.move(reply)
    reply_san = board.san(reply)
    board.push(reply)
    wait_until(lambda: not rig.factory.pin(2).state, what="its move made")

    rig.press(10)  # hint: held until its lights show
    hinted = view.wait_effect(lambda e: isinstance(e, LedFrame)
                              and e.status.remote == Remote.HINT, timeout=20)
    rig.release(10)
    assert isinstance(hinted, LedFrame) and len(hinted.squares) >= 2

    rig.move(chess.Move.from_uci("d2d4"))
    board.push_uci("d2d4")
    second = engine_move(rig)
    rig.press(9)  # takeback: d4 and the reply to it, though the reply is not made yet
    back = view.wait_effect(lambda e: isinstance(e, TakenBack), timeout=10)
    rig.release(9)
    assert isinstance(back, TakenBack) and back.plies == 2
    rig.move(chess.Move.from_uci("d4d2"))  # the pawn back (the reply was never made)
    wait_until(lambda: rig.view.last is not None and rig.view.last.moves == ("e4", reply_san) and not any(s.blink for s in (rig.view.last.frame.squares
                                               if rig.view.last.frame else ())),
               timeout=10, what="the position restored")
    assert second is not None

    rig.press(15)  # Black's resign button: Black is the computer, who speaks for itself
    view.wait_message(lambda m: "is the computer's side: ignored" in m)
    rig.release(15)
    assert rig.view.last is not None and rig.view.last.result is None
