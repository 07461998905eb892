"""Words for people: a count and its noun agreeing ("1 move", "2 moves"), everywhere a
number of things is said."""

from __future__ import annotations

# Nouns whose plural is not the noun and an "s" (or "es" after s, x, z, ch, sh).
_IRREGULAR = {"person": "people", "ply": "plies", "entry": "entries", "copy": "copies",
              "child": "children", "directory": "directories", "reply": "replies"}


def plural(noun: str) -> str:
    """The plural of an English noun, or of a phrase ending in one ("bad line")."""
    head, _, last = noun.rpartition(" ")
    if last in _IRREGULAR:
        word = _IRREGULAR[last]
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        word = last + "es"
    elif last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        word = last[:-1] + "ies"
    else:
        word = last + "s"
    return f"{head} {word}" if head else word


def count(n: int, noun: str, plural_form: str | None = None) -> str:
    """ "1 move", "0 moves", "2 moves"; `plural_form` where the rule gets it wrong."""
    return f"{n} {noun if n == 1 else plural_form or plural(noun)}"
