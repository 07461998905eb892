"""Tests of the simulator's handling behaviours (board_ctl.simulate.behaviours, handling):
every log well-formed, the physics of each behaviour within its documented ranges, the
expected outcome carried, fixed seeds reproduced. Not of the referee."""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import chess
import chess.pgn
import pytest

from board_ctl.sensorlog import read_sensor_log
from board_ctl.simulate import (
    BEHAVIOURS,
    NoEligiblePly,
    RenderedGame,
    RenderStyle,
    render_behaviour,
    render_handling,
)
from board_ctl.simulate.__main__ import main as simulate_main
from board_ctl.simulate.behaviours import NEW_BEHAVIOURS
from board_ctl.simulate.handling import castling_forbidden, illegal_castling_options
from board_ctl.simulate.render import knight_paths, rook_squares
from test_simulate import board_before, check_all, classics, debounced, engine_games, ply_lines

SLACK = 0.0025  # s: the 0.1 ms guard may shift a scheduled time this much
BOUNCE = 0.009  # s: a bounce's toggles, emitted before the next event, span at most this
GAMES_DIR = Path(__file__).parent / "data" / "games"


def renderings(name: str, use_clock: bool, games: Iterable[chess.pgn.Game],
               limit: int | None = None) -> list[RenderedGame]:
    """The games that can show the behaviour, rendered (seed: the game's index), at most
    `limit` of them."""
    out: list[RenderedGame] = []
    for seed, game in enumerate(games):
        if limit is not None and len(out) >= limit:
            break
        try:
            out.append(render_behaviour(game, name, seed=seed, use_clock=use_clock))
        except NoEligiblePly:
            continue
    return out


_READ: list[chess.pgn.Game] = []


def sample() -> Iterator[chess.pgn.Game]:
    """The engine games in order, each parsed only when first wanted (the whole file
    takes seconds to parse; a fast test needs a few dozen games at most)."""
    yield from _READ
    with (GAMES_DIR / "stockfish-300.pgn").open(encoding="utf-8") as fh:
        for _ in _READ:  # (the games read already, skipped unparsed)
            chess.pgn.skip_game(fh)
        while (game := chess.pgn.read_game(fh)) is not None:
            _READ.append(game)
            yield game


def sq_events(lines: list[dict]) -> list[dict]:
    return [o for o in lines if "sq" in o]


def name(sq: chess.Square) -> str:
    return chess.square_name(sq)


def idle_lifted(r: RenderedGame, ply: int) -> set[str]:
    """Squares of pieces with no move lifted and put back while thinking (clean noise)."""
    return {n.removeprefix("idle-lift:") for n in r.plies[ply].notes
            if n.startswith("idle-lift:")}


# -- every behaviour: well-formed, carrying its outcome, reproducible ----------------------------

CASES = [(b.name, clock) for b in BEHAVIOURS.values() if b.new for clock in b.clock_modes]


@pytest.mark.parametrize("behaviour, use_clock", CASES,
                         ids=[f"{n}-{'clock' if c else 'no-clock'}" for n, c in CASES])
def test_each_new_behaviour_renders_well_formed_logs_with_their_ruling(behaviour: str,
                                                                       use_clock: bool) -> None:
    rendered = renderings(behaviour, use_clock, sample(), limit=4)
    assert len(rendered) == 4
    for r in rendered:
        check_all(r)  # parses with no error, times increase, every lift/place possible
        assert r.behaviour == behaviour and r.profile == BEHAVIOURS[behaviour].profile
        assert r.moves == list(r.moves)  # the game's own moves are the expected record
        assert len(r.expected_squares) == len(r.expected_alerts)
        clocks = [o for o in r.lines if o["ev"] == "clock"]
        assert bool(clocks) == use_clock
        check_physics(behaviour, r)


def check_physics(behaviour: str, r: RenderedGame) -> None:
    staged = [p for p in r.plies if any(n.startswith(("knocked:", "illegal-castling:"))
                                        for n in p.notes)]
    if behaviour.startswith("slow-slide"):
        slid = [p for p in r.plies if p.style.endswith(":slow-slide")]
        assert slid
        for trace in slid:
            check_slow_slide(r, trace.ply)
        if behaviour == "slow-slide-victim-first":
            for trace in r.plies:
                if trace.style.startswith("capture:"):
                    assert trace.style.startswith("capture:victim-first")
                    check_victim_first(r, trace.ply)
    elif behaviour in ("knocked-restored-quickly", "knocked-restored-late"):
        assert len(staged) == 1
        check_knock(r, staged[0].ply, late=behaviour.endswith("late"))
    elif behaviour == "knock-off-capture":
        knocked = [p for p in r.plies if p.style == "capture:knock-off"]
        assert knocked
        for trace in knocked:
            check_knock_off(r, trace.ply)
    elif behaviour == "illegal-castling":
        assert len(staged) == 1
        check_illegal_castling(r, staged[0].ply)
    elif behaviour == "blitz-scramble":
        check_blitz(r)
    elif behaviour == "set-straight-scramble":
        check_blitz(r)
        straightened = [p for p in r.plies if any(n.startswith("straightened:")
                                                  for n in p.notes)]
        assert straightened
        for trace in straightened:
            check_straightened(r, trace.ply)
    else:
        raise AssertionError(f"no physics check for {behaviour}")


