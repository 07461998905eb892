"""Completing moves: the clock press and when it is judged (`presses.py`), the move the
board shows committed (the capture's square chosen from the raw events), the clock going
over (`gameclock.py`), the rules that judge a completed move (`rules/touch.py`,
`rules/completed.py`), an illegal attempt or a press without a move (`rules/illegal.py`),
the moves that end the game or decide a claim (`rules/endings.py`, `rules/claims.py`), and
what the rules ask done (alerts, notes, time added, the game's end).

A part of the referee: it holds the game state it shares with the other parts, the
reading of the turn, and the board's reading (`sensing.py`), which it asks to settle what
is pending and to read the board again once a press has been judged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import chess

from board_ctl.core import inference as infer
from board_ctl.core.debounce import SettledChange
from board_ctl.core.effects import GameOver, MoveMade, Penalty
from board_ctl.core.gameclock import Switched
from board_ctl.core.inference import ILLEGAL
from board_ctl.core.position import Position
from board_ctl.core.rules import Action, AddTime, Clear, End, Finding, Record
from board_ctl.core.rules.completed import MovedOn
from board_ctl.core.shapes import Shape
from board_ctl.core.squares import named_tuple
from board_ctl.core.state import GameState
from board_ctl.core.timebase import seconds
from board_ctl.core.turn import Match, Mirror, Turn

if TYPE_CHECKING:
    from board_ctl.core.reading import TurnReading, Verdict
    from board_ctl.core.sensing import Sensing

# Alerts about the attempt before a move, settled once a move is made.
SETTLED_BY_THE_NEXT_MOVE = ("illegal-move", "clock-no-move", "touch-move", "move-changed",
                            "king-exposed", "declared-move")


class Completion:
    def __init__(self, game: GameState, reading: TurnReading, sensing: Sensing) -> None:
        self.game = game
        self.reading = reading
        self.sensing = sensing
        # (the shared objects it uses, never replaced)
        self.board, self.out, self.press, self.debouncer = (game.board, game.out, game.press,
                                                            game.debouncer)
        self.game_clock, self.draws, self.endings = game.game_clock, game.draws, game.endings
        self.illegal, self.touch_move, self.move_changed = (game.illegal, game.touch_move,
                                                            game.move_changed)
        self.displaced, self.remote, self.remote_on = game.displaced, game.remote, game.remote_on
        self.lateness = game.lateness

    # ------------------------------------------------------------------ what the rules ask

    def apply(self, t: int, actions: list[Action]) -> None:
        """Do what the rules ask, in order."""
        for action in actions:
            match action:
                case Finding():
                    self.out.raise_(t, action)
                case Clear(code):
                    self.out.clear(t, code)
                case Record(text):
                    self.out.note(t, text)
                case AddTime(side, added, reason):  # applied to the clock (7.5.5, 9.5.3)
                    self.game_clock.add_penalty(side, added, t)
                    self.out.add(Penalty(seconds(t), side, added, reason))
                    if added < 0 and self.game_clock.out_of_time(side, t):  # (10.13 (2))
                        self.apply(t, self.endings.flag(self.board, side))
                case End(result, termination):
                    self.game_over(t, result, termination)

    def game_over(self, t: int, result: str, termination: str) -> None:
        game = self.game
        if game.turn.mirror is not None:  # (the move the press completed: recorded first)
            self.close_mirror(t)
            if game.result is not None:
                return
        if game.turn.ambiguous is not None:  # a completed capture goes into the record
            self.commit(game.turn.ambiguous.shapes, t, guess=True)
            if game.result is not None:
                return
        game.result = GameOver(seconds(t), result, termination)
        self.out.clear_all(t)
        self.press.decision = None
        self.out.add(game.result)

    # ------------------------------------------------------------------ the clock press

    def pressed(self, t: int, side: chess.Color, times: tuple[float, float] | None) -> None:
        self.game.clock_in_use = True
        if self.remote_on and self.remote.busy(self.board):
            return  # the board lags a remote side's move: no move of the person's stands
        if self.game.turn.mirror is not None:
            if side == self.board.turn:
                return  # (pressed again: the move stands, its readings held open)
            self.close_mirror(t)  # the opponent completes his reply: play went on
            if self.game.result is not None:
                return
        if side != self.board.turn and self.game.turn.ambiguous is not None:
            # The opponent completes his reply while the capture is undecided: decide it,
            # then read his reply in the position it answers.
            self.commit(self.game.turn.ambiguous.shapes, t, guess=True)
            if self.game.result is None:
                self.sensing.explain(t)
        if side != self.board.turn:
            return  # the lever is already down on that side: nothing happens
        self.press.press(t, times)
        if self.press.unsettled(t, self.debouncer):  # judge once the board has settled
            self._defer_press(t)
            return
        plies = len(self.board.move_stack)
        for change in self.debouncer.flush():  # the hand has left: what is down is down
            self.sensing.settled(SettledChange(min(change.t, t), change.square, change.occupied))
        if self.game.result is not None or len(self.board.move_stack) != plies:
            return
        if self.game.faulty:  # the hand has left: a faulty square may now be where it went
            self.game.occupied = self.sensing.read(deciding=True)
            self.sensing.explain(t)
        match = self.game.turn.match
        if self.game.turn.ambiguous is not None:
            return  # the capture is complete; it waits for the capturing square
        if match is not None and infer.placed(self.game.turn, match) and not match.promoting:
            self.complete_match(t)
        else:  # (a promotion's selector may follow the press, within its grace)
            self._defer_press(t)

    def _defer_press(self, t: int) -> None:
        self.press.defer(t, self.board, self.game.occupied, self.debouncer)

    def decide_press(self, when: int) -> None:
        self.press.decision = None
        plies = len(self.board.move_stack)
        for change in self.debouncer.flush():
            self.sensing.settled(SettledChange(min(change.t, when), change.square, change.occupied))
        turn = self.game.turn
        if self.game.result is not None or len(self.board.move_stack) != plies or turn.ambiguous:
            return
        pressed = self.press.at if self.press.at is not None else when
        if turn.match is None and self.game.faulty:
            self.game.occupied = self.sensing.read(deciding=True)
            self.sensing.explain(when)
        if turn.match is None:
            taken = infer.landed_then_taken(turn, self.game.occupied, pressed)
            if taken is not None:
                shapes, lifted = taken
                chosen = infer.choose(turn, shapes, before=lifted,  # (that lift: no evidence)
                                      pressing=self.press.at is not None)
                if isinstance(chosen, Shape):
                    self.push(infer.with_promotion(turn, chosen, shapes), pressed)
                    if self.game.result is None:
                        self.sensing.explain(when)  # the lift was the opponent's: his turn now
                    return
            # The opponent's reply begun explains the board: then no sensor is suspect (a
            # stuck sensor is the reading of last resort: a change the game cannot explain).
            started = bool(turn.seen) and self.sensing.opponent_started(when)
            if not started:
                stuck = infer.one_flip(turn, self.game.occupied)
                if stuck is not None:
                    self.sensing.sensor_fault(pressed, stuck[0],
                                              "did not change when the move was made")
                    self.game.occupied = self.sensing.read(deciding=True)
                    self.sensing.explain(when)
                    started = (turn.match is None and bool(turn.seen)
                               and self.sensing.opponent_started(when))
            if started and (len(self.board.move_stack) != plies
                            or self.game.turn.ambiguous is not None):
                return  # the move stood at the press; what came since is the reply
        if turn.match is not None and not infer.placed(turn, turn.match):
            # A capture nobody saw land, or the move the opponent took before the press?
            taken = infer.landed_then_taken(turn, self.game.occupied, pressed, before_only=True)
            if taken is not None:
                shapes, lifted = taken
                chosen = infer.choose(turn, shapes, before=lifted, pressing=True)
                if isinstance(chosen, Shape):
                    self.push(infer.with_promotion(turn, chosen, shapes), pressed)
                    if self.game.result is None:
                        self.sensing.explain(when)  # the lift was the opponent's
                    return
            answered = self.reading.answered_before_the_press(
                turn, self.sensing.context(when), pressed) if len(turn.seen) > 1 else None
            if answered is not None:
                self.sensing.reply_begun(answered, when)
                return
        if turn.match is not None:
            self.complete_match(when)
        elif self.game.occupied != turn.position.occupied:
            verdict = self._made_with_others()
            made = verdict.legal if verdict is not None else None
            if verdict is not None and made is not None:
                self._complete_made(made, pressed, when, verdict.others_legal)
            else:
                self._illegal_move(pressed)
        elif infer.faulty_may_hide_a_move(turn.position, self.game.faulty):
            self.press.at = self.press.reported = None  # a move a faulty sensor hides?
            self.out.note(pressed, "the clock was pressed with no move seen, and a suspect "
                                   "sensor may hide one: no penalty; the turn goes on")
        elif self.illegal.press_without_move_counts:
            self._sanction(pressed, self.illegal.press_without_move(self.board.turn))
        else:
            self.press.at = self.press.reported = None  # nothing happens: the turn goes on

    def _made_with_others(self) -> Verdict | None:
        """At a press, the readings of a board that is not one legal move: a legal move
        made while other squares differ (pieces displaced: knocked over, or moved by
        someone after his own press, whichever side they belong to), or an illegal move.
        None when the board's readings are in doubt (a suspect sensor among the squares
        that differ, events lost while the link was down)."""
        game = self.game
        position = game.turn.position
        if ((position.occupied ^ game.occupied) & game.faulty or game.after_outage
                or game.from_scan):
            return None
        return self.reading.made(game.turn, game.occupied, pressed=True)

    def _complete_made(self, made: Shape, pressed: int, when: int,
                       uncertain: tuple[Shape, ...] = (), held: bool = False) -> None:
        """The press completes the legal move made (FIDE 6.2.1); the other squares that
        differ are pieces displaced (7.4), to be put back by whoever displaced them: the
        position-mismatch alert and the LEDs show where. No illegal move: the mover's own
        move is legal, and the displaced pieces are no part of it."""
        turn = self.game.turn
        base = turn.position.occupied
        if uncertain and not held and self._open_mirror(made, uncertain, pressed, when):
            return
        turn.knocked |= base & ~self.game.occupied & ~made.vacated  # (displaced, not touched)
        # (the pieces away: no evidence of the capture, and none of the next turns' moves;
        # what was lifted meanwhile is no touch)
        turn.displaced |= (made.after(base) ^ self.game.occupied) & ~(made.vacated | made.filled)
        self.displaced.lifted = set()
        self.commit(turn.position.full(made.after(base)), infer.made_at(turn, made, pressed),
                    uncertain=uncertain)
        if self.game.result is None and not held:
            self.sensing.explain(when)  # the displaced pieces, against the position after the move

    # ------------------------------------------------------------------ mirrored readings

    def _open_mirror(self, made: Shape, others: tuple[Shape, ...], pressed: int,
                     when: int) -> bool:
        """The press completes a move the sensors read as two legal moves as likely, whose
        positions differ (a piece knocked onto a square the moving piece could also have
        gone to, both come down alike): nothing at the press tells them apart, but what
        follows does: the knocked piece is put back, the moved one is not. So the clock
        goes over now, the LEDs ask, and the move waits (`Turn.mirror`) for the board to
        show one reading's position (`mirror_seen`) or for play to go on (then the flagged
        reading is recorded, uncertain). False where no position can tell them apart."""
        base = self.game.turn.position.occupied
        readings = (made, *others)
        afters = [shape.after(base) for shape in readings if shape.move]
        if len(afters) < len(readings) or len(set(afters)) < len(afters):
            return False  # (an illegal reading, or two moves to one position: no evidence)
        occupied = self.game.occupied
        squares = base ^ occupied
        for after in afters:
            squares |= base ^ after
        if self.press.switched is None:
            self.press.switched = self._switch_clock(self.board.turn, pressed)
        self.press.at = self.press.reported = None
        turn = self.game.turn
        turn.mirror = Mirror(readings, pressed, when, occupied, squares)
        turn.asking = tuple(sorted({s.move.to_square for s in readings}))
        self.out.dirty = True
        return True

    def mirror_seen(self, t: int) -> None:
        """The board changed while a move's readings are held open: where it shows one
        reading's position, that is the move (the pieces displaced around it put back).
        Displaced longer than the mismatch alert allows, the alert it held back is raised
        now, against the move decided, and clears at once (7.4)."""
        turn = self.game.turn
        mirror = turn.mirror
        assert mirror is not None
        base, occupied = turn.position.occupied, self.game.occupied
        for shape in mirror.readings:
            if shape.after(base) != occupied:
                continue
            turn.mirror = None
            if self.displaced.since is not None:  # (the alert held back: judged now)
                self.displaced.held = mirror.occupied
                self.sensing.release_mismatch(t, shape.after(base))
            self.out.note(t, f"{self.board.san(shape.move)}: the pieces displaced "
                             "around it were put back, which tells the move")
            turn.knocked |= base & ~mirror.occupied & ~shape.vacated  # (no touches)
            self.commit(turn.position.full(shape.after(base)),
                        infer.made_at(turn, shape, mirror.pressed))
            if self.game.result is None:
                self.sensing.explain(t)
            return

    def close_mirror(self, t: int) -> None:
        """Play goes on (or the game ends) before the board told the readings apart: the
        flagged reading is recorded, uncertain, as the press read it; what the sensors saw
        after the press is read after the move."""
        turn = self.game.turn
        mirror = turn.mirror
        assert mirror is not None
        turn.mirror = None
        carried = turn.split_at(mirror.opened)
        occupied, self.game.occupied = self.game.occupied, mirror.occupied
        try:
            self._complete_made(mirror.readings[0], mirror.pressed, t, mirror.readings[1:],
                                held=True)
        finally:
            self.game.occupied = occupied
        if self.game.result is None:
            turn = self.game.turn
            turn.adopt(carried, turn.position.occupied & ~occupied, t, self.debouncer.settle)
            turn.displaced &= ~self._squares_of(carried.events)
            self.sensing.explain(t)

    @staticmethod
    def _squares_of(events: dict[chess.Square, list[tuple[int, bool]]]) -> chess.Bitboard:
        found = 0
        for square in events:
            found |= chess.BB_SQUARES[square]
        return found

    def _switch_clock(self, mover: chess.Color, t: int) -> Switched:
        """The clock goes over for the move just completed (at the press, or where no
        press, when the move stood); an external clock's times are checked."""
        press, game_clock = self.press, self.game_clock
        at = press.at if press.at is not None else t
        lever = game_clock.lever
        now_ms = lever.now_ms  # (game_clock.now, inline)
        if now_ms is not None and now_ms * 1000 > at:
            at = now_ms * 1000
        reported = press.reported
        if reported is None:  # (no clock's times to check, most moves: game_clock.switch's
            # first step, inline; no fault, nothing trusted)
            return named_tuple(Switched, (lever.press(mover, at / 1_000_000), None, False))
        press.reported = None
        return self._checked_switch(mover, at, reported if reported[0] == press.at
                                    else None)  # (another press's times: none)

    def _checked_switch(self, mover: chess.Color, at: int,
                        reported: tuple[int, tuple[float, float]] | None) -> Switched:
        """The clock goes over at `at`, the external clock's times (`reported`) checked:
        a fault raised, a trusted reading clearing it."""
        switched = self.game_clock.switch(mover, at, reported)
        when = reported[0] if reported is not None else at
        if switched.fault is not None and "clock-fault" not in self.out.alerts:
            self.out.raise_(when, switched.fault)
        elif switched.trusted:
            self.out.clear(when, "clock-fault")
        return switched

    # ------------------------------------------------------------------ completing moves

    def complete_for(self, side: chess.Color, t: int, ending: bool = False) -> None:
        """A button of the side not to move ends the mover's turn if a move stands; one
        that ends the game (`ending`) also takes a capture nobody saw land, and the
        button's own side's move if one stands placed."""
        turn = self.game.turn
        if turn.mirror is not None:
            self.close_mirror(t)  # (the move the press completed stands, flagged)
            turn = self.game.turn
            if self.game.result is not None:
                return
        if side == self.board.turn:
            if ending and turn.match is not None and infer.placed(turn, turn.match):
                self.complete_match(t)
        elif turn.ambiguous is not None:
            self.commit(turn.ambiguous.shapes, t, guess=True)
        elif turn.match is not None and (ending or infer.placed(turn, turn.match)):
            self.complete_match(t, guess=True)

    def complete_match(self, t: int, guess: bool = False) -> None:
        match = self.game.turn.match
        assert match is not None
        self.commit(match.shapes, match.since, guess=guess)

    def commit(self, shapes: list[Shape], t: int, guess: bool = False,
               uncertain: tuple[Shape, ...] = ()) -> None:
        """Complete the move these shapes describe, or wait if the capture is ambiguous.
        `guess`: an unseen capture is decided now (the record then says so); `uncertain`:
        other readings of the turn, as likely."""
        turn = self.game.turn
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
            turn.ambiguous = Match(infer.distinct(shapes), t, self.game.now)
            turn.match = None
            self.out.dirty = True
            self.press.decision = None
            return
        if not isinstance(chosen, Shape):
            candidates = infer.distinct(shapes)
            chosen = candidates[0]
            self.out.note(t, f"capture square not seen: "
                             f"{chess.square_name(chosen.move.to_square)} assumed")
            uncertain = (*uncertain, *candidates[1:])  # (a guess: the record is flagged)
        self.push(infer.with_promotion(turn, chosen, shapes) if chosen.move.promotion
                  else chosen, t, uncertain)

    def resolve_ambiguity_by_touch(self, square: chess.Square) -> None:
        """The capturing piece lifted and put back on one candidate square decides it."""
        turn = self.game.turn
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
                self.push(infer.with_promotion(turn, shape, candidates), self.game.now)
                return

    def push(self, shape: Shape, t: int, uncertain: tuple[Shape, ...] = ()) -> None:
        """Make the move: the rules that judge it, the clock, the record, a new turn.
        `uncertain`: the other readings of the turn, as likely (the record is flagged, the
        LEDs ask)."""
        board, old, out, press, move = self.board, self.game.turn, self.out, self.press, shape.move
        mover = board.turn
        draws = self.draws
        if draws.declared_binds and (draws.declared or draws.claim_pending is not None):
            refused = draws.refuses(mover, move, old.released)
            if refused is not None:  # not the move declared with a claim (10.13 (2))
                self._abandon_attempt()
                self.apply(t, [refused])
                old.must_move = refused.squares[0]
                return
        self.game.from_scan = False
        self.sensing.health.explained(shape.vacated | shape.filled | (
            chess.BB_SQUARES[shape.captured] if shape.captured is not None else 0))
        if out.alerts:
            for code in SETTLED_BY_THE_NEXT_MOVE:
                out.clear(t, code)  # the previous move's irregularities are settled
        # (the move's own pieces were moved, not knocked: a reading on the way that took
        # one for knocked, the king in hand while the rook made a move alone, is superseded)
        touched, knocked = old.touched, old.knocked & ~shape.moved_from
        if touched:
            knocked |= self.reading.knocked(old, shape)
            if knocked:  # (an accident is no touch: 4.2.2)
                touched = [(when, sq) for when, sq in touched
                           if not knocked & chess.BB_SQUARES[sq]]
        displaced = self.displaced
        if displaced.lifted:  # (the move's own squares, its victim's: no touch out of turn)
            done = shape.vacated | shape.filled | (
                chess.BB_SQUARES[shape.captured] if shape.captured is not None else 0)
            displaced.lifted = {sq for sq in displaced.lifted if not done & chess.BB_SQUARES[sq]}
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
        others = [other for other in uncertain if other.move != move] if uncertain else None
        also = ", ".join(board.san(other.move) if other.move else "an illegal move"
                         for other in others) if others else ""
        san = board.san_and_push(move)
        if self.displaced.held is not None:  # (the alert held while the move was in doubt)
            self.sensing.release_mismatch(self.game.now, shape.after(old.position.occupied))
        switched, press.switched = press.switched, None
        if switched is None:
            switched = self._switch_clock(mover, t)
        press.at = None
        remaining, elapsed = switched.result if switched.result is not None else (None, None)
        plies = len(board.move_stack)
        if others:
            out.effects.append(MoveMade(t / 1_000_000, plies, move, san, remaining, elapsed,
                                        tuple(other.move for other in others)))
            out.note(t, f"uncertain: {san} recorded, but the sensors read as likely "
                        f"{also}; the LEDs show the squares: check the move")
        else:
            out.effects.append(MoveMade(t / 1_000_000, plies, move, san, remaining, elapsed))
        if draws.offer is not None or draws.offer_pending is not None:  # (else no offer)
            offer = draws.moved(mover)
            if offer is not None:
                out.note(*offer)
        press.decision = None
        # (the position a reply was read in is this one: its work is kept)
        # (in check or not: the SAN's suffix says, python-chess having looked to write it)
        turn = self.game.turn = Turn(Position(board, like=reply, in_check=san[-1] in "+#"), t)
        if others:  # (the squares of each reading blink until the board next changes)
            turn.asking = tuple(sorted({s.move.to_square for s in (shape, *others)
                                        if s.move}))
            out.dirty = True
        if old.displaced:  # (pieces displaced before, still away: still none of its moves)
            turn.displaced = old.displaced & (turn.position.occupied ^ self.game.occupied)
        if knocked:  # (put back by the hand that knocked them: no touch out of turn)
            turn.knocked_before = knocked & turn.position.occupied
        if self.game.faulty:
            self.game.occupied = self.sensing.read()
        if draws.claim_pending is not None:
            self._judge_pending_claim(t, mover)
            if self.game.result is not None:
                return
        if old.selections and not move.promotion:
            # Set after this move stood on the board: the opponent's choice, made early.
            turn.selections = [(when, p) for when, p in old.selections if when > t]
        # (the material is looked at after the game's first move, then when it changes)
        ended = self.endings.after_move(turn.position, shape if plies > 1 else None, goes_on)
        if ended is not None:
            self.game_over(t, *ended)

    # ------------------------------------------------------------------ irregular attempts

    def _illegal_move(self, t: int, captured: tuple[chess.Square, ...] = ()) -> None:
        """`captured`: a square the piece was seen capturing on, unseen in the occupancy."""
        position = self.game.turn.position
        if self.game.after_outage or self.game.from_scan:
            self._unjudged(t, "moves were made while the board was not connected and its "
                              "scan does not tell which")
            return
        if (position.occupied ^ self.game.occupied) & self.game.faulty or infer.faulty_may_hide_a_move(
                position, self.game.faulty):
            self._unjudged(t, "a suspect sensor may be why the board shows no legal move")
            return
        own = position.occupied & ~self.game.occupied & position.board.occupied_co[
            position.board.turn]
        finding, must_move = self.illegal.attempt(
            position, self.game.occupied, captured or infer.landings_of(self.game.turn, own),
            self.reading.first_lifted(self.game.turn))
        self._sanction(t, finding)
        if must_move is not None:
            self.game.turn.must_move = must_move

    def _unjudged(self, t: int, why: str) -> None:
        """A press on a board the referee cannot judge fairly: no penalty; the position is
        to be restored (the LEDs show how), and play goes on from it."""
        self._abandon_attempt()
        if "position-mismatch" not in self.out.alerts:
            self.sensing.mismatch(t)
            self.out.note(t, f"{why}: restore the position shown (no penalty)")

    def _abandon_attempt(self) -> None:
        """The press did not complete a move: the mover's clock runs on, and what stands on
        the board is not a move, however it looks; the replacement move starts afresh."""
        self.lateness.seen(self.board, self.game.turn.touched)  # (the touches are forgotten)
        self.press.at = self.press.reported = None
        self.game.turn.abandon()

    def _sanction(self, t: int, finding: Finding) -> None:
        """A completed illegal move (7.5.1) or a press without a move (7.5.3)."""
        self._abandon_attempt()
        self.apply(t, self.illegal.sanction(self.board, finding))

    # ------------------------------------------------------------------ game ends and draws

    def late(self, when: int) -> None:
        """The default time passed: the side to move at the start loses if he has not come
        (the older Laws' 10.15)."""
        if not self.lateness.seen(self.board, self.game.turn.touched):
            self.apply(when, self.lateness.expired(self.board))

    def flag(self, when: int) -> None:
        """The side to move ran out of time (FIDE 6.9), unless a mate already stood."""
        if self.game.turn.mirror is not None:  # (the move the press completed, first)
            self.close_mirror(when)
            if self.game.result is not None:
                return
        match = self.game.turn.match
        if match is not None and self.placement_ends_game(match):
            self.complete_match(match.since, guess=True)  # 5.1.1: the mate ended the game
            return
        side = self.game_clock.running_side
        assert side is not None
        self.apply(when, self.endings.flag(self.board, side))

    def placement_ends_game(self, match: Match) -> bool:
        """Whether the move standing ends the game. A piece in hand is not yet a capture:
        only a piece seen arriving counts, and where it was seen landing says which of
        the captures it is (not every capture its lift allows need end the game)."""
        landed = infer.landings(self.game.turn, match)
        if not (match.placed or landed):
            return False
        return self.ends_game(landed or match.shapes)

    def ends_game(self, shapes: list[Shape]) -> bool:
        """Whichever of these moves was made, the game is over after it."""
        return all(self.endings.ends_game(self.game.turn.replies_to(s)) for s in shapes)

    def goes_on(self, match: Match) -> bool:
        """Whichever of the match's moves is made, the game surely goes on (the cheap
        pre-check: most moves need no look at the position after them)."""
        board, cannot_end = self.game.turn.position.board, self.endings.cannot_end
        goes_on = True
        for shape in match.shapes:  # (a loop: most matches have one)
            if not cannot_end(board, shape.move):
                goes_on = False
                break
        match.goes_on = goes_on
        return goes_on

    def end_by_placement(self, when: int) -> None:
        """A mating or drawing move ends the game without a press (FIDE 6.2.1)."""
        match = self.game.turn.match
        assert match is not None
        match.ends_game = not self.goes_on(match) and self.placement_ends_game(match)
        if match.ends_game:
            self.complete_match(when, guess=True)
            game = self.game
            if game.result is not None and game.board.move_stack and self.move_changed.enforced:
                game.moved_on = MovedOn(game.board, game.sensed)

    def after_the_end(self, change: SettledChange) -> None:
        """A settled change after a game ended by a move left standing: that move's piece
        moved on to another of its squares is flagged (4.7), never silently dropped."""
        watch = self.game.moved_on
        assert watch is not None
        t, square, occupied = change
        seen = watch.settled(square, occupied)
        if seen is True:
            return
        self.game.moved_on = None
        if isinstance(seen, Finding):
            self.out.raise_(t, seen)

    def claim(self, t: int, side: chess.Color) -> None:
        self.complete_for(side, t)
        if self.game.result is not None:
            return
        turn = self.game.turn
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
                self.complete_match(t)
            self.game_over(t, "1/2-1/2", draw)
        elif choice is None and not self.draws.undecided:
            # 9.2.1: the claim may come first and the move it declares after, made on the
            # board without pressing the clock: judged once that move stands.
            self.draws.claim_pending = t
        else:
            self.apply(t, self.draws.wrong(side, move))

    def _judge_pending_claim(self, t: int, claimant: chess.Color) -> None:
        """The claimant's declared move has been made: judge the claim on it (9.2.1)."""
        self.draws.claim_pending = None
        draw = self.draws.claimable(self.board)
        if draw is not None:
            self.game_over(t, "1/2-1/2", draw)
        else:
            self.apply(t, self.draws.wrong(claimant))
