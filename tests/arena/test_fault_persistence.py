"""Fault counts and disqualifications outlive a restart of the arena server (arena_faults)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import grpc

from nardy.arena.protocol import arena_pb2, arena_pb2_grpc, bot_pb2
from nardy.arena.records.storage import open_store
from nardy.arena.sdk import RandomBot, serve_bot
from nardy.arena.service.core import Arena
from nardy.arena.service.registry import Registry
from nardy.arena.service.rpc_errors import ArenaClosedError
from nardy.arena.service.server import ArenaServer
from nardy.bots.faults import FaultPolicy
from nardy.bots.loop import TimeControl


class OneBadAnswerPerGame(RandomBot):
    """Answers an index past the legal plays on its first decision of every game."""

    def __init__(self) -> None:
        super().__init__(0)
        self.games: set[str] = set()

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
        game = request.context.game_id
        if game not in self.games:
            self.games.add(game)
            return len(request.context.legal_plays) + 7
        return super().choose_play(request)


def _listed(server: ArenaServer) -> dict[str, tuple[int, bool]]:
    """``name -> (faults, disqualified)`` as a client sees them (ListBots over gRPC)."""
    with grpc.insecure_channel(server.address) as channel:
        bots = arena_pb2_grpc.ArenaServiceStub(channel).ListBots(arena_pb2.ListBotsRequest())
    return {b.name: (b.faults, b.disqualified) for b in bots.bots}


def _serve(db: Path) -> ArenaServer:
    # A generous clock: only the bad answers may be faults, even on a loaded machine.
    clock = TimeControl(per_decision=10.0, reserve=0.0, slack=1.0)
    arena = Arena(time_control=clock, policy=FaultPolicy(on_fault="random", max_faults=3), db=db)
    return ArenaServer(arena).start()


def test_a_restarted_server_keeps_counting_faults(tmp_path: Path) -> None:
    """One illegal answer per game (``on_fault=random`` plays on): two games, restart, one more
    game reaches ``max_faults=3``; after another restart the bot is still disqualified."""
    db = tmp_path / "arena.db"
    bad, good = serve_bot(OneBadAnswerPerGame()), serve_bot(RandomBot(3))
    try:
        server = _serve(db)
        try:
            faulty = server.arena.register_server_bot("faulty", bad.address, unique=True)
            healthy = server.arena.register_server_bot("healthy", good.address, unique=True)
            for seed in (1, 2):
                record = server.arena.play_game(faulty.bot_id, healthy.bot_id, seed=seed)
                assert record.faults[0]["illegal"] == 1
            assert faulty.faults.total == 2 and not faulty.faults.disqualified
        finally:
            server.stop(grace=0.5)

        server = _serve(db)  # a new process would read the same file
        try:
            assert _listed(server)["faulty"] == (2, False)
            entry = server.arena.bot_by_name_or_id("faulty")
            assert entry.faults.to_json()["illegal"] == 2
            server.arena.play_game(entry.bot_id, "healthy", seed=3)
            assert entry.faults.total == 3 and entry.faults.disqualified
        finally:
            server.stop(grace=0.5)

        server = _serve(db)
        try:
            assert _listed(server)["faulty"] == (3, True)
            assert _listed(server)["healthy"] == (0, False)
            try:
                server.arena.start_game("faulty", "healthy", seed=4)
            except ArenaClosedError as exc:
                assert "disqualified" in str(exc)
            else:
                raise AssertionError("a disqualified bot got a new game after a restart")
        finally:
            server.stop(grace=0.5)
    finally:
        bad.stop(0)
        good.stop(0)


def test_a_database_of_an_earlier_version_gains_the_table(tmp_path: Path) -> None:
    """A database written before fault counts were kept (no ``arena_faults``) opens, and counts."""
    db = tmp_path / "old.db"
    Arena(db=db).shutdown(0)
    with sqlite3.connect(db) as connection:
        connection.execute("DROP TABLE arena_faults")
    connection.close()
    store = open_store(str(db))
    try:
        registry = Registry(store)  # what the arena does on start
        assert registry.faults() == {}
        registry.save_faults("b", {"timeout": 2, "illegal": 1}, False)
        registry.save_faults("b", {"timeout": 3, "illegal": 1}, True)
        stored = registry.faults()["b"]
        assert (stored.counts, stored.disqualified) == ({"timeout": 3, "illegal": 1}, True)
    finally:
        store.close()
