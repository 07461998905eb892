"""The endpoint as `board-ctl run` configures it ([livechess], --livechess)."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from board_ctl.config import Config
from board_ctl.livechess.address import parse_listen
from board_ctl.livechess.eboard import default_serialnr
from board_ctl.sensorlog import StartInfo

if TYPE_CHECKING:
    from board_ctl.livechess.endpoint import LiveChessEndpoint


def endpoint_from_config(config: Config, start: StartInfo) -> LiveChessEndpoint | None:
    """The endpoint `livechess.listen` asks for (None when it is empty), not yet started."""
    settings = config.livechess
    if not settings.listen:
        return None
    from board_ctl.livechess.endpoint import LiveChessEndpoint  # websockets only when used

    port = config.serial.port if config.board.backend == "serial" else config.board.backend
    serialnr = settings.serialnr or default_serialnr(f"{socket.gethostname()}:{port}")
    return LiveChessEndpoint(parse_listen(settings.listen), serialnr=serialnr, start=start,
                             origins=settings.origins,
                             max_connections=settings.max_connections,
                             max_subscriptions=settings.max_subscriptions)
