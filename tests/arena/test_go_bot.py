"""End to end: the Go example bot (examples/bots/go), built here from the repository's protos with
Debian's packages only, plays short tournaments: in the arena server, and with `nardy arena run`
(examples/round_robin_go.toml).

Needs the Debian toolchain (.ci/run installs it)::

    apt-get install golang-go golang-google-grpc-dev golang-google-protobuf-dev \\
        golang-github-golang-protobuf-1-5-dev protoc-gen-go protoc-gen-go-grpc \\
        protobuf-compiler libprotobuf-dev

and is skipped, naming what is missing, without it. A build failure with the toolchain present is
a test failure.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from bot_process import BotProcess
from click.testing import CliRunner
from pinned_positions import pinned_positions

from nardy.arena.clients import convert
from nardy.arena.clients.bot_client import GrpcBotClient
from nardy.arena.competition.tournament import replay_record
from nardy.arena.protocol import bot_pb2
from nardy.arena.records.storage import SqliteStore
from nardy.arena.sdk import BotServer, builtin, dial_out
from nardy.arena.service.server import ArenaServer
from nardy.arena.service.servicer import table_to_proto
from nardy.arena.tournament_cli import main as tournament_cli
from nardy.bots.faults import BotCrashedError
from nardy.bots.loop import TimeControl
from nardy.core import load_variant

pytestmark = pytest.mark.slow  # builds the Go bot and serves it

GO_BOT = Path(__file__).resolve().parents[2] / "examples" / "bots" / "go"
_TOOLS = ("go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc")
_SOURCES = (
    Path("/usr/share/gocode/src/google.golang.org/grpc"),
    Path("/usr/share/gocode/src/google.golang.org/protobuf"),
    Path("/usr/include/google/protobuf/duration.proto"),
)


@pytest.fixture(scope="module")
def go_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = [t for t in _TOOLS if shutil.which(t) is None] + [
        str(p) for p in _SOURCES if not p.exists()
    ]
    if missing:
        pytest.skip(
            f"the Go toolchain from Debian is missing ({', '.join(missing)}); .ci/run installs it"
        )
    out = tmp_path_factory.mktemp("go-bot")
    build = subprocess.run(
        [str(GO_BOT / "build.sh"), str(out)], capture_output=True, text=True, timeout=600
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return out / "nardy-go-bot"


def test_go_bot_plays_a_backgammon_round_robin(
    server: ArenaServer, bot_server: Callable[..., BotServer], go_bot: Path
) -> None:
    """Backgammon (hits, the bar, the cube offered every turn): the Go bot, a Python server bot
    and a Python dial-out bot, every game to the end with no fault."""
    arena = server.arena
    go = arena.add_local_bot("go", [str(go_bot), "0", "5"])
    python = arena.register_server_bot(
        "heuristic", bot_server(builtin("heuristic", seed=8)).address
    )
    dialer = arena.register_dial_out_bot("random")
    client = dial_out(builtin("random", seed=2), server.address, dialer.token, status=None).start()
    try:
        assert client.connected.wait(10)
        t = arena.create_tournament(
            [go.bot_id, python.bot_id, dialer.bot_id],
            variant="backgammon",
            games_per_pairing=2,
            seed=4,
            concurrency=2,
            time_control=TimeControl(per_decision=5.0, reserve=0.0, slack=0.5),
        )
        assert t.done.wait(120) and not t.error, t.error
    finally:
        client.stop()
    standings = table_to_proto(arena.standings(t.tournament_id))
    assert standings.games_played == standings.games_total == 6
    rows = arena.store.games(t.tournament_id, records=True)
    assert len(rows) == 6
    go_decisions = []
    for row in rows:
        assert row.record is not None and row.termination in ("borne_off", "double_dropped"), row
        assert all(sum(f.values()) == 0 for f in row.record["faults"].values())
        if go.bot_id in (row.a, row.b):
            colour = "White" if row.record["white"]["bot_id"] == go.bot_id else "Black"
            go_decisions += [d for d in row.record["decisions"] if d["player"] == colour]
    plays = [d for d in go_decisions if d["kind"] == "play"]
    assert plays and all(d["info"]["values"]["engine"] == "go" for d in plays)


def test_go_bot_plays_a_tavli_round_robin(
    server: ArenaServer, bot_server: Callable[..., BotServer], go_bot: Path
) -> None:
    """Tavli matches to 3 (RULES.md §3.12.3): each game's request names its own variant (portes,
    plakoto, fevga in turn) and the Go bot plays all three to the end with no fault."""
    arena = server.arena
    go = arena.add_local_bot("go", [str(go_bot), "0", "9"])
    python = arena.register_server_bot(
        "heuristic", bot_server(builtin("heuristic", seed=8)).address
    )
    t = arena.create_tournament(
        [go.bot_id, python.bot_id],
        variant="tavli",
        match_length=3,
        games_per_pairing=2,
        seed=6,
        concurrency=2,
        time_control=TimeControl(per_decision=5.0, reserve=0.0, slack=0.5),
    )
    assert t.done.wait(120) and not t.error, t.error
    rows = arena.store.games(t.tournament_id, records=True)
    cycle = ["portes", "plakoto", "fevga"]
    by_unit: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        assert row.record is not None and row.termination in ("borne_off", "mother", "draw"), row
        assert all(sum(f.values()) == 0 for f in row.record["faults"].values())
        assert replay_record(row.record).ok
        by_unit.setdefault(row.unit_id, []).append(row.record)
    assert len(by_unit) == 2
    for records in by_unit.values():
        records.sort(key=lambda r: r["game_no"])  # type: ignore[arg-type, return-value]
        assert [r["variant"] for r in records] == [cycle[i % 3] for i in range(len(records))]


def test_go_bot_refuses_callers_without_its_token(go_bot: Path) -> None:
    bot = BotProcess([str(go_bot), "0", "1"], env={"NARDY_BOT_TOKEN": "s3cret"})
    try:
        address = bot.wait_for(r"^LISTENING ")[0].split()[1]
        assert GrpcBotClient(address, "s3cret").get_info().name == "go-random"
        for wrong in ("", "s3cre", "s3cret2"):
            with pytest.raises(BotCrashedError, match="UNAUTHENTICATED"):
                GrpcBotClient(address, wrong).get_info()
    finally:
        assert bot.stop() == 0, bot.lines


def test_example_round_robin_runs_the_go_bot(
    go_bot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/round_robin_go.toml as its comment says: the bot built to build/go-bot, then
    `nardy arena run` from the directory that holds build/ (the repository root for a user)."""
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "go-bot").symlink_to(go_bot.parent, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    toml = Path(__file__).resolve().parents[2] / "examples" / "round_robin_go.toml"
    result = CliRunner().invoke(tournament_cli, ["run", str(toml), "--quiet", "--db", "go.db"])
    assert result.exit_code == 0, result.output
    assert "finished; 12 games stored" in result.stdout
    shown = CliRunner().invoke(tournament_cli, ["standings", "--db", "go.db", "--json"])
    data = json.loads(shown.stdout)
    (pool,) = data["pools"]
    assert {b["bot"]: (b["games"], b["forfeits"]) for b in pool["standings"]} == {
        "heuristic": (8, 0),
        "random": (8, 0),
        "go": (8, 0),
    }
    with closing(SqliteStore(tmp_path / "go.db", readonly=True)) as store:
        rows = store.games(data["tournament_id"], records=True)
        assert len(rows) == 12
        for row in rows:
            assert row.record is not None and replay_record(row.record).ok


def test_go_bot_reads_pinned_checkers(go_bot: Path) -> None:
    """Plakoto positions with pins (RULES.md §3.12.2) sent as ChoosePlay requests: the bot's
    reading of each side agrees with the kernel (each side's checkers total 15 with the pinned
    ones, a pinned point is the stack owner's), and its choice keeps to the plays that pin the
    most."""
    variant = load_variant("plakoto")
    bot = BotProcess([str(go_bot), "0", "3"])
    try:
        client = GrpcBotClient(bot.wait_for(r"^LISTENING ")[0].split()[1])
        asked = 0
        for position in pinned_positions()[:40]:
            plays = variant.legal_plays(position, (6, 5))
            if len(plays) < 2:
                continue
            request = bot_pb2.ChoosePlayRequest()
            ctx = request.context
            ctx.variant.name = "plakoto"
            ctx.on_roll = True
            convert.position_to_proto(position, ctx.position)
            for i, play in enumerate(plays):
                convert.legal_play(i, play, ctx.legal_plays.add())
            answer = client.choose_play(request, 5.0)
            scores = [p.result.pinned_counts[1] - p.result.pinned_counts[0] for p in plays]
            assert scores[answer.play_index] == max(scores)
            values = answer.info.values
            assert values["position"] == position.id()
            assert values["checkers"] == "15/15"
            held = (sum(n > 0 for n in position.points), sum(n < 0 for n in position.points))
            assert values["held"] == f"{held[0]}/{held[1]}"
            assert values["pinned"] == "{}/{}".format(*position.pinned_counts)
            asked += 1
        assert asked > 10
    finally:
        assert bot.stop() == 0, bot.lines
