"""Tournament databases for the spectator's tests, made by the real engine."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
from named_bots import NAMED_BOTS

from nardy.arena.competition.schedule import definition_from_flags
from nardy.arena.competition.tournament import PythonPlayer, Tournament
from nardy.arena.records.storage import open_store
from nardy.bots import make_bot
from nardy.core import game_variant_names

HOSTILE_NAME = "<script>alert(1)</script>"
HOSTILE_COMMENT = '<img src=x onerror="alert(2)">equity +0.5'


@pytest.fixture(scope="session")
def hostile() -> tuple[str, str]:
    """The hostile bot name and comment stored in the ``hostile`` tournament."""
    return HOSTILE_NAME, HOSTILE_COMMENT


@pytest.fixture(scope="session")
def finished_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished round robin over every variant that plays single games (2 games each), a
    tavli round robin (matches to 3 whose games cycle portes → plakoto → fevga, RULES.md
    §3.12.3), plus a tournament with one game whose bots sent hostile text (a remote bot's name
    and comment are its own)."""
    path = tmp_path_factory.mktemp("spectator") / "arena.db"
    store = open_store(str(path))
    try:
        d = definition_from_flags(
            variants=game_variant_names(),
            bots="heuristic,random",
            games=2,
            seed=5,
            name="every-variant",
        )
        assert Tournament(d, store).run().status == "finished"
        source = store.games(d.tournament_id, records=True)[0]
        tavli = definition_from_flags(
            variants=["tavli"], bots="heuristic,random", games=2, seed=7, name="tavli",
            match_length=3,
        )  # fmt: skip
        assert Tournament(tavli, store).run().status == "finished"
        hostile = definition_from_flags(
            variants=[source.pool], bots="heuristic,random", games=2, seed=9, name="hostile"
        )
        tournament_id = "hostile-0001"
        store.open_tournament(tournament_id, "hostile", hostile.to_json(), {"id": 1}, 2)
        record = copy.deepcopy(source.record)
        assert record is not None
        record["tournament_id"] = tournament_id
        record["white"]["name"] = HOSTILE_NAME
        record["decisions"][0]["info"] = {"comment": HOSTILE_COMMENT, "values": {"<b>": "</td>"}}
        record["faults"]["white"]["timeout"] = 1
        record["decisions"][0]["fault"] = {"kind": "timeout", "message": "<i>late</i>"}
        record["decisions"][0]["fallback"] = True
        store.save_game(
            dataclasses.replace(source, record=None, tournament_id=tournament_id), record
        )
        store.set_status(tournament_id, "finished")
    finally:
        store.close()
    return path


class _NamedPlayer(PythonPlayer):
    """A built-in bot whose id is not its name, as an arena server's are (``local-heur``)."""

    def __init__(self, bot_id: str, name: str, builtin: str) -> None:
        super().__init__(bot_id, lambda seed: make_bot(builtin, seed))
        self.shown = name

    def info(self) -> dict[str, str]:
        return {**super().info(), "name": self.shown}


@pytest.fixture(scope="session")
def named_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Backgammon matches to 5 (with the cube) between bots whose ids (``local-heur``) are not
    their names (``heur``), as in a tournament an arena server runs."""
    path = tmp_path_factory.mktemp("named") / "arena.db"
    store = open_store(str(path))
    try:
        d = definition_from_flags(
            variants=["backgammon"],
            bots="local-heur=heuristic,local-rnd=random",
            games=2,
            seed=11,
            name="served",
            match_length=5,
        )
        players = {
            bot_id: _NamedPlayer(bot_id, name, "heuristic" if "heur" in bot_id else "random")
            for bot_id, name in NAMED_BOTS.items()
        }
        assert Tournament(d, store, players=players, executor="inline").run().status == "finished"
    finally:
        store.close()
    return path
