"""Perpetual check ("長將和"), a draw in the seed handbooks: "one side checks the other's
king continuously and the other cannot avoid it" (000 ① and ④, 001 answers 1 and 3, 002).
The texts give no procedure; the board upholds a claim when both halves are shown:

1. **the checking has happened**: the position the claim is judged on has stood before,
   with the same side to move, and every move of one side (the checker) since then gave
   check: a repetition reached with every move of one side a check;
2. **the other side cannot avoid it**: from that position the checker can go on giving
   check for ever, whatever the other side plays. That is: the position belongs to the
   largest set of positions in which every checker's position has a check leading back
   into the set and every defender's position has all its replies in it (a mate too: the
   checks did not stop). Positions are finite, so "for ever" is a cycle inside the set;
   `cannot_escape` searches for such a strategy of checks, or for the defender's way out.

The search looks at no more than SEARCH_LIMIT positions (a count, not a time: a replay
decides the same way, and a claim costs at most a fraction of a second); past it the
question is left open (`None`) and the board refers the claim to the arbiter instead of
judging it: what a careful arbiter does with a claim he cannot settle at the board.
"""

from __future__ import annotations

from collections.abc import Callable

import chess

from board_ctl.core.rules.endings import ALIGNED as _ALIGNED
from board_ctl.core.rules.endings import attacks_after

SEARCH_LIMIT = 1500  # positions the escape search may look at before it gives up
MAX_LINE = 200  # plies a line of the search may reach before it gives up
GRAPH_LIMIT = 1500  # positions of the whole graph, read when the search could not tell


Key = tuple[int, int, int, int, int, int, int, int, bool, int, int | None]


def _key(board: chess.Board) -> Key:
    """What makes two positions the same (FIDE 9.2.2, the older Laws' 10.10): the pieces,
    the side to move, the castling rights, an en passant capture that can be made."""
    ep = board.ep_square if board.ep_square is not None and board.has_legal_en_passant() \
        else None
    white, black = board.occupied_co
    return (board.pawns, board.knights, board.bishops, board.rooks, board.queens,
            board.kings, white, black, board.turn, board.clean_castling_rights(), ep)


def checking_side(board: chess.Board) -> list[chess.Color]:
    """The sides every one of whose moves gave check since the position on `board` last
    stood (same side to move, same rights): condition 1. Empty when the position is new,
    or no side checked with every move in between."""
    key = _key(board)
    probe = board.copy()
    always = {chess.WHITE: True, chess.BLACK: True}
    while probe.move_stack:
        gave_check = probe.is_check()  # (the move just undone checked the side to move)
        move = probe.pop()
        always[probe.turn] &= gave_check
        if probe.is_zeroing(move) or probe.castling_rights != board.castling_rights:
            return []  # (no position before an irreversible move stands again)
        if _key(probe) == key:
            return [side for side in chess.COLORS if always[side]]
    return []


class _OutOfBudget(Exception):
    """The escape search looked at all the positions it may."""


# A position's verdict in one round of the search: the checks go on for ever, the defender
# escapes, or not known within the round's depth.
HOLDS, ESCAPES, UNKNOWN = 1, 0, -1


def cannot_escape(board: chess.Board, checker: chess.Color,
                  limit: int = SEARCH_LIMIT) -> bool | None:
    """Condition 2: whether `checker` can give check for ever from `board`, whatever his
    opponent plays; None when the search looked at `limit` positions without knowing.

    A search of the checker's strategies: a checker's position holds if one of his checks
    leads to a position that holds, a defender's if all his replies do (a mate too), and a
    position met again on the line being searched holds (the checks have come round: the
    checker can repeat them for ever); the defender escapes from a checker's position
    with no check, and from any position all of whose checks (one of whose replies) lead
    to an escape. Searched to a depth that doubles each round (most perpetual checks come
    round within a few moves; most escapes are as near); an escape found is remembered
    from round to round (it was found whatever was assumed above it)."""
    budget = [limit]
    line: set[Key] = set()  # the positions on the line being searched
    escapes: set[Key] = set()  # positions from which the defender escapes
    depth_limit = [0]

    def verdict(position: chess.Board, depth: int) -> int:
        key = _key(position)
        if key in line:
            return HOLDS
        if key in escapes:
            return ESCAPES
        if depth >= depth_limit[0]:
            return UNKNOWN
        budget[0] -= 1
        if budget[0] < 0:
            raise _OutOfBudget
        line.add(key)
        try:
            if position.turn == checker:
                result = ESCAPES  # (any check that holds; none at all: an escape)
                for move in _checks(position, line):
                    found = _after(position, move, verdict, depth)
                    if found == HOLDS:
                        result = HOLDS
                        break
                    if found == UNKNOWN:
                        result = UNKNOWN
            else:
                result = HOLDS  # (every reply must hold; none at all: mate)
                for move in _replies(position):
                    found = _after(position, move, verdict, depth)
                    if found == ESCAPES:
                        result = ESCAPES
                        break
                    if found == UNKNOWN:
                        result = UNKNOWN
        finally:
            line.discard(key)
        if result == ESCAPES:
            escapes.add(key)
        return result

    root = board.copy(stack=False)
    depth = 4
    try:
        while True:
            depth_limit[0] = depth
            found = verdict(root, 0)
            if found != UNKNOWN:
                return found == HOLDS
            if depth >= MAX_LINE:
                break
            depth = min(depth * 2, MAX_LINE)
    except _OutOfBudget:
        pass
    return whole_graph(root, checker, GRAPH_LIMIT)


