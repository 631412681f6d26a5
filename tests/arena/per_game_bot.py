"""A ``BotService`` program for tests: random choices seeded by (game id, decision sequence), so
it plays every game the same way whatever process plays it and in whatever order its games come
(what a reproducible third-party bot does). The game id is read without the random suffix of the
arena's bot ids (``bot-1-02705e2c9e82`` counts as ``bot-1``): the same tournament then plays
the same games in every run, not only within one. Prints ``LISTENING host:port`` like ``nardy bot
serve --port 0``; with an argument, writes its pid to that file first."""

from __future__ import annotations

import os
import random
import re
import sys

from nardy.arena.protocol import bot_pb2
from nardy.arena.sdk import BotBase, serve_bot

_STABLE_BOT_ID = re.compile(r"(bot-\d+)-[0-9a-f]+")


class PerGameRandomBot(BotBase):
    name = "per-game-random"
    version = "1"

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
        ctx = request.context
        game = _STABLE_BOT_ID.sub(r"\1", ctx.game_id)
        rng = random.Random(f"{game}:{ctx.sequence}")
        return int(ctx.legal_plays[rng.randrange(len(ctx.legal_plays))].index)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        with open(sys.argv[1], "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    server = serve_bot(PerGameRandomBot(), port=0)
    print(f"LISTENING {server.address}", flush=True)
    server.wait()
