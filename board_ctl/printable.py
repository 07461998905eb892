"""Text from outside (a board's id, its error messages, a tag in a log) made safe to
print: a control character sent raw to a terminal can move the cursor, rewrite what is
shown or change the terminal's state, so every non-printing character is shown as its
escape (``\\x1b``, ``\\u202e``) instead."""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with every non-printing character (C0, C1, DEL, line and paragraph
    separators, bidi and other format characters) written as a Python escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def quoted(value: object, limit: int = 60) -> str:
    """`value` for a message: text in quotes and printable, anything else as its repr;
    cut after `limit` characters."""
    shown = printable(value) if isinstance(value, str) else printable(repr(value))
    if len(shown) > limit:
        shown = shown[:limit] + "..."
    return f"'{shown}'" if isinstance(value, str) else shown


_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(char: str) -> str:
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
