"""``nardy arena standings --analysis``: each bot's error rate and luck-adjusted points per game."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from shipped_nets import hide_shipped_net

from nardy.arena.competition.schedule import definition_from_flags
from nardy.arena.competition.tournament import Tournament
from nardy.arena.records.storage import open_store
from nardy.cli import cli as main
from nardy.core import load_variant
from nardy.engines.evaluator import strongest_evaluator


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Backgammon and hypergammon, heuristic against random."""
    path = tmp_path_factory.mktemp("analysed") / "arena.db"
    store = open_store(str(path))
    try:
        for variant, seed in (("backgammon", 5), ("hypergammon", 6)):
            d = definition_from_flags(
                variants=[variant], bots="heuristic,random", games=2, seed=seed, name=variant
            )
            assert Tournament(d, store).run().status == "finished"
    finally:
        store.close()
    return path


def _tournament(db: Path, name: str) -> str:
    store = open_store(str(db), readonly=True)
    try:
        return next(t.tournament_id for t in store.tournaments() if t.name == name)
    finally:
        store.close()


@pytest.mark.slow  # over 2 s (the fast loop's budget); .ci/run runs it
def test_the_analysis_agrees_with_the_standings(db: Path) -> None:
    tid = _tournament(db, "backgammon")
    args = ["arena", "standings", "--db", str(db), "--tournament", tid, "--json", "--analysis"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    judge = strongest_evaluator(load_variant("backgammon"))  # the default: the strongest
    assert out["analysis"]["evaluator"] == judge and out["analysis"]["ply"] == 0
    [pool] = out["analysis"]["pools"]
    assert pool["judge"] == judge and pool["self_judged"] == []
    assert pool["variant"] == "backgammon" and pool["games"] == 2
    bots = pool["bots"]
    # The raw points per game are the arena's own count of the same games.
    for row in out["pools"][0]["standings"]:
        assert bots[row["bot"]]["points_per_game"] == pytest.approx(row["ppg"])
        assert bots[row["bot"]]["games"] == row["games"]
    # Luck-adjusted: net points minus one's luck plus the opponent's, per game.
    a, b = bots["heuristic"], bots["random"]
    assert a["luck_adjusted_per_game"] == pytest.approx(
        a["points_per_game"] - a["luck_per_game"] + b["luck_per_game"], abs=1e-4
    )
    assert a["luck_adjusted_per_game"] == pytest.approx(-b["luck_adjusted_per_game"], abs=1e-4)
    assert a["error_rate"] >= 0 and a["pr"] == pytest.approx(500 * a["error_rate"], abs=0.01)
    table = CliRunner().invoke(main, [*args[:-2], "--analysis"])
    assert table.exit_code == 0 and "luck-adjusted/game" in table.output
    assert (
        "error rate" in table.output and f"backgammon: analysis (judged by {judge}" in table.output
    )
    assert "??/?/?!" in table.output  # the marks column, as `nardy analyze` shows it


@pytest.mark.parametrize(
    ("name", "evaluator", "words"),
    [
        ("hypergammon", "neural", "no shipped neural weights for variant 'hypergammon'"),
        ("backgammon", "nonesuch", "unknown evaluator 'nonesuch'"),
    ],
)
def test_what_cannot_be_analysed_is_a_clear_error(
    db: Path,
    name: str,
    evaluator: str,
    words: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    hide_shipped_net(monkeypatch, "hypergammon", tmp_path)  # as a plugin variant without a net
    tid = _tournament(db, name)
    result = CliRunner().invoke(
        main,
        [
            "arena",
            "standings",
            "--db",
            str(db),
            "--tournament",
            tid,
            "--analysis",
            "--evaluator",
            evaluator,
        ],
    )
    assert result.exit_code == 1 and "cannot analyse the games" in result.output
    assert words in result.output and "Traceback" not in result.output


def test_a_bot_judged_by_its_own_net_is_named_under_the_table(tmp_path: Path) -> None:
    """The spectator's complaint: ``neural`` graded by ``neural``'s own net shows PR 0.0 and
    ranks first; the table says so instead of passing it as skill."""
    path = tmp_path / "arena.db"
    store = open_store(str(path))
    try:
        d = definition_from_flags(
            variants=["long"], bots="neural,heuristic", games=1, seed=3, name="long"
        )
        assert Tournament(d, store).run().status == "finished"
    finally:
        store.close()
    tid = _tournament(path, "long")
    args = ["arena", "standings", "--db", str(path), "--tournament", tid, "--analysis"]
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    [pool] = json.loads(result.output)["analysis"]["pools"]
    assert pool["judge"] == "neural" and pool["self_judged"] == ["neural"]
    table = CliRunner().invoke(main, args)
    assert "neural: judged by its own net" in table.output
    other = CliRunner().invoke(main, [*args, "--evaluator", "heuristic"])
    assert other.exit_code == 0 and "judged by its own net" not in other.output
