"""The arena's read RPCs withhold the games of sealed rounds from callers without the admin
token (``docs/arena.md``, "Spectators and the dice"), as ``nardy web`` does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from nardy.arena.protocol import arena_pb2, arena_pb2_grpc
from nardy.arena.schedule import TournamentDef, parse_definition
from nardy.arena.server import Arena, ArenaServer
from nardy.arena.storage import SqliteStore
from nardy.arena.tournament import Tournament

TOKEN = "a" * 43


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[arena_pb2_grpc.ArenaServiceStub, TournamentDef]]:
    d = parse_definition(
        {"name": "sealed", "bots": ["heuristic", "random"], "variant": "backgammon", "games": 4}
    )
    everything = SqliteStore(":memory:")
    Tournament(d, everything).run()
    rows = everything.games(d.tournament_id, records=True)
    everything.close()
    db = tmp_path / "arena.db"
    store = SqliteStore(db)
    store.open_tournament(d.tournament_id, d.name, d.to_json(), d.identity(), d.total_units)
    store.commit_dice(d.tournament_id, "nardy-dice-v1", "0" * 64, "1" * 64)
    store.set_status(d.tournament_id, "running")
    for row in rows[:3]:  # round 0 (2 games) complete, round 1 begun
        assert row.record is not None
        store.save_game(row, row.record)
    store.close()
    server = ArenaServer(Arena(db=str(db)), admin_token=TOKEN).start()
    channel = grpc.insecure_channel(server.address)
    try:
        yield arena_pb2_grpc.ArenaServiceStub(channel), d
    finally:
        channel.close()
        server.stop(0)


ADMIN = (("authorization", f"Bearer {TOKEN}"),)


def test_games_of_a_sealed_round_are_withheld(running: tuple[object, TournamentDef]) -> None:
    stub, d = running
    assert isinstance(stub, arena_pb2_grpc.ArenaServiceStub)
    request = arena_pb2.ListGamesRequest(tournament_id=d.tournament_id)
    public = stub.ListGames(request, timeout=10)
    admin = stub.ListGames(request, timeout=10, metadata=ADMIN)
    assert [g.game_id for g in admin.games][-1].endswith(":0002a")
    assert {g.game_id for g in public.games} == {g.game_id for g in admin.games[:2]}
    get = arena_pb2.GetStandingsRequest(tournament_id=d.tournament_id)
    assert stub.GetStandings(get, timeout=10).games_played == 2
    assert stub.GetStandings(get, timeout=10, metadata=ADMIN).games_played == 3
    (listed,) = stub.ListTournaments(arena_pb2.ListTournamentsRequest(), timeout=10).tournaments
    assert listed.games_played == 2
    export = stub.ExportGames(arena_pb2.ExportGamesRequest(tournament_id=d.tournament_id))
    with pytest.raises(grpc.RpcError) as refused:
        list(export)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
