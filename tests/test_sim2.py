"""board_ctl against sim2, a second, independent sensor-log simulator (tests/sim2.py).

Real games (the repository's corpus, plus Stockfish games generated for this module and
embedded below, that nobody tuned against) are rendered as a human would play them at
the board, with the contact bounce, slide blips, capture and castling orders, clock
habits and promotion handling that docs/sensor-log.md allows, and replayed
through `board_ctl.replay`. A clean game must give exactly its moves, no alert at all
and its result; a scripted violation must give the alert code the spec names.

Three kinds of test:

* `test_clean` / `test_violation`: hard assertions. A failure here is a defect unless
  the category says otherwise.
* `test_judgement`: behaviours where the spec leaves room (named in each reason). They
  assert what sim2's author reads the spec as saying and are marked `xfail(strict=False)`
  so that the suite reports them without hiding them: an XFAIL line is the product
  disagreeing with that reading, an XPASS line is agreement. Once the product agrees,
  the judgement is held (JUDGEMENT_HELD, "Judgement, now held"): asserted hard.
* `test_scenario`: short hand-written logs, the minimal reproductions of the failure
  classes sim2 found, each with the rule it rests on.

Where the product legitimately cannot know (see sim2.CLOCK_ONLY, and the push-off
captures that sim2 only generates when there is one legal capture from the square),
nothing is asserted.
"""

from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest

from board_ctl.core.profiles import PROFILES
from board_ctl.replay import replay_log
from board_ctl.sensorlog import read_sensor_log

from corpus import has_move
from sim2 import NotApplicable, Case, expected_in_profile, render_case

GAMES_DIR = Path(__file__).parent / "data" / "games"

