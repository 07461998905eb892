"""Tests of the sensor-log simulator itself (board_ctl.simulate), not of the controller."""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path

import chess
import chess.pgn
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from board_ctl.sensorlog import read_sensor_log
from board_ctl.simulate import (
    VIOLATION_CODES,
    NoEligiblePly,
    RenderedGame,
    RenderStyle,
    eligible_plies,
    render_game,
    render_violation,
)
from corpus import has_move
from board_ctl.simulate.__main__ import main as simulate_main
from board_ctl.simulate.render import captured_square
from board_ctl.simulate.violations import ALERT_CODES, PLANS, options_along

GAMES_DIR = Path(__file__).parent / "data" / "games"
NO_NOISE = dict(bounce=False, slides=False, idle_lift_prob=0.0)


@cache
def load(name: str) -> tuple[chess.pgn.Game, ...]:
    games = []
    with (GAMES_DIR / name).open(encoding="utf-8") as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            games.append(game)
    return tuple(games)


def classics() -> tuple[chess.pgn.Game, ...]:
    return load("classics.pgn")


def engine_games() -> tuple[chess.pgn.Game, ...]:
    return load("stockfish-300.pgn")


def games_with(predicate) -> list[chess.pgn.Game]:
    """Engine games having at least one move for which predicate(board, move) holds."""
    return [game for game in engine_games() if has_move(game, predicate)]


# -- invariants every rendering must keep -------------------------------------------------


def events(r: RenderedGame) -> list[dict]:
    return [obj for obj in r.lines if obj["ev"] != "start"]


def check_parses(r: RenderedGame) -> None:
    log = read_sensor_log(io.StringIO(r.jsonl()))
    assert log.errors == []
    assert len(log.events) == len(events(r))
    assert log.start.fen == chess.Board(r.start_fen).fen()


def check_monotonic(r: RenderedGame) -> None:
    times = [obj["t"] for obj in events(r)]
    assert all(a < b for a, b in zip(times, times[1:]))
    assert all(round(t, 4) == t for t in times)


def check_occupancy(r: RenderedGame) -> None:
    occupied = set(chess.SquareSet(chess.Board(r.start_fen).occupied))
    for obj in events(r):
        sq = chess.parse_square(obj["sq"]) if "sq" in obj else None
        if obj["ev"] == "lift":
            assert sq in occupied, f"lift of empty {obj}"
            occupied.remove(sq)
        elif obj["ev"] == "place":
            assert sq not in occupied, f"place on occupied {obj}"
            occupied.add(sq)
    assert occupied == set(chess.SquareSet(r.final_board().occupied))


def check_all(r: RenderedGame) -> None:
    check_parses(r)
    check_monotonic(r)
    check_occupancy(r)


def ply_lines(r: RenderedGame, ply: int) -> list[dict]:
    trace = r.plies[ply]
    return r.lines[trace.first_line : trace.end_line]


def board_before(r: RenderedGame, ply: int) -> chess.Board:
    board = chess.Board(r.start_fen)
    for move in r.moves[:ply]:
        board.push(move)
    return board


# -- the corpus ---------------------------------------------------------------------------


@pytest.mark.slow
def test_corpus_games_parse_cleanly() -> None:
    assert len(engine_games()) == 300
    assert len(classics()) >= 15
    for game in engine_games() + classics():
        assert game.errors == []
        assert 2 <= len(list(game.mainline_moves())) <= 250
    size = sum(p.stat().st_size for p in GAMES_DIR.glob("*.pgn"))
    assert size < 1_000_000


@pytest.mark.slow
def test_corpus_has_the_special_moves() -> None:
    counts: dict[str, int] = {}
    for game in engine_games():
        board = game.board()
        for move in game.mainline_moves():
            colour = "w" if board.turn else "b"
            keys = []
            if board.is_kingside_castling(move):
                keys.append(f"O-O {colour}")
            if board.is_queenside_castling(move):
                keys.append(f"O-O-O {colour}")
            if board.is_en_passant(move):
                keys.append("ep")
            if move.promotion:
                keys.append(f"={chess.piece_symbol(move.promotion)}")
            for key in keys:
                counts[key] = counts.get(key, 0) + 1
            board.push(move)
        if board.is_checkmate():
            counts["mate"] = counts.get("mate", 0) + 1
    for key in ("O-O w", "O-O b", "O-O-O w", "O-O-O b", "ep", "=q", "=n", "=r", "=b", "mate"):
        assert counts.get(key, 0) >= 5, (key, counts)


