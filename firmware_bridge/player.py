"""A person at the board, playing a computer: the emulator's player mode.

The person plays one side with moves of his own choosing (random legal moves with a
seed, or a weak engine) and makes, for the computer, the moves the LEDs show him. He
knows nothing of the referee: he reads only the LED frames the host sends, by their
documented meaning (README "Playing a computer"):

- the status LEDs say whose turn it is and what the computer is doing (thinking, its
  move shown, a hint shown), and the piece a shown promotion makes;
- a shown move: the moving piece's square steady blue, its destination steady green or
  red (a capture), castling's rook blinking, the pawn taken en passant red;
- blinking green and red: where pieces are missing and extra (a wrong execution, a
  takeback); fast yellow: the squares of a capture the board could not tell apart.

His hands are the simulator's (board_ctl.simulate.render.Renderer): bounce, slides,
both capture orders, both castling styles, promotions with the selector. Everything he
does is a list of timed events for the emulator to play; `Person.step(now)` decides the
next ones from the latest frame.

A game resumed after the service (and with it the emulator) was stopped: the emulator's
pieces stand where the game left them (a real board keeps them through a power cut), and
he remembers the game (`memory`: its start, its moves and the pieces he had touched in
the turn under way, as any player knows the game he was playing). When the LEDs show it
he puts back what they guide him to (blinking green: a piece missing, red: one too many;
a piece that was in his hand, or the whole position if the pieces were set up otherwise)
and plays on, moving the piece he had touched. The LEDs tell
him whether the computer's last move was made before the stop (no move shown: the whole
game) or is still to be made (shown: the game but that move).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import chess
import chess.pgn

from board_ctl.core import events as ev
from board_ctl.core.effects import Blink, Colour, LedFrame, Remote
from board_ctl.sensorlog import parse_line
from board_ctl.simulate.render import TICKS, Renderer, RenderStyle
from firmware_bridge.emulator import Emulator
from board_ctl.words import count

log = logging.getLogger(__name__)

Chooser = Callable[[chess.Board], chess.Move]


@dataclass(frozen=True)
class Remembered:
    """What he remembers of a game resumed: its start, its moves, and the pieces touched
    in the turn under way (touch-move binds him to them)."""

    fen: str
    moves: list[chess.Move]
    touched: list[chess.Square] = field(default_factory=list)


Memory = Callable[[], Remembered | None]  # asked once, when he first sees a game
QUIET = 0.4  # s (game time) the board must have been left alone before he reads it again
FIX_AFTER = 3.0  # s a shown move stays unaccepted before he corrects what the LEDs show
HINT_PATIENCE = 20.0  # s he waits for a hint he asked for (a computer thinks, a disk syncs)


def random_chooser(rng: random.Random) -> Chooser:
    def choose(board: chess.Board) -> chess.Move:
        return rng.choice(sorted(board.legal_moves, key=chess.Move.uci))
    return choose


@dataclass
class Script:
    """Buttons the person presses, by his own move number (1 = his first move)."""

    hint: set[int] = field(default_factory=set)  # ask for a hint, then play it
    takeback: set[int] = field(default_factory=set)  # after this move and the reply: back
    offer: set[int] = field(default_factory=set)  # offer a draw with this move
    resign: int | None = None  # resign instead of making this move
    mistakes: set[int] = field(default_factory=set)  # computer moves (its n-th) made wrong first

    @classmethod
    def parse(cls, text: str) -> Script:
        """``hint@3,takeback@5,offer@10,resign@20,mistake@2`` (numbers: his moves;
        mistake: the computer's n-th move is first put on a wrong square)."""
        script = cls()
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, _, number = item.partition("@")
            if not number.isdigit():
                raise ValueError(f"script item {item!r}: NAME@N with N a move number")
            n = int(number)
            if name == "hint":
                script.hint.add(n)
            elif name == "takeback":
                script.takeback.add(n)
            elif name == "offer":
                script.offer.add(n)
            elif name == "resign":
                script.resign = n
            elif name == "mistake":
                script.mistakes.add(n)
            else:
                raise ValueError(f"script item {item!r}: hint, takeback, offer, resign or "
                                 "mistake")
        return script


@dataclass(frozen=True)
class Read:
    """What a frame tells the person."""

    over: bool
    to_move: chess.Color | None
    remote: Remote
    promotion: chess.PieceType | None
    steady: dict[chess.Square, Colour]
    slow: dict[chess.Square, Colour]
    fast: frozenset[chess.Square]

    @classmethod
    def of(cls, frame: LedFrame) -> Read:
        status = frame.status
        to_move = (chess.WHITE if status.white_to_move else
                   chess.BLACK if status.black_to_move else None)
        steady = {s.square: s.colour for s in frame.squares if s.blink == Blink.STEADY}
        slow = {s.square: s.colour for s in frame.squares if s.blink == Blink.SLOW}
        fast = frozenset(s.square for s in frame.squares if s.blink == Blink.FAST)
        return cls(status.game_over, to_move, status.remote, status.promotion, steady, slow,
                   fast)

    def shown_move(self, board: chess.Board) -> chess.Move | None:
        """The computer's move the squares show (steady lights), if one of board's fits."""
        return _decode(board, self.steady, self.promotion)

    def hint(self, board: chess.Board) -> chess.Move | None:
        return _decode(board, self.slow, None)

    def differences(self) -> tuple[list[chess.Square], list[chess.Square]]:
        """(missing, extra): blinking green and red squares."""
        return ([sq for sq, colour in self.slow.items() if colour == Colour.GREEN],
                [sq for sq, colour in self.slow.items() if colour == Colour.RED])


def _decode(board: chess.Board, lit: dict[chess.Square, Colour],
            promotion: chess.PieceType | None) -> chess.Move | None:
    """The legal move whose origin is lit blue and destination green or red."""
    found = []
    for move in board.legal_moves:
        if lit.get(move.from_square) != Colour.BLUE:
            continue
        to = move.to_square
        if board.is_castling(move) and board.piece_type_at(to) == chess.ROOK:
            to = chess.square(6 if to > move.from_square else 2, chess.square_rank(to))
        if lit.get(to) not in (Colour.GREEN, Colour.RED):
            continue
        if move.promotion and move.promotion != (promotion or chess.QUEEN):
            continue
        found.append(move)
    return found[0] if len(found) == 1 else None


class Person:
    """The person at the board. Call `frame()` with every LED frame received and
    `step(now)` often; both return the events to play (times in the game's seconds)."""

    def __init__(self, fen: str = chess.STARTING_FEN, *, seed: int = 0,
                 chooser: Chooser | None = None, use_clock: bool = False,
                 side: chess.Color | None = None, script: Script | None = None,
                 style: RenderStyle | None = None, plays_on_after: float | None = None,
                 memory: Memory | None = None, occupied: chess.Bitboard | None = None
                 ) -> None:
        """`occupied`: where the pieces stand when he sits down (a resumed game's, as
        the board kept them), if not in the position `fen`."""
        self.rng = random.Random(seed)
        # A resumed game he remembers, asked for when he first sees a game (see the
        # module's docstring); what it gave until the LEDs have shown where it stands.
        self.memory = memory
        self.remembered: Remembered | None = None
        self.touched: list[chess.Square] = []  # bound by touch-move for his next move
        # The computer's move made, the pieces as the LEDs show, and the LEDs unchanged for
        # so many seconds (the link down, the service gone): he plays his own move all the
        # same, as a player who knows it is his turn would. None: he waits for the LEDs.
        self.plays_on_after = plays_on_after
        self.start_fen = chess.Board(fen).fen()
        self.chooser = chooser or random_chooser(self.rng)
        self.use_clock = use_clock
        self.fixed_side = side
        self.script = script or Script()
        base = style or RenderStyle(think=(0.5, 4.0), long_think_prob=0.0)
        self.style = replace(base, use_clock=use_clock,
                             # without a clock a capture must be seen landing (README)
                             capture_styles=base.capture_styles if use_clock
                             else (*base.capture_styles[:3], 0.0))
        game = chess.pgn.Game()
        game.setup(chess.Board(fen))
        self.hands = Renderer(game, seed, self.style)
        self.hands.lines = []
        if occupied is not None:
            self.hands.occupied = set(chess.SquareSet(occupied))
        self.games = 0  # games finished
        self.played: list[chess.Move] = []  # this game's moves, both sides, as he made them
        self.log: list[str] = []  # what he did, for the test's report
        self._new_game(fen)

    # --- state

    def _new_game(self, fen: str) -> None:
        self.board = chess.Board(fen)
        self.hands.board = self.board.copy()
        self.side = self.fixed_side
        self.started = False
        self.over = False
        self.busy_until = 0.0
        self.acted_at = 0.0
        self.fix_at = 0.0  # when a shown move he made and the LEDs still show is corrected
        self.my_moves = 0
        self.computer_moves = 0
        self.waiting_for: str = ""  # "hint", "restore", "accept", "result" (he resigned)
        self.mine_pending: chess.Move | None = None  # my move made, not yet taken
        self.executed: chess.Move | None = None  # the computer's move I made, not yet taken
        self.wrong_at: chess.Square | None = None
        self.read: Read | None = None
        self.read_at = 0.0
        self.stale: Read | None = None  # the frozen LEDs he played on from
        self.played = []

    # --- input

    def frame(self, frame: LedFrame, now: float) -> list[ev.Event]:
        self.read = Read.of(frame)
        self.read_at = now
        return self.step(now)

    def step(self, now: float) -> list[ev.Event]:
        read = self.read
        if (read is None or read is self.stale or now < self.busy_until
                or now - self.acted_at < QUIET):
            return []
        if read.to_move is None and not read.over:
            return []  # the start position is being set up: not a game yet
        if not self.started and self.memory is not None:
            self.remembered, self.memory = self.memory(), None
        if self.remembered is not None:
            events = self._resume(read, now)
            if events:
                return events
            if self.remembered is not None:
                return []  # the LEDs do not show it yet
        self.started = True
        if read.over:
            return self._game_over(read, now)
        if read.remote == Remote.SHOWN:
            return self._computer_move(read, now)
        if read.remote == Remote.THINKING:
            self.stale = None  # his move was taken
            if self.side is None and read.to_move is not None:
                self.side = not read.to_move
            self.mine_pending = None
            self.executed = None
            return []
        if read.to_move is not None and self.side is None:
            self.side = read.to_move  # nothing thinks, nothing is shown: it is my move
        if read.to_move != self.side:
            return []
        self.executed = None
        if self.mine_pending is not None:
            return self._my_move_unanswered(read, now)
        if self.waiting_for == "restore":
            if read.slow:
                return []  # the LEDs still guide the pieces back
            self.waiting_for = ""
        return self._my_turn(read, now)

    # --- a game resumed

    def _resume(self, read: Read, now: float) -> list[ev.Event]:
        """The game he remembers, as the LEDs show it: the whole game, or the game but its
        last move when that is the computer's move they show (steady) to be made. Once
        they guide the pieces there (where they stand, less the blinking red squares,
        plus the blinking green, the shown move's squares aside: before the board's scan
        is judged they guide nowhere), he sets that position up (as one who knows it:
        every square, the shown move's too) and takes it as his board. Nothing fitting
        for FIX_AFTER s of unchanged LEDs: they show another game (the service started a
        new one): he forgets the old one."""
        assert self.remembered is not None
        fen, moves = self.remembered.fen, self.remembered.moves
        missing, extra = read.differences()
        occupied = set(self.hands.occupied)
        target = (occupied - set(extra)) | set(missing)
        # (the squares of his own move under way are his hands' business: the LEDs do
        # not guide a piece he had lifted)
        judged = set(chess.SQUARES) - set(read.steady) - set(self.remembered.touched)
        board = chess.Board(fen)
        for move in moves:
            board.push(move)
        if read.remote == Remote.SHOWN and moves:
            before = board.copy()
            before.pop()
            if read.shown_move(before) == moves[-1]:
                board = before  # the computer's last move, to be made
        position = set(chess.SquareSet(board.occupied))
        found = board if position & judged == target & judged else None
        if found is None:
            if now - self.read_at >= FIX_AFTER:
                self.remembered = None
                self.log.append("the LEDs show another game than the one I remember")
            return []
        if found.turn == self.side or self.side is None and found.turn == read.to_move:
            self.touched = list(self.remembered.touched)
        self.remembered = None
        self.board = found
        self.played = list(found.move_stack)
        side = (read.to_move if read.remote == Remote.SHOWN else
                (not read.to_move) if read.remote == Remote.THINKING else read.to_move)
        if self.side is None and side is not None:
            self.side = side
        if self.side is not None:  # (his script counts his moves and the computer's)
            first = chess.Board(fen).turn
            mine = sum(1 for ply in range(len(found.move_stack))
                       if (first if ply % 2 == 0 else not first) == self.side)
            self.my_moves, self.computer_moves = mine, len(found.move_stack) - mine
        puts, takes = sorted(position - occupied), sorted(occupied - position)
        self.log.append(f"resumed the game I remember after {count(len(found.move_stack), 'move')}"
                        + (f": put the pieces back ({' '.join(map(chess.square_name, takes))}"
                           f" -> {' '.join(map(chess.square_name, puts))})"
                           if puts or takes else ""))

        def hands() -> None:
            targets = list(puts)
            for source in takes:  # each piece off a red square onto a green one
                self.hands.lift(source)
                self.hands.pause(*self.style.hand)
                if targets:
                    target = min(targets, key=lambda sq: (chess.square_distance(source, sq),
                                                          sq))
                    targets.remove(target)
                    self.hands.place(target)
                self.hands.pause(0.2, 0.5)
            for target in targets:  # and from the box, if more are missing
                self.hands.place(target)
                self.hands.pause(0.2, 0.5)
        events = self._hands(now, hands) if puts or takes else []
        self.hands.board = found.copy()
        return events

    # --- the computer's moves

    def _computer_move(self, read: Read, now: float) -> list[ev.Event]:
        if self.mine_pending is not None:
            self.mine_pending = None  # mine was taken: the computer has answered
        if self.side is None and read.to_move is not None:
            self.side = read.to_move  # it is my move once its move is made
        if self.executed is not None:
            if (self.plays_on_after is not None and self.read_at + self.plays_on_after <= now
                    and self._as_shown(read)):
                self.executed = None
                self.stale = read  # what they show is old news until they change
                self.log.append("played on: the LEDs did not change")
                return self._my_turn(read, now)
            if now >= self.fix_at:
                return self._fix(read, now)
            return []
        move = read.shown_move(self.board)
        if move is None:
            return []
        self.computer_moves += 1
        self.executed = move
        if self.computer_moves in self.script.mistakes:
            events = self._wrongly(move, now)
            if events:
                return events
        events = self._hands(now, lambda: self._execute(move), react=True)
        self.fix_at = self.busy_until + FIX_AFTER
        return events

    def _execute(self, move: chess.Move, last: bool = False) -> None:
        first = len(self.hands.lines)
        san = self.board.san(move)
        style = self.hands.play(move)
        self.log.append(f"made the computer's {'last move ' if last else ''}{san} ({style})")
        # no selector for the computer's promotion: the LEDs said which piece
        self.hands.lines[first:] = [x for x in self.hands.lines[first:] if x["ev"] != "promote"]
        self._push(move)

    def _wrongly(self, move: chess.Move, now: float) -> list[ev.Event]:
        """A quiet move put down one square off, to be corrected from the LEDs."""
        board = self.board
        if board.is_castling(move) or board.is_capture(move) or move.promotion:
            return []
        targets = [sq for sq in chess.SquareSet(chess.BB_KING_ATTACKS[move.to_square])
                   if not board.occupied & chess.BB_SQUARES[sq] and sq != move.from_square]
        if not targets:
            return []
        wrong = self.rng.choice(sorted(targets))
        self.wrong_at = wrong
        self.log.append(f"made the computer's {board.san(move)} on "
                        f"{chess.square_name(wrong)} instead of {chess.square_name(move.to_square)}")

        def hands() -> None:
            self.hands.lift(move.from_square)
            self.hands.pause(*self.style.hand)
            self.hands.place(wrong)
            self._push(move)
        events = self._hands(now, hands, react=True)
        self.fix_at = self.busy_until + 1.0  # he looks at the LEDs again a second later
        return events

    def _as_shown(self, read: Read) -> bool:
        """The pieces stand where the LEDs show: nothing for him to correct."""
        missing, extra = read.differences()
        occupied = self.hands.occupied
        return (all(sq not in occupied for sq in extra) and all(sq in occupied for sq in missing)
                and all((sq in occupied) == (colour != Colour.BLUE)
                        for sq, colour in read.steady.items()))

    def _fix(self, read: Read, now: float) -> list[ev.Event]:
        """Put the pieces where the LEDs say: extra (red, blinking) to missing (green)."""
        missing, extra = read.differences()
        occupied = self.hands.occupied
        missing += [sq for sq, colour in read.steady.items()
                    if colour == Colour.GREEN and sq not in occupied]
        missing = [sq for sq in dict.fromkeys(missing) if sq not in occupied]
        extra = [sq for sq in extra if sq in occupied]
        if not extra or not missing:
            self.fix_at = now + FIX_AFTER
            return []
        pairs = []
        for source in sorted(extra):
            if not missing:
                break
            target = min(missing, key=lambda sq: (chess.square_distance(source, sq), sq))
            missing.remove(target)
            pairs.append((source, target))
        self.log.append("corrected " + ", ".join(
            f"{chess.square_name(a)}->{chess.square_name(b)}" for a, b in pairs))

        def hands() -> None:
            for source, target in pairs:
                self.hands.lift(source)
                self.hands.pause(*self.style.hand)
                self.hands.place(target)
                self.hands.pause(0.2, 0.5)
        self.wrong_at = None
        events = self._hands(now, hands)
        self.fix_at = self.busy_until + FIX_AFTER
        return events

    # --- my moves

    def _my_turn(self, read: Read, now: float) -> list[ev.Event]:
        n = self.my_moves + 1
        assert self.side is not None
        if n - 1 in self.script.takeback:
            self.script.takeback.discard(n - 1)
            return self.take_back(now)
        if self.waiting_for == "result":
            return []  # he resigned: the game is over for him, whatever the LEDs show yet
        if self.script.resign == n:
            self.script.resign = None
            self.log.append("resigned")
            self.waiting_for = "result"
            return self._button(now, "resign", side=_NAMES[self.side])
        if n in self.script.hint and self.waiting_for != "hint":
            self.script.hint.discard(n)
            self.waiting_for = "hint"
            self.log.append("asked for a hint")
            return self._button(now, "hint")
        move = None
        if self.waiting_for == "hint":
            move = read.hint(self.board) if read.remote == Remote.HINT else None
            if move is None:
                if now - self.acted_at < HINT_PATIENCE:
                    return []  # the computer is thinking about it
                self.log.append("got no hint")
            else:
                self.log.append(f"played the hint {self.board.san(move)}")
            self.waiting_for = ""
        if move is None and self.touched:
            move = self._touched_move()
        if move is None:
            move = self.chooser(self.board.copy())
        self.my_moves += 1
        self.mine_pending = move
        offer = n in self.script.offer
        san = self.board.san(move)

        def hands() -> None:
            self.hands.think()
            mover = self.board.turn
            style = self.hands.play(move)
            self.log.append(f"played {san} ({style})" + (" offering a draw" if offer else ""))
            self._push(move)
            if offer:
                self.hands.pause(0.2, 0.6)
                self.hands.emit("draw-offer", side=_NAMES[mover])
            if self.use_clock and not self.board.is_game_over(claim_draw=False):
                self.hands.pause(*self.style.clock_delay)
                self.hands.clock(mover)
        return self._hands(now, hands)

    def _touched_move(self) -> chess.Move | None:
        """His move bound by the pieces he touched before the stop (FIDE 4.3): his first
        touched piece, capturing the enemy piece he touched if it can; else a capture
        of that enemy piece; None when neither can move (he is free)."""
        board, touched = self.board, self.touched
        self.touched = []
        own = [sq for sq in touched if board.color_at(sq) == board.turn][:1]
        enemy = [sq for sq in touched if board.color_at(sq) == (not board.turn)][:1]
        legal = sorted(board.legal_moves, key=chess.Move.uci)
        for options in ([m for m in legal if m.from_square in own and m.to_square in enemy],
                        [m for m in legal if m.from_square in own],
                        [m for m in legal if m.to_square in enemy]):
            if options:
                move = self.rng.choice(options)
                self.log.append(f"bound by touch-move to {board.san(move)}")
                return move
        return None

    def _my_move_unanswered(self, read: Read, now: float) -> list[ev.Event]:
        """My move is on the board and not taken yet (release, or an undecided capture)."""
        move = self.mine_pending
        assert move is not None
        if self.stale is not None and read is not self.stale:
            # He moved while the LEDs were frozen (the link down) and they still show his
            # move to be made. With a clock, his press was lost: he presses again. Without,
            # a capture made then cannot be seen: he straightens the capturing piece.
            self.stale = None
            if self.use_clock:
                side = self.side
                self.log.append("pressed the clock again: the LEDs still showed my move")
                return self._hands(now, lambda: self.hands.clock(side))
            before = self.board.copy(stack=1)
            before.pop()
            if before.is_capture(move) and not before.is_en_passant(move):
                self.log.append("straightened the capturing piece: the LEDs still showed my "
                                "move")
                return self._show_capture(move.to_square, now)
        if read.fast and move.to_square in read.fast:
            # a capture the board could not tell: show it
            self.log.append(f"showed the capture on {chess.square_name(move.to_square)}")
            return self._show_capture(move.to_square, now)
        return []

    def _show_capture(self, square: chess.Square, now: float) -> list[ev.Event]:
        """Lift the capturing piece and put it down again where it stands."""
        def hands() -> None:
            self.hands.lift(square)
            self.hands.pause(0.3, 0.8)
            self.hands.place(square)
        return self._hands(now, hands)

    def _game_over(self, read: Read, now: float) -> list[ev.Event]:
        if read.remote == Remote.SHOWN and self.executed is None:
            move = read.shown_move(self.board)
            if move is not None:  # its last move, mate perhaps: made all the same
                self.executed = move
                return self._hands(now, lambda: self._execute(move, last=True), react=True)
        if not self.over:
            self.over = True
            self.games += 1
            self.log.append("game over")
        return []

    def set_up_again(self, now: float) -> list[ev.Event]:
        """The pieces back to the start position for the next game."""
        target = chess.Board(self.start_fen).occupied
        occupied = set(self.hands.occupied)
        missing = [sq for sq in chess.SquareSet(target) if sq not in occupied]
        extra = [sq for sq in occupied if not target & chess.BB_SQUARES[sq]]

        def hands() -> None:
            for sq in sorted(extra):
                self.hands.lift(sq)
                self.hands.pause(0.2, 0.5)
            for sq in sorted(missing):
                self.hands.place(sq)
                self.hands.pause(0.2, 0.5)
        events = self._hands(now, hands)
        self._new_game(self.start_fen)
        self.busy_until = max(self.busy_until, events[-1].t if events else now)
        return events

    def take_back(self, now: float) -> list[ev.Event]:
        """Press takeback and undo the last full move by hand (he knows what it was)."""
        undone: list[tuple[chess.Board, chess.Move]] = []
        board = self.board.copy()
        while board.move_stack:
            move = board.pop()
            undone.append((board.copy(), move))
            if board.turn == self.side:
                break
        self.log.append("took back " + " ".join(b.san(m) for b, m in reversed(undone)))

        def hands() -> None:
            self.hands.emit("takeback")
            self.hands.pause(0.5, 1.0)
            for before, move in undone:
                after = before.copy()
                after.push(move)
                gone = chess.SquareSet(after.occupied & ~before.occupied)
                back = chess.SquareSet(before.occupied & ~after.occupied)
                swapped = move.to_square if before.occupied & after.occupied & \
                    chess.BB_SQUARES[move.to_square] else None
                for sq in gone:
                    self.hands.lift(sq)
                    self.hands.pause(0.2, 0.6)
                if swapped is not None:  # the captured piece back in place of the captor
                    self.hands.lift(swapped)
                    self.hands.pause(0.3, 0.8)
                    self.hands.place(swapped)
                    self.hands.pause(0.2, 0.6)
                for sq in back:
                    self.hands.place(sq)
                    self.hands.pause(0.2, 0.6)
            for _ in undone:
                self.board.pop()
                self.played.pop()
            self.hands.board = self.board.copy()
        self.waiting_for = "restore"
        self.mine_pending = None
        self.executed = None
        return self._hands(now, hands)

    # --- hands

    def _push(self, move: chess.Move) -> None:
        self.board.push(move)
        self.played.append(move)
        self.hands.board = self.board.copy()

    def _button(self, now: float, name: str, **fields: str) -> list[ev.Event]:
        def hands() -> None:
            self.hands.pause(0.3, 1.0)
            self.hands.emit(name, **fields)
        return self._hands(now, hands)

    def _hands(self, now: float, act: Callable[[], None], react: bool = False) -> list[ev.Event]:
        """Run `act` on the hands from `now` on; the events it made, in time order."""
        hands = self.hands
        hands.tick = max(hands.tick, round(now * TICKS), hands.last_tick + 1)
        if react:
            hands.pause(0.4, 1.5)  # a moment to see the LEDs
        first = len(hands.lines)
        act()
        lines = hands.lines[first:]
        del hands.lines[first:]
        events = [_event(line) for line in lines]
        end = max((e.t for e in events), default=now)
        self.busy_until = end
        self.acted_at = end
        return events


_NAMES = {chess.WHITE: "white", chess.BLACK: "black"}


def _event(line: dict[str, object]) -> ev.Event:
    import json

    item = parse_line(json.dumps(line), 0)
    assert isinstance(item, ev.Event), line
    return item



# ---------------------------------------------------------------- in the emulator


def engine_chooser(name: str, seed: int) -> tuple[Chooser, Callable[[], None]]:
    """A weak engine's moves (Skill Level 0, a few ms a move): (choose, close)."""
    import chess.engine

    from board_ctl.opponent.engine import find_engine

    engine = chess.engine.SimpleEngine.popen_uci(find_engine(name), setpgrp=True)
    options = {"Skill Level": 0} if "Skill Level" in engine.options else {}
    if "Threads" in engine.options:
        options["Threads"] = 1
    engine.configure(options)
    rng = random.Random(seed)

    def choose(board: chess.Board) -> chess.Move:
        result = engine.play(board, chess.engine.Limit(time=0.02 + 0.03 * rng.random()))
        return result.move if result.move is not None else random_chooser(rng)(board)
    return choose, engine.quit


NEXT_GAME_AFTER = 3.0  # s (game time) after a result before he sets the pieces up again


class PlayerEmulator(Emulator):
    """The emulator with a person playing instead of a log (`board-emulator --play`)."""

    person: Person
    games: int = 1  # 0: until stopped

    def show_leds(self, frame: LedFrame, now: float) -> None:
        super().show_leds(frame, now)
        t = self.log_time(now)
        if t is not None:
            self.script.extend(self.person.frame(frame, t))

    def _play(self, now: float) -> None:
        t = self.log_time(now)
        if t is not None:
            person = self.person
            self.script.extend(person.step(t))
            if (person.over and (self.games == 0 or person.games < self.games)
                    and t >= person.busy_until + NEXT_GAME_AFTER):
                self.script.extend(person.set_up_again(t))
        super()._play(now)

    def _finished(self) -> bool:
        return (self.games != 0 and self.person.games >= self.games
                and self.origin is not None and self.next >= len(self.script)
                and self._yanked_until is None)

    def _wake(self, now: float) -> float:
        return min(super()._wake(now), now + 0.02)  # he looks at the board often