# Fresh Stockfish games (random 2-8 ply openings, skill 1-20, 10 ms a move), generated
# for sim2 and not part of the corpus anyone tuned the product against.
FRESH_PGN = """
[Event "sim2 fresh 4"]
[Result "*"]

1. c3 d5 2. g3 c5 3. Nf3 Nf6 4. Bg2 Bf5 5. d4 Nc6 6. dxc5 a5 7. Bg5 e5 8. Bxf6
gxf6 9. Nbd2 Be6 10. Nh4 f5 11. Bh3 f4 12. Bxe6 fxe6 13. e4 fxe3 14. fxe3 Qg5
15. e4 Bxc5 16. Nhf3 Qh6 17. Qe2 a4 18. exd5 exd5 19. Nxe5 O-O 20. O-O-O Rae8
21. Qg4+ Kh8 22. Nxc6 Re4 23. Qd7 bxc6 24. Rhf1 a3 25. Kb1 Re6 26. bxa3 Qg6+
27. Ka1 Re2 28. Rxf8+ Bxf8 29. Qd8 Re8 30. Qb6 Bg7 31. Nb1 Qc2 32. Qb3 Qf2 33.
a4 d4 34. Qb2 Qf3 35. Rxd4 Bxd4 36. cxd4 h6 37. d5+ Kg8 38. d6 Qd5 39. Qb3 Kf7
40. d7 Rf8 41. a5 Ke7 42. d8=Q+ Kxd8 43. Qb6+ Kd7 44. Nc3 Qc4 45. Kb2 Rf3 46.
Qb7+ Kd8 47. Qb8+ Ke7 48. Qb7+ Kf6 49. Qb3 Qd4 50. a3 Qf2+ 51. Qc2 Qd4 52. Kb3
Kg7 53. a6 Qb6+ 54. Kc4 Qxa6+ 55. Kd4 Qxa3 56. Kc4 Qa6+ 57. Kc5 Qa5+ 58. Kc4
Rf5 59. Kb3 Qb6+ 60. Kc4 Qc5+ 61. Kb3 Qb6+ 62. Kc4 Qc5+ 63. Kb3 *

[Event "sim2 fresh 6"]
[Result "1-0"]

1. f4 f5 2. g3 b6 3. a4 d6 4. b4 a6 5. a5 e5 6. e3 b5 7. Nf3 c5 8. fxe5 cxb4 9.
c4 bxc3 10. Nxc3 dxe5 11. Nxe5 Nf6 12. Qf3 Ra7 13. Nxb5 Rb7 14. Nc6 Qd5 15.
Qxd5 Nxd5 16. Nbd4 Nxc6 17. Nxc6 Rc7 18. Nd4 Bb4 19. Kd1 Kf7 20. Bg2 Bb7 21.
Rg1 g6 22. Ra4 Rhc8 23. Bb2 Bf8 24. e4 Nb4 25. exf5 Nd3 26. Ba1 Rc1+ 27. Ke2
Bxg2 28. Rxg2 Nc5 29. Ra3 Re8+ 30. Kf3 Rf1+ 31. Kg4 gxf5+ 32. Kh5 Ne4 33. Ra2
Rd8 34. d3 Nf6+ 35. Kg5 h6+ 36. Kh4 Rxa1 37. Nc6 Rd6 38. Ne5+ Ke6 39. Rxa1 Rd4+
40. Kh3 Kxe5 41. Re1+ Kd5 42. Rf2 f4 43. Rxf4 Rxf4 44. gxf4 Bb4 45. Re2 Bd6 46.
Rb2 Bc7 47. Rb7 Kc6 48. Ra7 Bxa5 49. Rxa6+ Bb6 50. Kg3 Kb7 51. Ra3 Kc6 52. Ra8
Bd4 53. Rd8 Nd5 54. Kf3 Bc3 55. Ra8 h5 56. Ra6+ Kc5 57. Ke4 Nf6+ 58. Kf5 Ne8
59. Kg6 Kd4 60. h4 Nc7 61. Ra4+ Kxd3 62. Kxh5 Nd5 63. f5 Ke3 64. Kg5 Bf6+ 65.
Kg6 Bb2 66. Ra2 Bh8 67. h5 Ke4 68. Re2+ Kf3 69. Re8 Bb2 70. h6 Kg4 71. Re4+ Kf3
72. Rc4 Nf6 73. Rc7 Ng4 74. f6 Ne5+ 75. Kh5 Nd3 76. f7 Nf4+ 77. Kg5 Ne6+ 78.
Kf5 Nd4+ 79. Kf6 Nc6+ 80. Kf5 Nd4+ 81. Kg6 Ne6 82. Rc8 Kg4 83. Rc4+ Kh3 84. Kf5
Nd4+ 85. Rxd4 Bxd4 86. f8=Q Kg2 87. Qb4 Ba1 88. Qe4+ Kf2 89. Qf4+ Kg2 90. Qe4+
Kh2 91. Qc2+ Kh3 92. Qb3+ Bc3 93. Qxc3+ Kg2 94. Qc5 Kf3 95. Qd4 Kg2 96. h7 Kh1
97. Qg4 Kh2 98. h8=R# 1-0

[Event "sim2 fresh 9"]
[Result "*"]

1. b3 Nh6 2. h4 g6 3. Bb2 Rg8 4. c4 c5 5. e3 Nc6 6. Nf3 d6 7. Nc3 Bg4 8. Be2
Bg7 9. Ng5 Bxe2 10. Qxe2 Rh8 11. O-O-O Qd7 12. h5 O-O-O 13. Nf3 e5 14. Ng5 f6
15. Nh3 Rhf8 16. Rdg1 f5 17. hxg6 hxg6 18. f3 Ng8 19. g4 Nf6 20. Qg2 fxg4 21.
fxg4 Nb4 22. g5 Ne8 23. a3 Nd3+ 24. Kc2 Nxb2 25. Kxb2 Nc7 26. Nf2 d5 27. cxd5
e4 28. Nxe4 Nxd5 29. Rd1 Qc6 30. Rhf1 Nxc3 31. Qg4+ Kc7 32. dxc3 Rxd1 33. Rxd1
Be5 34. a4 a6 35. Nd2 b5 36. Qe2 Rd8 37. Rf1 Qd5 38. Kc2 bxa4 39. Nc4 Qe4+ 40.
Kb2 axb3 41. Rf7+ Kb8 42. Kxb3 Rd3 43. Rf8+ Kc7 44. Rf7+ Kd8 45. Nxe5 Qb4+ 46.
Ka2 Qa5+ 47. Kb1 Qb5+ 48. Ka2 Qa4+ 49. Kb2 Qb5+ 50. Ka2 Qa4+ 51. Kb2 Qb5+ 52.
Ka2 *

[Event "sim2 fresh 12"]
[Result "0-1"]

1. a4 a5 2. Ra2 Ra6 3. f4 Re6 4. b3 d5 5. e3 Nc6 6. c3 g5 7. fxg5 Rg6 8. d4 e5
9. dxe5 Nxe5 10. e4 Rd6 11. exd5 Rxd5 12. Rd2 Rxd2 13. Nxd2 Qe7 14. Qe2 Nd3+
15. Kd1 Qxe2+ 16. Bxe2 Nf2+ 17. Ke1 Nxh1 18. Bb2 Ne7 19. c4 Rg8 20. Bf3 Bf5 21.
g4 Rxg5 22. Nh3 Rxg4 23. Bxg4 Bxg4 24. Ng1 Nf5 25. Ne4 Be7 26. Nf6+ Bxf6 27.
Bxf6 Kd7 28. Bc3 Nd6 29. Bd2 b6 30. Ne2 Bf3 31. Bc1 h5 32. Kf1 Ne4 33. Be3 c5
34. Nc1 Ke6 35. Nd3 Bd1 36. Nc1 Nf6 37. Nd3 Kf5 38. Nc1 Bc2 39. Ne2 Ke4 40. Bf4
Bxb3 41. Bc7 Nd7 42. Kg2 Kd3 43. Nf4+ Kc3 44. Kf3 Bxa4 45. Ke3 Nf2 46. Kxf2 Bb3
47. h4 Kxc4 48. Bd8 a4 49. Nxh5 a3 50. Ke3 a2 51. Nf4 Bd1 52. h5 a1=Q 53. Ne2
Qe5+ 54. Kf3 Qxe2+ 55. Kg3 Qg4+ 56. Kf2 Qe2+ 57. Kg3 Qf3+ 58. Kh4 f6 59. Bc7
Nf8 60. Bf4 b5 61. Bh2 Ng6+ 62. hxg6 Qg2 63. Bf4 b4 64. g7 Qg4# 0-1

[Event "sim2 fresh 16"]
[Result "0-1"]

1. h4 c5 2. e4 Nc6 3. c3 Nf6 4. Qc2 e5 5. Ne2 c4 6. d4 cxd3 7. Qxd3 d5 8. exd5
Nxd5 9. g3 Be7 10. Na3 Bxa3 11. g4 Be7 12. Bd2 Nb6 13. Qxd8+ Kxd8 14. Ng3 Bxg4
15. f3 Bxf3 16. Bh6 Kc7 17. Rh2 Rhd8 18. Nf5 Bg4 19. h5 gxh6 20. Nxe7 a6 21.
Rf2 Rf8 22. Bg2 Nxe7 23. a4 Nd7 24. Bf3 f5 25. O-O-O Rae8 26. Rg1 Rf6 27. Rd1
e4 28. Rfd2 Bxf3 29. Rxd7+ Kb6 30. a5+ Kc6 31. c4 f4 32. R1d5 e3 33. Rd3 Be2
34. b3 Bxd3 35. Rxd3 Nf5 36. Rd2 exd2+ 37. Kxd2 f3 38. Kd3 Re3+ 39. Kd2 Rd6+
40. Kc1 f2 41. Kb2 Rd2+ 42. Ka1 f1=Q# 0-1

[Event "sim2 fresh 17"]
[Result "1-0"]

1. Na3 a5 2. h4 Nc6 3. d4 Nf6 4. Nb5 e6 5. Bf4 d6 6. e3 Be7 7. Nf3 O-O 8. Be2
Ng4 9. Bg3 a4 10. a3 f5 11. h5 Na5 12. Nc3 Bd7 13. b4 axb3 14. cxb3 Qe8 15. b4
Nc6 16. b5 Na5 17. a4 Kh8 18. O-O g5 19. Ne1 Nf6 20. Nd3 g4 21. Nf4 Nxh5 22.
Nxh5 Qxh5 23. Rc1 Rac8 24. Bd3 Rf6 25. Bf4 Rg6 26. g3 Bg5 27. Bxg5 Qxg5 28. Kg2
Qf6 29. Bb1 Rg7 30. Ba2 b6 31. Qd2 Re7 32. Rfe1 h5 33. e4 Kg7 34. exf5 Kh8 35.
fxe6 Bxe6 36. Bxe6 Rxe6 37. Rxe6 Qxe6 38. Qg5 Rg8 39. Qxh5+ Kg7 40. Nd5 c6 41.
bxc6 Rf8 42. Qg5+ Qg6 43. Qxg6+ Kxg6 44. c7 Kf5 45. Re1 Nc6 46. Nxb6 Na7 47. a5
Kg5 48. Re3 Rh8 49. Re1 Kf5 50. Re7 Kg5 51. Nd5 Rf8 52. Rd7 Kf5 53. Rd8 Rxd8
54. cxd8=R Ke4 55. Rxd6 Kxd4 56. Rd7 Nc6 57. Nb4+ Kc5 58. Nxc6 Kxc6 59. a6 Kxd7
60. a7 Ke6 61. a8=Q Kf6 62. Qe8 Kg7 63. Qe6 Kf8 64. Qxg4 Kf7 65. Qf4+ Kg8 66.
g4 Kh8 67. Qc7 Kg8 68. g5 Kh8 69. g6 Kg8 70. Qf7+ Kh8 71. Qh7# 1-0

[Event "sim2 fresh 27"]
[Result "1/2-1/2"]

1. Nc3 e6 2. a4 a6 3. Ra2 h6 4. d4 b6 5. Nf3 Bb7 6. e3 Nf6 7. Be2 d5 8. Nb1
Nbd7 9. Nbd2 c5 10. O-O Rc8 11. b3 Qc7 12. dxc5 bxc5 13. c4 Rd8 14. Bb2 d4 15.
exd4 cxd4 16. Bxd4 e5 17. Ba1 Bb4 18. Rc2 Ne4 19. Nxe4 Bxe4 20. Ra2 f6 21. Qc1
a5 22. Bc3 O-O 23. Qe3 Nc5 24. Re1 Qb8 25. Rd2 Bxc3 26. Qxc3 Bc6 27. Rb2 e4 28.
Nd4 Qe5 29. Nb5 Qg5 30. Qe3 Nd3 31. Bxd3 Rxd3 32. Qxg5 hxg5 33. Na7 Bb7 34. Rc2
Kh7 35. c5 Ra8 36. Nb5 Bc6 37. g4 Bd5 38. c6 Bxb3 39. Rc5 Bxa4 40. Nc3 Rd4 41.
Rb1 Rc8 42. Rb6 Re8 43. Rxa5 Bxc6 44. Rxc6 e3 45. Ra2 Rxg4+ 46. Kf1 exf2 47.
Rxf2 Rd4 48. Rc7 Kg6 49. Ra2 Rh8 50. Rc5 Rdh4 51. Rc7 Rxh2 52. Rxh2 Rxh2 53.
Nd5 Rd2 54. Ne7+ Kh5 55. Nf5 Rd5 56. Ng3+ Kh4 57. Ne4 Rd4 58. Nc3 Kh5 59. Rxg7
Kg4 60. Ra7 Kh5 61. Ke2 Kg6 62. Ra8 Rd7 63. Ra5 Re7+ 64. Kd2 Kg7 65. Nd5 Rd7
66. Ke3 Rb7 67. Ra4 f5 68. Nb4 f4+ 69. Ke2 g4 70. Nd3 f3+ 71. Ke3 Kg6 72. Re4
f2 73. Kxf2 Kf6 74. Rxg4 Ra7 75. Ra4 Rxa4 76. Kf3 Kg5 77. Nc5 Kf5 78. Ke3 Rc4
79. Nb7 Re4+ 80. Kd2 Rd4+ 81. Kc2 Rc4+ 82. Kd3 Ke5 83. Kxc4 1/2-1/2

[Event "sim2 fresh 29"]
[Result "1-0"]

1. c4 g5 2. d4 Nc6 3. d5 Ne5 4. e4 e6 5. Nc3 d6 6. Be2 h5 7. Be3 g4 8. f4 gxf3
9. Nxf3 Bh6 10. Qc1 Nxf3+ 11. Bxf3 Qh4+ 12. g3 Qd8 13. e5 exd5 14. O-O d4 15.
Bxh6 Nxh6 16. Nd5 Kf8 17. Qf4 c6 18. Rae1 cxd5 19. e6 dxc4 20. Bd5 Qb6 21. e7+
Ke8 22. Bxf7+ Kd7 23. e8=R d3+ 24. Rf2 Rxe8 25. Bxe8+ Kc7 26. Qxh6 a5 27. Qf4
Kb8 28. Bf7 a4 29. Re8 Ra5 30. Be6 Ka7 31. Rxc8 h4 32. gxh4 Rc5 33. Rxc5 dxc5
34. Bxc4 Qg6+ 35. Kf1 Qa6 36. Qb8+ Kxb8 37. Rf8+ Kc7 38. Rf7+ Kc6 39. Rf6+ Kd7
40. Bxa6 bxa6 41. Ke1 a3 42. b4 c4 43. Rxa6 Kc7 44. b5 Kb8 45. h5 c3 46. Rc6 c2
47. Kd2 c1=Q+ 48. Kxc1 d2+ 49. Kc2 d1=N 50. Kxd1 Ka7 51. Kc1 Kb7 52. Kc2 Ka7
53. h6 Kb7 54. h7 Kb8 55. Kc1 Kb7 56. Kd2 Ka7 57. h8=Q Kb7 58. Qg7+ Ka8 59.
Qg8+ Ka7 60. Qh7+ Kb8 61. Qh8+ Kb7 62. Qc8+ Ka7 63. b6# 1-0

[Event "sim2 fresh 32"]
[Result "0-1"]

1. b4 Nh6 2. d4 Na6 3. h4 Nb8 4. f4 a5 5. b5 d5 6. c4 Bg4 7. cxd5 e6 8. dxe6
Bb4+ 9. Bd2 Bxe6 10. Nf3 c5 11. bxc6 bxc6 12. Ng5 Nf5 13. Bxb4 axb4 14. h5 O-O
15. h6 Qxd4 16. Qxd4 Nxd4 17. Kd1 Rd8 18. e3 Nb3+ 19. Bd3 Bg4+ 20. Ke1 Rxd3 21.
Rh4 Rd1+ 22. Kf2 Nxa1 23. hxg7 Rxa2+ 24. Kg3 Bf5 25. Nxh7 Bxh7 26. Rxh7 Kxh7
27. g8=R Na6 28. Ra8 Kg7 29. Re8 Rxb1 30. Re7 Nc2 31. Rd7 Rf1 32. e4 Ra3+ 33.
Kg4 Ne3+ 34. Kh3 Nc5 35. Rd3 Nxd3 36. f5 Nf2+ 37. Kh2 Neg4# 0-1

[Event "sim2 fresh 35"]
[Result "0-1"]

1. Nc3 g5 2. d4 h6 3. h4 gxh4 4. e4 d6 5. Be3 Nc6 6. Qd2 Nf6 7. d5 Ne5 8. Bd4
h5 9. f4 Bh6 10. Nf3 Ng6 11. Ng5 c5 12. dxc6 e5 13. cxb7 Bxb7 14. Bb5+ Kf8 15.
Bf2 Nxf4 16. Bxh4 Rg8 17. g3 Rxg5 18. gxf4 Rg4 19. Bxf6 Qxf6 20. Nd5 Bxd5 21.
Qxd5 Qxf4 22. Rf1 Qe3+ 23. Be2 Rf4 24. Qxa8+ Kg7 25. Rh1 Rxe4 26. Qxe4 Qxe4 27.
Rxh5 Qe3 28. Rh1 Bg5 29. Kf1 d5 30. c3 Qg3 31. Rg1 Qh3+ 32. Ke1 Kf6 33. Rf1+
Kg7 34. Rf3 Qh2 35. Kd1 Qg1+ 36. Kc2 Qxa1 37. Rg3 Kf6 38. Rxg5 Qh1 39. Kb3 Kxg5
40. Kc2 d4 41. Kd2 e4 42. a4 f5 43. c4 Qh2 44. Kc2 Qxe2+ 45. Kc1 d3 46. Kb1
Qe1+ 47. Ka2 d2 48. Ka3 d1=Q 49. b4 Qa1+ 50. Kb3 Qec3# 0-1

[Event "sim2 fresh 44"]
[Result "*"]

1. c4 a6 2. c5 g6 3. b4 a5 4. b5 Bg7 5. Nc3 d6 6. cxd6 cxd6 7. g3 Nd7 8. Bg2
Nb6 9. Nf3 d5 10. a4 e5 11. e3 Bf5 12. O-O Bd3 13. Re1 e4 14. Nd4 h5 15. Ba3
Ne7 16. Nce2 Bxe2 17. Rxe2 Rc8 18. d3 exd3 19. Rd2 O-O 20. Rxd3 Rc4 21. Ra2 Qc7
22. Bxe7 Qxe7 23. h4 Rd8 24. Ne2 Qc5 25. Kh2 Be5 26. f4 Bc3 27. f5 Be5 28. Nf4
Kh7 29. Rad2 Kh6 30. fxg6 fxg6 31. Ne6 Qd6 32. Nf4 Qc5 33. Ne6 Qd6 34. Nf4 Qc5
35. Ne6 Qd6 *

[Event "sim2 fresh 52"]
[Result "1-0"]

1. g3 c6 2. f3 Nf6 3. e4 e5 4. d4 exd4 5. Qxd4 Be7 6. e5 Nd5 7. Ne2 Na6 8. Nbc3
Nxc3 9. Nxc3 Nb4 10. Qe4 O-O 11. Bf4 Bc5 12. O-O-O d5 13. exd6 Re8 14. Be5 Be6
15. Bd3 g6 16. Qf4 Bxa2 17. d7 Qxd7 18. Ne4 Nd5 19. Bc4 Rxe5 20. Bxd5 Rxe4 21.
Bxe4 Qe7 22. Rhe1 Be6 23. h4 h5 24. g4 hxg4 25. h5 Bf2 26. hxg6 Bxe1 27. Rxe1
fxg6 28. Bxg6 Rf8 29. Bf5 Rxf5 30. Qxf5 Bxf5 31. Rxe7 gxf3 32. Re3 Bg4 33. Re4
Bh3 34. Rf4 Bg2 35. Kd1 a5 36. Ke1 Kg7 37. Kf2 Kg8 38. Rf5 a4 39. c4 Bh1 40.
Rf4 Bg2 41. c5 Kg7 42. Rxa4 Kf6 43. Ra7 Ke6 44. b4 Kd5 45. Rxb7 Kd4 46. Rb8 Kc4
47. Ke3 Kb3 48. Rb7 Kc4 49. Rb6 Kc3 50. b5 cxb5 51. Rh6 b4 52. Kf2 Bf1 53. Kxf1
Kd3 54. c6 b3 55. Rd6+ Ke3 56. c7 Kf4 57. c8=Q b2 58. Qc2 b1=B 59. Qxb1 f2 60.
Qb2 Kf3 61. Qc3+ Kg4 62. Kxf2 Kf4 63. Qc4+ Ke5 64. Ra6 Kf5 65. Rd6 Ke5 66. Rc6
Kf5 67. Re6 Kg5 68. Kg3 Kf5 69. Qe4+ Kg5 70. Qe5# 1-0
"""


