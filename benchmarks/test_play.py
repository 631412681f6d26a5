"""Human games on one ``nardy web`` at once (benchmarks/load_play.py, issue 35's check): every
game played through the JSON API against a 0-ply bot without an error, the round trip of a move
(the human's play in, the bot's reply out) and the Play page's first load.

Sized by ``NARDY_BENCH_PLAY_GAMES`` (default 100 games at once) and ``NARDY_BENCH_PLAY_SECONDS``
(default 30); the figures are in docs/play.md. The quick pass of .ci/run
(``--benchmark-disable``) plays 4 games for 5 s.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'nardy[web]'")

import load_play  # a script beside this file (pytest puts benchmarks/ on the path)

QUICK = "--benchmark-disable" in sys.argv or os.environ.get("CI") == "true"
GAMES = int(os.environ.get("NARDY_BENCH_PLAY_GAMES", "4" if QUICK else "100"))
SECONDS = float(os.environ.get("NARDY_BENCH_PLAY_SECONDS", "5" if QUICK else "30"))


def test_concurrent_human_games_against_a_0_ply_bot(benchmark: Any) -> None:
    result = benchmark.pedantic(
        lambda: load_play.main(["--games", str(GAMES), "--seconds", str(SECONDS)]),
        rounds=1,
        iterations=1,
    )
    print(result)
    assert result["errors"] == 0 and result["starts_refused"] == 0, result
    assert result["round_trip"]["n"] >= GAMES, result
    benchmark.extra_info.update(
        {
            "round_trip_p99_ms": result["round_trip"]["p99_ms"],
            "first_load_ms": result["play_page_first_load_ms"],
        }
    )
