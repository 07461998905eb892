"""What a user reads points only at files the repository has (issue 8 §6): the project's
shared/ folder (seeds, spec drafts, references) is not part of it, so no document,
docstring or config in the repository may send the reader there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READ_BY_USERS = ["README.md", "pyproject.toml", "docs", "config", "board_ctl",
                 "firmware_bridge", "tools", "bench"]
SHARED = re.compile(r"(?<![\w./-])shared/\w[\w./-]*")


def user_files() -> list[Path]:
    files: list[Path] = []
    for name in READ_BY_USERS:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(
            p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
            and p.suffix in {".md", ".py", ".toml", ".txt", ".service", ".rules", ".conf",
                             ".html", ".sh", ".jsonl", ""})
    return files


def test_no_reference_to_the_shared_folder() -> None:
    files = user_files()
    assert len(files) > 50  # the walk found the repository
    found = [f"{path.relative_to(ROOT)}:{number}: {match.group(0)}"
             for path in files
             for number, line in enumerate(
                 path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1)
             for match in SHARED.finditer(line)]
    assert found == [], "references to shared/, which is not in the repository:\n" + \
        "\n".join(found)
