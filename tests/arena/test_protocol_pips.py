"""docs/protocol.md, "Point numbers and pip counts": the code and the geometry table given there,
run as written on real protocol messages, agree with the kernel (Position.flip, opposite_point)
and with the starting pip counts of RULES.md's layouts.
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nardy.arena.clients import convert
from nardy.arena.protocol import bot_pb2
from nardy.arena.sdk import BotServer, RandomBot
from nardy.arena.service.core import Arena
from nardy.arena.service.server import ArenaServer
from nardy.bots.loop import TimeControl
from nardy.core import load_variant, variant_names
from nardy.core.board_text import pip_counts as kernel_pip_counts
from nardy.core.position import Position

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
BUILT_IN = (
    "backgammon",
    "trictrac",
    "long",
    "nardgammon",
    "mad",
    "gulbar",
    "mad_gulbar",
    "khachapuri",
    "fevga",
    "giul",
    "portes",
    "plakoto",
)


def _section() -> str:
    text = DOC.read_text()
    start = text.index("## Point numbers and pip counts")
    return text[start : text.index("\n## ", start + 1)]


def _doc_pip_counts() -> Callable[[Any, str], tuple[int, int]]:
    """The section's Python block, executed as written."""
    (code,) = re.findall(r"```python\n(.*?)```", _section(), re.S)
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    return namespace["pip_counts"]  # type: ignore[no-any-return]


def _doc_geometries() -> dict[str, str]:
    """{variant: "opposite" | "same"} from the section's table."""
    found: dict[str, str] = {}
    for line in _section().splitlines():
        if line.startswith("| opposite direction") or line.startswith("| same direction"):
            geometry = "opposite" if line.startswith("| opposite") else "same"
            for name in re.findall(r"`(\w+)`", line.split("|")[2]):
                assert name not in found
                found[name] = geometry
    return found


GEOMETRY = _doc_geometries()
PIPS = _doc_pip_counts()


def test_the_table_names_every_built_in_variant_with_the_kernels_geometry() -> None:
    assert set(GEOMETRY) == set(BUILT_IN) <= set(variant_names())
    for name in BUILT_IN:
        assert GEOMETRY[name] == load_variant(name).rules.geometry, name


@pytest.mark.parametrize("name", BUILT_IN)
def test_starting_pip_counts_from_the_layouts_of_rules_md(name: str) -> None:
    # RULES.md's variant table: 24:2 13:5 8:3 6:5 (167 pips), 24:15 (360), 24:4 6:11 (162);
    # portes is backgammon's layout (§3.12.1); plakoto starts on the 24-point (§3.12.2).
    expected = {"backgammon": 167, "trictrac": 167, "portes": 167, "khachapuri": 162}.get(name, 360)
    start = load_variant(name).start_position()
    assert PIPS(convert.position_to_proto(start), GEOMETRY[name]) == (expected, expected)


class _Recorder(RandomBot):
    """A random bot that keeps every DecisionContext it is sent (and doubles while the cube is
    below 8 if ``doubles``)."""

    def __init__(self, seed: int, doubles: bool = False) -> None:
        super().__init__(seed)
        self.doubles = doubles
        self.seen: list[tuple[str, bot_pb2.DecisionContext]] = []
        self._seen_lock = threading.Lock()

    def _keep(self, kind: str, ctx: bot_pb2.DecisionContext) -> None:
        copy = bot_pb2.DecisionContext()
        copy.CopyFrom(ctx)
        with self._seen_lock:
            self.seen.append((kind, copy))

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
        self._keep("play", request.context)
        return super().choose_play(request)

    def decide_double(self, request: bot_pb2.DecideDoubleRequest) -> bool:
        self._keep("double", request.context)
        return self.doubles and (request.context.cube.value or 1) < 8

    def respond_to_double(self, request: bot_pb2.RespondToDoubleRequest) -> str:
        self._keep("take", request.context)
        return "take"


def _kernel_pips(ctx: bot_pb2.DecisionContext) -> tuple[int, int]:
    """Both counts the kernel's way: the opponent's as the mover's count after Position.flip."""
    geometry = load_variant(ctx.variant.name, dict(ctx.variant.options)).rules.geometry
    position = Position.from_id(ctx.position.position_id)
    flipped = position.flip(geometry)
    return _with_pins(position, geometry), _with_pins(flipped, geometry)


def _with_pins(position: Position, geometry: str) -> int:
    """The mover's pip count the kernel's way, pinned checkers included (RULES.md §3.12.2: a
    pinned checker is on the board and counts its point)."""
    return kernel_pip_counts(position, geometry)[0]  # type: ignore[arg-type]


@pytest.mark.slow  # over 2 s (the fast loop's budget); .ci/run runs it
def test_pip_counts_of_real_messages_agree_with_the_kernel(
    bot_server: Callable[..., BotServer],
) -> None:
    # A clock no loaded machine runs out of: every game must reach its end.
    server = ArenaServer(Arena(time_control=TimeControl(per_decision=10.0))).start()
    try:
        _check_real_messages(server.arena, bot_server)
    finally:
        server.stop(grace=1)


def _check_real_messages(arena: Arena, bot_server: Callable[..., BotServer]) -> None:
    doubler, taker = _Recorder(1, doubles=True), _Recorder(2)
    white = arena.register_server_bot("doubler", bot_server(doubler).address).bot_id
    black = arena.register_server_bot("taker", bot_server(taker).address).bot_id
    for seed, name in enumerate(BUILT_IN):
        record = arena.play_game(white, black, variant=name, seed=100 + seed)
        assert record.outcome is not None
        assert record.outcome.termination in (
            "borne_off",
            "double_dropped",
            "mother",
            "draw",
        ), record.outcome
    seen = doubler.seen + taker.seen
    kinds = {kind for kind, _ in seen}
    assert kinds == {"play", "double", "take"}
    assert {ctx.variant.name for _, ctx in seen} == set(BUILT_IN)
    checked_results = 0
    pinned_seen = 0
    for _, ctx in seen:
        geometry = GEOMETRY[ctx.variant.name]
        assert PIPS(ctx.position, geometry) == _kernel_pips(ctx)
        for play in ctx.legal_plays:  # results are still the same mover's view
            result = Position.from_id(play.result_position_id)
            assert PIPS(play.result, geometry) == (
                _with_pins(result, geometry),
                _with_pins(result.flip(geometry), geometry),
            )
            pinned_seen += bool(play.result.pinned)
            checked_results += 1
    assert checked_results > 1000
    assert pinned_seen > 10  # plakoto's pinned checkers are counted too
    # RespondToDouble: not on roll, and the position is the doubler's, the very position of the
    # DecideDouble just before it in the same game.
    doubles: dict[str, list[bot_pb2.DecisionContext]] = defaultdict(list)
    for kind, ctx in doubler.seen:
        if kind == "double":
            doubles[ctx.game_id].append(ctx)
    takes = [ctx for kind, ctx in taker.seen if kind == "take"]
    assert takes
    for ctx in takes:
        assert not ctx.on_roll
        before = max(
            (d for d in doubles[ctx.game_id] if d.sequence < ctx.sequence),
            key=lambda d: d.sequence,
        )
        assert before.position.position_id == ctx.position.position_id
        mover, mine = PIPS(ctx.position, GEOMETRY[ctx.variant.name])
        assert (mine, mover) == _kernel_pips(before)[::-1]
