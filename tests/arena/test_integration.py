"""The arena and the tournament engine together: who starts later match games with remote bots,
CreateTournament / GetStandings / WatchTournament on the engine over a real loopback server, the
arena's tournament database (``nardy arena serve --db``), shutdown in the middle of a tournament,
and bots the engine starts itself (``command``)."""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner
from google.protobuf.duration_pb2 import Duration
from per_game_bot import PerGameRandomBot

from nardy.arena.clients.bot_client import GrpcBotClient
from nardy.arena.clients.runner import Seat, run_game
from nardy.arena.competition.schedule import TournamentError, parse_definition
from nardy.arena.competition.tournament import Tournament, replay_record
from nardy.arena.protocol import arena_pb2, arena_pb2_grpc, game_pb2
from nardy.arena.records import audit
from nardy.arena.records.storage import SqliteStore
from nardy.arena.records.verify import verify_store
from nardy.arena.sdk import BotServer, RandomBot, builtin, dial_out
from nardy.arena.service.core import Arena
from nardy.arena.service.server import ArenaServer
from nardy.arena.service.servicer import EventTranslator, standings_to_proto, table_to_proto
from nardy.arena.tournament_cli import main as tournament_cli
from nardy.bots.loop import TimeControl
from nardy.core.game import BLACK, WHITE
from nardy.core.plugins import load_variant

REPO = Path(__file__).resolve().parents[2]
SLOW = TimeControl(per_decision=10.0)
"""A clock no loopback bot misses, even on a loaded machine (these tests are not about time)."""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / "t.db")
    yield s
    s.close()


def _stub(server: ArenaServer) -> tuple[grpc.Channel, arena_pb2_grpc.ArenaServiceStub]:
    channel = grpc.insecure_channel(server.address)
    return channel, arena_pb2_grpc.ArenaServiceStub(channel)


# -- 1. who starts: run_game(starter=...) and long-nardy matches with a remote bot ----------------


@pytest.mark.parametrize("starter", [WHITE, BLACK])
def test_run_game_starter_with_remote_bots(
    bot_server: Callable[..., BotServer], starter: int
) -> None:
    clients = [GrpcBotClient(bot_server(builtin("random", seed)).address) for seed in (1, 2)]
    try:
        seats = (Seat("w", "w", clients[0]), Seat("b", "b", clients[1]))
        record = run_game(
            load_variant("long"),
            seats,
            game_id="g",
            seed=5,
            starter=starter,
            time_control=SLOW,
        )
        default = run_game(load_variant("long"), seats, game_id="g0", seed=5)
    finally:
        for client in clients:
            client.close()
    assert record.outcome is not None and record.outcome.termination == "borne_off"
    events = record.events
    # No opening throw: the starter rolls first.
    assert "opening" not in {e.kind for e in events}
    assert events[0].player == starter
    assert default.events[0].kind == "opening"


@pytest.mark.slow  # over 2 s (the fast loop's budget); .ci/run runs it
def test_long_nardy_match_with_a_remote_bot(
    store: SqliteStore, bot_server: Callable[..., BotServer]
) -> None:
    """Matches in long nardy (the previous winner starts the next game) with a gRPC bot."""
    remote = bot_server(builtin("random", 3))
    d = parse_definition(
        {
            "name": "long-match",
            "variant": "long",
            "match_length": 5,  # a game is worth at most 3 (koks): every match has 2+ games
            "games": 2,
            "seed": 4,
            "bots": [
                {"name": "heuristic", "builtin": "heuristic"},
                {"name": "remote", "endpoint": remote.address, "capacity": 1},
            ],
        }
    )
    result = Tournament(d, store).run()
    assert result.status == "finished" and result.standings.units_done == 2
    rows = store.games(d.tournament_id, records=True)
    by_unit: dict[str, list[dict[str, object]]] = {}
    for row in sorted(rows, key=lambda r: (r.unit_id, r.game_no)):
        assert row.record is not None
        by_unit.setdefault(row.unit_id, []).append(row.record)
    assert len(by_unit) == 2 and all(len(games) >= 2 for games in by_unit.values())
    later_starters = []
    for games in by_unit.values():
        assert games[0]["setup"]["starter"] is None  # type: ignore[index]
        for previous, game in itertools.pairwise(games):
            winner = previous["result"]["winner"]  # type: ignore[index]
            starter = game["setup"]["starter"]  # type: ignore[index]
            assert starter == ("White", "Black").index(winner)
            events = game["game"]["events"]  # type: ignore[index]
            assert events[0]["player"] == winner and events[0]["kind"] != "opening"
            later_starters.append(starter)
        for game in games:
            assert replay_record(game).ok  # type: ignore[arg-type]
            seats = (game["white"], game["black"])  # type: ignore[index]
            assert any(s["kind"] == "endpoint" for s in seats)  # type: ignore[index]
    # Black started a later game: something only `starter` can arrange.
    assert BLACK in later_starters


