"""A person's seat (``human``, :attr:`nardy.bots.base.Bot.interactive`) plays only at its own
terminal: a tournament refuses it before the first game instead of waiting on an input nobody
types (the server's standard input, or a background run's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nardy.cli import cli


@pytest.mark.parametrize("bots", ["human,random", "me=human:heuristic,random"])
def test_a_tournament_refuses_a_human_seat_up_front(tmp_path: Path, bots: str) -> None:
    db = tmp_path / "t.db"
    result = CliRunner().invoke(
        cli,
        ["arena", "run", "--db", str(db), "--variant", "long", "--bots", bots, "--games", "2"],
        input="",
    )
    assert result.exit_code == 2, result.output
    assert "is a person at a terminal" in result.output
    assert "Traceback" not in result.output
