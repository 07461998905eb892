"""tools/referee_diff.py, the check that speed work changes nothing the referee does: run
against this very commit, every log it renders replays to the same effects."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from servicekit import ROOT, child_env


@pytest.mark.slow
def test_the_referee_against_its_own_commit_gives_the_same_effects() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "referee_diff.py"), "--against", "HEAD",
         "--games", "2", "--seeds", "1", "--jobs", "1"],
        env=child_env(), capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    found = re.search(r"same effects: (\d+) of (\d+) logs", done.stdout)
    assert found is not None, done.stdout
    assert found[1] == found[2] and int(found[2]) > 20, done.stdout
