"""The board's main loop: scan, debounce, report over the wire protocol, drive the LEDs.

Everything touching hardware goes through ``hal`` (hal.py on the Pico, a fake pin layer
in the tests), so this loop runs unchanged under CPython. ``protocol`` is the host's own
codec, copied onto the Pico as protocol.py: one implementation for both ends.
"""

import protocol
from inputs import Inputs
from leds import Leds, pixel_order
from scanner import Scanner

FIRMWARE_VERSION = "0.1.0"

P = protocol
# GPIO numbers and timing. A board_config.py on the Pico with CONFIG = {...} overrides keys.
DEFAULT_CONFIG = {
    "rows": (0, 1, 2, 3, 4, 5, 6, 7),  # ranks 1-8, open-drain
    "cols": (8, 9, 10, 11, 12, 13, 14, 15),  # files a-h, pull-ups
    # The 15 buttons do not fit on the Pico's pins one by one, so they sit on two
    # extra matrix rows sharing the 8 columns: (key row, column, code, side).
    "key_rows": (16, 17),
    "keys": (
        (0, 0, P.PROMOTE_Q, P.NO_SIDE), (0, 1, P.PROMOTE_R, P.NO_SIDE),
        (0, 2, P.PROMOTE_B, P.NO_SIDE), (0, 3, P.PROMOTE_N, P.NO_SIDE),
        (0, 4, P.ARBITER, P.NO_SIDE), (0, 5, P.TAKEBACK, P.NO_SIDE),
        (0, 6, P.HINT, P.NO_SIDE),
        (1, 0, P.DRAW_OFFER, P.WHITE), (1, 1, P.DRAW_ACCEPT, P.WHITE),
        (1, 2, P.CLAIM, P.WHITE), (1, 3, P.RESIGN, P.WHITE),
        (1, 4, P.DRAW_OFFER, P.BLACK), (1, 5, P.DRAW_ACCEPT, P.BLACK),
        (1, 6, P.CLAIM, P.BLACK), (1, 7, P.RESIGN, P.BLACK),
    ),
    "lever": ((18, P.WHITE), (19, P.BLACK)),  # direct pins, active low
    "pixels": 22,  # WS2812 data pin
    "serpentine": False,
    "brightness": 0.2,
    "status": None,  # or 4 GPIOs: white to move, black to move, alert, game over
    "computer": None,  # or a GPIO: the computer opponent thinking (blinking), its move shown
    "promotion": None,  # or 4 GPIOs: the piece (Q, R, B, N) the computer's move promotes to
    "buzzer": None,  # or a GPIO driving an active buzzer
    "scan_hz": 100,
    "debounce": 3,  # scans (30 ms at 100 Hz): longer than reed contact bounce
    "settle_us": 30,
    "heartbeat_ms": 1000,
}


def _reached(now, deadline):
    """now >= deadline on a u32 millisecond clock that wraps."""
    return (now - deadline) & 0xFFFFFFFF < 0x80000000


