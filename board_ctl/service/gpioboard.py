"""A board wired straight to the Pi: an 8x8 reed-switch matrix (one diode per switch) on
GPIO pins through gpiozero, the clock lever and the buttons as gpiozero Buttons.

The scan and the debounce are the firmware's own code (firmware_bridge/firmware/
scanner.py and inputs.py), run here over a gpiozero-backed pin layer: rows are outputs
held high and pulled low one at a time, columns are inputs with pull-ups (a closed switch
on the selected row reads low through its diode). With push-pull rows the diodes are
required: they also keep three pieces from making a fourth read (no ghosting).

One thread scans at `scan_hz` and only puts events: a Snapshot after the first scan (the
board as found), Lifted/Placed stamped with the first scan that saw the change, clock
presses and buttons, and a Tick when nothing happened for a while. gpiozero's MockFactory
ignores bounce_time, which is why the debounce is ours (consecutive identical scans).

The square LEDs (WS2812) belong to a microcontroller; this backend has none, so the
square lights are shown only in the terminal view (status LEDs and buzzer still work).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import fields
from typing import Any

import chess

from board_ctl.config import GpioConfig
from board_ctl.core import events as ev
from board_ctl.core.effects import LedFrame
from board_ctl.errors import HardwareError
from board_ctl.service.backends import Put
from board_ctl.service.pins import quiet_fallbacks
from firmware_bridge.firmware.inputs import Inputs
from firmware_bridge.firmware.scanner import Scanner

log = logging.getLogger(__name__)

TICK_EVERY = 0.1  # s without a change before a Tick lets the referee's timers run

_SIDED: dict[str, Callable[[float, chess.Color], ev.Event]] = {
    "draw_offer": ev.DrawOffered, "draw_accept": ev.DrawAccepted, "claim": ev.DrawClaimed,
    "resign": ev.Resigned}
_Source = tuple[Callable[[], bool], str, str, chess.Color | None]  # firmware Inputs' form
_UNSIDED: dict[str, Callable[[float], ev.Event]] = {
    "takeback": ev.TakebackAsked, "hint": ev.HintAsked}
_PROMOTE = {"promote_q": chess.QUEEN, "promote_r": chess.ROOK, "promote_b": chess.BISHOP,
            "promote_n": chess.KNIGHT}


def _pressed(button: Any) -> Callable[[], bool]:
    return lambda: bool(button.is_pressed)


class _RowPin:
    """The scanner's open-drain row: value(0) selects the row (drives it low)."""

    def __init__(self, device: Any) -> None:
        self.device = device

    def value(self, v: int | None = None) -> int:
        if v is None:
            return int(self.device.value)
        self.device.value = 1 if v else 0
        return int(v)


class _ColumnPin:
    """The scanner's pulled-up column: reads 0 while a closed switch pulls it low."""

    def __init__(self, device: Any) -> None:
        self.device = device

    def value(self, v: int | None = None) -> int:
        return 0 if self.device.is_active else 1