@pytest.mark.parametrize("behaviour", NEW_BEHAVIOURS)
def test_fixed_seeds_reproduce(behaviour: str) -> None:
    game = next(g for g in itertools.islice(sample(), 3, None) if _renders(g, behaviour, 7))
    a = render_behaviour(game, behaviour, seed=7)
    b = render_behaviour(game, behaviour, seed=7)
    c = render_behaviour(game, behaviour, seed=8)
    assert a.jsonl() == b.jsonl() and a.expected_alerts == b.expected_alerts
    assert a.plies == b.plies
    assert c.jsonl() != a.jsonl()


def _renders(game: chess.pgn.Game, behaviour: str, seed: int) -> bool:
    try:
        render_behaviour(game, behaviour, seed=seed)
    except NoEligiblePly:
        return False
    return True


def test_the_older_renderings_are_named_behaviours_too() -> None:
    """The registry renders the older kinds exactly as render_game/render_violation do."""
    from board_ctl.simulate import render_game, render_violation

    game = classics()[4]
    clean = render_behaviour(game, "clean", seed=3, use_clock=False)
    assert clean.jsonl() == render_game(game, seed=3, style=RenderStyle(use_clock=False)).jsonl()
    touch = render_behaviour(game, "touch-move", seed=3)
    assert touch.jsonl() == render_violation(game, "touch-move", seed=3).jsonl()
    assert touch.expected_alerts == render_violation(game, "touch-move", seed=3).expected_alerts
    with pytest.raises(ValueError, match="only with a clock"):
        render_behaviour(game, "illegal-move", seed=3, use_clock=False)
    with pytest.raises(ValueError, match="unknown behaviour"):
        render_behaviour(game, "juggling", seed=3)


# -- slow slides --------------------------------------------------------------------------------


def _timeline(lines: list[dict], squares: set[str]) -> dict[str, list[tuple[str, float]]]:
    """Each square's settled transitions (bounce collapsed), in time order."""
    out: dict[str, list[tuple[str, float]]] = {}
    for o in debounced(sq_events(lines)):
        if o["sq"] in squares:
            out.setdefault(o["sq"], []).append((o["ev"], o["t"]))
    return out


def check_slow_slide(r: RenderedGame, ply: int) -> None:
    """The piece crosses the squares of a real path, each adjacent to the last, each
    closed once for 80-500 ms; neighbours overlap by at most 30 ms or leave a gap."""
    board = board_before(r, ply)
    move = r.moves[ply]
    origin, target = move.from_square, move.to_square
    if board.is_castling(move):
        between = list(chess.SquareSet.between(origin, target))
        paths = [between]
    elif board.piece_type_at(origin) == chess.KNIGHT:
        paths = knight_paths(origin, target)
    else:
        paths = [sorted(chess.SquareSet.between(origin, target),
                        key=lambda s: chess.square_distance(s, origin))]
    lines = [o for o in ply_lines(r, ply) if o.get("sq") not in idle_lifted(r, ply)]
    arrival = next(o["t"] for o in debounced(sq_events(lines))
                   if o["sq"] == name(target) and o["ev"] == "place")
    # (the last crossed square may open just after the arrival; a castling rook later)
    lines = [o for o in lines if o["t"] <= arrival + 0.030 + SLACK]
    crossed_names = {name(s) for p in paths for s in p}
    crossed_seen = [o["sq"] for o in debounced(sq_events(lines))
                    if o["sq"] in crossed_names and o["ev"] == "place"]
    path = next(p for p in paths if [name(s) for s in p] == crossed_seen)
    assert all(board.piece_at(s) is None for s in path)  # slid across empty squares only
    chain = [origin, *path, target]
    assert all(chess.square_distance(a, b) == 1 for a, b in zip(chain, chain[1:]))
    timeline = _timeline(lines, {name(s) for s in chain})
    for sq in path:
        (ev1, t1), (ev2, t2) = timeline[name(sq)]
        assert (ev1, ev2) == ("place", "lift")
        assert 0.080 - SLACK <= t2 - t1 <= 0.500 + SLACK, (name(sq), t2 - t1)
    # each boundary: the next square closes at most 30 ms before the last opens, or after
    leaves = [next(t for ev, t in timeline[name(s)] if ev == "lift") for s in chain[:-1]]
    arrives = [next(t for ev, t in timeline[name(s)] if ev == "place") for s in chain[1:]]
    for left, arrived in zip(leaves, arrives):
        assert -0.030 - SLACK <= arrived - left <= 0.080 + SLACK