# -- clean renderings --------------------------------------------------------------------------


def test_resignation_ends_decisive_games_without_mate() -> None:
    for i, game in enumerate(classics()):
        r = render_game(game, seed=i)
        last = r.lines[-1]
        if game.headers["Result"] in ("1-0", "0-1") and not r.final_board().is_checkmate():
            loser = "black" if game.headers["Result"] == "1-0" else "white"
            assert last["ev"] == "resign" and last["side"] == loser
        else:
            assert last["ev"] != "resign"


@pytest.mark.slow
def test_every_game_renders_cleanly() -> None:
    for i, game in enumerate(engine_games() + classics()):
        r = render_game(game, seed=i)
        check_all(r)
        assert r.moves == list(game.mainline_moves())
        assert r.expected_alerts == []


@pytest.mark.slow
def test_no_clock_renderings_parse_and_have_no_clock() -> None:
    for i, game in enumerate(engine_games()[:20]):
        r = render_game(game, seed=i, style=RenderStyle(use_clock=False))
        check_all(r)
        assert not [obj for obj in r.lines if obj["ev"] == "clock"]


@pytest.mark.slow
def test_clock_presses_alternate() -> None:
    for i, game in enumerate(engine_games()[:60] + classics()):
        r = render_game(game, seed=i)
        sides = [obj["side"] for obj in r.lines if obj["ev"] == "clock"]
        turn = chess.Board(r.start_fen).turn
        expected = ["white" if (turn == chess.WHITE) == (k % 2 == 0) else "black"
                    for k in range(len(r.moves))]
        game_over = r.final_board().outcome(claim_draw=False) is not None
        assert sides == expected or (game_over and sides == expected[:-1])
        for trace in r.plies:  # each ply ends with its own press
            lines = ply_lines(r, trace.ply)
            clocks = [obj for obj in lines if obj["ev"] == "clock"]
            assert len(clocks) <= 1
            if clocks:
                assert lines[-1] is clocks[0]


def test_rendering_is_deterministic() -> None:
    game = classics()[4]
    assert render_game(game, seed=7).lines == render_game(game, seed=7).lines
    assert render_game(game, seed=7).lines != render_game(game, seed=8).lines


def test_start_ply_starts_from_fen() -> None:
    game = classics()[3]
    r = render_game(game, seed=1, style=RenderStyle(start_ply=11))
    board = game.board()
    for move in list(game.mainline_moves())[:11]:
        board.push(move)
    assert r.lines[0] == {"t": 0.0, "ev": "start", "fen": board.fen()}
    assert r.moves == list(game.mainline_moves())[11:]
    check_all(r)
    assert render_game(game, seed=1).lines[0]["ev"] != "start"


def test_quiet_moves_without_noise_are_one_lift_one_place() -> None:
    r = render_game(classics()[0], seed=3, style=RenderStyle(**NO_NOISE))
    for trace in r.plies:
        if trace.style == "quiet":
            kinds = [(o["ev"], o.get("sq")) for o in ply_lines(r, trace.ply) if o["ev"] != "clock"]
            move = r.moves[trace.ply]
            assert kinds == [("lift", chess.square_name(move.from_square)),
                             ("place", chess.square_name(move.to_square))]


