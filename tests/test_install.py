"""The shipped install: the systemd unit (its sandbox scored by systemd-analyze, and the
service run with the environment the unit gives it: no home, $STATE_DIRECTORY), the
example configuration's pins, and the board emulator started from this installation,
never from whatever the working directory holds."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from board_ctl.journal import read_journal
from conftest import missing_tool, read_pgn
from servicekit import ROOT, EmulatorProcess, child_env, game_from
from test_docs import commands, unknown_words

from board_ctl.cli import build_parser

UNIT = ROOT / "config" / "board-ctl.service"
EXAMPLE = ROOT / "config" / "board.example.toml"
PI_CONFIG = ROOT / "config" / "board.pi.toml"
GUIDE = ROOT / "docs" / "install.md"
DEMO = ROOT / "board_ctl" / "data" / "demo-opera-game.jsonl"
MAX_EXPOSURE = 4.0
VENV = "/opt/board-ctl"  # where the guide installs board-ctl (and the unit runs it from)


def unit_settings() -> dict[str, list[str]]:
    """KEY -> values of the unit's [Unit] and [Service] settings (comments left out)."""
    settings: dict[str, list[str]] = {}
    for line in UNIT.read_text(encoding="utf-8").splitlines():
        if line.startswith(("#", "[")) or "=" not in line:
            continue
        key, _, value = line.partition("=")
        settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def test_the_unit_is_sandboxed() -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        missing_tool("systemd-analyze not installed (apt-get install systemd)")
        return
    result = subprocess.run([analyze, "security", "--offline=true", str(UNIT)],
                            capture_output=True, text=True, timeout=60)
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout)
    assert found, result.stdout + result.stderr
    assert float(found.group(1)) <= MAX_EXPOSURE, result.stdout


STATION_UNIT = ROOT / "config" / "board-ctl-arbiter.service"


