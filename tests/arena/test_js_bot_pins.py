"""The JavaScript example bot reads pinned checkers (RULES.md §3.12.2) from the protocol: its
``sides`` summary of a Position message agrees with the kernel on plakoto positions with pins
(each side's checkers total N, pinned points belong to the stack's owner), and its choice keeps
to the plays that pin the most. One Node.js process for all positions (no arena, no gRPC).

Needs ``node`` and ``npm ci`` in examples/bots/js; skipped with the reason otherwise.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from pinned_positions import pinned_positions

from nardy.arena.clients import convert
from nardy.core import load_variant
from nardy.core.position import Position

JS_BOT = Path(__file__).resolve().parents[2] / "examples" / "bots" / "js"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
    pytest.mark.skipif(
        not (JS_BOT / "node_modules" / "@grpc" / "proto-loader").is_dir(),
        reason="run `npm ci` in examples/bots/js first (.ci/run does)",
    ),
]

# Reads one JSON request a line: {"position": ...} → sides(position); {"context": ...} → the play
# index player.choosePlay answers.
_SCRIPT = """
const { sides, randomPlayer } = require(process.argv[1] + '/player.js');
const player = randomPlayer(5, 'js');
const lines = require('fs').readFileSync(0, 'utf8').split('\\n').filter(Boolean);
for (const line of lines) {
  const request = JSON.parse(line);
  if (request.position) console.log(JSON.stringify(sides(request.position)));
  else console.log(JSON.stringify(player.choosePlay(request)));
}
"""


def _js(requests: list[dict[str, object]]) -> list[dict[str, object]]:
    assert NODE is not None
    out = subprocess.run(
        [NODE, "-e", _SCRIPT, str(JS_BOT)],
        input="\n".join(json.dumps(r) for r in requests),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return [json.loads(line) for line in out.splitlines()]


def _as_received(message: Message) -> dict[str, object]:
    """A message as the bot receives it (proto-loader: field names kept, defaults filled)."""
    return MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def _message(position: Position) -> dict[str, object]:
    return _as_received(convert.position_to_proto(position))


def test_sides_count_pinned_checkers_as_the_kernel_does() -> None:
    positions = pinned_positions()
    answers = _js([{"position": _message(p)} for p in positions])
    assert len(answers) == len(positions)
    for position, seen in zip(positions, answers, strict=True):
        held = [sum(1 for n in position.points if n > 0), sum(1 for n in position.points if n < 0)]
        assert seen == {
            "checkers": [15, 15],  # every pinned checker counted, once, for its owner
            "held": held,  # a pinned point is the stack owner's
            "pinned": list(position.pinned_counts),
        }, position


def test_without_pins_the_summary_is_the_plain_board() -> None:
    start = load_variant("backgammon").start_position()
    (seen,) = _js([{"position": _message(start)}])
    assert seen == {"checkers": [15, 15], "held": [4, 4], "pinned": [0, 0]}


def test_the_choice_keeps_to_the_plays_that_pin_the_most() -> None:
    variant = load_variant("plakoto")
    requests: list[dict[str, object]] = []
    best: list[set[int]] = []
    for position in pinned_positions()[:60]:
        for dice in ((6, 5), (3, 1), (4, 2)):
            plays = variant.legal_plays(position, dice)
            if len(plays) < 2:
                continue
            scores = [p.result.pinned_counts[1] - p.result.pinned_counts[0] for p in plays]
            if len(set(scores)) < 2:
                continue
            legal = [_as_received(convert.legal_play(i, p)) for i, p in enumerate(plays)]
            requests.append(
                {"context": {"position": _message(position), "legal_plays": legal, "on_roll": True}}
            )
            best.append({i for i, s in enumerate(scores) if s == max(scores)})
    assert len(requests) > 10  # positions where the plays differ in pins
    answers = _js(requests)
    for answer, allowed in zip(answers, best, strict=True):
        assert answer["play_index"] in allowed
        assert answer["info"]["values"]["engine"] == "js"  # type: ignore[index]