def check_victim_first(r: RenderedGame, ply: int) -> None:
    move = r.moves[ply]
    board = board_before(r, ply)
    if board.is_en_passant(move) or move.promotion:
        return
    first = next(o for o in sq_events(ply_lines(r, ply)) if o["sq"] not in idle_lifted(r, ply))
    assert (first["ev"], first["sq"]) == ("lift", name(move.to_square))


# -- knocked pieces -----------------------------------------------------------------------------


def _knock_squares(r: RenderedGame, ply: int) -> tuple[chess.Square, chess.Square]:
    note = next(n for n in r.plies[ply].notes if n.startswith("knocked:"))
    knocked, land = note.removeprefix("knocked:").split(">")
    return chess.parse_square(knocked), chess.parse_square(land)


def check_knock(r: RenderedGame, ply: int, late: bool) -> None:
    board = board_before(r, ply)
    move = r.moves[ply]
    knocked, land = _knock_squares(r, ply)
    hand = {move.from_square, move.to_square} | set(
        chess.SquareSet.between(move.from_square, move.to_square))
    # a piece beside the hand, onto an empty neighbouring square off the move's squares
    assert board.piece_at(knocked) is not None and knocked not in hand
    assert board.piece_at(land) is None and land not in hand
    assert chess.square_distance(knocked, land) == 1
    assert any(chess.square_distance(knocked, h) == 1 for h in hand)
    lines = ply_lines(r, ply)
    timeline = _timeline(lines, {name(knocked), name(land), name(move.from_square)})
    (off, t_off), (back, t_back) = timeline[name(knocked)]
    (down, t_down), (up, t_up) = timeline[name(land)]
    assert (off, back, down, up) == ("lift", "place", "place", "lift")
    assert t_off < t_down < t_up < t_back
    lifted = next(t for ev, t in timeline[name(move.from_square)] if ev == "lift")
    placed = next(o["t"] for o in debounced(sq_events(lines))
                  if o["sq"] == name(move.to_square) and o["ev"] == "place")
    assert lifted < t_off < placed  # knocked while the piece was in the hand
    presses = [o["t"] for o in lines if o["ev"] == "clock"]
    if late:
        assert len(presses) == 1
        assert 1.7 - SLACK <= t_back - presses[0] <= 3.5 + SLACK
        assert r.expected_alerts == [("position-mismatch", ply)]
        assert r.expected_squares == [tuple(sorted((name(knocked), name(land))))]
    else:
        assert 0.15 - SLACK <= t_back - t_off <= 1.35 + SLACK
        assert r.expected_alerts == [] and r.expected_squares == []


def check_knock_off(r: RenderedGame, ply: int) -> None:
    """The victim pushed onto an empty square beside it, ahead of the capturing piece,
    removed 0.1-1 s later; the victim's square empty only 5-60 ms, or never."""
    board = board_before(r, ply)
    move = r.moves[ply]
    a, v = move.from_square, move.to_square
    lines = [o for o in ply_lines(r, ply) if o.get("sq") not in idle_lifted(r, ply)]
    others = {o["sq"] for o in sq_events(lines)} - {name(a), name(v)}
    crossed = {name(s) for s in chess.SquareSet.between(a, v)}
    spots = [s for s in others - crossed
             if chess.square_distance(chess.parse_square(s), v) == 1]
    assert len(spots) == 1, (spots, lines)
    spot = chess.parse_square(spots[0])
    assert board.piece_at(spot) is None
    ahead = (chess.square_file(spot) - chess.square_file(v)) * \
        (chess.square_file(v) - chess.square_file(a)) + \
        (chess.square_rank(spot) - chess.square_rank(v)) * \
        (chess.square_rank(v) - chess.square_rank(a))
    assert ahead > 0
    # no other capture of that piece's lands beside the spot (the sensors could tell)
    others_captured = {m.to_square for m in board.legal_moves
                       if m.from_square == a and board.is_capture(m) and m.to_square != v}
    assert all(chess.square_distance(spot, o) > 1 for o in others_captured)
    timeline = _timeline(lines, {spots[0], name(v)})
    (down, t_down), (up, t_up) = timeline[spots[0]]
    assert (down, up) == ("place", "lift")
    assert 0.1 - SLACK <= t_up - t_down <= 1.0 + SLACK
    victim = timeline.get(name(v), [])
    # (the spot's bounce, when it lands first, may hold the emitter up to 9 ms more)
    assert victim == [] or ([ev for ev, _ in victim] == ["lift", "place"]
                            and victim[1][1] - victim[0][1] <= 0.060 + BOUNCE)


