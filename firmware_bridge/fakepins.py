"""A fake pin layer for the firmware: the Hal of firmware/hal.py with nothing real behind it.

A simulated reed-switch matrix (8 square rows plus key rows, 8 columns, with or without
diodes), lever pins, a WS2812 chain, a manual microsecond clock and a USB port whose two
byte buffers the test reads and writes. The firmware's own code (scanner, inputs, LEDs,
main loop, protocol) runs on top of it unchanged.

Written in the MicroPython subset, like the firmware (no annotations, no
``from __future__``), so the same fake also runs the firmware under a real MicroPython
interpreter in the tests. ``load_firmware`` is the CPython-only part.
"""


class FakeClock:
    """Time only moves when the firmware sleeps or the test advances it."""

    def __init__(self, ms=0):
        self.us = ms * 1000

    def ms(self):
        return (self.us // 1000) & 0xFFFFFFFF

    def sleep_us(self, us):
        self.us += us

    def sleep_ms(self, ms):
        self.us += ms * 1000


class FakeOutput:
    def __init__(self, level=0):
        self.level = level
        self.history = []

    def value(self, v=None):
        if v is None:
            return self.level
        v = 1 if v else 0
        if v != self.level:
            self.history.append(v)
        self.level = v


class FakeInput:
    """A pulled-up input: reads 1 until something pulls it low."""

    def __init__(self, read=None):
        self.level = 1
        self._read = read

    def value(self, v=None):
        return self._read() if self._read else self.level


class FakePixels:
    """neopixel.NeoPixel's interface; `shown` is what the chain displays after write()."""

    def __init__(self, count):
        self.buf = [(0, 0, 0)] * count
        self.shown = list(self.buf)
        self.writes = 0

    def __len__(self):
        return len(self.buf)

    def __setitem__(self, i, rgb):
        self.buf[i] = rgb

    def __getitem__(self, i):
        return self.buf[i]

    def write(self):
        self.shown = list(self.buf)
        self.writes += 1


class FakePort:
    """USB serial: `rx` holds bytes from the host, `tx` bytes the board wrote."""

    def __init__(self):
        self.rx = bytearray()
        self.tx = bytearray()

    def read(self, limit=256):
        data = bytes(self.rx[:limit])
        self.rx = self.rx[limit:]
        return data

    def write(self, data):
        self.tx.extend(data)

    def take(self):
        data = bytes(self.tx)
        self.tx = bytearray()
        return data


class FakeHal:
    """The Hal for the firmware's config, over a simulated switch matrix.

    Switch positions are (row, col): square rows 0-7 (rank), key rows 8..., columns 0-7
    (file). Without diodes, current also flows backwards through closed switches, so a
    column reads closed whenever a chain of closed switches joins it to the selected row:
    the ghosting the diodes prevent.
    """

    def __init__(self, config, diodes=True, board_id="fake-board"):
        self.config = config
        self.diodes = diodes
        self.board_id = board_id
        self.clock = FakeClock()
        self.port = FakePort()
        self.closed = {}  # (row, col) -> True for closed switches
        self.escape_held = False
        self._script = []  # (us, (row, col), closed), sorted by time
        self._row_gpio = list(config["rows"]) + list(config["key_rows"])
        self._col_gpio = list(config["cols"])
        self.row_pins = [FakeOutput(1) for _ in self._row_gpio]
        self.inputs = {}  # gpio -> FakeInput (lever)
        self.outputs = {}  # gpio -> FakeOutput (status LEDs, buzzer)
        self.strip = None

    # --- the Hal interface
    def pin_open_drain(self, n):
        return self.row_pins[self._row_gpio.index(n)]

    def pin_pull_up(self, n):
        if n in self._col_gpio:
            col = self._col_gpio.index(n)
            return FakeInput(lambda: self._column(col))
        pin = FakeInput()
        self.inputs[n] = pin
        return pin

    def pin_out(self, n):
        pin = FakeOutput()
        self.outputs[n] = pin
        return pin

    def pixels(self, n, count):
        self.strip = FakePixels(count)
        return self.strip

    def ms(self):
        return self.clock.ms()

    def sleep_us(self, us):
        self.clock.sleep_us(us)

    def sleep_ms(self, ms):
        self.clock.sleep_ms(ms)

    def read(self, limit=256):
        return self.port.read(limit)

    def write(self, data):
        self.port.write(data)

    def escape(self):
        return self.escape_held

    def close(self):
        pass

    # --- the electrical model
    def _apply_script(self):
        while self._script and self._script[0][0] <= self.clock.us:
            _, pos, closed = self._script.pop(0)
            self._set(pos, closed)

    def _set(self, pos, closed):
        if closed:
            self.closed[pos] = True
        elif pos in self.closed:
            del self.closed[pos]

    def _column(self, col):
        self._apply_script()
        selected = [r for r in range(len(self.row_pins)) if self.row_pins[r].level == 0]
        if self.diodes:
            for r in selected:
                if (r, col) in self.closed:
                    return 0
            return 1
        # no diodes: search the graph of closed switches from this column
        seen_cols = {col: True}
        seen_rows = {}
        todo = [col]
        while todo:
            c = todo.pop()
            for (r, c2) in self.closed:
                if c2 == c and r not in seen_rows:
                    seen_rows[r] = True
                    if self.row_pins[r].level == 0:
                        return 0
                    for (r3, c3) in self.closed:
                        if r3 == r and c3 not in seen_cols:
                            seen_cols[c3] = True
                            todo.append(c3)
        return 1

    # --- what a test does to the board
    def set_square(self, square, occupied):
        self._set((square // 8, square % 8), occupied)

    def set_occupancy(self, bitboard):
        for sq in range(64):
            self.set_square(sq, (bitboard >> sq) & 1)

    def at(self, ms, square, occupied):
        """Schedule a switch change at board time ms (bounce is several of these)."""
        self.schedule(ms, (square // 8, square % 8), occupied)

    def schedule(self, ms, pos, closed):
        self._script.append((int(ms * 1000), pos, closed))
        self._script.sort(key=lambda e: e[0])

    def key_position(self, code, side):
        for krow, col, kcode, kside in self.config["keys"]:
            if kcode == code and kside == side:
                return (8 + krow, col)
        raise KeyError((code, side))

    def set_key(self, code, side, pressed):
        self._set(self.key_position(code, side), pressed)

    def set_lever(self, side, pressed):
        for gpio, s in self.config["lever"]:
            if s == side:
                self.inputs[gpio].level = 0 if pressed else 1


def load_firmware():
    """Import the firmware modules under CPython exactly as the Pico does.

    The firmware imports top-level names (``import protocol``, ``from scanner import``);
    here ``protocol`` is this package's codec itself, the very module object, and the
    others are loaded from firmware/. Returns the firmware's ``app`` module. CPython only.
    """
    import importlib.util
    import os
    import sys

    from firmware_bridge import protocol

    sys.modules["protocol"] = protocol
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "firmware")
    for name in ("scanner", "inputs", "leds", "app"):
        path = os.path.join(here, name + ".py")
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None) == path:
            continue
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules["app"]
