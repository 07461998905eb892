"""Perpetual check ("長將和"), a draw in the seed handbooks: "one side checks the other's
king continuously and the other cannot avoid it" (000 ① and ④, 001 answers 1 and 3, 002).
The texts give no procedure; the board upholds a claim when both halves are shown:

1. **the checking has happened**: the position the claim is judged on has stood before,
   with the same side to move, and every move of one side (the checker) since then gave
   check: a repetition reached with every move of one side a check;
2. **the other side cannot avoid it**: from that position the checker can go on giving
   check for ever, whatever the other side plays. Proven on the graph of the positions
   reachable when the checker plays only checking moves and the defender any legal move:
   the largest set of them where every checker's position has a check leading back into
   the set and every defender's reply does too (a mate counts: the checks did not stop).
   The positions are finite, so "for ever" is a cycle inside that set.

The search looks at no more than SEARCH_LIMIT positions (a count, not a time: a replay
decides the same way); past it the question is left open (`None`) and the board refers
the claim to the arbiter instead of judging it.
"""

from __future__ import annotations

import chess
import chess.polyglot

SEARCH_LIMIT = 4000  # positions the escape search may look at before it gives up
MAX_LINE = 200  # plies a line of the search may reach before it gives up


def checking_side(board: chess.Board) -> list[chess.Color]:
    """The sides every one of whose moves gave check since the position on `board` last
    stood (same side to move, same rights): condition 1. Empty when the position is new,
    or no side checked with every move in between."""
    key = chess.polyglot.zobrist_hash(board)
    probe = board.copy()
    always = {chess.WHITE: True, chess.BLACK: True}
    while probe.move_stack:
        gave_check = probe.is_check()  # (the move just undone checked the side to move)
        move = probe.pop()
        always[probe.turn] &= gave_check
        if probe.is_zeroing(move) or probe.castling_rights != board.castling_rights:
            return []  # (no position before an irreversible move stands again)
        if chess.polyglot.zobrist_hash(probe) == key:
            return [side for side in chess.COLORS if always[side]]
    return []


class _Undecided(Exception):
    """The escape search ran past its bound."""


def cannot_escape(board: chess.Board, checker: chess.Color,
                  limit: int = SEARCH_LIMIT) -> bool | None:
    """Condition 2: whether `checker` can give check for ever from `board`, whatever his
    opponent plays; None when the search looked at `limit` positions without knowing.

    A search of the checker's strategies: a checker's position holds if one of his checks
    leads to a position that holds, a defender's if all his replies do (a mate too), and a
    position met again on the line being searched holds (the checks have come round: the
    checker can repeat them for ever). A position found not to hold is remembered: the
    defender escapes from it whatever was assumed above it."""
    budget = [limit]
    line: set[int] = set()  # the positions on the line being searched
    escapes: set[int] = set()  # positions from which the defender escapes

    def holds(position: chess.Board, depth: int) -> bool:
        key = chess.polyglot.zobrist_hash(position)
        if key in line:
            return True
        if key in escapes:
            return False
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_LINE:
            raise _Undecided
        line.add(key)
        try:
            if position.turn == checker:
                result = any(_after(position, move, holds, depth)
                             for move in _checks(position, line))
            else:
                result = all(_after(position, move, holds, depth)
                             for move in _replies(position))
        finally:
            line.discard(key)
        if not result:
            escapes.add(key)
        return result

    try:
        return holds(board.copy(stack=False), 0)
    except _Undecided:
        return None


def _after(position: chess.Board, move: chess.Move, holds, depth: int) -> bool:  # type: ignore[no-untyped-def]
    position.push(move)
    try:
        return bool(holds(position, depth + 1))
    finally:
        position.pop()


def _checks(position: chess.Board, line: set[int]) -> list[chess.Move]:
    """The checker's checking moves, those that come back to a position of the line
    first (they close the proof at once)."""
    checks = [move for move in position.legal_moves if position.gives_check(move)]
    back = []
    for move in checks:
        position.push(move)
        if chess.polyglot.zobrist_hash(position) in line:
            back.append(move)
        position.pop()
    return back + [move for move in checks if move not in back]


def _replies(position: chess.Board) -> list[chess.Move]:
    """The defender's replies, the likeliest escapes first: captures (of the checking
    piece, often), then king moves, then the rest (interpositions)."""
    moves = list(position.legal_moves)
    king = position.king(position.turn)
    return sorted(moves, key=lambda m: (not position.is_capture(m), m.from_square != king))


def perpetual_check(board: chess.Board, limit: int = SEARCH_LIMIT) -> bool | None:
    """Whether a claim of perpetual check holds on `board` (its history included): True
    or False, or None when the escape search ran past `limit` for a side that checked
    throughout (the board cannot say; the arbiter decides)."""
    undecided = False
    for checker in checking_side(board):
        proven = cannot_escape(board, checker, limit)
        if proven:
            return True
        undecided |= proven is None
    return None if undecided else False
