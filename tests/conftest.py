"""Shared pytest configuration: make the helpers in tests/ importable (``import rules_cases``), and
keep the default run fast.

Tests marked ``slow`` (browser, Ray cluster, gnubg cross-checks, training, servers started in
subprocesses, long property runs) are left out of a plain ``pytest`` run, which then says how many
it left out. ``pytest --all`` runs everything, ``pytest -m slow`` only those; ``.ci/run`` runs
the slow ones after the README's test command. Naming tests (``tests/x.py::test_y``) or giving
``-m`` runs what was asked for.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from pathlib import Path

import pytest

# Single-threaded BLAS in every test process, as the engines ask for it (nardy.engines.blas): that
# counts only before numpy is first imported, and a test module importing numpy before nardy left
# each xdist worker's BLAS waking threads on cores the other worker is using (measured with two
# processes on two cores: the rollout and net-fitting tests 3 to 4 times slower).
from nardy.engines import blas  # noqa: F401  # isort: skip

# The collector's thresholds of the ``nardy`` command (nardy.collector), so that the tests run
# the code as the command does (and the suite takes about a sixth less CPU).
from nardy import collector  # isort: skip

collector.tune()

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

_LEFT_OUT = pytest.StashKey[int]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--all",
        action="store_true",
        default=False,
        help="also run the tests marked slow (left out by default; .ci/run runs them)",
    )


def _runs_slow_tests(config: pytest.Config) -> bool:
    """Whether the slow tests stay: asked for with --all or -m, or tests named by node id."""
    named = any("::" in str(arg) for arg in config.args)
    return bool(config.getoption("--all") or config.getoption("markexpr") or named)


@pytest.hookimpl(wrapper=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> Generator[None, int, int]:
    """``-n auto``: one worker more than xdist counts cores for. Some tests wait on servers,
    subprocesses and threads (the arena's venue, the spectator's long polls, the terminal player);
    an extra worker runs while they wait. Measured on the 2-core machine, the same CPU: 69 s with
    3 workers against 74 s with 2. A count given in ``PYTEST_XDIST_AUTO_NUM_WORKERS`` is kept."""
    import os

    cores = yield
    return cores if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") else cores + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _runs_slow_tests(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]
    config.stash[_LEFT_OUT] = len(slow)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    config = terminalreporter.config
    if config.pluginmanager.hasplugin("dsession") and not _runs_slow_tests(config):
        # pytest-xdist: the workers collect, so the count is theirs; say it all the same.
        terminalreporter.write_line(
            "slow tests left out: `pytest --all` runs every test, `pytest -m slow` those "
            "(.ci/run runs them after this command)"
        )
        return
    left_out = config.stash.get(_LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(
            f"{left_out} slow test{'' if left_out == 1 else 's'} left out: `pytest --all` runs every test, `pytest -m slow` "
            "those (.ci/run runs them after this command)"
        )
