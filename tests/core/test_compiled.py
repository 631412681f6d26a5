"""The compiled move generator (setup.py, mypyc) against its Python source, and the run-time choice
between them (nardy.core._engine, ``NARDY_MOVEGEN``).

The pure generator is the reference. When the loaded ``nardy.core.movegen`` is the compiled one,
the source is loaded beside it under another name and both answer the same segments: every
variant and option set, all three searches, start and random-game positions, and the oracle; the
answers must be identical (results, dice used, order and representative steps). CI also runs the
whole test suite once with each (``NARDY_MOVEGEN=pure``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import ModuleType
from typing import Any

import pytest
from test_oracle import ALL_DICE, _cases, _oracle_cases, _steps, _variant_id, _variants

import nardy.core.movegen
from nardy.core import _engine, load_variant
from nardy.core.position import Position

REFERENCE = "nardy_movegen_reference"


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    if not _engine.is_compiled(nardy.core.movegen):
        pytest.skip(f"the Python source is loaded ({_engine.DETAIL}): nothing to compare it with")
    return sys.modules.get(REFERENCE) or _engine.load_source(REFERENCE)


def _answer(generator: Any, position: Position, steps: tuple[int, ...]) -> tuple[Any, ...]:
    segment = generator.segment(position, steps)
    return segment.dice_used, list(segment.plays.items())


def test_the_choice_is_what_is_loaded() -> None:
    """``nardy --version`` reports :data:`_engine.KIND`; it is the module really loaded."""
    loaded = "compiled" if _engine.is_compiled(nardy.core.movegen) else "pure"
    assert loaded == _engine.KIND
    assert sys.modules[_engine.MODULE] is nardy.core.movegen
    assert _engine.source_path().is_file()


@pytest.mark.parametrize(
    ("name", "options"), _variants(), ids=[_variant_id(n, o) for n, o in _variants()]
)
def test_compiled_gives_the_sources_answers(
    reference: ModuleType, name: str, options: dict[str, Any]
) -> None:
    variant = load_variant(name, options)
    searches = [{}, {"fast": False}]
    if variant.generator.ordered:
        searches.append({"shortcuts": False})
    count = 0
    for kwargs in searches:
        compiled = nardy.core.movegen.MoveGenerator(variant.rules, **kwargs)
        pure = reference.MoveGenerator(variant.rules, **kwargs)
        for position, steps in _cases(variant, games=2, per_position=6, seed=5):
            count += 1
            assert _answer(compiled, position, steps) == _answer(pure, position, steps), (
                f"{position.id()} {steps} {kwargs}"
            )
    assert count > 2 * 2 * len(ALL_DICE)


def test_compiled_gives_the_sources_answers_on_the_oracle(reference: ModuleType) -> None:
    variant = load_variant("backgammon")
    pure = reference.MoveGenerator(variant.rules)
    for case in _oracle_cases():
        position = Position.from_json(case["position"])
        steps = _steps(case["dice"])
        assert _answer(variant.generator, position, steps) == _answer(pure, position, steps), case[
            "id"
        ]


def _kind_with(value: str) -> subprocess.CompletedProcess[str]:
    code = "from nardy.core import _engine; print(_engine.KIND, _engine.DETAIL, sep='|')"
    env = {**os.environ, _engine.ENVIRONMENT: value}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )


def test_environment_loads_the_source() -> None:
    """``NARDY_MOVEGEN=pure`` loads the Python source even where the extension is installed."""
    done = _kind_with("pure")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "pure|Python source; NARDY_MOVEGEN=pure"


def test_environment_requires_the_extension() -> None:
    """``NARDY_MOVEGEN=compiled`` loads the extension, or refuses to import without one."""
    done = _kind_with("compiled")
    if _engine.extension_path() is not None:
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("compiled|mypyc, movegen."), done.stdout
    else:
        assert done.returncode != 0
        assert "NARDY_MOVEGEN=compiled" in done.stderr, done.stderr


def test_the_compiled_build_has_the_c_batch_generator() -> None:
    """The build that compiles the generator also builds ``nardy.core._batchgen`` (setup.py), which
    ``nardy.core.batch`` uses unless ``NARDY_MOVEGEN=pure``."""
    from nardy.core import batch

    if _engine.extension_path() is None:
        pytest.skip("a pure install: no extension is built")
    import nardy.core._batchgen  # type: ignore[import-not-found]  # noqa: F401

    pure = os.environ.get(_engine.ENVIRONMENT, "").strip().lower() == "pure"
    assert (batch.NATIVE is None) == pure


def test_environment_value_is_checked() -> None:
    done = _kind_with("fast")
    assert done.returncode != 0
    assert "NARDY_MOVEGEN must be 'pure', 'compiled' or unset, not 'fast'" in done.stderr


@pytest.mark.parametrize(
    "obj",
    [
        {"points": [2, 0, 0, 0, 0, -5, 0, -3, 0, 0, 0, 5, -5, 0, 0, 0, 3, 0, 5, 0, 0, 0, 0, -2]},
        {"points": [0] * 23 + [15], "bar": [0, 0], "off": [0, 15]},
        {"points": [0] * 23 + [15], "bar": [0, 0], "off": [0, 14]},
        {"points": [True] + [0] * 22 + [14], "off": [0, 15]},
        {"points": [0] * 24, "bar": [15, 15], "off": [0, 0], "state": None},
        {"points": [0] * 24, "bar": [15, 15], "off": [0, 0], "other": None},
        {"points": [0] * 24, "bar": [15, 15.0], "off": [0, 0]},
        [0] * 24,
    ],
)
def test_compiled_reads_position_json_as_the_source_does(reference: ModuleType, obj: Any) -> None:
    for checkers in (None, 15, 14):
        assert nardy.core.movegen.position_from_json(obj, checkers) == reference.position_from_json(
            obj, checkers
        )


@pytest.mark.parametrize(
    "dice",
    [
        (3, 1),
        [3, 1],
        (4, 4),
        (4, 4, 4, 4),
        [2, 2, 2],
        (6,),
        (),
        (1, 7),
        (3, 1, 2),
        (2, 2, 3),
        (3.0, 1),
        (True, 3),
        "31",
        None,
    ],
)
def test_compiled_checks_dice_as_the_source_does(reference: ModuleType, dice: Any) -> None:
    variant = load_variant("backgammon")
    pure = reference.MoveGenerator(variant.rules)
    start = variant.start_position()
    compiled = variant.generator.checked_segment(start, dice)
    source = pure.checked_segment(start, dice)
    assert (compiled is None) == (source is None)
    if compiled is not None and source is not None:
        assert compiled.dice == source.dice == tuple(dice)
        assert list(compiled.plays.items()) == list(source.plays.items())
