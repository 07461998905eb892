"""PGN that cannot be forged (issue 8 §3): tags from the config or a sensor log are
checked once where they come in; every PGN written reads back, in python-chess and in
Debian's pgn-extract, as exactly one game with exactly the tags that were accepted."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import chess
import chess.pgn
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from board_ctl.config import parse_config
from board_ctl.core.profiles import PROFILES
from board_ctl.errors import ConfigError, TagError
from board_ctl.pgntags import check_tag, escape, header_line, unescape
from board_ctl.record import GameRecord
from board_ctl.replay import replay_log
from board_ctl.sensorlog import StartInfo, read_sensor_log
from conftest import missing_tool

PGN_EXTRACT = shutil.which("pgn-extract") or shutil.which("pgn-extract", path="/usr/games")
FORGED = "Eve\r\n\r\n1. f3 e5 2. g4 Qh4# 0-1\r\n\r\n[Event \"forged\"]"
MOVES = [  # 1. e4 with a clock press, as a board reports it
    {"t": 1.0, "ev": "lift", "sq": "e2"}, {"t": 1.6, "ev": "place", "sq": "e4"},
    {"t": 2.0, "ev": "clock", "side": "white"},
]
SEVEN = ("Event", "Site", "Date", "Round", "White", "Black", "Result")


# ---------------------------------------------------------------- the standard, independently


def standard_allows(name: object, value: object) -> bool:
    """The PGN standard's rules (7, 8.1.1), written from the text, not from pgntags."""
    if not isinstance(name, str) or not isinstance(value, str):
        return False
    if not re.fullmatch(r"[A-Z][A-Za-z0-9_]{0,254}", name, re.ASCII):
        return False
    if name in ("FEN", "SetUp", "Result", "TimeControl", "Termination"):
        return False  # the record's own, from the game
    if len(value) > 255:
        return False
    for char in value:  # printing characters only: no control, format or separator
        category = unicodedata.category(char)
        if category[0] == "C" or category in ("Zl", "Zp") or (category == "Zs" and char != " "):
            return False
    if name in ("Date", "EventDate", "UTCDate"):
        return re.fullmatch(r"[0-9?]{4}\.[0-9?]{2}\.[0-9?]{2}", value) is not None
    if name == "Variant":
        return value.lower() in ("standard", "chess", "classical", "normal", "illegal",
                                 "from position")
    return True


def pgn_tags(text: str) -> list[dict[str, str]]:
    """The tag sections of every game in a PGN, values decoded as a standard reader does
    (python-chess 1.11 keeps the escapes as they are written)."""
    stream = io.StringIO(text)
    games = []
    while (game := chess.pgn.read_game(stream)) is not None:
        assert not game.errors, game.errors
        games.append({name: unescape(value) for name, value in game.headers.items()})
    return games


def assert_one_game_with(text: str, tags: dict[str, str]) -> None:
    (headers,) = pgn_tags(text)  # exactly one game: nothing forged after it
    for name, value in tags.items():
        assert headers[name] == value
    extra = set(headers) - set(tags) - set(SEVEN) - {"Termination", "TimeControl"}
    assert not extra, extra


