"""A bot process that crashes (exits abruptly) in the middle of its first game.

Usage: python crashing_bot.py MARKER_FILE CRASH_AFTER. The process serves a random bot and
prints ``LISTENING host:port``; on decision CRASH_AFTER it creates MARKER_FILE and exits with
status 3 without answering. A restarted process finds the marker and plays normally.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from nardy.arena.protocol import bot_pb2
from nardy.arena.sdk import RandomBot, serve_bot


class Crasher(RandomBot):
    def __init__(self, marker: Path, crash_after: int) -> None:
        super().__init__(0)
        self.marker = marker
        self.crash_after = crash_after
        self.calls = 0

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
        self.calls += 1
        if self.calls >= self.crash_after and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os._exit(3)
        return super().choose_play(request)


def main() -> None:
    marker, crash_after = Path(sys.argv[1]), int(sys.argv[2])
    server = serve_bot(Crasher(marker, crash_after))
    print(f"LISTENING {server.address}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
