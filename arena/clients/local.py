"""Bot processes the arena starts itself, restarted when they crash.

A local bot is a command that runs a ``BotService`` server and announces where it listens with
one line on standard output, ``LISTENING <host>:<port>`` (``nardy bot serve --port 0`` does). The
:class:`LocalBotProcess` supervisor starts it, reads that line, and watches the process: when it
exits unexpectedly it is started again (up to ``max_restarts`` times, with a short backoff) and
the bot's :class:`~nardy.arena.clients.bot_client.GrpcBotClient` is pointed at the new address. Calls that
fail while the bot is down are ordinary ``crash`` faults.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence

__all__ = ["LISTENING_PREFIX", "LocalBotProcess", "LocalBotStartError"]

log = logging.getLogger(__name__)

LISTENING_PREFIX = "LISTENING "
"""The line a local bot prints once it accepts connections: ``LISTENING 127.0.0.1:40123``."""


def _kill_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """prctl(PR_SET_PDEATHSIG, SIGKILL) where the C library has it (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class LocalBotStartError(RuntimeError):
    """The bot process exited or stayed silent before announcing its address."""


class LocalBotProcess:
    """Start ``command``, learn its address, and restart it whenever it dies."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        on_address: Callable[[str], None] | None = None,
        max_restarts: int = 10,
        start_timeout: float = 20.0,
        env: Mapping[str, str] | None = None,
        die_with_parent: bool = False,
    ) -> None:
        """:param env: variables added to this process's environment for the bot's.
        :param die_with_parent: (Linux) the bot gets SIGKILL when the thread that started it
            ends, so a supervisor that is itself killed (e.g. a Ray worker) leaves no orphan."""
        self.command = list(command)
        self.env = None if env is None else {**os.environ, **env}
        self.on_address = on_address
        self.max_restarts = max_restarts
        self.start_timeout = start_timeout
        self.die_with_parent = die_with_parent
        self.restarts = 0
        self.address = ""
        self.restarted = threading.Condition()
        self._proc: subprocess.Popen[str] | None = None
        self._stopping = threading.Event()
        self._watcher: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def start(self) -> str:
        """Start the process; return its address. Raises :class:`LocalBotStartError`."""
        self.address = self._spawn()
        self._watcher = threading.Thread(target=self._watch, name="local-bot", daemon=True)
        self._watcher.start()
        return self.address

    def _spawn(self) -> str:
        proc = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=None,
            env=self.env,
            text=True,
            bufsize=1,
            preexec_fn=_kill_with_parent if self.die_with_parent else None,
        )
        self._proc = proc
        found: list[str] = []

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                if not found and line.startswith(LISTENING_PREFIX):
                    found.append(line[len(LISTENING_PREFIX) :].strip())
            # Keep draining so that a chatty bot never blocks on a full pipe.

        reader = threading.Thread(target=read, name="local-bot-stdout", daemon=True)
        reader.start()
        deadline = time.monotonic() + self.start_timeout
        while not found:
            if self._stopping.is_set():
                self._terminate(proc)
                raise LocalBotStartError(f"{self.command[0]}: stopped while starting")
            if proc.poll() is not None:
                raise LocalBotStartError(
                    f"{self.command[0]} exited with {proc.returncode} before listening"
                )
            if time.monotonic() > deadline:
                proc.kill()
                raise LocalBotStartError(f"{self.command[0]} did not announce its address")
            time.sleep(0.01)
        return found[0]

    def _watch(self) -> None:
        delay = 0.05
        while not self._stopping.is_set():
            proc = self._proc
            assert proc is not None
            code = proc.wait()
            if self._stopping.is_set():
                return
            if self.restarts >= self.max_restarts:
                log.error("local bot %s exited with %s; no restarts left", self.command, code)
                return
            log.warning("local bot %s exited with %s; restarting", self.command, code)
            self._stopping.wait(delay)
            delay = min(delay * 2, 2.0)
            try:
                address = self._spawn()
            except LocalBotStartError as exc:
                log.error("restarting %s failed: %s", self.command, exc)
                continue
            with self.restarted:
                self.restarts += 1
                self.address = address
                if self.on_address is not None:
                    self.on_address(address)
                self.restarted.notify_all()

    def wait_restarted(self, count: int, timeout: float) -> bool:
        """Block until the process has been restarted ``count`` times in all."""
        with self.restarted:
            return self.restarted.wait_for(lambda: self.restarts >= count, timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate the process (SIGTERM, then SIGKILL) and stop restarting it."""
        self._stopping.set()
        self._terminate(self._proc, timeout)
        if self._watcher is not None:
            self._watcher.join(timeout)
        # A restart that was under way when we stopped (e.g. the bot died of the same Ctrl-C).
        self._terminate(self._proc, timeout)

    @staticmethod
    def _terminate(proc: subprocess.Popen[str] | None, timeout: float = 5.0) -> None:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
