"""The hall as the station knows it, built only from the boards' MQTT messages.

Pure: `Hall.apply(topic, payload, received_ms)` in, the board it changed out; no
threads, no I/O, time arrives with each message (integer milliseconds). Messages may
come twice (a board republishes after a reconnection), late (a board that was cut off
publishes what it missed, in order, when it returns) or retained (the broker hands the
last state, status and PGN to a station that subscribes mid-round): everything is keyed
by (board, game) and a move by its ply, so none of that changes what is shown.

Messages may also never come (a broker killed before it passed on what it had
acknowledged, a station whose queue overflowed while it was away). A game whose moves
the station does not have up to the ply its board's state gives, or that its board left
without the station seeing it end, is *catching up*: the pages and the broadcast say so
and never show it complete. It is healed from the board's retained PGN (its current
game: parsed once a PGN, at most once every PGN_PARSE_EVERY_MS a board), or else the
board is asked to publish the game again from its journal (`heal`: a command the
station sends, at most RESEND_AT_ONCE at a time, each game less and less often).
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import chess
import chess.pgn

from board_ctl.station.contract import (
    DEFAULT_PREFIX,
    MAX_GAME_ID,
    MAX_JSON_BYTES,
    MAX_PGN_BYTES,
    MAX_PLIES,
    MAX_TEXT,
    RESULTS,
    SIDES,
    ContractError,
    json_payload,
    optional_str,
    parse_topic,
    require_int,
    require_str,
    seconds_to_ms,
    shown,
    text_payload,
)
from board_ctl.errors import TagError
from board_ctl.pgntags import check_value
from board_ctl.station.pairings import FIDE_ID
from board_ctl.words import count

log = logging.getLogger(__name__)

# What the station keeps of one board, at most: its credential cannot make it keep more
# (a game id a message, thousands of alerts). The oldest games go first; finished ones
# are in results.jsonl already.
MAX_GAMES_PER_BOARD = 64
MAX_ALERTS_PER_GAME = 500   # alerts in a game's history (and twice that many seqs)
MAX_OPEN_ALERTS = 32        # in one state
NOT_BOARDS = ("arbiter", "observer", "bridge")  # the shipped ACL's other users
PGN_PARSE_EVERY_MS = 1000   # a board's retained PGN is read at most this often
RESEND_AFTER_MS = 5_000       # a gap the board's own publishing has not filled by then
RESEND_BACKOFF_MAX_MS = 300_000  # the longest wait between two requests for one game
RESEND_AT_ONCE = 16           # requests a call to `heal` returns at most


@dataclass(frozen=True)
class Player:
    name: str | None = None
    fide_id: str | None = None


@dataclass(frozen=True)
class Move:
    ply: int
    san: str
    uci: str
    fen: str | None
    clock_ms: int | None     # the mover's clock after the move
    elapsed_ms: int | None   # the time the move took
    time_ms: int | None      # the board's wall clock when it was published


@dataclass(frozen=True)
class ClockReading:
    """Both clocks as a board last reported them; the running side's time has been
    falling since `time_ms` (the board's wall clock), as docs/mqtt.md says."""
    white_ms: int
    black_ms: int
    running: str | None
    time_ms: int

    def at(self, now_ms: int) -> tuple[int, int]:
        """Both clocks at `now_ms`, never below zero."""
        spent = max(0, now_ms - self.time_ms)
        white = self.white_ms - (spent if self.running == "white" else 0)
        black = self.black_ms - (spent if self.running == "black" else 0)
        return max(0, white), max(0, black)


@dataclass
class AlertEntry:
    """One alert in a game's history: raised, perhaps acknowledged, perhaps cleared."""
    code: str
    side: str | None
    squares: tuple[str, ...]
    text: str
    t_ms: int | None
    raised_ms: int                 # station time when first seen
    cleared_ms: int | None = None
    acknowledged_by: str | None = None
    seq: int | None = None         # the board's journal line that raised it

    @property
    def open(self) -> bool:
        return self.cleared_ms is None


@dataclass(frozen=True)
class ClockEntry:
    """A line of a game's clock history: both clocks after a move or a correction."""
    ply: int
    white_ms: int | None
    black_ms: int | None
    elapsed_ms: int | None
    source: str            # "move" or "arbiter"
    time_ms: int | None


@dataclass
class Game:
    board: str
    game: str
    first_seen_ms: int
    last_time_ms: int = 0            # the newest board time seen for this game
    first_time_ms: int | None = None  # the oldest: when the game began, as near as known
    state_time_ms: int | None = None  # the newest state applied (older ones are stale)
    event: str | None = None
    site: str | None = None
    round: str | None = None
    board_no: int | None = None
    white: Player = Player()
    black: Player = Player()
    start_fen: str = chess.STARTING_FEN
    fen: str = chess.STARTING_FEN
    turn: str = "white"
    ply: int = 0
    last_move: dict[str, Any] | None = None
    clock: ClockReading | None = None
    result: str = "*"
    termination: str = ""
    phase: str = "setup"
    link: str = "connected"
    moves: dict[int, Move] = field(default_factory=dict)
    state_alerts: frozenset[str] = frozenset()   # the codes open in the newest state
    seqs: set[int] = field(default_factory=set)  # the alerts' and clears' seq seen
    alerts: list[AlertEntry] = field(default_factory=list)
    clock_history: list[ClockEntry] = field(default_factory=list)
    left: bool = False             # the board has gone on to a newer game
    heal: Heal = field(default_factory=lambda: Heal())
    # Plies taken from the board's PGN, not from their move messages: the alerts and
    # clears published between those moves may have been lost with them (the PGN has
    # none), so the game is asked for again, unless those moves' messages come after all.
    filled_plies: set[int] = field(default_factory=set)

    def open_alerts(self) -> list[AlertEntry]:
        return [alert for alert in self.alerts if alert.open]

    def known_moves(self) -> list[Move]:
        """The moves from the first ply on, up to the first gap."""
        moves = []
        ply = 1
        while ply in self.moves:
            moves.append(self.moves[ply])
            ply += 1
        return moves

    @property
    def finished(self) -> bool:
        return self.result in RESULTS

    @property
    def expected_plies(self) -> int:
        """The plies the board has played, as far as the station knows: its state's count,
        or more when a move came after it."""
        return max(self.ply, max(self.moves, default=0))

    @property
    def missing(self) -> int:
        """Moves the board played that the station does not have (from the first gap)."""
        return self.expected_plies - len(self.known_moves())

    @property
    def catching_up(self) -> bool:
        """Not all of the game is here yet: moves are missing, or the board left the game
        and the station never had the state it left it in (phase `over`)."""
        return self.missing > 0 or (self.left and self.phase != "over")


@dataclass
class Heal:
    """Asking a board for a game that is catching up (station times, ms)."""
    since_ms: int | None = None   # when the station first saw it catching up
    asked_ms: int | None = None   # the latest request
    asked: int = 0                # requests since it began catching up

    def due(self, now_ms: int) -> bool:
        if self.since_ms is None:
            self.since_ms = now_ms
        wait = min(RESEND_AFTER_MS << min(self.asked, 16), RESEND_BACKOFF_MAX_MS)
        return now_ms - (self.asked_ms if self.asked_ms is not None else self.since_ms) >= wait


@dataclass
class Board:
    board: str
    status: str | None = None        # "online", "offline"; None until the broker says
    status_ms: int | None = None
    last_seen_ms: int | None = None
    games: dict[str, Game] = field(default_factory=dict)
    current: str | None = None
    pgn: str | None = None           # the retained PGN of the board's current game
    setting_up_ms: int | None = None  # the board's time since when it waits for a new game
    # The retained PGN read once (its start and moves, None: unusable) and when; the last
    # attempt to fill a game from it: nothing is read again that did not change.
    pgn_read: tuple[str, list[Move]] | None = None
    pgn_read_ms: int | None = None
    pgn_tried: tuple[Any, ...] | None = None

    @property
    def game(self) -> Game | None:
        return self.games.get(self.current) if self.current else None


@dataclass(frozen=True)
class Reply:
    board: str
    id: str
    ok: bool
    error: str | None
    time_ms: int | None
    received_ms: int
    game: str | None = None  # the game the command applied to (None: the board's next)


@dataclass
class Healing:
    """What `Hall.heal` did and asks for."""
    filled: list[str] = field(default_factory=list)  # boards whose game the PGN filled
    resend: list[tuple[str, str]] = field(default_factory=list)  # (board, game) to ask for


@dataclass(frozen=True)
class Change:
    """What one message changed: the board, and what kind of news it was."""
    board: str
    kind: str
    game: str | None = None
    reply: Reply | None = None
    new_alert: bool = False


class Hall:
    """Every board the station has heard of, and every game each has played."""

    def __init__(self, prefix: str = DEFAULT_PREFIX,
                 not_boards: tuple[str, ...] = NOT_BOARDS) -> None:
        self.prefix = prefix
        # users of the broker that are no board (the station's own): a message on their
        # topics is a forgery the broker's ACL should have refused
        self.not_boards = frozenset(not_boards)
        self.boards: dict[str, Board] = {}
        self.rejected = 0
        self.duplicates = 0

    # ---- input ---------------------------------------------------------------------

    def apply(self, topic: str, payload: bytes, received_ms: int) -> Change | None:
        """One message from the broker; None when it changed nothing (not a board topic,
        a duplicate, a stale state, or a payload refused with a logged reason)."""
        parsed = parse_topic(topic, self.prefix)
        if parsed is None:
            return None
        board = self.boards.get(parsed.board)
        known = board is not None
        if board is None:
            board = Board(parsed.board)
        try:
            if parsed.board in self.not_boards:
                raise ContractError(f"{parsed.board} is a user of the hall, not a board")
            limit = MAX_PGN_BYTES if parsed.kind == "pgn" else MAX_JSON_BYTES
            if len(payload) > limit:
                raise ContractError(f"{count(len(payload), 'byte')}: more than the {limit} a board's "
                                    f"{parsed.kind} may have")
            handler = getattr(self, "_on_" + parsed.kind)
            change: Change | None = handler(board, payload, received_ms)
        except ContractError as exc:
            self.rejected += 1
            log.warning("%s: refused: %s", topic, exc)
            return None
        except Exception as exc:  # no payload may stop the station (a check missing above)
            self.rejected += 1
            log.error("%s: refused: %s: %s", topic, type(exc).__name__, shown(str(exc), 200))
            return None
        if not known:
            self.boards[parsed.board] = board
        board.last_seen_ms = received_ms
        return change

    def _on_status(self, board: Board, payload: bytes, now: int) -> Change | None:
        status = text_payload(payload).strip()
        if status not in ("online", "offline"):
            raise ContractError(f"status is neither online nor offline: {status[:40]!r}")
        if board.status == status:
            return None
        board.status, board.status_ms = status, now
        return Change(board.board, "status")

    def _game(self, board: Board, data: dict[str, Any], now: int) -> Game:
        game_id = require_str(data, "game", MAX_GAME_ID)
        sender = data.get("board")
        if sender is not None and sender != board.board:
            raise ContractError(f"board {shown(sender)} in a message on {board.board}'s topic")
        game = board.games.get(game_id)
        if game is None:
            game = board.games[game_id] = Game(board.board, game_id, first_seen_ms=now)
            # (a board's game ids sort in the order its games began: docs/mqtt.md)
            game.left = any(other > game_id for other in board.games)
            for other_id, other in board.games.items():
                if other_id < game_id:
                    other.left = True
            self._forget_old_games(board, game)
        time_ms = data.get("time")
        if isinstance(time_ms, int) and not isinstance(time_ms, bool):
            game.last_time_ms = max(game.last_time_ms, time_ms)
            game.first_time_ms = min(game.first_time_ms or time_ms, time_ms)
        current = board.game
        # The board's current game is its newest: a board's game ids sort in the order
        # its games began (docs/mqtt.md), so an old game published again (after a
        # reconnection, or asked for by the station) does not take the grid back to it.
        if current is None or game_id > current.game:
            board.current = game_id
            self._fill_from_pgn(board, now)
        return game

    @staticmethod
    def _forget_old_games(board: Board, new: Game) -> None:
        """At most MAX_GAMES_PER_BOARD games a board: the one it published least
        recently goes (never its current game, nor the one just heard of)."""
        while len(board.games) > MAX_GAMES_PER_BOARD:
            oldest = min((g for g in board.games.values()
                          if g is not new and g.game != board.current),
                         key=lambda g: (g.last_time_ms, g.first_seen_ms))
            del board.games[oldest.game]

    def _on_state(self, board: Board, payload: bytes, now: int) -> Change | None:
        data = json_payload(payload)
        # Every field is read and checked before anything is applied: a state refused
        # for one field leaves the game as it was.
        time_ms = require_int(data, "time")
        if data.get("game") is None:  # no game: the board waits for the next start position
            current = board.game
            if current is not None and time_ms < current.last_time_ms:
                return None  # older than what the current game published: stale
            if board.setting_up_ms is None or time_ms > board.setting_up_ms:
                board.setting_up_ms = time_ms
                return Change(board.board, "state")
            return None
        fen = position(require_str(data, "fen"), "fen")
        ply = require_int(data, "ply")
        if not 0 <= ply <= MAX_PLIES:
            raise ContractError(f"ply: {shown(ply)} (0 to {MAX_PLIES})")
        clock = self._clock(data.get("clock"), time_ms)
        result = data.get("result", "*")
        if result not in RESULTS and result != "*":
            raise ContractError(f"result: {result!r}")
        start_fen = optional_str(data, "start_fen")
        if start_fen is not None:
            start_fen = position(start_fen, "start_fen")
        turn = data.get("turn")
        termination = optional_str(data, "termination") or ""
        phase = optional_str(data, "phase")
        link = optional_str(data, "link")
        last = data.get("last_move")
        if last is not None:
            if not isinstance(last, dict):
                raise ContractError("last_move: not an object")
            if last.get("uci") is not None:
                uci_move(last["uci"], "last_move.uci")
            last_ply = last.get("ply")
            last = {"ply": last_ply if isinstance(last_ply, int) and
                    not isinstance(last_ply, bool) and 0 < last_ply <= MAX_PLIES else None,
                    "san": optional_str(last, "san", 16), "uci": last.get("uci")}
        # Tags go into the broadcast's PGN: one that cannot be a PGN tag is left out.
        where = board.board
        event = tag(where, "Event", optional_str(data, "event", MAX_JSON_BYTES))
        site = tag(where, "Site", optional_str(data, "site", MAX_JSON_BYTES))
        round_name = tag(where, "Round", optional_str(data, "round", MAX_JSON_BYTES))
        board_no = data.get("board_no")
        white = self._player(data.get("white"), where, "White")
        black = self._player(data.get("black"), where, "Black")
        game = self._game(board, data, now)
        if game.state_time_ms is not None and time_ms < game.state_time_ms:
            return None  # an older state delivered late: the newer one stands
        if board.setting_up_ms is not None and time_ms >= board.setting_up_ms:
            board.setting_up_ms = None  # a game is on the board again
        game.state_time_ms = time_ms
        game.fen, game.ply, game.clock, game.result = fen, ply, clock, result
        game.start_fen = start_fen or game.start_fen
        game.turn = turn if isinstance(turn, str) and turn in SIDES else game.turn
        game.termination = termination
        game.phase = phase or game.phase
        game.link = link or game.link
        game.last_move = last if isinstance(last, dict) else None
        game.event, game.site, game.round = event, site, round_name
        # boards count from 1 (the Round tag is "<round>.<board>"); anything else: unnumbered
        game.board_no = (board_no if isinstance(board_no, int) and not isinstance(board_no, bool)
                         and board_no >= 1 else None)
        game.white, game.black = white, black
        new_alert = self._sync_alerts(game, data.get("alerts"), now)
        self._fill_from_pgn(board, now)
        return Change(board.board, "state", game.game, new_alert=new_alert)

    @staticmethod
    def _player(value: Any, where: str, side: str) -> Player:
        if isinstance(value, str):
            value = {"name": value}
        if not isinstance(value, dict):
            return Player()
        name = tag(where, side, optional_str(value, "name", MAX_JSON_BYTES) or None)
        fide = value.get("fide_id")
        if isinstance(fide, int) and not isinstance(fide, bool):
            fide = str(fide)
        fide_id = fide if isinstance(fide, str) and FIDE_ID.fullmatch(fide) else None
        if fide_id is None and fide not in (None, ""):
            log.warning("%s: tag %sFideId: %s is not a FIDE id (digits); tag left out",
                        where, side, shown(fide))
        return Player(name, fide_id)

    @staticmethod
    def _clock(value: Any, time_ms: int) -> ClockReading | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise ContractError("clock: not an object")
        white = seconds_to_ms(value.get("white"), "clock.white")
        black = seconds_to_ms(value.get("black"), "clock.black")
        if white is None or black is None:
            raise ContractError("clock: white and black are required")
        running = value.get("running")
        if running not in SIDES:
            running = None
        return ClockReading(white, black, running, time_ms)

    def _sync_alerts(self, game: Game, alerts: Any, now: int) -> bool:
        """The state's open alerts are the truth; the history keeps every one seen. True
        when an alert the station had not seen open is open now."""
        if not isinstance(alerts, list):
            alerts = []
        seen: set[str] = set()
        new = False
        for item in alerts[:MAX_OPEN_ALERTS]:
            if not isinstance(item, dict) or not isinstance(item.get("code"), str) or \
                    len(item["code"]) > 40:
                continue
            code = item["code"]
            seen.add(code)
            entry = next((a for a in game.alerts if a.open and a.code == code), None)
            t = item.get("t")
            t_ms = seconds_to_ms(t, "t") if isinstance(t, (int, float)) else None
            if entry is None and t_ms is not None and any(
                    a.code == code and a.t_ms == t_ms for a in game.alerts):
                # an alert the station has seen cleared: a state from before the clear
                # (a broker restarted gives again the retained state it last saved)
                continue
            if entry is None:
                entry = self._alert_entry(item, now)
                self._keep_alert(game, entry)
                new = True
            by = item.get("acknowledged_by")
            if isinstance(by, str) and by:
                entry.acknowledged_by = by[:MAX_TEXT]
        for entry in game.alerts:
            if entry.open and entry.code not in seen:
                entry.cleared_ms = now
        game.state_alerts = frozenset(seen)
        return new

    @staticmethod
    def _keep_alert(game: Game, entry: AlertEntry) -> None:
        """Into the game's history, which keeps the latest MAX_ALERTS_PER_GAME (the
        oldest cleared one goes first)."""
        game.alerts.append(entry)
        if len(game.alerts) > MAX_ALERTS_PER_GAME:
            gone = next((a for a in game.alerts if not a.open), game.alerts[0])
            game.alerts.remove(gone)

    @staticmethod
    def _alert_entry(data: dict[str, Any], now: int) -> AlertEntry:
        side = data.get("side") if data.get("side") in SIDES else None
        squares = data.get("squares")
        t = data.get("t")
        text = data.get("text")
        return AlertEntry(
            code=str(data["code"]), side=side,
            squares=tuple(s for s in squares[:64] if isinstance(s, str) and
                          s in chess.SQUARE_NAMES) if isinstance(squares, list) else (),
            text=text[:MAX_TEXT] if isinstance(text, str) else "",
            t_ms=seconds_to_ms(t, "t") if isinstance(t, (int, float)) else None,
            raised_ms=now)

    def _seen(self, game: Game, seq: int | None) -> bool:
        """An alert or clear whose (game, seq) the station has: a board publishes its
        game again after every reconnection (docs/mqtt.md, "Delivery")."""
        if seq is None:
            return False
        if seq in game.seqs:
            self.duplicates += 1
            return True
        if len(game.seqs) >= 2 * MAX_ALERTS_PER_GAME:
            raise ContractError(f"game {game.game}: more than {2 * MAX_ALERTS_PER_GAME} "
                                "alerts and clears")
        game.seqs.add(seq)
        return False

    def _on_alert(self, board: Board, payload: bytes, now: int) -> Change | None:
        data = json_payload(payload)
        code = require_str(data, "code", 40)
        seq = optional_seq(data)
        game = self._game(board, data, now)
        if self._seen(game, seq):
            return None
        t = seconds_to_ms(data.get("t"), "t")
        if any(a.code == code and a.t_ms == t for a in game.alerts):
            self.duplicates += 1
            return None  # republished, or already known from the state
        if any(a.open and a.code == code for a in game.alerts):
            return None  # the same alert, already open (seen first in a state)
        entry = self._alert_entry(data, now)
        entry.seq = seq
        self._keep_alert(game, entry)
        time_ms = data.get("time")
        if game.state_time_ms is not None and isinstance(time_ms, int) and \
                time_ms < game.state_time_ms and code not in game.state_alerts:
            entry.cleared_ms = now  # delivered late: a newer state has it resolved
            return Change(board.board, "alert", game.game)
        return Change(board.board, "alert", game.game, new_alert=True)

    def _on_clear(self, board: Board, payload: bytes, now: int) -> Change | None:
        data = json_payload(payload)
        code = require_str(data, "code", 40)
        seq = optional_seq(data)
        game = self._game(board, data, now)
        if self._seen(game, seq):
            return None
        for entry in game.alerts:
            # (a clear never closes an alert raised after it)
            if entry.open and entry.code == code and (
                    seq is None or entry.seq is None or entry.seq < seq):
                entry.cleared_ms = now
                return Change(board.board, "clear", game.game)
        return None

    def _on_move(self, board: Board, payload: bytes, now: int) -> Change | None:
        data = json_payload(payload)
        ply = require_int(data, "ply")
        if not 1 <= ply <= MAX_PLIES:
            raise ContractError(f"ply: {shown(ply)} (plies count from 1, up to {MAX_PLIES})")
        fen = optional_str(data, "fen", 100)
        move = Move(ply=ply, san=require_str(data, "san", 16),
                    uci=uci_move(require_str(data, "uci", 5), "uci"),
                    fen=position(fen, "fen") if fen is not None else None,
                    clock_ms=seconds_to_ms(data.get("clock"), "clock"),
                    elapsed_ms=seconds_to_ms(data.get("elapsed"), "elapsed"),
                    time_ms=data.get("time") if isinstance(data.get("time"), int) else None)
        game = self._game(board, data, now)
        known = game.moves.get(ply)
        if known is not None:
            self.duplicates += 1
            game.filled_plies.discard(ply)  # its message came after all
            if known.uci != move.uci:
                log.warning("%s game %s ply %d: %s after %s, kept the first",
                            board.board, game.game, ply, move.uci, known.uci)
            return None
        game.moves[ply] = move
        self._record_clock(game, move)
        return Change(board.board, "move", game.game)

    @staticmethod
    def _record_clock(game: Game, move: Move) -> None:
        """Both clocks after the move: the mover's from the move, the other's carried
        over from the move before (the moves of one game arrive in ply order, except
        after a gap, where the other clock stays unknown)."""
        before = next((entry for entry in reversed(game.clock_history)
                       if entry.ply == move.ply - 1), None)
        white = before.white_ms if before else None
        black = before.black_ms if before else None
        white_first = game.start_fen.split(" ")[1:2] != ["b"]
        if (move.ply % 2 == 1) == white_first:
            white = move.clock_ms
        else:
            black = move.clock_ms
        if move.clock_ms is None and before is None:
            return
        game.clock_history.append(ClockEntry(move.ply, white, black, move.elapsed_ms, "move",
                                             move.time_ms))

    def record_clock_correction(self, board_id: str, white_ms: int, black_ms: int,
                                time_ms: int) -> None:
        """The arbiter set both clocks (cmd/clock, acknowledged by the board)."""
        board = self.boards.get(board_id)
        game = board.game if board else None
        if game is not None:
            game.clock_history.append(ClockEntry(game.ply, white_ms, black_ms, None,
                                                 "arbiter", time_ms))

    def _on_pgn(self, board: Board, payload: bytes, now: int) -> Change | None:
        text = text_payload(payload)
        if text == board.pgn:
            return None
        board.pgn, board.pgn_read, board.pgn_tried = text, None, None
        filled = self._fill_from_pgn(board, now)
        return Change(board.board, "pgn", board.current) if filled else None

    def _fill_from_pgn(self, board: Board, now: int | None = None) -> int:
        """Moves the station missed (published before it subscribed, or lost on the way)
        taken from the board's retained PGN, only when that PGN is provably this game's:
        same start, every move the station has agrees, and the position after it is the
        state's.

        The PGN is read once (the first MAX_PLIES moves of its main line, at most once
        per PGN_PARSE_EVERY_MS a board), and tried again only when the game or the PGN
        changed: a state that changes nothing costs nothing."""
        game = board.game
        if game is None or not board.pgn or len(game.moves) >= game.ply and \
                len(game.known_moves()) >= game.ply:
            return 0
        attempt = (game.game, game.ply, game.fen, game.start_fen, len(game.moves))
        if attempt == board.pgn_tried:
            return 0
        if board.pgn_read is None:
            if now is not None and board.pgn_read_ms is not None and \
                    0 <= now - board.pgn_read_ms < PGN_PARSE_EVERY_MS:
                return 0  # read again on the next message
            board.pgn_read = read_pgn_moves(board.pgn)
            board.pgn_read_ms = now
        board.pgn_tried = attempt
        start, found = board.pgn_read
        if len(found) < game.ply or position_fen(found, game.ply) != placement(game.fen):
            return 0
        if start != _normal_fen(game.start_fen):
            return 0
        if any(game.moves[m.ply].uci != m.uci for m in found if m.ply in game.moves):
            return 0
        added = 0
        for move in found[:game.ply]:
            if move.ply not in game.moves:
                game.moves[move.ply] = move
                game.filled_plies.add(move.ply)
                added += 1
        if added:
            game.clock_history = []
            for move in game.known_moves():
                self._record_clock(game, move)
        return added

    def heal(self, now_ms: int) -> Healing:
        """The games catching up: filled from their board's retained PGN where it can
        (the boards changed), and those the station should ask their board to publish
        again now: online boards only, first after RESEND_AFTER_MS, then less and less
        often; at most RESEND_AT_ONCE. A game filled from the PGN is asked for once
        (its alerts and clears), unless its board sends those moves again meanwhile."""
        healing = Healing()
        for board in self.boards.values():
            if board.game is not None and board.game.catching_up and \
                    self._fill_from_pgn(board, now_ms):
                healing.filled.append(board.board)
            for game in board.games.values():
                if not game.catching_up and not game.filled_plies:
                    if game.heal.since_ms is not None:
                        game.heal = Heal()
                    continue
                due = game.heal.due(now_ms)  # (its clock starts at the first look)
                if due and board.status == "online" and len(healing.resend) < RESEND_AT_ONCE:
                    game.heal.asked_ms = now_ms
                    game.heal.asked += 1
                    game.filled_plies.clear()
                    healing.resend.append((board.board, game.game))
        return healing

    def _on_reply(self, board: Board, payload: bytes, now: int) -> Change | None:
        data = json_payload(payload)
        command_id = data.get("id")
        if not isinstance(command_id, (str, int)) or isinstance(command_id, bool) or \
                len(shown(command_id, 64)) > 64:
            raise ContractError("reply: id missing, or not an id")
        ok = data.get("ok")
        if not isinstance(ok, bool):
            raise ContractError("reply: ok is not true or false")
        error = data.get("error")
        time_ms = data.get("time")
        game = data.get("game")
        why = error[:MAX_TEXT] if isinstance(error, str) else shown(error, MAX_TEXT)
        reply = Reply(board.board, str(command_id), ok, why if error else None, time_ms if isinstance(time_ms, int) else None, now,
                      game if isinstance(game, str) and len(game) <= MAX_GAME_ID else None)
        return Change(board.board, "reply", board.current, reply=reply)

    # ---- queries -------------------------------------------------------------------

    def games_of_round(self, round_name: str) -> list[Game]:
        """Every board's latest game tagged with this round."""
        chosen: dict[str, Game] = {}
        for board in self.boards.values():
            for game in board.games.values():
                if game.round != round_name:
                    continue
                held = chosen.get(board.board)
                if held is None or game.last_time_ms >= held.last_time_ms:
                    chosen[board.board] = game
        return list(chosen.values())

    def finished_games(self) -> list[Game]:
        games = [g for b in self.boards.values() for g in b.games.values() if g.finished]
        return sorted(games, key=lambda g: (g.last_time_ms, g.board, g.game))


class _TooLong(Exception):
    pass


class _MainLine(chess.pgn.GameBuilder):
    """Reads a PGN's main line only, and no further than MAX_PLIES moves."""

    def begin_variation(self) -> chess.pgn.SkipType:  # type: ignore[override]
        super().begin_variation()  # (end_variation, called all the same, undoes it)
        return chess.pgn.SKIP

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        if board.ply() - self.game.board().ply() >= MAX_PLIES:
            raise _TooLong
        super().visit_move(board, move)


def read_pgn_moves(text: str) -> tuple[str, list[Move]]:
    """A PGN's start position and main line as Moves; ("", []) when it cannot be read,
    has errors, or runs beyond MAX_PLIES."""
    try:
        pgn = chess.pgn.read_game(io.StringIO(text), Visitor=_MainLine)
    except (_TooLong, ValueError, IndexError, RecursionError):
        return "", []
    if pgn is None or pgn.errors:
        return "", []
    position = pgn.board()
    start = position.fen()
    found: list[Move] = []
    for ply, child in enumerate(pgn.mainline(), start=1):
        san = position.san(child.move)
        position.push(child.move)
        clock = child.clock()
        emt = child.emt()
        found.append(Move(ply, san, child.move.uci(), position.fen(),
                          round(clock * 1000) if clock is not None else None,
                          round(emt * 1000) if emt is not None else None, None))
    return start, found


def position(fen: str, what: str) -> str:
    """`fen` if python-chess reads it as a position (the pages and the broadcast build
    boards from it), else ContractError."""
    if len(fen) > 100 or not _readable(fen):  # (the longest FEN has 92 characters)
        raise ContractError(f"{what}: not a position: {fen[:100]!r}")
    return fen


@lru_cache(maxsize=256)
def _normal_fen(fen: str) -> str:
    return chess.Board(fen).fen()


@lru_cache(maxsize=4096)
def _readable(fen: str) -> bool:
    """(A game's states repeat its position and start: each is read once.)"""
    try:
        chess.Board(fen)
    except ValueError:
        return False
    return True


def tag(where: str, name: str, value: str | None) -> str | None:
    """`value` if tag `name` may carry it (the project's PGN tag rules, board_ctl.pgntags);
    else None, logged as left out."""
    if value is None:
        return None
    try:
        return check_value(name, value)
    except TagError as exc:
        log.warning("%s: %s; tag left out", where, exc)
        return None


def uci_move(uci: object, what: str) -> str:
    """`uci` if it is a move in UCI (the diagrams draw it), else ContractError."""
    try:
        if not isinstance(uci, str):
            raise ValueError
        chess.Move.from_uci(uci)
    except ValueError:
        raise ContractError(f"{what}: not a move in UCI: {str(uci)[:20]!r}") from None
    return uci


def optional_seq(data: dict[str, Any]) -> int | None:
    """An alert's or clear's `seq` (the board's journal line), None when not sent."""
    seq = data.get("seq")
    if seq is None:
        return None
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise ContractError(f"seq: not an integer: {seq!r}")
    return seq


def placement(fen: str) -> str:
    return fen.split(" ", 1)[0]


def position_fen(moves: list[Move], ply: int) -> str:
    if ply == 0:
        return ""
    fen = moves[ply - 1].fen
    return placement(fen) if fen else ""
