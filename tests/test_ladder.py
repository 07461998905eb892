"""The seed-002 club ladder: the points table, band by band, and sequences checked by hand.

The seed's lines (shared/seeds/002_e9f4614d5dbe9a99.txt, 记分方法), quoted where used:

    和局：双方现有积分相差10分以内，无积分；相差10-99分，则分低方得(10+差分/10)/2；相差100分以上，分低方得差分/4。
    低级别方赢：双方现有积分相差100分以上，则得差分/2；相差10-99分，得10+差分/10；相差10分以内，得10分。
    高级别方赢：双方现有积分相差200分以上，无积分；相差100-199分，得2分；相差10-99分，得10-差分/12.5；相差10分以内，得10分。
    （注意：输方扣分等于赢方得分）

Every expected number below was worked out by hand from those lines, not by the code.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl.ladder import (
    DRAW,
    RESULTS,
    GameResult,
    Ladder,
    LadderError,
    exchange,
    favourite_gain,
    level,
    ranks,
    upset_gain,
)

D = Decimal


def standings_of(ladder: Ladder) -> list[tuple[str, str, int | None, int]]:
    return [(row.player, f"{row.points:.2f}", row.level, row.games) for row in ladder.standings()]


def test_a_club_night_from_zero_checked_by_hand() -> None:
    ladder = Ladder()
    games = [
        # 1. 0 v 0, d = 0, equal points; both win rows: "相差10分以内，得10分".
        (GameResult("Ann", "Bob", "1-0"), "+10.00 / -10.00"),
        # 2. 0 v 0 drawn: "和局：双方现有积分相差10分以内，无积分".
        (GameResult("Cat", "Dan", DRAW), "0.00 / 0.00"),
        # 3. Ann 10 beats Cat 0, d = 10 (the first point of "10-99"):
        #    "高级别方赢：…相差10-99分，得10-差分/12.5" = 10 - 10/12.5 = 9.2.
        (GameResult("Ann", "Cat", "1-0"), "+9.20 / -9.20"),
        # 4. Bob -10 beats Ann 19.2, d = 29.2: "低级别方赢：…相差10-99分，得10+差分/10" = 12.92.
        (GameResult("Ann", "Bob", "0-1"), "-12.92 / +12.92"),
        # 5. Dan 0 v Bob 2.92 drawn, d = 2.92: "相差10分以内，无积分".
        (GameResult("Dan", "Bob", DRAW), "0.00 / 0.00"),
        # 6. Dan 0 v Cat -9.2 drawn, d = 9.2, just inside "10分以内": nothing.
        (GameResult("Dan", "Cat", DRAW), "0.00 / 0.00"),
        # 7. Ann 6.28 beats Cat -9.2, d = 15.48: 10 - 15.48/12.5 = 8.7616, kept as 8.76.
        (GameResult("Ann", "Cat", "1-0"), "+8.76 / -8.76"),
        # 8. Cat -17.96 v Ann 15.04 drawn, d = 33: "相差10-99分，则分低方得(10+差分/10)/2"
        #    = (10 + 3.3)/2 = 6.65 to Cat; the seed takes nothing from the higher side.
        (GameResult("Cat", "Ann", DRAW), "+6.65 / 0.00"),
        # 9. Bob 2.92 (higher) beats Dan 0, d = 2.92: "高级别方赢：…相差10分以内，得10分".
        (GameResult("Dan", "Bob", "0-1"), "-10.00 / +10.00"),
        # 10. Cat -11.31 (lower) beats Dan -10, d = 1.31: "低级别方赢：…相差10分以内，得10分".
        (GameResult("Dan", "Cat", "0-1"), "-10.00 / +10.00"),
    ]
    for game, expected in games:
        assert ladder.play(game).text() == expected, game
    assert standings_of(ladder) == [
        ("Ann", "15.04", None, 5),
        ("Bob", "12.92", None, 4),
        ("Cat", "-1.31", None, 6),
        ("Dan", "-20.00", None, 5),
    ]
    # Decisive games move nothing in total; the one paying draw added its 6.65.
    assert sum(row.points for row in ladder.standings()) == D("6.65")


def test_a_carried_over_ladder_across_the_far_bands_checked_by_hand() -> None:
    ladder = Ladder({"Eve": 250, "Fay": 100, "Gus": 50, "Hal": 0, "Ivy": "2999.90", "Jo": 2995})
    games = [
        # Eve 250 beats Fay 100, d = 150: "高级别方赢：…相差100-199分，得2分". Fay falls to 98.
        (GameResult("Eve", "Fay", "1-0"), "+2.00 / -2.00"),
        # Gus 50 beats Eve 252, d = 202: "低级别方赢：双方现有积分相差100分以上，则得差分/2" = 101.
        (GameResult("Gus", "Eve", "1-0"), "+101.00 / -101.00"),
        # Hal 0 v Eve 151 drawn, d = 151: "相差100分以上，分低方得差分/4" = 37.75.
        (GameResult("Hal", "Eve", DRAW), "+37.75 / 0.00"),
        # Gus 151 beats Hal 37.75, d = 113.25: "相差100-199分，得2分".
        (GameResult("Gus", "Hal", "1-0"), "+2.00 / -2.00"),
        # Ivy 2999.9 beats Hal 35.75, d = 2964.15: "高级别方赢：双方现有积分相差200分以上，无积分".
        (GameResult("Ivy", "Hal", "1-0"), "0.00 / 0.00"),
        # Fay 98 v Ivy 2999.9 drawn, d = 2901.9: 2901.9/4 = 725.475, kept as 725.48 (halves up).
        (GameResult("Fay", "Ivy", DRAW), "+725.48 / 0.00"),
        # Ivy 2999.9 beats Jo 2995, d = 4.9: "相差10分以内，得10分"; Ivy reaches 3009.9.
        (GameResult("Ivy", "Jo", "1-0"), "+10.00 / -10.00"),
    ]
    for game, expected in games:
        assert ladder.play(game).text() == expected, game
    assert standings_of(ladder) == [
        ("Ivy", "3009.90", 1, 3),  # 3000 and above: level 1
        ("Jo", "2985.00", 2, 1),  # 2900-2999: level 2
        ("Fay", "823.48", 23, 2),  # 800-899: level 23
        ("Gus", "153.00", 30, 2),  # 100-199: level 30
        ("Eve", "151.00", 30, 3),
        ("Hal", "35.75", None, 3),  # below 100: no level
    ]


# (difference, gain) at both sides of every edge, each worked by hand.
DRAW_BANDS = [
    (D("0"), D("0")),
    (D("9.99"), D("0")),  # "10分以内，无积分"
    (D("10"), D("5.50")),  # (10 + 1)/2
    (D("10.90"), D("5.55")),  # (10 + 1.09)/2 = 5.545, halves up
    (D("99"), D("9.95")),  # (10 + 9.9)/2
    (D("99.99"), D("10.00")),  # (10 + 9.999)/2 = 9.9995: "10-99" runs up to 100
    (D("100"), D("25.00")),  # "100分以上": 100/4
    (D("1000.02"), D("250.01")),  # 250.005, halves up
]
UPSET_BANDS = [  # d = 0 has no lower side: test_equal_points
    (D("0.01"), D("10")),
    (D("9.99"), D("10")),  # "10分以内，得10分"
    (D("10"), D("11.00")),  # 10 + 10/10
    (D("10.05"), D("11.01")),  # 10 + 1.005, halves up
    (D("99.99"), D("20.00")),  # 10 + 9.999
    (D("100"), D("50.00")),  # "100分以上，则得差分/2"
    (D("3000.01"), D("1500.01")),  # 1500.005, halves up
]
FAVOURITE_BANDS = [
    (D("0"), D("10")),
    (D("9.99"), D("10")),  # "10分以内，得10分"
    (D("10"), D("9.20")),  # 10 - 10/12.5
    (D("10.05"), D("9.20")),  # 10 - 0.804 = 9.196
    (D("99"), D("2.08")),  # 10 - 7.92
    (D("99.99"), D("2.00")),  # 10 - 7.9992 = 2.0008
    (D("100"), D("2")),  # "100-199分，得2分"
    (D("199.99"), D("2")),
    (D("200"), D("0")),  # "200分以上，无积分"
    (D("5000"), D("0")),
]


@pytest.mark.parametrize("d, gain", DRAW_BANDS)
@pytest.mark.parametrize("lower_is_white", [True, False])
def test_draw_bands(d: Decimal, gain: Decimal, lower_is_white: bool) -> None:
    lower, higher = D("-40.00"), D("-40.00") + d  # below zero too: the seed sets no floor
    if lower_is_white:
        moved = exchange(lower, higher, DRAW)
        assert (moved.white_change, moved.black_change) == (gain, 0)
    else:
        moved = exchange(higher, lower, DRAW)
        assert (moved.white_change, moved.black_change) == (0, gain)


@pytest.mark.parametrize("d, gain", UPSET_BANDS)
@pytest.mark.parametrize("winner_is_white", [True, False])
def test_lower_side_wins_bands(d: Decimal, gain: Decimal, winner_is_white: bool) -> None:
    winner, loser = D("120.50"), D("120.50") + d
    if winner_is_white:
        moved = exchange(winner, loser, "1-0")
        assert (moved.white_change, moved.black_change) == (gain, -gain)
    else:
        moved = exchange(loser, winner, "0-1")
        assert (moved.white_change, moved.black_change) == (-gain, gain)
    assert moved.rule.startswith("lower side wins")


@pytest.mark.parametrize("d, gain", FAVOURITE_BANDS)
@pytest.mark.parametrize("winner_is_white", [True, False])
def test_higher_side_wins_bands(d: Decimal, gain: Decimal, winner_is_white: bool) -> None:
    loser, winner = D("7.25"), D("7.25") + d
    if winner_is_white:
        moved = exchange(winner, loser, "1-0")
        assert (moved.white_change, moved.black_change) == (gain, -gain)
    else:
        moved = exchange(loser, winner, "0-1")
        assert (moved.white_change, moved.black_change) == (-gain, gain)


def test_equal_points() -> None:
    # Neither side is lower, and at d = 0 it cannot matter: both win rows say
    # "相差10分以内，得10分", and a draw there gives "无积分".
    assert upset_gain(D(0)).gain == favourite_gain(D(0)).gain == 10
    for points in (D("0"), D("-35.50"), D("1234.56")):
        assert exchange(points, points, "1-0").text() == "+10.00 / -10.00"
        assert exchange(points, points, "0-1").text() == "-10.00 / +10.00"
        assert exchange(points, points, DRAW).text() == "0.00 / 0.00"


@pytest.mark.parametrize("points, expected", [
    (D("-250"), None), (D("0"), None), (D("99.99"), None),  # 无级别
    (D("100"), 30), (D("199.99"), 30), (D("200"), 29), (D("299.99"), 29),
    (D("1500"), 16), (D("2899.99"), 3), (D("2900"), 2), (D("2999.99"), 2),
    (D("3000"), 1), (D("3100"), 1), (D("99999"), 1),
])
def test_levels(points: Decimal, expected: int | None) -> None:
    assert level(points) == expected


@pytest.mark.parametrize("white, black, result, message", [
    ("Ann", "", "1-0", "both players' names"),
    ("?", "Bob", "1-0", "both players' names"),
    ("Ann", "  Ann ", "0-1", "on both sides"),
    ("Ann", "Bob", "*", "is not one of"),
    ("Ann", "Bob", "1-1", "is not one of"),
])
def test_games_the_ladder_cannot_rate(white: str, black: str, result: str, message: str) -> None:
    with pytest.raises(LadderError, match=message):
        GameResult(white, black, result)


def test_names_are_keyed_with_their_spaces_collapsed() -> None:
    ladder = Ladder().play_all([GameResult("Morphy,  Paul", "Anderssen, Adolf ", "1-0"),
                                GameResult(" Morphy, Paul", "Anderssen,\tAdolf", "1-0")])
    assert [(row.player, row.games) for row in ladder.standings()] == [
        ("Morphy, Paul", 2), ("Anderssen, Adolf", 2)]


def test_places_are_shared_by_equal_points() -> None:
    ladder = Ladder({"A": 10, "B": 10, "C": 5, "D": 5, "E": 1})
    assert [row.player for row in ladder.standings()] == ["A", "B", "C", "D", "E"]
    assert ranks(ladder.standings()) == [1, 1, 3, 3, 5]


def test_bad_starting_points_are_refused() -> None:
    with pytest.raises(LadderError, match="not a number"):
        Ladder({"A": "lots"})
    with pytest.raises(LadderError, match="not a number"):
        Ladder({"A": "NaN"})
    # more digits than a hundredth can be kept to (the decimal context holds 28)
    for huge in ("1e40", D("-1E+30"), 10**30):
        with pytest.raises(LadderError, match="not a number"):
            Ladder({"A": huge})
        with pytest.raises(LadderError, match="not a number"):
            exchange(huge, D(0), "1-0")  # type: ignore[arg-type]


# -- properties over any sequence of games ---------------------------------------------

CENT = Fraction(1, 100)


def oracle_gain(result: str, winner_or_lower: Fraction, other: Fraction) -> Fraction:
    """The seed's table again, in exact fractions, halves rounded up by hand; what the
    winner (or, in a draw, the lower side) gains."""
    d = abs(winner_or_lower - other)
    if result == DRAW:
        raw = Fraction(0) if d < 10 else (10 + d / 10) / 2 if d < 100 else d / 4
    elif winner_or_lower < other:
        raw = Fraction(10) if d < 10 else 10 + d / 10 if d < 100 else d / 2
    else:
        raw = (Fraction(10) if d < 10 else 10 - d / Fraction(25, 2) if d < 100
               else Fraction(2) if d < 200 else Fraction(0))
    hundredths = raw / CENT
    whole = hundredths.numerator // hundredths.denominator
    return (whole + (1 if hundredths - whole >= Fraction(1, 2) else 0)) * CENT


players = st.sampled_from(["Ann", "Bob", "Cat", "Dan", "Eve", "王小明"])
points = st.decimals(min_value=-5000, max_value=5000, places=2, allow_nan=False,
                     allow_infinity=False)
games = st.lists(st.tuples(players, players, st.sampled_from(RESULTS))
                 .filter(lambda g: g[0] != g[1]), max_size=60)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(start=st.dictionaries(players, points), played=games)
def test_every_game_moves_points_as_the_seed_says(
        start: dict[str, Decimal], played: list[tuple[str, str, str]]) -> None:
    ladder = Ladder(start)
    total = sum(ladder.points(name) for name in start)
    draw_gains = D(0)
    for white, black, result in played:
        w, b = ladder.points(white), ladder.points(black)
        moved = ladder.play(GameResult(white, black, result))
        assert (moved.white_before, moved.black_before) == (w, b)
        if result == DRAW:
            # Only the lower side gains; the higher side (or both, when equal) keeps its points.
            gain, kept = ((moved.white_change, moved.black_change) if w < b
                          else (moved.black_change, moved.white_change))
            assert kept == 0 and gain >= 0
            if w == b:
                assert gain == 0
            expected = oracle_gain(result, Fraction(min(w, b)), Fraction(max(w, b)))
            draw_gains += gain
        else:
            # "输方扣分等于赢方得分": the loser loses exactly what the winner gains.
            assert moved.white_change + moved.black_change == 0
            winner, loser = (w, b) if result == "1-0" else (b, w)
            gain = moved.white_change if result == "1-0" else moved.black_change
            assert gain >= 0
            expected = oracle_gain(result, Fraction(winner), Fraction(loser))
        assert Fraction(gain) == expected
    after = ladder.standings()
    assert sum(row.points for row in after) == total + draw_gains
    assert sum(row.games for row in after) == 2 * len(played)
    for row in after:
        assert row.points == row.points.quantize(D("0.01"))  # hundredths, never more
        assert row.level == level(row.points)


@given(d=st.decimals(min_value=0, max_value=10000, places=2))
def test_an_upset_never_earns_less_than_the_favourite_would(d: Decimal) -> None:
    upset, favourite = upset_gain(d).gain, favourite_gain(d).gain
    assert upset >= 10 >= favourite >= 0
    assert (upset > favourite) == (d >= 10)


@given(a=points, b=points, result=st.sampled_from(RESULTS))
def test_colours_do_not_matter(a: Decimal, b: Decimal, result: str) -> None:
    mirrored = {"1-0": "0-1", "0-1": "1-0", DRAW: DRAW}[result]
    one, other = exchange(a, b, result), exchange(b, a, mirrored)
    assert (one.white_change, one.black_change) == (other.black_change, other.white_change)


def test_no_points_moved_is_a_plain_zero() -> None:
    # "200分以上，无积分": nothing moves, and nothing shows as -0.00 (or -0.0 in JSON).
    moved = exchange(D("300"), D("0"), "1-0")
    assert (str(moved.white_change), str(moved.black_change)) == ("0.00", "0.00")
    assert moved.text() == "0.00 / 0.00"
    assert str(Ladder({"A": "-0"}).points("A")) == "0.00"
