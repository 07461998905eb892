"""Counts and their nouns agree everywhere a user reads them ("1 ply", not "1 plies"; no
"record(s)"): board_ctl.words.count, its rule tested, the messages that said it wrong
checked, and the source searched for a count written without it. And no project
history where users read: help texts name no seed document."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from board_ctl.cli import build_parser
from board_ctl.words import count, plural
from servicekit import ROOT, child_env


@pytest.mark.parametrize("noun, plural_form", [
    ("move", "moves"), ("ply", "plies"), ("game", "games"), ("bad line", "bad lines"),
    ("intact record", "intact records"), ("press", "presses"), ("match", "matches"),
    ("box", "boxes"), ("entry", "entries"), ("day", "days"), ("person", "people"),
    ("sensor log", "sensor logs"), ("byte", "bytes"), ("time", "times"),
])
def test_the_plural_of_a_noun(noun: str, plural_form: str) -> None:
    assert plural(noun) == plural_form


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["move", "ply", "game"]))
def test_a_count_is_singular_only_for_one(n: int, noun: str) -> None:
    said = count(n, noun)
    assert said.startswith(f"{n} ")
    assert said == (f"1 {noun}" if n == 1 else f"{n} {plural(noun)}")


def test_an_irregular_plural_can_be_given() -> None:
    assert count(2, "ply", "plies") == "2 plies" and count(1, "ply", "plies") == "1 ply"


def run(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "board_ctl.cli", *args], cwd=cwd,
                          input=stdin, capture_output=True, text=True, timeout=60,
                          env=child_env())


def test_a_one_ply_log_with_one_bad_line_says_so_in_the_singular(tmp_path: Path) -> None:
    lines = [{"t": 0, "ev": "start"}, {"t": 1.0, "ev": "lift", "sq": "e2"},
             {"t": 1.5, "ev": "place", "sq": "e4"}, {"t": 2.0, "ev": "lift", "sq": "e7"}]
    text = "\n".join(json.dumps(line) for line in lines[:3]) + "\nnot json\n" + \
        json.dumps(lines[3]) + "\n"
    done = run("replay", "-", "--pgn", str(tmp_path / "g.pgn"), cwd=tmp_path, stdin=text)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "<stdin>: 1 ply, 0 alerts, result *, 1 bad line"


def test_one_rated_game_is_said_in_the_singular(tmp_path: Path) -> None:
    pgn = tmp_path / "one.pgn"
    pgn.write_text('[White "Ann"]\n[Black "Bob"]\n[Result "1-0"]\n\n1. e4 1-0\n',
                   encoding="utf-8")
    done = run("ladder", "--pgn", str(pgn), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "board-ctl ladder: 1 game rated, 0 skipped, " \
                                           "2 players"


# A count in a message: a number put into a string, then a noun in the plural (or a
# noun with "(s)"), where the number can be 1. What users read is in these packages.
COUNTED = re.compile(
    r"\{[^{}]*\} (?:moves|games|plies|lines|bad lines|alerts|events|records|presses|"
    r"times|boards|players|bytes|frames|errors|squares|pieces|problems|files)\b"
    r"|%d (?:moves|games|plies|lines|records|frames|times)\b"
    r"|(?<=[\s}])(?:record|game|line|move|frame|time|problem|file|sensor log)\(s\)")


def test_no_count_in_a_message_is_written_without_words_count() -> None:
    found = []
    for package in ("board_ctl", "firmware_bridge"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                if COUNTED.search(code):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_the_check_finds_what_it_looks_for() -> None:
    assert COUNTED.search('print(f"{n} moves")') and COUNTED.search('"%d frames lost"')
    assert COUNTED.search('f"{gap} record(s) missing"')
    assert not COUNTED.search('f"{count(n, \'move\')}"')


def test_no_help_names_a_seed_document_or_an_issue() -> None:
    out = io.StringIO()
    parser = build_parser()
    parser.print_help(out)
    for action in parser._actions:
        for sub in getattr(action, "choices", None) or {}:
            if hasattr(action.choices[sub], "format_help"):  # type: ignore[index]
                out.write(action.choices[sub].format_help())  # type: ignore[index]
    text = out.getvalue()
    assert "ladder" in text
    assert not re.search(r"\bseed \d|\bissue \d|carve", text), text


def readme_legend_signs(readme: str) -> set[str]:
    """The signs in the first column of the README's table of the live view's signs."""
    start = readme.index("| sign | colour | meaning |")
    rows = readme[start:].split("\n\n", 1)[0].splitlines()[2:]
    return {row.split("|")[1].strip().strip("`") for row in rows}


def test_every_sign_the_live_view_draws_is_in_the_readmes_legend() -> None:
    from board_ctl.service.richview import STRAY
    from board_ctl.service.view import LED_MARKS
    drawn = {STRAY, *LED_MARKS.values()}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert drawn - readme_legend_signs(readme) == set()


def test_the_legend_check_sees_a_missing_row() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    without = "\n".join(line for line in readme.splitlines() if not line.startswith("| `●`"))
    assert "●" in readme_legend_signs(readme) and "●" not in readme_legend_signs(without)


def test_what_users_read_names_no_commit_and_no_project_history() -> None:
    """README and docs: no commit hashes (7-40 hex digits with a digit and a letter; a
    Pico's board id, `board e661...`, is no commit), no 'carve', no seed document."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        hashes = [w for w in re.findall(r"(?<![\w#-])(?<!board )[0-9a-f]{7,40}(?![\w-])", text)
                  if re.search(r"[a-f]", w) and re.search(r"\d", w)]
        assert hashes == [], (page.name, hashes)
        assert not re.search(r"\bcarve|\bseed \d{3}\b", text, re.IGNORECASE), page.name
