"""The position an app is shown: which piece stands on each occupied square.

A presence board senses only which squares are occupied. What an app reads is built from
the two things the service publishes after every settled change: the game's position as
the referee keeps it (its FEN) and the settled occupancy (debounced: no bounce, no blip
of a slid piece). A square that holds what the game says holds the game's piece. A piece
lifted leaves its square empty ("in hand"); a piece put down is named by the reading
that explains it best:

1. a legal move of the game whose piece is in hand and whose other squares agree with
   the board (a capture's piece arriving on its victim's square, the king and the rook
   of castling, in either order);
2. the game's own piece on that square when one of its kind is in hand (a touched piece
   put back, a knocked piece restored, a computer's move being made on the board);
3. otherwise the piece lifted last (an illegal move, a knocked piece landing elsewhere),
   or, with nothing in hand, a piece the game has lost: a guess, returned as a `Guess`
   for the log.

A promotion's square reads empty until the move is complete (which piece was put there
is unknown until the press, or the selector's time, says), then holds the piece the
game recorded. When the occupancy equals the game's (or an earlier position the board
has not yet caught up with: a computer's move announced and not yet made, a takeback),
the pieces are that position's exactly. Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

RECENT = 3  # earlier game positions the board may still show


@dataclass(frozen=True, slots=True)
class Guess:
    """A square whose piece nothing tells: reported as `piece`, the best reading."""

    square: chess.Square
    piece: chess.Piece
    why: str

    def text(self) -> str:
        return (f"{chess.square_name(self.square)} reads as a "
                f"{chess.COLOR_NAMES[self.piece.color]} {chess.piece_name(self.piece.piece_type)}"
                f": the best reading ({self.why})")


@dataclass(frozen=True, slots=True)
class Update:
    """What changed for the app: (square, piece or None) in square order, and guesses."""

    changes: tuple[tuple[chess.Square, chess.Piece | None], ...]
    guesses: tuple[Guess, ...] = ()


Pieces = dict[chess.Square, chess.Piece]


class AppPosition:
    def __init__(self, fen: str = chess.STARTING_FEN) -> None:
        self.game = chess.Board(fen)
        self.fen = self.game.fen()
        self.occupied = self.game.occupied
        self.pieces: Pieces = self.game.piece_map()
        self.hand: list[tuple[chess.Square, chess.Piece]] = []  # lifted, newest last
        # Squares a promoting pawn's new piece stands on, not yet known: (origin, pawn).
        self.promoting: dict[chess.Square, tuple[chess.Square, chess.Piece]] = {}
        # Positions the game has left that the board may still show (newest first).
        self.behind: list[chess.Board] = []

    def piece_at(self, square: chess.Square) -> chess.Piece | None:
        return self.pieces.get(square)

    def board_fen(self) -> str:
        board = chess.Board(None)
        board.set_piece_map(self.pieces)
        return board.board_fen()

    def update(self, fen: str, occupied: chess.Bitboard) -> Update:
        """The game's position and the settled occupancy now: what the app must be told."""
        before = dict(self.pieces)
        guesses: list[Guess] = []
        settled = chess.BB_EMPTY  # squares the game's new move accounts for
        if fen != self.fen:
            self.fen = fen
            settled = self._new_position(chess.Board(fen), occupied)
        lifted = self.occupied & ~occupied & ~settled
        placed = occupied & ~self.occupied & ~settled
        self.occupied = occupied
        for square in chess.scan_forward(lifted):
            piece = self.pieces.pop(square, None)
            if piece is not None:
                self.hand.append((square, piece))
            elif square in self.promoting:  # the new piece lifted again: the pawn in hand
                self.hand.append(self.promoting.pop(square))
        for square in chess.scan_forward(placed):
            guess = self._put_down(square)
            if guess is not None:
                guesses.append(guess)
        self._resync()
        changes = tuple((square, self.pieces.get(square))
                        for square in sorted(before.keys() | self.pieces.keys())
                        if before.get(square) != self.pieces.get(square))
        return Update(changes, tuple(guesses))

    # ------------------------------------------------------------------ the game moves

    def _new_position(self, game: chess.Board, occupied: chess.Bitboard) -> chess.Bitboard:
        """The game moved on. If by one legal move the board shows made (its pieces have
        left their squares), its pieces stand where the game puts them: the capturer on
        its victim's square, the promoted piece, the castled king and rook. The squares
        so accounted for."""
        old = self.game
        self.game = game
        # Until the board shows the new position, it may still show the old one.
        self.behind = [old, *self.behind][:RECENT] if game.occupied != occupied else []
        move = _move_between(old, game)
        if move is None:
            return chess.BB_EMPTY
        carried = _carried(old, move)
        if any(occupied & chess.BB_SQUARES[origin] for origin, _ in carried):
            return chess.BB_EMPTY  # not made on the board yet (a computer's move)
        victim = _captured_on(old, move)
        if victim is not None:
            self._take_from_hand(victim)  # taken off the board for good
        settled = chess.BB_EMPTY
        for origin, target in carried:
            if not occupied & chess.BB_SQUARES[target]:
                continue  # not arrived yet: put down later, it is read then
            self.pieces.pop(origin, None)
            self._take_from_hand(origin)
            self.promoting.pop(target, None)
            piece = game.piece_at(target)
            assert piece is not None
            self.pieces[target] = piece
            settled |= chess.BB_SQUARES[origin] | chess.BB_SQUARES[target]
        return settled

    def _resync(self) -> None:
        """The occupancy of the game's position (or of one the board has not caught up
        with): that position's pieces exactly, nothing in hand."""
        if self.occupied == self.game.occupied:
            self._adopt(self.game)
            self.behind = []
            return
        for board in self.behind:
            if self.occupied == board.occupied:
                self._adopt(board)
                return

    def _adopt(self, board: chess.Board) -> None:
        self.pieces = board.piece_map()
        self.hand = []
        self.promoting = {}

    # ------------------------------------------------------------------ a piece put down

    def _put_down(self, square: chess.Square) -> Guess | None:
        game = self.game
        move = self._best_move_to(square)
        if move is not None:
            origin, piece = self._mover_on(move, square)
            self._take_from_hand(origin)
            if move.promotion is None:
                self.pieces[square] = piece
            else:  # a promotion's square reads empty until the move is complete
                self.promoting[square] = (origin, piece)
            return None
        own = game.piece_at(square)
        if own is not None and self._in_hand(own) is not None:
            self._take_from_hand(self._in_hand(own))
            self.pieces[square] = own
            return None
        if self.hand:
            origin, piece = self.hand.pop()
            self.pieces[square] = piece
            return Guess(square, piece, f"the piece lifted from {chess.square_name(origin)}, "
                                        "no legal move explains it")
        if own is not None:
            self.pieces[square] = own
            return None
        piece = _missing_piece(game)
        self.pieces[square] = piece
        return Guess(square, piece, "a piece put down from off the board")

    def _best_move_to(self, square: chess.Square) -> chess.Move | None:
        """The legal move that puts a piece in hand on `square` and explains the board
        best: fewest squares that differ from the game and that it does not change, then
        fewest of its changes not yet made, then the piece lifted last."""
        game = self.game
        recency = {origin: i for i, (origin, _) in enumerate(self.hand)}
        if not recency:
            return None
        differs = self.occupied ^ game.occupied
        best: tuple[int, int, int, chess.Move] | None = None
        for move in game.legal_moves:
            origins, targets = _squares_of(game, move)
            if not targets & chess.BB_SQUARES[square]:
                continue
            origin, _ = self._mover_on(move, square)
            if origin not in recency:
                continue
            after = (game.occupied & ~(origins | _victim(game, move))) | targets
            changes = game.occupied ^ after
            key = (chess.popcount(differs & ~changes),
                   chess.popcount(changes & ~differs & ~chess.BB_SQUARES[square]),
                   -recency[origin], move)
            if best is None or key[:3] < best[:3]:
                best = key
        return best[3] if best is not None else None

    def _mover_on(self, move: chess.Move, square: chess.Square
                  ) -> tuple[chess.Square, chess.Piece]:
        """Where the piece `move` puts on `square` comes from, and which piece it is."""
        game = self.game
        if game.is_castling(move) and square != move.to_square:
            rook_from, _ = _rook_squares(game, move)
            return rook_from, chess.Piece(chess.ROOK, game.turn)
        piece = game.piece_at(move.from_square)
        assert piece is not None
        return move.from_square, piece

    def _in_hand(self, piece: chess.Piece) -> chess.Square | None:
        for origin, held in reversed(self.hand):
            if held == piece:
                return origin
        return None

    def _take_from_hand(self, origin: chess.Square | None) -> None:
        for i in range(len(self.hand) - 1, -1, -1):
            if self.hand[i][0] == origin:
                del self.hand[i]
                return