class Firmware:
    def __init__(self, hal, config=None):
        cfg = dict(DEFAULT_CONFIG)
        if config:
            cfg.update(config)
        self.hal = hal
        self.config = cfg
        rows = [hal.pin_open_drain(n) for n in cfg["rows"]]
        rows += [hal.pin_open_drain(n) for n in cfg["key_rows"]]
        cols = [hal.pin_pull_up(n) for n in cfg["cols"]]
        self.scanner = Scanner(rows, cols, hal.sleep_us, cfg["settle_us"], cfg["debounce"])
        sources = []
        for gpio, side in cfg["lever"]:
            pin = hal.pin_pull_up(gpio)
            sources.append((lambda pin=pin: not pin.value(), "clock", 0, side))
        keys = self.scanner.keys
        for krow, col, code, side in cfg["keys"]:
            sources.append((lambda k=krow, b=1 << col: keys[k] & b, "button", code, side))
        self.inputs = Inputs(sources, cfg["debounce"])
        status = cfg["status"]
        self.leds = Leds(
            hal.pixels(cfg["pixels"], 64), pixel_order(cfg["serpentine"]), cfg["brightness"],
            [hal.pin_out(n) for n in status] if status else None,
            hal.pin_out(cfg["buzzer"]) if cfg["buzzer"] is not None else None,
            hal.pin_out(cfg["computer"]) if cfg["computer"] is not None else None,
            [hal.pin_out(n) for n in cfg["promotion"]] if cfg["promotion"] else None)
        self.decoder = P.Decoder()
        self.sender = P.Sender()
        self.connected = False  # quiet until the host's HELLO: never talk over a REPL user
        self.period_ms = max(1, 1000 // cfg["scan_hz"])
        self._heartbeat_at = 0

    def send(self, mtype, *values):
        self.hal.write(self.sender.frame(mtype, *values))

    def send_snapshot(self, ms, reason):
        self.send(P.SNAPSHOT, self.scanner.occupancy(), ms, reason)
        self._heartbeat_at = (ms + self.config["heartbeat_ms"]) & 0xFFFFFFFF

    def handle(self, msg, ms):
        t = msg.type
        if t == P.HELLO:
            self.send(P.HELLO_ACK, FIRMWARE_VERSION, self.hal.board_id)
            if msg.version != P.PROTOCOL_VERSION:
                self.connected = False
                self.send(P.ERROR, P.ERR_VERSION, "board speaks protocol %d, host sent %d"
                          % (P.PROTOCOL_VERSION, msg.version))
                return
            self.connected = True
            self.send_snapshot(ms, P.ON_CONNECT)
        elif not self.connected or t == P.GAP or t == P.PONG or t == P.ERROR:
            return  # a lost LEDS frame is healed by the next one: no need to ask
        elif t == P.REQUEST_SNAPSHOT:
            self.send_snapshot(ms, P.ON_REQUEST)
        elif t == P.LEDS:
            self.leds.set(msg.cells, msg.status, msg.buzzer, ms)
        elif t == P.PING:
            self.send(P.PONG, msg.token)
        else:
            self.send(P.ERROR, P.ERR_UNSUPPORTED, "board does not take " + msg.name)

    def step(self):
        """One loop: read the host, scan the matrix and inputs, report, refresh the LEDs."""
        ms = self.hal.ms()
        data = self.hal.read()
        if data:
            for msg in self.decoder.feed(data):
                self.handle(msg, ms)
        for sq, occupied, since in self.scanner.scan(ms):
            if self.connected:
                self.send(P.SQUARE, sq, occupied, since)
        for kind, code, side, since in self.inputs.poll(ms):
            if not self.connected:
                continue
            if kind == "clock":
                self.send(P.CLOCK, side, since)
            else:
                self.send(P.BUTTON, code, side, since)
        if self.connected and _reached(ms, self._heartbeat_at):
            self.send_snapshot(ms, P.HEARTBEAT)  # heals any frame lost on the way
        self.leds.refresh(ms)

    def run(self, steps=None):
        """Loop at scan_hz until the escape is held (or for `steps` loops, in tests)."""
        deadline = self.hal.ms()
        n = 0
        while steps is None or n < steps:
            self.step()
            n += 1
            if n % 10 == 0 and self.hal.escape():
                return
            deadline = (deadline + self.period_ms) & 0xFFFFFFFF
            wait = (deadline - self.hal.ms()) & 0xFFFFFFFF
            if wait < 0x80000000 and wait:
                self.hal.sleep_ms(wait)
            elif wait >= 0x80000000:
                deadline = self.hal.ms()  # overran: skip ahead, do not try to catch up


def load_config():
    cfg = dict(DEFAULT_CONFIG)
    try:
        import board_config
        cfg.update(board_config.CONFIG)
    except ImportError:
        pass
    return cfg


def main():
    """The Pico's entry point (main.py)."""
    import hal as hardware  # machine, neopixel, rp2: only on the board

    board = hardware.Hal()
    try:
        if board.escape():
            print("board_ctl firmware: BOOTSEL held, staying at the REPL")
            return
        fw = Firmware(board, load_config())
        while True:
            try:
                fw.run()
                return  # escape held: back to the REPL
            except Exception as exc:  # keep scanning after a bug, and tell the host
                fw.send(P.ERROR, P.ERR_INTERNAL, "%s: %s" % (type(exc).__name__, exc))
                board.sleep_ms(500)
    finally:
        board.close()  # Ctrl-C works again at the REPL
