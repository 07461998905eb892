"""FIDE 5 and 6.9: how a game ends by itself. Checkmate, stalemate, a dead position
(python-chess's insufficient material), fivefold repetition and the 75-move rule end it
at once (5.1.1, 5.2.1, 5.2.2, 9.6); in `casual` so do threefold repetition and the
fifty-move rule. A mating or drawing move ends the game without a press once it has
stood GAME_END_HOLD (6.2.1: the game ended with it). A fallen flag loses, unless the
opponent cannot mate by any series of legal moves (6.9: a draw).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

import chess

from board_ctl.core.clock import flag_result
from board_ctl.core.position import Position
from board_ctl.core.rules import Action, End, Finding
from board_ctl.core.shapes import Shape
from board_ctl.core.squares import NAMES
from board_ctl.core.timebase import us

GAME_END_HOLD = 2.0  # s a mating or drawing placement must stand to end the game unpressed
GAME_END_HOLD_US = us(GAME_END_HOLD)

TERMINATIONS = {
    chess.Termination.CHECKMATE: "checkmate",
    chess.Termination.STALEMATE: "stalemate",
    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient-material",
    chess.Termination.FIVEFOLD_REPETITION: "fivefold-repetition",
    chess.Termination.SEVENTYFIVE_MOVES: "seventy-five-moves",
}


# The squares on a line (rank, file, diagonal) through each square: where a piece may be
# pinned to a king standing there.
def _aligned(king: chess.Square) -> chess.Bitboard:
    lines = 0
    for square in chess.SQUARES:
        if chess.BB_RAYS[king][square]:
            lines |= chess.BB_SQUARES[square]
    return lines


_ALIGNED = [_aligned(king) for king in chess.SQUARES]
# The squares strictly between two squares on a line (0 off a line).
_BETWEEN = [[chess.between(a, b) for b in chess.SQUARES] for a in chess.SQUARES]
# A square's neighbours along a rank or file, and along a diagonal: a rook (a bishop)
# that no line ties to its king has a legal move if one of them is not its own side's.
_STRAIGHT_STEPS = [chess.BB_KING_ATTACKS[sq] & (chess.BB_RANKS[chess.square_rank(sq)]
                                               | chess.BB_FILES[chess.square_file(sq)])
                   for sq in chess.SQUARES]
_DIAGONAL_STEPS = [chess.BB_KING_ATTACKS[sq] & ~_STRAIGHT_STEPS[sq] for sq in chess.SQUARES]
# The squares on a diagonal through each square (itself included).
_DIAGONALS = [sum(chess.BB_SQUARES[other] for other in chess.SQUARES
                  if abs(chess.square_file(other) - chess.square_file(sq))
                  == abs(chess.square_rank(other) - chess.square_rank(sq)))
              for sq in chess.SQUARES]


def cannot_end(board: chess.Board, move: chess.Move) -> bool:
    """Whether the legal `move` surely leaves a game that goes on: material for a mate
    stays on the board, and the opponent surely has a legal move (not in check, a pawn or
    a knight that no line ties to his king can move; or his king has a square to go to).
    Read from bitboards, without making the move: a third of the cost of making it and
    asking python-chess (`ends_game`), for the game-end hold of almost every move. False
    only means "look properly": castling, en passant and promotions (rare) always do.
    (`board` is a legal position: the side not to move is not in check.)"""
    frm, to = move.from_square, move.to_square
    bb = chess.BB_SQUARES
    bb_from, bb_to = bb[frm], bb[to]
    if not (board.pawns | board.rooks | board.queens) & ~bb_to:
        return False  # (a pawn, rook or queen left anywhere: never dead by material)
    if move.promotion or (board.pawns & bb_from and to == board.ep_square) or (
            board.kings & bb_from and board.is_castling(move)):
        return False
    mover = board.turn
    theirs = board.occupied_co[not mover] & ~bb_to
    king_bb = board.kings & theirs
    if not king_bb:
        return False
    king = chess.lsb(king_bb)
    occupied = (board.occupied & ~bb_from) | bb_to
    aligned = _ALIGNED[king]
    # In check after the move only if the moved piece attacks the king from its target,
    # or its origin was the first piece on a line from the king (a slider behind it may
    # now see the king): most moves do neither, and need no look at the mover's pieces.
    # (The mover attacked nothing of the king before: his opponent was not in check.)
    between = _BETWEEN[king]
    attacked = None
    diagonals = _DIAGONALS[king]
    if (aligned & bb_from and not between[frm] & occupied  # (a slider of his behind it?)
            and chess.BB_RAYS[king][frm] & board.occupied_co[mover] & ~bb_from
            & (board.bishops | board.rooks | board.queens)
            or aligned & bb_to and not between[to] & occupied and (  # (his slider there)
                board.queens & bb_from or board.bishops & bb_from and diagonals & bb_to
                or board.rooks & bb_from and not diagonals & bb_to)
            or board.knights & bb_from and chess.BB_KNIGHT_ATTACKS[to] & king_bb
            or board.pawns & bb_from and chess.BB_PAWN_ATTACKS[mover][to] & king_bb):
        attacked = _attacks_after(board, bb_from, bb_to, occupied & ~theirs)
        in_check = attacked(king, occupied)
    else:
        in_check = False
    if not in_check:
        # Not in check, a piece off every line through the king cannot be pinned: any
        # move it has is legal. (The opponent's pawns step away from the mover's side.)
        free = theirs & ~aligned
        pawns_free = board.pawns & free
        if mover == chess.BLACK:
            if (pawns_free << 8) & ~occupied & chess.BB_ALL:
                return True
        elif (pawns_free >> 8) & ~occupied:
            return True
        for square in chess.scan_forward(board.knights & free):
            if chess.BB_KNIGHT_ATTACKS[square] & ~theirs:
                return True
        for square in chess.scan_forward((board.rooks | board.queens) & free):
            if _STRAIGHT_STEPS[square] & ~theirs:
                return True
        for square in chess.scan_forward((board.bishops | board.queens) & free):
            if _DIAGONAL_STEPS[square] & ~theirs:
                return True
    if attacked is None:
        attacked = _attacks_after(board, bb_from, bb_to, occupied & ~theirs)
    # A king's step to a square nothing attacks is legal, in check or not (the attacks
    # read with the king lifted: a slider's line goes on through the square it leaves).
    without_king = occupied & ~king_bb
    for square in chess.scan_forward(chess.BB_KING_ATTACKS[king] & ~theirs):
        if not attacked(square, without_king):
            return True
    return False


def may_repeat(board: chess.Board, count: int) -> bool:
    """False when the position cannot have stood `count` times: python-chess's own first
    look in `is_repetition` (the occupancy seen `count` times), over the positions since
    the last capture or pawn move only (no earlier one can recur), and those with the
    same side to move (every second one), not the whole game's: a long game's endgame
    asks at every move."""
    occupied, seen = board.occupied, 1
    for state in islice(reversed(board._stack), 1, board.halfmove_clock, 2):
        if state.occupied == occupied:
            seen += 1
            if seen >= count:
                return True
    return False


class Endings:
    def __init__(self, auto_claimable_draws: bool = False) -> None:
        self.auto_claimable_draws = auto_claimable_draws

    def after_move(self, position: Position, made: Shape | None = None,
                   goes_on: bool = False) -> tuple[str, str] | None:
        """(result, termination) if the position ends the game, else None: python-chess's
        `outcome()`, in its order, answered from the position's legal moves (generated once
        for the turn anyway), with the material looked at only after the move `made`
        changed it (a capture, a promotion) and the repetition scan only where one is
        possible (each repetition takes at least four reversible plies). `goes_on`: the
        move was found not to end the game by mate, stalemate or material (`cannot_end`,
        before it was made): only the repetitions and the move count are left to see."""
        board = position.board
        if not goes_on:
            has_moves = position.has_moves
            if not has_moves and board.is_check():
                return ("0-1" if board.turn == chess.WHITE else "1-0"), "checkmate"
            if (made is None or made.captured is not None or made.move.promotion) \
                    and board.is_insufficient_material():
                return "1/2-1/2", "insufficient-material"
            if not has_moves:
                return "1/2-1/2", "stalemate"
        clock = board.halfmove_clock
        if clock >= 150:
            return "1/2-1/2", "seventy-five-moves"
        if clock >= 16 and may_repeat(board, 5) and board.is_repetition(5):
            return "1/2-1/2", "fivefold-repetition"
        if self.auto_claimable_draws:
            if clock >= 8 and may_repeat(board, 3) and board.is_repetition(3):
                return "1/2-1/2", "threefold-repetition"
            if clock >= 100:
                return "1/2-1/2", "fifty-moves"
        return None

    @staticmethod
    def ends_game(after: Position) -> bool:
        """Whether the position after a move is mate, stalemate or a dead position."""
        return not after.has_moves or after.board.is_insufficient_material()

    # A cheap, sure "no" to whether the legal `move` ends the game (`ends_game`), read
    # from bitboards without making it (the module's function, called directly).
    cannot_end = staticmethod(cannot_end)

    @staticmethod
    def win_for(board: chess.Board, winner: chess.Color) -> str:
        """Win for `winner`, or a draw when `winner` could not mate by any series (5.1.2, 6.9)."""
        if board.has_insufficient_material(winner):
            return "1/2-1/2"
        return "1-0" if winner == chess.WHITE else "0-1"

    @staticmethod
    def flag(board: chess.Board, side: chess.Color) -> list[Action]:
        """`side`'s flag fell: the alert, and the result."""
        king = board.king(side)
        return [Finding("flag", side, (king,) if king is not None else (),
                        f"{NAMES[side]}'s time ran out"), End(*flag_result(board, side))]


