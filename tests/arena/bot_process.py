"""A bot program run as a child process whose output lines the test reads as they come."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence


class BotProcess:
    """Start ``command``; collect its stdout and stderr lines (merged) in a thread."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            text=True,
            bufsize=1,
        )
        self.lines: list[str] = []
        self._new: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            self._new.put(line)

    def wait_for(self, pattern: str, count: int = 1, timeout: float = 20.0) -> list[str]:
        """Wait until ``count`` lines match ``pattern`` (re.search); return the matching lines."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            found = [line for line in self.lines if regex.search(line)]
            if len(found) >= count:
                return found
            if not self._reader.is_alive() and self._new.empty():
                raise AssertionError(
                    f"the bot exited ({self.proc.wait()}) before {count} lines matched "
                    f"{pattern!r}; output:\n" + "\n".join(self.lines)
                )
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no {count} lines matching {pattern!r} within {timeout}s; output:\n"
                    + "\n".join(self.lines)
                )
            with contextlib.suppress(queue.Empty):
                self._new.get(timeout=0.1)

    def stop(self) -> int:
        """SIGTERM (then SIGKILL after 5 s) by this process's id; the exit status."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._reader.join(5)
        return self.proc.wait()
