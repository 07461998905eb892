"""The tournament hall as an organiser sets it up, for the end-to-end tests: Mosquitto
with the shipped config (tests/brokerkit.py), boards that are `board-emulator` on a pty
with `board-ctl run --mqtt` against it (each its own config, data directory and MQTT
password file), and `board-ctl arbiter` in its own process, logged in to the broker as
the ACL's arbiter user."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx

from board_ctl.simulate import RenderedGame
from brokerkit import Broker
from conftest import stop_process
from servicekit import EmulatorProcess, child_env
from stationkit import ArbiterProcess

ARBITER = "anna"
ARBITER_PASSWORD = "correct horse battery"


def wait_until(check: Callable[[], Any], timeout: float, what: str,
               alive: Callable[[], None] | None = None) -> Any:
    """Poll `check` until it is truthy (its value is returned); `alive` raises if a
    process the wait depends on died."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if alive is not None:
            alive()
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def shifted(game: RenderedGame, hold: float, until: float | None = None) -> str:
    """The game's sensor log with every event `hold` log seconds later (the board
    stands in the start position meanwhile), cut after log time `until` (shifted too)."""
    lines = []
    for line in game.lines:
        if line.get("ev") != "start":
            line = {**line, "t": round(line["t"] + hold, 3)}
            if until is not None and line["t"] > until + hold:
                break
        lines.append(line)
    return "".join(json.dumps(line) + "\n" for line in lines)


def press_times(game: RenderedGame, ply: int) -> list[float]:
    """The log times of the clock presses made while playing ply `ply` (0-based)."""
    trace = game.plies[ply]
    return [line["t"] for line in game.lines[trace.first_line:trace.end_line + 1]
            if line.get("ev") == "clock"]


class StationProcess(ArbiterProcess):
    """`board-ctl arbiter`, with one arbiter added by `--add-user` as an organiser does,
    logged in to the broker as the ACL's arbiter user."""

    def __init__(self, broker: Broker, folder: Path, *extra: str,
                 timeout: float = 30.0, nofile: int | None = None) -> None:
        added = subprocess.run(
            [sys.executable, "-m", "board_ctl.cli", "arbiter", "--add-user", ARBITER,
             "--data-dir", str(folder / "data")], input=ARBITER_PASSWORD + "\n", text=True,
            capture_output=True, env=child_env(), timeout=60)
        assert added.returncode == 0, added.stderr
        super().__init__(folder, [
            "--broker", broker.url, "--broker-user", "arbiter",
            "--broker-password-file", str(broker.password_file("arbiter")), *extra],
            timeout=timeout, env=child_env(), nofile=nofile)


class BoardProcess:
    """One board of the hall: the emulator playing `log` on a pty and `board-ctl run`
    publishing to the broker, configured as docs/mqtt.md's boards are."""

    def __init__(self, broker: Broker, folder: Path, board_id: str, board_no: int, log: str,
                 *, speed: float, until: float, time_control: str, url: str | None = None,
                 site: str = "") -> None:
        self.board_id = board_id
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "game.jsonl").write_text(log, encoding="utf-8")
        self.data = folder / "data"
        self.games = folder / "games"
        self.config = folder / "board.toml"
        self.config.write_text(
            "[mqtt]\n"
            f'url = "{url or broker.url}"\n'
            f'board_id = "{board_id}"\n'
            f'password_file = "{broker.password_file(board_id)}"\n'
            f"board_no = {board_no}\n"
            f'site = "{site}"\n'
            f'[game]\ntime_control = "{time_control}"\n'
            f'[output]\ndir = "{self.games}"\ndata_dir = "{self.data}"\n'
            '[display]\nview = "plain"\n', encoding="utf-8")
        self.emulator = EmulatorProcess(folder / "link", "--log", str(folder / "game.jsonl"),
                                        "--speed", f"{speed:g}", "--until", f"{until:g}")
        self.log_path = folder / "board.log"
        self.log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "board_ctl.cli", "run", "--config", str(self.config),
             "--port", str(folder / "link")], cwd=folder, stdout=self.log,
            stderr=subprocess.STDOUT, env=child_env())

    def alive(self) -> None:
        if self.process.poll() is not None:
            raise AssertionError(f"board {self.board_id} exited: {self.log_path.read_text()}")

    def journal(self) -> list[dict[str, Any]]:
        """Every line of the board's games' journals, oldest game first."""
        lines = []
        for path in sorted((self.data / "games").glob("*/journal.jsonl")):
            for raw in path.read_text(encoding="utf-8").splitlines():
                try:
                    lines.append(json.loads(raw))
                except ValueError:
                    continue  # (a line being written)
        return lines

    def game_ids(self) -> list[str]:
        """The board's games in its archive, oldest first."""
        return sorted(p.parent.name for p in (self.data / "games").glob("*/journal.jsonl"))

    def pgn_files(self) -> list[Path]:
        return sorted(self.games.glob("*.pgn"))

    def stop(self) -> None:
        stop_process(self.process, grace=20)
        self.log.close()
        if self.emulator.proc.poll() is None:
            self.emulator.proc.terminate()
        self.emulator.close()


def sign_in(client: httpx.Client) -> str:
    """Sign `client` in as the arbiter; the CSRF token its POSTs carry."""
    import re

    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert token is not None
    signed = client.post("/login", data={"user": ARBITER, "password": ARBITER_PASSWORD,
                                         "csrf": token.group(1)})
    assert signed.status_code in (200, 303), signed.text
    csrf = re.search(r'<meta name="csrf" content="([^"]+)">', client.get("/arbiter").text)
    assert csrf is not None
    return csrf.group(1)


def print_logs(*paths: Path, lines: int = 30) -> None:
    """The end of each log, for a failed test's report (pytest shows what it printed)."""
    for path in paths:
        if path.exists():
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            print(f"---- {path}", *tail, sep="\n")
