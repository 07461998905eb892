"""The tournament hall, board side: each board publishes its games to an MQTT broker and
takes the arbiter's commands (docs/mqtt.md is the contract).

- `settings.resolve` checks `[mqtt]` / `--mqtt URL --board-id ID` once, at start-up;
- `BoardPublisher` is a service observer: it publishes from the games' journals (the
  durable record) on its own thread, keeps what the broker acknowledged
  (`progress.py`), and puts commands (`commands.py`) on the service's queue;
- `replayhall.ReplayHall` runs many boards in one process, each a real `Service` and
  `BoardPublisher`, fed replayed sensor logs (the 100-board benchmark, bench/bench_hall.py).
"""

from __future__ import annotations

from board_ctl.hall.publisher import BoardPublisher, MqttRefused
from board_ctl.hall.settings import MqttSettings, resolve

__all__ = ["BoardPublisher", "MqttRefused", "MqttSettings", "resolve"]
