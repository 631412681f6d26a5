"""Smoke tests of the engine-comparison harness (benchmarks/compare_engines.py) on a tiny corpus.

Only the nardy adapter is needed; the reference engines (bgsage, open-spiel, gnubg, gnubg-nn: the
``bench`` extra) are optional, and the harness must skip any that is missing with a note saying why.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from script_modules import load_module

from nardy.core import _engine

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "compare_engines.py"

# Importing any of these raises ImportError once it is None in sys.modules.
ENGINE_MODULES = ("bgbot_cpp", "bgsage", "pyspiel", "gnubg", "gnubg_nn")


@pytest.fixture(scope="module")
def harness() -> ModuleType:
    return load_module("compare_engines", SCRIPT, register=True)


def test_cli_runs_nardy_on_a_tiny_corpus(tmp_path: Path) -> None:
    out = tmp_path / "engines.md"
    raw = tmp_path / "engines.json"
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--engines",
            "nardy",
            "--corpus",
            "oracle",
            "--limit",
            "12",
            "--reps",
            "1",
            "--min-pass-seconds",
            "0",
            "--out",
            str(out),
            "--json",
            str(raw),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert "## Corpus `oracle`: 12 cases" in text
    for label in ("nardy legal_plays", "nardy legal_plays + .results", "nardy segment"):
        assert f"| {label} |" in text
    # Every nardy mode agrees with the oracle (with the compiled generator, the pure one's two
    # modes run beside it).
    assert text.count("| 12/12 |") == len(_nardy_modes())
    assert "By subset and number of distinct legal results" in text
    assert "| doubles |" in text and "| non-doubles |" in text
    assert "--engines nardy" in text  # the exact command is recorded
    assert raw.stat().st_size > 0


def _nardy_modes() -> list[str]:
    """The nardy adapter's modes: the pure generator's run beside the compiled one."""
    modes = ["nardy legal_plays", "nardy legal_plays + .results", "nardy segment"]
    if _engine.KIND == "compiled":
        modes += ["nardy legal_plays (pure)", "nardy segment (pure)"]
    return modes


@pytest.mark.slow  # runs the benchmark harness
def test_missing_engines_are_skipped_with_a_note(
    harness: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ENGINE_MODULES:
        monkeypatch.setitem(sys.modules, name, None)
    report = harness.run(
        engines=("nardy", "bgsage", "open_spiel", "gnubg"),
        corpora=("oracle", "openspiel"),
        reps=1,
        min_pass_seconds=0.0,
        limit=6,
    )
    skipped = dict(report.skipped_engines)
    assert set(skipped) == {"bgsage", "open_spiel", "gnubg"}
    assert "pip install bgsage" in skipped["bgsage"]
    assert "pip install open-spiel" in skipped["open_spiel"]
    assert "pip install gnubg" in skipped["gnubg"]
    assert [name for name, _ in report.skipped_corpora] == ["openspiel"]
    [oracle] = report.corpora
    assert [row.mode.label for row in oracle.rows] == _nardy_modes()
    for row in oracle.rows:
        assert row.agreement is not None and row.agreement.agree == row.agreement.compared == 6
        assert len(row.rates) == 1 and len(row.single_ns) + len(row.doubles_ns) == 6
    text = harness.render(report)
    assert "**Skipped engine `bgsage`**" in text
    assert "**Skipped corpus `openspiel`**" in text


def test_position_key_conversions(harness: ModuleType) -> None:
    engines = importlib.import_module("engines")
    corpus = harness.load_oracle(limit=40)
    for case in corpus.cases:
        mover, opponent = engines.sides_of_json(case.position)
        assert engines.key_of_sides(mover, opponent) == engines.key_of_json(case.position)
        assert engines.key_of_json(engines.json_of_key(engines.key_of_json(case.position))) == (
            engines.key_of_json(case.position)
        )


@pytest.mark.parametrize("name", ["bgsage", "gnubg", "open_spiel"])
def test_installed_engines_agree_on_a_few_cases(harness: ModuleType, name: str) -> None:
    # nardy too: without bgsage and gnubg-nn it is the OpenSpiel corpus's fallback reference.
    engines, skipped = harness.load_engines([name, "nardy"])
    if skipped:
        pytest.skip(f"{name} not usable here: {skipped[0][1]}")
    engines = [engine for engine in engines if engine.name == name or name == "open_spiel"]
    corpus = (
        harness.load_openspiel(8, seed=1) if name == "open_spiel" else harness.load_oracle(limit=30)
    )
    rows, _ = harness.prepare_rows(corpus, engines)
    harness.first_pass(rows, 0.0)
    harness.check_agreement(corpus, rows)
    checked = [row for row in rows if row.mode.results is not None]
    assert checked
    for row in checked:
        assert row.agreement is not None and row.agreement.compared == len(corpus.cases)
        assert row.agreement.agree == row.agreement.compared, row.agreement.mismatches