def test_bounce_toggles_are_short_and_even() -> None:
    style = RenderStyle(bounce_prob=1.0, slides=False, idle_lift_prob=0.0)
    r = render_game(classics()[0], seed=5, style=style)
    ev = events(r)
    runs, i = 0, 0
    while i < len(ev):  # a run of transitions on one square within 8 ms
        j = i
        while j + 1 < len(ev) and ev[j + 1].get("sq") == ev[i].get("sq") and \
                ev[j + 1]["t"] - ev[i]["t"] <= 0.0081:
            j += 1
        if j > i:
            runs += 1
            assert j - i in (2, 4)  # extra toggles come in pairs: the final state holds
            assert ev[j]["ev"] == ev[i]["ev"]
        i = j + 1
    assert runs > 20


def test_slides_blip_the_path_in_order() -> None:
    style = RenderStyle(slide_prob=1.0, bounce=False, idle_lift_prob=0.0)
    r = render_game(classics()[4], seed=2, style=style)
    slid = [t for t in r.plies if t.style == "quiet:slide"]
    assert slid
    for trace in slid:
        move = r.moves[trace.ply]
        lines = [o for o in ply_lines(r, trace.ply) if o["ev"] in ("lift", "place")]
        inner = lines[1:-1]
        path = sorted(chess.SquareSet.between(move.from_square, move.to_square),
                      key=lambda s: chess.square_distance(s, move.from_square))
        assert [o["sq"] for o in inner[::2]] == [chess.square_name(s) for s in path]
        for place, lift in zip(inner[::2], inner[1::2]):
            assert (place["ev"], lift["ev"]) == ("place", "lift")
            assert place["sq"] == lift["sq"]
            assert 0.015 <= round(lift["t"] - place["t"], 4) <= 0.0701
    knight_plies = [t for t in r.plies
                    if board_before(r, t.ply).piece_type_at(r.moves[t.ply].from_square)
                    == chess.KNIGHT]
    assert knight_plies and all("slide" not in t.style for t in knight_plies)


def _captures_style(weights: tuple[float, float, float, float], seed: int = 1) -> list:
    style = RenderStyle(capture_styles=weights, **NO_NOISE)
    out = []
    for i, game in enumerate(classics()):
        r = render_game(game, seed=seed + i, style=style)
        check_all(r)
        out += [(r, t) for t in r.plies if t.style.startswith("capture:")]
    return out


def test_swap_no_blip_never_touches_the_target() -> None:
    found = _captures_style((0, 0, 0, 1))
    no_blip = [(r, t) for r, t in found if t.style == "capture:swap-no-blip"]
    assert len(no_blip) > 20
    for r, t in no_blip:
        target = chess.square_name(r.moves[t.ply].to_square)
        assert not [o for o in ply_lines(r, t.ply) if o.get("sq") == target]
    # only when the capture is the attacker's only one; otherwise a blip swap
    assert {t.style for _, t in found} <= {"capture:swap-no-blip", "capture:swap-blip"}


def test_capture_orders() -> None:
    for weights, name in (((1, 0, 0, 0), "victim-first"), ((0, 1, 0, 0), "attacker-first"),
                          ((0, 0, 1, 0), "swap-blip")):
        found = _captures_style(weights)
        assert found and all(t.style == f"capture:{name}" for _, t in found)
        for r, t in found:
            move = r.moves[t.ply]
            a, v = chess.square_name(move.from_square), chess.square_name(move.to_square)
            seq = [(o["ev"], o["sq"]) for o in ply_lines(r, t.ply) if "sq" in o]
            if name == "victim-first":
                assert seq == [("lift", v), ("lift", a), ("place", v)]
            else:
                assert seq == [("lift", a), ("lift", v), ("place", v)]
            if name == "swap-blip":
                lines = [o for o in ply_lines(r, t.ply) if "sq" in o]
                assert 0.005 <= round(lines[2]["t"] - lines[1]["t"], 4) <= 0.0601


