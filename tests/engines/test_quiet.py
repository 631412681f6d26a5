"""quiet_stdout silences file descriptor 1 and always gives it back, even when threads overlap."""

from __future__ import annotations

import os
import threading

from nardy.quiet import quiet_stdout


def _target_of_fd1() -> tuple[int, int]:
    stat = os.fstat(1)
    return stat.st_dev, stat.st_ino


def test_overlapping_blocks_in_two_threads_restore_stdout() -> None:
    before = _target_of_fd1()
    null = os.stat(os.devnull)
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[tuple[int, int]] = []

    def first() -> None:
        with quiet_stdout():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def second() -> None:
        a_in.wait(5)
        with quiet_stdout():
            b_in.set()
            a_out.wait(5)  # the first block has ended: stdout must still be silenced
            seen.append(_target_of_fd1())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [(null.st_dev, null.st_ino)]
    assert _target_of_fd1() == before  # the last block to leave gave the real stdout back