def _rook_squares(board: chess.Board, move: chess.Move) -> tuple[chess.Square, chess.Square]:
    rank = chess.square_rank(move.from_square)
    if board.is_kingside_castling(move):
        return chess.square(7, rank), chess.square(5, rank)
    return chess.square(0, rank), chess.square(3, rank)


def _squares_of(board: chess.Board, move: chess.Move) -> tuple[chess.Bitboard, chess.Bitboard]:
    """(squares a move's pieces leave, squares they arrive on)."""
    if board.is_castling(move):
        rook_from, rook_to = _rook_squares(board, move)
        return (chess.BB_SQUARES[move.from_square] | chess.BB_SQUARES[rook_from],
                chess.BB_SQUARES[move.to_square] | chess.BB_SQUARES[rook_to])
    return chess.BB_SQUARES[move.from_square], chess.BB_SQUARES[move.to_square]


def _carried(board: chess.Board, move: chess.Move) -> list[tuple[chess.Square, chess.Square]]:
    """(origin, target) of each piece a move carries: the mover, and castling's rook."""
    if board.is_castling(move):
        return [(move.from_square, move.to_square), _rook_squares(board, move)]
    return [(move.from_square, move.to_square)]


def _captured_on(board: chess.Board, move: chess.Move) -> chess.Square | None:
    if board.is_en_passant(move):
        return chess.square(chess.square_file(move.to_square),
                            chess.square_rank(move.from_square))
    return move.to_square if board.is_capture(move) else None


