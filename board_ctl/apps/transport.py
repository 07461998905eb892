"""An app port's line: a serial device opened with pyserial, or a pseudo-terminal.

`pty:LINK` makes a pseudo-terminal and keeps the symlink LINK pointing at its slave end
(the path a local program or a test opens); the service holds both ends, so an app that
closes the port and opens it again is no hang-up. Any other name is a serial device
(a USB gadget's /dev/ttyGS0, Bluetooth's /dev/rfcomm0, an adapter's /dev/ttyUSB0),
opened with the protocol's line settings; one that goes away (a USB cable pulled, a
Bluetooth link dropped) is closed and opened again when it returns. Both are read and
written without blocking: the port's thread waits on `fileno()` with select.
"""

from __future__ import annotations

import errno
import logging
import os
import tty
from dataclasses import dataclass
from pathlib import Path

import serial
import termios

from board_ctl.errors import HardwareError

log = logging.getLogger(__name__)

PTY_PREFIX = "pty:"
# What a line that went away raises: pyserial's own, the OS's, and termios's (not an OSError).
LINE_ERRORS = (serial.SerialException, OSError, termios.error)


@dataclass(frozen=True)
class LineSettings:
    baudrate: int
    bytesize: int = serial.EIGHTBITS
    parity: str = serial.PARITY_NONE
    stopbits: float = serial.STOPBITS_ONE


class LineGone(HardwareError):
    """The line stopped working (read or write failed, or it hung up)."""


class Transport:
    """One line: open, read and write bytes without blocking, close."""

    def __init__(self, name: str, settings: LineSettings) -> None:
        self.name = name
        self.settings = settings
        self._fd: int | None = None
        self._serial: serial.Serial | None = None
        self._slave: int | None = None
        self.device = ""  # what is open (a pty's slave path)

    @property
    def is_pty(self) -> bool:
        return self.name.startswith(PTY_PREFIX)

    @property
    def link(self) -> Path:
        return Path(self.name[len(PTY_PREFIX):]).expanduser()

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def fileno(self) -> int:
        assert self._fd is not None
        return self._fd

    def open(self) -> None:
        """Open the line; HardwareError says why it cannot be."""
        if self.is_pty:
            self._open_pty()
        else:
            self._open_serial()

    def _open_pty(self) -> None:
        link = self.link
        if link.exists() and not link.is_symlink():
            raise HardwareError(f"{self.name}: {link} exists and is not a symlink: not "
                                f"replacing it")
        master, slave = os.openpty()
        tty.setraw(slave)  # every byte passes: no echo, no line editing, no signals
        os.set_blocking(master, False)
        self._fd, self._slave = master, slave
        self.device = os.ttyname(slave)
        tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
        try:
            tmp.unlink(missing_ok=True)
            os.symlink(self.device, tmp)
            os.replace(tmp, link)
        except OSError as exc:
            self.close()
            raise HardwareError(f"{self.name}: cannot make the link {link}: "
                                f"{exc.strerror or exc}") from None

    def _open_serial(self) -> None:
        s = self.settings
        try:
            port = serial.Serial(self.name, s.baudrate, bytesize=s.bytesize, parity=s.parity,
                                 stopbits=s.stopbits, timeout=0, write_timeout=0,
                                 exclusive=True)
        except (ValueError, *LINE_ERRORS) as exc:
            raise HardwareError(f"{self.name}: {_reason(exc)}") from None
        fd = port.fileno()
        os.set_blocking(fd, False)
        self._serial, self._fd = port, fd
        self.device = self.name

    def read(self) -> bytes:
        """What has arrived (b"" when nothing has). LineGone when the line has gone."""
        if self._fd is None:
            return b""
        try:
            data = os.read(self._fd, 4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:
            if self.is_pty and exc.errno == errno.EIO:  # (we hold the slave: not expected)
                return b""
            raise LineGone(f"{self.name}: {_reason(exc)}") from None
        if not data and not self.is_pty:  # readable with nothing to read: a hang-up
            raise LineGone(f"{self.name}: the line hung up")
        return data

    def write(self, data: bytes) -> int:
        """Write what the line takes now; the count written (0 when it is full)."""
        if self._fd is None or not data:
            return 0
        try:
            return os.write(self._fd, data)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError as exc:
            raise LineGone(f"{self.name}: {_reason(exc)}") from None

    def close(self) -> None:
        if self._serial is not None:
            try:
                self._serial.close()
            except LINE_ERRORS:
                pass
            self._serial = None
        elif self._fd is not None:
            try:
                if self.is_pty and os.readlink(self.link) == self.device:
                    self.link.unlink()
            except OSError:
                pass
            os.close(self._fd)
        if self._slave is not None:
            os.close(self._slave)
        self._fd = self._slave = None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and isinstance(exc.errno, int) and exc.errno > 0:
        return os.strerror(exc.errno).lower()
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower() if exc.strerror[:1].isupper() else exc.strerror
    return str(exc) or type(exc).__name__
