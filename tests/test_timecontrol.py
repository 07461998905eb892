"""TimeControl: PGN TimeControl parsing, the delay extension, canonical form, categories."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from board_ctl.core.timecontrol import Period, TimeControl, TimeControlError
from board_ctl.errors import BoardCtlError

P = Period


@pytest.mark.parametrize("text, expected", [
    ("?", TimeControl(unknown=True)),
    ("-", TimeControl()),
    ("300", TimeControl((P(300),))),
    ("4500+60", TimeControl((P(4500, increment=60),))),
    ("40/9000", TimeControl((P(9000, moves=40),))),
    ("*180", TimeControl(sandclock=180)),
    ("300d5", TimeControl((P(300, simple_delay=5),))),
    ("300b5", TimeControl((P(300, bronstein_delay=5),))),
    ("40/5400+30:1800+30", TimeControl((P(5400, moves=40, increment=30), P(1800, increment=30)))),
    ("40/7200:20/3600", TimeControl((P(7200, moves=40), P(3600, moves=20)))),
    ("40/6000d30:20/3000b10:900+30", TimeControl((
        P(6000, moves=40, simple_delay=30),
        P(3000, moves=20, bronstein_delay=10),
        P(900, increment=30),
    ))),
])
def test_parse_and_canonical_round_trip(text: str, expected: TimeControl) -> None:
    tc = TimeControl.parse(text)
    assert tc == expected
    assert str(tc) == text


@pytest.mark.parametrize("text, canonical", [
    ("300+0", "300"),  # lichess writes "+0"
    ("  5400+30 ", "5400+30"),
    ("0300+05", "300+5"),
    ("300d0", "300"),
    ("40/5400+0:1800+30", "40/5400:1800+30"),
])
def test_equivalent_forms_normalise(text: str, canonical: str) -> None:
    assert str(TimeControl.parse(text)) == canonical


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("   ", "empty"),
    ("abc", "expected [moves/]seconds"),
    ("300 +5", "expected [moves/]seconds"),
    ("300D5", "expected [moves/]seconds"),
    ("300+5d5", "expected [moves/]seconds"),
    ("300+", "expected [moves/]seconds"),
    ("40/", "expected [moves/]seconds"),
    ("/300", "expected [moves/]seconds"),
    ("-300", "expected [moves/]seconds"),
    ("300.5", "whole seconds"),
    ("300+0.5", "whole seconds"),
    ("0", "at least 1 second"),
    ("0+5", "at least 1 second"),
    ("0/300", "move count must be at least 1"),
    ("40/5400::1800", "period 2 is empty"),
    ("40/5400:", "period 2 is empty"),
    ("300:60", "period 2 '60' can never start: period 1 '300' has no move count"),
    ("*180:60", "sandclock cannot be combined"),
    ("40/5400:*60", "sandclock ('*') stands alone"),
    ("*", "sandclock is '*' and whole seconds"),
    ("*0", "at least 1 second"),
    ("*1.5", "sandclock is '*' and whole seconds"),
    ("３００", "expected [moves/]seconds"),  # full-width digits are not PGN
])
def test_parse_errors_are_precise(text: str, message: str) -> None:
    with pytest.raises(TimeControlError) as info:
        TimeControl.parse(text)
    assert message in str(info.value)
    assert info.value.text == text
    assert isinstance(info.value, ValueError) and isinstance(info.value, BoardCtlError)


def test_period_errors_name_the_period() -> None:
    with pytest.raises(TimeControlError, match=r"'40/5400\+30:1800\+3x': period 2 '1800\+3x'"):
        TimeControl.parse("40/5400+30:1800+3x")


@pytest.mark.parametrize("build, message", [
    (lambda: P(0), "at least 1 second"),
    (lambda: P(300, moves=0), "moves must be None or at least 1"),
    (lambda: P(300, increment=-1), "whole number of seconds"),
    (lambda: P(300, increment=5, simple_delay=5), "at most one"),
    (lambda: TimeControl((P(300), P(60))), "can never start"),
    (lambda: TimeControl((P(300),), sandclock=60), "not several"),
    (lambda: TimeControl(sandclock=0), "at least 1 second"),
])
def test_direct_construction_is_validated(build: object, message: str) -> None:
    with pytest.raises(TimeControlError, match=message):
        build()  # type: ignore[operator]


@pytest.mark.parametrize("text, category, profile", [
    ("60", "blitz", "blitz"),
    ("180+2", "blitz", "blitz"),  # 300
    ("600", "blitz", "blitz"),  # exactly 10 min is blitz
    ("601", "rapid", "rapid"),
    ("540+1", "blitz", "blitz"),  # 600
    ("540+2", "rapid", "rapid"),  # 660
    ("900+10", "rapid", "rapid"),  # 1500
    ("3599", "rapid", "rapid"),
    ("3540+1", "standard", "fide"),  # exactly 60 min is standard
    ("5400+30", "standard", "fide"),
    ("40/5400+30:1800+30", "standard", "fide"),
    ("40/600:20/60", "rapid", "rapid"),  # 600 + 60 (added after move 40)
    ("60/500:100", "blitz", "blitz"),  # the time added after move 60 is not for 60 moves
    ("300d5", "blitz", "blitz"),  # delays count like increments: 600
    ("300b6", "rapid", "rapid"),  # 660
    ("*180", "blitz", "blitz"),
    ("-", None, "casual"),
    ("?", None, "casual"),
])
def test_fide_category_by_time_for_sixty_moves(
    text: str, category: str | None, profile: str
) -> None:
    tc = TimeControl.parse(text)
    assert tc.fide_category == category
    assert tc.suggested_profile == profile


@pytest.mark.parametrize("text, move, period, added", [
    ("40/5400+30:1800+30", 1, "40/5400+30", 0),
    ("40/5400+30:1800+30", 39, "40/5400+30", 0),
    ("40/5400+30:1800+30", 40, "40/5400+30", 1800),
    ("40/5400+30:1800+30", 41, "1800+30", 0),
    ("40/5400+30:1800+30", 80, "1800+30", 0),
    ("40/7200:20/3600", 40, "40/7200", 3600),
    ("40/7200:20/3600", 60, "20/3600", 3600),  # the last period repeats
    ("40/7200:20/3600", 61, "20/3600", 0),
    ("40/7200:20/3600", 80, "20/3600", 3600),
    ("40/9000", 40, "40/9000", 9000),
    ("40/9000", 80, "40/9000", 9000),
    ("40/9000", 79, "40/9000", 0),
    ("300+2", 1000, "300+2", 0),
])
def test_periods_by_move_number(text: str, move: int, period: str, added: int) -> None:
    tc = TimeControl.parse(text)
    assert str(tc.period_for_move(move)) == period
    assert tc.seconds_added_after_move(move) == added


_bonus = st.sampled_from(["increment", "simple_delay", "bronstein_delay"])


@st.composite
def time_controls(draw: st.DrawFn) -> TimeControl:
    shape = draw(st.sampled_from(["periods", "periods", "sandclock", "untimed", "unknown"]))
    if shape == "sandclock":
        return TimeControl(sandclock=draw(st.integers(1, 10**6)))
    if shape != "periods":
        return TimeControl(unknown=shape == "unknown")
    count = draw(st.integers(1, 4))
    periods = []
    for index in range(count):
        last = index == count - 1
        moves = draw(st.one_of(st.none(), st.integers(1, 99))) if last else draw(st.integers(1, 99))
        bonus = {draw(_bonus): draw(st.integers(0, 120))}
        periods.append(Period(draw(st.integers(1, 10**5)), moves, **bonus))
    return TimeControl(tuple(periods))


@given(time_controls())
def test_every_time_control_round_trips(tc: TimeControl) -> None:
    assert TimeControl.parse(str(tc)) == tc
    assert str(TimeControl.parse(str(tc))) == str(tc)


@given(st.text(alphabet="0123456789/+:db*?-. x", max_size=20))
def test_parse_raises_only_time_control_errors(text: str) -> None:
    try:
        tc = TimeControl.parse(text)
    except TimeControlError:
        return
    assert TimeControl.parse(str(tc)) == tc


@pytest.mark.parametrize("text, field", [
    ("9" * 400, "period 1 '999"),  # the repro: once an OverflowError much later
    ("9" * 5000, "the period's time is at most 3599999 s"),  # (int() refuses 4,300 digits)
    ("3600000", "the period's time is at most 3599999 s"),
    ("1000/5400", "the move count is at most 999"),
    ("40/5400+3600000", "the increment is at most 3599999 s"),
    ("300d" + "9" * 400, "the delay is at most"),
    ("300b3600000", "the delay is at most"),
    ("40/5400:20/" + "9" * 400, "period 2"),
    ("*" + "9" * 400, "the sandclock's time is at most"),
    (":".join(["1/60"] * 21), "at most 20 periods"),
])
def test_absurd_values_are_refused_naming_the_field(text: str, field: str) -> None:
    with pytest.raises(TimeControlError) as info:
        TimeControl.parse(text)
    message = str(info.value)
    assert field in message and "\n" not in message and len(message) < 300
    assert info.value.text == text


@pytest.mark.parametrize("text", ["3599999", "999/3599999+3599999", "*3599999",
                                  ":".join(["1/60"] * 20), "00000000000000300+5"])
def test_the_largest_values_a_clock_shows_are_accepted(text: str) -> None:
    tc = TimeControl.parse(text)
    assert TimeControl.parse(str(tc)) == tc


@pytest.mark.parametrize("build", [
    lambda: P(3_600_000),
    lambda: P(300, increment=3_600_000),
    lambda: P(300, moves=1000),
    lambda: TimeControl(sandclock=10**400),
    lambda: TimeControl(tuple(P(60, moves=1) for _ in range(21))),
])
def test_direct_construction_is_bounded_too(build: object) -> None:
    with pytest.raises(TimeControlError, match="at most"):
        build()  # type: ignore[operator]
