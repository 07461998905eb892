"""The plain view when its reader goes away (`board-ctl run | head`, a closed terminal):
the lines stop, the board plays on. A closed pipe used to stop the service in the middle
of a game with `board-ctl run: [Errno 32] Broken pipe`."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from board_ctl.service.view import PlainView


def test_a_closed_pipe_stops_the_lines_not_the_caller(caplog: pytest.LogCaptureFixture) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    stream = os.fdopen(write_end, "w", encoding="utf-8")
    view = PlainView(stream=stream)
    with caplog.at_level(logging.WARNING):
        for n in range(3):
            view.message(f"line {n}")  # the first write meets the closed pipe
    assert [r.getMessage() for r in caplog.records] == [
        "standard output closed: no more lines shown; the board plays on"]
    stream.close()  # what was buffered goes nowhere, without a second error


@pytest.mark.slow
def test_board_ctl_run_piped_to_head_finishes_its_game(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "data"
    run = subprocess.run(
        f"{sys.executable} -m board_ctl.cli run --view plain --speed 20 --once "
        f"--data-dir {data} | head -2", shell=True, cwd=tmp_path, capture_output=True,
        text=True, timeout=120, executable="/bin/bash")
    assert run.stdout.count("\n") == 2
    assert "Broken pipe" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    games = subprocess.run([sys.executable, "-m", "board_ctl.cli", "games", "--data-dir",
                            str(data)], capture_output=True, text=True, check=True).stdout
    assert " 33  1-0" in games, games  # the whole Opera game, not stopped at the pipe