# -- 2 and 3. CreateTournament / GetStandings / WatchTournament on the engine ----------------------


def _register_three(server: ArenaServer, bot_server: Callable[..., BotServer]) -> list[str]:
    arena = server.arena
    return [
        arena.register_server_bot("heuristic", bot_server(builtin("heuristic", 1)).address).bot_id,
        arena.register_server_bot("random", bot_server(builtin("random", 2)).address).bot_id,
        arena.register_server_bot("sdk-random", bot_server(RandomBot(3)).address).bot_id,
    ]


def test_watch_tournament_over_grpc(
    server: ArenaServer, bot_server: Callable[..., BotServer]
) -> None:
    arena = server.arena
    arena.standings_interval = 0.0
    ids = _register_three(server, bot_server)
    channel, stub = _stub(server)
    with channel:
        created = stub.CreateTournament(
            arena_pb2.CreateTournamentRequest(
                name="watched",
                bot_ids=ids,
                variant=game_pb2.VariantSpec(name="long"),
                games_per_pairing=2,
                seed=5,
                concurrency=2,
                time_control=arena_pb2.TimeControl(per_decision=Duration(seconds=10)),
            ),
            timeout=5,
        )
        assert created.games_total == 6
        events = list(
            stub.WatchTournament(
                arena_pb2.WatchTournamentRequest(tournament_id=created.tournament_id, replay=True),
                timeout=60,
            )
        )
        final = stub.GetStandings(
            arena_pb2.GetStandingsRequest(tournament_id=created.tournament_id), timeout=5
        )
        # A second watcher after the end: the same events, replayed.
        again = list(
            stub.WatchTournament(
                arena_pb2.WatchTournamentRequest(tournament_id=created.tournament_id, replay=True),
                timeout=10,
            )
        )
        with pytest.raises(grpc.RpcError) as missing:
            list(stub.WatchTournament(arena_pb2.WatchTournamentRequest(tournament_id="nope")))
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert [e.event_sequence for e in events] == list(range(1, len(events) + 1))
    assert again == events
    kinds = [e.WhichOneof("event") for e in events]
    counts = Counter(kinds)
    assert counts["game_started"] == counts["game_ended"] == 6
    # Every engine kind has its own message; no SPRT, so no SprtUpdatedEvent.
    assert kinds[0] == "tournament_started" and counts["tournament_started"] == 1
    # With standings_interval 0: one standings_updated per batch of games the runner collects
    # together (two games of concurrency 2 may end in one wait) and one at the end; six when
    # no two ended together (a CI run under load drew 5: the old ">= 6" was a race).
    assert 2 <= counts["standings_updated"] <= 7 and "sprt_updated" not in counts
    assert kinds[-1] == "tournament_ended" and counts["tournament_ended"] == 1
    started_event = events[0].tournament_started
    assert started_event.status == arena_pb2.TOURNAMENT_STATUS_RUNNING
    assert started_event.detail == "new"
    first = started_event.standings
    assert first.status == arena_pb2.TOURNAMENT_STATUS_RUNNING and first.games_played == 0
    assert {s.pool for s in first.standings} == {"long"} and len(first.pairings) == 3
    assert all(not p.HasField("mean_points") and p.games == 0 for p in first.pairings)
    assert all(not s.HasField("elo_se") for s in first.standings) and not first.sprt
    # The dice commitment: published at creation, sealed while running, revealed at the end.
    assert created.dice.scheme == "nardy-dice-v1" and len(created.dice.commitment) == 64
    assert not created.dice.revealed and not created.dice.HasField("seed") and not created.dice.salt
    assert first.dice == created.dice
    assert final.dice.revealed and final.dice.seed == 5
    assert final.dice.commitment == created.dice.commitment
    assert audit.matches(5, final.dice.salt, final.dice.commitment)
    assert verify_store(arena.store, created.tournament_id).ok
    ended = events[-1].tournament_ended
    assert ended.status == arena_pb2.TOURNAMENT_STATUS_FINISHED
    assert ended.standings == final
    started = {e.game_started.game_id for e in events if e.HasField("game_started")}
    for e in events:
        if e.HasField("game_ended"):
            g = e.game_ended
            assert g.game_id in started and {g.white_bot_id, g.black_bot_id} <= set(ids)
            assert g.result.termination == game_pb2.TERMINATION_BORNE_OFF
            assert g.result.winner in (game_pb2.COLOR_WHITE, game_pb2.COLOR_BLACK)
            assert g.result.points >= 1 and g.decisions > 0
        assert e.time.seconds > 0
    # GetStandings is the engine's table: names, Elo and its 95% interval.
    assert final.tournament_id == created.tournament_id and final.seed == 5
    assert final.games_played == final.games_total == 6
    assert {s.bot_id for s in final.standings} == set(ids)
    assert {s.bot_name for s in final.standings} == {"heuristic", "random", "sdk-random"}
    assert [s.rank for s in final.standings] == sorted(s.rank for s in final.standings)
    assert sum(s.games for s in final.standings) == 12
    assert sum(s.net_points for s in final.standings) == 0
    assert all(s.elo_error > 0 for s in final.standings)
    assert abs(sum(s.elo for s in final.standings)) < 1e-6
    engine = arena.tournaments[created.tournament_id].engine.standings().pools[0]
    assert [(b.bot, b.elo) for b in engine.bots] == [(s.bot_id, s.elo) for s in final.standings]
    # The new fields: pool per row, Elo's SE and interval, the pairings' head-to-head results.
    for b, s in zip(engine.bots, final.standings, strict=True):
        assert s.pool == "long" and s.bot_name in {"heuristic", "random", "sdk-random"}
        assert b.elo_se is not None and s.elo_se == pytest.approx(b.elo_se)
        assert s.elo_error == pytest.approx(1.96 * s.elo_se)
        assert s.elo_ci95_low == pytest.approx(s.elo - s.elo_error)
        assert s.elo_ci95_high == pytest.approx(s.elo + s.elo_error)
    assert len(final.pairings) == len(engine.pairings) == 3 and not final.sprt
    for p, msg in zip(engine.pairings, final.pairings, strict=True):
        assert (msg.pool, msg.bot_a, msg.bot_b) == ("long", p.a, p.b)
        assert {msg.bot_a, msg.bot_b} <= set(ids) and msg.bot_a != msg.bot_b
        assert (msg.games, msg.pairs, msg.unpaired) == (2, 1, 0) == (p.units, p.pairs, p.unpaired)
        assert msg.wins_a + msg.wins_b == 2 and (msg.wins_a, msg.wins_b) == (p.a_wins, p.b_wins)
        assert msg.net_points_a == p.a_net_points
        assert p.mean is not None and msg.mean_points == pytest.approx(p.mean)
        assert msg.mean_points == pytest.approx(msg.net_points_a / 2)
        # One duplicate pair: no SE over pairs yet (and so no interval).
        assert p.se is not None and math.isnan(p.se)
        assert not msg.HasField("se") and not msg.HasField("ci95_low") and not msg.ci_method
        assert p.se_independent is not None and msg.se_iid == pytest.approx(p.se_independent)


