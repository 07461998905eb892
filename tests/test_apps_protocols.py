"""The DGT and ChessLink codecs and sessions, held to the test clients written from the
protocols' descriptions (tests/dgtclient.py, tests/chesslinkclient.py): every answer
decoded by the client as a host would, requests fed a byte at a time, wrapped in
garbage, cut short and oversized (hypothesis, a fixed budget)."""

from __future__ import annotations

import random

import chess
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_ctl.apps import chesslink, dgt
from board_ctl.apps.chesslinksession import ChessLinkSession
from board_ctl.apps.dgtsession import UPDATE, UPDATE_NICE, DgtSession
from board_ctl.apps.lights import square_lights
from board_ctl.apps.session import Lights
from board_ctl.apps.snapshot import ClockState, Snapshot
from board_ctl.core.effects import Blink, Colour
from chesslinkclient import ChessLinkClient, led_command
from chesslinkclient import check as block_check
from dgtclient import (BOARD, CLOCK, CLOCK_ASCII, CLOCK_SETNRUN, CLOCK_VERSION, MSG_BWTIME,
                       MSG_FIELD_UPDATE, SERIALNR, SET_LEDS, UPDATE_NICE as NICE, VERSION,
                       DgtClient, codes_of, field_of, placement)

START = chess.Board()
FEN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
BOARD_FEN = Snapshot(chess.Board(FEN).piece_map(), ClockState())


def snapshot(fen: str = chess.STARTING_FEN, clock: ClockState = ClockState()) -> Snapshot:
    return Snapshot(chess.Board(fen).piece_map(), clock)


def dgt_host() -> DgtClient:
    return DgtClient("")


def chesslink_host() -> ChessLinkClient:
    return ChessLinkClient("")


# ---------------------------------------------------------------- DGT


def test_dgt_field_numbering_and_codes_match_the_description() -> None:
    assert [dgt.field_of(s) for s in (chess.A8, chess.H8, chess.A1, chess.H1)] == [0, 7, 56, 63]
    assert all(dgt.field_of(s) == field_of(s) for s in chess.SQUARES)
    assert all(dgt.square_of(dgt.field_of(s)) == s for s in chess.SQUARES)
    session, host = DgtSession("1234567890"), dgt_host()
    host.feed(session.receive(bytes([BOARD]), 0.0, snapshot(FEN)).data)
    assert host.board_fen() == chess.Board(FEN).board_fen()
    assert tuple(host.codes) == codes_of(chess.Board(FEN).board_fen())


def test_dgt_identity_requests() -> None:
    session, host = DgtSession("0012345678"), dgt_host()
    for command in (VERSION, SERIALNR, 0x55, 0x46, 0x47, 0x4C, 0x49, 0x32):
        host.feed(session.receive(bytes([command]), 0.0, snapshot()).data)
    got = {msg_id: data for msg_id, data in host.messages}
    assert got[0x13] == bytes([1, 7])
    assert got[0x11] == b"45678"  # the last five digits
    assert got[0x22] == b"0012345678"
    assert (got[0x10][0] << 7 | got[0x10][1]) == 45678 & 0x3FFF
    assert b"independent implementation" in got[0x12] and b"DGT" not in got[0x12]
    assert got[0x20][0] == 100 and len(got[0x20]) == 9
    assert got[0x0F] == bytes([dgt.EE_EOF])
    assert session.answered == 8 and session.ignored == 0


def test_dgt_field_updates_only_in_update_modes() -> None:
    session = DgtSession("1234567890")
    change = ((chess.E2, None),)
    assert session.changed(change, snapshot(), 0.0) == b""  # IDLE after power-up
    for mode in (0x44, 0x43, NICE):
        session.receive(bytes([mode]), 0.0, snapshot())
        host = dgt_host()
        host.feed(session.changed(change, snapshot(), 0.0))
        assert host.messages == [(MSG_FIELD_UPDATE, bytes([field_of(chess.E2), 0]))]
    session.receive(bytes([0x40]), 0.0, snapshot())  # reset: IDLE again
    assert session.changed(change, snapshot(), 0.0) == b""