@cache
def corpus() -> tuple[chess.pgn.Game, ...]:
    games: list[chess.pgn.Game] = []
    for name in ("stockfish-300.pgn", "classics.pgn"):
        with (GAMES_DIR / name).open(encoding="utf-8") as fh:
            while (game := chess.pgn.read_game(fh)) is not None:
                games.append(game)
    stream = io.StringIO(FRESH_PGN)
    while (game := chess.pgn.read_game(stream)) is not None:
        assert not game.errors
        games.append(game)
    return tuple(games)


def with_feature(pred) -> list[int]:
    return [gi for gi, game in enumerate(corpus()) if has_move(game, pred)]


def sample(indices: list[int], n: int, salt: str) -> list[int]:
    """A fixed sample (same on every run), always including the fresh games when asked."""
    rng = random.Random(salt)
    return sorted(rng.sample(indices, min(n, len(indices))))


@dataclass
class Outcome:
    moves: list[str]
    codes: set[str]
    alerts: list[dict[str, Any]]
    result: tuple[str, str] | None


def replay(lines: list[dict[str, Any]], profile: str = "fide") -> Outcome:
    text = "".join(json.dumps(obj) + "\n" for obj in lines)
    log = read_sensor_log(io.StringIO(text))
    assert log.errors == [], log.errors
    record = replay_log(log, PROFILES[profile])
    alerts = [line for line in record.report if line["kind"] == "alert"]
    result = (record.result.result, record.result.termination) if record.result else None
    return Outcome([m.move.uci() for m in record.moves], {a["code"] for a in alerts}, alerts,
                   result)


