"""The ``gnubg`` module, called on the one thread that imported it.

gnubg's Python module sets up per-thread state when it is imported: its move search
(``findbestmoves``) dies with a segmentation fault in any other thread (gnubg 1.1.0a16: imported
on the main thread, called from a worker thread, or the reverse). nardy calls bots from worker
threads (``nardy bot serve``, the arena's game threads, the spectator's analysis pages), so every
call goes to one dedicated thread that imports the module and makes all the calls; callers wait
for their answer. gnubg is not thread-safe anyway, so nothing is lost by serialising.

The state belongs to the thread of the *first* import. When something imported ``gnubg`` before
nardy did (a script's own ``import gnubg``), that thread is unknown, and calls are made on the
caller's thread as the module itself would be used.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable
from concurrent import futures
from typing import Any, TypeVar

__all__ = ["GnubgModule", "gnubg_module"]

T = TypeVar("T")


class GnubgModule:
    """A stand-in for the module: ``proxy.evaluate(...)`` runs ``gnubg.evaluate(...)`` on the
    gnubg thread and returns its result (or raises its exception)."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._executor: futures.ThreadPoolExecutor | None
        if "gnubg" in sys.modules:  # imported elsewhere first: its own thread has the state
            self._module: Any = sys.modules["gnubg"]
            self._executor = None
            return
        self._executor = futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="gnubg")
        try:
            self._module = self._executor.submit(self._import).result()
        except BaseException:
            self._executor.shutdown(wait=False)
            raise

    def _import(self) -> Any:
        self._thread = threading.current_thread()
        return importlib.import_module("gnubg")

    def call(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` on the gnubg thread (directly when already on it)."""
        if self._executor is None or threading.current_thread() is self._thread:
            return function(*args)
        return self._executor.submit(function, *args).result()

    def with_module(self, function: Callable[[Any], T]) -> T:
        """``function(gnubg)`` on the gnubg thread, given the module itself: many calls in one
        hand-over (a hand-over costs some 100 µs, gnubg's 0-ply evaluation a few)."""
        result: T = self.call(function, self._module)
        return result

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):  # not the module's: an attribute this object lacks
            raise AttributeError(name)
        function = getattr(self._module, name)
        return lambda *args: self.call(function, *args)


_lock = threading.Lock()
_module: GnubgModule | None = None


def gnubg_module() -> GnubgModule:
    """The process's one :class:`GnubgModule` (ImportError when gnubg is not installed)."""
    global _module
    with _lock:
        if _module is None:
            _module = GnubgModule()
        return _module
