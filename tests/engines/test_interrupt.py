"""The first Ctrl-C inside deferred_interrupt only sets the flag; the second interrupts at once."""

from __future__ import annotations

import os
import signal

import pytest

from nardy.interrupt import deferred_interrupt


def test_first_ctrl_c_sets_the_flag_second_interrupts_and_the_handler_is_restored() -> None:
    before = signal.getsignal(signal.SIGINT)
    with deferred_interrupt() as flag:
        flag.check()  # nothing requested yet
        os.kill(os.getpid(), signal.SIGINT)
        assert flag.requested  # handled at once, on the main thread, without raising
        with pytest.raises(KeyboardInterrupt):
            flag.check()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is before