def problems(case: Case, out: Outcome, profile: str = "fide") -> list[str]:
    """What the product got wrong in this case (empty: nothing)."""
    found = []
    moves, result = expected_in_profile(case, profile)
    if case.moves_exact:
        if out.moves != moves:
            n = next((i for i, (a, b) in enumerate(zip(out.moves, moves)) if a != b),
                     min(len(out.moves), len(moves)))
            found.append(f"ply {n + 1}: got {out.moves[n:n + 2]} want {moves[n:n + 2]} "
                         f"({len(out.moves)} plies, want {len(moves)})")
        if out.result != result:
            found.append(f"result {out.result}, want {result}")
    elif out.moves[: len(moves)] != moves:
        found.append(f"moves before the violation differ: {out.moves[:len(moves)][-3:]} "
                     f"want {moves[-3:]}")
    missing = case.alerts - out.codes
    extra = out.codes - case.alerts - case.tolerated
    if missing:
        found.append(f"missing alert {sorted(missing)}")
    if extra:
        first = next(a for a in out.alerts if a["code"] in extra)
        found.append(f"unexpected alert {first['code']} at t={first['t']} on {first['squares']}")
    return found


def run_category(indices: list[int], seeds: tuple[int, ...], profile: str = "fide",
                 **knobs: Any) -> tuple[int, list[str]]:
    ran, failures = 0, []
    for gi in indices:
        game = corpus()[gi]
        nplies = len(list(game.mainline_moves()))
        for seed in seeds:
            kn = dict(knobs)
            rng = random.Random(gi * 7919 + seed)
            if kn.get("start_ply") == "random":
                if nplies < 12:
                    continue
                kn["start_ply"] = rng.randrange(4, nplies - 4)
            if kn.get("max_plies") == "random":
                if nplies < 6:
                    continue
                kn["max_plies"] = rng.randrange(4, nplies - 1)
            plies: list[int | None] = [None]
            if "violation" in kn:
                start = rng.randrange(2, max(3, nplies - 1))
                plies = list(range(start, nplies)) + list(range(2, start))
                if kn["violation"] == "rook-first-castle":
                    board, plies = game.board(), []
                    for i, move in enumerate(game.mainline_moves()):
                        if board.is_castling(move):
                            plies.append(i)
                        board.push(move)
            for ply in plies:
                if ply is not None:
                    kn["violation_ply"] = ply
                try:
                    case = render_case(game, gi * 1000 + seed, **kn)
                except NotApplicable:
                    continue
                ran += 1
                found = problems(case, replay(case.lines, profile), profile)
                if found:
                    failures.append(f"game {gi} seed {seed} {kn.get('violation_ply', '')}: "
                                    + "; ".join(found))
                break
    return ran, failures


