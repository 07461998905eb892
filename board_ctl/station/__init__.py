"""The arbiter station: subscribes to every board on the MQTT broker (docs/mqtt.md),
shows the hall in a browser, sends the arbiter's commands, serves the live broadcast.

Imported only by `board-ctl arbiter`: the board service never needs it."""
