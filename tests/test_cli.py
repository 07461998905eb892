"""The `board-ctl` command line as a new user meets it (issue 8 §6, issue 9 §4): a
version, a description on every command, a quick start, `config check`, and `export`
answering bad input with one line."""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import subprocess
import sys
from pathlib import Path

import chess.pgn
import pytest

from board_ctl import __version__
from board_ctl.archive import Archive
from board_ctl.cli import build_parser, main
from board_ctl.sensorlog import StartInfo

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "config" / "board.example.toml"
# What `board-ctl --help` must not pay for: python-chess's PGN module pulls in
# chess.engine, asyncio, ssl and subprocess; the service, rich, pyserial and gpiozero are
# for `run` alone.
NOT_AT_START = ("chess", "chess.pgn", "chess.engine", "asyncio", "ssl", "rich", "serial",
                "gpiozero", "tomllib", "board_ctl.service.service", "board_ctl.service.view",
                "board_ctl.archive", "board_ctl.journal", "board_ctl.record",
                "board_ctl.core.referee")


def test_importing_the_cli_and_building_its_parser_stays_light() -> None:
    """A structural guard of the start-up time on a Pi (issue 9 §4): not a timing. The
    parser is the one `board-ctl --help` builds."""
    code = ("import sys, board_ctl.cli as c; c.build_parser(['--help']); "
            "print(' '.join(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert "board_ctl.cli" in loaded and "board_ctl.service.cli" in loaded
    assert not loaded & set(NOT_AT_START), sorted(loaded & set(NOT_AT_START))


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"board-ctl {__version__}\n"


def _commands(parser: argparse.ArgumentParser, path: str = "board-ctl"):  # type: ignore[no-untyped-def]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{path} {name}", sub
                yield from _commands(sub, f"{path} {name}")


def test_every_command_has_a_description_and_help() -> None:
    commands = dict(_commands(build_parser()))
    assert set(commands) >= {"board-ctl replay", "board-ctl run", "board-ctl games",
                             "board-ctl export", "board-ctl config", "board-ctl config check"}
    for name, parser in commands.items():
        assert parser.description and len(parser.description) > 30, name
        text = parser.format_help()
        assert parser.description.split()[0] in text
        for action in parser._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"{name} {action.option_strings[0]} has no help"
    data_dir = commands["board-ctl games"].format_help()
    assert "default:" in data_dir  # the data directory, looked up only for the help


# ---------------------------------------------------------------- config check


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["config", "check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_config_check_says_what_it_checked(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = check(capsys, str(EXAMPLE))
    assert code == 0 and err == ""
    assert out.startswith(f"{EXAMPLE}: valid\n")
    assert "board: the board emulator" in out and "checked: every key" in out
    board = tmp_path / "board.toml"
    board.write_text('[board]\nbackend = "serial"\n[serial]\nport = "/dev/ttyACM0"\n'
                     '[game]\nwhite = "Ann"\ntime_control = "5400+30"\n')
    monkeypatch.setenv("BOARD_CTL_CONFIG", str(board))
    code, out, err = check(capsys)
    assert code == 0, err
    assert f"{board} (from $BOARD_CTL_CONFIG): valid" in out
    assert "/dev/ttyACM0 at 115200 baud" in out and "clock 5400+30" in out
    assert "White 'Ann'" in out and "the port's name" in out and "nothing was opened" in out
    monkeypatch.delenv("BOARD_CTL_CONFIG")
    code, out, err = check(capsys)
    assert code == 0 and out.startswith("no config file") and "built-in defaults" in out


@pytest.mark.parametrize("text, words", [
    ("[serial]\nbaudrate = 99999999999999999999",
     "serial.baudrate must be at most 4000000, got a number of 20 digits"),
    ('[game]\ntime_control = "' + "9" * 400 + '"', "game.time_control: TimeControl '999"),
    ('[game]\nwhite = "a\\u0000b"', "game.white: tag White: "),
    ('[serial]\nport = ""', "serial.port: must name the board's port"),
    ('[board]\nbackend = "serial"\n[serial]\nport = "bogus://x"', "pyserial opens no bogus://"),
    ("x = " + "[" * 3000 + "]" * 3000, "not valid TOML: nested too deeply"),
    ("[emulator]\nspeed = 1" + "0" * 400, "emulator.speed must be at most 1000"),
    ('[board\nbackend = "serial"', "not valid TOML"),
])
def test_config_check_names_the_bad_key_in_one_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, words: str) -> None:
    board = tmp_path / "board.toml"
    board.write_text(text)
    code, out, err = check(capsys, str(board))
    assert code == 2 and out == ""
    assert err.startswith(f"board-ctl config check: {board}: ") and words in err, err
    assert len(err.splitlines()) == 1 and len(err) < 500


@pytest.mark.parametrize("path, words", [("/dev/zero", "is not a regular file"),
                                         ("/nonexistent.toml", "cannot read config file")])
def test_config_files_that_are_no_files_are_refused_at_once(
        capsys: pytest.CaptureFixture[str], path: str, words: str) -> None:
    code, out, err = check(capsys, path)
    assert code == 2 and words in err and len(err.splitlines()) == 1


def test_a_config_too_large_to_be_one_is_refused(capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * (2 << 20) + "\n")
    code, _, err = check(capsys, str(big))
    assert code == 2 and "larger than 1024 kB" in err


def test_an_emulator_log_that_cannot_be_played_is_a_config_error(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "game.jsonl"
    log.write_text('{"t": 0, "ev": "start", "fen": "8/8/8/8/8/8/8/8 w - - 0 1"}\n')
    board = tmp_path / "board.toml"
    board.write_text(f'[emulator]\nlog = "{log}"\n')
    code, _, err = check(capsys, str(board))
    assert code == 2 and f"emulator.log: {log}:line 1: FEN " in err
    log.unlink()
    code, _, err = check(capsys, str(board))
    assert code == 2 and f"emulator.log: cannot read {log}: No such file" in err


# ---------------------------------------------------------------- export


def test_export_of_a_journal_with_bad_tags_writes_a_clean_pgn(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 8 §2: a journal written before tags were checked (or by hand) exports."""
    archive = Archive(tmp_path / "data")
    bad = {"_x": "1", "Annotator": "a\rb", "Variant": "foo", "White": "Ann"}
    _, journal = archive.new_game(StartInfo(tags=bad), dt.datetime(2026, 11, 30, 12))
    journal.close()
    out = tmp_path / "out.pgn"
    assert main(["export", "--data-dir", str(tmp_path / "data"), "--pgn", str(out)]) == 0
    game = chess.pgn.read_game(io.StringIO(out.read_text()))
    assert game is not None and game.headers["White"] == "Ann"
    assert not {"_x", "Annotator", "Variant"} & set(game.headers)
    assert main(["export", "--data-dir", str(tmp_path / "data"),
                 "--pgn", "/nonexistent/dir/x.pgn"]) == 2
    err = capsys.readouterr().err
    assert "board-ctl export: cannot write /nonexistent/dir/x.pgn: No such file or directory" \
        in err  # as replay says it
    assert "Traceback" not in err


def test_broken_pipe_is_quiet(tmp_path: Path) -> None:
    """`board-ctl replay LOG | head`: the reader leaving is no error to report."""
    log = tmp_path / "g.jsonl"
    moves = [{"t": 1.0 + i, "ev": "lift" if i % 2 == 0 else "place", "sq": "e2"}
             for i in range(400)]
    log.write_text("".join(json.dumps(m) + "\n" for m in moves))
    proc = subprocess.Popen([sys.executable, "-m", "board_ctl.cli", "replay", str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # as `head` does once it has read enough: here before any output
    err = proc.stderr.read().decode()
    proc.stderr.close()
    proc.wait(timeout=60)
    for words in ("Traceback", "BrokenPipe", "Broken pipe", "Exception ignored"):
        assert words not in err, err
    assert proc.returncode == 141  # as a shell reports a writer stopped by SIGPIPE
