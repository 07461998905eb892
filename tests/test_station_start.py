"""`board-ctl arbiter` starting: an address already in use is one line and exit status 1
(not the URL as if serving, then uvicorn's error and exit 3); a broker that does not
answer is said on the console within 5 s, and said again when it answers; every page's
badge says the broker's state, the pages without the live feed (ladder, broadcast)
included (they said "connecting..." for ever)."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browserkit import browser  # noqa: F401 (a fixture)
from conftest import stop_process
from brokerkit import Broker
from stationkit import free_port
from servicekit import child_env

WARNING_WITHIN = 5.0  # s after the station says where it serves


class Station:
    """`board-ctl arbiter` in its own process, its stderr read line by line."""

    def __init__(self, folder: Path, broker: str, port: int,
                 login: tuple[str, Path] | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        data = folder / "data"
        added = subprocess.run(
            [sys.executable, "-m", "board_ctl.cli", "arbiter", "--data-dir", str(data),
             "--add-user", "ann"], input="a good password\n", capture_output=True,
            text=True, env=child_env(), timeout=60)
        assert added.returncode == 0, added.stderr
        self.url = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "board_ctl.cli", "arbiter", "--broker", broker,
             "--listen", f"127.0.0.1:{port}", "--data-dir", str(data),
             *(["--broker-user", login[0], "--broker-password-file", str(login[1])]
               if login else [])],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=child_env())
        self._buffer = b""
        self.lines: list[tuple[float, str]] = []  # (monotonic time, line)

    def line(self, timeout: float) -> str | None:
        """The next line of its stderr, None at its end; AssertionError past `timeout`."""
        assert self.process.stderr is not None
        fd = self.process.stderr.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0.0))
            if not ready:
                raise AssertionError(f"no line within {timeout} s; so far: {self.lines}")
            chunk = os.read(fd, 4096)
            if not chunk:
                return None
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\n")
        self.lines.append((time.monotonic(), raw.decode()))
        return self.lines[-1][1]

    def wait_line(self, start: str, timeout: float) -> tuple[float, str]:
        deadline = time.monotonic() + timeout
        while True:
            text = self.line(max(deadline - time.monotonic(), 0.0))
            assert text is not None, f"the station ended; it said: {self.lines}"
            if text.startswith(start):
                return self.lines[-1]

    def stop(self) -> None:
        stop_process(self.process, grace=15)


@pytest.fixture
def stations() -> Iterator[list[Station]]:
    started: list[Station] = []
    yield started
    for station in started:
        station.stop()


@pytest.mark.slow
def test_an_address_in_use_is_one_line_and_exit_status_1(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        station = Station(tmp_path, "mqtt://127.0.0.1:1", port)
        try:
            assert station.process.wait(timeout=60) == 1
            assert station.process.stderr is not None
            said = station.process.stderr.read().decode().splitlines()
        finally:
            station.stop()
    assert said == [f"board-ctl arbiter: --listen 127.0.0.1:{port}: the address is already "
                    f"in use (another station, or another program, serves there: stop it or "
                    f"choose another --listen)"]


@pytest.mark.slow
def test_an_unreachable_broker_is_said_within_5_s_and_again_when_it_answers(
        tmp_path: Path, stations: list[Station]) -> None:
    broker = Broker(tmp_path / "broker", {"arbiter": "the arbiter's"})  # not started yet
    station = Station(tmp_path / "station", broker.url, free_port(),
                      ("arbiter", broker.password_file("arbiter")))
    stations.append(station)
    served, _ = station.wait_line("board-ctl arbiter: http://", 60)
    warned, text = station.wait_line("board-ctl arbiter: WARNING", WARNING_WITHIN)
    assert warned - served <= WARNING_WITHIN
    assert f"the MQTT broker 127.0.0.1:{broker.port} has not answered" in text
    assert "(connection refused)" in text and "--broker" in text
    broker.start()
    try:
        station.wait_line(f"board-ctl arbiter: connected to the MQTT broker 127.0.0.1:"
                          f"{broker.port}", 30)
    finally:
        broker.stop()


def badge(page: Any, url: str) -> str:
    page.goto(url)
    locator = page.locator("#broker")
    deadline = time.monotonic() + 15
    while (text := locator.text_content()) == "connecting\u2026":
        assert time.monotonic() < deadline, f"{url}: the badge still says {text!r}"
        page.wait_for_timeout(100)
    return str(text)


@pytest.mark.slow
def test_every_page_s_badge_says_the_broker_s_state(tmp_path: Path, stations: list[Station],
                                                    browser: Any) -> None:  # noqa: F811
    broker = Broker(tmp_path / "broker", {"arbiter": "the arbiter's"})  # the shipped config
    broker.start()
    try:
        station = Station(tmp_path / "station", broker.url, free_port(),
                          ("arbiter", broker.password_file("arbiter")))
        stations.append(station)
        station.wait_line("board-ctl arbiter: http://", 60)
        page = browser.new_page()
        for path in ("/", "/ladder", "/broadcast/", "/login"):
            deadline = time.monotonic() + 15
            while (text := badge(page, station.url + path)) != "live":
                assert time.monotonic() < deadline, f"{path}: {text!r}"
    finally:
        broker.stop()
    # the broker gone: the pages without the feed say so too (asked every 10 s)
    for path in ("/ladder", "/broadcast/"):
        deadline = time.monotonic() + 30
        while not (text := badge(page, station.url + path)).startswith("broker down"):
            assert time.monotonic() < deadline, f"{path}: {text!r}"
