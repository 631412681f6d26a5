"""The hostile spectator: during a running duplicate-dice tournament it reads everything
``nardy web`` serves and tries to predict the rolls of the games not yet played."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'nardy[web]'")
pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the dev extra)")

from starlette.testclient import TestClient

from nardy.arena.competition.schedule import TournamentDef, build_schedule, parse_definition
from nardy.arena.competition.tournament import Tournament
from nardy.arena.records.storage import GameRow, SqliteStore
from nardy.arena.service import public
from nardy.web.app import create_app

ROUND_0 = 6
"""Round 0 of the pool: 3 pairings x 2 legs, all on one dice stream."""


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[TournamentDef, list[GameRow]]:
    """Every game of the tournament, played in advance (what the dice will be)."""
    d = parse_definition(
        {
            "name": "secret",
            "bots": ["heuristic", "random", {"name": "random2", "builtin": "random"}],
            "variant": "backgammon",
            "games": 4,
            "seed": 2026,
        }
    )
    store = SqliteStore(tmp_path_factory.mktemp("all") / "all.db")
    Tournament(d, store).run()
    rows = store.games(d.tournament_id, records=True)
    dice = store.dice(d.tournament_id)
    store.close()
    assert len(rows) == 12 and dice is not None
    return d, rows


def _running(path: Path, d: TournamentDef, rows: list[GameRow], stored: int) -> Path:
    """The database of the tournament running, its first ``stored`` games played."""
    store = SqliteStore(path)
    store.open_tournament(d.tournament_id, d.name, d.to_json(), d.identity(), d.total_units)
    store.commit_dice(d.tournament_id, "sha256-v1", "0" * 64, "1" * 64)  # not revealed
    store.set_status(d.tournament_id, "running")
    for row in rows[:stored]:
        assert row.record is not None
        store.save_game(row, row.record)
    store.close()
    return path


def _rolls_of(record: dict[str, Any]) -> list[tuple[int, int]]:
    return [tuple(r) for r in record["game"]["rolls"]]  # type: ignore[misc]


def hostile_spectator(client: TestClient, d: TournamentDef) -> dict[int, list[tuple[int, int]]]:
    """Reads every public page and JSON, asks for every game the schedule can have (ids are
    public: pool, pairing, round, leg), and returns the roll sequence it believes each round's
    dice stream to be (the rolls of the plays of any game of that round it could read)."""
    t = quote(d.tournament_id, safe="")
    seen: list[str] = []
    for url in ("/", "/api/tournaments", f"/t/{t}", f"/api/t/{t}", f"/t/{t}/games"):
        seen.append(client.get(url).text)
    listed = client.get(f"/api/t/{t}/games").json()["games"]
    units = [u.unit_id for u in build_schedule(d)]
    for unit in units:  # the match pages (a unit is a one-game match here)
        for prefix in ("", "/api"):
            seen.append(client.get(f"{prefix}/t/{t}/m/{quote(unit, safe='')}").text)
    guesses = {g["game_id"] for g in listed} | set(units)
    streams: dict[int, list[tuple[int, int]]] = {}
    for game_id in sorted(guesses):
        page = client.get(f"/t/{t}/g/{quote(game_id, safe='')}")
        seen.append(page.text)
        answer = client.get(f"/api/t/{t}/g/{quote(game_id, safe='')}")
        if answer.status_code != 200:
            continue
        steps = answer.json()["steps"]
        rolls = [tuple(s["roll"]) for s in steps if s["kind"] == "play" and s["roll"]]
        round_no = int(re.search(r":(\d{4})[ab]$", game_id).group(1)) - 1  # type: ignore[union-attr]
        streams.setdefault(round_no, rolls)
    hostile_spectator.seen = seen  # type: ignore[attr-defined]
    return streams


def _is_subsequence(short: list[Any], long: list[Any]) -> bool:
    it = iter(long)
    return all(item in it for item in short)


def _predicts(streams: dict[int, list[tuple[int, int]]], unplayed: list[GameRow]) -> bool:
    """Whether the spectator's streams predict every unplayed game's rolls: its next (first)
    roll, and a run of at least ten later ones in order (a game's plays skip the turns without
    a choice, so what it read is a subsequence of the stream)."""
    for row in unplayed:
        assert row.record is not None
        guess, actual = streams.get(row.round), _rolls_of(row.record)
        if not guess or guess[0] != actual[0]:
            return False
        if len(guess) < 10 or not _is_subsequence(guess[:10], actual):
            return False
    return True


@pytest.fixture
def one_played(tmp_path: Path, played: tuple[TournamentDef, list[GameRow]]) -> Iterator[Any]:
    d, rows = played
    db = _running(tmp_path / "running.db", d, rows, stored=1)
    with TestClient(create_app(str(db))) as client:
        yield client, d, rows


def test_the_hostile_spectator_cannot_predict_the_next_roll(one_played: Any) -> None:
    client, d, rows = one_played
    unplayed = [r for r in rows[1:ROUND_0]]
    assert {r.round for r in rows[:ROUND_0]} == {0}
    streams = hostile_spectator(client, d)
    assert streams == {} and not _predicts(streams, unplayed)
    # Nothing else served holds a roll either (e.g. a record embedded in a page).
    for text in hostile_spectator.seen:  # type: ignore[attr-defined]
        assert '"rolls"' not in text and '"roll"' not in text
    # Nor do counts or times tell that a game ended: the tournament looks untouched.
    (listed,) = client.get("/api/tournaments").json()
    assert listed["games_stored"] == 0 and listed["updated"] == listed["created"]
    t = quote(d.tournament_id, safe="")
    standings = client.get(f"/api/t/{t}").json()
    assert standings["games_stored"] == 0 and standings["units_done"] == 0
    assert all(b["games"] == 0 for p in standings["pools"] for b in p["standings"])
    assert client.get(f"/api/t/{t}/games").json()["count"] == 0
    # A sealed game answers exactly as a game that does not exist.
    sealed = client.get(f"/api/t/{t}/g/{quote(rows[0].game_id, safe='')}")
    missing = client.get(f"/api/t/{t}/g/{quote('backgammon:nobody~none:0001a', safe='')}")
    assert sealed.status_code == missing.status_code == 404
    assert sealed.json()["error"].replace(rows[0].game_id, "X") == missing.json()["error"].replace(
        "backgammon:nobody~none:0001a", "X"
    )


def test_the_same_spectator_predicts_every_roll_without_the_seal(
    one_played: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Today's main served every stored game (issue 25: at 1 of 6 games played, the game's
    JSON gave every roll of the 5 others): with the seal lifted, the same spectator reads the
    played game and predicts the unplayed games' rolls — the leak it closes was real."""
    monkeypatch.setattr(public.PublicView, "shows", lambda self, game: True)
    client, d, rows = one_played
    streams = hostile_spectator(client, d)
    assert _predicts(streams, rows[1:ROUND_0])