# -- what a human does at the board ------------------------------------------------------

QUIET = dict(bounce_p=0.0, slide_p=0.0, long_hold_p=0.0, retouch_p=0.0, immovable_touch_p=0.0,
             touchdown_p=0.0, declined_offer_p=0.0,
             capture_styles={"victim_first": 1, "attacker_first": 1},
             castle_styles={"one_hand": 1}, promo_styles={"direct": 1},
             selector_timings=("before",))
NOISY = dict(bounce_p=0.5, slide_p=0.3, long_hold_p=0.03, retouch_p=0.03,
             immovable_touch_p=0.02, touchdown_p=0.03, touchdown_s=(0.1, 0.45),
             declined_offer_p=0.01,
             capture_styles={"victim_first": 3, "attacker_first": 3, "swap_blip": 1,
                             "swap_never": 1},
             castle_styles={"one_hand": 1, "both_lifted": 1},
             promo_styles={"direct": 1, "swap": 1},
             selector_timings=("before", "during", "after"))


def _all() -> list[int]:
    return list(range(len(corpus())))


def _fresh() -> list[int]:
    return list(range(len(corpus()) - FRESH_PGN.count("[Event"), len(corpus())))


def _caps() -> list[int]:
    return with_feature(lambda b, m: b.is_capture(m))


def _castles() -> list[int]:
    return with_feature(lambda b, m: b.is_castling(m))


def _eps() -> list[int]:
    return with_feature(lambda b, m: b.is_en_passant(m))


def _promos() -> list[int]:
    return with_feature(lambda b, m: bool(m.promotion))


def _threefold() -> list[int]:
    found = []
    for gi, game in enumerate(corpus()):
        board = game.board()
        for move in game.mainline_moves():
            board.push(move)
            if board.is_repetition(3) and board.outcome() is None:
                found.append(gi)
                break
    return found


def _cut_at_threefold(gi: int) -> int:
    board = corpus()[gi].board()
    for n, move in enumerate(corpus()[gi].mainline_moves()):
        board.push(move)
        if board.is_repetition(3) and board.outcome() is None:
            return n + 1
    raise AssertionError


