"""The arena's CreateTournament for the tavli match (RULES.md §3.12.3): a match variant needs a
match length, and a bot that declares its variants is scheduled only if it plays every game of
the cycle (it lists ``tavli``, or all of portes, plakoto and fevga); a single arena game of tavli
is refused. Each refusal is INVALID_ARGUMENT with a message naming the fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from nardy.arena.protocol import arena_pb2, arena_pb2_grpc, game_pb2
from nardy.arena.sdk import BotServer, RandomBot
from nardy.arena.service.server import ArenaServer
from nardy.core.errors import MatchVariantError


class _Declaring(RandomBot):
    def __init__(self, variants: tuple[str, ...]) -> None:
        super().__init__(1)
        self.variants = variants


def _create(server: ArenaServer, ids: list[str], length: int) -> grpc.RpcError | None:
    with grpc.insecure_channel(server.address) as channel:
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        request = arena_pb2.CreateTournamentRequest(
            bot_ids=ids,
            variant=game_pb2.VariantSpec(name="tavli"),
            games_per_pairing=1,
            match_length=length,
            seed=3,
        )
        try:
            stub.CreateTournament(request, timeout=5)
        except grpc.RpcError as exc:
            return exc
    return None


@pytest.mark.parametrize(
    ("declared", "length", "message"),
    [
        ((), 0, "tavli is played only as a match (portes → plakoto → fevga): give a match_length"),
        (("portes", "plakoto"), 3, "does not play tavli: it lists portes, plakoto; a tavli match"),
        (("backgammon",), 3, "missing: portes, plakoto, fevga"),
    ],
)
def test_refusals(
    server: ArenaServer,
    bot_server: Callable[..., BotServer],
    declared: tuple[str, ...],
    length: int,
    message: str,
) -> None:
    arena = server.arena
    a = arena.register_server_bot("a", bot_server(_Declaring(declared)).address).bot_id
    b = arena.register_server_bot("b", bot_server(RandomBot(2)).address).bot_id
    error = _create(server, [a, b], length)
    assert error is not None
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert message in error.details()  # type: ignore[attr-defined]


@pytest.mark.parametrize("declared", [("tavli",), ("fevga", "plakoto", "portes", "long"), ()])
def test_bots_that_play_the_whole_cycle_are_scheduled(
    server: ArenaServer, bot_server: Callable[..., BotServer], declared: tuple[str, ...]
) -> None:
    arena = server.arena
    a = arena.register_server_bot("a", bot_server(_Declaring(declared)).address).bot_id
    b = arena.register_server_bot("b", bot_server(RandomBot(2)).address).bot_id
    assert _create(server, [a, b], 1) is None
    for t in list(arena.tournaments.values()):
        t.engine.stop()
        assert t.done.wait(30)


def test_a_single_arena_game_of_tavli_is_refused(
    server: ArenaServer, bot_server: Callable[..., BotServer]
) -> None:
    arena = server.arena
    a = arena.register_server_bot("a", bot_server(RandomBot(1)).address).bot_id
    b = arena.register_server_bot("b", bot_server(RandomBot(2)).address).bot_id
    with pytest.raises(MatchVariantError, match="tavli is a match of portes → plakoto → fevga"):
        arena.start_game(a, b, variant="tavli")


def test_the_engine_refuses_an_endpoint_bot_that_lists_too_few_variants(
    bot_server: Callable[..., BotServer], tmp_path: Path
) -> None:
    """`nardy arena run` with a bot server: its GetInfo variants are read when it is opened, and a
    tavli pool needs tavli or all three game variants listed."""
    from nardy.arena.competition.schedule import TournamentError, definition_from_flags
    from nardy.arena.competition.tournament import Tournament
    from nardy.arena.records.storage import SqliteStore

    short = bot_server(_Declaring(("portes", "plakoto"))).address
    whole = bot_server(_Declaring(("tavli",))).address
    store = SqliteStore(tmp_path / "t.db")
    try:
        for address, refused in ((short, True), (whole, False)):
            d = definition_from_flags(
                variants=["tavli"], bots=f"random,sdk={address}", games=1, seed=4,
                match_length=1, name=f"declared-{refused}",
            )  # fmt: skip
            if refused:
                with pytest.raises(TournamentError, match="missing: fevga"):
                    Tournament(d, store, executor="inline").run()
            else:
                assert Tournament(d, store, executor="inline").run().status == "finished"
    finally:
        store.close()


def test_a_plakoto_draw_is_followed_by_an_opening_throw(tmp_path: Path) -> None:
    """RULES.md §3.12.2: "after a draw, a new opening throw". Seed 3 of two random bots has a
    plakoto draw (game 2 of a unit) followed by the fevga game: it starts without a starter, and
    ``nardy arena verify`` finds the whole run as the rules make it (the engine used to carry the
    draw on as a White win for 0 points, so White started the next game)."""
    from nardy.arena.competition.schedule import parse_definition
    from nardy.arena.competition.tournament import Tournament
    from nardy.arena.records.storage import SqliteStore
    from nardy.arena.records.verify import verify_store

    bots = [{"name": "r1", "builtin": "random"}, {"name": "r2", "builtin": "random"}]
    data = {"name": "t", "bots": bots, "variant": "tavli", "match_length": 3, "games": 4, "seed": 3}
    d = parse_definition(data)
    store = SqliteStore(tmp_path / "t.db")
    Tournament(d, store).run()
    rows = store.games(d.tournament_id, records=True)
    after_draw = [
        next_row
        for row in rows
        if row.record is not None and row.record["result"]["termination"] == "draw"
        for next_row in rows
        if next_row.unit_id == row.unit_id and next_row.game_no == row.game_no + 1
    ]
    assert after_draw, "seed 3 has no game after a draw any more: pick another seed"
    for row in after_draw:
        assert row.record is not None and row.record["variant"] == "fevga"
        assert row.record["setup"]["starter"] is None
    report = verify_store(store, d.tournament_id)
    assert report.ok, report.problems
    store.close()
