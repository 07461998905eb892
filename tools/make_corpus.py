"""Build the test corpus of real engine games: tests/data/games/stockfish-300.pgn.

Stockfish plays both sides at varied skill levels from varied openings (random legal
plies or the first plies of an ECO line). A few per-game "quirks" steer the game
towards the special moves the board must handle (underpromotions, en passant,
queenside castling) by picking such a move whenever it is legal; every move is
still a legal move of a real game, which then goes on with the engine.

    python tools/make_corpus.py [--games 300] [--seed 1] [--out tests/data/games/stockfish-300.pgn]

Deterministic given the seed, except for engine timing (a time-limited search).
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
import chess.pgn

STOCKFISH = "/usr/games/stockfish"
ECO_PGN = "/usr/share/pgn-extract/eco.pgn"
MAX_PLIES = 250
UNDERPROMOTIONS = (chess.KNIGHT, chess.ROOK, chess.BISHOP)


@dataclass(frozen=True)
class Plan:
    """Everything random about one game, drawn up front from its seed."""

    index: int
    seed: int
    white_skill: int
    black_skill: int
    opening: tuple[str, ...]  # UCI moves
    underpromote: float  # chance to underpromote when a promotion is chosen
    hunt_ep: float  # chance to take en passant whenever legal
    prefer_long_castle: float  # chance to castle queenside whenever legal
    claim: bool  # stop at a claimable threefold / fifty-move position
    movetime: float


def load_eco_lines(path: str = ECO_PGN) -> list[list[str]]:
    """ECO lines as UCI move lists (only those with at least two plies)."""
    lines: list[list[str]] = []
    try:
        with open(path, encoding="latin-1") as fh:
            while (game := chess.pgn.read_game(fh)) is not None:
                moves = [m.uci() for m in game.mainline_moves()]
                if len(moves) >= 2 and not game.errors:
                    lines.append(moves)
    except FileNotFoundError:
        pass
    return lines


def random_opening(rng: random.Random, eco: list[list[str]]) -> tuple[str, ...]:
    plies = rng.randint(2, 6)
    if eco and rng.random() < 0.5:
        return tuple(rng.choice(eco)[:plies])
    board = chess.Board()
    moves: list[str] = []
    for _ in range(plies):
        move = rng.choice(sorted(board.legal_moves, key=chess.Move.uci))
        moves.append(move.uci())
        board.push(move)
    return tuple(moves)


def make_plan(index: int, seed: int, eco: list[list[str]]) -> Plan:
    rng = random.Random(seed * 100_003 + index)
    return Plan(
        index=index,
        seed=seed,
        white_skill=rng.randint(0, 20),
        black_skill=rng.randint(0, 20),
        opening=random_opening(rng, eco),
        underpromote=rng.choice((0.0, 0.0, 0.5, 1.0)),
        hunt_ep=rng.choice((0.0, 0.5, 1.0)),
        prefer_long_castle=rng.choice((0.0, 0.3, 1.0)),
        claim=rng.random() < 0.6,
        movetime=rng.choice((0.005, 0.01, 0.02)),
    )


def steer(board: chess.Board, move: chess.Move, plan: Plan, rng: random.Random) -> chess.Move:
    """Swap the engine's move for a legal special move when the plan asks for one."""
    legal = sorted(board.legal_moves, key=chess.Move.uci)
    ep = [m for m in legal if board.is_en_passant(m)]
    if ep and rng.random() < plan.hunt_ep:
        return rng.choice(ep)
    long_castle = [m for m in legal if board.is_queenside_castling(m)]
    if long_castle and rng.random() < plan.prefer_long_castle:
        return long_castle[0]
    if move.promotion == chess.QUEEN and rng.random() < plan.underpromote:
        return chess.Move(move.from_square, move.to_square, rng.choice(UNDERPROMOTIONS))
    return move


