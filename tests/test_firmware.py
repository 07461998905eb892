"""The MicroPython firmware, run under CPython over the fake pin layer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from firmware_bridge import protocol as P
from firmware_bridge.fakepins import FakeHal, FakeInput, FakeOutput, FakePixels, load_firmware

app = load_firmware()
import inputs as fw_inputs  # noqa: E402  (top-level names, as on the Pico)
import leds as fw_leds  # noqa: E402
import scanner as fw_scanner  # noqa: E402

START = 0xFFFF00000000FFFF  # the 32 pieces of the start position
PERIOD = 10  # ms per loop at 100 Hz


def make_scanner(hal: FakeHal, debounce: int = 3) -> fw_scanner.Scanner:
    cfg = hal.config
    rows = [hal.pin_open_drain(n) for n in list(cfg["rows"]) + list(cfg["key_rows"])]
    cols = [hal.pin_pull_up(n) for n in cfg["cols"]]
    return fw_scanner.Scanner(rows, cols, hal.sleep_us, 30, debounce)


def scan_for(hal: FakeHal, scanner: fw_scanner.Scanner, ms: int) -> list[tuple[int, bool, int]]:
    """Scan every PERIOD ms for `ms` ms of board time; all the changes reported."""
    out = []
    end = hal.ms() + ms
    while hal.ms() < end:
        start = hal.ms()
        out += scanner.scan(start)
        hal.clock.us = (start + PERIOD) * 1000
    return out


# ---------------------------------------------------------------- scanner


def test_first_scan_is_the_state_not_a_change() -> None:
    hal = FakeHal(app.DEFAULT_CONFIG)
    hal.set_occupancy(START)
    sc = make_scanner(hal)
    assert scan_for(hal, sc, 100) == []
    assert sc.occupancy() == START


def test_bounce_gives_one_change_stamped_when_it_settled() -> None:
    hal = FakeHal(app.DEFAULT_CONFIG)
    hal.set_occupancy(START)
    sc = make_scanner(hal)
    scan_for(hal, sc, 50)  # t = 50
    # e2 (12) lifted at 52 with contact bounce: closed again 61-72, open from 72
    hal.at(52, 12, False)
    hal.at(61, 12, True)
    hal.at(72, 12, False)
    changes = scan_for(hal, sc, 200)
    assert changes == [(12, False, 80)]  # scans at 60 (open), 70 (closed), 80, 90, 100 (open)
    assert sc.occupancy() == START & ~(1 << 12)


def test_blip_shorter_than_debounce_is_ignored_but_kept_with_debounce_1() -> None:
    for debounce, expected in ((3, []), (1, [(20, True, 60), (20, False, 70)])):
        hal = FakeHal(app.DEFAULT_CONFIG)
        sc = make_scanner(hal, debounce)
        scan_for(hal, sc, 50)
        hal.at(55, 20, True)  # a slid piece crossing e3 for 15 ms
        hal.at(70, 20, False)
        assert scan_for(hal, sc, 100) == expected


def test_every_square_maps_to_its_python_chess_number() -> None:
    hal = FakeHal(app.DEFAULT_CONFIG)
    sc = make_scanner(hal, debounce=1)
    scan_for(hal, sc, 10)
    for sq in range(64):
        hal.set_square(sq, True)
        assert scan_for(hal, sc, 10) == [(sq, True, hal.ms() - PERIOD)]
        hal.set_square(sq, False)
        scan_for(hal, sc, 10)


def test_diodes_prevent_ghosting() -> None:
    a1, h1, a8, h8 = 0, 7, 56, 63
    for diodes, seen in ((True, {a1, h1, a8}), (False, {a1, h1, a8, h8})):
        hal = FakeHal(app.DEFAULT_CONFIG, diodes=diodes)
        for sq in (a1, h1, a8):
            hal.set_square(sq, True)
        sc = make_scanner(hal)
        scan_for(hal, sc, 10)
        assert {sq for sq in range(64) if sc.occupancy() >> sq & 1} == seen


def test_full_board_with_diodes_reads_exactly() -> None:
    hal = FakeHal(app.DEFAULT_CONFIG)
    board = 0x81FF00A5005AFF81
    hal.set_occupancy(board)
    sc = make_scanner(hal)
    scan_for(hal, sc, 10)
    assert sc.occupancy() == board


# ---------------------------------------------------------------- inputs and LEDs


def test_inputs_debounce_and_report_presses_only() -> None:
    pin = FakeInput()
    inp = fw_inputs.Inputs([(lambda: not pin.value(), "clock", 0, P.WHITE)], debounce=3)
    assert inp.poll(0) == []
    presses = []
    for ms, level in enumerate([0, 1, 0, 0, 0, 0, 1, 1, 1, 1]):  # bounce, press, release
        pin.level = level
        presses += inp.poll(ms * 10)
    assert presses == [("clock", 0, P.WHITE, 20)]


def test_input_held_at_start_is_not_a_press() -> None:
    pin = FakeInput()
    pin.level = 0
    inp = fw_inputs.Inputs([(lambda: not pin.value(), "clock", 0, P.BLACK)], debounce=2)
    assert [inp.poll(ms) for ms in range(5)] == [[]] * 5


def test_leds_colours_blink_and_write_only_on_change() -> None:
    px = FakePixels(64)
    buzzer = FakeOutput()
    status = [FakeOutput() for _ in range(4)]
    leds = fw_leds.Leds(px, fw_leds.pixel_order(), 1.0, status, buzzer)
    cells = bytearray(64)
    cells[12] = P.cell(2)  # e2 green, steady
    cells[28] = P.cell(1, 2)  # e4 red, fast blink
    leds.set(bytes(cells), P.pack_status(True, False, False, 1), 1, 0)
    leds.refresh(0)
    assert px.shown[12] == (0, 255, 0) and px.shown[28] == (255, 0, 0)
    assert [p.level for p in status] == [1, 0, 1, 0] and buzzer.level == 1
    leds.refresh(10)
    assert px.writes == 1  # nothing changed
    leds.refresh(130)  # fast blink off, chirp over
    assert px.shown[28] == (0, 0, 0) and px.shown[12] == (0, 255, 0) and buzzer.level == 0
    assert px.writes == 2
    leds.refresh(600)  # slow alert blink off
    assert status[2].level == 0


def test_the_computer_and_promotion_leds() -> None:
    px = FakePixels(64)
    computer = FakeOutput()
    promotion = [FakeOutput() for _ in range(4)]
    leds = fw_leds.Leds(px, fw_leds.pixel_order(), 1.0, None, None, computer, promotion)
    for remote, at, lit, pieces in (
            (P.REMOTE_THINKING, 0, 1, [0, 0, 0, 0]),  # thinking: blinks slowly
            (P.REMOTE_THINKING, 600, 0, [0, 0, 0, 0]),
            (P.REMOTE_SHOWN + 1 + 3, 600, 1, [0, 0, 0, 1]),  # its move shown, promoting to N
            (P.REMOTE_SHOWN, 600, 1, [0, 0, 0, 0]),
            (P.REMOTE_NONE, 600, 0, [0, 0, 0, 0])):
        leds.set(bytes(64), P.pack_status(True, False, remote=remote), 0, 0)
        leds.refresh(at)
        assert computer.level == lit and [p.level for p in promotion] == pieces


def test_serpentine_order() -> None:
    order = fw_leds.pixel_order(serpentine=True)
    assert order[0] == 0 and order[7] == 7 and order[8] == 15 and order[15] == 8
    assert sorted(order) == list(range(64))


# ---------------------------------------------------------------- the main loop


class Board:
    """The firmware over fake pins, with a host end that reuses the real codec."""

    def __init__(self, occupancy: int = START, **config: object) -> None:
        cfg = dict(app.DEFAULT_CONFIG, **config)
        self.hal = FakeHal(cfg)
        self.hal.set_occupancy(occupancy)
        self.fw = app.Firmware(self.hal, cfg)
        self.decoder = P.Decoder()
        self.sender = P.Sender()

    def send(self, mtype: int, *values: object) -> None:
        self.hal.port.rx.extend(self.sender.frame(mtype, *values))

    def run(self, ms: int) -> list[P.Message]:
        self.fw.run(steps=max(1, ms // PERIOD))
        return self.decoder.feed(self.hal.port.take())

    def connect(self) -> list[P.Message]:
        self.run(50)
        self.send(P.HELLO, "test", "host")
        return self.run(10)


def test_quiet_until_hello_then_ack_and_snapshot() -> None:
    b = Board()
    b.hal.at(5, 12, False)
    assert b.run(200) == []  # nothing to a host that has not said HELLO
    b.send(P.HELLO, "test", "host")
    ack, snap = b.run(10)
    assert (ack.name, ack.firmware, ack.board_id, ack.seq) == ("HELLO_ACK", "0.1.0",
                                                               "fake-board", 0)
    assert (snap.name, snap.occupied, snap.reason) == ("SNAPSHOT", START & ~(1 << 12),
                                                       P.ON_CONNECT)


def test_moves_lever_and_buttons_are_reported_in_order() -> None:
    b = Board()
    b.connect()
    t = b.hal.ms()
    b.hal.at(t + 1, 12, False)
    b.hal.at(t + 301, 28, True)
    msgs = b.run(400)
    b.hal.set_lever(P.WHITE, True)
    msgs += b.run(100)
    b.hal.set_key(P.PROMOTE_N, P.NO_SIDE, True)
    b.hal.set_key(P.RESIGN, P.BLACK, True)
    msgs += b.run(100)
    got = [(m.name, m.fields) for m in msgs if m.type != P.SNAPSHOT]
    assert got == [
        ("SQUARE", {"square": 12, "occupied": False, "ms": t + 10}),
        ("SQUARE", {"square": 28, "occupied": True, "ms": t + 310}),
        ("CLOCK", {"side": P.WHITE, "ms": t + 400}),
        ("BUTTON", {"button": P.PROMOTE_N, "side": P.NO_SIDE, "ms": t + 500}),
        ("BUTTON", {"button": P.RESIGN, "side": P.BLACK, "ms": t + 500}),
    ]
    assert [m.seq for m in msgs] == list(range(msgs[0].seq, msgs[0].seq + len(msgs)))


def test_snapshot_on_request_heartbeat_and_ping() -> None:
    b = Board()
    b.connect()
    b.send(P.REQUEST_SNAPSHOT)
    b.send(P.PING, 0x0D0A0300)
    snap, pong = b.run(10)
    assert (snap.reason, snap.occupied, pong.name, pong.token) == (P.ON_REQUEST, START,
                                                                   "PONG", 0x0D0A0300)
    beats = [m for m in b.run(3000) if m.type == P.SNAPSHOT]
    assert [m.reason for m in beats] == [P.HEARTBEAT] * 3
    assert [m.ms - snap.ms for m in beats] == [1000, 2000, 3000]


def test_leds_frame_drives_the_pixels() -> None:
    b = Board(brightness=1.0)
    b.connect()
    cells = bytearray(64)
    cells[chessboard("e4")] = P.cell(3, 1)  # blue, slow blink
    b.send(P.LEDS, bytes(cells), 0, 0)
    b.run(10)
    strip = b.hal.strip
    on = strip.shown[chessboard("e4")]
    b.run(500)
    off = strip.shown[chessboard("e4")]
    assert {on, off} == {(0, 0, 255), (0, 0, 0)}


def test_version_mismatch_is_answered_with_an_error_and_silence() -> None:
    b = Board()
    b.run(50)
    b.hal.port.rx.extend(P.encode(P.HELLO, 0, "future host", "x", version=2))
    ack, err = b.run(10)
    assert ack.name == "HELLO_ACK" and ack.version == P.PROTOCOL_VERSION
    assert (err.name, err.code) == ("ERROR", P.ERR_VERSION) and "protocol 1" in err.text
    b.hal.set_square(12, False)
    assert b.run(2000) == []


def test_garbage_from_the_host_is_dropped() -> None:
    b = Board()
    b.connect()
    b.hal.port.rx.extend(b"\x03\x03\r\nimport machine\r\n\x04" + bytes(range(1, 200)))
    b.send(P.PING, 7)
    (pong,) = b.run(10)
    assert pong.token == 7 and b.fw.decoder.dropped >= 1


def test_unsupported_message_gets_an_error() -> None:
    b = Board()
    b.connect()
    b.send(P.SQUARE, 1, True, 0)
    (err,) = b.run(10)
    assert err.code == P.ERR_UNSUPPORTED


def test_escape_ends_the_loop() -> None:
    b = Board()
    b.hal.escape_held = True
    b.fw.run()  # returns instead of looping forever


def chessboard(name: str) -> int:
    return "abcdefgh".index(name[0]) + 8 * (int(name[1]) - 1)


# ---------------------------------------------------------------- one codec for both ends

FIRMWARE = Path(__file__).resolve().parents[1] / "firmware_bridge" / "firmware"
PROTOCOL = FIRMWARE.parent / "protocol.py"


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    return names


def test_firmware_has_no_codec_of_its_own() -> None:
    files = sorted(FIRMWARE.glob("*.py"))
    assert {f.name for f in files} == {"app.py", "hal.py", "inputs.py", "leds.py", "main.py",
                                       "scanner.py"}
    codec = {"crc16", "cobs_encode", "cobs_decode", "Decoder", "encode", "decode_frame"}
    for f in files:
        defined = {n.name for n in ast.walk(_tree(f))
                   if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        assert not defined & codec, f.name
        assert "struct" not in _imports(_tree(f)), f.name  # no hand-made frames either
        assert not any(i.startswith("firmware_bridge") for i in _imports(_tree(f))), f.name
    assert "protocol" in _imports(_tree(FIRMWARE / "app.py"))


def test_firmware_runs_the_host_codec_object() -> None:
    import firmware_bridge.protocol

    assert app.protocol is firmware_bridge.protocol
    assert app.P.Decoder is firmware_bridge.protocol.Decoder


def test_install_copies_the_host_protocol_file() -> None:
    from firmware_bridge import install

    copies = install.files()
    assert copies[0] == (PROTOCOL, ":protocol.py")
    assert copies[-1] == (FIRMWARE / "main.py", ":main.py")  # last: never boot half a copy
    assert {src.name for src, _ in copies[1:]} == {f.name for f in FIRMWARE.glob("*.py")}
    cmd = install.mpremote_command("/dev/ttyACM0")
    assert cmd[:3] == ["mpremote", "connect", "/dev/ttyACM0"] and cmd[-1] == "reset"
    assert cmd[cmd.index(str(PROTOCOL)) + 1] == ":protocol.py"


def test_main_py_just_starts_the_app() -> None:
    tree = _tree(FIRMWARE / "main.py")
    assert _imports(tree) == {"app"}
    assert ast.unparse(tree.body[-1]) == "app.main()"