def pgn_extract_tags(text: str, tmp: Path) -> list[dict[str, str]]:
    if not PGN_EXTRACT:
        missing_tool("pgn-extract is not installed (Debian package pgn-extract)")
    source, out = tmp / "in.pgn", tmp / "out.pgn"
    source.write_text(text, encoding="utf-8")
    done = subprocess.run([PGN_EXTRACT, "-s", "-o", str(out), str(source)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stderr.strip() == "", done.stderr
    return pgn_tags(out.read_text(encoding="utf-8"))


def record_from_log(tags: dict[object, object]) -> tuple[GameRecord, list[str]]:
    lines = [json.dumps({"t": 0, "ev": "start", "tags": tags})] + [json.dumps(m) for m in MOVES]
    log = read_sensor_log(line + "\n" for line in lines)
    return replay_log(log, PROFILES["fide"]), [str(e) for e in log.errors]


# ---------------------------------------------------------------- examples


@pytest.mark.parametrize("name, value, words", [
    ("_x", "1", "not a PGN tag name"),
    ("white", "A", "not a PGN tag name"),  # archival tag names start upper-case
    ("White Elo", "2000", "not a PGN tag name"),
    ("Annotator", "a\rb", "non-printing character '\\r'"),
    ("White", FORGED, "non-printing character '\\r'"),
    ("White", "tab\there", "'\\t'"),
    ("White", "nul\x00", "'\\x00'"),
    ("White", "rtl\u202eevil", "'\\u202e'"),
    ("Event", "x" * 256, "256 characters"),
    ("Variant", "foo", "not standard chess"),
    ("Variant", "Chess960", "not standard chess"),
    ("Date", "30.11.2026", "not a PGN date"),
    ("Result", "1-0", "set by the game record"),
    ("FEN", chess.STARTING_FEN, "set by the game record"),
    ("White", None, "must be text"),
])
def test_tags_the_standard_does_not_allow_are_refused(name: str, value: object,
                                                      words: str) -> None:
    assert not standard_allows(name, value)
    with pytest.raises(TagError) as caught:
        check_tag(name, value)
    assert words in str(caught.value) and str(caught.value).isprintable()


@pytest.mark.parametrize("name, value", [
    ("White", 'Magnus "DrNykterstein" Carlsen'), ("Site", "C:\\clubs\\"),
    ("Black", "Jörg Müller 名人 ♔"), ("Event", "x" * 255), ("Variant", "Standard"),
    ("Date", "2026.??.??"), ("WhiteElo", "2000"), ("Round", ""), ("X_1", "[1. e4 *]"),
])
def test_tags_the_standard_allows_are_written_escaped_and_read_back(
        name: str, value: str, tmp_path: Path) -> None:
    assert standard_allows(name, value) and check_tag(name, value) == (name, value)
    record, errors = record_from_log({name: value})
    assert errors == []
    text = record.pgn_text()
    assert header_line(name, value) in text and escape(value) in text
    assert_one_game_with(text, {name: value})
    assert pgn_extract_tags(text, tmp_path) == pgn_tags(text)


def test_the_issues_forged_player_cannot_forge_a_game(tmp_path: Path) -> None:
    """Issue 8 §3: the White tag that made python-chess and pgn-extract read two games."""
    with pytest.raises(ConfigError, match=r"^board.toml: game.white: tag White: .*'\\r'"):
        parse_config(f"[game]\nwhite = {json.dumps(FORGED)}\n", "board.toml")
    record, errors = record_from_log({"White": FORGED, "Black": "Bob"})
    assert len(errors) == 1 and "tag White" in errors[0]
    assert_one_game_with(record.pgn_text(), {"Black": "Bob", "White": "?"})
    # the record itself never writes a tag that gets past no check
    direct = GameRecord(tags={"White": FORGED, "Black": "trail\\"})
    assert_one_game_with(direct.pgn_text(), {"Black": "trail\\", "White": "?"})
    assert len(pgn_extract_tags(direct.pgn_text(), tmp_path)) == 1


# ---------------------------------------------------------------- properties

PROPERTY = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
names = st.one_of(
    st.sampled_from(["Event", "Site", "Date", "Round", "White", "Black", "Annotator",
                     "Variant", "EventDate", "FEN", "Result", "WhiteElo", "_x", "a", "X-Y",
                     "Über", "White Elo", ""]),
    st.from_regex(r"[A-Z][A-Za-z0-9_]{0,10}", fullmatch=True),
    st.text(max_size=6))
values = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.sampled_from('ab "\\[]{}%;\r\n\t\x00\x1b\u2028é'), max_size=20),
    st.sampled_from(["Standard", "foo", "2026.11.30", "2026.1.1", "x" * 255, "x" * 256,
                     "trailing\\", '"', "\\\"]"]),
    st.integers())


@PROPERTY
@given(tags=st.dictionaries(names, values, max_size=6))
@example(tags={"White": FORGED, "Black": "x\\", "Annotator": "a\rb", "_x": "1", "Variant": "foo"})
def test_any_tags_in_a_log_give_one_game_with_the_accepted_tags(tags, tmp_path) -> None:
    record, errors = record_from_log(tags)
    accepted = {n: v for n, v in tags.items() if standard_allows(n, v)}
    assert len(errors) == len(tags) - len(accepted)  # one line for each tag left out
    assert all(e.startswith("line 1: ") and e.isprintable() for e in errors)
    text = record.pgn_text()
    assert_one_game_with(text, accepted)
    assert pgn_extract_tags(text, tmp_path) == pgn_tags(text)


CONFIG_KEYS = {"event": "Event", "site": "Site", "white": "White", "black": "Black",
               "round": "Round"}


def toml_string(text: str) -> str:
    """A TOML basic string holding any text."""
    out = []
    for char in text:
        if char in '"\\' or not (" " <= char <= "~"):
            out.append(f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


@PROPERTY
@given(tags=st.dictionaries(st.sampled_from(sorted(CONFIG_KEYS)),
                       st.one_of(st.text(max_size=40), values.filter(
                           lambda v: isinstance(v, str))), max_size=5))
def test_any_tags_in_the_config_are_refused_by_key_or_give_one_game(tags, tmp_path) -> None:
    text = "[game]\n" + "".join(f"{key} = {toml_string(v)}\n" for key, v in tags.items())
    wanted = {CONFIG_KEYS[key]: v for key, v in tags.items() if v}  # empty: left out
    try:
        config = parse_config(text, "board.toml")
    except ConfigError as exc:
        message = str(exc)
        assert message.isprintable() and message.startswith("board.toml: game.")
        key = message.split("game.", 1)[1].split(":", 1)[0]
        assert not standard_allows(CONFIG_KEYS[key], tags[key])
        return
    assert all(standard_allows(name, value) for name, value in wanted.items())
    assert config.game.tags() == wanted
    record = GameRecord(tags=StartInfo(tags=config.game.tags()).tags)
    pgn = record.pgn_text()
    assert_one_game_with(pgn, wanted)
    assert pgn_extract_tags(pgn, tmp_path) == pgn_tags(pgn)
