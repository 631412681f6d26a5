"""End to end: the JavaScript example bot (examples/bots/js) plays a full game of long nardy
against a Python bot through the arena.

Needs ``node`` and the example's dependencies (``cd examples/bots/js && npm ci``; .ci/run does
this); skipped with the reason otherwise.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from nardy.arena.sdk import BotServer, builtin, dial_out
from nardy.arena.server import ArenaServer

JS_BOT = Path(__file__).resolve().parents[2] / "examples" / "bots" / "js"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
    pytest.mark.skipif(
        not (JS_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir(),
        reason="run `npm ci` in examples/bots/js first (.ci/run does)",
    ),
]


def test_js_bot_plays_long_nardy_against_python(
    server: ArenaServer, bot_server: Callable[..., BotServer]
) -> None:
    arena = server.arena
    assert NODE is not None
    js = arena.add_local_bot("js-random", [NODE, str(JS_BOT / "bot.js"), "0", "7"])
    python = arena.register_dial_out_bot("python")
    client = dial_out(builtin("heuristic", seed=8), server.address, python.token).start()
    try:
        assert client.connected.wait(5)
        records = [
            arena.play_game(js.bot_id, python.bot_id, variant="long", seed=21),
            arena.play_game(python.bot_id, js.bot_id, variant="long", seed=22),
        ]
    finally:
        client.stop()
    for record in records:
        assert record.variant == "long"
        assert record.outcome is not None and record.outcome.termination == "borne_off", (
            record.outcome
        )
        assert all(sum(f.values()) == 0 for f in record.faults)
        js_colour = "White" if record.bots[0]["bot_id"] == js.bot_id else "Black"
        js_decisions = [d for d in record.decisions if d["player"] == js_colour]
        assert js_decisions
        assert all(d.get("info", {}).get("values", {}).get("engine") == "js" for d in js_decisions)
