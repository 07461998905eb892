"""FIDE 7.4: pieces displaced or knocked over are put back. A board that differs from
the game for MISMATCH_AFTER (1.5 s) in a way no move in progress explains raises
`position-mismatch`, with what to put back where; it clears when the board agrees again.
An opponent's piece lifted and put back before that is a touch out of turn (`wrong-side`,
shown and cleared at once).
"""

from __future__ import annotations

import chess

from board_ctl.core.rules import Action, Clear, Finding
from board_ctl.core.squares import NAMES, names, squares
from board_ctl.core.timebase import us

MISMATCH_AFTER = 1.5  # s a board may differ unexplained before the alert (spec)
MISMATCH_AFTER_US = us(MISMATCH_AFTER)


class Displaced:
    """Times how long the board has differed unexplained, and who lifted what meanwhile."""

    def __init__(self, remote: chess.Color | None = None) -> None:
        self.remote = remote  # a side played from elsewhere touches nothing on the board
        self.since: int | None = None  # the board differs unexplained since
        self.lifted: set[chess.Square] = set()  # opponent's squares emptied meanwhile
        # The board while the move it differs around is read two ways as likely, whose
        # positions differ: the alert's squares would be a guess, so it waits (`release`)
        self.held: chess.Bitboard | None = None

    def deadline(self, alerted: bool) -> int | None:
        """When the mismatch alert is due (None: nothing differs, or already raised)."""
        if self.since is None or alerted or self.held is not None:
            return None
        return self.since + MISMATCH_AFTER_US

    def unexplained(self, t: int, lifted_opponents: chess.Bitboard) -> None:
        if self.since is None:
            self.since = t
        self.lifted |= set(squares(lifted_opponents))

    def hold(self, t: int, occupied: chess.Bitboard) -> None:
        """The board differs around a move read two ways as likely: the alert waits."""
        if self.since is None:
            self.since = t
        self.held = occupied

    def release(self, t: int, reference: chess.Bitboard, alerted: bool) -> list[Action]:
        """The move is decided (`reference`: the occupancy it leaves): the alert held back,
        if the pieces were away MISMATCH_AFTER, is raised against it, with the squares
        that differed while it was held."""
        held, self.held = self.held, None
        if held is None or alerted or self.since is None or t - self.since < MISMATCH_AFTER_US:
            return []
        return [self.mismatch(reference, held)]

    def explained(self, board: chess.Board, occupied: chess.Bitboard,
                  alerted: bool, knocked: chess.Bitboard = 0) -> list[Action]:
        """The board is accounted for again: the mismatch alert clears; an opponent's
        piece lifted and put back before the alert was a touch out of turn (`wrong-side`,
        shown and cleared at once), unless the mover's hand knocked it over or it is the
        victim of the move made (`knocked`: 4.2.2, an accident; the capture)."""
        differed, self.since, self.held = self.since is not None, None, None
        lifted, self.lifted = self.lifted, set()
        if not differed:
            return []
        if alerted:
            return [Clear("position-mismatch")]
        touched = [sq for sq in lifted if board.color_at(sq) == (not board.turn)
                   and not knocked & chess.BB_SQUARES[sq]]
        if not touched or not occupied & chess.BB_SQUARES[touched[0]] \
                or self.remote == (not board.turn):
            return []
        side = not board.turn
        return [Finding("wrong-side", side, tuple(touched),
                        f"{NAMES[side]} lifted a piece on {NAMES[board.turn]}'s turn"),
                Clear("wrong-side")]

    def reset(self, alerted: bool) -> list[Action]:
        """Nothing is judged for now (the board lags a remote side's move): no mismatch
        pending, and an open one clears."""
        self.since, self.lifted, self.held = None, set(), None
        return [Clear("position-mismatch")] if alerted else []

    @staticmethod
    def mismatch(reference: chess.Bitboard, occupied: chess.Bitboard) -> Finding:
        """The alert: what to put back, what to remove, to get `reference` again."""
        missing = reference & ~occupied
        extra = occupied & ~reference
        text = "restore the position"
        if missing:
            text += f": put back the pieces on {names(squares(missing))}"
        if extra:
            text += f"; remove the pieces from {names(squares(extra))}"
        return Finding("position-mismatch", None, squares(missing | extra), text)
