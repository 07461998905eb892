"""Square LEDs (a WS2812 chain driven through MicroPython's neopixel API), blinking,
optional status LEDs and an optional active buzzer.

Colour and blink codes are those of board_ctl.core.effects (the protocol's LEDS cells).
"""

# RGB per Colour code: OFF RED GREEN BLUE YELLOW WHITE ORANGE.
COLOURS = ((0, 0, 0), (255, 0, 0), (0, 255, 0), (0, 0, 255),
           (255, 180, 0), (255, 255, 255), (255, 80, 0))
HALF_PERIOD_MS = (0, 500, 125)  # STEADY, SLOW (1 Hz), FAST (4 Hz)
BUZZ_CHIRP_MS = 80
BUZZ_RESULT_MS = 1000
BUZZ_ALARM_MS = 200  # on, then off, repeated


def pixel_order(serpentine=False):
    """Pixel index of each square: the chain runs a1..h1, then rank 2 (reversed if serpentine)..."""
    order = []
    for sq in range(64):
        r, f = sq // 8, sq % 8
        order.append(r * 8 + (7 - f if serpentine and r % 2 else f))
    return order


class Leds:
    def __init__(self, pixels, order=None, brightness=0.2, status_pins=None, buzzer=None,
                 computer_pin=None, promotion_pins=None):
        self.pixels = pixels  # neopixel-like: pixels[i] = (r, g, b); pixels.write()
        self.order = order or pixel_order()
        self.table = [(int(r * brightness), int(g * brightness), int(b * brightness))
                      for (r, g, b) in COLOURS]
        self.status_pins = status_pins  # (white to move, black to move, alert, game over)
        # Playing a computer: its LED blinks slowly while it thinks, is on while its move
        # is shown on the squares, blinks fast for a hint; the promotion LEDs (Q, R, B, N,
        # beside the selector's buttons) show the piece its shown move promotes to.
        self.computer_pin = computer_pin
        self.promotion_pins = promotion_pins
        self.buzzer = buzzer
        self.cells = bytes(64)
        self.status = 0
        self.buzz = 0
        self._buzz_from = 0
        self._shown = None  # (cells, slow on, fast on) last written to the chain
        self.writes = 0

    def set(self, cells, status, buzzer, ms):
        """Show a LEDS message from now on; a new buzzer code starts its pattern."""
        self.cells = bytes(cells)
        self.status = status
        if buzzer != self.buzz:
            self.buzz = buzzer
            self._buzz_from = ms

    def _on(self, blink, ms):
        half = HALF_PERIOD_MS[blink]
        return half == 0 or (ms // half) % 2 == 0

    def refresh(self, ms):
        """Drive the outputs for time ms; the chain is rewritten only when it changes."""
        slow = self._on(1, ms)
        fast = self._on(2, ms)
        key = (self.cells, slow, fast)
        if key != self._shown:
            self._shown = key
            cells = self.cells
            off = self.table[0]
            for sq in range(64):
                c = cells[sq]
                blink = c >> 4
                on = blink == 0 or (slow if blink == 1 else fast)
                self.pixels[self.order[sq]] = self.table[c & 0x0F] if on else off
            self.pixels.write()  # ~2 ms for 64 pixels, so not on every loop
            self.writes += 1
        if self.status_pins:
            alert = (self.status >> 3) & 3  # 0 off, else Blink + 1
            values = (self.status & 1, self.status & 2, alert and self._on(alert - 1, ms),
                      self.status & 4)
            for i in range(len(self.status_pins)):
                self.status_pins[i].value(1 if values[i] else 0)
        remote = (self.status >> 5) & 7  # 0 none, 1 thinking, 2 shown, 3-6 promoting, 7 hint
        if self.computer_pin is not None:
            on = (remote == 1 and self._on(1, ms)) or 2 <= remote <= 6 or \
                (remote == 7 and self._on(2, ms))
            self.computer_pin.value(1 if on else 0)
        if self.promotion_pins:
            for i in range(len(self.promotion_pins)):
                self.promotion_pins[i].value(1 if remote == 3 + i else 0)
        if self.buzzer is not None:
            self.buzzer.value(1 if self.buzzing(ms) else 0)

    def buzzing(self, ms):
        t = (ms - self._buzz_from) & 0xFFFFFFFF
        if self.buzz == 1:
            return t < BUZZ_CHIRP_MS
        if self.buzz == 2:
            return (t // BUZZ_ALARM_MS) % 2 == 0
        if self.buzz == 3:
            return t < BUZZ_RESULT_MS
        return False