def test_the_station_unit_is_sandboxed_and_has_file_descriptors_for_the_hall() -> None:
    """Issue 17 §1.6: 1,100 idle live-feed connections took every file descriptor of the
    station. Its unit gives it many (the feeds get a quarter: board_ctl.station.feeds);
    the board's unit some for its LiveChess endpoint's connections."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        missing_tool("systemd-analyze not installed (apt-get install systemd)")
        return
    result = subprocess.run([analyze, "security", "--offline=true", str(STATION_UNIT)],
                            capture_output=True, text=True, timeout=60)
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout)
    assert found, result.stdout + result.stderr
    assert float(found.group(1)) <= MAX_EXPOSURE, result.stdout
    for unit, least in ((STATION_UNIT, 16384), (UNIT, 4096)):
        limits = [line.partition("=")[2] for line in unit.read_text().splitlines()
                  if line.startswith("LimitNOFILE=")]
        assert limits and int(limits[0]) >= least, unit


def test_the_unit_waits_for_the_clock_and_its_user_cannot_log_in() -> None:
    settings = unit_settings()
    assert "time-sync.target" in " ".join(settings["After"]).split()
    [useradd] = commands(GUIDE, "useradd")  # the install guide makes the user
    assert " ".join(useradd).endswith("--shell /usr/sbin/nologin --groups gpio,dialout "
                                      "board-ctl") and settings["User"] == ["board-ctl"]
    devices = " ".join(settings["DeviceAllow"])
    assert settings["DevicePolicy"] == ["closed"]
    for device in ("char-ttyACM", "char-ttyUSB", "char-gpiochip", "char-ttyGS", "char-rfcomm"):
        assert device in devices


@pytest.mark.slow
def test_the_service_runs_as_the_unit_starts_it(tmp_path: Path) -> None:
    """The unit's user has no home (ProtectHome=, --no-create-home), systemd gives it
    its state directory and working directory; it must archive and write every game
    there. (The old code used ~/.local/share and died: "Read-only file system".)"""
    settings = unit_settings()
    [state_name] = settings["StateDirectory"]
    state = tmp_path / "var" / "lib" / state_name  # what systemd creates
    state.mkdir(parents=True)
    [workdir] = settings["WorkingDirectory"]
    assert workdir == f"/var/lib/{state_name}"
    [exec_start] = settings["ExecStart"]
    program, *args = exec_start.split()
    assert program.endswith("/board-ctl")
    # the board: a Pico, played by board-emulator on a pty (the unit refuses the
    # built-in emulator: --require-board)
    link = tmp_path / "chessboard"
    emulator = EmulatorProcess(link, "--log", str(DEMO), "--speed", "40")
    config = tmp_path / "board.toml"
    config.write_text(PI_CONFIG.read_text(encoding="utf-8").replace(
        '"/dev/chessboard"', f'"{link}"'), encoding="utf-8")
    args = [str(config) if a == "/etc/board-ctl/board.toml" else a for a in args]
    env = {k: v for k, v in child_env().items()
           if k not in ("BOARD_CTL_DATA", "XDG_DATA_HOME", "XDG_STATE_HOME")}
    env.update(HOME="/dev/null/home", STATE_DIRECTORY=str(state),  # no home can be made
               WATCHDOG_USEC="10000000", NOTIFY_SOCKET=str(tmp_path / "notify"))
    for assignment in settings.get("Environment", []):
        key, _, value = assignment.partition("=")
        env[key] = value
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(env["NOTIFY_SOCKET"])
    said: list[str] = []
    listener = threading.Thread(target=lambda: said.extend(
        iter(lambda: notify.recv(4096).decode(), "STOPPING=1")), daemon=True)
    listener.start()
    try:
        result = subprocess.run([sys.executable, "-m", "board_ctl.cli", *args, "--once"],
                                cwd=state, env=env, capture_output=True, text=True,
                                timeout=120)
        listener.join(timeout=10)
    finally:
        notify.close()
        emulator.close(timeout=30)
    assert result.returncode == 0, result.stderr + result.stdout
    assert any(s.startswith("READY=1") for s in said)
    [journal] = (state / "games").glob("*/journal.jsonl")
    recovered = read_journal(journal)
    assert recovered.ended and not recovered.problems
    [pgn] = (state / "games").glob("*.pgn")
    game = read_pgn(pgn)
    assert game is not None
    assert list(game.mainline_moves()) == list(game_from("classics.pgn", 0).mainline_moves())


RESERVED = {0: "HAT EEPROM", 1: "HAT EEPROM", 2: "I2C", 3: "I2C", 14: "UART", 15: "UART"}


def test_the_example_suggests_no_reserved_pin_and_says_why() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    suggested = {(m.group(1), int(pin))
                 for m in re.finditer(r"(?m)^#? ?(\w+) = (\[[\d, ]+\]|\d+)$", text)
                 for pin in re.findall(r"\d+", m.group(2))
                 if m.group(1) in PIN_KEYS}
    assert suggested, "no pin found in the example"
    bad = sorted((key, pin) for key, pin in suggested if pin in RESERVED)
    assert bad == [], f"reserved pins suggested: {bad}"
    for pins, why in (("GPIO0, GPIO1", "EEPROM"), ("GPIO2, GPIO3", "I2C"),
                      ("GPIO14, GPIO15", "UART")):
        assert re.search(rf"{pins}\s+\S[^\n]*{why}", text), f"{pins}: no reason given"


PIN_KEYS = {"rows", "cols", "clock_white", "clock_black", "promote_q", "promote_r",
            "promote_b", "promote_n", "draw_offer_white", "draw_offer_black",
            "draw_accept_white", "draw_accept_black", "claim_white", "claim_black",
            "resign_white", "resign_black", "arbiter", "white_to_move", "black_to_move",
            "alert", "game_over", "buzzer"}


@pytest.mark.slow
def test_a_planted_emulator_in_the_working_directory_never_runs(tmp_path: Path) -> None:
    """`board-ctl run` starts the board emulator from its own installation: a
    firmware_bridge/ package in the working directory (a state directory anyone could
    write, a downloaded folder) is not imported. The old `python -m` ran it."""
    planted = tmp_path / "firmware_bridge"
    planted.mkdir()
    marker = tmp_path / "PLANTED-CODE-RAN"
    code = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    (planted / "__init__.py").write_text(code)
    (planted / "emulator.py").write_text(code + "raise SystemExit(3)\n")
    # -P: the service as its console script runs it, without the working directory
    result = subprocess.run(
        [sys.executable, "-P", "-m", "board_ctl.cli", "run", "--once", "--speed", "40",
         "--view", "plain", "--data-dir", str(tmp_path / "data")],
        cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=120)
    assert not marker.exists(), marker.read_text()
    assert result.returncode == 0, result.stderr
    assert "17. Rd8#" in result.stdout


# ---------------------------------------------------------------- the install guide


def unit_args(config: Path) -> list[str]:
    """The unit's ExecStart arguments, its config file replaced by `config`."""
    [exec_start] = unit_settings()["ExecStart"]
    _, *args = exec_start.split()
    return [str(config) if a == "/etc/board-ctl/board.toml" else a for a in args]


