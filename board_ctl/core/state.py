"""The game state the referee's parts share (`referee.py` holds them: `sensing.py` reads the
board, `reading.py` explains a turn, `completion.py` completes moves, `remoteplay.py` plays
a remote side).

What changes as the game goes on (the turn, the result, the board as read, the time) lives
here, in one place; the objects every part uses and never replaces (the python-chess board,
the outbox, the press, the clock, the rules) are made here too, and each part keeps the ones
it uses.
"""

from __future__ import annotations

import chess

from board_ctl.core.debounce import DEFAULT_SETTLE, Debouncer
from board_ctl.core.effects import GameOver
from board_ctl.core.gameclock import GameClock
from board_ctl.core.outbox import Outbox
from board_ctl.core.position import Position
from board_ctl.core.presses import Press
from board_ctl.core.profiles import PROFILES, Profile
from board_ctl.core.rules.claims import Draws
from board_ctl.core.rules.completed import MoveChanged, MovedOn
from board_ctl.core.rules.displaced import Displaced
from board_ctl.core.rules.endings import Endings
from board_ctl.core.rules.illegal import IllegalMoves
from board_ctl.core.rules.lateness import Lateness
from board_ctl.core.rules.remote import RemoteState
from board_ctl.core.rules.touch import TouchMove
from board_ctl.core.sensorhealth import SensorHealth
from board_ctl.core.timebase import us
from board_ctl.core.timecontrol import TimeControl
from board_ctl.core.turn import Turn


class GameState:
    __slots__ = ("profile", "remote", "remote_on", "debug", "board", "start_fen", "game_clock",
                 "debouncer", "health", "sensed", "occupied", "faulty", "turn", "result", "out",
                 "touch_move", "move_changed", "illegal", "displaced", "draws", "endings", "now",
                 "after_outage", "from_scan", "press", "changing", "clock_in_use", "lateness",
                 "moved_on")

    def __init__(self, fen: str = chess.STARTING_FEN, profile: Profile = PROFILES["fide"],
                 settle: float = DEFAULT_SETTLE, time_control: TimeControl | None = None,
                 debug: bool = False, remote: chess.Color | None = None,
                 release_completes: bool = False, default_time: float | None = None) -> None:
        self.profile = profile
        # A side played from elsewhere (a computer, rules/remote.py): its moves arrive as
        # events and the person makes them on the board. `release_completes`: the
        # players' opponent is not at the board (an online game through the LiveChess
        # endpoint, where one person makes both sides' moves), so without a clock a move
        # released is complete, as against a computer: nobody can begin the reply on the
        # board before the move was seen. `remote_on` (either) is checked on every
        # event: a plain bool.
        self.remote = RemoteState(side=remote)
        self.remote_on = remote is not None or release_completes
        self.debug = debug  # a timer that stalls raises TimerStall instead of being left out
        self.board = chess.Board(fen)
        self.start_fen = self.board.fen()
        self.game_clock = GameClock(time_control, self.board.turn)
        self.debouncer = Debouncer(self.board.occupied, us(settle))
        self.health = SensorHealth(self.debouncer.settle)
        self.sensed = self.board.occupied  # settled sensor readings
        self.occupied = self.sensed  # the readings, faulty sensors read as the game needs
        self.faulty: chess.Bitboard = 0  # sensors found chattering or stuck: not believed
        self.turn = Turn(Position(self.board), 0)
        self.result: GameOver | None = None
        self.out = Outbox()
        self.touch_move = TouchMove(profile.touch_move, enemy_pieces=remote is None)
        self.move_changed = MoveChanged(profile.move_changed)
        self.illegal = IllegalMoves(profile, against_computer=remote is not None)
        self.displaced = Displaced(remote)
        self.draws = Draws.for_profile(profile)
        self.lateness = Lateness(default_time)  # the side to move at the start late (10.15)
        self.endings = Endings(profile.auto_claimable_draws)
        self.now = 0  # us: the latest time seen; an earlier event is taken as happening now
        # A scan after a reconnection that nothing explains: moves were made unseen. What
        # follows is no player's fault until the board and the game agree again.
        self.after_outage = False
        self.from_scan = False  # the last move was taken from a scan, not seen made
        self.press = Press()  # the press completing the move, and when it is judged
        self.changing: chess.Square | None = None  # the square whose change is settling
        # A clock (a time control, or presses seen): presses, not the opponent, complete moves.
        self.clock_in_use = time_control is not None
        # A game ended by a placement left standing: the squares its piece could have been
        # moved on to, watched until anything else changes (FIDE 4.7; `Completion`).
        self.moved_on: MovedOn | None = None
