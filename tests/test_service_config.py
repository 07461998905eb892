"""The service's configuration (TOML, checked at start-up), sd_notify over a real unix
socket, and `board-ctl run`'s answers to bad input: one line, the right exit status."""

from __future__ import annotations

import io
import json
import re
import socket
from pathlib import Path

import pytest

from board_ctl.config import Config, all_keys, load_config, parse_config
from board_ctl.errors import ConfigError
from board_ctl.service.cli import run_command
from board_ctl.cli import build_parser
from board_ctl.service.sdnotify import Notifier
from servicekit import ROOT, board_ctl

EXAMPLE = ROOT / "config" / "board.example.toml"


def test_nothing_configured_is_the_demo() -> None:
    config = load_config(None)
    assert config == Config()
    assert config.board.backend == "emulator" and config.emulator.log == ""
    assert config.output.dir == "games"


def test_the_example_documents_every_key_and_loads() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    config = load_config(EXAMPLE)
    assert config.board.backend == "emulator"
    for key in all_keys():
        section, name = key.rsplit(".", 1)
        assert re.search(rf"^\[{re.escape(section)}\]", text, re.M), f"no [{section}]"
        assert re.search(rf"^#? ?{name} = ", text, re.M), f"{key} is not documented"
    # every commented-out key is valid as written, uncommented on its own
    for block in re.split(r"(?m)^(?=\[)", text):
        for line in re.findall(r"(?m)^# (\w+ = .*)$", block):
            section = block.split("]", 1)[0] + "]"
            parse_config(f'[board]\nbackend = "gpio"\n{section}\n{line}\n', "example")


@pytest.mark.parametrize("text,message", [
    ('[board]\nbackend = "x"', "board.backend must be one of serial, gpio, emulator, got 'x'"),
    ('[board]\nbackend = "serial"\nspeed = 3', "unknown key board.speed in board"),
    ('[bord]\nbackend = "serial"', "unknown key bord in the config file"),
    ('[serial]\nbaudrate = "fast"', "serial.baudrate must be an integer, got 'fast'"),
    ("[serial]\nlost_timeout = 0", "serial.lost_timeout must be at least 0.1, got 0"),
    ("[gpio]\nrows = [1, 2, 3]", "gpio.rows must list 8 values, got 3"),
    ("[gpio]\nrows = [4, 17, 27, 22, 5, 6, 13, 40]",
     "gpio.rows[7] must be a BCM GPIO number 0-27, got 40"),
    ('[board]\nbackend = "gpio"\n[status]\nalert = 4', "gpio.rows[0] uses GPIO4, already used by "
                                                        "status.alert"),
    ("[status]\nactive_high = 1", "status.active_high must be true or false, got 1"),
    ('[game]\nfen = "not a fen"', "game.fen: 'not a fen' is not a FEN"),
    ('[display]\nview = "fancy"', "display.view must be one of auto, rich, plain, none"),
    ("board = 3", "board must be a table ([board]), got 3"),
    ("[board\nbackend = 1", "not valid TOML"),
])
def test_bad_keys_are_named(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "board.toml")
    assert str(caught.value).startswith("board.toml: ")
    assert message in str(caught.value)


def test_command_line_overrides_are_checked_too() -> None:
    config = Config().with_overrides(board={"backend": "serial"}, serial={"port": "loop://"},
                                     emulator={"speed": None})
    assert (config.board.backend, config.serial.port) == ("serial", "loop://")
    with pytest.raises(ConfigError, match="emulator.speed must be at least 0.01, got -2"):
        Config().with_overrides(emulator={"speed": -2.0})


