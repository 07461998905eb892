"""PGN tags that cannot forge a game: checked once, where they enter board_ctl.

Every tag a user can set (the config's ``[game]`` keys, a sensor log's ``start`` tags,
later the arbiter's commands) passes `check_tag` on its way in; the game record then
writes it with `header_line`. The rules are the PGN standard's (1994, sections 7 and
8.1.1), so that every reader finds exactly one game with exactly these tags:

- a tag name is 1-255 letters, digits and underscores, starting with an upper-case
  letter (8.1.1: "composed exclusively of letters, digits, and the underscore"; "all tag
  names used for archival storage begin with an upper case letter");
- a tag value is at most 255 printing characters (7: "non-printing characters like
  newline and tab are not permitted inside of strings"; "a string is limited to a
  maximum of 255 characters of data"); a quote or a backslash in it is written escaped
  (``\\"`` and ``\\\\``). Any printable Unicode character is allowed: the file is UTF-8,
  as python-chess, lichess and pgn-extract read it;
- the tags the record sets from the game itself (FEN, SetUp, Result, TimeControl,
  Termination, and Rules, the rule profile where it is not FIDE's Laws) cannot be set:
  they would contradict the game;
- ``Variant``: the board plays and records standard chess only, so a Variant tag that
  names another game (Chess960, Crazyhouse, an unknown name) would be a false record
  and is refused; one that names standard chess is kept;
- ``Date``, ``EventDate`` and ``UTCDate`` have the standard's form ``YYYY.MM.DD``, with
  ``?`` for unknown digits (8.1.1.3).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from board_ctl.errors import TagError
from board_ctl.printable import quoted as show

MAX_LENGTH = 255  # characters, for names and values alike (PGN standard 7)
SET_BY_THE_RECORD = frozenset({"FEN", "SetUp", "Result", "TimeControl", "Termination",
                               "Rules"})
_NAME = re.compile(r"[A-Z][A-Za-z0-9_]*")
_DATE = re.compile(r"[0-9?]{4}\.[0-9?]{2}\.[0-9?]{2}")
_DATE_TAGS = frozenset({"Date", "EventDate", "UTCDate"})
_CHESS960 = frozenset({"chess960", "chess 960", "fischerandom", "fischerrandom",
                       "fischer random"})


def check_name(name: object) -> str:
    """`name` if it may name a tag in a PGN written by board_ctl, else TagError."""
    if not isinstance(name, str):
        raise TagError(f"a tag name must be text, not {name!r}")
    if not _NAME.fullmatch(name) or len(name) > MAX_LENGTH:
        raise TagError(f"{show(name)} is not a PGN tag name: letters, digits and underscores, "
                       f"starting with an upper-case letter, at most {MAX_LENGTH}")
    if name in SET_BY_THE_RECORD:
        raise TagError(f"tag {name} is set by the game record itself")
    return name


def check_value(name: str, value: object) -> str:
    """`value` if tag `name` may carry it truthfully, else TagError saying why."""
    if not isinstance(value, str):
        raise TagError(f"tag {name}: the value must be text, not {show(value)}")
    if len(value) > MAX_LENGTH:
        raise TagError(f"tag {name}: the value has {len(value)} characters, at most "
                       f"{MAX_LENGTH} fit in a PGN tag")
    if not value.isprintable():
        bad = next(c for c in value if not c.isprintable())
        raise TagError(f"tag {name}: the value {show(value)} contains the non-printing "
                       f"character {show(bad)} (no line breaks, tabs or control characters)")
    if name in _DATE_TAGS and not _DATE.fullmatch(value):
        raise TagError(f"tag {name}: {show(value)} is not a PGN date YYYY.MM.DD "
                       "(? for an unknown digit)")
    if name == "Variant" and not is_standard_chess(value):
        raise TagError(f"tag Variant: {show(value)} is not standard chess, the only game "
                       "this board plays and records")
    return value


def check_tag(name: object, value: object) -> tuple[str, str]:
    """(name, value) checked; TagError names what is wrong."""
    checked = check_name(name)
    return checked, check_value(checked, value)


def check_tags(tags: Mapping[Any, object]) -> tuple[dict[str, str], list[str]]:
    """The good tags of `tags`, and one problem line for each tag left out."""
    good: dict[str, str] = {}
    problems: list[str] = []
    for name, value in tags.items():
        try:
            checked, text = check_tag(name, value)
        except TagError as exc:
            problems.append(f"{exc}; tag left out")
        else:
            good[checked] = text
    return good, problems


def is_standard_chess(variant: str) -> bool:
    """True if python-chess (and so every reader) takes `variant` for standard chess."""
    if variant.strip().lower() in _CHESS960:
        return False
    import chess  # here: importing this module must stay cheap
    import chess.variant

    try:
        return chess.variant.find_variant(variant) is chess.Board
    except ValueError:
        return False


def escape(value: str) -> str:
    """A tag value as a PGN string's content: backslash and quote escaped (7)."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def unescape(text: str) -> str:
    """The inverse of `escape`, as a PGN reader decodes a string token."""
    return re.sub(r"\\(.)", r"\1", text)


def header_line(name: str, value: str) -> str:
    """``[Name "value"]``, the value escaped."""
    return f'[{name} "{escape(value)}"]'
