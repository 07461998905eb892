"""PGN tag values that reach the station from outside (a board's MQTT messages, a
pairings file, the command line), checked where they come in.

The rules are the project's for every tag a user can set (the PGN standard, sections 7
and 8.1.1; the same as board_ctl/pgntags.py, which this module should call once that
module is on main): a value is at most 255 printing characters, so no line break, tab
or control character can end the tag or start a forged one; a quote or a backslash is
allowed and written escaped. python-chess writes tag values as they are, so the
broadcast escapes them itself (`escape`).
"""

from __future__ import annotations

import re

from board_ctl.errors import BoardCtlError

MAX_LENGTH = 255  # characters (PGN standard, section 7)
FIDE_ID = re.compile(r"[0-9]{1,10}")


class TagError(BoardCtlError, ValueError):
    """A value that cannot go into a PGN tag; the message says why, on one line."""


def check_value(what: str, value: object) -> str:
    """`value` if it can be a PGN tag's value, else TagError naming `what`."""
    if not isinstance(value, str):
        raise TagError(f"{what}: not text: {value!r:.60}")
    if len(value) > MAX_LENGTH:
        raise TagError(f"{what}: {len(value)} characters, at most {MAX_LENGTH} fit in a PGN tag")
    if not value.isprintable():
        bad = next(c for c in value if not c.isprintable())
        raise TagError(f"{what}: {value[:40]!r} holds the non-printing character {bad!r} "
                       "(no line breaks, tabs or control characters in a PGN tag)")
    return value


def check_fide_id(what: str, value: object) -> str:
    """A FIDE id: digits only (a number on the wire is taken as its digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        value = str(value)
    if not isinstance(value, str) or not FIDE_ID.fullmatch(value):
        raise TagError(f"{what}: not a FIDE id (digits): {value!r:.40}")
    return value


def escape(value: str) -> str:
    """A tag value as the content of a PGN string: backslash and quote escaped (7)."""
    return value.replace("\\", "\\\\").replace('"', '\\"')
