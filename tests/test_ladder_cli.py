"""`board-ctl ladder` as a club runs it: real PGN files, the board's archive, --json."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import subprocess
import sys
from pathlib import Path

import chess.pgn
from rich.cells import cell_len

from board_ctl.archive import Archive
from board_ctl.cli import main
from board_ctl.core.profiles import PROFILES
from board_ctl.replay import new_game
from board_ctl.sensorlog import StartInfo, read_sensor_log
from board_ctl.simulate import render_game
from corpus import GAMES_DIR

REPO = Path(__file__).resolve().parents[1]
CLASSICS = GAMES_DIR / "classics.pgn"
STOCKFISH = GAMES_DIR / "stockfish-300.pgn"


def ladder(*args: str) -> subprocess.CompletedProcess[str]:
    """The command's own entry point, in this process (test_the_command_as_installed runs
    it as a program)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["ladder", *args])
    return subprocess.CompletedProcess(["board-ctl", "ladder", *args], code, out.getvalue(),
                                       err.getvalue())


def test_the_command_as_installed(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "board_ctl.cli", "ladder", "--pgn", str(CLASSICS),
                           "--json"], cwd=REPO, capture_output=True, text=True, encoding="utf-8",
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ladder_json("--pgn", str(CLASSICS))
    assert done.stderr == "board-ctl ladder: 17 games rated, 0 skipped, 31 players\n"


def ladder_json(*args: str) -> list[dict[str, object]]:
    done = ladder(*args, "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert isinstance(rows, list)
    return rows


def test_the_classics_checked_by_hand() -> None:
    # All decisive. Every newcomer starts at 0, so most games are 0 v 0: "相差10分以内，得10分".
    # Anderssen (10) then beats Dufresne (0) and Fischer (10) beats Spassky (0), d = 10:
    # "高级别方赢：…相差10-99分，得10-差分/12.5" = 9.2, so both reach 19.2. Deep Blue (0)
    # beats Kasparov (10), d = 10: "低级别方赢：…相差10-99分，得10+差分/10" = 11.
    done = ladder("--pgn", str(CLASSICS))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["place", "player", "points", "level", "games"]
    rows = {line[7:].rsplit(None, 3)[0].strip(): line.split()[0:1] + line.rsplit(None, 3)[1:]
            for line in lines[1:]}
    assert rows["Anderssen, Adolf"] == ["1", "19.20", "-", "2"]
    assert rows["Fischer, Robert James"] == ["1", "19.20", "-", "2"]
    assert rows["Deep Blue (Computer)"] == ["3", "11.00", "-", "1"]
    assert rows["Morphy, Paul"] == ["4", "10.00", "-", "1"]
    assert rows["Kasparov, Garry"] == ["15", "-1.00", "-", "2"]  # +10 - 11
    assert rows["Spassky, Boris V"] == ["16", "-9.20", "-", "1"]
    assert rows["Von Bardeleben, Curt"] == ["18", "-10.00", "-", "1"]
    assert len(rows) == 31
    assert "17 games rated, 0 skipped, 31 players" in done.stderr


def test_json_shape_and_order() -> None:
    rows = ladder_json("--pgn", str(CLASSICS))
    assert all(list(row) == ["player", "points", "level", "games"] for row in rows)
    assert all(isinstance(row["player"], str) and isinstance(row["points"], float)
               and row["level"] is None and isinstance(row["games"], int) for row in rows)
    assert rows[:3] == [
        {"player": "Anderssen, Adolf", "points": 19.2, "level": None, "games": 2},
        {"player": "Fischer, Robert James", "points": 19.2, "level": None, "games": 2},
        {"player": "Deep Blue (Computer)", "points": 11.0, "level": None, "games": 1},
    ]
    keys = [(-float(str(row["points"])), str(row["player"])) for row in rows]
    assert keys == sorted(keys)  # by points, then name


def test_unfinished_and_unnamed_games_are_skipped_each_with_a_note() -> None:
    # Counted here from the tags alone, independently of the ladder's loader.
    rateable, skipped = 0, 0
    with STOCKFISH.open(encoding="utf-8") as stream:
        while (headers := chess.pgn.read_headers(stream)) is not None:
            ok = headers["Result"] != "*" and headers["White"] != headers["Black"]
            rateable, skipped = rateable + ok, skipped + (not ok)
    done = ladder("--pgn", str(STOCKFISH), "--json")
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.endswith("; skipped")]
    assert len(notes) == skipped == 33
    assert sum("unfinished (*)" in note for note in notes) == 9
    assert all(note.startswith(f"board-ctl ladder: {STOCKFISH}: game ") for note in notes)
    rows = json.loads(done.stdout)
    assert sum(int(str(row["games"])) for row in rows) == 2 * rateable


