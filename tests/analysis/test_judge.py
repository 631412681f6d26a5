"""The strongest judge by default (issue 37): `nardy analyze` judges with the strongest evaluator
available for each variant, says which, and warns when a bot is judged by its own net."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from shipped_nets import hide_shipped_net

from nardy.cli import cli as main
from nardy.core import load_variant
from nardy.engines.evaluator import judges_itself, strongest_evaluator

HAS_GNUBG = importlib.util.find_spec("gnubg") is not None


def test_backgammon_is_judged_by_gnubg_where_installed_else_by_the_shipped_net() -> None:
    expected = "gnubg" if HAS_GNUBG else "neural"
    assert strongest_evaluator(load_variant("backgammon")) == expected


def test_a_variant_with_a_shipped_net_is_judged_by_it_and_one_without_by_the_heuristic(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert strongest_evaluator(load_variant("long")) == "neural"
    assert strongest_evaluator(load_variant("hypergammon")) == "neural"
    hide_shipped_net(monkeypatch, "hypergammon", tmp_path)  # as a plugin variant without a net
    assert strongest_evaluator(load_variant("hypergammon")) == "heuristic"


@pytest.mark.parametrize(
    ("bot", "evaluator", "itself"),
    [
        ("neural", "neural", True),
        ("neural:1", "neural", True),  # a deeper search over the same net
        ("neural", "heuristic", False),
        ("neural", "neural-consistent", False),
        ("heuristic", "neural", False),
        ("neural:/tmp/a.npz", "neural", False),
        ("neural", "neural:/tmp/a.npz", False),
        ("neural:/tmp/a.npz", "neural:/tmp/a.npz", True),
        ("neural:1:/tmp/a.npz", "neural:/tmp/a.npz", True),  # a search over the file's net
        ("neural:1:/tmp/a.npz", "neural", False),
        ("neural:1:/tmp/a.npz", "neural:/tmp/b.npz", False),
        ("gnubg", "gnubg", True),  # GNU Backgammon's net, as backgammon's judge
        ("gnubg:2", "gnubg", True),
        ("gnubg", "neural", False),
        ("neural", "gnubg", False),
    ],
)
def test_which_bot_plays_by_the_judges_net(bot: str, evaluator: str, itself: bool) -> None:
    assert judges_itself(bot, evaluator) is itself


def _games(tmp_path: Path, variant: str, bots: str) -> Path:
    out = tmp_path / "games.jsonl"
    args = ["play", "-q", "-v", variant, "--bots", bots, "--games", "1", "--seed", "3"]
    result = CliRunner().invoke(main, [*args, "--jsonl", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_analyze_names_its_judge_and_warns_when_a_bot_is_judged_by_its_own_net(
    tmp_path: Path,
) -> None:
    games = _games(tmp_path, "long", "neural,heuristic")
    result = CliRunner().invoke(main, ["analyze", str(games), "--show", "none"])
    assert result.exit_code == 0, result.output
    assert "judged by neural" in result.output
    assert "warning: neural is judged by its own net" in result.output
    # Judged by another evaluator: no warning.
    result = CliRunner().invoke(
        main, ["analyze", str(games), "--show", "none", "--evaluator", "heuristic"]
    )
    assert result.exit_code == 0, result.output
    assert "judged by heuristic" in result.output and "warning" not in result.output


def test_analyze_json_says_which_evaluator_judged(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hide_shipped_net(monkeypatch, "hypergammon", tmp_path / "no-nets")
    games = _games(tmp_path, "hypergammon", "heuristic,random")
    result = CliRunner().invoke(main, ["analyze", str(games), "--json", "--show", "none"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["evaluator"] == "heuristic"
