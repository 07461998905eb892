"""The thin hardware layer on the Pico: pins, WS2812 chain, clock, USB serial.

Only this module touches machine, neopixel, rp2 and the console; app.py gets everything
through a Hal, so the tests can hand it fake pins instead.

USB serial: frames go through sys.stdout.buffer / sys.stdin.buffer, which pass bytes
unchanged (the text sys.stdout would turn LF into CRLF). A 0x03 inside a frame would
raise KeyboardInterrupt, so Ctrl-C is switched off while the firmware runs
(micropython.kbd_intr(-1)) and back on in close(). To get the REPL back (for mpremote),
hold the Pico's BOOTSEL button for a moment: the loop returns, or, at power-up, never
starts.
"""

import sys
import time

import machine
import micropython
import neopixel
import select

try:
    import rp2
except ImportError:  # not an RP2040/RP2350
    rp2 = None


class Hal:
    def __init__(self):
        micropython.kbd_intr(-1)  # a 0x03 byte is data, not Ctrl-C
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._poll = select.poll()
        self._poll.register(sys.stdin, select.POLLIN)
        self._last = time.ticks_ms()
        self._ms = 0
        self.board_id = "".join("%02x" % b for b in machine.unique_id())

    # pins
    def pin_open_drain(self, n):
        return machine.Pin(n, machine.Pin.OPEN_DRAIN, value=1)

    def pin_pull_up(self, n):
        return machine.Pin(n, machine.Pin.IN, machine.Pin.PULL_UP)

    def pin_out(self, n):
        return machine.Pin(n, machine.Pin.OUT, value=0)

    def pixels(self, n, count):
        return neopixel.NeoPixel(machine.Pin(n), count)

    # time: a u32 of milliseconds (time.ticks_ms wraps at 2**30, the protocol at 2**32)
    def ms(self):
        now = time.ticks_ms()
        self._ms = (self._ms + time.ticks_diff(now, self._last)) & 0xFFFFFFFF
        self._last = now
        return self._ms

    def sleep_us(self, us):
        time.sleep_us(us)

    def sleep_ms(self, ms):
        time.sleep_ms(ms)

    # USB serial
    def read(self, limit=256):
        """The bytes waiting from the host, without blocking."""
        buf = bytearray()
        while len(buf) < limit and self._poll.poll(0):
            buf.extend(self._in.read(1))
        return bytes(buf)

    def write(self, data):
        self._out.write(data)

    def escape(self):
        """True while the user holds BOOTSEL: leave the loop for the REPL."""
        return bool(rp2 and rp2.bootsel_button())

    def close(self):
        micropython.kbd_intr(3)