def test_a_round_is_shown_once_complete(
    tmp_path: Path, played: tuple[TournamentDef, list[GameRow]]
) -> None:
    d, rows = played
    db = _running(tmp_path / "running.db", d, rows, stored=ROUND_0 + 2)
    with TestClient(create_app(str(db))) as client:
        streams = hostile_spectator(client, d)
        assert set(streams) == {0}  # round 0 is public, round 1's two games are not
        assert not _predicts(streams, rows[ROUND_0 + 2 :])
        t = quote(d.tournament_id, safe="")
        assert client.get(f"/api/t/{t}").json()["games_stored"] == ROUND_0
        (listed,) = client.get("/api/tournaments").json()
        assert listed["updated"] == max(r.finished for r in rows[:ROUND_0])
        shown = {g["game_id"] for g in client.get(f"/api/t/{t}/games").json()["games"]}
        assert shown == {r.game_id for r in rows[:ROUND_0]}


def test_a_finished_tournament_shows_everything(
    tmp_path: Path, played: tuple[TournamentDef, list[GameRow]]
) -> None:
    d, rows = played
    db = _running(tmp_path / "done.db", d, rows, stored=len(rows) - 1)
    store = SqliteStore(db)
    store.reveal_dice(d.tournament_id, d.seed)  # the seed is public: so is every roll
    store.set_status(d.tournament_id, "stopped")
    store.close()
    with TestClient(create_app(str(db))) as client:
        t = quote(d.tournament_id, safe="")
        assert client.get(f"/api/t/{t}/games").json()["count"] == len(rows) - 1
        record = json.loads(json.dumps(rows[-2].record))
        answer = client.get(f"/api/t/{t}/g/{quote(rows[-2].game_id, safe='')}")
        assert answer.status_code == 200 and answer.json()["result"] == record["result"]


@pytest.mark.slow
def test_main_before_the_seal_gave_every_roll_away(tmp_path: Path) -> None:
    """The leak was real: the same hostile reading, against the spectator of commit 521f21d
    (the tree before this work, its packages laid out as an install would), predicts the
    rolls of all five unplayed games of the round."""
    repo = Path(__file__).resolve().parents[2]
    old = tmp_path / "old"
    old.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "521f21d"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    for package in ("core", "arena", "variants"):  # nardy.core <- core/ etc. (setup.py)
        (old / "nardy" / package).symlink_to(old / package)
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("hostile_on_main.py")), str(old)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(old), "NARDY_MOVEGEN": "pure"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "predicted 5 of 5 unplayed games" in done.stdout, done.stdout