def test_the_games_view_adds_up_to_the_standings() -> None:
    games = ladder_json("--pgn", str(STOCKFISH), "--games")
    standings = {row["player"]: row for row in ladder_json("--pgn", str(STOCKFISH))}
    final: dict[str, float] = {}
    for game in games:
        for side in ("white", "black"):
            name = str(game[side])
            assert abs(final.get(name, 0.0) - float(str(game[f"{side}_before"]))) < 1e-9
            final[name] = float(str(game[f"{side}_before"])) + float(str(game[f"{side}_change"]))
        if game["result"] != "1/2-1/2":
            assert float(str(game["white_change"])) == -float(str(game["black_change"]))
    assert any(game["result"] == "1/2-1/2" and game["white_change"] != game["black_change"]
               for game in games)  # some draws in the file do pay
    assert {name: round(points, 2) for name, points in final.items()} == {
        name: row["points"] for name, row in standings.items()}


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_text(text, encoding=encoding)
    return path


def pgn_game(white: str, black: str, result: str) -> str:
    return (f'[Event "Club night"]\n[White "{white}"]\n[Black "{black}"]\n'
            f'[Result "{result}"]\n\n1. e4 e5 {result}\n\n')


def test_games_are_rated_in_the_order_the_files_are_given(tmp_path: Path) -> None:
    first = write(tmp_path / "first.pgn", pgn_game("Ann", "Bob", "1-0"))
    second = write(tmp_path / "second.pgn", pgn_game("Cat", "Ann", "1-0"))
    # first, second: Ann 0 beats Bob 0 (+10); Cat 0 beats Ann 10, d = 10: 10 + 10/10 = 11.
    assert {r["player"]: r["points"] for r in ladder_json("--pgn", str(first), str(second))} == {
        "Ann": -1.0, "Bob": -10.0, "Cat": 11.0}
    # second, first: Cat beats Ann (+10); Ann -10 beats Bob 0, d = 10: 11.
    assert {r["player"]: r["points"] for r in ladder_json("--pgn", str(second), str(first))} == {
        "Ann": 1.0, "Bob": -11.0, "Cat": 10.0}
    # Repeating the option is the same as listing the files after one.
    assert ladder_json("--pgn", str(second), "--pgn", str(first)) == ladder_json(
        "--pgn", str(second), str(first))


def test_bad_input_gets_one_line_and_loses_nothing(tmp_path: Path) -> None:
    games = (pgn_game("Ann", "?", "1-0") + pgn_game("Ann", "Bob", "1-0")
             + '[White "Ann"]\n[Black "Bob"]\n\n1. e4 *\n\n'  # no Result tag
             + pgn_game("Bob", "Ann", "2-0") + pgn_game("Müller, Jörg", "Bob", "0-1"))
    mixed = write(tmp_path / "latin1.pgn", games, encoding="latin-1")
    junk = write(tmp_path / "junk.pgn", "this is not PGN\n")
    done = ladder("--pgn", str(mixed), str(junk), "--json")
    assert done.returncode == 0, done.stderr
    notes = done.stderr.splitlines()
    assert notes[0] == f"board-ctl ladder: {mixed}: not UTF-8, read as Latin-1"
    assert f"{mixed}: game 1 (Ann - ?): no Black name; skipped" in notes[1]
    assert f"{mixed}: game 3 (Ann - Bob): no Result tag; skipped" in notes[2]
    assert f"{mixed}: game 4 (Bob - Ann): result '2-0' is none of" in notes[3]
    assert f"{junk}: game 1 (? - ?): no White or Black name; skipped" in notes[4]
    assert notes[5].endswith("2 games rated, 4 skipped, 3 players")
    rows = {row["player"]: row["points"] for row in json.loads(done.stdout)}
    # Ann 0 beats Bob 0: +10. Bob -10 beats Jörg 0 (Bob lower, d = 10): 10 + 1 = 11.
    assert rows == {"Ann": 10.0, "Bob": 1.0, "Müller, Jörg": -11.0}

    missing = ladder("--pgn", str(mixed), str(tmp_path / "nowhere.pgn"))
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.strip().splitlines()[-1] == (
        f"board-ctl ladder: cannot read {tmp_path / 'nowhere.pgn'}: No such file or directory")


def test_chinese_names_line_up_and_stay_readable_in_json(tmp_path: Path) -> None:
    names = write(tmp_path / "club.pgn", pgn_game("王小明", "Li Lei", "1-0")
                  + pgn_game("欧阳娜娜", "王小明", "1/2-1/2"))
    done = ladder("--pgn", str(names))
    assert done.returncode == 0, done.stderr
    # The points column ends in the same terminal cell on every line.
    ends = {cell_len(line[: line.index(".") + 3]) for line in done.stdout.splitlines()[1:]}
    assert len(ends) == 1
    assert '"王小明"' in ladder("--pgn", str(names), "--json").stdout
    # 欧阳娜娜 0 v 王小明 10 drawn, d = 10: "分低方得(10+差分/10)/2" = 5.5.
    assert {r["player"]: r["points"] for r in ladder_json("--pgn", str(names))} == {
        "王小明": 10.0, "欧阳娜娜": 5.5, "Li Lei": -10.0}


