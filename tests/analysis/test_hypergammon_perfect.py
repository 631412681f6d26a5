"""``benchmarks/hypergammon_perfect.py``: GNU Backgammon's solved hypergammon, read through nardy's
move generator, is the ceiling the hypergammon figures of docs/bots.md are measured against.

The database is made here by GNU Backgammon's own ``makehyper`` (Debian's ``gnubg``; skipped
without it) for one checker a side, a fraction of a second; the 3-checker file of the figures takes
an hour and 300 MB. The check that matters is the database's own equation replayed by nardy's legal
plays: only a right reading of the file and the same rules give residuals at its threshold.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from nardy.core import load_variant
from tests.script_modules import load_module

ROOT = Path(__file__).resolve().parents[2]
MAKEHYPER = shutil.which("makehyper") or (
    "/usr/games/makehyper" if os.access("/usr/games/makehyper", os.X_OK) else None
)
needs_makehyper = pytest.mark.skipif(
    MAKEHYPER is None, reason="GNU Backgammon's makehyper not found (apt-get install -y gnubg)"
)


@pytest.fixture(scope="module")
def perfect() -> ModuleType:
    return load_module(
        "hypergammon_perfect", ROOT / "benchmarks" / "hypergammon_perfect.py", register=True
    )


@pytest.fixture(scope="module")
def one_checker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert MAKEHYPER is not None
    folder = tmp_path_factory.mktemp("hyper")
    subprocess.run(
        [MAKEHYPER, "-c", "1", "-f", "hyper1.bd"],
        cwd=folder,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=120,
    )
    return folder / "hyper1.bd"


def test_side_ranks_number_every_side_once(perfect: ModuleType) -> None:
    for checkers, count in ((1, 26), (2, 351), (3, 3276)):
        table = perfect.rank_table(checkers)  # raises unless a bijection onto 0..count-1
        assert len(table) == count == perfect.sides(checkers)
        assert table[(0,) * 25] == 0  # every checker off
        assert table[(0,) * 24 + (checkers,)] == count - 1  # every checker on the bar


@needs_makehyper
def test_the_database_is_solved_by_nardys_own_legal_plays(
    perfect: ModuleType, one_checker: Path
) -> None:
    database = perfect.HypergammonDatabase(one_checker)
    variant = load_variant("hypergammon", {"checkers": 1})
    positions = perfect.sample_positions(variant, 300, seed=3)
    residuals = perfect.bellman_residuals(database, variant, positions)
    # makehyper stops at a change of 1e-5; the file rounds each probability to 2^-24.
    assert max(abs(residuals)) < 1e-4
    # One checker on the ace point against one on the opponent's 13: the roller bears off, a
    # gammon (+2). The other way round the roller bears off only with 4-4, 5-5 or 6-6 (3 of 36),
    # else the opponent does next: 2 · 3/36 − 2 · 33/36.
    ace, thirteen = [0] * 25, [0] * 25
    ace[0], thirteen[12] = 1, 1
    assert database.equities([database.index(ace, thirteen)])[0] == pytest.approx(2.0, abs=1e-6)
    assert database.equities([database.index(thirteen, ace)])[0] == pytest.approx(
        2 * 3 / 36 - 2 * 33 / 36, abs=1e-6
    )
    # Against a checker still in the roller's home board (its own 23 point): a backgammon.
    inside = [0] * 25
    inside[22] = 1
    assert database.equities([database.index(ace, inside)])[0] == pytest.approx(3.0, abs=1e-6)


@needs_makehyper
def test_a_misread_database_fails_the_check(
    perfect: ModuleType, one_checker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = perfect.HypergammonDatabase(one_checker)
    variant = load_variant("hypergammon", {"checkers": 1})
    positions = perfect.sample_positions(variant, 300, seed=3)
    # The two sides of a record swapped: the player on roll read as the one who is not.
    swapped = perfect.HypergammonDatabase.index
    monkeypatch.setattr(database, "index", lambda a, b: swapped(database, b, a))
    assert max(abs(perfect.bellman_residuals(database, variant, positions))) > 0.1


@needs_makehyper
def test_the_perfect_bot_plays_hypergammon_of_its_database_only(
    perfect: ModuleType, one_checker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nardy.bots import make_bot, play_game
    from nardy.core.dice import SeededDice
    from nardy.core.game import CubeSettings

    monkeypatch.delenv(perfect.DATABASE_ENV, raising=False)
    with pytest.raises(perfect.DatabaseError, match=perfect.DATABASE_ENV):
        perfect.PerfectBot(0)
    monkeypatch.setenv(perfect.DATABASE_ENV, str(one_checker))
    bot = perfect.PerfectBot(0)
    with pytest.raises(ValueError, match="1-checker hypergammon, not hypergammon with 3"):
        bot.start_game(load_variant("hypergammon"), 0)
    variant = load_variant("hypergammon", {"checkers": 1})
    game = play_game(variant, (bot, make_bot("random", 1)), SeededDice(5), cube=CubeSettings())
    assert game.result is not None


def test_a_file_of_another_kind_is_one_clear_error(perfect: ModuleType, tmp_path: Path) -> None:
    other = tmp_path / "gnubg_os0.bd"
    other.write_bytes(b"gnubg-TS-15-6-1xxxxxxxxxxxxxxxxxxxxxxxxx\n" + bytes(100))
    with pytest.raises(perfect.DatabaseError, match="not a hypergammon database"):
        perfect.HypergammonDatabase(other)
    short = tmp_path / "hyper1.bd"
    short.write_bytes(b"gnubg-H1" + bytes(32 + 28 * 100))
    with pytest.raises(perfect.DatabaseError, match="truncated"):
        perfect.HypergammonDatabase(short)
    with pytest.raises(perfect.DatabaseError, match="cannot read"):
        perfect.HypergammonDatabase(tmp_path / "missing.bd")
