"""A position as the sensors see it: the shapes of its legal moves (what each does to the
occupancy), worked out only where asked and cached for the turn.

`full(occupied)`: the legal moves after which the board is occupied exactly so (a move
made, waiting to be completed). `partial(occupied)`: whether a legal move is on its way
to this occupancy (any subset of its lifts and placements, in any order).

Legal moves are generated square by square, as the board asks (a whole generation costs
ten times one square's): a turn asks about a few squares only. The position a reply was
read in becomes the next turn's, its work kept (`like`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import chess

from board_ctl.core.shapes import Shape, shape_of
from board_ctl.core.squares import PROMOTIONS

Key = tuple[int, int]  # (vacated, filled): the occupancy change that identifies a shape


class Position:
    """A position, and the shapes of its legal moves, worked out only where asked."""

    __slots__ = ("board", "occupied", "en_passant", "_by_move", "_full", "_from", "_to",
                 "_reach", "_has_moves", "_in_check")

    def __init__(self, board: chess.Board, like: Position | None = None,
                 in_check: bool | None = None) -> None:
        """`like`: the same position, already worked on (a reply read on a copy);
        `in_check`: whether the side to move is in check, when already known (the SAN of
        the move that led here says it: its `+` or `#`)."""
        self.board = board
        self.occupied = board.occupied
        # Whether a pawn of the mover stands where it could take en passant (python-chess
        # keeps an en passant square after every double step): only that move empties a
        # square of the opponent's, or both fills and empties squares as it captures.
        ep = board.ep_square
        self.en_passant = ep is not None and bool(
            chess.BB_PAWN_ATTACKS[not board.turn][ep] & board.pawns & board.occupied_co[board.turn])
        # By (from, to, promotion) as one int: a Move's own hash is a Python-level call.
        self._by_move: dict[int, Shape] = {}
        self._full: dict[Key, list[Shape]] = {}
        self._from: dict[chess.Square, list[chess.Move]] = {}
        self._to: dict[chess.Square, list[chess.Move]] = {}
        self._reach: dict[chess.Square, chess.Bitboard] = {}  # (see `_plain_reach`)
        self._has_moves: bool | None = None
        self._in_check = in_check
        if like is not None:
            self._by_move, self._full, self._from = like._by_move, like._full, like._from
            self._to, self._reach, self._has_moves = like._to, like._reach, like._has_moves
            if like._in_check is not None:
                self._in_check = like._in_check

    def moves_from(self, mask: chess.Bitboard) -> Iterator[Shape]:
        """Legal moves from these squares (cached square by square: the board asks often)."""
        return self._cached(self._from, mask, "from_mask")

    def moves_to(self, mask: chess.Bitboard) -> Iterator[Shape]:
        """Legal moves onto these squares, cached the same way."""
        shape, cache = self.shape, self._to
        for square in chess.scan_forward(mask):
            found = cache.get(square)
            if found is None:
                found = cache[square] = self._legal_to(square)
            for move in found:
                yield shape(move)

    def _legal_to(self, square: chess.Square) -> list[chess.Move]:
        """`board.generate_legal_moves(to_mask)`, the same moves in the same order, asked
        only of the pieces that can go there (python-chess's generation looks at the
        moves of every piece): those attacking the square, and the pawns (a step attacks
        nothing) and the king (castling) of the side to move."""
        board = self.board
        reach = board.attackers_mask(board.turn, square) | (
            (board.pawns | board.kings) & board.occupied_co[board.turn])
        return list(board.generate_legal_moves(from_mask=reach,
                                               to_mask=chess.BB_SQUARES[square]))

    def _cached(self, cache: dict[chess.Square, list[chess.Move]], mask: chess.Bitboard,
                side: str) -> Iterator[Shape]:
        shape = self.shape
        for square in chess.scan_forward(mask):
            found = cache.get(square)
            if found is None:
                found = cache[square] = list(
                    self.board.generate_legal_moves(**{side: chess.BB_SQUARES[square]}))
            for move in found:
                yield shape(move)

    def _moves_of(self, square: chess.Square) -> list[chess.Move]:
        """The legal moves from a square (cached): `board.generate_legal_moves(from_mask)`,
        the same moves in the same order, at half its cost where its look at checks and
        pins is not needed (see `_legal_from`)."""
        found = self._from.get(square)
        if found is None:
            found = self._from[square] = self._legal_from(square)
        return found

    def _legal_from(self, square: chess.Square) -> list[chess.Move]:
        """python-chess's legal generation filters the pseudo-legal moves (not in check)
        by the king's safety, working out the checkers and pinned pieces at each call.
        Not in check, a piece neither pinned nor a pawn that may take en passant keeps
        all of its moves, and the king those to a square not attacked (castling is
        checked as it is generated): the same filter, done only where it can drop a
        move. In check, or where it can, python-chess's own generation."""
        board, bit = self.board, chess.BB_SQUARES[square]
        in_check = self._in_check
        if in_check is None:
            in_check = self._in_check = board.is_check()
        if not in_check and not (self.en_passant and board.pawns & bit):
            moves = board.generate_pseudo_legal_moves(from_mask=bit)
            if board.kings & bit:
                if not board.occupied_co[board.turn] & bit:
                    return []  # (the opponent's king: no move of the side to move)
                # Its steps to squares not attacked; castling (`is_castling`: a move of more
                # than a step, or onto its own rook), checked as it is generated, kept.
                them, attacked, bb = not board.turn, board.is_attacked_by, chess.BB_SQUARES
                castling = ~chess.BB_KING_ATTACKS[square] | board.occupied_co[board.turn]
                return [move for move in moves if castling & bb[move.to_square]
                        or not attacked(them, move.to_square)]
            if not board.is_pinned(board.turn, square):
                return list(moves)
        return list(board.generate_legal_moves(from_mask=bit))

    def _plain_reach(self, square: chess.Square) -> chess.Bitboard:
        """The squares a piece on `square` goes to when it is a plain piece of the side to
        move, whose moves no legality filter can drop (not in check; neither a pawn, nor
        the king, nor pinned): its attacks on squares not its own side's, exactly
        python-chess's moves for it. -1 for any other square (its moves are generated).
        The board asks this of the piece lifted (has it a move? where may it go?) far
        more often than it needs the moves themselves."""
        reach = self._reach.get(square)
        if reach is None:
            board, bit = self.board, chess.BB_SQUARES[square]
            own = board.occupied_co[board.turn]
            in_check = self._in_check
            if in_check is None:
                in_check = self._in_check = board.is_check()
            if (in_check or not own & bit or (board.pawns | board.kings) & bit
                    or board.is_pinned(board.turn, square)):
                reach = -1
            else:
                reach = board.attacks_mask(square) & ~own
            self._reach[square] = reach
        return reach

    def _king_steps(self, square: chess.Square) -> chess.Bitboard:
        """The squares the king of the side to move, on `square` and not in check, steps
        to: each a legal move unless attacked (python-chess's filter), castling aside. 0
        for any other square."""
        board, bit = self.board, chess.BB_SQUARES[square]
        own = board.occupied_co[board.turn]
        if not board.kings & own & bit:
            return 0
        in_check = self._in_check
        if in_check is None:
            in_check = self._in_check = board.is_check()
        return 0 if in_check else chess.BB_KING_ATTACKS[square] & ~own

    def shape(self, move: chess.Move) -> Shape:
        """The shape of a legal move of this position."""
        key = move.from_square | move.to_square << 6 | (move.promotion or 0) << 12
        shape = self._by_move.get(key)
        if shape is None:
            shape = self._by_move[key] = shape_of(self.board, move)
        return shape

    @property
    def has_moves(self) -> bool:
        """Whether the side to move has a legal move (neither mated nor stalemated)."""
        if self._has_moves is None:
            self._has_moves = any(self._from.values()) or any(self.board.generate_legal_moves())
        return self._has_moves

    def full(self, occupied: chess.Bitboard) -> list[Shape]:
        """The legal moves after which the board is occupied exactly so."""
        mine, board = self.occupied, self.board
        vacated, filled = mine & ~occupied, occupied & ~mine
        if vacated & ~board.occupied_co[board.turn] and not self.en_passant:
            return []  # (only en passant empties a square of the opponent's: no move does)
        key = (vacated, filled)
        found = self._full.get(key)
        if found is None:
            found = self._full[key] = [
                shape for shape in map(self.shape, self._moves_for(vacated, filled))
                if shape.vacated == vacated and shape.filled == filled
            ]
        return found

    def _moves_for(self, vacated: chess.Bitboard, filled: chess.Bitboard) -> Iterable[chess.Move]:
        """The few legal moves that can have this shape, without generating all of them."""
        board = self.board  # (full() has ruled out an opponent's square emptied but by e.p.)
        if vacated.bit_count() == 1:
            origin = chess.lsb(vacated)
            if filled.bit_count() == 1:  # a quiet move, a promotion: test the moves directly
                target = chess.lsb(filled)
                known = self._from.get(origin)
                if known is not None:  # (the square's moves are known: no legality test;
                    # matched by square, not Move equality, a dataclass's slow __eq__)
                    return [move for move in known if move.to_square == target]
                reach = self._plain_reach(origin)
                if reach >= 0:  # (a plain piece: no promotion, no legality test)
                    return [chess.Move(origin, target)] if reach & filled else []
                if self._king_steps(origin) & filled:  # (a king's step: is it attacked?)
                    return ([] if board.is_attacked_by(not board.turn, target)
                            else [chess.Move(origin, target)])
                if board.pawns & vacated and chess.square_rank(target) in (0, 7):
                    moves = [chess.Move(origin, target, piece) for piece in PROMOTIONS]
                else:
                    moves = [chess.Move(origin, target)]
                return [move for move in moves if board.is_legal(move)]
            if not filled:  # captures: from the square's moves (asked for next anyway)
                theirs = board.occupied_co[not board.turn]
                if not board.attacks_mask(origin) & theirs:
                    return ()  # (it attacks none of his pieces: no capture)
                if origin not in self._from:
                    reach = self._plain_reach(origin)
                    if reach >= 0:  # (a plain piece: its captures in python-chess's order)
                        return [chess.Move(origin, to) for to in chess.scan_reversed(reach & theirs)]
                    steps = self._king_steps(origin)
                    if steps:  # (the king: those of its steps' captures not defended)
                        them, attacked = not board.turn, board.is_attacked_by
                        return [chess.Move(origin, to) for to in chess.scan_reversed(steps & theirs)
                                if not attacked(them, to)]
                return [m for m in self._moves_of(origin) if theirs & chess.BB_SQUARES[m.to_square]]
            return ()
        if vacated.bit_count() == 2 and filled:  # castling, en passant: the king's or the
            # pawn's move lands on a filled square (python-chess writes castling e1g1)
            return [m for sq in chess.scan_reversed(vacated & board.occupied_co[board.turn])
                    for m in self._moves_of(sq) if filled & chess.BB_SQUARES[m.to_square]]
        return ()

    def crossing(self, occupied: chess.Bitboard) -> bool:
        """Whether a legal move is on its way to this occupancy with its piece pushed
        along the surface, crossing a square of its way (`Shape.crossing`)."""
        emptied, filled = self.occupied & ~occupied, occupied & ~self.occupied
        lifted = emptied & self.board.occupied_co[self.board.turn]
        if not filled or not lifted or filled.bit_count() > 3:
            return False  # (nothing put down, or nothing of his lifted)
        return any(shape.crossing(emptied, filled) for shape in self.moves_from(lifted))

    def partial(self, occupied: chess.Bitboard) -> bool:
        """Whether a legal move is on its way to this occupancy: any subset of its lifts
        and placements, in any order."""
        emptied, filled = self.occupied & ~occupied, occupied & ~self.occupied
        board = self.board
        own = board.occupied_co[board.turn]
        if not filled and emptied & own == emptied and emptied.bit_count() == 1:
            if not emptied & board.rooks:  # the common case: one own piece in hand
                square = chess.lsb(emptied)
                found = self._from.get(square)  # (self.movable)
                if found is not None:
                    return bool(found)
                reach = self._plain_reach(square)
                if reach >= 0:
                    return bool(reach)
                steps = self._king_steps(square)
                if steps:  # (the king: a step to a square not attacked will do)
                    them, attacked = not board.turn, board.is_attacked_by
                    for to in chess.scan_reversed(steps):
                        if not attacked(them, to):
                            return True
                return bool(self._moves_of(square))  # (castling, or a pawn, a pinned piece)
            if self._plain_reach(chess.lsb(emptied)) > 0:
                return True  # (a rook lifted with a move of its own: castling aside)
        if filled and emptied & ~own and not self.en_passant:
            return False  # a piece put down and a victim lifted: only en passant does both
        # Moves of the lifted pieces; captures of lifted victims; a promotion's new piece
        # placed before the pawn is lifted; castling begun with the rook. (With a piece
        # put down, no capture is on its way: a capture fills no square.)
        targets = emptied & ~own if not filled else 0
        if not emptied & own:
            targets |= filled
        if board.ep_square is not None and targets:
            targets |= chess.BB_SQUARES[board.ep_square]
        lifted = emptied & own
        if lifted & board.rooks & board.castling_rights:  # (castling begun with a rook that
            lifted |= board.kings & own  # may still castle: only then the king's moves)
        shape, bb, ep = self.shape, chess.BB_SQUARES, board.ep_square
        for square in chess.scan_forward(lifted):
            if board.kings & bb[square]:  # (castling empties and fills other squares too)
                if any(shape(m).allows_partial(emptied, filled) for m in self._moves_of(square)):
                    return True
                continue
            # A move other than castling or en passant empties at most its origin and its
            # target, and fills at most its target: the others need no shape.
            for m in self._moves_of(square):
                reach = bb[square] | bb[m.to_square]
                if ((not emptied & ~reach and not filled & ~reach or m.to_square == ep)
                        and shape(m).allows_partial(emptied, filled)):
                    return True
        return any(s.allows_partial(emptied, filled) for s in self.moves_to(targets))

    def movable(self, square: chess.Square) -> bool:
        return bool(self._moves_of(square))

    def capturable(self, square: chess.Square) -> bool:
        board, bit = self.board, chess.BB_SQUARES[square]
        if any(board.generate_legal_moves(to_mask=bit)):
            return bool(board.occupied & bit)
        return any(self.shape(m).captured == square for m in board.generate_legal_ep())
