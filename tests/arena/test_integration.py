"""The arena and the tournament engine together: who starts later match games with remote bots,
CreateTournament / GetStandings / WatchTournament on the engine over a real loopback server, the
arena's tournament database (``nardy arena serve --db``), shutdown in the middle of a tournament,
and bots the engine starts itself (``command``)."""

from __future__ import annotations

import itertools
import json
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

from nardy.arena.bot_client import GrpcBotClient
from nardy.arena.protocol import arena_pb2, arena_pb2_grpc, game_pb2
from nardy.arena.runner import Seat, TimeControl, run_game
from nardy.arena.schedule import parse_definition
from nardy.arena.sdk import BotServer, RandomBot, builtin, dial_out
from nardy.arena.server import Arena, ArenaServer, EventTranslator, standings_to_proto
from nardy.arena.storage import SqliteStore
from nardy.arena.tournament import Tournament, TournamentError, replay_record
from nardy.arena.tournament_cli import main as tournament_cli
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
    events = record.kernel["events"]
    # No opening throw: the starter rolls first.
    assert "opening" not in {e["kind"] for e in events}
    assert events[0]["player"] == ("White", "Black")[starter]
    assert default.kernel["events"][0]["kind"] == "opening"


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
    # tournament_started and every game_ended's table arrive as StandingsUpdatedEvent.
    assert kinds[0] == "standings_updated" and counts["standings_updated"] >= 7
    assert kinds[-1] == "tournament_ended" and counts["tournament_ended"] == 1
    first = events[0].standings_updated.standings
    assert first.status == arena_pb2.TOURNAMENT_STATUS_RUNNING and first.games_played == 0
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
        while t.engine._subscribers and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not t.engine._subscribers
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
    standings = arena.standings(t.tournament_id)
    assert standings.status == arena_pb2.TOURNAMENT_STATUS_FINISHED
    assert standings.games_played == standings.games_total == 2  # matches
    rows = arena.store.games(t.tournament_id, records=True)
    assert len(rows) > 2 and {r.record["options"]["match_length"] for r in rows if r.record} == {5}
    assert any(r.record and r.record["setup"]["starter"] is not None for r in rows)


def test_every_engine_event_has_one_message(store: SqliteStore) -> None:
    """sprt_updated and tournament_started have no proto message of their own: they become
    StandingsUpdatedEvents, so event_sequence stays consecutive. Several pools: rows per pool."""
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
        translate = EventTranslator(seed=engine.definition.seed, names={"random": "Random"})
        history = engine.history
        messages = [translate(e) for e in history]
        assert [m.event_sequence for m in messages] == [e.sequence for e in history]
        for event, message in zip(history, messages, strict=True):
            expected = {
                "tournament_started": "standings_updated",
                "sprt_updated": "standings_updated",
            }.get(event.kind, event.kind)
            assert message.WhichOneof("event") == expected
            if event.kind == "sprt_updated":  # the latest table seen on the stream
                previous = messages[messages.index(message) - 1]
                assert message.standings_updated.standings.tournament_id == engine.tournament_id
                assert message.standings_updated.standings.games_played >= (
                    previous.standings_updated.standings.games_played
                    if previous.HasField("standings_updated")
                    else 0
                )
    assert any(e.kind == "sprt_updated" for e in t2.history)
    table = standings_to_proto(t.standings(), seed=1, names={"random": "Random"})
    assert [s.bot_name for s in table.standings] == [
        "heuristic [backgammon]",
        "Random [backgammon]",
        "heuristic [long]",
        "Random [long]",
    ]
    assert table.games_played == table.games_total == 8
    assert table.status == arena_pb2.TOURNAMENT_STATUS_FINISHED


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
        before = server.arena.standings(t.tournament_id)
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
    standings = arena.standings(t.tournament_id)
    assert standings.status == arena_pb2.TOURNAMENT_STATUS_CANCELLED
    assert 1 <= standings.games_played < 200
    assert t.engine.history[-1].kind == "tournament_ended"
    # Only finished games are stored (an aborted one would be played again on resume).
    with closing(SqliteStore(db, readonly=True)) as store:
        rows = store.games(t.tournament_id)
        assert len(rows) == standings.games_played
        assert all(r.winner is not None for r in rows)
        assert store.tournaments()[0].status == "interrupted"


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
        with grpc.insecure_channel(address) as channel:
            stub = arena_pb2_grpc.ArenaServiceStub(channel)
            ids = [
                stub.RegisterBot(
                    arena_pb2.RegisterBotRequest(
                        name=f"b{i}",
                        server=arena_pb2.ServerTransport(address=bot_server(RandomBot(i)).address),
                    ),
                    timeout=10,
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
        assert bot["games"] == 8 and bot["forfeits"] == 0 and bot["elo_ci95"] > 0
    for pairing in pool["pairings"]:
        low, high = pairing["ci95"]
        assert pairing["pairs"] == 2 and low <= pairing["mean"] <= high
    with closing(SqliteStore(db, readonly=True)) as store:
        for row in store.games(data["tournament_id"], records=True):
            assert row.record is not None and replay_record(row.record).ok
            if "js" in (row.white, row.black):
                seat = row.record["white"] if row.white == "js" else row.record["black"]
                assert seat["kind"] == "command" and seat["bot_name"] == "js-random"
    # The JS bot plays one game at a time: the same command gives the same games.
    again = CliRunner().invoke(tournament_cli, [*args, str(tmp_path / "2.db")])
    assert again.exit_code == 0 and again.stdout == out
