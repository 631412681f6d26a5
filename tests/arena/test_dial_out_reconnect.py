"""Dial-out bots through an arena outage: the gRPC server is stopped while a game runs and started
again on the same port. The bot says when it connects, when it loses the connection and before every
retry, waits a jittered exponential back-off, and the game in progress ends normally.

Both the Python SDK (:class:`nardy.arena.sdk.DialOutClient`) and the JavaScript example
(``examples/bots/js/dial_out.js``, skipped without node and its dependencies) are tested.
"""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

import pytest
from bot_process import BotProcess

from nardy.arena.sdk import DialOutRejectedError, RandomBot, backoff_delays, dial_out, serve_bot
from nardy.arena.service.core import Arena, wait_until
from nardy.arena.service.server import ArenaServer
from nardy.bots.faults import FaultPolicy
from nardy.bots.loop import TimeControl
from nardy.core.record import GameRecord

pytestmark = pytest.mark.slow  # arena servers restarted in subprocesses

JS_BOT = Path(__file__).resolve().parents[2] / "examples" / "bots" / "js"
NODE = shutil.which("node")
RETRY = re.compile(r"^retrying in (\d+\.\d+)s \(attempt (\d+)\)$")


def test_backoff_doubles_up_to_the_cap_with_jitter_in_the_upper_half() -> None:
    assert list(islice(backoff_delays(0.1, 1.0, rand=lambda: 0.0), 6)) == pytest.approx(
        [0.05, 0.1, 0.2, 0.4, 0.5, 0.5]
    )
    assert list(islice(backoff_delays(0.1, 1.0, rand=lambda: 1.0), 6)) == pytest.approx(
        [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    )
    import random

    drawn = list(islice(backoff_delays(0.1, 1.0, rand=random.Random(5).random), 200))
    nominal = [min(0.1 * 2**n, 1.0) for n in range(200)]
    assert all(d / 2 <= x <= d for x, d in zip(drawn, nominal, strict=True))
    assert len({round(x, 6) for x in drawn[10:]}) > 150  # jittered, not a fixed ladder


class _HeldBot(RandomBot):
    """A random bot whose first decision waits until the test releases it, so that a game is
    certainly in progress while the arena is down."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.asked = threading.Event()
        self.release = threading.Event()

    def choose_play(self, request):  # type: ignore[no-untyped-def]
        self.asked.set()
        assert self.release.wait(20)
        return super().choose_play(request)


def _check_retry_lines(lines: list[str], initial: float, maximum: float) -> None:
    """The lines of one outage: lost, then (cannot reach, retrying n)… with delays in [d/2, d]."""
    connected = [i for i, line in enumerate(lines) if line.startswith("connected to ")]
    assert len(connected) == 2, lines
    outage = lines[connected[0] + 1 : connected[1]]
    assert outage[0].startswith("connection lost: "), outage
    retries = [RETRY.match(line) for line in outage if line.startswith("retrying")]
    assert len(retries) >= 2 and all(retries), outage  # at least one retry while it was down
    assert sum(line.startswith("cannot reach the arena at ") for line in outage) >= 1, outage
    for n, match in enumerate(retries):
        assert match is not None
        assert int(match[2]) == n + 1
        nominal = min(initial * 2**n, maximum)
        assert nominal / 2 - 0.01 <= float(match[1]) <= nominal + 0.01, (n, outage)


def _play_through_an_outage(
    start_bot: Callable[[str, str], Callable[[], list[str]]],
) -> tuple[GameRecord, str]:
    """Start an arena and a held opponent, start the dial-out bot with ``start_bot(address,
    token)`` (which returns a function giving its lines so far), stop the server mid-game, wait
    for retries, restart it on the same port and let the game finish. The arena object lives on,
    as a restarted arena keeps its bots and tokens in its database."""
    arena = Arena(
        time_control=TimeControl(per_decision=10.0, reserve=0.0, slack=0.5),
        policy=FaultPolicy(),
        reconnect_grace=20.0,
    )
    server = ArenaServer(arena).start()
    port = server.port
    held = _HeldBot(3)
    opponent_server = serve_bot(held)
    restarted: ArenaServer | None = None
    try:
        opponent = arena.register_server_bot("held", opponent_server.address)
        dialer = arena.register_dial_out_bot("dialer")
        lines = start_bot(server.address, dialer.token)
        assert wait_until(lambda: any(x.startswith("connected to") for x in lines()), 20), lines()
        records: list[GameRecord] = []
        game = threading.Thread(
            target=lambda: records.append(
                arena.play_game(dialer.bot_id, opponent.bot_id, variant="long", seed=31)
            )
        )
        game.start()
        assert held.asked.wait(20)
        server.stop_transport(0)  # the arena's port goes away mid-game
        assert wait_until(lambda: sum(x.startswith("cannot reach") for x in lines()) >= 2, 20), (
            lines()
        )
        held.release.set()  # the dial-out bot's next decision now waits for it to come back
        restarted = ArenaServer(arena, port=port).start()
        assert wait_until(lambda: sum(x.startswith("connected to") for x in lines()) >= 2, 20), (
            lines()
        )
        game.join(60)
        assert records, "the game did not finish"
        return records[0], dialer.bot_id
    finally:
        held.release.set()
        (restarted or server).stop(grace=1)
        opponent_server.stop(0)


def _assert_clean_finish(record: GameRecord, bot_id: str) -> None:
    assert record.outcome is not None and record.outcome.termination == "borne_off", record.outcome
    assert all(sum(f.values()) == 0 for f in record.faults), record.faults
    colour = "White" if (record.players[0].seat or {}).get("bot_id") == bot_id else "Black"
    assert any(d["player"] == colour for d in record.to_json()["decisions"])


def test_python_dial_out_bot_reports_and_survives_an_arena_restart() -> None:
    lines: list[str] = []
    clients = []

    def start(address: str, token: str) -> Callable[[], list[str]]:
        client = dial_out(RandomBot(4), address, token, status=lines.append)
        clients.append(client.start())
        return lambda: list(lines)

    try:
        record, bot_id = _play_through_an_outage(start)
    finally:
        for client in clients:
            client.stop()
    _assert_clean_finish(record, bot_id)
    _check_retry_lines(lines, *clients[0].backoff)
    assert lines[0] == f"connected to {clients[0].address} as {bot_id}"


@pytest.fixture
def js_dial_out() -> Iterator[Callable[[str, str], Callable[[], list[str]]]]:
    if NODE is None:
        pytest.skip("node is not installed")
    if not (JS_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.skip("run `npm ci` in examples/bots/js first (.ci/run does)")
    started: list[BotProcess] = []

    def start(address: str, token: str) -> Callable[[], list[str]]:
        assert NODE is not None
        bot = BotProcess(
            [NODE, str(JS_BOT / "dial_out.js"), address, "9"], env={"NARDY_BOT_TOKEN": token}
        )
        started.append(bot)
        return lambda: list(bot.lines)

    yield start
    for bot in started:
        assert bot.stop() == 0, bot.lines  # SIGTERM is a clean exit


def test_js_dial_out_bot_reports_and_survives_an_arena_restart(
    js_dial_out: Callable[[str, str], Callable[[], list[str]]],
) -> None:
    outputs: list[Callable[[], list[str]]] = []

    def start(address: str, token: str) -> Callable[[], list[str]]:
        lines = js_dial_out(address, token)
        outputs.append(lines)
        return lines

    record, bot_id = _play_through_an_outage(start)
    _assert_clean_finish(record, bot_id)
    _check_retry_lines(outputs[0](), 0.1, 5.0)


def test_a_rejected_token_is_said_once_and_not_retried(server: ArenaServer) -> None:
    lines: list[str] = []
    client = dial_out(RandomBot(1), server.address, "not-a-token", status=lines.append).start()
    try:
        assert wait_until(lambda: client.error is not None, 10)
    finally:
        client.stop()
    assert isinstance(client.error, DialOutRejectedError)
    assert len(lines) == 1 and lines[0].startswith(
        f"token rejected by the arena at {server.address}"
    )
    if NODE is None or not (JS_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        return  # the JavaScript half needs node and npm ci
    bot = BotProcess(
        [NODE, str(JS_BOT / "dial_out.js"), server.address], env={"NARDY_BOT_TOKEN": "nope"}
    )
    try:
        assert bot.proc.wait(20) == 1
    finally:
        bot.stop()
    assert len(bot.lines) == 1, bot.lines
    assert bot.lines[0].startswith(f"token rejected by the arena at {server.address}: "), bot.lines


def test_a_graceful_shutdown_is_named_as_the_reason() -> None:
    server = ArenaServer(Arena(reconnect_grace=5.0)).start()
    lines: list[str] = []
    entry = server.arena.register_dial_out_bot("bot")
    client = dial_out(RandomBot(1), server.address, entry.token, status=lines.append).start()
    try:
        assert client.connected.wait(10)
        server.stop(grace=1)
        assert wait_until(lambda: len(lines) >= 3, 10), lines
    finally:
        client.stop()
        server.stop(grace=1)
    assert lines[1] == "connection lost: the arena is shutting down", lines
    assert RETRY.match(lines[2]), lines


def test_nardy_bot_serve_arena_prints_the_connection_lines(server: ArenaServer) -> None:
    """The command line a bot author runs (token from the environment, or --token): the lines on
    standard error, a clean exit on SIGTERM, and one line and exit status 1 for a token the arena
    does not know."""
    import sys

    entry = server.arena.register_dial_out_bot("cli")
    command = [sys.executable, "-m", "nardy", "bot", "serve", "--builtin", "random"]
    bot = BotProcess([*command, "--arena", server.address], env={"NARDY_BOT_TOKEN": entry.token})
    try:
        assert (
            bot.wait_for("^connected to ")[0] == f"connected to {server.address} as {entry.bot_id}"
        )
    finally:
        assert bot.stop() == 0, bot.lines
    bot = BotProcess([*command, "--arena", server.address, "--token", "wrong"])
    try:
        assert bot.proc.wait(30) == 1
    finally:
        bot.stop()
    assert len(bot.lines) == 1 and bot.lines[0].startswith("token rejected by the arena at "), (
        bot.lines
    )
