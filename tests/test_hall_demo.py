"""tools/hall_demo.py, the README's small hall on one machine: it starts the broker with
the shipped config, three emulated boards and the station, prints the station's
addresses and the arbiter's password; the station answers with the three boards online,
paired from the round's CSV; the arbiter signs in with that password; Ctrl-C stops
every process it started."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest

from brokerkit import free_port, mosquitto_path
from conftest import stop_process
from hallkit import wait_until
from servicekit import ROOT, child_env


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
def test_the_demo_hall_starts_and_the_station_answers(tmp_path: Path) -> None:
    mosquitto_path()  # (a missing mosquitto fails in CI, skips elsewhere)
    port = free_port()
    folder = tmp_path / "hall"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tools" / "hall_demo.py"), "--dir", str(folder),
         "--listen", f"127.0.0.1:{port}", "--speed", "4"], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, env=child_env(), cwd=tmp_path)
    assert proc.stdout is not None
    out = b""
    try:
        deadline = time.monotonic() + 120
        while b"Ctrl-C stops the hall." not in out:
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            chunk = os.read(proc.stdout.fileno(), 65536) if ready else b""
            assert proc.poll() is None or chunk, f"the demo exited: {out.decode()}"
            out += chunk
            assert time.monotonic() < deadline, out.decode()
        text = out.decode()
        base = f"http://127.0.0.1:{port}"
        assert f"spectators  {base}/" in text
        password = re.search(r"user arbiter, password (\S+)\)", text)
        assert password is not None, text
        # every command it ran is shown, the broker's config being the shipped one
        assert "make-passwords.sh" in text and "config/mosquitto/board-ctl.conf" in text
        conf = (folder / "broker" / "mosquitto.conf").read_text()
        assert "allow_anonymous false" in conf and "persistence true" in conf
        assert re.search(r"^acl_file ", conf, re.M) and re.search(r"^password_file ", conf, re.M)

        boards = httpx.get(f"{base}/api/boards", timeout=5).json()
        assert boards["broker"]["connected"]
        assert [(b["id"], b["status"]) for b in boards["boards"]] == \
            [("b01", "online"), ("b02", "online"), ("b03", "online")]
        # the round's pairings reached the boards: the broadcast has the players
        csv = (folder / "round-1.csv").read_text().splitlines()[1:]

        def paired() -> str | None:
            pgn = httpx.get(f"{base}/broadcast/round-1/games.pgn", timeout=5)
            if pgn.status_code != 200 or pgn.text.count("[Round \"1.") != 3 or \
                    '[White "?"]' in pgn.text:
                return None
            return pgn.text
        broadcast = wait_until(paired, 60, "the three paired games in the broadcast")
        assert "Morphy, Paul" in broadcast and len(csv) == 3
        with httpx.Client(base_url=base, timeout=10) as client:
            token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
            assert token is not None
            signed = client.post("/login", data={"user": "arbiter",
                                                 "password": password.group(1),
                                                 "csrf": token.group(1)})
            assert signed.status_code == 303, signed.text
            assert client.get("/arbiter").status_code == 200
    finally:
        started = children(proc.pid)
        stop_process(proc, signal.SIGINT, grace=60)  # (then kill -9: the code says so)
    assert proc.returncode == 0
    assert len(started) == 8  # the broker, three emulators, three boards, the station
    left = [pid for pid in started if alive(pid)]
    assert left == [], left
