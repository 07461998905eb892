"""The host end of the link against boards that misbehave: clocks that jump, speeds no
emulator plays at, control characters in what the board says, URLs pyserial refuses,
and any byte stream at all (hypothesis). The far end speaks through the real codec
(firmware_bridge.protocol); only what it says is scripted."""

from __future__ import annotations

import logging
import math
import queue
import re
from typing import Any

import chess
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_ctl.core import events as ev
from board_ctl.service.linkboard import LinkBoard, board_speed
from firmware_bridge import protocol as P
from firmware_bridge.link import MAX_AHEAD, MAX_DRIFT, BoardLink, BoardUrlError

START = chess.Board().occupied


class HostClock:
    """The link's clock: moves when the test says, and a little at every look."""

    def __init__(self) -> None:
        self.now = 50.0
        self.start = self.now

    def __call__(self) -> float:
        self.now += 1e-4
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    @property
    def elapsed(self) -> float:
        return self.now - self.start


class ScriptedBoard:
    """A board that answers the greeting and snapshot requests through the real codec,
    and says whatever else a test makes it say, stamped with its own u32 ms clock."""

    def __init__(self, firmware: str = "fw 1.0", board_id: str = "scripted") -> None:
        self.firmware = firmware
        self.board_id = board_id
        self.ms = 1000  # the board's clock
        self.occupied = START
        self.tx = bytearray()  # board -> host
        self.sender = P.Sender()
        self.decoder = P.Decoder()
        self.opens = 0
        self.errors_before_ack: list[str] = []

    def send(self, mtype: int, *values: Any) -> None:
        self.tx += self.sender.frame(mtype, *values)

    def receive(self, data: bytes) -> None:
        for msg in self.decoder.feed(data):
            if msg.type == P.HELLO:
                for text in self.errors_before_ack:
                    self.send(P.ERROR, P.ERR_INTERNAL, text)
                self.send(P.HELLO_ACK, self.firmware, self.board_id)
            elif msg.type == P.REQUEST_SNAPSHOT:
                self.send(P.SNAPSHOT, self.occupied, self.ms & 0xFFFFFFFF, P.ON_REQUEST)

    def serial_for_url(self, url: str, **kwargs: Any) -> ScriptedPort:
        self.opens += 1
        return ScriptedPort(self)


class ScriptedPort:
    """pyserial's interface, on a ScriptedBoard."""

    def __init__(self, board: ScriptedBoard) -> None:
        self.board = board
        self.is_open = True

    @property
    def in_waiting(self) -> int:
        return len(self.board.tx)

    def read(self, size: int = 1) -> bytes:
        data = bytes(self.board.tx[:size])
        del self.board.tx[:size]
        return data

    def write(self, data: bytes) -> int:
        self.board.receive(data)
        return len(data)

    def reset_input_buffer(self) -> None:
        self.board.tx.clear()

    def close(self) -> None:
        self.is_open = False


def connect(board: ScriptedBoard) -> tuple[BoardLink, HostClock]:
    clock = HostClock()
    link = BoardLink("scripted://board", serial_for_url=board.serial_for_url, clock=clock,
                     sleep=clock.sleep)
    link.open()
    link.read_events(0.01)  # the snapshot asked for at connection
    return link, clock


def lift_and_place(board: ScriptedBoard, link: BoardLink, clock: HostClock,
                   square: chess.Square) -> list[ev.Event]:
    """A piece lifted and put back 0.4 s later, on both clocks."""
    board.send(P.SQUARE, square, False, board.ms & 0xFFFFFFFF)
    out = link.read_events(0)
    board.ms += 400
    clock.now += 0.4
    board.send(P.SQUARE, square, True, board.ms & 0xFFFFFFFF)
    return out + link.read_events(0)


# ---------------------------------------------------------------- clock jumps


@pytest.mark.parametrize("jump_ms", [2**31, 2**31 - 1, 2**31 + 1, 2**32 - 5000, 10**8],
                         ids=["2^31", "2^31-1", "2^31+1", "back-5s", "+27h"])
