"""The app ports as `board-ctl run` configures them ([dgt], [chesslink], --dgt, --chesslink)."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from board_ctl.config import Config
from board_ctl.livechess.eboard import default_serialnr
from board_ctl.sensorlog import StartInfo

if TYPE_CHECKING:
    from board_ctl.apps.ports import AppPorts


def ports_from_config(config: Config, start: StartInfo) -> AppPorts | None:
    """The ports `dgt.port` and `chesslink.port` ask for (None when neither does), not
    yet opened."""
    if not config.dgt.port and not config.chesslink.port:
        return None
    from board_ctl.apps.ports import AppPorts, chesslink_port, dgt_port

    ports = []
    if config.dgt.port:
        serialnr = (config.dgt.serialnr.zfill(10) if config.dgt.serialnr
                    else default_serialnr(f"{socket.gethostname()}:{config.dgt.port}"))
        ports.append(dgt_port(config.dgt.port, serialnr, start_fen=start.fen))
    if config.chesslink.port:
        ports.append(chesslink_port(config.chesslink.port,
                                    parity_bit=config.chesslink.parity_bit,
                                    start_fen=start.fen))
    return AppPorts(ports)
