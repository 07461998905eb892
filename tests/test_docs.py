"""The documentation a new user follows: every relative link of README.md and docs/*.md
(and the READMEs beside the code) leads to a file that exists, and to a heading that
exists when it names one; every repository path the README mentions exists; every
`board-ctl` and `board-emulator` command the README shows names a real subcommand, with
options that subcommand accepts. A link broken by a rename, a heading reworded, a command
or option renamed: each fails here, not in a user's hands."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from board_ctl.cli import build_parser
from firmware_bridge.emulator import build_parser as build_emulator_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted([README, *(ROOT / "docs").glob("*.md"), ROOT / "board_ctl" / "core" / "README.md",
               ROOT / "firmware_bridge" / "README.md"])
# A path in backquotes or a command counts as the repository's when it starts here.
TOP_LEVEL = ("board_ctl/", "firmware_bridge/", "config/", "docs/", "bench/", "tools/",
             "tests/", ".ci/")

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```[^\n]*\n(?:[^\n]*\n)*?```[^\n]*$|(?:^(?: {4}|\t)[^\n]*\n?)+", re.M)
INLINE_CODE = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"(?<![\w/.-])((?:%s)[\w./*-]*)" % "|".join(re.escape(t) for t in TOP_LEVEL))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[|\]\([^)]*\)", "", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(markdown: Path) -> set[str]:
    text = FENCE.sub("", markdown.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)}


def links(markdown: Path) -> list[str]:
    """The link targets of a Markdown file, outside code."""
    text = FENCE.sub("", markdown.read_text(encoding="utf-8"))
    text = INLINE_CODE.sub("", text)
    return LINK.findall(text)


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def broken_links(markdown: Path) -> list[str]:
    broken = []
    for target in links(markdown):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, file: ...
            continue
        path_part, _, anchor = target.partition("#")
        path = (markdown.parent / path_part).resolve() if path_part else markdown
        if not path.exists():
            broken.append(f"{target}: no {shown(path)}")
        elif markdown.is_relative_to(ROOT) and not path.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading #{anchor} in {shown(path)}")
    return broken


@pytest.mark.parametrize("markdown", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(markdown: Path) -> None:
    assert markdown.exists()
    assert broken_links(markdown) == []


def code_spans(markdown: Path) -> list[str]:
    """Every piece of code of a Markdown file: inline spans and lines of code blocks."""
    text = markdown.read_text(encoding="utf-8")
    blocks = [m.group(0) for m in FENCE.finditer(text)]
    lines = [line.strip() for block in blocks for line in block.splitlines()
             if line.strip() and not line.strip().startswith("```")]
    return INLINE_CODE.findall(FENCE.sub("", text)) + lines


def mentioned_paths(markdown: Path) -> set[str]:
    found: set[str] = set()
    for code in code_spans(markdown):
        for match in PATH.finditer(code):
            found.add(match.group(1).rstrip(".,;:)"))
    for target in links(markdown):
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target) and not target.startswith("#"):
            found.add(target.partition("#")[0])
    return found


def test_every_path_the_readme_names_exists() -> None:
    paths = mentioned_paths(README)
    assert len(paths) >= 20, sorted(paths)  # the finder finds (a README without paths: no)
    missing = [p for p in sorted(paths)
               if not (list(ROOT.glob(p.rstrip("/"))) if "*" in p else (ROOT / p).exists())]
    assert missing == []


def commands(markdown: Path, program: str) -> list[list[str]]:
    """Each `program ...` command line of the file's code, as words, up to a comment, a
    pipe or a redirection."""
    found = []
    for code in code_spans(markdown):
        # a command begins a span or line, or follows a shell separator or sudo (not a
        # unit's name after `journalctl -u`, nor a path such as /opt/board-ctl/bin/)
        starts = r"(?:^|(?:&&|;|\||\$|\(|sudo)\s+)%s(?![\w/-])" % re.escape(program)
        for match in re.finditer(starts, code):
            rest = code[match.end():].split(" #")[0]
            rest = re.split(r"\s(?:\||<|>|&&|;|2>&1)\s?|&\s*$", rest)[0]
            try:
                words = shlex.split(rest)
            except ValueError:
                words = rest.split()
            if words and words[0].endswith(":"):  # a message it prints, not a command
                continue
            found.append(words)
    return found


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {o for action in parser._actions for o in action.option_strings}


def unknown_words(words: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """What in `words` the parser does not know: a subcommand or an option (values and
    placeholders such as FILE are not checked)."""
    wrong = []
    while True:
        subs = subparsers(parser)
        if not subs:
            break
        first = next((w for w in words if not w.startswith("-")), None)
        before = words[:words.index(first)] if first is not None else words
        wrong += [w for w in before if w not in options(parser)]
        if first is None and before and not wrong:  # board-ctl --help, --version
            return wrong
        if first is None or first not in subs:
            wrong.append(f"subcommand {first!r}")
            return wrong
        words = words[words.index(first) + 1:]
        parser = subs[first]
    known = options(parser)
    for word in words:
        if word.startswith("-") and word != "-" and word.split("=")[0] not in known:
            wrong.append(word)
    return wrong


def test_every_board_ctl_command_the_readme_shows_exists() -> None:
    shown = commands(README, "board-ctl")
    assert len(shown) >= 20  # the finder finds
    subcommands = {words[0] for words in shown if words and not words[0].startswith("-")}
    # Every subcommand a user has is shown at least once.
    assert subcommands >= set(subparsers(build_parser())), subcommands
    wrong = {" ".join(words): unknown_words(words, build_parser())
             for words in shown if words}
    assert {k: v for k, v in wrong.items() if v} == {}


def test_every_board_emulator_command_the_readme_shows_exists() -> None:
    shown = commands(README, "board-emulator")
    assert shown
    parser = build_emulator_parser()
    wrong = {" ".join(words): unknown_words(words, parser) for words in shown}
    assert {k: v for k, v in wrong.items() if v} == {}


def test_the_checks_catch_what_they_look_for(tmp_path: Path) -> None:
    """The checkers themselves: a broken link, a missing heading, a path that is not
    there, a subcommand and an option that do not exist are all reported."""
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n[ok](#title) [gone](nowhere.md) [anchor](#no-such)\n"
                    "[readme](%s#the-records) [bad](%s#no-such-heading)\n"
                    % (README, README), encoding="utf-8")
    broken = broken_links(page)
    assert len(broken) == 3, broken
    assert broken[0].startswith("nowhere.md: no ")
    assert broken[1] == f"#no-such: no heading #no-such in {page}"
    assert broken[2] == f"{README}#no-such-heading: no heading #no-such-heading in README.md"
    assert unknown_words(["run", "--once", "--no-such-option"], build_parser()) == [
        "--no-such-option"]
    assert unknown_words(["replay", "x.jsonl", "--pgn", "out.pgn"], build_parser()) == []
    assert unknown_words(["repaly", "x.jsonl"], build_parser()) == ["subcommand 'repaly'"]
    assert unknown_words(["config", "check", "board.toml"], build_parser()) == []
    assert unknown_words(["config", "chek"], build_parser()) == ["subcommand 'chek'"]
    assert unknown_words(["--version"], build_parser()) == []
    assert unknown_words(["--versoin"], build_parser()) == ["--versoin", "subcommand None"]
    assert commands(README, "board-ctl")  # and what follows `journalctl -u` is none:
    assert ["-f"] not in commands(README, "board-ctl")
    assert slug("Playing online (lichess.org, chess.com)") == \
        "playing-online-lichessorg-chesscom"
    assert slug("What `board-ctl` does") == "what-board-ctl-does"
