"""Playing a remote side (a computer): the referee's part that takes its moves, and the
person's hands while the board lags the game (rules/remote.py says what is shown and
when a move counts as made).

The remote side's move is pushed onto the game when it is announced (`OpponentMoved`):
recorded as chosen, its clock stopped. Until the board shows the game's position again,
sensor changes go to the debouncer and to the execution under way, not to inference or
the rules (`Sensing` asks `raw` and `settled` here first). Without a clock, a
legal move of the person's that stands released (FIDE 4.7) completes it: the remote side
cannot start its reply on the board. The same holds for both sides' moves when the
players' opponent is online (`release_completes`, the LiveChess endpoint): the person makes
the online opponent's moves too, each only once the previous one was seen. Takebacks and
hints (casual) are here too.

A part of the referee: it holds the game state it shares with the other parts, the
board's reading (`sensing.py`) and the completion of moves (`completion.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import chess

from board_ctl.core import inference as infer
from board_ctl.core.effects import TakenBack
from board_ctl.core.inference import RELEASED_AFTER_US
from board_ctl.core.position import Position
from board_ctl.core.rules.remote import PROMOTION_RELEASE, Execution, plies_to_take_back
from board_ctl.core.shapes import shape_of
from board_ctl.core.state import GameState
from board_ctl.core.timebase import seconds, us
from board_ctl.core.timers import Timer
from board_ctl.core.turn import Turn

if TYPE_CHECKING:
    from board_ctl.core.completion import Completion
    from board_ctl.core.sensing import Sensing


PROMOTION_RELEASE_US = us(PROMOTION_RELEASE)


class RemotePlay:
    def __init__(self, game: GameState, sensing: Sensing, completion: Completion) -> None:
        self.game = game
        self.sensing, self.completion = sensing, completion
        # (the shared objects it uses, never replaced)
        self.board, self.remote, self.out, self.press = (game.board, game.remote, game.out,
                                                         game.press)
        self.debouncer, self.displaced, self.draws = game.debouncer, game.displaced, game.draws
        self.game_clock, self.profile = game.game_clock, game.profile

    # ------------------------------------------------------------------ its moves

    def opponent_moved(self, t: int, move: chess.Move) -> None:
        """The remote side's move: the game's at once (its clock stops), then made on the
        board by the person, who is shown it."""
        remote, board = self.remote, self.board
        if (remote.side is None or board.turn != remote.side or remote.execution is not None
                or move not in board.legal_moves):
            return  # not its turn, or not a move: nothing it did not choose is recorded
        before = board.copy(stack=False)
        self.press.decision = None
        # what the person touched while it thought is not its own
        self.game.turn = Turn(self.game.turn.position, self.game.turn.started)
        self.completion.push(shape_of(board, move), t)
        remote.hint, remote.hint_wanted = None, False
        remote.execution = Execution.of_move(before, move, t, board.occupied)
        self.out.dirty = True
        self.settled(t)

    # ------------------------------------------------------------------ the person's hands

    def raw(self, t: int, square: chess.Square, placed: bool) -> bool:
        """A raw change while the board lags the game or the remote side is to move: only
        the hands' evidence and the debouncer see it. True when it is handled here."""
        remote, board = self.remote, self.board
        remote.last_raw = t
        execution = remote.execution
        if execution is not None:
            if (not placed and execution.move is not None and self.game.occupied == execution.target
                    and board.color_at(square) == board.turn):
                self._executed(t)  # he lifts a piece of his own: his turn has begun
            else:
                execution.raw(t, square, placed)
        if not remote.busy(board):
            return False
        self.press.last_raw = t
        self.debouncer.toggle(t, square, placed)
        return True

    def settled(self, t: int) -> bool:
        """A settled change (or a scan): True when the board is not the person's to play
        on, so nothing is judged; the remote side's move is done once the board shows it."""
        remote = self.remote
        remote.hint = None  # a hint is lit until the board changes
        execution = remote.execution
        if execution is not None:
            execution.settled(t, self.game.occupied)
            if execution.proven:
                self._executed(t)
                return True
        if remote.busy(self.board):
            self.wait(t)
            return True
        return False

    def scanned(self, t: int) -> None:
        """A scan while the board lags the remote side's move. While the link was down the
        person may have made that move and then begun or made his own: a board that is the
        game's position with one legal move of his made or on its way proves it made."""
        execution = self.remote.execution
        if execution is None or execution.move is None or self.game.occupied == execution.target:
            return
        position = self.game.turn.position
        if position.full(self.game.occupied) or position.partial(self.game.occupied):
            self._executed(t)

    def wait(self, t: int) -> None:
        """While the board is not the person's to play on, no mismatch is pending."""
        self.completion.apply(t, self.displaced.reset("position-mismatch" in self.out.alerts))

    def _executed(self, t: int) -> None:
        """The board shows the game again: the person's turn starts now."""
        self.remote.execution = None
        self.game.turn = Turn(self.game.turn.position, t)
        self.out.dirty = True

    # ------------------------------------------------------------------ timers

    def observe(self, t: int) -> None:
        """Note when the person's move standing on the board last (re)appeared."""
        remote, match = self.remote, self.game.turn.match
        if match is not remote.standing:
            remote.standing, remote.standing_since = match, t

    def due(self) -> list[Timer]:
        remote = self.remote
        if self.game.result is not None:
            return []
        execution = remote.execution
        if execution is not None:
            deadline = execution.deadline()
            return [] if deadline is None else [(deadline, self.hold_over)]
        self.observe(self.game.now)
        match = self.game.turn.match
        if (match is not None and not self.game.clock_in_use and self.board.turn != remote.side
                and self.press.decision is None and self.game.turn.ambiguous is None
                and infer.placed(self.game.turn, match)):
            # No clock: a legal move released (FIDE 4.7) is complete, as the remote side
            # (a computer, or an online opponent: then either side's move) cannot start
            # its reply on the board.
            # A promotion waits longer: the pawn put down is often replaced by the new
            # piece after a pause (4.6), whether or not the selector was set first.
            wait = PROMOTION_RELEASE_US if match.promoting else RELEASED_AFTER_US
            # (from the last raw change: the evidence of a capture's landing may come
            # after the move was first seen, and the hand may still be on the piece)
            return [(max(remote.standing_since, remote.last_raw) + wait, self.released)]
        return []

    def hold_over(self, when: int) -> None:
        execution = self.remote.execution
        if execution is not None and self.game.occupied == execution.target:
            self._executed(when)
        elif execution is not None:
            execution.reached = None

    def released(self, when: int) -> None:
        if self.game.turn.match is not None:
            self.completion.complete_match(when)

    # ------------------------------------------------------------------ buttons (casual)

    def hint_asked(self) -> None:
        remote = self.remote
        if remote.side is not None and self.profile.hints and not remote.busy(self.board):
            remote.hint_wanted = True

    def hint_given(self, move: chess.Move) -> None:
        remote = self.remote
        if (remote.side is not None and not remote.busy(self.board)
                and move in self.board.legal_moves):
            remote.hint, remote.hint_wanted = move, False
            self.out.dirty = True

    def takeback(self, t: int) -> None:
        """The last full move back (casual): the person's last move and the reply to it;
        the clocks keep their times, the LEDs guide the pieces back."""
        remote, board = self.remote, self.board
        if remote.side is None or not self.profile.takebacks:
            return
        plies = plies_to_take_back(board, not remote.side)
        if not plies:
            return
        for _ in range(plies):
            board.pop()
        self.out.add(TakenBack(seconds(t), plies))
        lever = self.game_clock.lever
        if lever.turn is not None and lever.turn != board.turn:  # (no time given back)
            lever.press(lever.turn, seconds(max(t, self.game_clock.now)))
        for code in ("illegal-move", "clock-no-move", "touch-move", "move-changed"):
            self.out.clear(t, code)
        self.draws.offer = self.draws.offer_pending = self.draws.claim_pending = None
        self.press.forget()
        self.press.decision, self.press.switched = None, None
        self.game.turn = Turn(Position(board), t)
        self.game.occupied = self.sensing.read()
        remote.hint, remote.hint_wanted = None, False
        remote.execution = Execution.restore(t, board.occupied)
        self.out.dirty = True
        self.settled(t)
