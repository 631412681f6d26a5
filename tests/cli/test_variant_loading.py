"""Every command loads a variant by name with options one way (``nardy.cli_options.load_variant``,
``one_game_variant``): an unknown variant, a bad option and a match variant where one game's
rules are needed are each one clear error line on the option (or argument) that gave it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result

from nardy.cli import cli

OPENING = ["4HPwATDgc/ABMA", "--dice", "3", "1", "--trials", "2", "--truncate", "0"]
COMMANDS = {
    "rollout": (["rollout", *OPENING, "-v"], "'--variant'"),
    "benchmark": (["benchmark", "--bot", "random", "-v"], "'--variant'"),
    "check-variant": (["check-variant"], "'NAME'"),
}


def _one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    return errors[0]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_unknown_variant(command: str) -> None:
    args, hint = COMMANDS[command]
    line = _one_error_line(CliRunner().invoke(cli, [*args, "no-such-variant"]))
    assert f"Invalid value for {hint}" in line
    assert "no-such-variant" in line


@pytest.mark.parametrize("command", ["rollout", "check-variant"])
def test_a_bad_option(command: str) -> None:
    args, _ = COMMANDS[command]
    line = _one_error_line(CliRunner().invoke(cli, [*args, "backgammon", "-o", "cube=maybe"]))
    assert "Invalid value for '-o'" in line


@pytest.mark.parametrize("command", ["rollout", "benchmark"])
def test_a_match_variant_names_its_games(command: str) -> None:
    args, _ = COMMANDS[command]
    line = _one_error_line(CliRunner().invoke(cli, [*args, "tavli"]))
    assert "tavli is a match of portes → plakoto → fevga" in line
    assert "(--variant portes)" in line
