"""The Pi's own status LEDs and buzzer (gpiozero `LED`, `Buzzer`), driven by the core's
LED frames: white to move, black to move, alert (blinking), game over; a chirp for an
alert, a long tone for the result. Against a computer: its LED (blinking slowly while it
thinks, on while its move is shown, blinking fast for a hint) and the piece its shown
move promotes to (one LED each for Q, R, B, N). Pins come from the [status] section; a pin left out
is not fitted. `pin_factory` is gpiozero's (tests pass a MockFactory).
"""

from __future__ import annotations

import logging
from typing import Any

from board_ctl.config import StatusConfig
import chess

from board_ctl.core.effects import Blink, Buzzer, LedFrame, Remote, StatusLights
from board_ctl.errors import HardwareError
from board_ctl.service.pins import quiet_fallbacks

log = logging.getLogger(__name__)

BLINK_TIMES = {Blink.SLOW: (0.5, 0.5), Blink.FAST: (0.15, 0.15)}
COMPUTER = {Remote.THINKING: Blink.SLOW, Remote.SHOWN: Blink.STEADY, Remote.HINT: Blink.FAST}
PROMOTIONS = {"promote_q": chess.QUEEN, "promote_r": chess.ROOK, "promote_b": chess.BISHOP,
              "promote_n": chess.KNIGHT}
# (on, off, repetitions) of each buzzer pattern
BEEPS = {Buzzer.CHIRP: (0.08, 0.05, 1), Buzzer.ALARM: (0.15, 0.1, 6),
         Buzzer.RESULT: (0.8, 0.1, 1)}


class StatusOutputs:
    def __init__(self, config: StatusConfig, pin_factory: Any = None) -> None:
        self.config = config
        self.devices: dict[str, Any] = {}
        self._shown: StatusLights | None = None
        if not config.any:
            return
        from gpiozero import LED
        from gpiozero import Buzzer as GpioBuzzer
        from gpiozero.exc import GPIOZeroError

        try:
            with quiet_fallbacks():
                for name in ("white_to_move", "black_to_move", "alert", "game_over",
                             "computer", *PROMOTIONS):
                    pin = getattr(config, name)
                    if pin is not None:
                        self.devices[name] = LED(pin, active_high=config.active_high,
                                                 pin_factory=pin_factory)
                if config.buzzer is not None:
                    self.devices["buzzer"] = GpioBuzzer(config.buzzer,
                                                        active_high=config.active_high,
                                                        pin_factory=pin_factory)
        except (GPIOZeroError, OSError) as exc:
            self.close()
            raise HardwareError(f"status LEDs: {exc} (remove the [status] pins on a machine "
                                f"without GPIO)") from None

    def show(self, frame: LedFrame) -> None:
        status = frame.status
        last = self._shown
        for name in ("white_to_move", "black_to_move", "game_over"):
            device = self.devices.get(name)
            value = getattr(status, name)
            if device is not None and (last is None or getattr(last, name) != value):
                device.value = value
        alert = self.devices.get("alert")
        if alert is not None and (last is None or last.alert != status.alert):
            _light(alert, status.alert)
        computer = self.devices.get("computer")
        if computer is not None and (last is None or last.remote != status.remote):
            _light(computer, COMPUTER.get(status.remote))
        for name, piece in PROMOTIONS.items():
            device = self.devices.get(name)
            value = status.remote == Remote.SHOWN and status.promotion == piece
            if device is not None and device.value != value:
                device.value = value
        self._shown = status
        buzzer = self.devices.get("buzzer")
        if buzzer is not None and frame.buzzer in BEEPS:
            on, off, n = BEEPS[frame.buzzer]
            buzzer.beep(on_time=on, off_time=off, n=n)

    def close(self) -> None:
        for device in list(self.devices.values()):
            device.close()
        self.devices.clear()


def _light(led: Any, blink: Blink | None) -> None:
    """Off (None), on (steady) or blinking."""
    if blink is None:
        led.off()
        return
    on, off = BLINK_TIMES.get(blink, (None, None))
    if on is None:
        led.on()
    else:
        led.blink(on_time=on, off_time=off)
