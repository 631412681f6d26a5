"""End to end: the JavaScript example bots (examples/bots/js: bot.js serves BotService,
dial_out.js dials out) play long nardy against Python bots through the arena.

Needs ``node`` and the example's dependencies (``cd examples/bots/js && npm ci``; .ci/run does
this); skipped with the reason otherwise.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from bot_process import BotProcess

from nardy.arena.sdk import BotServer, builtin, dial_out
from nardy.arena.service.server import ArenaServer
from nardy.arena.service.servicer import table_to_proto
from nardy.bots.loop import TimeControl

JS_BOT = Path(__file__).resolve().parents[2] / "examples" / "bots" / "js"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.slow,  # Node.js bots in subprocesses
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
        assert record.faults is not None and all(sum(f.values()) == 0 for f in record.faults)
        js_colour = 0 if (record.players[0].seat or {}).get("bot_id") == js.bot_id else 1
        js_answers = [a for a in record.answers if a.player == js_colour]
        assert js_answers
        assert all((a.info or {}).get("values", {}).get("engine") == "js" for a in js_answers)


def _decisions_of(row_record: dict[str, object], bot_id: str) -> list[dict[str, object]]:
    colour = "White" if row_record["white"]["bot_id"] == bot_id else "Black"  # type: ignore[index]
    return [d for d in row_record["decisions"] if d["player"] == colour]  # type: ignore[attr-defined, index]


def test_js_dial_out_bot_plays_a_round_robin(
    server: ArenaServer, bot_server: Callable[..., BotServer]
) -> None:
    """The dial-out example (dial_out.js) and the server example (bot.js) in a short round robin
    with a Python bot: every game played to the end, no fault, each JS decision from its bot."""
    arena = server.arena
    assert NODE is not None
    dialer = arena.register_dial_out_bot("js-dial-out")
    js_server = arena.add_local_bot("js-server", [NODE, str(JS_BOT / "bot.js"), "0", "7"])
    python = arena.register_server_bot(
        "heuristic", bot_server(builtin("heuristic", seed=8)).address
    )
    bot = BotProcess(
        [NODE, str(JS_BOT / "dial_out.js"), server.address, "5"],
        env={"NARDY_BOT_TOKEN": dialer.token},
    )
    try:
        assert (
            bot.wait_for(r"^connected to ")[0]
            == f"connected to {server.address} as {dialer.bot_id}"
        )
        t = arena.create_tournament(
            [dialer.bot_id, js_server.bot_id, python.bot_id],
            variant="long",
            games_per_pairing=2,
            seed=12,
            concurrency=2,
            time_control=TimeControl(per_decision=5.0, reserve=0.0, slack=0.5),
        )
        assert t.done.wait(120) and not t.error, t.error
    finally:
        assert bot.stop() == 0, bot.lines
    standings = table_to_proto(arena.standings(t.tournament_id))
    assert standings.games_played == standings.games_total == 6
    rows = arena.store.games(t.tournament_id, records=True)
    assert len(rows) == 6
    for row in rows:
        assert row.record is not None and row.termination == "borne_off"
        assert all(sum(f.values()) == 0 for f in row.record["faults"].values())
    for bot_id, engine in ((dialer.bot_id, "js-dial-out"), (js_server.bot_id, "js")):
        played = [r.record for r in rows if r.record and bot_id in (r.a, r.b)]
        assert len(played) == 4
        plays = [d for record in played for d in _decisions_of(record, bot_id)]
        assert plays and all(d["info"]["values"]["engine"] == engine for d in plays)  # type: ignore[index]