@pytest.mark.slow
def test_castling_is_king_first() -> None:
    games = games_with(lambda b, m: b.is_castling(m))[:40]
    styles = set()
    for i, game in enumerate(games):
        r = render_game(game, seed=i, style=RenderStyle(idle_lift_prob=0.0))
        check_all(r)
        for t in r.plies:
            if not t.style.startswith("castle:"):
                continue
            styles.add(t.style)
            move = r.moves[t.ply]
            lifts = [o for o in ply_lines(r, t.ply) if o["ev"] == "lift"]
            assert lifts[0]["sq"] == chess.square_name(move.from_square)
            if t.style == "castle:both-lifted":
                rook_lift = next(o for o in lifts if o["sq"] != lifts[0]["sq"])
                assert 0.05 <= round(rook_lift["t"] - lifts[0]["t"], 4) <= 0.26
    assert styles == {"castle:one-hand", "castle:both-lifted"}


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
def test_en_passant_changes_three_squares() -> None:
    games = games_with(lambda b, m: b.is_en_passant(m))
    orders = set()
    for i, game in enumerate(games):
        r = render_game(game, seed=i, style=RenderStyle(**NO_NOISE))
        check_all(r)
        for t in r.plies:
            if t.style.startswith("ep:"):
                orders.add(t.style)
                squares = {o["sq"] for o in ply_lines(r, t.ply) if "sq" in o}
                assert len(squares) == 3
    assert orders == {"ep:move-then-remove", "ep:remove-first", "ep:lift-remove-place"}


@pytest.mark.slow
def test_promotions_and_selector() -> None:
    games = games_with(lambda b, m: m.promotion is not None)
    notes: set[str] = set()
    for i, game in enumerate(games):
        for use_clock in (True, False):
            r = render_game(game, seed=i, style=RenderStyle(use_clock=use_clock, **NO_NOISE))
            check_all(r)
            for t in r.plies:
                move = r.moves[t.ply]
                if not move.promotion:
                    continue
                lines = ply_lines(r, t.ply)
                chosen = [o["piece"] for o in lines if o["ev"] == "promote"]
                if move.promotion != chess.QUEEN:
                    assert chosen == [chess.piece_symbol(move.promotion)]
                else:
                    assert chosen in ([], ["q"])
                timing = next(n for n in t.notes if n.startswith("promote:")).split(":")[2]
                notes.add(timing)
                kinds = [o["ev"] for o in lines]
                if timing == "before-lift":
                    assert kinds.index("promote") < kinds.index("lift")
                if timing == "in-hand":
                    last_place = len(kinds) - 1 - kinds[::-1].index("place")
                    assert kinds.index("lift") < kinds.index("promote") < last_place
                if timing == "after-placement":
                    assert "place" not in kinds[kinds.index("promote"):]
                # the promotion square ends occupied, and empties at some point
                to = chess.square_name(move.to_square)
                assert [o["ev"] for o in lines if o.get("sq") == to][-1] == "place"
    assert notes == {"before-lift", "in-hand", "after-placement", "default-queen"}


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
def test_a_selector_after_the_press_follows_the_press_within_250_ms() -> None:
    games = games_with(lambda b, m: m.promotion is not None)[:20]
    style = RenderStyle(promote_timings=(0.0, 0.0, 0.0, 1.0), queen_default_prob=0.0,
                        **NO_NOISE)
    seen = 0
    for i, game in enumerate(games):
        r = render_game(game, seed=i, style=style)
        check_all(r)
        for t in r.plies:
            if not r.moves[t.ply].promotion:
                continue
            lines = ply_lines(r, t.ply)
            kinds = [o["ev"] for o in lines]
            assert kinds[-1] == "promote", kinds
            if "clock" in kinds:  # (none after a mate the player did not press for)
                assert kinds[-2] == "clock"
                assert 0 < lines[-1]["t"] - lines[-2]["t"] <= 0.25
                seen += 1
    assert seen >= 10


def test_idle_lifts_only_touch_pieces_that_cannot_move() -> None:
    style = RenderStyle(idle_lift_prob=1.0, bounce=False)
    seen = 0
    for i, game in enumerate(classics()):
        r = render_game(game, seed=i, style=style)
        check_all(r)
        for t in r.plies:
            for note in t.notes:
                if not note.startswith("idle-lift:"):
                    continue
                seen += 1
                sq = note.split(":")[1]
                board = board_before(r, t.ply)
                assert board.color_at(chess.parse_square(sq)) == board.turn
                assert not [m for m in board.legal_moves if chess.square_name(m.from_square) == sq]
                lines = [o for o in ply_lines(r, t.ply) if "sq" in o]
                assert (lines[0]["ev"], lines[0]["sq"], lines[1]["ev"], lines[1]["sq"]) == \
                    ("lift", sq, "place", sq)
                assert lines[1]["t"] - lines[0]["t"] < 1.5
    assert seen > 50