# -- illegal castling -------------------------------------------------------------------------


def check_illegal_castling(r: RenderedGame, ply: int) -> None:
    board = board_before(r, ply)
    move = r.moves[ply]
    note = next(n for n in r.plies[ply].notes if n.startswith("illegal-castling:"))
    _, uci, reason, _ = note.split(":")
    castle = chess.Move.from_uci(uci)
    king = board.king(board.turn)
    assert castle.from_square == king and not board.is_legal(castle)
    r_from, r_to = rook_squares(castle)
    assert board.piece_type_at(r_from) == chess.ROOK
    assert board.castling_rights & chess.BB_SQUARES[r_from]  # the rights still stand
    assert not chess.SquareSet.between(king, r_from) & board.occupied  # nothing in the way
    assert reason in ("in-check", "through-attack", "into-check", "next-to-the-king")
    # then a king move (4.3, 4.4.3), or any move when the king cannot move
    assert move.from_square == king or not any(m.from_square == king
                                               for m in board.legal_moves)
    lines = debounced(ply_lines(r, ply))
    first_press = next(i for i, o in enumerate(lines) if o["ev"] == "clock")
    before = [(o["ev"], o["sq"]) for o in lines[:first_press] if "sq" in o]
    assert before[0] == ("lift", name(king))
    assert ("place", name(castle.to_square)) in before and ("place", name(r_to)) in before
    after = [(o["ev"], o["sq"]) for o in lines[first_press + 1:] if "sq" in o]
    back = [("place", name(king)), ("place", name(r_from))]
    assert all(step in after[:6] for step in back)  # both put back, then the game's move
    assert r.expected_alerts == [("illegal-move", ply)]


def _game_from(fen: str, sans: list[str]) -> chess.pgn.Game:
    board = chess.Board(fen)
    game = chess.pgn.Game()
    game.setup(board)
    node: chess.pgn.GameNode = game
    for san in sans:
        move = board.parse_san(san)
        node = node.add_variation(move)
        board.push(move)
    game.headers["Result"] = "*"
    return game


@pytest.mark.parametrize("fen, move, reason", [
    ("4k3/8/8/8/8/8/1k6/R3K3 w Q - 0 1".replace("4k3", "8"), "e1c1", "next-to-the-king"),
    ("4k3/8/8/8/8/8/8/4K2R w K - 0 1".replace("4k3", "4r1k1"), "e1g1", "in-check"),
    ("5rk1/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", "through-attack"),
    ("6rk/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", "into-check"),
])
def test_why_castling_is_forbidden(fen: str, move: str, reason: str) -> None:
    board = chess.Board(fen)
    castle = chess.Move.from_uci(move)
    assert not board.is_legal(castle)
    assert castling_forbidden(board, castle) == reason


def test_illegal_castling_next_to_the_enemy_king_is_staged() -> None:
    """No game of the corpus has it; a composed position does (castling long onto c1
    beside the black king on b2), followed by a king move."""
    game = _game_from("8/8/8/8/8/8/1k6/R3K3 w Q - 0 1", ["Ke2", "Kc3", "Ra3+", "Kc4"])
    board = game.board()
    options = illegal_castling_options(board, board.parse_san("Ke2"), 0)
    assert options == [(chess.Move.from_uci("e1c1"), "next-to-the-king")]
    r = render_handling(game, "illegal-castling", seed=5, ply=0)
    check_all(r)
    check_illegal_castling(r, 0)
    # not staged where the game's move is not the king's while the king can move
    assert not illegal_castling_options(board, board.parse_san("Ra2+"), 0)


# -- blitz scramble --------------------------------------------------------------------------------


