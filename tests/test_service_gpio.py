"""The GPIO backend on gpiozero's MockFactory: a reed-switch diode matrix emulated on mock
pins, the clock lever and a button as Buttons, the status LEDs and the buzzer as LED and
Buzzer. The service runs for real (its loop, the scan thread); the test moves pieces."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.pgn
import pytest
from gpiozero.pins.mock import MockFactory

from board_ctl.config import ButtonPins, GpioConfig, StatusConfig
from board_ctl.core.effects import Alert, GameOver, MoveMade
from board_ctl.core.profiles import PROFILES
from board_ctl.record import GameRecord
from board_ctl.replay import replay_events
from board_ctl.sensorlog import StartInfo, load_sensor_log
from board_ctl.service.game import OutputNamer
from board_ctl.service.gpioboard import GpioBoard
from board_ctl.service.service import RunOptions, Service
from board_ctl.service.statuslights import StatusOutputs
from servicekit import RecordingView, ReedMatrix, wait_until

CFG = GpioConfig(scan_hz=250, clock_white=21, clock_black=11,
                 buttons=ButtonPins(resign_black=9, promote_n=8))
STATUS = StatusConfig(white_to_move=2, black_to_move=3, alert=10, game_over=14, buzzer=15)


class Rig:
    def __init__(self, tmp_path: Path) -> None:
        self.factory = MockFactory()
        self.matrix = ReedMatrix(self.factory, CFG.rows, CFG.cols, chess.Board().occupied)
        self.view = RecordingView()
        self.status = StatusOutputs(STATUS, pin_factory=self.factory)
        self.service = Service(
            GpioBoard(CFG, pin_factory=self.factory), profile=PROFILES["fide"],
            start=StartInfo(), namer=OutputNamer(tmp_path), options=RunOptions(),
            view=self.view, status=self.status)
        self.thread = threading.Thread(target=self.service.run, daemon=True)

    def pin(self, n: int):  # type: ignore[no-untyped-def]
        return self.factory.pin(n)

    def move(self, uci: str) -> None:
        move = chess.Move.from_uci(uci)
        self.matrix.set(move.from_square, False)
        self.matrix.set(move.to_square, True)

    def press(self, pin: int) -> None:
        """Hold a button down until the service has seen it (debounced), then let go."""
        self.pin(pin).drive_low()

    def release(self, pin: int) -> None:
        self.pin(pin).drive_high()


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    rig = Rig(tmp_path)
    rig.thread.start()
    yield rig
    rig.service.request_stop()
    rig.thread.join(timeout=10)
    assert not rig.thread.is_alive()
    rig.factory.reset()


def lit(rig: Rig, pin: int) -> bool:
    return bool(rig.pin(pin).state)


@pytest.mark.slow
def test_moves_from_the_matrix_and_the_status_lights(rig: Rig, tmp_path: Path) -> None:
    view = rig.view
    view.wait_message(lambda m: m.startswith("game 1 started"))
    wait_until(lambda: lit(rig, 2) and not lit(rig, 3), what="white-to-move LED")

    rig.move("e2e4")
    rig.press(21)  # White's side of the lever
    made = view.wait_effect(lambda e: isinstance(e, MoveMade))
    rig.release(21)
    assert isinstance(made, MoveMade) and made.san == "e4"
    wait_until(lambda: lit(rig, 3) and not lit(rig, 2), what="black-to-move LED")
    assert not lit(rig, 10) and not lit(rig, 14)  # no alert, not over

    # Black presses the clock without moving: an illegal move (FIDE 7.5.3)
    rig.press(11)
    alert = view.wait_effect(lambda e: isinstance(e, Alert))
    rig.release(11)
    assert isinstance(alert, Alert) and alert.code == "clock-no-move"
    buzzer = rig.pin(15)
    wait_until(lambda: [s.state for s in buzzer.states][-2:] == [True, False], what="a chirp")
    alert_led = rig.pin(10)
    wait_until(lambda: len(alert_led.states) >= 4, what="the alert LED blinking")

    rig.move("e7e5")
    rig.press(11)
    made = view.wait_effect(lambda e: isinstance(e, MoveMade))
    rig.release(11)
    assert isinstance(made, MoveMade) and made.san == "e5"

    rig.press(9)  # Black resigns
    over = view.wait_effect(lambda e: isinstance(e, GameOver))
    rig.release(9)
    assert isinstance(over, GameOver) and (over.result, over.termination) == ("1-0", "resignation")
    wait_until(lambda: lit(rig, 14) and not lit(rig, 2) and not lit(rig, 3), what="game over LED")
    wait_until(lambda: [s.state for s in buzzer.states][-2:] == [True, False], what="result tone")

    # set the pieces up again: the next game starts
    rig.move("e4e2")
    rig.move("e5e7")
    view.wait_message(lambda m: m.startswith("game 2 started"))
    wait_until(lambda: lit(rig, 2) and not lit(rig, 14), what="white to move again")

    (pgn,) = [p for p in tmp_path.glob("*.pgn")]
    text = pgn.read_text(encoding="utf-8")
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None and game.headers["Result"] == "1-0"
    assert [m.uci() for m in game.mainline_moves()] == ["e2e4", "e7e5"]
    assert "clock-no-move" in text
    # the sensor log replays to the same game
    sensor = pgn.with_name(pgn.stem + ".sensor.jsonl")
    log = load_sensor_log(sensor)
    assert not log.errors
    record: GameRecord = replay_events(log.start, log.events, PROFILES["fide"])
    assert [m.san for m in record.moves] == ["e4", "e5"]
    assert record.pgn_text() == text


def test_no_gpio_is_a_hardware_error() -> None:
    """Without a pin factory on a machine with no GPIO, one clear error, no traceback."""
    from board_ctl.errors import HardwareError

    board = GpioBoard(CFG, pin_factory=_BrokenFactory())
    with pytest.raises(HardwareError, match="gpio backend"):
        board.start(lambda item: None)


class _BrokenFactory(MockFactory):
    def pin(self, name, pin_class=None, **kwargs):  # type: ignore[no-untyped-def]
        from gpiozero.exc import BadPinFactory

        raise BadPinFactory("Unable to load any default pin factory!")