# (id, games, how many, seeds, profile, knobs)
CLEAN = [
    ("fresh-games-noisy", _fresh, 12, (0, 1, 2), "fide", NOISY),
    ("corpus-noisy-mixed-clock", _all, 40, (0,), "fide", NOISY),
    ("no-clock-noisy", _all, 25, (0,), "fide", dict(NOISY, clock=False)),
    ("bounce-everywhere", _all, 15, (0,), "fide", dict(QUIET, bounce_p=1.0)),
    ("slides-20-90ms-blips", _all, 20, (0,), "fide", dict(QUIET, slide_p=0.8, bounce_p=0.5)),
    ("slides-tight-gaps", _all, 15, (0,), "fide",
     dict(QUIET, slide_p=0.8, bounce_p=1.0, slide_gap_ms=(1.0, 15.0))),
    ("long-holds-3-30s", _all, 12, (0,), "fide", dict(QUIET, long_hold_p=0.3)),
    ("press-50-150ms-after", _all, 12, (0,), "fide",
     dict(QUIET, clock=True, press_delay_s=(0.05, 0.15))),
    ("press-2-3s-after", _all, 10, (0,), "fide", dict(QUIET, clock=True, press_delay_s=(2.0, 3.0))),
    ("skew-press-50-250ms-before-placement", _all, 25, (0,), "fide",
     dict(QUIET, clock=True, skew_p=1.0, skew_ms=(50.0, 250.0))),
    ("skew-with-slides-and-bounce", _all, 15, (0,), "fide",
     dict(QUIET, clock=True, skew_p=0.5, slide_p=0.5, bounce_p=0.5)),
    ("captures-victim-first", _caps, 12, (0,), "fide",
     dict(QUIET, capture_styles={"victim_first": 1}, victim_pause_s=(0.1, 4.0))),
    ("captures-attacker-first", _caps, 12, (0,), "fide",
     dict(QUIET, capture_styles={"attacker_first": 1})),
    ("captures-swap-blip-2-40ms", _caps, 12, (0,), "fide",
     dict(QUIET, capture_styles={"swap_blip": 1}, bounce_p=0.5)),
    ("captures-push-off-never-empty", _caps, 12, (0,), "fide",
     dict(QUIET, capture_styles={"swap_never": 1})),
    ("captures-no-clock", _caps, 15, (0,), "fide",
     dict(QUIET, clock=False, capture_styles={"victim_first": 1, "attacker_first": 1,
                                              "swap_blip": 1, "swap_never": 1})),
    ("castling-king-first-one-hand", _castles, 12, (0,), "fide",
     dict(QUIET, castle_styles={"one_hand": 1}, slide_p=1.0, bounce_p=0.7)),
    ("castling-both-lifted", _castles, 12, (0, 1), "fide",
     dict(QUIET, castle_styles={"both_lifted": 1}, slide_p=0.5, bounce_p=0.7)),
    ("castling-rook-within-30ms-first", _castles, 10, (0,), "fide",
     dict(QUIET, castle_styles={"near_simultaneous": 1})),
    ("en-passant-every-order", _eps, 15, (0, 1), "fide",
     dict(QUIET, ep_orders=("VFT", "FVT", "FTV"), bounce_p=0.5)),
    ("en-passant-no-clock", _eps, 10, (0,), "fide",
     dict(QUIET, clock=False, ep_orders=("VFT", "FVT", "FTV"))),
    ("promotion-direct-and-swap", _promos, 20, (0, 1), "fide",
     dict(QUIET, clock=True, promo_styles={"direct": 1, "swap": 1},
          selector_timings=("before", "during", "after", "very_late"),
          capture_styles={"victim_first": 1, "attacker_first": 1, "swap_blip": 1})),
    # a selector 50-200 ms behind the press counts: within the press's grace (README)
    ("promotion-selector-50-200ms-after-press", _promos, 12, (0, 1), "fide",
     dict(QUIET, clock=True, promo_styles={"direct": 1, "swap": 1}, selector_timings=("late",))),
    ("promotion-no-clock", _promos, 15, (0,), "fide",
     dict(QUIET, clock=False, promo_styles={"direct": 1, "swap": 1},
          selector_timings=("before", "during", "after"))),
    ("fast-replies-after-the-press", _all, 20, (0,), "fide",
     dict(QUIET, clock=True, think_s=(0.05, 0.4))),
    ("mid-game-fen-start", _all, 15, (0,), "fide", dict(NOISY, start_ply="random")),
    ("mate-without-press", _all, 10, (0,), "fide", dict(QUIET, clock=True, mate_clock_p=0.0)),
    ("agreement", _all, 10, (0,), "fide", dict(QUIET, ending="agree", max_plies="random")),
    ("resignation-by-either-side", _all, 10, (0, 1), "fide",
     dict(QUIET, ending="resign-mover", max_plies="random")),
    ("threefold-claimed-after", _threefold, 8, (0,), "fide", dict(QUIET, ending="auto")),
    ("declined-offers-retouch-immovable-short", _all, 12, (0,), "fide",
     dict(QUIET, declined_offer_p=0.1, retouch_p=0.15, immovable_touch_p=0.1)),
    ("profile-rapid", _all, 8, (0,), "rapid", NOISY),
    ("profile-blitz", _all, 8, (0,), "blitz", NOISY),
    ("profile-casual", _all, 10, (0,), "casual", dict(NOISY, blip_ms=(20.0, 75.0))),
    # a slid piece closing the next square's switch before its own opens (a magnet
    # straddling two squares)
    ("slides-overlapping-no-clock", _all, 15, (0,), "fide",
     dict(QUIET, slide_p=0.8, overlap_p=1.0, clock=False)),
    ("slides-overlapping-clock", _all, 15, (0,), "fide",
     dict(QUIET, slide_p=0.8, overlap_p=1.0, clock=True)),
    ("time-control-in-start-line", _all, 8, (0,), "fide",
     dict(QUIET, clock=True, time_control="5400+30", bounce_p=0.5)),
]


@pytest.mark.slow
@pytest.mark.parametrize("cid,games,n,seeds,profile,knobs", CLEAN, ids=[c[0] for c in CLEAN])
def test_clean(cid, games, n, seeds, profile, knobs) -> None:
    indices = games()
    if cid == "threefold-claimed-after":
        ran, failures = 0, []
        for gi in sample(indices, n, cid):
            r, f = run_category([gi], seeds, profile, **dict(knobs, max_plies=_cut_at_threefold(gi)))
            ran, failures = ran + r, failures + f
    else:
        ran, failures = run_category(sample(indices, n, cid), seeds, profile, **knobs)
    assert ran > 0, "no case could be rendered"
    assert not failures, f"{len(failures)} of {ran} clean games wrong:\n" + "\n".join(failures[:8])


VIOLATIONS = [
    # (kind, clock): each must raise the code sim2.VIOLATIONS names
    ("touch-own", True), ("touch-own", False),
    ("touch-enemy", True), ("touch-enemy", False),
    ("illegal", True),
    ("illegal-capture", True),
    ("move-changed", True), ("move-changed", False),
    ("knock", True),
    ("displace", True),
    ("clock-no-move", True),
]


@pytest.mark.slow
@pytest.mark.parametrize("kind,clock", VIOLATIONS, ids=[f"{k}-{'clock' if c else 'noclock'}"
                                                       for k, c in VIOLATIONS])
def test_violation(kind: str, clock: bool) -> None:
    ran, failures = run_category(sample(_all(), 20, kind), (0,), "fide",
                                 **dict(QUIET, violation=kind, clock=clock, bounce_p=0.3))
    assert ran > 0
    assert not failures, f"{len(failures)} of {ran} wrong:\n" + "\n".join(failures[:8])


JUDGEMENT = [
    ("touch-down-0.55-1.4s-on-the-way", _all, 10,
     dict(QUIET, touchdown_p=0.2, touchdown_s=(0.55, 1.4)),
     "a piece set down on a legal square for under 1.5 s and moved on while still held is "
     "not a released move (FIDE 4.7); the brief's threshold for move-changed is 1.5 s"),
    ("own-immovable-piece-held-2-5s", _all, 10,
     dict(QUIET, immovable_touch_p=0.2, immovable_hold_s=(2.0, 5.0)),
     "the mover holding his own piece that has no legal move is a move in progress "
     "(FIDE 4.5), and flagging it hints that the piece cannot move (FIDE 12.6)"),
    ("own-immovable-piece-held-1.40-1.49s", _all, 10,
     dict(QUIET, immovable_touch_p=0.2, immovable_hold_s=(1.40, 1.49)),
     "even if such a lift were a mismatch, it lasted under the spec's 1.5 s"),
    ("casual-slide-blips-81-90ms", _all, 10, dict(QUIET, slide_p=0.6, blip_ms=(81.0, 90.0))
     | {"profile": "casual"},
     "blips of 81-90 ms are still 'tens of milliseconds'; casual flags illegal placements "
     "at once, so a blip that outlasts the debounce becomes an alert"),
]