def _attacks_after(board: chess.Board, bb_from: chess.Bitboard, bb_to: chess.Bitboard,
                   ours: chess.Bitboard) -> Callable[[chess.Square, chess.Bitboard], bool]:
    """Whether the mover attacks a square (given the occupancy) once his piece has moved
    from `bb_from` to `bb_to`; `ours`: his pieces after the move."""
    # The mover's pieces by kind after the move: the moved one's kind gains its target.
    keep = ~bb_from & ~bb_to
    pawns, knights, bishops = board.pawns & keep, board.knights & keep, board.bishops & keep
    rooks, queens, kings = board.rooks & keep, board.queens & keep, board.kings & keep
    if board.pawns & bb_from:
        pawns |= bb_to
    elif board.knights & bb_from:
        knights |= bb_to
    elif board.bishops & bb_from:
        bishops |= bb_to
    elif board.rooks & bb_from:
        rooks |= bb_to
    elif board.queens & bb_from:
        queens |= bb_to
    else:
        kings |= bb_to
    pawns &= ours
    knights &= ours
    diagonal, straight, kings = (bishops | queens) & ours, (rooks | queens) & ours, kings & ours
    pawn_attacks = chess.BB_PAWN_ATTACKS[not board.turn]

    def attacked(square: chess.Square, occupied: chess.Bitboard) -> bool:
        return bool(
            pawn_attacks[square] & pawns
            or chess.BB_KNIGHT_ATTACKS[square] & knights
            or chess.BB_KING_ATTACKS[square] & kings
            or chess.BB_DIAG_ATTACKS[square][chess.BB_DIAG_MASKS[square] & occupied]
            & diagonal
            or (chess.BB_RANK_ATTACKS[square][chess.BB_RANK_MASKS[square] & occupied]
                | chess.BB_FILE_ATTACKS[square][chess.BB_FILE_MASKS[square] & occupied])
            & straight)

    return attacked


# (also how perpetual.py reads a check without making the move)
attacks_after, ALIGNED = _attacks_after, _ALIGNED