def test_dgt_clock_readings_decode_as_the_description_says() -> None:
    clock = ClockState(white=3725.4, black=59.9, running=chess.BLACK, at=10.0, scale=1.0,
                       turn=chess.BLACK)
    session, host = DgtSession("1234567890"), dgt_host()
    host.feed(session.receive(bytes([CLOCK]), 12.0, snapshot(clock=clock)).data)
    reading = host.clocks[-1]
    assert (reading.left, reading.right) == (3725, 57)  # White left; Black's ran 2 s
    assert reading.running and reading.connected
    assert reading.status & 0x02  # the right side (Black's, running) is up
    assert reading.status & 0x08 and not reading.status & 0x10  # the right player's turn
    no_clock = DgtSession("1234567890")
    host = dgt_host()
    host.feed(no_clock.receive(bytes([CLOCK]), 0.0, snapshot()).data)
    assert not host.clocks[-1].connected


def test_dgt_nice_mode_sends_the_clock_when_its_seconds_change() -> None:
    clock = ClockState(white=10.5, black=20.0, running=chess.WHITE, at=0.0, scale=1.0)
    session = DgtSession("1234567890")
    session.receive(bytes([NICE]), 0.0, snapshot(clock=clock))
    board = snapshot(clock=clock)
    assert session.due(0.0, board) == 0.0
    assert session.tick(0.0, board)  # the first reading
    assert session.tick(0.2, board) == b""  # 10.3 s: still 10
    due = session.due(0.2, board)
    assert due is not None and 0.5 < due < 0.52
    host = dgt_host()
    host.feed(session.tick(0.6, board))
    assert host.clocks[-1].left == 9


def test_dgt_clock_commands_are_acknowledged_and_shown() -> None:
    session = DgtSession("1234567890")
    body = lambda cmd, *content: bytes([0x03, cmd, *content, 0x00])  # noqa: E731
    setnrun = body(CLOCK_SETNRUN, 0, 5, 0, 0, 3, 30, 0x01)
    text = body(CLOCK_ASCII, *b"e2e4    ", 0)
    request = b"".join(bytes([0x2B, len(b)]) + b for b in (setnrun, text))
    out = session.receive(request, 0.0, snapshot())
    assert out.notes == ["clock set left 0:05:00, right 0:03:30, left runs",
                         "clock display 'e2e4'"]
    assert out.data == b""  # IDLE: a board acknowledges only in the update modes
    session.receive(bytes([NICE]), 0.0, snapshot())
    host = dgt_host()
    host.feed(session.receive(bytes([0x2B, 3]) + body(CLOCK_VERSION), 0.0, snapshot()).data)
    host.feed(session.receive(bytes([0x2B, len(setnrun)]) + setnrun, 0.0, snapshot()).data)
    assert host.acks == [(0x10, CLOCK_VERSION, 0x21, 0), (0x10, CLOCK_SETNRUN, 0, 0)]
    assert not host.clocks  # an ack is no clock reading


def test_dgt_led_commands() -> None:
    session = DgtSession("1234567890")
    rev2 = bytes([SET_LEDS, 4, 1, field_of(chess.E2), field_of(chess.E4), 0])
    assert session.receive(rev2, 0, snapshot()).lights == Lights(frozenset({chess.E2, chess.E4}))
    off = bytes([SET_LEDS, 4, 0, 0x40, 0, 0])
    assert session.receive(off, 0, snapshot()).lights == Lights(frozenset())
    pegasus = bytes([SET_LEDS, 7, 5, 1, 0, 1, field_of(chess.G1), field_of(chess.F3), 0])
    assert session.receive(pegasus, 0, snapshot()).lights == Lights(
        frozenset({chess.G1, chess.F3}))
    assert session.receive(bytes([SET_LEDS, 2, 0, 0]), 0, snapshot()).lights == Lights(
        frozenset())
    # The Pegasus app's first packet: reset, all LEDs off, its developer key (§2.2).
    first = bytes.fromhex("40 60 02 00 00 63 07 8e 87 b0 18 b6 f4 00")
    out = session.receive(first, 0, snapshot())
    assert out.data == b"" and out.lights is None  # (the LEDs were off already)
    assert session.ignored == 0


def test_dgt_request_split_into_single_bytes() -> None:
    session, host = DgtSession("1234567890"), dgt_host()
    stream = bytes([NICE, BOARD, 0x2B, 3, 3, CLOCK_VERSION, 0, VERSION])
    for i, byte in enumerate(stream):
        host.feed(session.receive(bytes([byte]), i * 0.01, snapshot(FEN)).data)
    assert [m for m, _ in host.messages] == [0x06, MSG_BWTIME, 0x13]
    assert host.acks and session.ignored == 0


