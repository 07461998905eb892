"""The club ladder of seed 002: levels, points, and the points each result moves.

The seed (the project's seed document 002, 记分方法; docs/ladder.md quotes it) in short,
d being the difference between the two players' points before the game:

                     d < 10    10 <= d < 100    100 <= d < 200    d >= 200
    draw              0         (10 + d/10)/2    d/4               d/4     to the lower side
    lower side wins   10        10 + d/10        d/2               d/2
    higher side wins  10        10 - d/12.5      2                 0

and in a decisive game the loser loses what the winner gains. docs/ladder.md gives the
seed's own words and every choice made where it is silent. Pure: results in, standings
out, no I/O; points are Decimals kept to the hundredth.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, NamedTuple

from board_ctl.errors import BoardCtlError

WHITE_WINS, BLACK_WINS, DRAW = "1-0", "0-1", "1/2-1/2"
RESULTS = (WHITE_WINS, BLACK_WINS, DRAW)

CENT = Decimal("0.01")
ZERO = Decimal("0.00")
POINTS_PER_LEVEL = 100  # 每个级别需要积累100分
LOWEST_LEVEL = 30  # 30级, reached at 100 points; below it 无级别 (no level)
HIGHEST_LEVEL = 1  # 1级, from 3000 points on

# The bands of the difference. The seed writes them in whole points ("10分以内",
# "10-99分", "100分以上", "100-199分", "200分以上"); fractions of a point fall in the band
# that runs up to the next one, so the bands leave no gap (99.5 is in "10-99").
NEAR = Decimal(10)
FAR = Decimal(100)
VERY_FAR = Decimal(200)


class LadderError(BoardCtlError, ValueError):
    """A game the ladder cannot rate: no names, the same player twice, or no result."""


def cents(value: Decimal) -> Decimal:
    """To the hundredth, halves up (四舍五入, what a club treasurer would do by hand)."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def as_points(value: Decimal | int | str) -> Decimal:
    try:
        points = Decimal(value)
        if not points.is_finite():
            raise ValueError
        # To the hundredth: a number with more digits than the context holds (1e40) is
        # refused by quantize itself.
        return cents(points) + ZERO  # + 0.00 turns a carried-over -0 into 0.00
    except (InvalidOperation, TypeError, ValueError):
        raise LadderError(f"not a number of points: {value!r}") from None


def level(points: Decimal) -> int | None:
    """30 for 100-199.99 points, 29 for 200-299.99, ... 1 from 3000 on; None below 100."""
    if points < POINTS_PER_LEVEL:
        return None
    steps = int(points / POINTS_PER_LEVEL)  # points >= 100 here, so this is the floor
    return max(HIGHEST_LEVEL, LOWEST_LEVEL + 1 - steps)


def level_name(points: Decimal) -> str:
    found = level(points)
    return "-" if found is None else str(found)


class Band(NamedTuple):
    """The line of the seed's table a game falls on: what the gaining side gains."""

    gain: Decimal
    rule: str


def draw_gain(d: Decimal) -> Band:
    """和局: what the side with fewer points gains."""
    if d < NEAR:
        return Band(ZERO, "draw, d < 10: no points")
    if d < FAR:
        return Band(cents((10 + d / 10) / 2),
                    "draw, 10 <= d < 100: the lower side gains (10 + d/10)/2")
    return Band(cents(d / 4), "draw, d >= 100: the lower side gains d/4")


def upset_gain(d: Decimal) -> Band:
    """低级别方赢: what the side with fewer points gains by winning."""
    if d < NEAR:
        return Band(cents(Decimal(10)), "lower side wins, d < 10: 10")
    if d < FAR:
        return Band(cents(10 + d / 10), "lower side wins, 10 <= d < 100: 10 + d/10")
    return Band(cents(d / 2), "lower side wins, d >= 100: d/2")


def favourite_gain(d: Decimal) -> Band:
    """高级别方赢: what the side with more points gains by winning."""
    if d < NEAR:
        return Band(cents(Decimal(10)), "higher side wins, d < 10: 10")
    if d < FAR:
        return Band(cents(10 - d / Decimal("12.5")),
                    "higher side wins, 10 <= d < 100: 10 - d/12.5")
    if d < VERY_FAR:
        return Band(cents(Decimal(2)), "higher side wins, 100 <= d < 200: 2")
    return Band(ZERO, "higher side wins, d >= 200: no points")


def signed(value: Decimal) -> str:
    """+12.50, -12.50, and 0.00 for no change."""
    return f"{value:+.2f}" if value else "0.00"


