"""Shared test set-up."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import chess.pgn
import pytest

if sys.dont_write_bytecode:
    # PYTHONDONTWRITEBYTECODE (some sandboxes set it) would have every run compile each
    # module and rewrite every test's asserts again, in each worker: about 10 s of the
    # fast subset. Keep the compiled files in pytest's own cache directory instead, out
    # of the source tree. (This process only: the programs tests start are left alone.)
    sys.pycache_prefix = str(Path(__file__).resolve().parents[1] / ".pytest_cache" / "pycache")
    sys.dont_write_bytecode = False


def missing_tool(message: str) -> NoReturn:
    """Skip a check whose external tool is absent on a developer's machine; in CI, where
    .ci/run installs every tool, a missing one is a failure, never a silent skip."""
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI must have it: see .ci/run)")
    pytest.skip(message)


def read_pgn(path: Path) -> chess.pgn.Game | None:
    """The first game of a PGN file, the file closed again."""
    return chess.pgn.read_game(io.StringIO(path.read_text(encoding="utf-8")))


def read_jsonl(path: Path) -> list[dict[str, object]]:
    """Every line of a JSON-lines file (a report, a journal), the file closed again."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def stop_process(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM,
                 grace: float = 10.0) -> None:
    """Stop a test's child process as its supervisor would: `sig`, then kill -9 if it
    has not exited within `grace` seconds (nothing is sent if it already exited); then
    the pipes to it are closed."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`board-ctl run` archives every game in its data directory (and resumes an unfinished
    one): each test gets its own, never the user's (child processes inherit it)."""
    monkeypatch.setenv("BOARD_CTL_DATA", str(tmp_path / "data"))


# The fast subset (`pytest -m "not slow"`) stays fast only if long tests are marked: the
# summary names the unmarked ones that took longer than this (wall time, so a loaded
# machine shows more; rerun alone before marking).
SLOW_AFTER = float(os.environ.get("BOARD_CTL_SLOW_AFTER", "2.0"))
_unmarked_slow: list[tuple[float, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # (the reports, unlike the items, reach the main process from pytest-xdist's workers;
    # a test's markers are among its keywords)
    if (report.when == "call" and report.passed and report.duration > SLOW_AFTER
            and "slow" not in report.keywords):
        _unmarked_slow.append((report.duration, report.nodeid))


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if _unmarked_slow:
        terminalreporter.section(f"tests over {SLOW_AFTER:g} s not marked slow")
        for duration, nodeid in sorted(_unmarked_slow, reverse=True):
            terminalreporter.write_line(f"{duration:6.2f}s {nodeid}")