def test_claim_at_the_end_of_a_claimable_draw() -> None:
    claimed = 0
    for i, game in enumerate(engine_games()):
        if game.headers["Result"] != "1/2-1/2":
            continue
        r = render_game(game, seed=i)
        board = r.final_board()
        if board.outcome(claim_draw=False) is None:
            assert r.lines[-1]["ev"] == "claim"
            assert r.lines[-1]["side"] == ("white" if board.turn else "black")
            claimed += 1
        else:
            assert r.lines[-1]["ev"] != "claim"
    assert claimed >= 5


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    game_index=st.integers(0, 299),
    use_clock=st.booleans(),
    bounce=st.booleans(),
    slides=st.booleans(),
    start_ply=st.integers(0, 30),
)
@pytest.mark.slow
def test_any_seed_gives_a_consistent_log(seed, game_index, use_clock, bounce, slides, start_ply):
    game = engine_games()[game_index]
    start_ply = min(start_ply, len(list(game.mainline_moves())))
    style = RenderStyle(use_clock=use_clock, bounce=bounce, slides=slides, start_ply=start_ply,
                        idle_lift_prob=0.2)
    r = render_game(game, seed=seed, style=style)
    check_all(r)
    assert r.moves == list(game.mainline_moves())[start_ply:]


# -- violations -------------------------------------------------------------------------------


@pytest.mark.slow
def test_each_violation_is_staged_once_and_keeps_the_game() -> None:
    for code in VIOLATION_CODES:
        for i, game in enumerate(classics()):
            r = render_violation(game, code, seed=i)
            check_all(r)
            assert r.moves == list(game.mainline_moves())
            alert = ALERT_CODES[code]
            assert len(r.expected_alerts) == 1 and r.expected_alerts[0][0] == alert
            ply = r.expected_alerts[0][1]
            assert ply in eligible_plies(game, code)
            _check_violation(r, code, ply)


def debounced(lines: list[dict]) -> list[dict]:
    """Collapse contact bounce (an odd run of toggles on one square within 9 ms)."""
    out: list[dict] = []
    i = 0
    while i < len(lines):
        j = i
        while (j + 1 < len(lines) and "sq" in lines[i] and lines[j + 1].get("sq") == lines[i]["sq"]
               and lines[j + 1]["t"] - lines[i]["t"] <= 0.009):
            j += 1
        if j > i and (j - i) % 2 == 0:
            out.append(lines[i])
            i = j + 1
        else:
            out.append(lines[i])
            i += 1
    return out


