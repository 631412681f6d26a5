"""A ``BotService`` program for tests: random choices seeded by (game id, decision sequence), so
it plays every game the same way whatever process plays it and in whatever order its games come
(what a reproducible third-party bot does). Prints ``LISTENING host:port`` like ``nardy bot
serve --port 0``; with an argument, writes its pid to that file first."""

from __future__ import annotations

import os
import random
import sys

from nardy.arena.protocol import bot_pb2
from nardy.arena.sdk import BotBase, serve_bot


class PerGameRandomBot(BotBase):
    name = "per-game-random"
    version = "1"

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
        ctx = request.context
        rng = random.Random(f"{ctx.game_id}:{ctx.sequence}")
        return int(ctx.legal_plays[rng.randrange(len(ctx.legal_plays))].index)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        with open(sys.argv[1], "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    server = serve_bot(PerGameRandomBot(), port=0)
    print(f"LISTENING {server.address}", flush=True)
    server.wait()
