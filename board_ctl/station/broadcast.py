"""The live broadcast: a round's games as one PGN, the way lichess's broadcast importer
polls it (`games.pgn`) or takes it pushed.

Games come in board order and a board's place never changes while the round is on (a
poller matches games by position): a pairing with no game yet is there with its tags
and no moves. Every move carries `[%clk h:mm:ss]` when the game is timed, `Result "*"`
stays until the board (or the arbiter) has a result, and while the station is still
catching up on the game's moves (a poller must never take an incomplete game for a
finished one)."""

from __future__ import annotations

import datetime as dt
import weakref
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import chess
import chess.pgn

from board_ctl.pgntags import escape
from board_ctl.station.model import Game, Hall, Player
from board_ctl.station.pairings import Pairing


@dataclass(frozen=True)
class Entry:
    """One place of the round: its board number, its pairing, the game played there."""
    board_no: int
    pairing: Pairing | None
    game: Game | None


def round_entries(hall: Hall, round_name: str, pairings: Iterable[Pairing]) -> list[Entry]:
    paired = {p.board_no: p for p in pairings if p.round == round_name}
    games: dict[int, Game] = {}
    unnumbered: list[Game] = []
    for game in hall.games_of_round(round_name):
        if game.board_no is None:
            unnumbered.append(game)
        elif game.board_no not in games or game.last_time_ms >= games[game.board_no].last_time_ms:
            games[game.board_no] = game
    entries = [Entry(no, paired.get(no), games.get(no)) for no in sorted(set(paired) | set(games))]
    # A game with a round but no board number: after the numbered ones, by board id.
    last = entries[-1].board_no if entries else 0
    for offset, game in enumerate(sorted(unnumbered, key=lambda g: g.board), start=1):
        entries.append(Entry(last + offset, None, game))
    return entries


def _player(game_player: Player | None, paired_name: str | None, paired_id: str | None
            ) -> tuple[str, str | None]:
    name = (game_player.name if game_player else None) or paired_name or "?"
    fide = (game_player.fide_id if game_player else None) or paired_id
    return name, fide


def entry_pgn(entry: Entry, round_name: str, event: str, site: str) -> chess.pgn.Game:
    game, pairing = entry.game, entry.pairing
    pgn = chess.pgn.Game()
    start = chess.Board(game.start_fen) if game else chess.Board()
    if game and game.start_fen != chess.STARTING_FEN:
        pgn.setup(start)
    white, white_id = _player(game.white if game else None,
                              pairing.white if pairing else None,
                              pairing.white_fide_id if pairing else None)
    black, black_id = _player(game.black if game else None,
                              pairing.black if pairing else None,
                              pairing.black_fide_id if pairing else None)
    # The day the game began (PGN 8.1.1.3) where it is played: the station's time zone,
    # as the board's own PGN has it; not UTC, and not a day that turns at midnight.
    day = dt.datetime.fromtimestamp(
        (game.first_time_ms or game.first_seen_ms) / 1000).date() if game else None
    headers = pgn.headers
    headers["Event"] = (game.event if game and game.event else None) or event
    headers["Site"] = (game.site if game and game.site else None) or site
    headers["Date"] = day.strftime("%Y.%m.%d") if day else "????.??.??"
    headers["Round"] = f"{round_name}.{entry.board_no}"
    headers["White"] = white
    headers["Black"] = black
    headers["Result"] = game.result if game and not game.catching_up else "*"
    if white_id:
        headers["WhiteFideId"] = white_id
    if black_id:
        headers["BlackFideId"] = black_id
    if game is None:
        return pgn
    node: chess.pgn.GameNode = pgn
    position = start.copy()
    for move in game.known_moves():
        try:
            parsed = chess.Move.from_uci(move.uci)
        except ValueError:
            break
        if parsed not in position.legal_moves:
            break  # cannot happen with a board's own record; never write a broken game
        position.push(parsed)
        node = node.add_variation(parsed)
        if move.clock_ms is not None:
            # h:mm:ss, whole seconds shown on the clock (what lichess and DGT write)
            node.set_clock(max(0, move.clock_ms) // 1000)
    return pgn


class _Exporter(chess.pgn.StringExporter):
    """python-chess writes a tag's value as it is; the PGN standard escapes a quote and
    a backslash in it, and lichess and pgn-extract read it so."""

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        super().visit_header(tagname, escape(tagvalue))


# A round is asked for every few seconds by each poller, and rendered again by the
# pusher after every change, on the station's event loop: a game's text is kept with what
# it was made of and made again only when that changes (a game's moves are only ever
# added, so their number stands for them). Rendering every game each time held the loop
# for over a second a request at 100 boards of 80 moves.
_rendered: weakref.WeakKeyDictionary[Hall, dict[tuple[str, str], tuple[Hashable, str]]] = \
    weakref.WeakKeyDictionary()


def _entry_text(hall: Hall, entry: Entry, round_name: str, event: str, site: str) -> str:
    game = entry.game
    key: Hashable = None
    if game is not None:
        key = (round_name, entry.board_no, entry.pairing, event, site, game.event, game.site,
               game.white, game.black, game.result, game.start_fen,
               game.first_time_ms or game.first_seen_ms,
               # what the moves shown and whether it is complete are made of, in O(1)
               len(game.moves), game.ply, game.left, game.phase)
        held = _rendered.setdefault(hall, {}).get((game.board, game.game))
        if held is not None and held[0] == key:
            return held[1]
    exporter = _Exporter(headers=True, variations=False, comments=True)
    text: str = entry_pgn(entry, round_name, event, site).accept(exporter)
    if game is not None:
        _rendered[hall][(game.board, game.game)] = (key, text)
    return text


def round_pgn(hall: Hall, round_name: str, pairings: Iterable[Pairing],
              event: str = "?", site: str = "?") -> str:
    """Every game of the round, in board order, as one PGN text ("" for no game)."""
    texts = [_entry_text(hall, entry, round_name, event, site)
             for entry in round_entries(hall, round_name, list(pairings))]
    return "\n\n".join(texts) + ("\n" if texts else "")
