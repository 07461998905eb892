"""Commands from a second client (the arbiter) to `board-ctl run --mqtt`, on a real
Mosquitto, through the emulator on a pty: players, an alert acknowledged, both clocks
set, a result given and corrected, a repeated command done once, a bad one refused, a
new game; each answered on reply, journaled with who gave it, and the game exported
from the journal (or its sensor log replayed) is the game the board kept."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import chess
import pytest

from board_ctl.archive import JOURNAL
from board_ctl.sensorlog import dumps, event_to_json
from brokerkit import Broker, Station
from conftest import read_jsonl
from script import events
from servicekit import EmulatorProcess, board_ctl, child_env, comparable

USERS = {"arbiter": "arb-secret", "b1": "b1-secret"}


def held_log(path: Path) -> float:
    """e4 e5 with a 300+2 clock, then a piece put on d5 from nowhere (a position
    mismatch, open until it is taken away); the board then holds still."""
    played = events("-e2 +e4 Cw -e7 +e5 Cb ~1 +d5", t=0.5)
    lines = [{"t": 0.0, "ev": "start", "fen": chess.STARTING_FEN, "time_control": "300+2"}]
    lines += [event_to_json(e) for e in played]
    path.write_text("".join(dumps(line) + "\n" for line in lines), encoding="utf-8")
    return played[-1].t


@pytest.mark.slow
def test_the_arbiter_commands_a_board(tmp_path: Path) -> None:
    broker = Broker(tmp_path / "broker", USERS).start()
    station = Station(broker)
    log = tmp_path / "held.jsonl"
    end = held_log(log)
    emulator = EmulatorProcess(tmp_path / "board", "--log", str(log), "--speed", "2",
                               "--until", str(end + 600))
    config = tmp_path / "board.toml"
    config.write_text(f'[mqtt]\npassword_file = "{broker.password_file("b1")}"\n'
                      '[display]\nview = "plain"\n', encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "board_ctl.cli", "run", "--config", str(config), "--port",
         str(tmp_path / "board"), "--pgn", str(tmp_path / "out.pgn"), "--mqtt", broker.url,
         "--board-id", "b1"], cwd=tmp_path, env=child_env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        station.wait(lambda: any(r.json()["code"] == "position-mismatch"
                                 for r in station.on("b1/alert")), 30, "the mismatch alert")
        game = station.last("b1/state")["game"]
        by = "arbiter Anna"

        def command(verb: str, cid: str, **fields: Any) -> dict[str, Any]:
            return station.command("b1", verb, {"id": cid, "by": by, **fields})

        reply = command("players", "p1", white={"name": "Anna Smith", "fide_id": "1503014"},
                        black={"name": "Ben Jones"}, round="5", board_no=2)
        assert (reply["ok"], reply["error"], reply["game"]) == (True, None, game)
        station.wait(lambda: station.last("b1/state")["white"]["name"] == "Anna Smith", 10,
                     "the players in the state")
        state = station.last("b1/state")
        assert state["white"] == {"name": "Anna Smith", "fide_id": "1503014"}
        assert (state["black"]["name"], state["round"], state["board_no"]) == \
            ("Ben Jones", "5", 2)

        reply = command("ack", "a0", code="touch-move")
        assert not reply["ok"] and "no open alert 'touch-move'" in reply["error"]
        assert command("ack", "a1", code="position-mismatch")["ok"]
        station.wait(lambda: station.last("b1/state")["alerts"][0]["acknowledged_by"] == by,
                     10, "the acknowledgement in the state")

        assert command("clock", "c1", white=250.0, black=100.0)["ok"]
        station.wait(lambda: (station.last("b1/state")["clock"] or {}).get("black") == 100.0,
                     10, "the clocks in the state")
        clock = station.last("b1/state")["clock"]
        assert clock["white"] == pytest.approx(250.0, abs=0.01) and clock["running"] == "white"

        assert command("result", "r1", result="0-1", reason="illegal move twice")["ok"]
        again = command("result", "r1", result="0-1", reason="illegal move twice")
        assert again["ok"] and again["game"] == game  # answered again, not done again
        station.wait(lambda: station.last("b1/state")["result"] == "0-1", 10, "the result")
        assert station.last("b1/state")["termination"] == "adjudication"
        assert command("result", "r2", result="1/2-1/2", reason="scoresheets agree")["ok"]
        station.wait(lambda: station.last("b1/state")["result"] == "1/2-1/2", 10,
                     "the corrected result")
        reply = command("clock", "c2", white=10, black=10)
        assert not reply["ok"] and "is over" in reply["error"]
        reply = command("result", "r3", result="1-0", game="20000101-000000")
        assert not reply["ok"] and "is not the board's current game" in reply["error"]
        for bad, says in ((b"{not json", "not JSON"), (b'{"id": 7}', "'by' must be")):
            station.client.publish("board-ctl/b1/cmd/result", bad, qos=1)
            station.wait(lambda: any(says in (r.json()["error"] or "")
                                     for r in station.on("b1/reply")), 10, says)

        assert command("new-game", "n1")["ok"]
        station.wait(lambda: station.last("b1/state")["phase"] == "setup", 10, "setup")
        assert station.last("b1/state")["game"] is None
        reply = command("clock", "c3", white=10, black=10)
        assert not reply["ok"] and "no game" in reply["error"]
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        emulator.proc.terminate()
        emulator.close()
        station.close()
        broker.stop()
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err

    # the journal keeps every order with who gave it, each once
    data = tmp_path / "data"
    journal = read_jsonl(data / "games" / game / JOURNAL)
    orders = [(r.get("ev") or r.get("kind"), r.get("ref")) for r in journal if "by" in r]
    assert orders == [("tags", "p1"), ("ack", "a1"), ("set-clocks", "c1"),
                      ("arbiter-result", "r1"), ("arbiter-result", "r2"), ("order", "n1")]
    assert all(r["by"] == "arbiter Anna" for r in journal if "by" in r)
    # the game as its journal replays it is the game the board wrote
    exported = tmp_path / "exported.pgn"
    sensor = tmp_path / "exported.jsonl"
    result = board_ctl("export", game, "--pgn", str(exported), "--sensor-log", str(sensor),
                       "--data-dir", str(data), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = (tmp_path / "out.pgn").read_text(encoding="utf-8")
    assert comparable(exported.read_text(encoding="utf-8")) == comparable(written)
    for tag in ('[White "Anna Smith"]', '[WhiteFideId "1503014"]', '[Round "5"]',
                '[Board "2"]', '[Result "1/2-1/2"]', '[Termination "adjudication"]'):
        assert tag in written, (tag, written)
    replayed = tmp_path / "replayed.pgn"
    result = board_ctl("replay", str(sensor), "--pgn", str(replayed), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert comparable(replayed.read_text(encoding="utf-8")) == comparable(written)
    # the ledger answers a repeated command after a restart as the first time
    ledger = read_jsonl(data / "hall" / "b1" / "commands.jsonl")
    assert [entry["key"] for entry in ledger if entry["ok"]] == \
        ["p1", "a1", "c1", "r1", "r2", "n1"]
