"""Helpers for the app-port tests: what an app may honestly be shown between two positions
of a game, and a check of a whole timeline of positions an app read.

An app reads a sequence of piece placements. Each must be one of the game's positions,
or a move in progress: every square as before the move, as after it, or empty (a piece
in hand). While a scripted violation is staged (an illegal move, a knocked piece) a
piece may also stand where neither position has it, provided it is one of the pieces
missing from their own squares: a piece shown as it lies, never one made up. After
every move, the app must have read the game's position itself; only a move completed
in the same moment as the next one began (no clock: the opponent's lift) may be seen
as the start of that next move instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import chess


def squares_of(placement: str) -> dict[chess.Square, str]:
    board = chess.Board(None)
    board.set_board_fen(placement)
    return {sq: piece.symbol() for sq, piece in board.piece_map().items()}


def honest(shown: dict[chess.Square, str], before: dict[chess.Square, str],
           after: dict[chess.Square, str]) -> bool:
    """Every square as before the move, as after it, or empty."""
    return all(shown[sq] in (before.get(sq), after.get(sq)) for sq in shown)


def as_it_lies(shown: dict[chess.Square, str], before: dict[chess.Square, str],
               after: dict[chess.Square, str]) -> bool:
    """Honest, but for pieces standing off the squares both positions give them, each
    one of the pieces missing from its own square (a piece displaced, shown where it
    lies)."""
    strays = Counter(p for sq, p in shown.items() if p not in (before.get(sq), after.get(sq)))
    if not strays:
        return True
    missing = Counter(p for sq, p in before.items() if shown.get(sq) != p)
    missing |= Counter(p for sq, p in after.items() if shown.get(sq) != p)
    return all(missing[p] >= n for p, n in strays.items())


@dataclass
class TimelineReport:
    seen_exactly: set[int] = field(default_factory=set)  # game positions read as such
    skipped: list[int] = field(default_factory=list)  # positions only seen as the next begun
    final: str = ""


def check_timeline(placements: Sequence[str], positions: Sequence[str], *,
                   violation_plies: Collection[int] = (), may_skip: Collection[int] = (),
                   last_unfinished: bool = False, where: str = "") -> TimelineReport:
    """Check what an app read against the game's positions (FEN placements, the start
    first). `violation_plies`: indexes k of moves (positions[k] -> positions[k + 1])
    during which a piece may be shown where it lies; `may_skip`: positions that may be
    seen only as the next move begun (see the module's note). AssertionError names the
    first placement that is neither."""
    games = [squares_of(p) for p in positions]
    report = TimelineReport()
    k = 0
    for i, placement in enumerate(placements):
        shown = squares_of(placement)
        ahead = range(k, min(k + 4, len(games)))  # this position or a few moves on
        found = next((j for j in ahead if shown == games[j]), None)
        if found is not None:
            report.seen_exactly.add(found)
        else:
            found = next((j for j in ahead if j + 1 < len(games) and (
                as_it_lies if j in violation_plies else honest)(
                    shown, games[j], games[j + 1])), None)
        if found is None:
            context = placements[max(0, i - 3):i + 1]
            raise AssertionError(
                f"{where}: read {placement!r} after position {k} ({positions[k]}; next "
                f"{positions[k + 1] if k + 1 < len(positions) else 'none'}): neither a "
                f"position of the game nor a move in progress; the reads before: {context}")
        report.skipped += [j for j in range(k + 1, found + 1) if j not in report.seen_exactly]
        k = found
    report.final = placements[-1] if placements else ""
    if last_unfinished and k == len(games) - 2:
        assert honest(squares_of(report.final), games[-2], games[-1]), (
            f"{where}: the last read {report.final!r} is not the last move in progress")
        return report
    assert k == len(games) - 1, (
        f"{where}: the app's reads reached position {k} of {len(games) - 1}; last read "
        f"{report.final!r}, the game ends {positions[-1]!r}")
    assert report.final == positions[-1], (
        f"{where}: the app's last read {report.final!r} is not the game's final "
        f"position {positions[-1]!r}")
    unexpected = [s for s in report.skipped if s not in may_skip]
    assert not unexpected, (f"{where}: positions {unexpected} were never read as such "
                            f"(only as the next move begun)")
    return report


def positions_of(start_fen: str, moves: Sequence[chess.Move]) -> list[str]:
    board = chess.Board(start_fen)
    out = [board.board_fen()]
    for move in moves:
        board.push(move)
        out.append(board.board_fen())
    return out


def skippable(start_fen: str, moves: Sequence[chess.Move]) -> set[int]:
    """Positions an app may see only as the next move begun when nothing completes a
    move before the opponent starts: after a promotion (its square reads empty until
    then) or a capture (a swap leaves its square occupied throughout)."""
    board = chess.Board(start_fen)
    out = set()
    for k, move in enumerate(moves, start=1):
        if move.promotion or board.is_capture(move):
            out.add(k)
        board.push(move)
    return out
