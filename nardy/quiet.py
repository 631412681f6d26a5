"""Silencing what C libraries print on file descriptor 1 (gnubg prints its command replies there).

A module of its own, without numpy or the bots, so the benchmark harness can use it too."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

__all__ = ["quiet_stdout"]

# File descriptor 1 is the process's, not a thread's: blocks that overlap in several threads share
# one redirection, made by the first to enter and undone by the last to leave. (Each saving and
# restoring its own would let a late one "restore" the null device for good.)
_lock = threading.Lock()
_depth = 0
_saved = -1


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """Point file descriptor 1 at the null device for the block (Python's own ``sys.stdout`` is
    flushed first, so nothing already printed is lost), then restore it."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            sys.stdout.flush()
            _saved = os.dup(1)
            with open(os.devnull, "w") as devnull:
                os.dup2(devnull.fileno(), 1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                os.dup2(_saved, 1)
                os.close(_saved)
