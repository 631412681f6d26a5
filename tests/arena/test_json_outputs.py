"""The arena's JSON outputs match their shipped schemas (nardy.schemas), share one vocabulary
with the protos, write none of the old names 0.2.0 removed, and a tournament row is the same
JSON wherever tournaments are listed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from nardy.arena.protocol import arena_pb2
from nardy.arena.records.rows import tournament_json
from nardy.arena.records.storage import open_store
from nardy.cli import cli
from nardy.schemas import schema


def _check(name: str, instance: object) -> None:
    jsonschema.Draft202012Validator(schema(name)).validate(instance)


def _json(*args: str) -> Any:
    done = CliRunner().invoke(cli, ["arena", *args])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two tournaments: money games with an SPRT, and 1-point matches (a match pool)."""
    path = tmp_path_factory.mktemp("arena-json") / "arena.db"
    runs = (
        ("--variant", "backgammon", "--games", "4", "--seed", "1", "--sprt", "0,50"),
        ("--variant", "long", "--games", "2", "--match-length", "1", "--seed", "2"),
    )
    for flags in runs:
        ran = _json(
            "run", "--db", str(path), "--bots", "heuristic,random", "--quiet", "--json", *flags
        )
        _check("arena-standings", ran)
        # run --json and standings --json print one shape: the same object.
        assert (
            _json("standings", "--db", str(path), "--json", "--tournament", ran["tournament_id"])
            == ran
        )
    return path


def test_standings_match_the_schema_and_the_protos_names(db: Path) -> None:
    listed = _json("standings", "--db", str(db), "--list", "--json")
    pools = []
    for row in listed:
        data = _json("standings", "--db", str(db), "--json", "--tournament", row["tournament_id"])
        _check("arena-standings", data)
        assert data["dice"]["revealed"] and data["dice"]["seed"] is not None
        pools += data["pools"]
    assert {p["match_length"] for p in pools} == {None, 1}
    assert any(p["sprt"] is not None for p in pools)
    pairing_fields = set(arena_pb2.PairingResult.DESCRIPTOR.fields_by_name)
    standing_fields = set(arena_pb2.Standing.DESCRIPTOR.fields_by_name)
    for pool in pools:
        for pairing in pool["pairings"]:
            canonical = set(pairing)
            # The proto's names; `units` is its `games`, `ci95` its ci95_low/ci95_high.
            assert canonical - {"units", "ci95"} <= pairing_fields, canonical - pairing_fields
            assert pairing["wins_a"] + pairing["wins_b"] + pairing["draws"] == pairing["units"]
        for bot in pool["standings"]:
            assert "elo_error" in standing_fields
            if bot["elo_se"] is not None:
                assert bot["elo_error"] == pytest.approx(1.96 * bot["elo_se"], abs=1e-3)


OLD_KEYS = {"elo_ci95", "a", "b", "a_wins", "b_wins", "a_net_points", "mean", "se_independent"}
"""The standings' keys before they took the protos' names, written as aliases until 0.2.0
(CHANGELOG.md): gone from the output and from the schema."""


def test_the_old_keys_are_gone(db: Path) -> None:
    data = _json("standings", "--db", str(db), "--json")
    rows = [*data["pools"][0]["standings"], *data["pools"][0]["pairings"]]
    assert rows and all(OLD_KEYS.isdisjoint(row) and "method" not in row for row in rows)
    defs = schema("arena-standings")["$defs"]
    for kind in ("bot", "pairing"):
        assert OLD_KEYS.isdisjoint(defs[kind]["properties"])
        assert not any(spec.get("deprecated") for spec in defs[kind]["properties"].values())
    _check("arena-standings", data)


def test_one_tournament_row_everywhere(db: Path) -> None:
    listed = _json("standings", "--db", str(db), "--list", "--json")
    _check("arena-tournaments", listed)
    assert {r["unit"] for r in listed} == {"games", "matches"}
    store = open_store(str(db), readonly=True)
    try:
        assert listed == [tournament_json(r) for r in store.tournaments()]
    finally:
        store.close()
    pytest.importorskip("starlette", reason="the web extra is not installed")
    pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the dev extra)")
    from starlette.testclient import TestClient

    from nardy.web.app import create_app

    with TestClient(create_app(str(db))) as client:
        assert client.get("/api/tournaments").json() == listed


def test_verify_matches_the_schema(db: Path) -> None:
    report = _json("verify", "--db", str(db), "--json")
    _check("arena-verify", report)
    assert report["ok"] and report["problems"] == [] and report["games"] > 0
    store = open_store(str(db), readonly=True)
    try:
        game = store.games(report["tournament_id"])[0].game_id
    finally:
        store.close()
    one = _json("replay", game, "--db", str(db), "--tournament", report["tournament_id"], "--json")
    _check("arena-verify", one)
    assert one["ok"] and one["games"] == 1


@pytest.mark.slow  # analyses every stored game with the neural evaluator
def test_standings_with_analysis_match_the_schema(db: Path) -> None:
    listed = _json("standings", "--db", str(db), "--list", "--json")
    money = next(r for r in listed if r["unit"] == "games")
    data = _json(
        "standings", "--db", str(db), "--json", "--analysis", "--tournament", money["tournament_id"]
    )
    _check("arena-standings", data)
    assert data["analysis"]["pools"][0]["games"] == money["games_stored"]


def _ci95_values(data: Any) -> list[tuple[str, Any]]:
    """Every ``…ci95`` key in ``data`` (nested), with its value."""
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key.endswith("ci95"):
                found.append((key, value))
            found += _ci95_values(value)
    elif isinstance(data, list):
        for item in data:
            found += _ci95_values(item)
    return found


def test_an_interval_is_a_pair_in_the_arena_and_in_nardy_play(db: Path) -> None:
    """One vocabulary: ``…ci95`` is ``[low, high]`` in the arena's JSON as in ``nardy play``'s."""
    standings = _json("standings", "--db", str(db), "--json")
    done = CliRunner().invoke(cli, ["play", "-v", "long", "--games", "3", "--seed", "1", "--json"])
    assert done.exit_code == 0, done.output
    found = _ci95_values(standings) + _ci95_values(json.loads(done.stdout))
    assert {key for key, _ in found} >= {"ci95", "win_rate_ci95", "points_ci95"}
    for key, value in found:
        assert isinstance(value, list) and len(value) == 2, (key, value)
        low, high = value
        assert low is None or high is None or low <= high, (key, value)
