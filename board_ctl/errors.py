"""One root exception; each leaf also inherits the builtin it behaves like."""

from __future__ import annotations


class BoardCtlError(Exception):
    """Root of every error board_ctl raises on purpose."""


class SensorLogError(BoardCtlError, ValueError):
    """A sensor log line that cannot be understood."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class ConfigError(BoardCtlError, ValueError):
    """A configuration value that is missing, of the wrong type or out of range."""


class HardwareError(BoardCtlError, OSError):
    """A board, pin or helper process the service needs cannot be used."""