def test_dgt_truncated_request_never_holds_back_the_next() -> None:
    """A clock message cut short, then a board request: the board request is answered once
    the cut message has stood TRUNCATED_AFTER, and the cut one is counted."""
    session = DgtSession("1234567890")
    out = session.receive(bytes([0x2B, 10, 3, CLOCK_SETNRUN, 0, 5]), 0.0, snapshot())
    out.extend(session.receive(bytes([BOARD]), 0.1, snapshot()))
    assert not out.data  # still waiting for the clock message's end
    deadline = session.deadline()
    assert deadline is not None and deadline <= 0.1 + dgt.TRUNCATED_AFTER
    out = session.expire(deadline, snapshot(FEN))
    host = dgt_host()
    host.feed(bytes(out.data))
    assert host.board_fen() == chess.Board(FEN).board_fen()
    assert session.reader.malformed == 1


GARBAGE = st.binary(max_size=80)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(GARBAGE, st.sampled_from([
    bytes([0x2B]), bytes([0x2B, 0x7F]), bytes([0x60, 0x48]) + bytes(100), bytes([0x60, 4, 1]),
    bytes([0x2B, 3, 3, 9, 0]), bytes([0x63, 40]) + bytes(50)])), max_size=12),
    st.integers(1, 8))
def test_dgt_fuzz_garbage_truncated_and_oversized(chunks: list[bytes], split: int) -> None:
    """Any bytes at all: no exception, every answer a whole message a host decodes, and a
    board request after the garbage (once the line has been quiet) answered right."""
    session, host = DgtSession("1234567890"), dgt_host()
    now, board = 0.0, BOARD_FEN
    data = b"".join(chunks)
    for i in range(0, len(data), split):
        now += 0.001
        host.feed(bytes(session.receive(data[i:i + split], now, board).data))
    now += 1.0
    host.feed(bytes(session.expire(now, board).data))
    assert session.deadline() is None
    host.messages.clear()
    host.feed(bytes(session.receive(bytes([BOARD]), now, board).data))
    assert [m for m, _ in host.messages] == [0x06]
    assert host.board_fen() == chess.Board(FEN).board_fen()


# ---------------------------------------------------------------- ChessLink


def test_chesslink_status_and_version_as_the_description_says() -> None:
    session, host = ChessLinkSession(), chesslink_host()
    for request in ("V", "S"):
        host.feed(session.receive(chesslink.encode(request), 0.0, snapshot(FEN)).data)
    assert host.replies[0] == "v3130"
    assert host.replies[1][0] == "s"
    assert host.statuses[-1][1] == chess.Board(FEN).board_fen()
    assert host.bad_parity == 0 and host.bad_check == 0


def test_chesslink_seven_bit_replies_without_the_parity_bit() -> None:
    session = ChessLinkSession(parity_bit=False)
    data = bytes(session.receive(chesslink.encode("V"), 0.0, snapshot()).data)
    assert all(b < 0x80 for b in data) and data.decode() == "v3130" + block_check("v3130")


def test_chesslink_registers_and_reports() -> None:
    session = ChessLinkSession()
    board = snapshot()
    assert session.report_every() == pytest.approx(20 * 0.002048)  # every scan
    host = chesslink_host()
    host.feed(session.receive(chesslink.encode("W0203"), 0.0, board).data)  # on change
    host.feed(session.receive(chesslink.encode("R02"), 0.0, board).data)
    assert host.replies == ["w0203", "r0203"]
    assert session.report_every() is None and session.due(0.0, board) is None
    assert session.changed(((chess.E2, None),), board, 0.0)
    session.receive(chesslink.encode("W0201"), 0.0, board)  # reports off
    assert session.changed(((chess.E2, None),), board, 0.0) == b""
    session.receive(chesslink.encode("W0202") + chesslink.encode("W0310"), 0.0, board)
    assert session.report_every() == pytest.approx(16 * 0.004096)


def test_chesslink_block_check_can_be_turned_off() -> None:
    session, host = ChessLinkSession(), chesslink_host()
    session.receive(chesslink.encode("W0001"), 0.0, snapshot())
    data = bytes(session.receive(chesslink.encode("V", check=False), 0.0, snapshot()).data)
    assert bytes(b & 0x7F for b in data) == b"v3130"
    session.receive(chesslink.encode("W0000", check=False), 0.0, snapshot())
    host.feed(session.receive(chesslink.encode("V"), 0.0, snapshot()).data)
    assert host.replies == ["v3130"]


