"""A round's pairings, imported from CSV.

    round,board,white,black,white_fide_id,black_fide_id[,board_id]
    3,1,Anna Smith,Ben Jones,1503014,
    3,2,Carl Berg,Dora Lind,,

A header line names the columns (in any order; `white_fide`/`whitefideid` and the like
are accepted, case and spaces ignored). `board` is the board number in the round;
`board_id` (optional) is the MQTT id of the board it is played on, otherwise the board
that announces that number (`board_no`) is meant. A bad line stops the import with an
error naming it: half a round is worse than none."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from board_ctl.errors import BoardCtlError, TagError
from board_ctl.pgntags import check_value
from board_ctl.station.contract import BOARD_ID

FIDE_ID = re.compile(r"[0-9]{1,10}")
ROUND = re.compile(r"[0-9]{1,4}")
COLUMNS = {
    "round": "round", "rd": "round",
    "board": "board", "board_no": "board", "boardno": "board", "bo": "board", "table": "board",
    "white": "white", "black": "black",
    "white_fide_id": "white_fide_id", "whitefideid": "white_fide_id", "white_fide": "white_fide_id",
    "black_fide_id": "black_fide_id", "blackfideid": "black_fide_id", "black_fide": "black_fide_id",
    "board_id": "board_id", "boardid": "board_id",
}
REQUIRED = ("round", "board", "white", "black")


class PairingsError(BoardCtlError, ValueError):
    """A pairings file that cannot be imported; the message names the line."""


@dataclass(frozen=True)
class Pairing:
    round: str
    board_no: int
    white: str
    black: str
    white_fide_id: str | None = None
    black_fide_id: str | None = None
    board_id: str | None = None

    def players_command(self, event: str | None, site: str | None) -> dict[str, object]:
        """The body of cmd/players (docs/mqtt.md) that tags the board's game."""
        body: dict[str, object] = {
            "white": {"name": self.white, "fide_id": self.white_fide_id},
            "black": {"name": self.black, "fide_id": self.black_fide_id},
            "round": self.round, "board_no": self.board_no,
        }
        if event:
            body["event"] = event
        if site:
            body["site"] = site
        return body


def _key(name: str) -> str:
    return re.sub(r"[\s-]+", "_", name.strip().lower())


def parse_pairings(text: str, source: str = "pairings") -> list[Pairing]:
    """Every pairing of the file, or PairingsError naming the first bad line."""
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    numbered = [(n, row) for n, row in enumerate(rows, start=1)
                if any(cell.strip() for cell in row)]
    if not numbered:
        raise PairingsError(f"{source}: empty: a header line and one line per board expected")
    header_line, header = numbered[0]
    columns: list[str | None] = []
    for cell in header:
        name = COLUMNS.get(_key(cell))
        if name is None and cell.strip():
            raise PairingsError(f"{source}:{header_line}: unknown column {cell.strip()!r} "
                                f"(expected {', '.join(REQUIRED)}, white_fide_id, "
                                "black_fide_id, board_id)")
        if name is not None and name in columns:
            raise PairingsError(f"{source}:{header_line}: column {cell.strip()!r} twice")
        columns.append(name)
    missing = [name for name in REQUIRED if name not in columns]
    if missing:
        raise PairingsError(f"{source}:{header_line}: the header has no "
                            f"{', '.join(missing)} column (is the header line there?)")
    pairings: list[Pairing] = []
    seen: dict[tuple[str, int], int] = {}
    for line, row in numbered[1:]:
        where = f"{source}:{line}"
        if len(row) > len(columns):
            raise PairingsError(f"{where}: {len(row)} fields, the header has {len(columns)}")
        cells = {name: row[i].strip() for i, name in enumerate(columns)
                 if name is not None and i < len(row)}
        pairing = _pairing(cells, where)
        key = (pairing.round, pairing.board_no)
        if key in seen:
            raise PairingsError(f"{where}: round {pairing.round} board {pairing.board_no} "
                                f"is already on line {seen[key]}")
        seen[key] = line
        pairings.append(pairing)
    if not pairings:
        raise PairingsError(f"{source}: no pairing after the header line")
    return sorted(pairings, key=lambda p: (int(p.round), p.board_no))


def _pairing(cells: dict[str, str], where: str) -> Pairing:
    round_name = cells.get("round", "")
    if not ROUND.fullmatch(round_name):
        raise PairingsError(f"{where}: round {round_name!r} is not a round number")
    board = cells.get("board", "")
    if not board.isdigit() or int(board) < 1:
        raise PairingsError(f"{where}: board {board!r} is not a board number (1, 2, ...)")
    names = {}
    for side in ("white", "black"):
        name = cells.get(side, "")
        if not name:
            raise PairingsError(f"{where}: no {side} player")
        if any(ch in name for ch in '"\\\n\r'):
            # A quote or backslash would be written escaped by the broadcast, but a board
            # may write its own PGN without escaping: refused here, where a person can fix it.
            raise PairingsError(f"{where}: {side} player {name!r}: quotes, backslashes and "
                                "line breaks cannot go into a PGN tag")
        try:
            names[side] = check_value(side.capitalize(), name)
        except TagError as exc:
            raise PairingsError(f"{where}: {side} player: {exc}") from None
    fide: dict[str, str | None] = {}
    for side in ("white", "black"):
        value = cells.get(f"{side}_fide_id", "")
        if value and not FIDE_ID.fullmatch(value):
            raise PairingsError(f"{where}: {side} FIDE id {value!r} is not a number")
        fide[side] = value or None
    board_id = cells.get("board_id") or None
    if board_id is not None and not BOARD_ID.fullmatch(board_id):
        raise PairingsError(f"{where}: board_id {board_id!r} is not a board id "
                            "([A-Za-z0-9_-], at most 64)")
    return Pairing(str(int(round_name)), int(board), names["white"], names["black"],
                   fide["white"], fide["black"], board_id)
