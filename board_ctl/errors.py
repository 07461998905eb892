"""One root exception; each leaf also inherits the builtin it behaves like."""

from __future__ import annotations


class BoardCtlError(Exception):
    """Root of every error board_ctl raises on purpose."""


class SensorLogError(BoardCtlError, ValueError):
    """A sensor log line that cannot be understood (or a log that cannot be read)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        self.reason = message
        super().__init__(f"line {line}: {message}" if line is not None else message)


class ConfigError(BoardCtlError, ValueError):
    """A configuration value that is missing, of the wrong type or out of range."""


class TagError(BoardCtlError, ValueError):
    """A PGN tag whose name or value cannot be written into a PGN truthfully."""


class OutputError(BoardCtlError, OSError):
    """An output file (PGN, report) that cannot be written; nothing of it was left."""


class HardwareError(BoardCtlError, OSError):
    """A board, pin or helper process the service needs cannot be used."""