class GpioBoard:
    def __init__(self, config: GpioConfig, *, pin_factory: Any = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.pin_factory = pin_factory
        self.description = (f"GPIO matrix rows {list(config.rows)} cols {list(config.cols)} "
                            f"at {config.scan_hz} Hz")
        self.identity = "GPIO matrix on this Pi"  # the board wired to this Pi's pins
        self._clock = clock
        self._sleep = sleep
        self._devices: list[Any] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._last_t = 0.0
        self._warned_leds = False

    # --- set-up

    def start(self, put: Put) -> None:
        from gpiozero.exc import GPIOZeroError

        cfg = self.config
        try:
            with quiet_fallbacks():
                rows, cols, sources = self._open_devices()
        except (GPIOZeroError, OSError) as exc:
            self._close_devices()
            raise HardwareError(f"gpio backend: {exc} (is this a Raspberry Pi with lgpio "
                                f"installed, and is the user in the gpio group?)") from None
        self._scanner = Scanner([_RowPin(d) for d in rows], [_ColumnPin(d) for d in cols],
                                self._sleep_us, cfg.settle_us, cfg.debounce)
        self._inputs = Inputs(sources, cfg.debounce)
        self._put = put
        self._t0 = self._clock()
        self._scanner.scan(0)  # primes: the first scan is the board as found
        self._inputs.poll(0)
        put(ev.Snapshot(0.0, self._scanner.occupancy()))
        self._last_put = self._clock()
        self._thread = threading.Thread(target=self._run, name="gpio-scan", daemon=True)
        self._thread.start()

    def _open_devices(self) -> tuple[list[Any], list[Any], list[_Source]]:
        from gpiozero import Button, DigitalInputDevice, DigitalOutputDevice

        cfg, factory = self.config, self.pin_factory
        rows = [self._add(DigitalOutputDevice(pin, initial_value=True, pin_factory=factory))
                for pin in cfg.rows]
        cols = [self._add(DigitalInputDevice(pin, pull_up=True, pin_factory=factory))
                for pin in cfg.cols]
        sources: list[_Source] = []
        named: list[tuple[str, str, chess.Color | None, int | None]] = [
            ("clock", "clock_white", chess.WHITE, cfg.clock_white),
            ("clock", "clock_black", chess.BLACK, cfg.clock_black)]
        for f in fields(cfg.buttons):
            side = (chess.WHITE if f.name.endswith("_white") else
                    chess.BLACK if f.name.endswith("_black") else None)
            named.append(("button", f.name, side, getattr(cfg.buttons, f.name)))
        for kind, name, side, pin in named:
            if pin is not None:
                button = self._add(Button(pin, pull_up=True, pin_factory=factory))
                sources.append((_pressed(button), kind, name, side))
        return rows, cols, sources

    def _add(self, device: Any) -> Any:
        self._devices.append(device)
        return device

    def _sleep_us(self, us: int) -> None:
        if us:
            self._sleep(us / 1_000_000)

    # --- the scan thread

    def _run(self) -> None:
        period = 1.0 / self.config.scan_hz
        due = self._clock()
        while not self._stop.is_set():
            self.step()
            due += period
            wait = due - self._clock()
            if wait < 0:
                due = self._clock()  # overran: skip ahead rather than catch up
            elif self._stop.wait(wait):
                break

    def step(self) -> None:
        """One scan of the matrix and the inputs; their events onto the queue."""
        now = self._clock()
        ms = int((now - self._t0) * 1000)
        out: list[ev.Event] = []
        for square, occupied, since in self._scanner.scan(ms):
            t = self._stamp(since)
            out.append(ev.Placed(t, square) if occupied else ev.Lifted(t, square))
        for kind, name, side, since in self._inputs.poll(ms):
            event = self._input_event(kind, name, side, self._stamp(since))
            if event is not None:
                out.append(event)
        for event in out:
            self._put(event)
        if out:
            self._last_put = now
        elif now - self._last_put >= TICK_EVERY:
            self._put(ev.Tick(self._stamp(ms)))
            self._last_put = now

    def _stamp(self, ms: int) -> float:
        self._last_t = max(self._last_t, ms / 1000)
        return self._last_t

    def _input_event(self, kind: str, name: str, side: chess.Color | None,
                     t: float) -> ev.Event | None:
        if kind == "clock":
            assert side is not None
            return ev.ClockPressed(t, side)
        if name in _PROMOTE:
            return ev.PromotionChosen(t, _PROMOTE[name])
        stem = name.rsplit("_", 1)[0]
        if stem in _SIDED and side is not None:
            return _SIDED[stem](t, side)
        if name in _UNSIDED:
            return _UNSIDED[name](t)
        log.warning("arbiter button pressed at %.3f s (no core event for it)", t)
        return None

    # --- outputs and shutdown

    def send_leds(self, frame: LedFrame) -> None:
        if frame.squares and not self._warned_leds:
            self._warned_leds = True
            log.info("gpio backend: no square LEDs (they need the microcontroller); "
                     "the terminal view shows them")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._close_devices()

    def _close_devices(self) -> None:
        for device in reversed(self._devices):
            device.close()
        self._devices.clear()