def test_chesslink_wrong_block_check_is_not_acted_on() -> None:
    session = ChessLinkSession()
    out = session.receive(chesslink.encode("X")[:-2] + b"00", 0.0, snapshot())
    assert out.data == b"" and out.lights is None and session.reader.malformed == 1


def test_chesslink_leds_map_corners_to_squares() -> None:
    """python-mchess-style patterns: the four corners of each square, blinking."""
    session = ChessLinkSession()
    command = led_command({chess.E2: 0x0F, chess.E4: 0xF0})
    out = session.receive(chesslink.encode(command), 0.0, snapshot())
    assert out.lights == Lights(frozenset({chess.E2, chess.E4}), blink=True)  # not e3
    block = led_command({sq: 0xFF for sq in (chess.D4, chess.E4, chess.D5, chess.E5)})
    out = session.receive(chesslink.encode(block), 0.0, snapshot())
    assert out.lights == Lights(frozenset({chess.D4, chess.E4, chess.D5, chess.E5}))
    for square in (chess.A8, chess.H1, chess.A1, chess.H8):
        lit = session.receive(chesslink.encode(led_command({square: 0xFF})), 0, snapshot())
        assert lit.lights == Lights(frozenset({square}))
    host = chesslink_host()
    host.feed(session.receive(chesslink.encode("X"), 0.0, snapshot()).data)
    assert host.replies == ["x"]


def test_chesslink_reset_has_no_reply_and_restores_the_registers() -> None:
    session = ChessLinkSession()
    session.receive(chesslink.encode("W0201"), 0.0, snapshot())
    out = session.receive(chesslink.encode("T"), 0.0, snapshot())
    assert out.data == b"" and out.lights == Lights(frozenset())
    assert session.report_mode == 0


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(GARBAGE, st.sampled_from([
    b"L", b"W02", b"S", chesslink.encode("L20" + "FF" * 81)[:-5], b"R" + b"Z" * 10,
    chesslink.encode("W0001"), b"\xff" * 5])), max_size=12), st.integers(1, 8))
def test_chesslink_fuzz_garbage_truncated_and_oversized(chunks: list[bytes], split: int
                                                        ) -> None:
    session, host = ChessLinkSession(), chesslink_host()
    now, board = 0.0, BOARD_FEN
    data = b"".join(chunks)
    for i in range(0, len(data), split):
        now += 0.001
        host.feed(bytes(session.receive(data[i:i + split], now, board).data))
    now += 1.0
    session.expire(now, board)
    assert session.deadline() is None
    host.replies.clear()
    # A reset may have come in the garbage, or the check turned off: ask as the app would.
    session.receive(chesslink.encode("W0000", check=session.reader.block_check), now,
                    board)
    host.feed(bytes(session.receive(chesslink.encode("S"), now, board).data))
    assert host.statuses[-1][1] == chess.Board(FEN).board_fen()
    assert host.bad_parity == 0


def test_chesslink_random_requests_with_a_seeded_generator() -> None:
    """Valid, corrupted and cut requests mixed: every valid one answered, in order."""
    rng = random.Random(19)
    session, host = ChessLinkSession(), chesslink_host()
    session.receive(chesslink.encode("W0201"), 0.0, snapshot())  # no automatic reports
    valid = 0
    now = 0.0
    for _ in range(400):
        kind = rng.random()
        text = rng.choice(["V", "S", "X", "R04", "W0410"])
        if kind < 0.6:
            data, valid = chesslink.encode(text), valid + 1
        elif kind < 0.8:
            data = chesslink.encode(text)[:-1] + b"Q"  # a bad check
        else:
            data = bytes(rng.getrandbits(7) for _ in range(rng.randint(1, 6)))
        now += 1.0  # a gap: anything cut short is dropped before the next
        session.expire(now, snapshot())
        host.feed(bytes(session.receive(data, now, snapshot()).data))
    session.expire(now + 1.0, snapshot())
    assert len(host.replies) >= valid  # garbage may spell a valid request now and then
    assert session.answered >= valid


# ---------------------------------------------------------------- an app's lights


def test_app_lights_take_the_computer_move_colours() -> None:
    lights = square_lights(Lights(frozenset({chess.G1, chess.F3}), blink=True),
                           chess.Board().piece_map(), chess.WHITE)
    assert [(l.square, l.colour, l.blink) for l in lights] == [
        (chess.G1, Colour.BLUE, Blink.SLOW), (chess.F3, Colour.GREEN, Blink.SLOW)]