def board_ctl(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "board_ctl.cli", *args], cwd=cwd,
                          env=child_env(), capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("config", [EXAMPLE, None], ids=["the example", "no file"])
def test_the_unit_refuses_the_demo_game(tmp_path: Path, config: Path | None) -> None:
    """An install left with the example configuration (or none) used to play the demo
    game, exit 0 and never be restarted: now one line naming the key, and exit status 2,
    which the unit does not restart."""
    args = unit_args(config) if config is not None else [
        a for a in unit_args(EXAMPLE) if a not in ("--config", str(EXAMPLE))]
    result = board_ctl(args, tmp_path)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith('board-ctl run: board.backend is "emulator" (the built-in demo '
                           'game; ')
    assert "--require-board" in line and 'backend = "serial"' in line
    assert "docs/install.md" in line
    assert not (tmp_path / "games").exists()  # no demo game played
    assert unit_settings()["RestartPreventExitStatus"] == ["2"]


def test_the_pi_configuration_reads_the_board_on_usb(tmp_path: Path) -> None:
    result = board_ctl(["config", "check", str(PI_CONFIG)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "board: the board on /dev/chessboard" in result.stdout
    assert "view plain" in result.stdout


def guide_commands(program: str) -> list[list[str]]:
    """The guide's `program` commands, also as the venv's, run as the service's user
    (the user's name alone, `board-ctl`, is none)."""
    found = (commands(GUIDE, program) + commands(GUIDE, f"{VENV}/bin/{program}")
             + commands(GUIDE, f"-u board-ctl {VENV}/bin/{program}"))
    return [words for words in found if words]


def test_the_install_guide_installs_what_the_unit_uses() -> None:
    """The guide's steps: the files it installs exist here, the configuration goes where
    the unit reads it, the program where the unit runs it from, and every board-ctl
    command it shows exists with its options."""
    installs = [words for words in commands(GUIDE, "install")]
    sources = {w for words in installs for w in words if w.startswith("config/")}
    assert sources == {"config/board.pi.toml", "config/99-board-ctl.rules",
                       "config/board-ctl.service"}
    assert all((ROOT / source).is_file() for source in sources)
    [config_step] = [w for w in installs if "config/board.pi.toml" in w]
    [exec_start] = unit_settings()["ExecStart"]
    assert exec_start.split()[0] == f"{VENV}/bin/board-ctl"
    assert f"--config {config_step[-1]}" in exec_start
    assert "--require-board" in exec_start.split()
    venv = commands(GUIDE, "python3")
    assert ["-m", "venv", "--system-site-packages", VENV] in venv
    shown = guide_commands("board-ctl")
    assert len(shown) >= 8 and ["games", "--data-dir", "/var/lib/board-ctl"] in shown
    wrong = {" ".join(w): unknown_words(w, build_parser()) for w in shown}
    assert {k: v for k, v in wrong.items() if v} == {}


@pytest.mark.slow
def test_pip_installs_the_guide_where_the_unit_points(tmp_path: Path) -> None:
    """`pip install .` into a venv, as the guide does (its dependencies are this
    environment's): every file the unit's Documentation= names is there, and the
    program it installs runs the guide's commands."""
    venv = tmp_path / "opt-board-ctl"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=120)
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-deps", "--quiet",
                           str(ROOT)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    [documentation] = unit_settings()["Documentation"]
    for uri in documentation.split():
        assert uri.startswith(f"file://{VENV}/")
        path = venv / uri[len(f"file://{VENV}/"):]
        assert path.is_file(), f"{uri}: pip installed no {path}"
    assert (venv / "share" / "doc" / "board-ctl" / "install.md").read_text(
        encoding="utf-8") == GUIDE.read_text(encoding="utf-8")
    env = {k: v for k, v in child_env().items() if k != "PYTHONPATH"}
    installed = subprocess.run([str(venv / "bin" / "board-ctl"), "config", "check",
                                str(PI_CONFIG)], capture_output=True, text=True,
                               timeout=60, env=env, cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    assert "the board on /dev/chessboard" in installed.stdout