def _check_violation(r: RenderedGame, code: str, ply: int) -> None:
    board = board_before(r, ply)
    move = r.moves[ply]
    lines = debounced(ply_lines(r, ply))
    moves_lines = [o for o in lines if "sq" in o]
    first = moves_lines[0] if moves_lines else None
    if code in ("touch-move", "touch-move-enemy"):
        sq = chess.parse_square(first["sq"])
        assert first["ev"] == "lift" and moves_lines[1] == {**moves_lines[1], "ev": "place",
                                                            "sq": first["sq"]}
        assert moves_lines[1]["t"] - first["t"] > 0.3
        if code == "touch-move":
            assert board.color_at(sq) == board.turn and sq != move.from_square
            assert any(m.from_square == sq for m in board.legal_moves)
        else:
            assert board.color_at(sq) == (not board.turn)
            assert sq in {captured_square(board, m) for m in board.legal_moves}
            assert sq != captured_square(board, move)
    elif code == "illegal-move":
        clocks = [o for o in lines if o["ev"] == "clock"]
        # Two presses; a last move that ends the game may go without its second.
        assert len(clocks) == 2 or (len(clocks) == 1 and ply == len(r.moves) - 1)
        x = chess.parse_square(moves_lines[1]["sq"])
        assert first["sq"] == chess.square_name(move.from_square)
        origin = move.from_square
        assert x not in {m.to_square for m in board.legal_moves if m.from_square == origin}
    elif code == "move-changed":
        held = [p for p, q in zip(moves_lines, moves_lines[1:])
                if p["ev"] == "place" and q["ev"] == "lift" and p["sq"] == q["sq"]
                and q["t"] - p["t"] >= 1.0]
        assert len(held) == 1  # released there 1-3 s (slide blips are shorter)
        y = chess.parse_square(held[0]["sq"])
        assert y != move.to_square
        assert chess.Move(move.from_square, y) in board.legal_moves
        decoy = board.copy()
        decoy.push(chess.Move(move.from_square, y))
        assert decoy.outcome() is None  # (left standing, a game-ending move is the record)
        assert [o["sq"] for o in moves_lines][-1] == chess.square_name(move.to_square)
    elif code == "position-mismatch":
        assert first["ev"] == "lift"
        back = next(o for o in moves_lines[1:] if o["sq"] == first["sq"] and o["ev"] == "place")
        assert back["t"] - first["t"] >= 2.0
        sq = chess.parse_square(first["sq"])
        # A piece of the side not to move, that no legal move could capture.
        assert board.color_at(sq) == (not board.turn)
        assert not [m for m in board.legal_moves if m.to_square == sq]
    elif code == "clock-no-move":
        assert lines[0]["ev"] == "clock" or [o["ev"] for o in lines].index("clock") < \
            [o["ev"] for o in lines].index("lift")
        # the press without a move, then the move's own press: none after a move that
        # ends the game (a mate needs no press)
        after = board.copy()
        after.push(move)
        presses = len([o for o in lines if o["ev"] == "clock"])
        assert presses == 2 or (presses == 1 and after.is_game_over())
    elif code == "knocked-during-move":
        # the moving piece lifted, another knocked off, the move put down, the knocked
        # piece back 2.5-4 s later, then the press
        kinds = [(o["ev"], o["sq"]) for o in moves_lines]
        knocked = moves_lines[1]["sq"]
        assert kinds == [("lift", chess.square_name(move.from_square)), ("lift", knocked),
                         ("place", chess.square_name(move.to_square)), ("place", knocked)]
        assert 2.5 <= moves_lines[3]["t"] - moves_lines[2]["t"] <= 4.1
        assert board.piece_type_at(chess.parse_square(knocked)) != chess.KING
        after = board.copy()
        after.push(move)  # (a mate or a draw needs no press: 6.2.1)
        assert [o["ev"] for o in lines][-1] == "clock" or after.is_game_over()


def test_a_changed_move_is_never_first_put_where_it_ends_the_game() -> None:
    """Left standing 1-3 s (released, 4.7), a mate or stalemate ends the game there
    (5.1.1, 5.2.1): that is the record, so move-changed never stages such a square."""
    staged, avoided = 0, 0
    for game in engine_games()[:40]:
        board = game.board()
        for ply, (options, move) in enumerate(zip(
                eligible_options(game, "move-changed"), game.mainline_moves())):
            ending = {m.to_square for m in board.legal_moves
                      if m.from_square == move.from_square and m.to_square != move.to_square
                      and _outcome_after(board, m)}
            staged += len(options)
            avoided += bool(ending)
            assert not ending & set(options), (ply, board.fen())
            board.push(move)
    assert staged > 300 and avoided > 0