@dataclass(frozen=True)
class Exchange:
    """What one game moved: each side's points before it and its change (negative: lost)."""

    result: str
    white_before: Decimal
    black_before: Decimal
    white_change: Decimal
    black_change: Decimal
    rule: str

    @property
    def difference(self) -> Decimal:
        return abs(self.white_before - self.black_before)

    @property
    def white_after(self) -> Decimal:
        return self.white_before + self.white_change

    @property
    def black_after(self) -> Decimal:
        return self.black_before + self.black_change

    def text(self) -> str:
        """White's change / Black's change, as a station shows it: "+12.92 / -12.92"."""
        return f"{signed(self.white_change)} / {signed(self.black_change)}"


def exchange(white_points: Decimal, black_points: Decimal, result: str) -> Exchange:
    """The points a result moves, from both players' points before the game."""
    if result not in RESULTS:
        raise LadderError(f"result {result!r} is not one of {', '.join(RESULTS)}")
    white_points, black_points = as_points(white_points), as_points(black_points)
    d = abs(white_points - black_points)
    if result == DRAW:
        # Only the lower side is named: "分低方得". The zero-sum note of the seed speaks
        # of a loser and a winner (输方扣分等于赢方得分), and a draw has neither, so the
        # higher side keeps its points.
        band = draw_gain(d)
        if white_points < black_points:
            return Exchange(result, white_points, black_points, band.gain, ZERO, band.rule)
        if black_points < white_points:
            return Exchange(result, white_points, black_points, ZERO, band.gain, band.rule)
        return Exchange(result, white_points, black_points, ZERO, ZERO, band.rule)
    white_won = result == WHITE_WINS
    winner, loser = (white_points, black_points) if white_won else (black_points, white_points)
    if winner < loser:
        band = upset_gain(d)
    else:
        # Equal points have no lower side; d = 0 is "within 10", where both win rows
        # give 10, so which row is read cannot change the number.
        band = favourite_gain(d)
        if winner == loser:
            band = Band(band.gain, "equal points, d < 10: 10")
    gain = band.gain
    if white_won:
        return Exchange(result, white_points, black_points, gain, -gain, band.rule)
    return Exchange(result, white_points, black_points, -gain, gain, band.rule)


def player_name(raw: str | None) -> str | None:
    """A name as the ladder keys it (inner spaces collapsed); None for none or PGN's "?"."""
    if raw is None:
        return None
    name = " ".join(raw.split())
    return None if name in ("", "?") else name


@dataclass(frozen=True)
class GameResult:
    white: str
    black: str
    result: str

    def __post_init__(self) -> None:
        white, black = player_name(self.white), player_name(self.black)
        if white is None or black is None:
            raise LadderError("a rated game needs both players' names")
        if white == black:
            raise LadderError(f"{white!r} is on both sides")
        object.__setattr__(self, "white", white)
        object.__setattr__(self, "black", black)
        if self.result not in RESULTS:
            raise LadderError(f"result {self.result!r} is not one of {', '.join(RESULTS)}")


@dataclass(frozen=True)
class Standing:
    player: str
    points: Decimal
    level: int | None
    games: int

    def to_json(self) -> dict[str, Any]:
        # A JSON number: the shortest float text of a hundredth is that hundredth.
        return {"player": self.player, "points": float(self.points), "level": self.level,
                "games": self.games}


@dataclass(frozen=True)
class RatedGame:
    number: int
    game: GameResult
    exchange: Exchange


class Ladder:
    """The ladder as results come in, in the order they are played."""

    def __init__(self, points: Mapping[str, Decimal | int | str] | None = None) -> None:
        # `points`: a ladder carried over from before (player -> points); else all start at 0.
        self._points: dict[str, Decimal] = {}
        self._games: dict[str, int] = {}
        self.history: list[RatedGame] = []
        for raw, value in (points or {}).items():
            name = player_name(raw)
            if name is None:
                raise LadderError(f"not a player's name: {raw!r}")
            self._points[name] = as_points(value)
            self._games[name] = 0

    def points(self, player: str) -> Decimal:
        return self._points.get(player_name(player) or player, ZERO)

    def play(self, game: GameResult) -> Exchange:
        white, black = game.white, game.black
        moved = exchange(self.points(white), self.points(black), game.result)
        self._points[white] = moved.white_after
        self._points[black] = moved.black_after
        for name in (white, black):
            self._games[name] = self._games.get(name, 0) + 1
        self.history.append(RatedGame(len(self.history) + 1, game, moved))
        return moved

    def play_all(self, games: Iterable[GameResult]) -> Ladder:
        for game in games:
            self.play(game)
        return self

    def standings(self) -> list[Standing]:
        """By points, most first; equal points by name."""
        rows = [Standing(name, points, level(points), self._games[name])
                for name, points in self._points.items()]
        return sorted(rows, key=lambda row: (-row.points, row.player))


def ranks(standings: list[Standing]) -> list[int]:
    """Places as in sport: equal points share a place, the next place is skipped."""
    places: list[int] = []
    for i, row in enumerate(standings):
        tied = i > 0 and row.points == standings[i - 1].points
        places.append(places[-1] if tied else i + 1)
    return places
