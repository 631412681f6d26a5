"""A variant without a shipped net, for the tests of what cannot be judged by ``neural``.

Every built-in variant ships a net, but a third party's plugin variant need not: the ``neural``
evaluator then fails with one clear error, and a judge falls back to ``heuristic``. These tests
take a built-in variant and hide its weights from the lookup, so the real lookup's own error is
what the code under test meets.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nardy.engines import net


def hide_shipped_net(monkeypatch: pytest.MonkeyPatch, variant_name: str, empty: Path) -> None:
    """Make the shipped-weights lookup find no file for ``variant_name`` (``empty``: an empty
    directory the lookup is pointed at for that variant's files)."""
    lookup = net._weights_file

    def without(name: str) -> Path:
        return empty / name if name.split(".")[0] == variant_name else lookup(name)

    monkeypatch.setattr(net, "_weights_file", without)
