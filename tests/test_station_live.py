"""The station end to end: a real Mosquitto on a free port, boards publishing through it
as docs/mqtt.md says, `board-ctl arbiter` as its own process, and its pages over HTTP and
in a real browser (Debian's chromium driven by Playwright).

The boards come from one fixture, `board_publisher`: today a publisher written from the
contract (tests/stationkit.py); the board side's own publisher (board_ctl/hall/) can be
put in its place without touching the tests."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx  # the test extra (starlette's test client uses it too)
import pytest

from board_ctl.station.users import make_user, save_user
from browserkit import browser, keep_screenshot  # noqa: F401 (a fixture)
from servicekit import game_from
from brokerkit import Broker
from stationkit import ArbiterProcess, ContractBoard, MqttBoard, wait_for

PASSWORD = "correct horse battery"


# The shipped broker (config/mosquitto): each board logs in as itself, the station as arbiter
BROKER_USERS = {name: f"{name}-secret" for name in ("arbiter", "b01", "b02", "b03", "b04", "b07")}


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    broker = Broker(tmp_path / "broker", BROKER_USERS).start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def board_publisher(broker: Broker) -> Iterator[Callable[[ContractBoard], MqttBoard]]:
    """Puts a board on the broker; the one place to swap in the real publisher."""
    boards: list[MqttBoard] = []

    def make(board: ContractBoard) -> MqttBoard:
        mqtt_board = MqttBoard(board, broker.port, BROKER_USERS[board.board])
        mqtt_board.publish(board.start())
        boards.append(mqtt_board)
        return mqtt_board

    yield make
    for mqtt_board in boards:
        try:
            mqtt_board.close()
        except OSError:
            pass


class StationProcess(ArbiterProcess):
    """`board-ctl arbiter` with a users file of one arbiter, on the shipped broker."""

    def __init__(self, broker: Broker, folder: Path, *extra: str) -> None:
        users = folder / "users"
        if not users.exists():
            folder.mkdir(parents=True, exist_ok=True)
            save_user(users, make_user("anna", PASSWORD))
        super().__init__(folder, ["--broker", broker.url, "--broker-user", "arbiter",
                                  "--broker-password-file", str(broker.password_file("arbiter")),
                                  "--users", str(users),
                                  "--event", "Club night", *extra])


@pytest.fixture
def start_station(broker: Broker, tmp_path: Path) -> Iterator[Callable[..., StationProcess]]:
    started: list[StationProcess] = []

    def start(*extra: str) -> StationProcess:
        station = StationProcess(broker, tmp_path / "station", *extra)
        started.append(station)
        return station

    yield start
    for station in started:
        station.stop()


def board(board_id: str, index: int, number: int, **kwargs: Any) -> ContractBoard:
    """A board playing the first game of at least 40 plies from `index` on."""
    game = game_from("stockfish-300.pgn", index)
    while len(list(game.mainline_moves())) < 40:
        index += 1
        game = game_from("stockfish-300.pgn", index)
    return ContractBoard(board_id, game, game=f"game-{board_id}", wall=lambda: time.time_ns() // 1_000_000,
                         board_no=number, tags={"round": "1", "board_no": number}, **kwargs)


def sans_of(station: StationProcess, board_id: str) -> list[str]:
    # (a board the station has not heard of yet: no moves, and the wait goes on)
    return [m["san"] for m in station.board(board_id).get("moves", [])]


def login(client: httpx.Client) -> str:
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)  # type: ignore[union-attr]
    client.post("/login", data={"user": "anna", "password": PASSWORD, "csrf": token})
    return re.search(r'<meta name="csrf" content="([^"]+)">',  # type: ignore[union-attr]
                     client.get("/arbiter").text).group(1)


@pytest.mark.slow
def test_the_station_follows_the_hall_through_mosquitto(
        start_station: Callable[..., StationProcess],
        board_publisher: Callable[[ContractBoard], MqttBoard]) -> None:
    # Two boards have played before the station starts: it has only the retained
    # messages (state, status, PGN) to go by.
    early = [board_publisher(board(f"b0{n}", 20 + n, n)) for n in (1, 2)]
    for mqtt_board in early:
        for _ in range(6):
            mqtt_board.play()
    station = start_station()
    wait_for(lambda: all(len(sans_of(station, f"b0{n}")) == 6 for n in (1, 2)), 15,
             "the moves before the station started, from the retained PGN")
    late = board_publisher(board("b03", 30, 3))
    for _ in range(8):
        for mqtt_board in early + [late]:
            mqtt_board.play()
    wait_for(lambda: len(sans_of(station, "b03")) == 8 and len(sans_of(station, "b01")) == 14,
             15, "live moves")
    for mqtt_board in early + [late]:
        assert sans_of(station, mqtt_board.board.board) == mqtt_board.board.sans
    # a board that reconnects republishes its moves: nothing shows twice
    for mqtt_board in early:
        with mqtt_board.lock:
            replay = [m for m in mqtt_board.board.start()]
        mqtt_board.publish(replay)
    late.play()
    wait_for(lambda: len(sans_of(station, "b03")) == 9, 15, "the next move")
    assert sans_of(station, "b01") == early[0].board.sans
    # the station's own persistent session: stopped while the boards play on, it gets
    # every move it missed when it comes back
    station.stop()
    for _ in range(5):
        late.play()
    station = start_station()
    wait_for(lambda: sans_of(station, "b03") == late.board.sans, 15, "the missed moves")
    # a board that drops off the network: the broker's will says offline
    assert station.boards()["b02"]["status"] == "online"
    early[1].drop()
    wait_for(lambda: station.boards()["b02"]["status"] == "offline", 15, "the last will")
    # the broadcast has the round in board order
    pgn = httpx.get(f"{station.url}/broadcast/round-1/games.pgn", timeout=5).text
    assert re.findall(r'\[Round "([\d.]+)"\]', pgn) == ["1.1", "1.2", "1.3"]


@pytest.mark.slow
def test_commands_go_through_the_broker_and_are_journaled(
        start_station: Callable[..., StationProcess],
        board_publisher: Callable[[ContractBoard], MqttBoard]) -> None:
    station = start_station()
    mqtt_board = board_publisher(board("b07", 3, 7))
    for _ in range(4):
        mqtt_board.play()
    with mqtt_board.lock:
        raised = mqtt_board.board.raise_alert("position-mismatch", None, ["d4"], "a piece is off")
    mqtt_board.publish(raised)
    wait_for(lambda: station.boards().get("b07", {}).get("ply") == 4, 15, "the board")
    with httpx.Client(base_url=station.url, timeout=10) as client:
        token = login(client)
        wait_for(lambda: client.get("/arbiter/api/board/b07").json()["alerts"], 15, "the alert")
        done = client.post("/arbiter/board/b07/ack", data={"code": "position-mismatch"},
                           headers={"X-CSRF-Token": token})
        assert done.status_code == 200, done.text
        ask = client.post("/arbiter/board/b07/result", data={"result": "1/2-1/2", "csrf": token})
        client.post("/arbiter/board/b07/result", data={
            "result": "1/2-1/2", "csrf": token, "confirm": ask.json()["token"]})
        wait_for(lambda: station.boards()["b07"]["result"] == "1/2-1/2", 15, "the result")
        journal = wait_for(lambda: [e for e in client.get("/arbiter/api/board/b07").json()["journal"]
                                    if e["kind"] == "reply"], 15, "the replies")
        assert len(journal) == 2 and all(e["ok"] for e in journal)
    assert [topic.rsplit("/", 1)[-1] for topic, _ in mqtt_board.commands] == ["ack", "result"]
    assert all(body["by"] == "anna" for _, body in mqtt_board.commands)
    lines = [json.loads(line) for line in
             (station.folder / "data" / "actions.jsonl").read_text().splitlines()]
    commands = [e for e in lines if e["kind"] == "command"]
    assert [(e["command"], e["user"]) for e in commands] == [("ack", "anna"), ("result", "anna")]
    for command in commands:  # each answered once, after it was journaled
        replies = [i for i, e in enumerate(lines) if e["kind"] == "reply" and e["id"] == command["id"]]
        assert len(replies) == 1 and replies[0] > lines.index(command)


# ---- in a real browser --------------------------------------------------------------


@pytest.mark.slow
def test_the_arbiter_in_a_browser(start_station: Callable[..., StationProcess],
                                  board_publisher: Callable[[ContractBoard], MqttBoard],
                                  browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    pairings = tmp_path / "round1.csv"
    pairings.write_text("round,board,white,black,white_fide_id,black_fide_id\n"
                        "1,1,Anna Smith,Ben Jones,1503014,\n1,2,Carl Berg,Dora Lind,,\n"
                        "1,3,Eve Stone,Finn Moss,,\n1,4,Gus Hart,Ida Holm,,\n", encoding="utf-8")
    station = start_station("--pairings", str(pairings))
    boards = [board_publisher(board(f"b0{n}", 40 + n, n, think_ms=2000 + 700 * n))
              for n in (1, 2, 3, 4)]
    wait_for(lambda: all(b["white"]["name"] for b in station.boards().values())
             and len(station.boards()) == 4, 20, "the pairings on every board")
    for mqtt_board in boards:
        for _ in range(5 + int(mqtt_board.board.board[-1])):
            mqtt_board.play()

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{station.url}/arbiter")
    expect(page).to_have_url(re.compile(r"/login"))
    page.fill("input[name=user]", "anna")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(re.compile(r"/arbiter$"))
    card1 = page.locator("#card-b01")
    expect(card1.locator(".name").first).to_have_text("Ben Jones")
    expect(page.locator(".broker")).to_have_text("live")

    # moves appear live
    last = card1.locator(".last")
    for _ in range(3):
        boards[0].play()
        label = f"{(boards[0].board.ply + 1) // 2}.{'' if boards[0].board.ply % 2 else '..'} " \
                f"{boards[0].board.sans[-1]}"
        expect(last).to_have_text(label)
    # the running clock ticks on the page
    running = card1.locator(".side.running .clock")
    before = running.inner_text()
    expect(running).not_to_have_text(before, timeout=5000)

    # an alert: unmistakable, then acknowledged
    with boards[2].lock:
        raised = boards[2].board.raise_alert("illegal-move", "white", ["f3", "h5"],
                                             "Illegal move: the position is reinstated")
    boards[2].publish(raised)
    card3 = page.locator("#card-b03")
    expect(card3).to_have_class(re.compile(r"\balerting\b"))
    expect(card3.locator(".alertbar strong")).to_have_text("Illegal move")
    expect(page).to_have_title(re.compile(r"^\(1\) "))
    with boards[3].lock:
        raised = boards[3].board.raise_alert("position-mismatch", None, ["d4"], "A piece is off its square")
    boards[3].publish(raised)
    expect(page.locator("#card-b04")).to_have_class(re.compile(r"\balerting\b"))
    keep_screenshot(page, tmp_path / "station-arbiter-alert.png")
    card3.locator("button[data-act=ack]").click()
    expect(card3.locator(".ackby")).to_have_text("seen by anna")
    expect(card3).to_have_class(re.compile(r"\balert-seen\b"))

    # a result, with its confirmation
    card1.locator("button[data-act=result]").click()
    dialog = page.locator("#result-dialog")
    dialog.locator("input[value='1-0']").check()
    dialog.locator("input[name=reason]").fill("resignation")
    dialog.locator("button[data-act=next]").click()
    expect(dialog.locator("[data-field=confirm]")).to_contain_text("to 1-0?")
    assert station.boards()["b01"]["result"] == "*"  # nothing sent before the confirmation
    dialog.locator("button[data-act=confirm]").click()
    expect(card1.locator(".result")).to_have_text("1-0")
    assert boards[0].board.result == "1-0"
    keep_screenshot(page, tmp_path / "station-arbiter.png")

    # the board in full: moves, alert history, journal
    page.goto(f"{station.url}/arbiter/board/b03")
    expect(page.locator("#alert-history")).to_contain_text("Illegal move")
    expect(page.locator("#alert-history")).to_contain_text("anna")
    expect(page.locator("#moves")).to_contain_text(boards[2].board.sans[0])
    expect(page.locator("#journal")).to_contain_text("ack")
    keep_screenshot(page, tmp_path / "station-board.png")

    # spectators: the same hall, no action, no journal, no alert details
    spectator = browser.new_context().new_page()
    spectator.goto(f"{station.url}/")
    expect(spectator.locator("#card-b01 .result")).to_have_text("1-0")
    expect(spectator.locator(".card")).to_have_count(4)
    assert spectator.locator("button[data-act]").count() == 0
    assert spectator.locator(".alertbar").count() == 0
    spectator.goto(f"{station.url}/board/b03")
    expect(spectator.locator("#moves")).to_contain_text(boards[2].board.sans[0])
    assert spectator.locator("#journal, #clock-form, #alert-history").count() == 0
    keep_screenshot(spectator, tmp_path / "station-spectator.png")

    # back on the hall: the sound can be switched on and muted again, and a board that
    # drops off the network is shown offline (the broker's last will)
    page.goto(f"{station.url}/arbiter")
    sound = page.locator("#sound")
    expect(sound).to_have_attribute("aria-pressed", "false")
    sound.click()
    expect(sound).to_have_attribute("aria-pressed", "true")
    sound.click()
    expect(sound).to_have_text("Sound off")
    boards[1].drop()
    expect(page.locator("#card-b02")).to_have_class(re.compile(r"\boffline\b"), timeout=15000)
    expect(page.locator("#card-b02 .conn")).to_have_text("OFFLINE")
    keep_screenshot(page, tmp_path / "station-hall.png")
    page.close()
