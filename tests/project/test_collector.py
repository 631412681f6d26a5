"""The ``nardy`` command starts with the collector's thresholds (nardy.collector); importing nardy
does not change them."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from nardy import collector
from nardy.cli import main


def test_the_command_sets_the_collectors_thresholds() -> None:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # Python's defaults (the tests' processes are tuned already)
    try:
        with pytest.raises(SystemExit):
            main(["--version"])
        assert gc.get_threshold() == collector.THRESHOLDS
    finally:
        gc.set_threshold(*before)


def test_importing_nardy_leaves_a_programs_collector_alone() -> None:
    code = (
        "import gc; gc.set_threshold(1234, 5, 6); "
        "import nardy.cli, nardy.analysis.rollout, nardy.engines.search; "
        "print(gc.get_threshold())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "(1234, 5, 6)"