def test_a_board_clock_that_jumps_45_times_keeps_real_time(
        jump_ms: int, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 8 §1: a board whose clock jumps by 2^31 ms (and other amounts) 45 times,
    each time followed by a move: every event stays on the host's timeline (never
    years ahead, never stuck), the spacing the board stamps between two events after a
    jump is kept, and the jumps are counted and reported."""
    board = ScriptedBoard()
    link, clock = connect(board)
    events: list[ev.Event] = []
    with caplog.at_level(logging.WARNING, logger="firmware_bridge.link"):
        for i in range(45):
            board.ms += jump_ms  # wraps in the u32 stamp
            clock.now += 1.0
            board.ms += 1000
            board.send(P.SNAPSHOT, board.occupied, board.ms & 0xFFFFFFFF, P.HEARTBEAT)
            events += link.read_events(0)
            events += lift_and_place(board, link, clock, chess.SQUARES[8 + i % 8])
    assert link.stats.clock_jumps == 45
    times = [e.t for e in events]
    assert times == sorted(times)
    assert max(times) <= clock.elapsed * (1 + MAX_DRIFT) + MAX_AHEAD  # never far ahead
    assert times[-1] >= 45.0 * 0.9  # and never stuck: it followed the host
    lifts = [e for e in events if isinstance(e, ev.Lifted)]
    places = [e for e in events if isinstance(e, ev.Placed)]
    assert len(lifts) == len(places) == 45
    for lifted, placed in zip(lifts, places):
        assert placed.t - lifted.t == pytest.approx(0.4, abs=1e-6)  # the board's own spacing
    warnings = [r.getMessage() for r in caplog.records if "clock jumped" in r.getMessage()]
    assert 3 <= len(warnings) <= 4 and "45" not in warnings[0]


def test_a_drifting_board_clock_is_not_a_jump() -> None:
    """A board crystal 500 ppm fast over a 3-hour game: no jump, the board's times kept."""
    board = ScriptedBoard()
    link, clock = connect(board)
    first = lift_and_place(board, link, clock, chess.E2)
    for _ in range(3 * 60):  # a heartbeat a minute
        clock.now += 60.0
        board.ms += 60_030
        board.send(P.SNAPSHOT, board.occupied, board.ms & 0xFFFFFFFF, P.HEARTBEAT)
        link.read_events(0)
    last = lift_and_place(board, link, clock, chess.E2)
    assert link.stats.clock_jumps == 0
    assert last[0].t - first[0].t == pytest.approx(3 * 60 * 60.030 + 0.4, abs=1e-3)


# ---------------------------------------------------------------- what the board says


@pytest.mark.parametrize("claim", ["speed=100000000", "speed=1e308", "speed=inf", "speed=nan",
                                   "speed=0", "speed=-4", "speed=0.001", "speed=x"])
def test_a_claimed_speed_out_of_range_is_reported_and_ignored(
        claim: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert board_speed(f"board-emulator 1 {claim}") == 1.0
    assert any(f"says {claim}" in r.getMessage() and "real speed" in r.getMessage()
               for r in caplog.records)
    assert board_speed("board-emulator 1 speed=4") == 4.0
    assert board_speed("board-emulator 1 speed=1000") == 1000.0
    assert board_speed("pico-board 1.0") == 1.0


def test_a_board_claiming_speed_100000000_plays_at_real_speed() -> None:
    """Through LinkBoard's reader thread: events are not multiplied by the claim."""
    board = ScriptedBoard(firmware="board-emulator 1 speed=100000000")
    got: queue.Queue[object] = queue.Queue()
    linkboard = LinkBoard("scripted://board", connect_timeout=5.0, poll=0.01,
                          link_factory=lambda url, **kw: BoardLink(
                              url, serial_for_url=board.serial_for_url, **kw))
    linkboard.start(got.put)
    try:
        assert linkboard.scale == 1.0
        board.ms += 250
        board.send(P.SQUARE, chess.E2, False, board.ms)
        while True:
            item = got.get(timeout=10)
            if isinstance(item, ev.Lifted):
                break
        assert 0 <= item.t < 60  # seconds since the link's first frame, not years
    finally:
        linkboard.stop()


CONTROL = "\x1b]0;pwned\x07\x1b[2J\x1b[31m\r\n\x00\u202e\x7f\x9b"


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if not c.isprintable()]


def test_control_characters_from_the_board_are_escaped(
        caplog: pytest.LogCaptureFixture) -> None:
    """Issue 8 §5: a board's id, firmware and error texts never reach a terminal raw."""
    board = ScriptedBoard(firmware=f"fw{CONTROL}"[:P.MAX_TEXT],
                          board_id=f"id{CONTROL}"[:P.MAX_TEXT])
    board.errors_before_ack = [f"boot{CONTROL}"]
    with caplog.at_level(logging.DEBUG, logger="firmware_bridge.link"):
        link, _ = connect(board)
        board.send(P.ERROR, P.ERR_INTERNAL, f"oops{CONTROL}")
        link.read_events(0)
    assert link.board is not None
    assert _raw_controls(link.board.board_id) == _raw_controls(link.board.firmware) == []
    assert "\\x1b]0;pwned\\x07" in link.board.board_id  # escaped, still readable
    messages = [r.getMessage() for r in caplog.records]
    assert any("oops\\x1b" in m for m in messages)
    assert all(_raw_controls(m) == [] for m in messages), messages


