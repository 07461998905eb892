"""Completing moves: the clock press and when it is judged (`presses.py`), the move the
board shows committed (the capture's square chosen from the raw events), the clock going
over (`gameclock.py`), the rules that judge a completed move (`rules/touch.py`,
`rules/completed.py`), an illegal attempt or a press without a move (`rules/illegal.py`),
and the moves that end the game or decide a claim (`rules/endings.py`, `rules/claims.py`).
"""

from __future__ import annotations

import chess

from board_ctl.core import inference as infer
from board_ctl.core.debounce import SettledChange
from board_ctl.core.effects import MoveMade
from board_ctl.core.gameclock import Switched
from board_ctl.core.inference import ILLEGAL
from board_ctl.core.position import Position
from board_ctl.core.rules import Finding
from board_ctl.core.shapes import Shape
from board_ctl.core.state import GameState
from board_ctl.core.turn import Match, Turn


# Alerts about the attempt before a move, settled once a move is made.
SETTLED_BY_THE_NEXT_MOVE = ("illegal-move", "clock-no-move", "touch-move", "move-changed",
                            "king-exposed", "declared-move")


class Completion(GameState):
    # ------------------------------------------------------------------ the clock press

    def _press(self, t: int, side: chess.Color, times: tuple[float, float] | None) -> None:
        self._clock_in_use = True
        if self._remote_on and self.remote.busy(self.board):
            return  # the board lags a remote side's move: no move of the person's stands
        if side != self.board.turn and self.turn.ambiguous is not None:
            # The opponent completes his reply while the capture is undecided: decide it,
            # then read his reply in the position it answers.
            self._commit(self.turn.ambiguous.shapes, t, guess=True)
            if self.result is None:
                self._explain(t)
        if side != self.board.turn:
            return  # the lever is already down on that side: nothing happens
        self.press.press(t, times)
        if self.press.unsettled(t, self.debouncer):  # judge once the board has settled
            self._defer_press(t)
            return
        plies = len(self.board.move_stack)
        for change in self.debouncer.flush():  # the hand has left: what is down is down
            self._settled(SettledChange(min(change.t, t), change.square, change.occupied))
        if self.result is not None or len(self.board.move_stack) != plies:
            return
        if self.faulty:  # the hand has left: a faulty square may now be where it went
            self.occupied = self._read(deciding=True)
            self._explain(t)
        match = self.turn.match
        if self.turn.ambiguous is not None:
            return  # the capture is complete; it waits for the capturing square
        if match is not None and infer.placed(self.turn, match) and not match.promoting:
            self._complete_match(t)
        else:  # (a promotion's selector may follow the press, within its grace)
            self._defer_press(t)

    def _defer_press(self, t: int) -> None:
        self.press.defer(t, self.board, self.occupied, self.debouncer)

    def _decide_press(self, when: int) -> None:
        self.press.decision = None
        plies = len(self.board.move_stack)
        for change in self.debouncer.flush():
            self._settled(SettledChange(min(change.t, when), change.square, change.occupied))
        turn = self.turn
        if self.result is not None or len(self.board.move_stack) != plies or turn.ambiguous:
            return
        pressed = self.press.at if self.press.at is not None else when
        if turn.match is None and self.faulty:
            self.occupied = self._read(deciding=True)
            self._explain(when)
        if turn.match is None:
            taken = infer.landed_then_taken(turn, self.occupied, pressed)
            if taken is not None:
                shapes, lifted = taken
                chosen = infer.choose(turn, shapes, before=lifted,  # (that lift: no evidence)
                                      pressing=self.press.at is not None)
                if isinstance(chosen, Shape):
                    self._push(infer.with_promotion(turn, chosen, shapes), pressed)
                    if self.result is None:
                        self._explain(when)  # the lift was the opponent's: his turn now
                    return
            stuck = infer.one_flip(turn, self.occupied)
            if stuck is not None:
                self._sensor_fault(pressed, stuck[0], "did not change when the move was made")
                self.occupied = self._read(deciding=True)
                self._explain(when)
        if turn.match is None and turn.seen and self._opponent_started(when):
            if len(self.board.move_stack) != plies or self.turn.ambiguous is not None:
                return  # the move stood at the press; what came since is the reply
        if turn.match is not None:
            self._complete_match(when)
        elif self.occupied != turn.position.occupied:
            made = self._made_with_others()
            if made is not None:
                self._complete_made(made, pressed, when)
            else:
                self._illegal_move(pressed)
        elif infer.faulty_may_hide_a_move(turn.position, self.faulty):
            self.press.at = self.press.reported = None  # a move a faulty sensor hides?
            self.out.note(pressed, "the clock was pressed with no move seen, and a suspect "
                                   "sensor may hide one: no penalty; the turn goes on")
        elif self.illegal.press_without_move_counts:
            self._sanction(pressed, self.illegal.press_without_move(self.board.turn))
        else:
            self.press.at = self.press.reported = None  # nothing happens: the turn goes on

    def _made_with_others(self) -> Shape | None:
        """At a press, the legal move made while other squares differ: pieces displaced
        (knocked over, or moved by someone after his own press), whichever side they
        belong to. Not when the board's readings are in doubt (a suspect sensor among the
        squares that differ, events lost while the link was down)."""
        position = self.turn.position
        if ((position.occupied ^ self.occupied) & self.faulty or self._after_outage
                or self._from_scan):
            return None
        return infer.arrived_with_others(self.turn, self.occupied, pressed=True)

    def _complete_made(self, made: Shape, pressed: int, when: int) -> None:
        """The press completes the legal move made (FIDE 6.2.1); the other squares that
        differ are pieces displaced (7.4), to be put back by whoever displaced them: the
        position-mismatch alert and the LEDs show where. No illegal move: the mover's own
        move is legal, and the displaced pieces are no part of it."""
        turn = self.turn
        base = turn.position.occupied
        turn.knocked |= base & ~self.occupied & ~made.vacated  # (displaced, not touched)
        # (the pieces away: no evidence of the capture, and none of the next turns' moves;
        # what was lifted meanwhile is no touch)
        turn.displaced |= (made.after(base) ^ self.occupied) & ~(made.vacated | made.filled)
        self.displaced.lifted = set()
        self._commit(turn.position.full(made.after(base)), infer.made_at(turn, made, pressed))
        if self.result is None:
            self._explain(when)  # the displaced pieces, against the position after the move

    def _switch_clock(self, mover: chess.Color, t: int) -> Switched:
        """The clock goes over for the move just completed (at the press, or where no
        press, when the move stood); an external clock's times are checked."""
        press, game_clock = self.press, self.game_clock
        at = press.at if press.at is not None else t
        now_ms = game_clock.lever.now_ms  # (game_clock.now, inline)
        if now_ms is not None and now_ms * 1000 > at:
            at = now_ms * 1000
        reported, press.reported = press.reported, None
        if reported is not None and reported[0] != press.at:
            reported = None  # (another press's)
        switched = game_clock.switch(mover, at, reported)
        when = reported[0] if reported is not None else at
        if switched.fault is not None and "clock-fault" not in self.out.alerts:
            self.out.raise_(when, switched.fault)
        elif switched.trusted:
            self.out.clear(when, "clock-fault")
        return switched

    # ------------------------------------------------------------------ completing moves

    def _complete_for(self, side: chess.Color, t: int, ending: bool = False) -> None:
        """A button of the side not to move ends the mover's turn if a move stands; one
        that ends the game (`ending`) also takes a capture nobody saw land, and the
        button's own side's move if one stands placed."""
        turn = self.turn
        if side == self.board.turn:
            if ending and turn.match is not None and infer.placed(turn, turn.match):
                self._complete_match(t)
        elif turn.ambiguous is not None:
            self._commit(turn.ambiguous.shapes, t, guess=True)
        elif turn.match is not None and (ending or infer.placed(turn, turn.match)):
            self._complete_match(t, guess=True)

    def _complete_match(self, t: int, guess: bool = False) -> None:
        match = self.turn.match
        assert match is not None
        self._commit(match.shapes, match.since, guess=guess)

    def _commit(self, shapes: list[Shape], t: int, guess: bool = False) -> None:
        """Complete the move these shapes describe, or wait if the capture is ambiguous."""
        turn = self.turn
        chosen = infer.choose(turn, shapes, pressing=self.press.at is not None)
        if chosen is ILLEGAL:
            if self.press.at is not None:  # completed by the press: 7.5.1
                landed, taken = infer.capture_evidence(turn, shapes[0].move.from_square)
                self._illegal_move(self.press.at, tuple(landed[:1] or taken[:1]))
            return  # otherwise not a move: what follows will show what it is
        if chosen is None and not guess:
            # What follows is the opponent's, or the capturing piece being shown. The press
            # completed the move: the clock goes over now, whatever square it took.
            if self.press.at is not None and self.press.switched is None:
                self.press.switched = self._switch_clock(self.board.turn, t)
                self.press.at = None
            turn.ambiguous = Match(infer.distinct(shapes), t, self._now)
            turn.match = None
            self.out.dirty = True
            self.press.decision = None
            return
        if not isinstance(chosen, Shape):
            chosen = infer.distinct(shapes)[0]
            self.out.note(t, f"capture square not seen: "
                             f"{chess.square_name(chosen.move.to_square)} assumed")
        self._push(infer.with_promotion(turn, chosen, shapes) if chosen.move.promotion
                   else chosen, t)

    def _resolve_ambiguity_by_touch(self, square: chess.Square) -> None:
        """The capturing piece lifted and put back on one candidate square decides it."""
        turn = self.turn
        if turn.ambiguous is None:
            return
        candidates = turn.ambiguous.shapes
        if square not in {s.move.to_square for s in candidates}:
            return
        if self.debouncer.raw != candidates[0].after(turn.position.occupied):
            return  # something else moved too: the opponent's reply will decide
        for shape in candidates:
            if shape.move.to_square == square:
                turn.ambiguous = None
                self._push(infer.with_promotion(turn, shape, candidates), self._now)
                return

    def _push(self, shape: Shape, t: int) -> None:
        board, old, out, press, move = self.board, self.turn, self.out, self.press, shape.move
        mover = board.turn
        draws = self.draws
        if draws.declared_binds and (draws.declared or draws.claim_pending is not None):
            refused = draws.refuses(mover, move, old.released)
            if refused is not None:  # not the move declared with a claim (10.13 (2))
                self._abandon_attempt()
                self._apply(t, [refused])
                old.must_move = refused.squares[0]
                return
        self._from_scan = False
        if out.alerts:
            for code in SETTLED_BY_THE_NEXT_MOVE:
                out.clear(t, code)  # the previous move's irregularities are settled
        touched = old.touched
        if old.knocked:
            touched = [(when, sq) for when, sq in touched
                       if not old.knocked & chess.BB_SQUARES[sq]]
        finding = self.touch_move.check(old.position, touched, old.must_move, shape)
        if finding is not None:
            out.raise_(t, finding)
        if old.released:  # (none released: no move changed)
            finding = self.move_changed.check(board, old.released, shape)
            if finding is not None:
                out.raise_(t, finding)
        # (the position after it, if read already)
        reply = old.replies.get(move) if old.replies else None
        # Whether the move surely leaves the game going on: the game-end hold's look at it,
        # or, without the position after it read already, a cheap look before the move
        # (either spares generating the moves after it).
        goes_on = False
        for seen in old.seen:
            if seen.goes_on and shape in seen.shapes:
                goes_on = True
                break
        else:
            if reply is None:
                goes_on = self.endings.cannot_end(board, move)
        san = board.san_and_push(move)
        switched, press.switched = press.switched, None
        if switched is None:
            switched = self._switch_clock(mover, t)
        press.at = None
        remaining, elapsed = switched.result if switched.result is not None else (None, None)
        plies = len(board.move_stack)
        out.effects.append(MoveMade(t / 1_000_000, plies, move, san, remaining, elapsed))
        if draws.offer is not None or draws.offer_pending is not None:  # (else no offer)
            offer = draws.moved(mover)
            if offer is not None:
                out.note(*offer)
        press.decision = None
        # (the position a reply was read in is this one: its work is kept)
        turn = self.turn = Turn(Position(board, like=reply), t)
        if old.displaced:  # (pieces displaced before, still away: still none of its moves)
            turn.displaced = old.displaced & (turn.position.occupied ^ self.occupied)
        if self.faulty:
            self.occupied = self._read()
        if draws.claim_pending is not None:
            self._judge_pending_claim(t, mover)
            if self.result is not None:
                return
        if old.selections and not move.promotion:
            # Set after this move stood on the board: the opponent's choice, made early.
            turn.selections = [(when, p) for when, p in old.selections if when > t]
        # (the material is looked at after the game's first move, then when it changes)
        ended = self.endings.after_move(turn.position, shape if plies > 1 else None, goes_on)
        if ended is not None:
            self._game_over(t, *ended)

    # ------------------------------------------------------------------ irregular attempts

    def _illegal_move(self, t: int, captured: tuple[chess.Square, ...] = ()) -> None:
        """`captured`: a square the piece was seen capturing on, unseen in the occupancy."""
        position = self.turn.position
        if self._after_outage or self._from_scan:
            self._unjudged(t, "moves were made while the board was not connected and its "
                              "scan does not tell which")
            return
        if (position.occupied ^ self.occupied) & self.faulty or infer.faulty_may_hide_a_move(
                position, self.faulty):
            self._unjudged(t, "a suspect sensor may be why the board shows no legal move")
            return
        own = position.occupied & ~self.occupied & position.board.occupied_co[
            position.board.turn]
        finding, must_move = self.illegal.attempt(
            position, self.occupied, captured or infer.landings_of(self.turn, own))
        self._sanction(t, finding)
        if must_move is not None:
            self.turn.must_move = must_move

    def _unjudged(self, t: int, why: str) -> None:
        """A press on a board the referee cannot judge fairly: no penalty; the position is
        to be restored (the LEDs show how), and play goes on from it."""
        self._abandon_attempt()
        if "position-mismatch" not in self.out.alerts:
            self._mismatch(t)
            self.out.note(t, f"{why}: restore the position shown (no penalty)")

    def _abandon_attempt(self) -> None:
        """The press did not complete a move: the mover's clock runs on, and what stands on
        the board is not a move, however it looks; the replacement move starts afresh."""
        self.lateness.seen(self.board, self.turn.touched)  # (the touches are forgotten)
        self.press.at = self.press.reported = None
        self.turn.abandon()

    def _sanction(self, t: int, finding: Finding) -> None:
        """A completed illegal move (7.5.1) or a press without a move (7.5.3)."""
        self._abandon_attempt()
        self._apply(t, self.illegal.sanction(self.board, finding))

    # ------------------------------------------------------------------ game ends and draws

    def _late(self, when: int) -> None:
        """The default time passed: the side to move at the start loses if he has not come
        (the older Laws' 10.15)."""
        if not self.lateness.seen(self.board, self.turn.touched):
            self._apply(when, self.lateness.expired(self.board))

    def _flag(self, when: int) -> None:
        """The side to move ran out of time (FIDE 6.9), unless a mate already stood."""
        match = self.turn.match
        if match is not None and self._placement_ends_game(match):
            self._complete_match(match.since, guess=True)  # 5.1.1: the mate ended the game
            return
        side = self.game_clock.running_side
        assert side is not None
        self._apply(when, self.endings.flag(self.board, side))

    def _placement_ends_game(self, match: Match) -> bool:
        """Whether the move standing ends the game. A piece in hand is not yet a capture:
        only a piece seen arriving counts, and where it was seen landing says which of
        the captures it is (not every capture its lift allows need end the game)."""
        landed = infer.landings(self.turn, match)
        if not (match.placed or landed):
            return False
        return self._ends_game(landed or match.shapes)

    def _ends_game(self, shapes: list[Shape]) -> bool:
        """Whichever of these moves was made, the game is over after it."""
        return all(self.endings.ends_game(self.turn.replies_to(s)) for s in shapes)

    def _goes_on(self, match: Match) -> bool:
        """Whichever of the match's moves is made, the game surely goes on (the cheap
        pre-check: most moves need no look at the position after them)."""
        board, cannot_end = self.turn.position.board, self.endings.cannot_end
        goes_on = True
        for shape in match.shapes:  # (a loop: most matches have one)
            if not cannot_end(board, shape.move):
                goes_on = False
                break
        match.goes_on = goes_on
        return goes_on

    def _end_by_placement(self, when: int) -> None:
        """A mating or drawing move ends the game without a press (FIDE 6.2.1)."""
        match = self.turn.match
        assert match is not None
        match.ends_game = not self._goes_on(match) and self._placement_ends_game(match)
        if match.ends_game:
            self._complete_match(when, guess=True)

    def _claim(self, t: int, side: chess.Color) -> None:
        self._complete_for(side, t)
        if self.result is not None:
            return
        turn = self.turn
        declared = turn.match.shapes if turn.match else []
        choice = infer.choose(turn, declared, pressing=self.press.at is not None) \
            if declared else None
        choice = choice if isinstance(choice, Shape) else None
        void = self.draws.void(side, self.board, turn.touched,
                               choice.moved_from if choice is not None else 0)
        if void is not None:
            self.out.note(t, void)
            return
        move = infer.with_promotion(turn, choice, declared).move if choice is not None else None
        draw = self.draws.claimable(self.board, move)
        if draw is not None:
            if choice is not None:
                self._complete_match(t)
            self._game_over(t, "1/2-1/2", draw)
        elif choice is None and not self.draws.undecided:
            # 9.2.1: the claim may come first and the move it declares after, made on the
            # board without pressing the clock: judged once that move stands.
            self.draws.claim_pending = t
        else:
            self._apply(t, self.draws.wrong(side, move))

    def _judge_pending_claim(self, t: int, claimant: chess.Color) -> None:
        """The claimant's declared move has been made: judge the claim on it (9.2.1)."""
        self.draws.claim_pending = None
        draw = self.draws.claimable(self.board)
        if draw is not None:
            self._game_over(t, "1/2-1/2", draw)
        else:
            self._apply(t, self.draws.wrong(claimant))
