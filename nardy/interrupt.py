"""Ctrl-C that stops a long run between two units of work, not inside one.

Python raises KeyboardInterrupt in whatever Python code runs when the signal is handled, and
code run by the garbage collector (a generator being closed, a ``__del__``) swallows it ("Exception
ignored in …"): a run of a million games interrupted at such a moment went on playing. So the first
Ctrl-C only sets a flag that the run checks between games; a second one interrupts at once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["InterruptFlag", "deferred_interrupt"]


class InterruptFlag:
    """Set by the first Ctrl-C; :meth:`check` raises KeyboardInterrupt once it is set."""

    def __init__(self) -> None:
        self.requested = False

    def check(self) -> None:
        if self.requested:
            raise KeyboardInterrupt

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:  # the second Ctrl-C: the user does not want to wait
            raise KeyboardInterrupt
        self.requested = True


@contextmanager
def deferred_interrupt() -> Iterator[InterruptFlag]:
    """Within the block, Ctrl-C (SIGINT) sets the flag instead of raising; the previous handler
    is restored after. Off the main thread (where signals cannot be handled) the flag stays unset
    and Ctrl-C keeps its usual effect."""
    flag = InterruptFlag()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return
    previous = signal.signal(signal.SIGINT, flag._handle)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)
