"""Analysis quantities (nardy.analysis.quantities): a registered figure per decision is averaged per
player in one game and over a tournament, written in the JSON and shown in the table and the
spectator's pages; with none registered every output is as before."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from nardy.analysis import quantities as quantities_module
from nardy.analysis.game import DecisionAnalysis
from nardy.analysis.quantities import Quantity, quantities, register_quantity, unregister_quantity
from nardy.cli import cli

MEAN_LOSS = Quantity("mean_loss", "mean loss", lambda d: d.loss if d.counted else None, digits=5)
"""The error rate again, by the extension point: the two must agree to the last digit."""
PLAYS_SEEN = Quantity(
    "plays_seen", "plays", lambda d: float(d.choices) if d.kind == "play" else None, digits=2
)
"""Counts forced plays too (the error rate does not): its count is every play decision."""


@pytest.fixture
def registered() -> Iterator[None]:
    register_quantity(MEAN_LOSS)
    register_quantity(PLAYS_SEEN)
    yield
    unregister_quantity(MEAN_LOSS.name)
    unregister_quantity(PLAYS_SEEN.name)


def _records(tmp_path: Path, games: int = 3) -> Path:
    """Backgammon games of heuristic against random (a table's columns need one, averages over
    games three)."""
    out = tmp_path / "games.jsonl"
    played = CliRunner().invoke(
        cli,
        [
            *("play", "-v", "backgammon", "--bots", "heuristic,random", "--games", str(games)),
            *("--seed", "4", "-o", "cube=false", "--jsonl", str(out), "-q"),
        ],
    )
    assert played.exit_code == 0, played.output
    return out


def _analyze(path: Path, *extra: str) -> Result:
    result = CliRunner().invoke(
        cli, ["analyze", str(path), "--evaluator", "heuristic", "--show", "all", *extra]
    )
    assert result.exit_code == 0, result.output
    return result


def test_a_registered_quantity_is_averaged_per_player_and_over_games(
    tmp_path: Path, registered: None
) -> None:
    report = json.loads(_analyze(_records(tmp_path), "--json").stdout)
    for game in report["games"]:
        for colour, player in game["players"].items():
            values = player["quantities"]
            assert values["mean_loss"] == pytest.approx(player["error_rate"], abs=1e-5)
            plays = [d for d in game["decisions"] if d["kind"] == "play" and d["player"] == colour]
            expected = sum(d["choices"] for d in plays) / len(plays)
            assert values["plays_seen"] == pytest.approx(expected, abs=0.0051)  # 2 digits written
    for bot in report["bots"].values():  # a tournament's mean weighs every decision the same
        assert bot["quantities"]["mean_loss"] == pytest.approx(bot["error_rate"], abs=1e-5)


def test_a_registered_quantity_is_a_column_of_the_table(tmp_path: Path, registered: None) -> None:
    text = _analyze(_records(tmp_path, games=1)).stdout
    assert "mean loss" in text and "plays" in text


def test_without_a_registered_quantity_the_json_is_unchanged(tmp_path: Path) -> None:
    assert quantities() == ()
    report = json.loads(_analyze(_records(tmp_path, games=1), "--json").stdout)
    for game in report["games"]:
        assert all("quantities" not in p for p in game["players"].values())
    assert all("quantities" not in b for b in report["bots"].values())


def test_names_are_checked() -> None:
    with pytest.raises(ValueError, match="lower-case identifier"):
        Quantity("Mean Loss", "x", lambda d: None)
    register_quantity(MEAN_LOSS)
    try:
        register_quantity(MEAN_LOSS)  # the same one again: harmless
        with pytest.raises(ValueError, match="already registered"):
            register_quantity(Quantity("mean_loss", "other", lambda d: 0.0))
    finally:
        unregister_quantity(MEAN_LOSS.name)


class _EntryPoint:
    def __init__(self, value: str) -> None:
        self.value = value


def test_installed_quantities_load_by_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    def entry_points(group: str) -> list[_EntryPoint]:
        assert group == "nardy.analysis_quantities"
        return [_EntryPoint(f"{__name__}:MEAN_LOSS")]

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    quantities_module._installed.cache_clear()
    try:
        assert quantities() == (MEAN_LOSS,)
        monkeypatch.setattr(
            metadata, "entry_points", lambda group: [_EntryPoint(f"{__name__}:_EntryPoint")]
        )
        quantities_module._installed.cache_clear()
        with pytest.raises(ValueError, match=r"is not a nardy\.analysis\.quantities\.Quantity"):
            quantities()
    finally:
        quantities_module._installed.cache_clear()


def test_every_decision_is_offered(registered: None) -> None:
    """The quantity sees forced plays too (the error rate counts only unforced ones)."""
    forced = DecisionAnalysis(1, 0, "play", "id", "24/23", "24/23", 0.0, 0.0, 0.0, False)
    assert MEAN_LOSS.of_decision(forced) is None
    assert PLAYS_SEEN.of_decision(forced) == 1.0
