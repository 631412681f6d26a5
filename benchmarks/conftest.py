"""Fixtures of the move-generation benchmarks (built once per session, before any timing)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from movegen_corpus import OracleCase, game_corpus, load_oracle

from nardy.core import load_variant
from nardy.core.position import Position


@pytest.fixture(scope="session")
def oracle_cases() -> list[OracleCase]:
    return load_oracle()


_corpora: dict[str, list[tuple[Position, tuple[int, ...]]]] = {}


@pytest.fixture(scope="session")
def variant_corpus() -> Callable[[str], list[tuple[Position, tuple[int, ...]]]]:
    """``variant_corpus(name)``: the positions of 6 seeded random games of that variant."""

    def get(name: str) -> list[tuple[Position, tuple[int, ...]]]:
        if name not in _corpora:
            _corpora[name] = game_corpus(load_variant(name), games=6)
        return _corpora[name]

    return get