# Judgements the referee now agrees with: asserted hard, so a change that breaks one fails.
JUDGEMENT_HELD = {"own-immovable-piece-held-2-5s", "own-immovable-piece-held-1.40-1.49s",
                  "casual-slide-blips-81-90ms"}


@pytest.mark.slow
@pytest.mark.parametrize("cid,games,n,knobs,reason", JUDGEMENT, ids=[j[0] for j in JUDGEMENT])
def test_judgement(cid, games, n, knobs, reason, request) -> None:
    if cid not in JUDGEMENT_HELD:
        request.node.add_marker(pytest.mark.xfail(strict=False, reason=reason))
    knobs = dict(knobs)
    profile = knobs.pop("profile", "fide")
    ran, failures = run_category(sample(games(), n, cid), (0,), profile, **knobs)
    assert ran > 0
    assert not failures, f"{len(failures)} of {ran}:\n" + "\n".join(failures[:5])


# -- minimal reproductions ---------------------------------------------------------------

def L(t: float, sq: str) -> dict[str, Any]:
    return {"t": t, "ev": "lift", "sq": sq}


def P(t: float, sq: str) -> dict[str, Any]:
    return {"t": t, "ev": "place", "sq": sq}


def C(t: float, side: str) -> dict[str, Any]:
    return {"t": t, "ev": "clock", "side": side}


def START(fen: str) -> dict[str, Any]:
    return {"t": 0.0, "ev": "start", "fen": fen}


OPEN = [L(1.0, "e2"), P(1.5, "e4"), C(2.0, "white"), L(3.0, "d7"), P(3.5, "d5"),
        C(4.0, "black")]
OPEN_D = OPEN

SCENARIOS = [
    # id, lines, expected moves, expected alert codes, profile, why ("JUDGEMENT": xfail)
    ("skew-press-before-placement-of-a-piece-that-can-capture",
     OPEN + [L(5.0, "e4"), C(5.6, "white"), P(5.75, "e5"), L(7.0, "c8"), P(7.5, "f5"),
             C(8.0, "black")],
     ["e2e4", "d7d5", "e4e5", "c8f5"], set(), "fide",
     "RULES 3: ~150-300 ms of skew between press and placement is allowed; a piece in hand "
     "is not a capture nobody saw land"),
    ("skew-press-while-a-slid-bishop-is-on-the-way",
     [L(1.0, "d2"), P(1.5, "d3"), C(2.0, "white"), L(3.0, "e7"), P(3.5, "e6"), C(4.0, "black"),
      L(5.00, "c1"), P(5.03, "d2"), L(5.09, "d2"), P(5.14, "e3"), L(5.20, "e3"), P(5.25, "f4"),
      C(5.28, "white"), L(5.31, "f4"), P(5.36, "g5"), L(7.0, "g8"), P(7.5, "f6"),
      C(8.0, "black")],
     ["d2d3", "e7e6", "c1g5", "g8f6"], set(), "fide",
     "the press is logged 80 ms before the slid bishop reaches g5 (skew), while it blips f4: "
     "a blip is not a placement, and the skew is within RULES 3's grace"),
    ("skew-press-75ms-into-a-slide-blip",
     [L(1.0, "d2"), P(1.5, "d3"), C(2.0, "white"), L(3.0, "e7"), P(3.5, "e6"), C(4.0, "black"),
      L(5.00, "c1"), P(5.03, "d2"), L(5.09, "d2"), P(5.14, "e3"), L(5.20, "e3"), P(5.25, "f4"),
      C(5.325, "white"), L(5.34, "f4"), P(5.40, "g5"), L(7.0, "g8"), P(7.5, "f6"),
      C(8.0, "black")],
     ["d2d3", "e7e6", "c1g5", "g8f6"], set(), "fide",
     "as above, but the press comes 75 ms after the f4 blip began (75 ms before g5): a "
     "placement still settling at the press may be a blip, so the press waits for it"),
    ("skew-press-during-the-victims-lift-bounce",
     OPEN_D + [L(5.0, "e4"), L(5.5, "d5"), P(5.503, "d5"), C(5.504, "white"), L(5.506, "d5"),
               P(5.70, "d5"), L(7.0, "g8"), P(7.5, "f6"), C(8.0, "black")],
     ["e2e4", "d7d5", "e4d5", "g8f6"], set(), "fide",
     "exd5 attacker first; the press is logged inside the contact bounce of the victim's "
     "lift, 196 ms before the pawn lands (skew): the landing is White's, not Black touching"),
    ("queen-promotion-opponent-captures-within-300ms",
     [START("7r/P7/8/8/8/8/8/K6k w - - 0 1"), L(1.0, "a7"), P(1.6, "a8"), C(2.0, "white"),
      L(2.15, "a8"), L(2.6, "h8"), P(3.1, "a8"), C(3.5, "black")],
     ["a7a8q", "h8a8"], set(), "fide",
     "no selector means a queen; the reply started after the press"),
    ("queen-promotion-opponent-moves-within-300ms",
     [START("7r/P7/8/8/8/8/8/K6k w - - 0 1"), L(1.0, "a7"), P(1.6, "a8"), C(2.0, "white"),
      L(2.15, "h1"), P(2.6, "h2"), C(3.1, "black")],
     ["a7a8q", "h1h2"], set(), "fide",
     "no selector means a queen; the reply started after the press"),
    ("selector-after-opponents-lift-no-clock",
     [START("8/5P1k/8/8/8/K7/6p1/8 b - - 0 1"), L(1.0, "g2"), P(1.5, "g1"),
      L(3.0, "f7"), {"t": 3.04, "ev": "promote", "piece": "n"}, P(3.6, "f8")],
     ["g2g1q", "f7f8n"], set(), "fide",
     "White's lift (raw t=3.0) started White's move, so Black's promotion was final before "
     "the selector event at 3.04: it is White's"),
    ("push-off-capture-whose-slide-blips-85ms-on-a-legal-square-no-clock",
     [START("3B4/5k2/8/8/4R2b/8/1K6/8 b - - 0 1"), L(1.0, "h4"), P(1.07, "g5"), L(1.14, "g5"),
      P(1.17, "f6"), L(1.22, "f6"), P(1.25, "e7"), L(1.335, "e7"), L(5.0, "e4"), P(5.5, "e6")],
     ["h4d8", "e4e6"], set(), "fide",
     "the bishop slid h4-d8 and pushed the bishop on d8 off (the one capture from h4); its "
     "85 ms blip on e7 is a slide blip ('tens of milliseconds'), not Be7"),
    ("resignation-after-own-move-no-clock",
     [L(1.0, "e2"), P(1.5, "e4"), L(3.0, "e7"), P(3.5, "e5"),
      {"t": 5.0, "ev": "resign", "side": "black"}],
     ["e2e4", "e7e5"], set(), "fide",
     "e5 stood on the board when Black resigned; the log ends there, which makes it final"),
    ("resignation-after-own-capture-no-clock",
     [L(1.0, "e2"), P(1.5, "e4"), L(3.0, "d7"), P(3.5, "d5"), L(5.0, "d5"), L(6.0, "e4"),
      P(6.5, "d5"), {"t": 9.0, "ev": "resign", "side": "white"}],
     ["e2e4", "d7d5", "e4d5"], set(), "fide",
     "exd5 (victim first) landed and stood 2.5 s when White resigned: it is in the game"),
    ("promotion-selector-120ms-after-the-press",
     [START("8/P6k/7p/8/8/8/8/K7 w - - 0 1"), L(1.0, "a7"), P(1.6, "a8"), C(2.0, "white"),
      {"t": 2.12, "ev": "promote", "piece": "n"}, L(4.0, "h7"), P(4.5, "g7"), C(5.0, "black")],
     ["a7a8n", "h7g7"], set(), "fide",
     "120 ms behind the press: within the press's grace, the selector counts (README: 'even "
     "just after the press')"),
    ("threefold-claimed-before-the-move-that-makes-it",
     [L(1.0, "g1"), P(1.5, "f3"), C(2.0, "white"), L(3.0, "g8"), P(3.5, "f6"), C(4.0, "black"),
      L(5.0, "f3"), P(5.5, "g1"), C(6.0, "white"), L(7.0, "f6"), P(7.5, "g8"), C(8.0, "black"),
      L(9.0, "g1"), P(9.5, "f3"), C(10.0, "white"), L(11.0, "g8"), P(11.5, "f6"),
      C(12.0, "black"), L(13.0, "f3"), P(13.5, "g1"), C(14.0, "white"),
      {"t": 15.0, "ev": "claim", "side": "black"}, L(16.0, "f6"), P(16.5, "g8")],
     ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"], set(), "fide",
     "FIDE 9.2.1 / RULES 3: the claim, then the move making the third occurrence made "
     "without pressing the clock: a draw (result checked separately below)"),
    ("rook-first-castling-at-the-press",
     [START("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"), L(1.0, "h1"), L(1.8, "e1"),
      P(2.2, "f1"), P(2.5, "g1"), C(3.0, "white")],
     ["e1g1"], {"touch-move"}, "fide",
     "rook touched first (4.4.2): the issue files it under touch-move and the spec's "
     "alert table names 4.4 for touch-move; the record follows the board and the arbiter "
     "rules (RULES 3 would instead call the castled board illegal at the press)"),
    ("victim-first-capture-then-fast-overlapping-slide-no-clock",
     [START("4k3/8/8/8/8/3b4/4P3/R3K3 b - - 0 1"), L(1.0, "d3"), L(1.5, "e2"), P(2.0, "e2"),
      P(4.0, "b1"), L(4.02, "a1")],
     ["d3e2", "a1b1"], set(), "fide",
     "overlapping slide: Bxe2 landed and stood for 2 s; White's rook slid a1-b1, "
     "its magnet closing b1 20 ms before a1 opened"),
    ("touch-down-0.8s-then-moved-on",
     [L(1.0, "g1"), P(1.5, "f3"), L(2.3, "f3"), P(2.6, "h3"), C(3.2, "white"), L(4.0, "e7"),
      P(4.5, "e5"), C(5.0, "black")],
     ["g1h3", "e7e5"], set(), "fide",
     "Judgement, now held: set down on f3 for 0.8 s, still held, then on to h3 (FIDE 4.7 "
     "allows it; the brief's threshold for a released piece is 1.5 s)"),
    ("touch-down-on-a-mating-square-1.2s",
     [START("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"), L(1.0, "a1"), P(1.5, "a8"), L(2.7, "a8"),
      P(3.0, "a7"), C(3.5, "white"), L(5.0, "g8"), P(5.5, "f8"), C(6.0, "black")],
     ["a1a7", "g8f8"], set(), "fide",
     "JUDGEMENT: the rook rests on a8 (mate) for 1.2 s, still held, and goes on to a7"),
    ("casual-knight-slide-blip-85ms",
     [L(1.0, "g1"), P(1.5, "f3"), C(2.0, "white"), L(3.0, "e7"), P(3.5, "e5"), C(4.0, "black"),
      L(5.0, "f3"), P(5.04, "f4"), L(5.10, "f4"), P(5.13, "g4"), L(5.215, "g4"), P(5.25, "g5"),
      C(6.0, "white")],
     ["g1f3", "e7e5", "f3g5"], set(), "casual",
     "Judgement, now held (knights are seldom slid): an 85 ms blip is 'tens of "
     "milliseconds', but it outlasts the debounce and casual flags illegal placements at once"),
]


