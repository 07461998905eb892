"""The station's journal of the arbiter's actions: JSON Lines, one line per command sent
(who, what, to which board, when) and one per board's reply, each flushed and fsync'd
before the station goes on, so an action shown as done is on disk."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class ActionLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._stream = path.open("a", encoding="utf-8")

    def write(self, entry: dict[str, Any]) -> None:
        self._stream.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
        self._stream.flush()
        os.fsync(self._stream.fileno())

    def read(self) -> list[dict[str, Any]]:
        """Every readable line; a torn last line (a crash mid-write) is skipped."""
        entries = []
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError:
                log.warning("%s:%d: not JSON, skipped", self.path, number)
                continue
            if isinstance(value, dict):
                entries.append(value)
        return entries

    def close(self) -> None:
        self._stream.close()
