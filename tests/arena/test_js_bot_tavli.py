"""End to end: a tavli round robin (RULES.md §3.12.3) through a real arena gRPC server between
a Python bot and the JavaScript example bot (examples/bots/js/bot.js). The unit is a match to 3
whose games cycle portes → plakoto → fevga; every request tells the bot that game's variant, and
the JS bot plays all three from the legal plays it is sent.

Needs ``node`` and the example's dependencies (``cd examples/bots/js && npm ci``; .ci/run does
this); skipped with the reason otherwise.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from nardy.arena.protocol import bot_pb2
from nardy.arena.records.verify import verify_store
from nardy.arena.sdk import BotServer, KernelBot
from nardy.arena.service.server import ArenaServer
from nardy.arena.service.servicer import table_to_proto
from nardy.bots import make_bot
from nardy.bots.loop import TimeControl

JS_BOT = Path(__file__).resolve().parents[2] / "examples" / "bots" / "js"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.slow,  # a Node.js bot in a subprocess, whole tavli matches
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
    pytest.mark.skipif(
        not (JS_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir(),
        reason="run `npm ci` in examples/bots/js first (.ci/run does)",
    ),
]

CYCLE = ["portes", "plakoto", "fevga"]


class _Told(KernelBot):
    """The heuristic bot, noting the variant each request names (``DecisionContext.variant``)."""

    def __init__(self) -> None:
        super().__init__(make_bot("heuristic", 8), "heuristic")
        self.told: dict[str, set[str]] = {}

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int | str:
        ctx = request.context
        self.told.setdefault(ctx.game_id, set()).add(ctx.variant.name)
        return super().choose_play(request)


def test_js_bot_plays_a_tavli_round_robin(
    server: ArenaServer, bot_server: Callable[..., BotServer]
) -> None:
    arena = server.arena
    assert NODE is not None
    js = arena.add_local_bot("js-tavli", [NODE, str(JS_BOT / "bot.js"), "0", "7"])
    told = _Told()
    python = arena.register_server_bot("heuristic", bot_server(told).address)
    t = arena.create_tournament(
        [js.bot_id, python.bot_id],
        variant="tavli",
        match_length=3,
        games_per_pairing=2,
        seed=31,
        concurrency=2,
        time_control=TimeControl(per_decision=5.0, reserve=0.0, slack=0.5),
    )
    assert t.done.wait(180) and not t.error, t.error
    standings = table_to_proto(arena.standings(t.tournament_id))
    assert standings.games_played == standings.games_total == 2  # two matches
    rows = arena.store.games(t.tournament_id, records=True)
    matches: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        assert row.record is not None
        matches.setdefault(row.unit_id, []).append(row.record)
    assert len(matches) == 2
    seen: set[str] = set()
    for records in matches.values():
        records.sort(key=lambda r: r["game_no"])  # type: ignore[arg-type, return-value]
        variants = [r["variant"] for r in records]
        assert variants == [CYCLE[i % 3] for i in range(len(records))]
        seen.update(variants)  # type: ignore[arg-type]
        score = [0, 0]
        for record in records:
            assert record["setup"]["match"]["score"] == score  # type: ignore[index]
            result = record["result"]
            assert result["termination"] in ("borne_off", "mother", "draw"), result  # type: ignore[index]
            assert all(sum(f.values()) == 0 for f in record["faults"].values())  # type: ignore[attr-defined]
            if result["winner"] is not None:  # type: ignore[index]
                score[["White", "Black"].index(result["winner"])] += result["points"]  # type: ignore[index]
            js_colour = "White" if record["white"]["bot_id"] == js.bot_id else "Black"  # type: ignore[index]
            mine = [d for d in record["decisions"] if d["player"] == js_colour]  # type: ignore[attr-defined]
            assert mine and all(d["info"]["values"]["engine"] == "js" for d in mine)
            # The Python bot was told this game's own variant, never "tavli".
            assert told.told.get(str(record["game_id"]), {record["variant"]}) == {record["variant"]}
        assert max(score) >= 3
    assert "portes" in seen and "plakoto" in seen
    assert set().union(*told.told.values()) == seen  # told of every variant played
    report = verify_store(arena.store, t.tournament_id)
    assert report.ok, report.problems