def test_bad_config_file_is_one_line_and_exit_2(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "board.toml"
    bad.write_text('[board]\nbackend = "usb"\n', encoding="utf-8")
    args = build_parser().parse_args(["run", "--config", str(bad)])
    assert run_command(args) == 2
    err = capsys.readouterr().err
    assert err == (f"board-ctl run: {bad}: board.backend must be one of serial, gpio, "
                   f"emulator, got 'usb'\n")
    args = build_parser().parse_args(["run", "--config", str(tmp_path / "none.toml")])
    assert run_command(args) == 2
    assert "cannot read config file" in capsys.readouterr().err


ON_A_PI = Path("/proc/device-tree/model").is_file() and \
    "Raspberry Pi" in Path("/proc/device-tree/model").read_text(errors="replace")


@pytest.mark.skipif(ON_A_PI, reason="this machine has GPIO")
def test_status_pins_without_gpio_are_one_line(tmp_path: Path) -> None:
    """A [status] pin on a machine without GPIO: exit 1 with one line, no traceback."""
    config = tmp_path / "board.toml"
    config.write_text("[status]\nwhite_to_move = 17\n", encoding="utf-8")
    result = board_ctl("run", "--config", str(config), "--once", "--view", "plain",
                       cwd=tmp_path, timeout=30)
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("board-ctl run: status LEDs: ")
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------- sd_notify


def test_sd_notify_over_a_real_socket(tmp_path: Path) -> None:
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(str(path))
        listener.settimeout(5)
        now = [0.0]
        notifier = Notifier({"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "2000000"},
                            clock=lambda: now[0])
        assert notifier.watchdog_interval == 2.0
        assert notifier.ready("board on /dev/chessboard")
        assert listener.recv(1024) == b"READY=1\nSTATUS=board on /dev/chessboard"
        assert notifier.pet()
        assert listener.recv(1024) == b"WATCHDOG=1"
        now[0] = 0.9
        assert not notifier.pet()  # half the interval has not passed
        now[0] = 1.0
        assert notifier.pet()
        assert listener.recv(1024) == b"WATCHDOG=1"
        assert notifier.stopping()
        assert listener.recv(1024) == b"STOPPING=1"
        notifier.close()


def test_sd_notify_abstract_socket_and_absent() -> None:
    name = f"board-ctl-test-{id(object())}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind("\0" + name)
        listener.settimeout(5)
        notifier = Notifier({"NOTIFY_SOCKET": "@" + name})
        assert notifier.status("game 1 playing")
        assert listener.recv(1024) == b"STATUS=game 1 playing"
        notifier.close()
    quiet = Notifier({})
    assert not quiet.enabled and not quiet.ready() and not quiet.pet()
    other = Notifier({"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "1000", "WATCHDOG_PID": "1"})
    assert other.watchdog_interval is None  # the watchdog is for another process


@pytest.mark.parametrize("port,backend,key,value", [
    ("/dev/serial/by-id/usb-board", "serial", "serial.port", "/dev/serial/by-id/usb-board"),
    ("socket://localhost:7000", "serial", "serial.port", "socket://localhost:7000"),
    ("emulator://", "emulator", "emulator.log", ""),
    ("emulator://{tmp}/game.jsonl", "emulator", "emulator.log", "{tmp}/game.jsonl"),
    ("gpio://", "gpio", None, None),
])
def test_port_urls_pick_the_backend(port: str, backend: str, key: str | None,
                                    value: str | None, tmp_path: Path) -> None:
    from board_ctl.service.cli import _config

    (tmp_path / "game.jsonl").write_text('{"t": 1.0, "ev": "lift", "sq": "e2"}\n')
    port = port.format(tmp=tmp_path)
    value = value.format(tmp=tmp_path) if value is not None else None
    config = _config(build_parser().parse_args(["run", "--port", port, "--speed", "8"]))
    assert config.board.backend == backend
    assert config.emulator.speed == 8.0
    if key is not None:
        section, name = key.split(".")
        assert getattr(getattr(config, section), name) == value


def test_time_control_on_the_command_line(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from board_ctl.service.cli import _config

    config_file = tmp_path / "board.toml"
    config_file.write_text('[game]\ntime_control = "300+2"\n', encoding="utf-8")
    chosen = _config(build_parser().parse_args(["run", "--config", str(config_file),
                                                "--time-control", "40/5400+30:1800+30"]))
    assert chosen.game.time_control == "40/5400+30:1800+30"  # the option wins
    kept = _config(build_parser().parse_args(["run", "--config", str(config_file)]))
    assert kept.game.time_control == "300+2"
    args = build_parser().parse_args(["run", "--time-control", "5400+"])
    assert run_command(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("board-ctl run: --time-control: TimeControl '5400+'")  # the option
    assert len(err.splitlines()) == 1


# ---------------------------------------------------------------- edges (issue 8 §1, §2, §6)


def run_args(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = run_command(build_parser().parse_args(["run", *args]))
    return code, capsys.readouterr().err


@pytest.mark.parametrize("args, words", [
    (["--port", "bogus://x"], "board-ctl run: --port: 'bogus://x' is not a port: pyserial "
                              "opens no bogus:// URL"),
    (["--time-control", "garbage"], "board-ctl run: --time-control: TimeControl 'garbage'"),
    (["--time-control", "9" * 400], "board-ctl run: --time-control: TimeControl '999"),
    (["--speed", "nan"], "board-ctl run: --speed must be a finite number, got nan"),
    (["--speed", "1e9"], "board-ctl run: --speed must be at most 1000, got 1e+09"),
])
def test_bad_options_are_named_as_options(capsys: pytest.CaptureFixture[str],
                                          args: list[str], words: str) -> None:
    code, err = run_args(capsys, *args)
    assert code == 2 and err.startswith(words), err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("text, words", [
    ('[board]\nbackend = "serial"\n[serial]\nport = ""',
     "serial.port: must name the board's port"),
    ('[board]\nbackend = "serial"\n[serial]\nport = "   "',
     "serial.port: must name the board's port"),
    ("[serial]\nbaudrate = 99999999999999999999", "serial.baudrate must be at most 4000000"),
    ("[serial]\nconnect_timeout = 1" + "0" * 400, "serial.connect_timeout must be at most"),
    ('[game]\ntime_control = "' + "9" * 400 + '"', "game.time_control: TimeControl '999"),
])
def test_a_bad_serial_or_game_key_stops_at_once(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path, text: str, words: str) -> None:
    """Issue 8 §1, §6: a config error at start-up, not after the 10 s connect timeout, not
    a traceback from deep inside termios or the clock."""
    import time

    board = tmp_path / "board.toml"
    board.write_text(text)
    started = time.monotonic()
    code, err = run_args(capsys, "--config", str(board))
    assert time.monotonic() - started < 2.0
    assert code == 2 and err.startswith(f"board-ctl run: {board}: {words}"), err
    assert len(err.splitlines()) == 1


def test_a_config_that_is_no_file_is_refused_at_once(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOARD_CTL_CONFIG", "/dev/zero")
    code, err = run_args(capsys)
    assert code == 2 and err == "board-ctl run: config file /dev/zero is not a regular file\n"


def test_a_url_pyserial_cannot_open_is_one_line(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    """A known scheme with options pyserial refuses: the link says so at once (exit 1)."""
    code, err = run_args(capsys, "--port", "loop://?bad=1", "--view", "none", "--once",
                         "--data-dir", str(tmp_path / "data"))
    assert code == 1 and err.startswith("board-ctl run: cannot open loop://?bad=1: "), err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


FOOLS_MATE = [("f2", "f3"), ("e7", "e5"), ("g2", "g4"), ("d8", "h4")]
SCHOLARS_MATE = [("e2", "e4"), ("e7", "e5"), ("f1", "c4"), ("b8", "c6"), ("d1", "h5"),
                 ("g8", "f6"), ("h5", "f7", "capture")]


def _moves(t: float, moves: list[tuple[str, ...]]) -> tuple[list[dict[str, object]], float]:
    lines: list[dict[str, object]] = []
    for ply, move in enumerate(moves):
        side = "white" if ply % 2 == 0 else "black"
        if len(move) == 3:  # the captured piece first
            lines.append({"t": round(t, 3), "ev": "lift", "sq": move[1]})
            t += 0.5
        lines += [{"t": round(t, 3), "ev": "lift", "sq": move[0]},
                  {"t": round(t + 0.6, 3), "ev": "place", "sq": move[1]},
                  {"t": round(t + 1.1, 3), "ev": "clock", "side": side}]
        t += 2.0
    return lines, t


@pytest.mark.slow
def test_two_games_in_one_run_each_keep_their_files(tmp_path: Path) -> None:
    """Issue 8 §2, §6, through the real command and the emulator in its own process: a
    log whose start line has bad tags among good ones plays two games (the pieces set
    up again in between); each game gets its own PGN, report and sensor log, none
    overwrites the other, and both PGNs carry the good tags only. The log starts with a
    byte-order mark, as Windows editors write it."""
    import chess
    import chess.pgn

    from servicekit import board_ctl as board_ctl_command

    first, t = _moves(1.0, FOOLS_MATE)
    reset = [{"t": round(t + 1 + 0.3 * i, 3), "ev": kind, "sq": sq} for i, (kind, sq) in
             enumerate([("lift", "f3"), ("place", "f2"), ("lift", "g4"), ("place", "g2"),
                        ("lift", "e5"), ("place", "e7"), ("lift", "h4"), ("place", "d8")])]
    second, _ = _moves(t + 6.0, SCHOLARS_MATE)
    start = {"t": 0, "ev": "start", "tags": {"White": "Ann", "Event": "Club night",
                                            "_x": "1", "Annotator": "a\rb", "Variant": "foo"}}
    log = tmp_path / "two.jsonl"
    log.write_text("\ufeff"  # a byte-order mark: the service, the emulator read past it
                   + "".join(json.dumps(x) + "\n" for x in [start, *first, *reset, *second]))
    done = board_ctl_command("run", "--port", f"emulator://{log}", "--speed", "20",
                             "--pgn", "x.pgn", "--report", "r.jsonl", "--view", "plain",
                             "--data-dir", str(tmp_path / "data"), cwd=tmp_path, timeout=90)
    assert done.returncode == 0, done.stderr
    results = []
    for pgn, report, sensor in [("x.pgn", "r.jsonl", "x.sensor.jsonl"),
                                ("x-2.pgn", "r-2.jsonl", "x-2.sensor.jsonl")]:
        game = chess.pgn.read_game(io.StringIO((tmp_path / pgn).read_text()))
        assert game is not None and game.end().board().is_checkmate()
        assert (game.headers["White"], game.headers["Event"]) == ("Ann", "Club night")
        assert not {"_x", "Annotator", "Variant"} & set(game.headers)
        assert (tmp_path / report).stat().st_size > 0 and (tmp_path / sensor).exists()
        results.append((game.headers["Result"], len(list(game.mainline_moves()))))
    assert results == [("0-1", 4), ("1-0", 7)]


@pytest.mark.slow
def test_an_absurd_clock_reading_in_an_emulator_log_is_a_clock_fault_not_a_crash(
        tmp_path: Path) -> None:
    """Issue 8 §1: 1e308 s on an external clock, played by the emulator through the wire
    (where it can say at most 2^32 - 1 ms): the service refuses it as a clock fault and
    the game goes on."""
    import chess.pgn

    from servicekit import board_ctl as board_ctl_command

    lines, _ = _moves(1.0, FOOLS_MATE)
    readings = iter([(1e308, 300.0), (299.0, 298.0), (297.0, 296.0), (295.0, 294.0)])
    for line in lines:
        if line["ev"] == "clock":
            line["white"], line["black"] = next(readings)
    log = tmp_path / "clock.jsonl"
    log.write_text("".join(json.dumps(x) + "\n" for x in
                           [{"t": 0, "ev": "start", "time_control": "300"}, *lines]))
    done = board_ctl_command("run", "--port", f"emulator://{log}", "--speed", "20", "--once",
                             "--pgn", "x.pgn", "--view", "plain",
                             "--data-dir", str(tmp_path / "data"), cwd=tmp_path, timeout=90)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    game = chess.pgn.read_game(io.StringIO((tmp_path / "x.pgn").read_text()))
    assert game is not None and game.end().board().is_checkmate()
    report = (tmp_path / "x.report.jsonl").read_text()
    assert '"code": "clock-fault"' in report
