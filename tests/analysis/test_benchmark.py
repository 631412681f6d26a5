"""Benchmark positions (nardy.analysis.benchmark, `nardy benchmark`): generated resumably, read
back, scored; one clear error for a corrupt file or an unknown bot."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nardy.analysis.benchmark import (
    BenchmarkError,
    Entry,
    Labelling,
    benchmark_path,
    generate,
    read_benchmark,
    score,
)
from nardy.cli import cli
from nardy.core.plugins import load_variant

LONG = load_variant("long")
QUICK = Labelling(top=3, target_se=0.5, truncate=1, max_trials=36)
"""A cheap labelling for tests (the shipped files use the defaults)."""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("bench")
    assert generate(LONG, 3, directory=directory, evaluator="heuristic", how=QUICK) == 3
    return directory


def _lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


def test_generation_resumes_where_it_stopped(small: Path, tmp_path: Path) -> None:
    generate(LONG, 1, directory=tmp_path, evaluator="heuristic", how=QUICK)
    assert len(_lines(benchmark_path("long", tmp_path))) == 1
    generate(LONG, 3, directory=tmp_path, evaluator="heuristic", how=QUICK)
    assert _lines(benchmark_path("long", tmp_path)) == _lines(benchmark_path("long", small))


def test_entries_read_back_and_score(small: Path) -> None:
    entries = read_benchmark(LONG, benchmark_path("long", small))
    assert len(entries) == 3
    for entry in entries:
        assert len(entry.rolled) == 3
        assert entry.loss(entry.best) == 0.0
        assert all(entry.loss(i) >= 0.0 for i in range(len(entry.results)))
    found = score(LONG, "heuristic", entries)
    assert found.decisions == 3
    assert found.error_rate >= 0.0 and 0.0 <= found.best_rate <= 1.0


def test_loss_outside_the_rolled_out_plays_is_at_least_the_worst() -> None:
    start = LONG.start_position()
    results = tuple(p.result for p in LONG.legal_plays(start, (6, 5)))
    entry = Entry(
        start,
        (6, 5),
        results,
        search=(0.10, 0.05, -0.40),
        rolled={0: (0.20, 0.01), 1: (0.12, 0.01)},
    )
    assert entry.best == 0
    assert entry.loss(1) == pytest.approx(0.08)
    # Outside the rolled-out plays: its search shortfall (0.5) where that is the larger, else the
    # worst rolled-out loss.
    assert entry.loss(2) == pytest.approx(0.50)


def test_corrupt_file_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "long.jsonl.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(BenchmarkError, match="not a readable gzip"):
        read_benchmark(LONG, bad)
    with gzip.open(bad, "wt") as handle:
        handle.write(json.dumps({"position": "nonsense", "dice": [1, 2]}) + "\n")
    with pytest.raises(BenchmarkError, match=r"long.jsonl.gz:1: not a benchmark decision"):
        read_benchmark(LONG, bad)
    result = CliRunner().invoke(
        cli, ["benchmark", "-v", "long", "--bot", "heuristic", "--file", str(bad)]
    )
    assert result.exit_code != 0 and "not a benchmark decision" in result.output
    assert "Traceback" not in result.output


def test_cli_scores_bots_and_refuses_unknown_ones(small: Path) -> None:
    path = str(benchmark_path("long", small))
    runner = CliRunner()
    bots = ["--bot", "random", "--bot", "heuristic"]
    result = runner.invoke(cli, ["benchmark", "-v", "long", *bots, "--file", path, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [d["bot"] for d in data] == ["random", "heuristic"]
    assert all(d["decisions"] == 3 for d in data)
    result = runner.invoke(cli, ["benchmark", "-v", "long", "--bot", "nonesuch", "--file", path])
    assert result.exit_code != 0 and "--bot" in result.output
    assert len(result.output.strip().splitlines()) <= 3 and "Traceback" not in result.output
    result = runner.invoke(cli, ["benchmark", "-v", "nonesuch", "--bot", "random"])
    assert result.exit_code != 0 and "--variant" in result.output


def test_the_cap_on_trials_is_an_option_of_the_generation(tmp_path: Path) -> None:
    # Khachapuri scores per checker: 36 trials a play are far from the SE target (0.02), so each
    # play stops at the cap.
    path = benchmark_path("khachapuri", tmp_path)
    args = ["benchmark", "-v", "khachapuri", "--generate", "1", "--file", str(path), "-q"]
    result = CliRunner().invoke(cli, [*args, "--max-trials", "36"])
    assert result.exit_code == 0, result.output
    (line,) = _lines(path)
    assert json.loads(line)["trials"] == 36
    refused = CliRunner().invoke(cli, ["benchmark", "--bot", "random", "--max-trials", "72"])
    assert refused.exit_code == 2 and "--max-trials goes with --generate" in refused.output
    too_few = CliRunner().invoke(cli, [*args, "--max-trials", "10"])
    assert too_few.exit_code == 2 and "10 is not in the range x>=36" in too_few.output
