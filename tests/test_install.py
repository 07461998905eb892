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
from servicekit import ROOT, child_env, game_from

UNIT = ROOT / "config" / "board-ctl.service"
EXAMPLE = ROOT / "config" / "board.example.toml"
MAX_EXPOSURE = 4.0


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


def test_the_unit_waits_for_the_clock_and_its_user_cannot_log_in() -> None:
    settings = unit_settings()
    assert "time-sync.target" in " ".join(settings["After"]).split()
    useradd = " ".join(line.strip("# \\") for line in UNIT.read_text().splitlines()
                       if "useradd" in line or "--groups" in line)
    assert "--shell /usr/sbin/nologin" in useradd
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
    config = tmp_path / "board.toml"
    config.write_text('[emulator]\nspeed = 40.0\n', encoding="utf-8")
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