def test_watch_live_and_cancel(server: ArenaServer, bot_server: Callable[..., BotServer]) -> None:
    """A live watcher gets events as they happen; cancelling its stream unsubscribes it."""
    arena = server.arena
    a = arena.register_server_bot("a", bot_server(RandomBot(1)).address).bot_id
    b = arena.register_server_bot("b", bot_server(RandomBot(2)).address).bot_id
    t = arena.create_tournament([a, b], variant="long", games_per_pairing=40, seed=3, concurrency=1)
    channel, stub = _stub(server)
    with channel:
        stream = stub.WatchTournament(
            arena_pb2.WatchTournamentRequest(tournament_id=t.tournament_id, replay=False)
        )
        first = next(stream)
        assert first.event_sequence >= 1
        stream.cancel()
        deadline = time.monotonic() + 5
        # The feed of this watcher's kind (admin or public) for the tournament.
        (feed,) = [f for (tid, _), f in server.servicer._feeds.items() if tid == t.tournament_id]
        while feed.followers and time.monotonic() < deadline:
            time.sleep(0.05)
        # The watcher is gone; the tournament's one shared feed (every watcher's) stays.
        assert feed.followers == 0 and len(t.engine._subscribers) == 1
        # Errors of CreateTournament: unknown bot, a repeated request, a bad variant.
        for request, code in [
            (arena_pb2.CreateTournamentRequest(bot_ids=[a, "zz"]), grpc.StatusCode.NOT_FOUND),
            (
                arena_pb2.CreateTournamentRequest(
                    bot_ids=[a, b],
                    variant=game_pb2.VariantSpec(name="long"),
                    games_per_pairing=40,
                    seed=3,
                    concurrency=1,
                ),
                grpc.StatusCode.ALREADY_EXISTS,
            ),
            (
                arena_pb2.CreateTournamentRequest(
                    bot_ids=[a, b], variant=game_pb2.VariantSpec(name="nonesuch")
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
            ),
        ]:
            with pytest.raises(grpc.RpcError) as info:
                stub.CreateTournament(request, timeout=5)
            assert info.value.code() == code, info.value.details()
    t.engine.stop()
    assert t.done.wait(10)


def test_match_tournament_from_create_tournament(
    server: ArenaServer, bot_server: Callable[..., BotServer]
) -> None:
    """match_length: long-nardy matches between a server bot and a dial-out bot."""
    arena = server.arena
    a = arena.register_server_bot("srv", bot_server(builtin("heuristic", 1)).address)
    b = arena.register_dial_out_bot("dial")
    client = dial_out(builtin("random", 2), server.address, b.token).start()
    try:
        assert client.connected.wait(5)
        t = arena.create_tournament(
            [a.bot_id, b.bot_id],
            variant="long",
            match_length=5,
            games_per_pairing=2,
            seed=9,
            concurrency=2,
            time_control=SLOW,
        )
        assert t.done.wait(60) and not t.error
    finally:
        client.stop()
    standings = table_to_proto(arena.standings(t.tournament_id))
    assert standings.status == arena_pb2.TOURNAMENT_STATUS_FINISHED
    assert standings.games_played == standings.games_total == 2  # matches
    rows = arena.store.games(t.tournament_id, records=True)
    assert len(rows) > 2 and {r.record["options"]["match_length"] for r in rows if r.record} == {5}
    assert any(r.record and r.record["setup"]["starter"] is not None for r in rows)


def test_every_engine_event_has_one_message(store: SqliteStore) -> None:
    """Each of the engine's six event kinds has its own message, one message per event, so
    event_sequence stays consecutive. SprtUpdatedEvent carries the test as it stood at its event
    (the engine attaches its standings to the event). Several pools: rows, pairings per pool."""
    d = parse_definition(
        {
            "name": "sprt",
            "bots": ["heuristic", "random"],
            "variants": ["backgammon", "long"],
            "games": 4,
            "seed": 1,
        }
    )
    t = Tournament(d, store, standings_interval=0.0)
    t.run()
    sprt = parse_definition(
        {
            "name": "s",
            "bots": ["heuristic", "random"],
            "variant": "long",
            "games": 6,
            "seed": 2,
            "sprt": {"elo0": 0, "elo1": 50},
        }
    )
    t2 = Tournament(sprt, store)
    t2.run()
    for engine in (t, t2):
        translate = EventTranslator(
            seed=engine.definition.seed,
            names={"random": "Random"},
            sprt=engine.definition.sprt,
        )
        history = engine.history
        messages = [translate(e) for e in history]
        assert [m.event_sequence for m in messages] == [e.sequence for e in history]
        for event, message in zip(history, messages, strict=True):
            assert message.WhichOneof("event") == event.kind
            if event.kind == "tournament_started":
                assert message.tournament_started.detail == "new"
                assert message.tournament_started.standings.tournament_id == engine.tournament_id
            if event.kind == "sprt_updated":  # the test at this event: its own status line
                update = message.sprt_updated
                assert update.status_line == event.detail
                [test] = update.sprt
                assert test.status_line == event.detail and test.pool == "long"
                assert test.settings.mode == arena_pb2.SPRT_MODE_ELO
                assert (test.settings.elo0, test.settings.elo1) == (0.0, 50.0)
                assert (test.settings.alpha, test.settings.beta) == (0.05, 0.05)
                assert f"pairs {test.pairs} " in event.detail and 2 * test.pairs <= test.games
                assert f"LLR {test.llr:+.2f} " in event.detail
                assert test.lower_bound == pytest.approx(math.log(0.05 / 0.95))
                assert test.upper_bound == pytest.approx(math.log(0.95 / 0.05))
                assert test.decision == arena_pb2.SPRT_DECISION_CONTINUE  # 3 pairs decide nothing
    assert [e.kind for e in t2.history].count("sprt_updated") == 3
    table = standings_to_proto(t.standings(), seed=1, names={"random": "Random"})
    assert [s.bot_name for s in table.standings] == [
        "heuristic [backgammon]",
        "Random [backgammon]",
        "heuristic [long]",
        "Random [long]",
    ]
    assert [s.pool for s in table.standings] == ["backgammon"] * 2 + ["long"] * 2
    assert [(p.pool, p.bot_a, p.bot_b, p.games, p.pairs) for p in table.pairings] == [
        ("backgammon", "heuristic", "random", 4, 2),
        ("long", "heuristic", "random", 4, 2),
    ]
    for p in table.pairings:  # two pairs: an SE over pairs and its t interval
        assert p.HasField("se") and p.ci_method == "t"
        assert p.ci95_low <= p.mean_points <= p.ci95_high
    assert table.games_played == table.games_total == 8 and not table.sprt
    assert table.status == arena_pb2.TOURNAMENT_STATUS_FINISHED
    # The event carries its own standings: a fresh translator gives the same numbers.
    first = next(e for e in t2.history if e.kind == "sprt_updated")
    bare = EventTranslator(sprt=t2.definition.sprt)(first)
    assert bare.sprt_updated.status_line == first.detail
    assert [s.pairs for s in bare.sprt_updated.sprt] == [1]
    final = standings_to_proto(t2.standings(), sprt=t2.definition.sprt)
    [test] = final.sprt
    assert test.pairs == 3 and test.games == 6 and test.decided_at_pairs == 0


def test_sprt_tournament_over_grpc(
    server: ArenaServer, bot_server: Callable[..., BotServer]
) -> None:
    """CreateTournament with an SPRT: SprtUpdatedEvents as the pairs come in, the decision
    stops the tournament early, GetStandings reports the test."""
    arena = server.arena
    strong = arena.register_server_bot("strong", bot_server(builtin("heuristic", 1)).address)
    # Random choices seeded by (game, decision), not one generator that the concurrent games
    # draw from in whatever order the threads run, and by game ids read without the bot ids'
    # random suffixes: the games, so the SPRT, are the same in every run and under any load
    # (seeded by the full game id, one CI run drew a split first pair: H0 after one pair).
    weak = arena.register_server_bot("weak", bot_server(PerGameRandomBot()).address)
    ids = [strong.bot_id, weak.bot_id]
    settings = arena_pb2.SprtSettings(
        mode=arena_pb2.SPRT_MODE_ELO, elo0=0, elo1=400, alpha=0.2, beta=0.2
    )
    channel, stub = _stub(server)
    with channel:
        for bad, why in [
            (arena_pb2.SprtSettings(elo0=50, elo1=0), "H0"),
            (arena_pb2.SprtSettings(mode=arena_pb2.SPRT_MODE_POINTS, mu0=0, mu1=5), "max_points"),
        ]:
            with pytest.raises(grpc.RpcError) as info:
                stub.CreateTournament(
                    arena_pb2.CreateTournamentRequest(bot_ids=ids, sprt=bad), timeout=5
                )
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert why in (info.value.details() or "")
        created = stub.CreateTournament(
            arena_pb2.CreateTournamentRequest(
                name="sprt",
                bot_ids=ids,
                variant=game_pb2.VariantSpec(name="long"),
                games_per_pairing=40,
                seed=11,
                concurrency=2,
                time_control=arena_pb2.TimeControl(per_decision=Duration(seconds=10)),
                sprt=settings,
            ),
            timeout=5,
        )
        assert created.games_total == 40
        request = arena_pb2.WatchTournamentRequest(tournament_id=created.tournament_id, replay=True)
        events = list(stub.WatchTournament(request, timeout=120))
        final = stub.GetStandings(
            arena_pb2.GetStandingsRequest(tournament_id=created.tournament_id), timeout=5
        )
        again = list(stub.WatchTournament(request, timeout=10))
    assert again == events  # replayed SPRT events carry the numbers of their own moment
    assert [e.event_sequence for e in events] == list(range(1, len(events) + 1))
    assert events[0].HasField("tournament_started")
    updates = [e.sprt_updated for e in events if e.HasField("sprt_updated")]
    assert updates
    for n, update in enumerate(updates, 1):
        [test] = update.sprt
        assert test.pairs == n and test.status_line == update.status_line
        assert f"pairs {n} " in test.status_line and f"LLR {test.llr:+.2f} " in test.status_line
        assert test.pool == "long" and test.games >= 2 * n
        assert test.settings == arena_pb2.SprtSettings(
            mode=arena_pb2.SPRT_MODE_ELO, elo0=0, elo1=400, alpha=0.2, beta=0.2
        )
        assert test.lower_bound == pytest.approx(math.log(0.2 / 0.8))
        assert test.upper_bound == pytest.approx(math.log(0.8 / 0.2))
        if test.decision == arena_pb2.SPRT_DECISION_CONTINUE:
            assert test.decided_at_pairs == 0 and test.lower_bound < test.llr < test.upper_bound
    # The first decision is kept; games still running when it came may add a pair after it.
    decisions = [u.sprt[0].decision for u in updates]
    first = next(n for n, d in enumerate(decisions) if d != arena_pb2.SPRT_DECISION_CONTINUE)
    assert len(set(decisions[first:])) == 1 and len(updates) - first <= 2
    last = updates[first].sprt[0]
    assert last.decided_at_pairs == last.pairs == first + 1
    assert all(u.sprt[0].decided_at_pairs == last.pairs for u in updates[first:])
    accept = {arena_pb2.SPRT_DECISION_ACCEPT_H0: "H0", arena_pb2.SPRT_DECISION_ACCEPT_H1: "H1"}
    assert f"{accept[last.decision]} accepted" in last.status_line
    assert (last.llr >= last.upper_bound) == (last.decision == arena_pb2.SPRT_DECISION_ACCEPT_H1)
    # The decision ended the tournament early; GetStandings reports the test.
    ended = events[-1].tournament_ended
    assert ended.status == arena_pb2.TOURNAMENT_STATUS_FINISHED and ended.standings == final
    assert final.games_played < final.games_total == 40
    [test] = final.sprt
    assert test.decision == last.decision and test.decided_at_pairs == last.pairs
    assert test.pairs >= last.pairs and test.settings == last.settings
    [pairing] = final.pairings
    assert {pairing.bot_a, pairing.bot_b} == set(ids) and pairing.pairs >= last.pairs
    assert pairing.HasField("se") and pairing.ci95_low <= pairing.mean_points <= pairing.ci95_high


@pytest.mark.slow  # an arena server in a subprocess, restarted
def test_standings_survive_a_restart_with_db(
    tmp_path: Path, bot_server: Callable[..., BotServer]
) -> None:
    db = tmp_path / "arena.db"
    records = tmp_path / "games.jsonl"
    server = ArenaServer(Arena(db=db, records_path=records)).start()
    try:
        ids = _register_three(server, bot_server)
        t = server.arena.create_tournament(ids, variant="backgammon", games_per_pairing=2, seed=8)
        assert t.done.wait(60) and not t.error
        before = table_to_proto(server.arena.standings(t.tournament_id))
    finally:
        server.stop(grace=1)
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert len(lines) == 6 and {x["tournament_id"] for x in lines} == {t.tournament_id}
    # A new arena on the same file: the stored tournament's standings, bot names included.
    server = ArenaServer(Arena(db=db)).start()
    try:
        channel, stub = _stub(server)
        with channel:
            after = stub.GetStandings(
                arena_pb2.GetStandingsRequest(tournament_id=t.tournament_id), timeout=5
            )
            with pytest.raises(grpc.RpcError) as info:
                list(
                    stub.WatchTournament(
                        arena_pb2.WatchTournamentRequest(tournament_id=t.tournament_id)
                    )
                )
            assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            with pytest.raises(grpc.RpcError) as info:
                stub.GetStandings(arena_pb2.GetStandingsRequest(tournament_id="nope"), timeout=5)
            assert info.value.code() == grpc.StatusCode.NOT_FOUND
    finally:
        server.stop(grace=1)
    assert after == before
    # ... and the engine's own CLI reads the same database.
    shown = CliRunner().invoke(
        tournament_cli, ["standings", "--db", str(db), "--tournament", t.tournament_id, "--json"]
    )
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    assert data["status"] == "finished" and data["games_stored"] == 6


def test_shutdown_in_the_middle_of_a_tournament(
    tmp_path: Path, bot_server: Callable[..., BotServer]
) -> None:
    db = tmp_path / "arena.db"
    server = ArenaServer(Arena(db=db, time_control=SLOW)).start()
    arena = server.arena
    a = arena.register_server_bot("a", bot_server(RandomBot(1)).address).bot_id
    b = arena.register_server_bot("b", bot_server(RandomBot(2)).address).bot_id
    t = arena.create_tournament(
        [a, b], variant="long", games_per_pairing=200, seed=3, concurrency=2
    )
    ended = threading.Event()
    t.engine.subscribe(lambda e: ended.set() if e.kind == "game_ended" else None)
    assert ended.wait(30)
    server.stop(grace=0.2)
    assert t.done.is_set()
    standings = table_to_proto(arena.standings(t.tournament_id))
    assert standings.status == arena_pb2.TOURNAMENT_STATUS_CANCELLED
    assert 1 <= standings.games_played < 200
    assert t.engine.history[-1].kind == "tournament_ended"
    # Only finished games are stored (an aborted one would be played again on resume).
    with closing(SqliteStore(db, readonly=True)) as store:
        rows = store.games(t.tournament_id)
        assert len(rows) == standings.games_played
        assert all(r.winner is not None for r in rows)
        assert store.tournaments()[0].status == "interrupted"


@pytest.mark.slow  # an arena server in a subprocess
def test_serve_cli_with_db(tmp_path: Path, bot_server: Callable[..., BotServer]) -> None:
    """``nardy arena serve --db FILE`` end to end: a tournament over gRPC, SIGTERM, the file."""
    db = tmp_path / "served.db"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nardy.arena.cli",
            "arena",
            "serve",
            "--port",
            "0",
            "--db",
            str(db),
            "--standings-interval",
            "0",
            "--admin-token-file",
            str(tmp_path / "admin.token"),
            "--allow-private-addresses",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("LISTENING "), line
        address = line.split()[1]
        token = (tmp_path / "admin.token").read_text().strip()
        admin = (("authorization", f"Bearer {token}"),)
        with grpc.insecure_channel(address) as channel:
            stub = arena_pb2_grpc.ArenaServiceStub(channel)
            ids = [
                stub.RegisterBot(
                    arena_pb2.RegisterBotRequest(
                        name=f"b{i}",
                        server=arena_pb2.ServerTransport(address=bot_server(RandomBot(i)).address),
                    ),
                    timeout=10,
                    metadata=admin,
                ).bot_id
                for i in range(2)
            ]
            created = stub.CreateTournament(
                arena_pb2.CreateTournamentRequest(
                    name="served tournament",
                    bot_ids=ids,
                    variant=game_pb2.VariantSpec(name="long"),
                    games_per_pairing=2,
                    seed=1,
                ),
                timeout=10,
                metadata=admin,
            )
            assert created.tournament_id.startswith("served_tournament-")
            last = list(
                stub.WatchTournament(
                    arena_pb2.WatchTournamentRequest(
                        tournament_id=created.tournament_id, replay=True
                    ),
                    timeout=60,
                )
            )[-1]
        assert last.tournament_ended.status == arena_pb2.TOURNAMENT_STATUS_FINISHED
        proc.terminate()
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with closing(SqliteStore(db, readonly=True)) as store:
        assert len(store.games(created.tournament_id)) == 2


# -- 4. bots the engine starts itself; the JavaScript example round robin ------------------------


@pytest.mark.slow  # a bot in a subprocess
def test_command_bot_is_started_and_stopped(store: SqliteStore, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = tmp_path / "bot.py"
    script.write_text(
        "import os, sys\n"
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "from nardy.arena.cli import main\n"
        "sys.argv = ['nardy', 'bot', 'serve', '--builtin', 'random', '--seed', '3']\n"
        "main()\n"
    )
    d = parse_definition(
        {
            "name": "cmd",
            "variant": "backgammon",
            "games": 2,
            "seed": 2,
            "bots": ["heuristic", {"name": "local", "command": [sys.executable, str(script)]}],
        }
    )
    result = Tournament(d, store).run()
    assert result.status == "finished" and result.played == 2
    seat = next(
        r.record["white"] if r.white == "local" else r.record["black"]
        for r in store.games(d.tournament_id, records=True)
        if r.record is not None
    )
    assert seat["kind"] == "command" and seat["endpoint"].startswith("127.0.0.1:")
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        for _ in range(100):
            os.kill(pid, 0)
            time.sleep(0.05)
    bad = parse_definition(
        {
            "name": "bad",
            "variant": "backgammon",
            "bots": ["heuristic", {"name": "x", "command": [str(tmp_path / "no-such-bot")]}],
        }
    )
    with pytest.raises(TournamentError, match="cannot start"):
        Tournament(bad, store).run()


JS_BOT = REPO / "examples" / "bots" / "js"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.skipif(
    not (JS_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir(),
    reason="the JS example bot needs its dependencies: run `npm ci` in examples/bots/js",
)
@pytest.mark.slow  # over 2 s (the fast loop's budget); .ci/run runs it
def test_readme_round_robin_with_the_js_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README example: `nardy arena run examples/round_robin_js.toml` (4 games a pairing)."""
    monkeypatch.chdir(REPO)  # the command in the file is relative to the repository root
    db = tmp_path / "js.db"
    args = ["run", "examples/round_robin_js.toml", "--games", "4", "--quiet", "--db"]
    result = CliRunner().invoke(tournament_cli, [*args, str(db)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "round-robin-js-a0ea4608): finished; 12 games stored" in out
    for text in ("heuristic", "random", "js", "Elo", "±95%", "95% CI", "random vs js"):
        assert text in out, text
    shown = CliRunner().invoke(tournament_cli, ["standings", "--db", str(db), "--json"])
    data = json.loads(shown.stdout)
    pool = data["pools"][0]
    assert {b["bot"] for b in pool["standings"]} == {"heuristic", "random", "js"}
    for bot in pool["standings"]:
        assert bot["games"] == 8 and bot["forfeits"] == 0 and bot["elo_error"] > 0
    for pairing in pool["pairings"]:
        low, high = pairing["ci95"]
        assert pairing["pairs"] == 2 and low <= pairing["mean_points"] <= high
    with closing(SqliteStore(db, readonly=True)) as store:
        for row in store.games(data["tournament_id"], records=True):
            assert row.record is not None and replay_record(row.record).ok
            if "js" in (row.white, row.black):
                seat = row.record["white"] if row.white == "js" else row.record["black"]
                assert seat["kind"] == "command" and seat["bot_name"] == "js-random"
    # The JS bot plays one game at a time: the same command gives the same games.
    again = CliRunner().invoke(tournament_cli, [*args, str(tmp_path / "2.db")])
    assert again.exit_code == 0 and again.stdout == out
