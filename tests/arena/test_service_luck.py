"""A luck-adjusted SPRT through the arena service (``SprtSettings.input``): asked for in
CreateTournament, refused where it cannot run, reported by GetStandings for a live tournament
and, through the store's ledger, for a stored one."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest
from google.protobuf.duration_pb2 import Duration

from nardy.arena.competition.schedule import DefinitionError, parse_definition
from nardy.arena.competition.sprt_luck import LuckAdjuster
from nardy.arena.competition.standings import standings_from_store
from nardy.arena.competition.stats import Sprt
from nardy.arena.protocol import arena_pb2, arena_pb2_grpc, game_pb2
from nardy.arena.sdk import BotServer, RandomBot, builtin
from nardy.arena.service.server import ArenaServer
from nardy.arena.service.servicer import sprt_settings_from_proto, sprt_settings_to_proto

LUCK = arena_pb2.SprtSettings(
    mode=arena_pb2.SPRT_MODE_POINTS,
    mu0=0.0,
    mu1=0.5,
    alpha=0.2,
    beta=0.2,
    input=arena_pb2.SPRT_INPUT_LUCK_ADJUSTED,
)


def _definition(sprt: arena_pb2.SprtSettings, **more: object) -> dict[str, object]:
    return {
        "bots": ["heuristic", "random"],
        "variant": "backgammon",
        "sprt": sprt_settings_from_proto(sprt),
        **more,
    }


def test_sprt_input_round_trips_through_the_definition() -> None:
    d = parse_definition(_definition(LUCK))
    assert d.sprt is not None and d.sprt.on == "luck-adjusted"
    assert sprt_settings_to_proto(d.sprt).input == arena_pb2.SPRT_INPUT_LUCK_ADJUSTED
    points = arena_pb2.SprtSettings(mode=arena_pb2.SPRT_MODE_POINTS, mu0=0, mu1=0.5)
    d = parse_definition(_definition(points))  # not set: points, as before the field existed
    assert d.sprt is not None and d.sprt.on == "points"
    assert sprt_settings_to_proto(d.sprt).input == arena_pb2.SPRT_INPUT_POINTS


@pytest.mark.parametrize(
    ("settings", "more", "message"),
    [
        (arena_pb2.SprtSettings(elo0=0, elo1=50, input=2), {}, "mode = points"),
        (LUCK, {"match_length": 3}, "money games, not matches"),
        (arena_pb2.SprtSettings(mode=2, mu0=0, mu1=0.5, input=7), {}, "'SprtInput 7'"),
    ],
)
def test_bad_sprt_inputs_are_refused_by_name(
    settings: arena_pb2.SprtSettings, more: dict[str, object], message: str
) -> None:
    with pytest.raises(DefinitionError, match=message):
        parse_definition(_definition(settings, **more))


def test_create_tournament_refuses_a_luck_adjusted_match(
    server: ArenaServer, bot_server: Callable[..., BotServer]
) -> None:
    arena = server.arena
    ids = [
        arena.register_server_bot(name, bot_server(RandomBot(seed)).address).bot_id
        for name, seed in (("x", 1), ("y", 2))
    ]
    with grpc.insecure_channel(server.address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            stub.CreateTournament(
                arena_pb2.CreateTournamentRequest(bot_ids=ids, match_length=3, sprt=LUCK),
                timeout=5,
            )
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "luck-adjusted SPRT runs on money games" in (info.value.details() or "")


@pytest.mark.slow  # four games played and analysed
def test_a_luck_adjusted_sprt_over_grpc(
    server: ArenaServer, bot_server: Callable[..., BotServer]
) -> None:
    arena = server.arena
    strong = arena.register_server_bot("strong", bot_server(builtin("heuristic", 1)).address)
    weak = arena.register_server_bot("weak", bot_server(RandomBot(2)).address)
    with grpc.insecure_channel(server.address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        created = stub.CreateTournament(
            arena_pb2.CreateTournamentRequest(
                name="luck",
                bot_ids=[strong.bot_id, weak.bot_id],
                variant=game_pb2.VariantSpec(name="backgammon"),
                games_per_pairing=4,
                seed=5,
                concurrency=2,
                time_control=arena_pb2.TimeControl(per_decision=Duration(seconds=10)),
                sprt=LUCK,
            ),
            timeout=5,
        )
        request = arena_pb2.WatchTournamentRequest(tournament_id=created.tournament_id, replay=True)
        events = list(stub.WatchTournament(request, timeout=300))
        final = stub.GetStandings(
            arena_pb2.GetStandingsRequest(tournament_id=created.tournament_id), timeout=5
        )
    assert events[-1].HasField("tournament_ended")
    [test] = final.sprt
    assert test.settings.input == arena_pb2.SPRT_INPUT_LUCK_ADJUSTED
    # Fed the games' luck-adjusted points (not their points), pair by pair in schedule order.
    rows = sorted(arena.store.games(created.tournament_id, records=True), key=lambda r: r.unit_id)
    luck = LuckAdjuster()
    expected = Sprt.for_points(0.0, 0.5, 0.2, 0.2, max_points=3.0, model="normal")
    points = Sprt.for_points(0.0, 0.5, 0.2, 0.2, max_points=3.0)
    for i in range(0, 2 * test.pairs, 2):
        expected.update(luck.a_points(rows[i]), luck.a_points(rows[i + 1]))
        points.update(rows[i].a_points, rows[i + 1].a_points)
    assert test.pairs == expected.n > 0
    assert test.llr == pytest.approx(expected.llr, abs=1e-9)
    assert test.llr != pytest.approx(points.llr)
    # The store's ledger keeps the same test: what GetStandings reads after a restart.
    stored = standings_from_store(arena.store, created.tournament_id).pools[0].sprt
    assert stored is not None and stored.pairs == test.pairs
    assert stored.llr == pytest.approx(test.llr, abs=1e-9)