def finished(board: chess.Board, plan: Plan) -> tuple[str, str] | None:
    """(result, termination) if the game is over, else None."""
    outcome = board.outcome(claim_draw=False)
    if outcome is not None:
        return outcome.result(), outcome.termination.name.lower()
    if plan.claim and board.is_repetition(3):
        return "1/2-1/2", "threefold_repetition"
    if plan.claim and board.halfmove_clock >= 100:
        return "1/2-1/2", "fifty_moves"
    if board.ply() >= MAX_PLIES:
        return "*", "unterminated"
    return None


def play(plan: Plan, date: str) -> str:
    rng = random.Random(plan.seed * 7_919 + plan.index)
    board = chess.Board()
    for uci in plan.opening:
        board.push_uci(uci)
    skills = {chess.WHITE: plan.white_skill, chess.BLACK: plan.black_skill}
    with chess.engine.SimpleEngine.popen_uci(STOCKFISH) as engine:
        engine.configure({"Threads": 1, "Hash": 16})
        while (end := finished(board, plan)) is None:
            engine.configure({"Skill Level": skills[board.turn]})
            move = engine.play(board, chess.engine.Limit(time=plan.movetime)).move
            assert move is not None
            board.push(steer(board, move, plan, rng))
    result, _ = end
    game = chess.pgn.Game.from_board(board)
    game.headers["Event"] = "board_ctl corpus game"
    game.headers["Site"] = "board_ctl corpus"
    game.headers["Date"] = date
    game.headers["Round"] = str(plan.index + 1)
    game.headers["White"] = f"Stockfish 15.1 (skill {plan.white_skill})"
    game.headers["Black"] = f"Stockfish 15.1 (skill {plan.black_skill})"
    game.headers["Result"] = result
    game.headers["PlyCount"] = str(board.ply())
    game.headers["Termination"] = "unterminated" if result == "*" else "normal"
    return str(game)


def _play_job(args: tuple[Plan, str]) -> str:
    return play(*args)


def generate(games: int, seed: int, date: str, jobs: int) -> Iterator[str]:
    eco = load_eco_lines()
    plans = [make_plan(i, seed, eco) for i in range(games)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(_play_job, [(p, date) for p in plans])


def stats(paths: list[Path]) -> dict[str, int]:
    """Counts of what the board must handle, over every game of the files."""
    count: dict[str, int] = {}

    def bump(key: str, n: int = 1) -> None:
        count[key] = count.get(key, 0) + n

    for path in paths:
        with path.open(encoding="utf-8") as fh:
            while (game := chess.pgn.read_game(fh)) is not None:
                bump("games")
                bump("games with errors", bool(game.errors))
                board = game.board()
                for move in game.mainline_moves():
                    bump("plies")
                    colour = "white" if board.turn else "black"
                    if board.is_castling(move):
                        wing = "O-O" if board.is_kingside_castling(move) else "O-O-O"
                        bump(f"castles {colour} {wing}")
                    if board.is_en_passant(move):
                        bump("en passant")
                    if move.promotion:
                        bump("promotions")
                        bump(f"promotions to {chess.piece_symbol(move.promotion)}")
                        bump("capture-promotions", board.is_capture(move))
                    board.push(move)
                outcome = board.outcome(claim_draw=False)
                if outcome is not None:
                    end = outcome.termination.name.lower()
                elif board.is_repetition(3):
                    end = "threefold (claim)"
                elif board.halfmove_clock >= 100:
                    end = "fifty moves (claim)"
                else:
                    end = "unfinished"
                bump(f"end {end}")
    return dict(sorted(count.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--date", default=dt.date.today().strftime("%Y.%m.%d"))
    ap.add_argument("--out", type=Path, default=Path("tests/data/games/stockfish-300.pgn"))
    ap.add_argument("--stats", type=Path, nargs="+", metavar="PGN", help="only print counts")
    args = ap.parse_args(argv)
    if args.stats:
        for key, value in stats(args.stats).items():
            print(f"{key:28} {value}")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for n, text in enumerate(generate(args.games, args.seed, args.date, args.jobs), 1):
            fh.write(text + "\n\n")
            if n % 25 == 0:
                print(f"{n} games", file=sys.stderr)
    print(f"wrote {args.games} games to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