@pytest.mark.parametrize("sid,lines,moves,codes,profile,why", SCENARIOS,
                         ids=[s[0] for s in SCENARIOS])
def test_scenario(sid, lines, moves, codes, profile, why, request) -> None:
    if "JUDGEMENT" in why:
        request.node.add_marker(pytest.mark.xfail(strict=False, reason=why))
    if "KNOWN DEFECT" in why:  # reported as XFAIL; fails the run once it passes
        request.node.add_marker(pytest.mark.xfail(strict=True, reason=why))
    out = replay(lines, profile)
    assert (out.moves, out.codes) == (moves, codes), why
    if sid == "threefold-claimed-before-the-move-that-makes-it":
        assert out.result == ("1/2-1/2", "threefold-repetition"), why


# -- the harness itself ------------------------------------------------------------------

def test_sim2_logs_are_well_formed_and_deterministic() -> None:
    game = corpus()[0]
    first = render_case(game, 7, **NOISY)
    again = render_case(game, 7, **NOISY)
    assert first.lines == again.lines
    log = read_sensor_log(io.StringIO(first.jsonl()))
    assert log.errors == []
    times = [obj["t"] for obj in first.lines]
    assert times == sorted(times)
    assert first.styles.get("slide") and first.styles.get("capture_victim_first")


def test_harness_can_fail() -> None:
    """A wrong expectation must be caught: the checks are not vacuous."""
    case = render_case(corpus()[1], 3, **QUIET)
    out = replay(case.lines)
    assert problems(case, out) == []
    case.moves[5] = "a1a1"
    case.alerts = {"touch-move"}
    found = problems(case, out)
    assert any("ply 6" in f for f in found) and any("missing alert" in f for f in found)