def _victim(board: chess.Board, move: chess.Move) -> chess.Bitboard:
    """The square a capture empties besides the mover's (en passant's pawn)."""
    if board.is_en_passant(move):
        return chess.BB_SQUARES[chess.square(chess.square_file(move.to_square),
                                             chess.square_rank(move.from_square))]
    return chess.BB_EMPTY


def _move_between(old: chess.Board, new: chess.Board) -> chess.Move | None:
    """The legal move that takes the game from `old` to `new`, if one does."""
    if new.turn == old.turn:
        return None
    changed = chess.BB_EMPTY  # squares whose piece differs
    for color in chess.COLORS:
        for piece_type in chess.PIECE_TYPES:
            changed |= old.pieces_mask(piece_type, color) ^ new.pieces_mask(piece_type, color)
    if chess.popcount(changed) > 4:
        return None
    for move in old.generate_legal_moves(from_mask=changed, to_mask=changed):
        old.push(move)
        found = old.board_fen() == new.board_fen()
        old.pop()
        if found:
            return move
    return None


FULL_SET = {chess.PAWN: 8, chess.KNIGHT: 2, chess.BISHOP: 2, chess.ROOK: 2, chess.QUEEN: 1,
            chess.KING: 1}


def _missing_piece(board: chess.Board) -> chess.Piece:
    """A piece the game has lost (the side to move's first, the most valuable first): what
    a piece put down from off the board most likely is. A pawn of the side to move when
    nothing is missing."""
    for color in (board.turn, not board.turn):
        for piece_type in (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN):
            if len(board.pieces(piece_type, color)) < FULL_SET[piece_type]:
                return chess.Piece(piece_type, color)
    return chess.Piece(chess.PAWN, board.turn)