def check_blitz(r: RenderedGame) -> None:
    start = r.lines[0]
    assert start["ev"] == "start" and start["time_control"] == "180+2"
    left = {"white": 180.0, "black": 180.0}
    running, since = "white", 0.0
    events = [o for o in r.lines if o["ev"] != "start"]
    for o in events:
        if o["ev"] == "clock":
            assert o["side"] == running
            left[running] += 2.0 - (o["t"] - since)
            assert left[running] >= 10.0 - SLACK  # never below the reserve
            running, since = ("black" if running == "white" else "white"), o["t"]
    if events:
        assert left[running] - (events[-1]["t"] - since) > 0  # no flag at the end either
    for trace in r.plies:
        if any(n.startswith("lift-before-press:") for n in trace.notes):
            check_early_lift(r, trace.ply)
        if "recapture" in trace.notes:
            lines = ply_lines(r, trace.ply)
            previous = ply_lines(r, trace.ply - 1)
            press = [o["t"] for o in previous if o["ev"] == "clock"]
            # (begun: a piece lifted, or the selector set for a promotion first)
            first = next(o for o in lines if "sq" in o or o["ev"] == "promote")
            if press and lines[0]["ev"] != "clock":
                assert 0 < first["t"] - press[-1] <= 0.200 + SLACK


def check_straightened(r: RenderedGame, ply: int) -> None:
    """The mover's piece, on its square, lifted 0.1-1.5 s after the move's last change
    (its bounce aside) and put back there 40-400 ms later, before his press (each change
    with its bounce, 8 ms at most)."""
    square = chess.square_name(r.moves[ply].to_square)
    mover = "white" if board_before(r, ply).turn == chess.WHITE else "black"
    lines = ply_lines(r, ply)
    press = next((o["t"] for o in lines if o["ev"] == "clock" and o["side"] == mover),
                 None)
    bursts: list[dict] = []  # the first event of each change of the square
    last = None
    for o in lines:
        if o.get("sq") == square and (press is None or o["t"] < press):
            if last is None or o["t"] - last > 0.010:
                bursts.append(o)
            last = o["t"]
    lifted, back = bursts[-2:]
    assert (lifted["ev"], back["ev"]) == ("lift", "place"), bursts
    # (after the move's last change: castling's rook may follow the king; a piece pushed
    # onto its victim lands unseen, up to 0.8 s (its carry, the push) after its lift)
    done = max(o["t"] for o in lines if "sq" in o and o["t"] < lifted["t"])
    assert 0.1 - SLACK <= lifted["t"] - done <= 1.5 + 0.8 + 0.010 + SLACK
    assert 0.040 - SLACK <= back["t"] - lifted["t"] <= 0.400 + 0.010 + SLACK


def check_early_lift(r: RenderedGame, ply: int) -> None:
    """The player lifts his first piece 0-100 ms before the opponent's press, and 80 ms
    or more after the opponent let go of his piece."""
    opponent = "black" if board_before(r, ply).turn == chess.WHITE else "white"
    released = max(o["t"] for o in ply_lines(r, ply - 1) if "sq" in o)
    lines = ply_lines(r, ply)
    lift, press = lines[0], next(o for o in lines if o["ev"] == "clock")
    assert lift["ev"] == "lift" and press["side"] == opponent
    assert lift["t"] < press["t"] <= lift["t"] + 0.100 + SLACK
    assert lift["t"] - released >= 0.080 - 1e-9


# -- the command line ----------------------------------------------------------------------------


def test_command_line_renders_a_behaviour_by_name(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    pgn = GAMES_DIR / "classics.pgn"
    assert simulate_main([str(pgn), "--out", str(tmp_path), "--behaviour", "blitz-scramble",
                          "--limit", "2"]) == 0
    assert "wrote 2" in capsys.readouterr().out
    text = (tmp_path / "0001.jsonl").read_text()
    assert json.loads(text.splitlines()[0])["time_control"] == "180+2"
    assert read_sensor_log(io.StringIO(text)).errors == []
    with pytest.raises(SystemExit) as exc:
        simulate_main([str(pgn), "--out", str(tmp_path), "--behaviour", "illegal-castling",
                       "--no-clock"])
    assert exc.value.code == 2
    assert "needs the clock" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        simulate_main(["--help"])
    out = capsys.readouterr().out
    assert all(b in out for b in BEHAVIOURS)


# -- the whole corpus (slow) ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("behaviour, use_clock", CASES,
                         ids=[f"{n}-{'clock' if c else 'no-clock'}" for n, c in CASES])
def test_every_game_of_the_corpus_renders_each_new_behaviour_physically(
        behaviour: str, use_clock: bool) -> None:
    rendered = renderings(behaviour, use_clock, engine_games())
    assert len(rendered) >= (40 if behaviour == "illegal-castling" else 150)
    for r in rendered:
        check_all(r)
        check_physics(behaviour, r)
