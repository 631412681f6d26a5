"""Silencing what C libraries print on file descriptor 1 (gnubg prints its command replies there).

A module of its own, without numpy or the bots, so the benchmark harness can use it too."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

__all__ = ["quiet_stdout"]


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """Point file descriptor 1 at the null device for the block (Python's own ``sys.stdout`` is
    flushed first, so nothing already printed is lost), then restore it."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
