"""The arena tests' clock, in a module of its own so that a test imports it by a name no other
folder's helper has (``from conftest import …`` reads whichever conftest.py was imported last when
tests/arena and tests/viewer are collected in one run)."""

from __future__ import annotations

from nardy.bots.loop import TimeControl

CLOCK = TimeControl(per_decision=20.0, reserve=0.0, slack=0.05)
"""The default clock of the tests' arena: a healthy game must never lose on time, also on a
loaded machine (a 0.5 s clock did: a paused test process forfeited games on time). A test of
timeouts sets its own short clock; 20 s is below the tests' usual 30 s wait for a result, so a
bot that hangs shows as a timeout fault in the record."""
