"""The hostile spectator against the spectator as main had it before rounds were sealed
(commit 521f21d): run by ``test_web_secrecy.py`` with that commit's tree first on the path
(``python hostile_on_main.py TREE``).

Stores one game of a six-game round of a running duplicate-dice tournament, reads every game
id the schedule can have through ``/api/t/ID/g/GAME`` and prints how many of the five unplayed
games' rolls it predicts."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.testclient import TestClient

import nardy.web.app as appmod

# The modules of commit 521f21d, which this script runs against (before the arena's rooms).
from nardy.arena.schedule import build_schedule, parse_definition
from nardy.arena.storage import SqliteStore
from nardy.arena.tournament import Tournament


def _subsequence(short: list[Any], long: list[Any]) -> bool:
    it = iter(long)
    return all(x in it for x in short)


def main(tree: str) -> None:
    assert appmod.__file__ is not None and appmod.__file__.startswith(tree), appmod.__file__
    d = parse_definition(
        {
            "name": "secret",
            "bots": ["heuristic", "random", {"name": "random2", "builtin": "random"}],
            "variant": "backgammon",
            "games": 4,
            "seed": 2026,
        }
    )
    tmp = Path(tempfile.mkdtemp())
    everything = SqliteStore(tmp / "all.db")
    Tournament(d, everything).run()
    rows = everything.games(d.tournament_id, records=True)
    everything.close()
    store = SqliteStore(tmp / "running.db")
    store.open_tournament(d.tournament_id, d.name, d.to_json(), d.identity(), d.total_units)
    store.commit_dice(d.tournament_id, "sha256-v1", "0" * 64, "1" * 64)
    store.set_status(d.tournament_id, "running")
    assert rows[0].record is not None
    store.save_game(rows[0], rows[0].record)
    store.close()
    client = TestClient(appmod.create_app(str(tmp / "running.db")))
    t = quote(d.tournament_id, safe="")
    streams: dict[int, list[tuple[int, ...]]] = {}
    for unit in build_schedule(d):
        answer = client.get(f"/api/t/{t}/g/{quote(unit.game_id(), safe='')}")
        if answer.status_code == 200:
            steps = answer.json()["steps"]
            rolls = [tuple(s["roll"]) for s in steps if s["kind"] == "play" and s["roll"]]
            streams.setdefault(unit.round, rolls)
    hits = 0
    for row in rows[1:6]:
        assert row.record is not None
        actual = [tuple(r) for r in row.record["game"]["rolls"]]
        guess = streams.get(row.round)
        hit = bool(guess) and guess[0] == actual[0] and _subsequence(guess[:10], actual)
        hits += hit
        print(row.game_id, "first roll guessed", guess[0] if guess else None, "->", hit)
    print(f"predicted {hits} of 5 unplayed games")


if __name__ == "__main__":
    main(sys.argv[1])