def whole_graph(board: chess.Board, checker: chess.Color, limit: int) -> bool | None:
    """Condition 2 read off the whole graph: every position reachable from `board` with
    the checker checking, then the largest closed set by deleting, until none is left,
    checker's positions with no check into the set and defender's with a reply out of it.
    Exact where the search of strategies may wander (a queen roaming an open board); None
    when the positions exceed `limit`."""
    children: dict[Key, list[Key]] = {}
    ours: dict[Key, bool] = {}
    todo = [board.copy(stack=False)]
    while todo:
        position = todo.pop()
        key = _key(position)
        if key in children:
            continue
        if len(children) >= limit:
            return None
        ours[key] = position.turn == checker
        moves = _checks(position, set()) if ours[key] else list(position.legal_moves)
        found = children[key] = []
        for move in moves:
            position.push(move)
            found.append(_key(position))
            todo.append(position.copy(stack=False))
            position.pop()
    alive = set(children)
    while True:
        dead = [key for key in alive if not (any if ours[key] else all)(
            after in alive for after in children[key])]
        if not dead:
            return _key(board) in alive
        alive.difference_update(dead)


def _after(position: chess.Board, move: chess.Move,
           verdict: Callable[[chess.Board, int], int], depth: int) -> int:
    position.push(move)
    try:
        return verdict(position, depth + 1)
    finally:
        position.pop()


def _checks(position: chess.Board, line: set[Key]) -> list[chess.Move]:
    """The checker's checking moves, those that come back to a position of the line
    first (they close the proof at once)."""
    king = position.king(not position.turn)
    if king is None:
        return []
    # (a move can check only if its piece lands where it attacks the king, or it leaves
    # a line through the king: the others, most, are passed over without a look)
    aligned = _ALIGNED[king]
    reach = {chess.PAWN: chess.BB_PAWN_ATTACKS[not position.turn][king],
             chess.KNIGHT: chess.BB_KNIGHT_ATTACKS[king], chess.BISHOP: aligned,
             chess.ROOK: aligned, chess.QUEEN: aligned, chess.KING: 0}
    squares = chess.BB_SQUARES
    checks = [move for move in position.legal_moves
              if (squares[move.from_square] & aligned or move.promotion
                  or squares[move.to_square]
                  & reach[position.piece_type_at(move.from_square) or chess.KING]
                  or position.is_castling(move))
              and _gives_check(position, move)]
    back = []
    for move in checks:
        position.push(move)
        if _key(position) in line:
            back.append(move)
        position.pop()
    return back + [move for move in checks if move not in back]


def _gives_check(position: chess.Board, move: chess.Move) -> bool:
    """`position.gives_check(move)`, read from bitboards for the common moves (python-chess
    makes the move to know: most of the search's time went there)."""
    if move.promotion or position.is_castling(move) or position.is_en_passant(move):
        return position.gives_check(move)
    king = position.king(not position.turn)
    if king is None:
        return False
    bb_from, bb_to = chess.BB_SQUARES[move.from_square], chess.BB_SQUARES[move.to_square]
    occupied = (position.occupied & ~bb_from) | bb_to
    ours = (position.occupied_co[position.turn] & ~bb_from) | bb_to
    return attacks_after(position, bb_from, bb_to, ours)(king, occupied)


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
