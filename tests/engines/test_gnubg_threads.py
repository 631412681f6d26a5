"""gnubg's move search crashes in a thread other than the one that imported it: the gnubg bot
must still play from worker threads, as ``nardy bot serve`` and the spectator call it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("gnubg", reason="the gnubg bot needs pip install 'nardy[gnubg]'")

# In a child process: a segmentation fault must fail the test, not kill the test run.
SCRIPT = textwrap.dedent(
    """
    import threading
    from concurrent import futures
    from nardy.bots.gnubg_bot import GnubgBot
    from nardy.core import load_variant
    from nardy.core.dice import SeededDice
    from nardy.core.game import Game

    variant = load_variant("backgammon")
    game = Game(variant, SeededDice(3))
    while len(game.decision.plays) < 2:
        game.decide(game.decision.plays[0])
    decision = game.decision
    bot = GnubgBot(0)  # gnubg imported here, on the main thread
    on_main = bot.choose_play(decision)
    with futures.ThreadPoolExecutor(4) as pool:
        on_workers = list(pool.map(lambda _: bot.choose_play(decision), range(8)))
    late = GnubgBot(0)  # a second bot made in a worker thread, used on the main thread
    made = futures.ThreadPoolExecutor(1).submit(GnubgBot, 0).result()
    print(on_main, *on_workers, late.choose_play(decision), made.choose_play(decision))
    """
)


def test_gnubg_bot_plays_from_worker_threads() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    choices = done.stdout.split()
    assert len(choices) == 11 and len(set(choices)) == 1, choices
