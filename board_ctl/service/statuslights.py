"""The Pi's own status LEDs and buzzer (gpiozero `LED`, `Buzzer`), driven by the core's
LED frames: white to move, black to move, alert (blinking), game over; a chirp for an
alert, a long tone for the result. Pins come from the [status] section; a pin left out
is not fitted. `pin_factory` is gpiozero's (tests pass a MockFactory).
"""

from __future__ import annotations

import logging
from typing import Any

from board_ctl.config import StatusConfig
from board_ctl.core.effects import Blink, Buzzer, LedFrame, StatusLights
from board_ctl.errors import HardwareError
from board_ctl.service.pins import quiet_fallbacks

log = logging.getLogger(__name__)

BLINK_TIMES = {Blink.SLOW: (0.5, 0.5), Blink.FAST: (0.15, 0.15)}
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
                for name in ("white_to_move", "black_to_move", "alert", "game_over"):
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
            if status.alert is None:
                alert.off()
            else:
                on, off = BLINK_TIMES.get(status.alert, (None, None))
                if on is None:
                    alert.on()
                else:
                    alert.blink(on_time=on, off_time=off)
        self._shown = status
        buzzer = self.devices.get("buzzer")
        if buzzer is not None and frame.buzzer in BEEPS:
            on, off, n = BEEPS[frame.buzzer]
            buzzer.beep(on_time=on, off_time=off, n=n)

    def close(self) -> None:
        for device in self.devices.values():
            device.close()
        self.devices.clear()