def test_a_url_pyserial_refuses_fails_at_once_with_its_name() -> None:
    board = ScriptedBoard()

    def refuse(url: str, **kwargs: Any) -> Any:
        board.opens += 1
        raise ValueError("invalid URL, protocol 'bogus' not known")

    clock = HostClock()
    link = BoardLink("bogus://x", serial_for_url=refuse, clock=clock, sleep=clock.sleep)
    with pytest.raises(BoardUrlError, match=r"cannot open bogus://x: ValueError: invalid URL"):
        link.open(timeout=5.0)
    assert board.opens == 1  # not retried for 5 s
    for url in ("bogus://x", "loop://?bad=1"):  # pyserial's own ValueError, KeyError
        with pytest.raises(BoardUrlError, match=f"cannot open {re.escape(url)}: "):
            BoardLink(url).open(timeout=5.0)


# ---------------------------------------------------------------- any byte stream

FUZZ = settings(max_examples=100, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
frames = st.one_of(
    st.builds(lambda sq, occ, ms: (P.SQUARE, sq, occ, ms), st.integers(0, 63), st.booleans(),
              st.integers(0, 2**32 - 1)),
    st.builds(lambda bits, ms, r: (P.SNAPSHOT, bits, ms, r), st.integers(0, 2**64 - 1),
              st.integers(0, 2**32 - 1), st.integers(0, 2)),
    st.builds(lambda side, ms: (P.CLOCK, side, ms), st.integers(0, 1), st.integers(0, 2**32 - 1)),
    st.builds(lambda side, ms, w, b: (P.CLOCK_TIMES, side, ms, w, b), st.integers(0, 1),
              st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
    st.builds(lambda b, side, ms: (P.BUTTON, b, side, ms), st.integers(0, 8), st.integers(0, 2),
              st.integers(0, 2**32 - 1)),
    st.builds(lambda code, text: (P.ERROR, code, text), st.integers(0, 255),
              st.text(max_size=P.MAX_TEXT)),
    st.builds(lambda a, b: (P.HELLO_ACK, a, b), st.text(max_size=P.MAX_TEXT),
              st.text(max_size=P.MAX_TEXT)),
    st.builds(lambda token: (P.PING, token), st.integers(0, 2**32 - 1)),
)
chunks = st.lists(st.one_of(st.binary(max_size=80), frames, st.floats(0, 30)), max_size=40)


@FUZZ
@given(chunks)
def test_any_byte_stream_gives_events_or_counted_garbage(script: list[Any]) -> None:
    """Garbage, valid frames with any field values (any stamps, texts, sequence jumps)
    and time passing, in any order: the link never raises, its events are on one
    monotonic timeline that never runs ahead of the host's clock, and after it all a
    good frame still comes through (the decoder resynchronised)."""
    board = ScriptedBoard()
    link, clock = connect(board)
    events: list[ev.Event] = []
    for item in script:
        if isinstance(item, bytes):
            board.tx += item
        elif isinstance(item, float):
            clock.now += item
        else:
            board.send(*item)
        events += link.read_events(0)
    board.tx += b"\x00"  # ends whatever frame the garbage left open
    board.send(P.SQUARE, chess.E2, False, board.ms)
    events += link.read_events(0) + link.read_events(0.01)
    assert all(isinstance(e, ev.Event) and math.isfinite(e.t) for e in events)
    times = [e.t for e in events]
    assert times == sorted(times)
    assert not times or 0 <= times[0]
    assert not times or times[-1] <= clock.elapsed * (1 + MAX_DRIFT) + MAX_AHEAD + 0.01
    assert any(isinstance(e, ev.Lifted) and e.square == chess.E2 for e in events[-2:])
    garbage = b"".join(x for x in script if isinstance(x, bytes))
    if b"\x00" in garbage.strip(b"\x00"):  # a delimited run of garbage: dropped, counted
        assert link.stats.dropped + link._decoder.frames >= 1
    if link.board is not None:
        assert _raw_controls(link.board.board_id) == []


@pytest.mark.parametrize("text, words", [
    ('{"t": 0, "ev": "start", "fen": "bad fen"}\n', ":line 1: bad FEN 'bad fen'"),
    (None, "cannot read /dev/zero: not a regular file"),
])
def test_the_emulator_refuses_a_log_it_cannot_play_in_one_line(tmp_path, text, words) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    log = tmp_path / "bad.jsonl"
    if text is not None:
        log.write_text(text)
    done = subprocess.run([sys.executable, "-m", "firmware_bridge.emulator", "--link",
                           str(tmp_path / "link"), "--log",
                           str(log) if text is not None else "/dev/zero"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and words in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "link").exists()
