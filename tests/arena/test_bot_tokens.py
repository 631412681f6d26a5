"""Server bots that are given the arena's token refuse every other caller, comparing in constant
time: the Python SDK (hmac.compare_digest) and the JavaScript example (crypto.timingSafeEqual).
The Go example's check is in test_go_bot.py."""

from __future__ import annotations

import hmac
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from bot_process import BotProcess

from nardy.arena import sdk
from nardy.arena.clients.bot_client import GrpcBotClient
from nardy.arena.sdk import BotServer, RandomBot
from nardy.bots.faults import BotCrashedError

JS_BOT = Path(__file__).resolve().parents[2] / "examples" / "bots" / "js"
TOKEN = "s3cret-token"
WRONG = ("", "s3cret-toke", "s3cret-token2", "S3CRET-TOKEN", "x" * len(TOKEN))


def _check_refusals(address: str, name: str) -> None:
    assert GrpcBotClient(address, TOKEN).get_info().name == name
    for wrong in WRONG:
        with pytest.raises(BotCrashedError, match="UNAUTHENTICATED"):
            GrpcBotClient(address, wrong).get_info()


def test_sdk_server_bot(
    bot_server: Callable[..., BotServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[object, object]] = []
    compare = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return compare(a, b)

    monkeypatch.setattr(sdk.hmac, "compare_digest", spy)
    _check_refusals(bot_server(RandomBot(1), token=TOKEN).address, "random")
    assert len(compared) == 1 + len(WRONG)  # every check went through the constant-time compare


def test_js_server_bot() -> None:
    node = shutil.which("node")
    if node is None or not (JS_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.skip("needs node and `npm ci` in examples/bots/js (.ci/run does both)")
    bot = BotProcess([node, str(JS_BOT / "bot.js"), "0", "1"], env={"NARDY_BOT_TOKEN": TOKEN})
    try:
        _check_refusals(bot.wait_for("^LISTENING ")[0].split()[1], "js-random")
    finally:
        assert bot.stop() == 0, bot.lines