def _outcome_after(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    ended = board.outcome() is not None
    board.pop()
    return ended


def eligible_options(game: chess.pgn.Game, code: str) -> list[list[chess.Square]]:
    found = options_along(game, PLANS[code][0], 0)
    return [found.get(ply, []) for ply in range(len(list(game.mainline_moves())))]


def test_violation_at_a_given_ply_and_errors() -> None:
    game = classics()[4]
    plies = eligible_plies(game, "move-changed")
    r = render_violation(game, "move-changed", seed=3, ply=plies[-1])
    assert r.expected_alerts == [("move-changed", plies[-1])]
    bad = next(p for p in range(len(r.moves)) if p not in plies)
    with pytest.raises(NoEligiblePly):
        render_violation(game, "move-changed", seed=3, ply=bad)
    with pytest.raises(ValueError):
        render_violation(game, "illegal-move", seed=3, style=RenderStyle(use_clock=False))
    with pytest.raises(ValueError):
        render_violation(game, "no-such-thing", seed=3)


def _touched_square(r: RenderedGame) -> tuple[chess.Square, chess.Board]:
    ply = r.expected_alerts[0][1]
    lines = [line for line in ply_lines(r, ply) if line.get("ev") == "lift"]
    return chess.parse_square(lines[0]["sq"]), board_before(r, ply)


def _just_landed(board: chess.Board) -> set[chess.Square]:
    last = board.pop()
    landed = {last.to_square}
    if board.is_castling(last):
        landed.add(chess.square(3 if chess.square_file(last.to_square) < 4 else 5,
                                chess.square_rank(last.to_square)))
    board.push(last)
    return landed


def test_without_a_clock_the_enemy_touch_is_never_of_the_piece_just_moved() -> None:
    """Without a clock only its release ends a move, and a swap lands unseen: the piece
    just moved, lifted and put back, is its mover's hand as likely as the opponent's
    touch. A rendering stays readable: without a clock that piece is never the one
    touched; with a clock (the press ends the move) it may be."""
    touched_just_moved = {True: 0, False: 0}
    for seed, game in enumerate(engine_games()[:20]):
        for use_clock in (True, False):
            try:
                r = render_violation(game, "touch-move-enemy", seed=seed,
                                     style=RenderStyle(use_clock=use_clock))
            except NoEligiblePly:
                continue
            square, board = _touched_square(r)
            if board.move_stack and square in _just_landed(board):
                touched_just_moved[use_clock] += 1
    assert touched_just_moved[False] == 0
    assert touched_just_moved[True] > 0


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), game_index=st.integers(0, 299),
       code=st.sampled_from(VIOLATION_CODES))
@example(seed=177, game_index=267, code="knocked-during-move")  # (a mate, its knocked piece)
def test_violations_any_seed(seed, game_index, code):
    game = engine_games()[game_index]
    try:
        r = render_violation(game, code, seed=seed)
    except NoEligiblePly:
        return
    check_all(r)
    _check_violation(r, code, r.expected_alerts[0][1])


def test_a_piece_knocked_during_a_mating_last_move() -> None:
    """The class of the example above: the last move mates, and a press may not follow."""
    mating = [g for g in engine_games() if g.end().board().is_checkmate()][:20]
    rendered = 0
    for game in mating:
        last = len(list(game.mainline_moves())) - 1
        try:
            r = render_violation(game, "knocked-during-move", seed=last, ply=last)
        except NoEligiblePly:
            continue  # (nothing else of the mover's to knock)
        check_all(r)
        _check_violation(r, "knocked-during-move", last)  # (pressed or not: both may be)
        rendered += 1
    assert rendered >= 4, rendered


# -- command line -------------------------------------------------------------------------------


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pgn = GAMES_DIR / "classics.pgn"
    assert simulate_main([str(pgn), "--out", str(tmp_path / "a"), "--limit", "3"]) == 0
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == \
        ["0000.jsonl", "0001.jsonl", "0002.jsonl"]
    assert "wrote 3" in capsys.readouterr().out
    assert simulate_main([str(pgn), "--out", str(tmp_path / "b"), "--no-clock",
                          "--violation", "touch-move", "--seed", "5", "--limit", "2"]) == 0
    text = (tmp_path / "b" / "0001.jsonl").read_text()
    log = read_sensor_log(io.StringIO(text))
    assert log.errors == [] and log.events
    assert '"clock"' not in text
