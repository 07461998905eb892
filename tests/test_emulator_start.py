"""The emulator backend's log: what its start line had that cannot be used is left out
and said (replay says it too), never dropped without a word (issue 8 §2)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from board_ctl.service.emulatorboard import EmulatorBoard

GOOD = {"t": 1.0, "ev": "lift", "sq": "e2"}


@pytest.mark.parametrize("start, words", [
    ({"tags": {"_x": "1"}}, "'_x' is not a PGN tag name"),
    ({"tags": {"Annotator": "a\rb"}}, "non-printing character '\\r'"),
    ({"tags": {"Variant": "foo"}}, "'foo' is not standard chess"),
    ({"time_control": "9" * 400}, "at most 3599999 s"),
])
def test_a_start_line_field_left_out_is_said_with_the_file(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, start: dict[str, object],
        words: str) -> None:
    path = tmp_path / "game.jsonl"
    line = {"t": 0, "ev": "start", **start}
    line["tags"] = {**line.get("tags", {}), "White": "Ann"}  # type: ignore[dict-item]
    path.write_text("\ufeff" + json.dumps(line) + "\n" + json.dumps(GOOD) + "\n",
                    encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="board_ctl.service.emulatorboard"):
        found = EmulatorBoard(path, 1.0).start_info()
    assert found.tags == {"White": "Ann"} and found.time_control is None
    (record,) = caplog.records
    message = record.getMessage()
    assert record.levelno == logging.WARNING and str(path) in message and words in message
    assert "\n" not in message and "\r" not in message


def test_a_clean_start_line_says_nothing(tmp_path: Path,
                                         caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "game.jsonl"
    path.write_text(json.dumps({"t": 0, "ev": "start", "time_control": "300+2",
                                "tags": {"White": "Ann"}}) + "\n", encoding="utf-8")
    with caplog.at_level(logging.DEBUG, logger="board_ctl.service.emulatorboard"):
        found = EmulatorBoard(path, 1.0).start_info()
    assert found.tags == {"White": "Ann"} and found.time_control == "300+2"
    assert caplog.records == []