# -- the board's archive: games played through the referee and journaled as the service does

def archive_game(archive: Archive, game: chess.pgn.Game, tags: dict[str, str], minute: int,
                 whole: bool = True) -> None:
    """A real game rendered as a player at the board, into the archive's journal."""
    log = read_sensor_log(render_game(game, seed=minute).jsonl().splitlines())
    start = StartInfo(log.start.fen, log.start.time_control, tags)
    _, writer = archive.new_game(start, dt.datetime(2026, 12, 4, 19, minute), "fide")
    referee, _ = new_game(start, PROFILES["fide"])
    events = log.events if whole else log.events[: len(log.events) // 2]
    for event in events:
        writer.record(event, referee.feed(event))
    if whole:
        writer.record(None, referee.finish(events[-1].t))
    writer.close()


# The shortest threefold repetition: the start position a third time after 8 plies; the
# simulated player claims it (9.2), as at the board.
KNIGHTS_BACK = "1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 1/2-1/2"
FOOLS_MATE = "1. f3 e5 2. g4 Qh4# 0-1"


def pgn(text: str) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    return game


def test_from_the_archive(tmp_path: Path) -> None:
    archive = Archive(tmp_path / "club")
    # Legall's mate (1-0), the fool's mate (0-1), a threefold claimed (1/2-1/2), a game
    # still being played, and one whose players were never entered: real games at the board.
    with CLASSICS.open(encoding="utf-8") as stream:
        legall = next(game for game in iter(lambda: chess.pgn.read_game(stream), None)
                      if game.headers["White"].startswith("Legall"))
    fools_mate, repetition = pgn(FOOLS_MATE), pgn(KNIGHTS_BACK)
    archive_game(archive, legall, {"White": "王小明", "Black": "Li Lei"}, 0)
    archive_game(archive, fools_mate, {"White": "Zhang Wei", "Black": "王小明"}, 10)
    archive_game(archive, repetition, {"White": "Li Lei", "Black": "王小明"}, 20)
    archive_game(archive, legall, {"White": "Zhang Wei", "Black": "Li Lei"}, 30, whole=False)
    archive_game(archive, legall, {"Event": "Casual"}, 40)
    assert [g.result for g in archive.games()] == ["1-0", "0-1", "1/2-1/2", "*", "1-0"]

    done = ladder("--data-dir", str(archive.root), "--json")
    assert done.returncode == 0, done.stderr
    # 王 0 beats Li 0: +10. 王 10 beats Zhang 0, d = 10: 10 - 10/12.5 = 9.2.
    # Li -10 v 王 19.2 drawn, d = 29.2: Li gains (10 + 2.92)/2 = 6.46.
    assert json.loads(done.stdout) == [
        {"player": "王小明", "points": 19.2, "level": None, "games": 3},
        {"player": "Li Lei", "points": -3.54, "level": None, "games": 2},
        {"player": "Zhang Wei", "points": -9.2, "level": None, "games": 1},
    ]
    label = f"archive {archive.root}"
    assert f"{label}: game 4 (Zhang Wei - Li Lei): still being played; skipped" in done.stderr
    assert f"{label}: game 5 (? - ?): no White or Black name; skipped" in done.stderr

    # Without a source: the data directory's archive ($BOARD_CTL_DATA, set per test).
    assert ladder("--json").stdout.strip() == "[]"

    # Sources in the order given: a PGN game before or after the archive's.
    before = write(tmp_path / "before.pgn", pgn_game("Zhang Wei", "王小明", "1-0"))
    first = {r["player"]: r["points"] for r in ladder_json(
        "--pgn", str(before), "--data-dir", str(archive.root))}
    last = {r["player"]: r["points"] for r in ladder_json(
        "--data-dir", str(archive.root), "--pgn", str(before))}
    assert first != last
    # After the archive: Zhang -9.2 beats 王 19.2, d = 28.4: 10 + 2.84 = 12.84.
    assert (last["Zhang Wei"], last["王小明"]) == (3.64, 6.36)


def test_the_games_view_shows_what_each_game_moved(tmp_path: Path) -> None:
    club = write(tmp_path / "club.pgn", pgn_game("Ann", "Bob", "1-0") + pgn_game("Bob", "Ann", "1-0"))
    done = ladder("--pgn", str(club), "--games")
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.split() == ["1", "Ann", "(0.00)", "-", "Bob", "(0.00)", "1-0", "+10.00", "/",
                             "-10.00", "equal", "points,", "d", "<", "10:", "10"]
    # Bob -10 beats Ann 10, d = 20: "低级别方赢：…得10+差分/10" = 12.
    assert "Bob (-10.00) - Ann (10.00)" in second and "+12.00 / -12.00" in second
    assert io.StringIO(second).read().endswith("lower side wins, 10 <= d < 100: 10 + d/10")
