"""The arena as a venue: admin authentication, secret seeds, request limits, tournaments that
survive SIGKILL, and the fixes around faults — against a real ``nardy arena serve`` process on
a loopback port where it matters."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from faulty_bots import OutOfRangeBot
from rawstream import RawStream

from nardy.arena.competition.schedule import derive_seed, parse_definition, unit_from_id
from nardy.arena.protocol import arena_pb2, arena_pb2_grpc, bot_pb2, game_pb2
from nardy.arena.records.storage import SqliteStore
from nardy.arena.sdk import BotBase, BotServer, RandomBot, dial_out, serve_bot
from nardy.arena.service.core import Arena
from nardy.arena.service.limits import ArenaLimits, LimitError, check_bot_address
from nardy.arena.service.server import ArenaServer
from nardy.bots.faults import FaultPolicy
from nardy.bots.loop import TimeControl

pytestmark = pytest.mark.slow  # the arena walkthrough on servers in subprocesses

Metadata = tuple[tuple[str, str], ...]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


class Served:
    """``nardy arena serve`` in a subprocess on a fixed loopback port, with its files in a
    directory; :meth:`kill` and :meth:`start` again keep the port, database and token."""

    def __init__(self, directory: Path, *extra: str) -> None:
        self.directory = directory
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.extra = extra
        self.proc: subprocess.Popen[str] | None = None
        self.log = directory / "serve.log"
        self.start()
        self.token = (directory / "admin.token").read_text().strip()
        self.admin: Metadata = (("authorization", f"Bearer {self.token}"),)
        self.channel = grpc.insecure_channel(self.address)
        self.stub = arena_pb2_grpc.ArenaServiceStub(self.channel)

    def start(self) -> float:
        """Start the server; returns the seconds until it listened."""
        started = time.monotonic()
        command = [sys.executable, "-m", "nardy.arena.cli", "arena", "serve", "--port"]
        command += [str(self.port), "--db", "arena.db", "--admin-token-file", "admin.token"]
        command += ["--allow-private-addresses", "--standings-interval", "0", *self.extra]
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(
                command, cwd=self.directory, stdout=subprocess.PIPE, stderr=log, text=True
            )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("LISTENING "), (line, self.log.read_text()[-2000:])
        return time.monotonic() - started

    def kill(self, sig: int = signal.SIGKILL) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)
        self.proc.wait(30)

    def close(self) -> None:
        self.channel.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def register(self, name: str, *, server: str | None = None) -> arena_pb2.RegisterBotResponse:
        request = arena_pb2.RegisterBotRequest(name=name)
        if server is not None:
            request.server.address = server
        else:
            request.dial_out.SetInParent()
        response: arena_pb2.RegisterBotResponse = self.stub.RegisterBot(
            request, timeout=10, metadata=self.admin
        )
        return response

    def standings(self, tournament_id: str, admin: bool = False) -> arena_pb2.GetStandingsResponse:
        response: arena_pb2.GetStandingsResponse = self.stub.GetStandings(
            arena_pb2.GetStandingsRequest(tournament_id=tournament_id),
            timeout=10,
            metadata=self.admin if admin else (),
        )
        return response


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    s = Served(tmp_path)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def bots() -> Iterator[Callable[..., BotServer]]:
    started: list[BotServer] = []

    def start(bot: BotBase, **kwargs: Any) -> BotServer:
        srv = serve_bot(bot, **kwargs)
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop(0)


class SlowBot(RandomBot):
    """A random bot that takes ``delay`` seconds per play (keeps a tournament running)."""

    def __init__(self, seed: int, delay: float = 0.02) -> None:
        super().__init__(seed)
        self.delay = delay

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
        time.sleep(self.delay)
        return super().choose_play(request)


class IndexBot(BotBase):
    """Always the play with the same index (the last one if ``last``): deterministic."""

    def __init__(self, last: bool) -> None:
        self.last = last

    def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
        return len(request.context.legal_plays) - 1 if self.last else 0


def _code(call: Callable[[], object]) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as info:
        call()
    code: grpc.StatusCode = info.value.code()
    return code


def _create(
    served: Served, ids: list[str], metadata: Metadata | None = None, **fields: Any
) -> arena_pb2.CreateTournamentResponse:
    request = arena_pb2.CreateTournamentRequest(
        name="venue", bot_ids=ids, variant=game_pb2.VariantSpec(name="long"), **fields
    )
    response: arena_pb2.CreateTournamentResponse = served.stub.CreateTournament(
        request, timeout=30, metadata=served.admin if metadata is None else metadata
    )
    return response


def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.05)


# -- 1. admin authentication ------------------------------------------------------------------------


def test_admin_calls_need_the_admin_token(
    served: Served, bots: Callable[..., BotServer], tmp_path: Path
) -> None:
    token_file = tmp_path / "admin.token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert "admin token written to" in served.log.read_text()
    server_bot = served.register("srv", server=bots(RandomBot(1)).address)
    dialer = served.register("dialer")
    client = dial_out(RandomBot(2), served.address, dialer.token).start()
    try:
        register = arena_pb2.RegisterBotRequest(name="x")
        register.dial_out.SetInParent()
        calls: dict[str, Callable[[Metadata], object]] = {
            "RegisterBot": lambda md: served.stub.RegisterBot(register, timeout=10, metadata=md),
            "CreateTournament": lambda md: _create(served, [server_bot.bot_id, dialer.bot_id], md),
            "CancelTournament": lambda md: served.stub.CancelTournament(
                arena_pb2.CancelTournamentRequest(tournament_id="nope"), timeout=10, metadata=md
            ),
        }
        stranger = (("authorization", "Bearer " + "x" * 43),)
        for name, call in calls.items():
            assert _code(lambda c=call: c(())) == grpc.StatusCode.UNAUTHENTICATED, name
            assert _code(lambda c=call: c(stranger)) == grpc.StatusCode.UNAUTHENTICATED, name
            for bot_token in (dialer.token, server_bot.token):
                as_bot = (("authorization", f"Bearer {bot_token}"),)
                assert _code(lambda c=call, m=as_bot: c(m)) == grpc.StatusCode.PERMISSION_DENIED
        # The admin may; names are unique.
        assert _code(lambda: served.register("srv")) == grpc.StatusCode.ALREADY_EXISTS
        created = _create(served, [server_bot.bot_id, dialer.bot_id], games_per_pairing=2)
        assert created.games_total == 2
        # A server bot's token opens no Connect stream: a bot cannot act as another.
        raw = RawStream(served.address)
        raw.hello(server_bot.token)
        assert raw.next_of("error").error.code == arena_pb2.ERROR_CODE_UNAUTHENTICATED
        raw.close()
    finally:
        client.stop()
    # Only hashes are stored: no token appears in the database.
    served.kill(signal.SIGTERM)
    data = b"".join(p.read_bytes() for p in tmp_path.glob("arena.db*"))
    for secret in (served.token, dialer.token, server_bot.token):
        assert secret.encode() not in data


# -- 2. limits --------------------------------------------------------------------------------------


def test_huge_and_negative_requests_are_rejected_at_once(
    served: Served, bots: Callable[..., BotServer]
) -> None:
    ids = [served.register(f"b{i}", server=bots(RandomBot(i)).address).bot_id for i in range(2)]
    assert served.proc is not None
    before = _rss_kib(served.proc.pid)
    bad: list[dict[str, Any]] = [
        {"games_per_pairing": 2_000_000_000},
        {"games_per_pairing": 1_000_000},
        {"games_per_pairing": -5},
        {"concurrency": -1},
        {"concurrency": 1_000_000},
        {"match_length": -3},
        {"match_length": 10_000},
    ]
    for fields in bad:
        started = time.monotonic()
        assert _code(lambda f=fields: _create(served, ids, **f)) == grpc.StatusCode.INVALID_ARGUMENT
        # At once: a request for 2e9 games that were made before the check would take minutes
        # (or the memory); 3 s leaves a busy CI machine its hiccups.
        assert time.monotonic() - started < 3.0, fields
    assert _code(lambda: _create(served, ids * 33)) == grpc.StatusCode.INVALID_ARGUMENT
    long_name = arena_pb2.RegisterBotRequest(name="n" * 65)
    long_name.dial_out.SetInParent()
    assert (
        _code(lambda: served.stub.RegisterBot(long_name, timeout=5, metadata=served.admin))
        == grpc.StatusCode.INVALID_ARGUMENT
    )
    assert _rss_kib(served.proc.pid) - before < 20 * 1024  # bounded: nothing was allocated


def test_bot_addresses_public_only_unless_allowed() -> None:
    public = ArenaLimits()
    for address in ("127.0.0.1:5000", "10.1.2.3:80", "[::1]:9", "192.168.0.7:1", "localhost:80"):
        with pytest.raises(LimitError, match="allow-private-addresses"):
            check_bot_address(address, public)
    for address in ("nohost", "a:b", ":80", "x:99999"):
        with pytest.raises(LimitError, match="host:port"):
            check_bot_address(address, public)
    check_bot_address("8.8.8.8:443", public)  # a public address: allowed (not dialled here)
    check_bot_address("127.0.0.1:5000", ArenaLimits(allow_private_addresses=True))
    arena = Arena(limits=public)
    try:
        with pytest.raises(LimitError):
            arena.register_server_bot("x", "127.0.0.1:1")
    finally:
        arena.shutdown(0)


def test_the_largest_allowed_tournament_costs_pairings_not_games(
    served: Served, bots: Callable[..., BotServer]
) -> None:
    """64 bots x 496 games per pairing = 999,936 games (the limit is 1,000,000): created in
    O(pairings) memory; the figures are printed for the record."""
    address = bots(RandomBot(1), max_workers=64).address
    ids = [served.register(f"bot{i:02d}", server=address).bot_id for i in range(64)]
    assert served.proc is not None
    before = _rss_kib(served.proc.pid)
    started = time.monotonic()
    created = _create(served, ids, games_per_pairing=496, concurrency=1)
    elapsed = time.monotonic() - started
    # The admin's standings: a caller without the token sees no game of an unfinished round
    # (round 0 has 4,032 games here; docs/arena.md, "Spectators and the dice").
    _wait(
        lambda: served.standings(created.tournament_id, admin=True).games_played >= 1, 60, "a game"
    )
    running = time.monotonic() - started  # the engine's streams are made: a game was played
    grown = _rss_kib(served.proc.pid) - before
    assert created.games_total == 2016 * 496
    served.stub.CancelTournament(
        arena_pb2.CancelTournamentRequest(tournament_id=created.tournament_id),
        timeout=60,
        metadata=served.admin,
    )
    print(
        f"\nlargest tournament: {created.games_total} games, created in {elapsed:.2f}s, "
        f"first game stored after {running:.2f}s, +{grown} KiB RSS"
    )
    assert grown < 64 * 1024, f"{grown} KiB for {created.games_total} games"
    assert (
        _code(lambda: _create(served, ids, games_per_pairing=497))
        == grpc.StatusCode.INVALID_ARGUMENT
    )


def test_unit_from_id_refuses_what_is_not_scheduled() -> None:
    d = parse_definition({"bots": ["a", "b"], "variant": "long", "games": 3, "seed": 1})
    assert unit_from_id(d, "long:a~b:0002a") is not None
    for bad in ("long:a~b:0002b", "long:b~a:0001a", "short:a~b:0001a", "x", "long:a~b:00x1a"):
        assert unit_from_id(d, bad) is None


# -- the seed stays secret while a tournament runs --------------------------------------------------


def test_seed_secret_while_running_revealed_after_cancel(
    served: Served, bots: Callable[..., BotServer]
) -> None:
    ids = [served.register(f"s{i}", server=bots(SlowBot(i)).address).bot_id for i in range(2)]
    created = _create(served, ids, games_per_pairing=200, concurrency=1)
    tid = created.tournament_id
    _wait(lambda: served.standings(tid).games_played >= 2, 60, "two games")
    running = served.standings(tid)
    assert running.status == arena_pb2.TOURNAMENT_STATUS_RUNNING and running.seed == 0
    assert running.dice.commitment and not running.dice.revealed and not running.dice.seed
    events: list[arena_pb2.WatchTournamentResponse] = []
    watch = served.stub.WatchTournament(
        arena_pb2.WatchTournamentRequest(tournament_id=tid, replay=True)
    )

    def collect() -> None:
        for event in watch:
            events.append(event)

    reader = threading.Thread(target=collect)
    reader.start()
    _wait(lambda: len(events) >= 5, 30, "events")
    listed = served.stub.ListTournaments(arena_pb2.ListTournamentsRequest(), timeout=10)
    assert [t.tournament_id for t in listed.tournaments] == [tid]
    export = arena_pb2.ExportGamesRequest(tournament_id=tid)
    assert _code(lambda: list(served.stub.ExportGames(export))) == grpc.StatusCode.UNAUTHENTICATED
    assert list(served.stub.ExportGames(export, metadata=served.admin))  # the admin may
    served.stub.CancelTournament(
        arena_pb2.CancelTournamentRequest(tournament_id=tid), timeout=30, metadata=served.admin
    )
    reader.join(30)
    ended = served.standings(tid)
    assert ended.status == arena_pb2.TOURNAMENT_STATUS_CANCELLED and ended.seed != 0
    assert ended.dice.revealed and ended.dice.seed == ended.seed  # the commitment opened
    shown = [
        getattr(event, kind).standings
        for event in events[:-1]
        if (kind := event.WhichOneof("event")) in ("tournament_started", "standings_updated")
    ]
    assert shown and all(standings.seed == 0 for standings in shown)
    assert events[-1].WhichOneof("event") == "tournament_ended"
    assert events[-1].tournament_ended.standings.seed == ended.seed
    assert events[-1].tournament_ended.status == arena_pb2.TOURNAMENT_STATUS_CANCELLED
    # The revealed seed is the one the dice came from; anyone may export now.
    records = [json.loads(m.record_json) for m in served.stub.ExportGames(export)]
    first = next(r for r in records if r["game_id"].endswith(":0001a"))
    assert first["seed"] == derive_seed(ended.seed, "dice", "long", 0)


# -- 4. tournaments survive SIGKILL -----------------------------------------------------------------


def _run_with_kills(directory: Path, kills: int) -> tuple[arena_pb2.GetStandingsResponse, Served]:
    served = Served(directory)
    first = serve_bot(IndexBot(last=False), max_workers=8)
    try:
        a = served.register("first", server=first.address)
        b = served.register("last")
        dialer = dial_out(IndexBot(last=True), served.address, b.token).start()
        try:
            created = _create(
                served, [a.bot_id, b.bot_id], games_per_pairing=60, seed=4242, concurrency=2
            )
            tid = created.tournament_id
            resumed_in: list[float] = []
            for k in range(kills):
                target = (k + 1) * 12
                _wait(lambda t=target: served.standings(tid).games_played >= t, 120, "games")
                served.kill()
                before = SqliteStore(directory / "arena.db", readonly=True)
                stored = len(before.games(tid))
                before.close()
                started = time.monotonic()
                served.start()
                _wait(lambda s=stored: served.standings(tid).games_played > s, 60, "the next game")
                resumed_in.append(time.monotonic() - started)
            _wait(
                lambda: served.standings(tid).status == arena_pb2.TOURNAMENT_STATUS_FINISHED,
                300,
                "the end",
            )
            if kills:
                print(
                    f"\nrestart to next stored game: {', '.join(f'{t:.2f}s' for t in resumed_in)}"
                )
            return served.standings(tid), served
        finally:
            dialer.stop()
    finally:
        first.stop(0)


def test_tournament_survives_three_sigkills(tmp_path: Path) -> None:
    (tmp_path / "killed").mkdir()
    (tmp_path / "calm").mkdir()
    killed, served = _run_with_kills(tmp_path / "killed", kills=3)
    tid = killed.tournament_id
    served.close()
    calm, other = _run_with_kills(tmp_path / "calm", kills=0)
    other.close()
    assert killed.games_played == killed.games_total == 60
    with sqlite3.connect(tmp_path / "killed" / "arena.db") as db:
        rows = db.execute("SELECT game_id FROM games WHERE tournament_id = ?", (tid,)).fetchall()
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids)) == 60  # every game exactly once

    def table(s: arena_pb2.GetStandingsResponse) -> list[tuple[Any, ...]]:
        return [
            (r.rank, r.bot_name, r.games, r.wins, r.losses, r.forfeits, r.net_points, r.elo)
            for r in s.standings
        ]

    assert table(killed) == table(calm)
    assert killed.seed == calm.seed == 4242  # revealed once finished
    assert "resuming tournament" in (tmp_path / "killed" / "serve.log").read_text()


# -- 6. fixes ---------------------------------------------------------------------------------------


def test_a_server_bot_that_checks_its_token_can_be_registered(
    served: Served, bots: Callable[..., BotServer], tmp_path: Path
) -> None:
    token_file = tmp_path / "bot.token"  # does not exist yet: every call is refused
    strict = bots(RandomBot(3), token=token_file)
    entry = served.register("strict", server=strict.address)
    other = served.register("other", server=bots(RandomBot(4)).address)
    ids = [entry.bot_id, other.bot_id]
    with pytest.raises(grpc.RpcError) as info:
        _create(served, ids, games_per_pairing=2)
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "strict" in str(info.value.details())
    token_file.write_text(entry.token + "\n")
    created = _create(served, ids, games_per_pairing=2)
    _wait(
        lambda: (
            served.standings(created.tournament_id).status == arena_pb2.TOURNAMENT_STATUS_FINISHED
        ),
        60,
        "the end",
    )
    assert all(r.forfeits == 0 for r in served.standings(created.tournament_id).standings)


def test_oversized_dial_out_message_ends_its_stream_unread() -> None:
    """No message over --max-message-bytes is read, from anyone: a dial-out bot's oversized
    answer ends its stream (RESOURCE_EXHAUSTED, gRPC's own refusal) and the game counts the
    broken stream as a disconnect once the reconnect grace has passed."""
    arena = Arena(
        # The clock outlasts the grace: only the broken stream may end the game (a 0.5 s clock
        # raced it on a loaded machine and could record a timeout instead).
        time_control=TimeControl(per_decision=10.0, reserve=0.0, slack=0.05),
        reconnect_grace=0.5,
    )
    server = ArenaServer(arena, max_message_bytes=64 * 1024).start()
    good = serve_bot(RandomBot(1))
    try:
        entry = arena.register_dial_out_bot("big")
        other = arena.register_server_bot("ok", good.address)
        stream = RawStream(server.address)
        stream.hello(entry.token)
        stream.next_of("welcome")
        game = arena.start_game(entry.bot_id, other.bot_id, seed=7)
        ctx = stream.next_of("decision_request").decision_request.choose_play.context
        answer = arena_pb2.DecisionAnswer(game_id=ctx.game_id, sequence=ctx.sequence)
        answer.choose_play.play_index = 0
        answer.choose_play.info.comment = "x" * 100_000
        stream.send(arena_pb2.ConnectRequest(answer=answer))
        ended = stream.next(10)
        while isinstance(ended, arena_pb2.ConnectResponse):
            ended = stream.next(10)
        assert isinstance(ended, grpc.RpcError)
        assert ended.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, ended
        record = game.result(timeout=10)
        stream.close()
        assert record.faults[0]["disconnect"] == 1 and record.faults[0]["malformed"] == 0
    finally:
        server.stop(0.5)
        good.stop(0)


def test_disqualified_at_exactly_max_faults_with_parallel_games() -> None:
    arena = Arena(
        # A generous clock: only the faulty bot's out-of-range answers may be faults, even on a
        # loaded machine.
        time_control=TimeControl(per_decision=10.0, reserve=0.0, slack=1.0),
        policy=FaultPolicy(on_fault="forfeit", max_faults=3),
        max_games=16,
    )
    all_started = threading.Event()

    class GatedOutOfRangeBot(OutOfRangeBot):
        """Answers nothing until every game has started, so that all ten run in parallel (a
        disqualification before the last start would rightly refuse that start)."""

        def choose_play(self, request: bot_pb2.ChoosePlayRequest) -> int:
            all_started.wait(timeout=5)
            return super().choose_play(request)

    bad = serve_bot(GatedOutOfRangeBot(good=0), max_workers=16)
    good = serve_bot(RandomBot(5), max_workers=16)
    try:
        faulty = arena.register_server_bot("faulty", bad.address)
        healthy = arena.register_server_bot("healthy", good.address)
        games = [arena.start_game(faulty.bot_id, healthy.bot_id, seed=s) for s in range(10)]
        all_started.set()
        records = [g.result(timeout=30) for g in games]
        assert faulty.faults.to_json()["illegal"] == faulty.faults.total == 3
        assert faulty.faults.disqualified
        assert all(r.outcome is not None and r.outcome.winner == 1 for r in records), [
            (r.outcome, r.faults) for r in records
        ]
    finally:
        arena.shutdown(0)
        bad.stop(0)
        good.stop(0)


def test_bots_and_tournaments_listed_by_name(
    served: Served, bots: Callable[..., BotServer]
) -> None:
    a = served.register("alpha", server=bots(RandomBot(1)).address)
    b = served.register("beta")
    client = dial_out(RandomBot(2), served.address, b.token).start()
    try:
        _wait(
            lambda: all(
                x.connected
                for x in served.stub.ListBots(arena_pb2.ListBotsRequest(), timeout=5).bots
            ),
            10,
            "both bots connected",
        )
        created = _create(served, [a.bot_id, b.bot_id], games_per_pairing=2)
        tid = created.tournament_id
        _wait(
            lambda: served.standings(tid).status == arena_pb2.TOURNAMENT_STATUS_FINISHED,
            60,
            "the end",
        )
    finally:
        client.stop()
    listed = served.stub.ListBots(arena_pb2.ListBotsRequest(), timeout=5)
    assert [(x.name, x.kind) for x in listed.bots] == [("alpha", "server"), ("beta", "dial_out")]
    assert all(x.HasField("last_seen") for x in listed.bots)
    games = served.stub.ListGames(arena_pb2.ListGamesRequest(tournament_id=tid, bot="beta"))
    assert len(games.games) == 2
    assert {g.white_name for g in games.games} == {"alpha", "beta"}
    assert [r.bot_name for r in served.standings(tid).standings] != []
    assert {r.bot_name for r in served.standings(tid).standings} == {"alpha", "beta"}


# -- 5. the operator's walk-through in docs/arena.md, run as written --------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "arena.md"


JS_BOT = DOCS.parents[1] / "examples" / "bots" / "js"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.skipif(
    not (JS_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir(),
    reason="run `npm ci` in examples/bots/js first (.ci/run does)",
)
def test_the_walkthrough_in_the_docs_runs_as_written(tmp_path: Path) -> None:
    text = DOCS.read_text(encoding="utf-8")
    block = text.split("<!-- walkthrough:start -->")[1].split("<!-- walkthrough:end -->")[0]
    script = block.strip().removeprefix("```sh").removesuffix("```")
    arena_port, bot_port = _free_port(), _free_port()
    script = script.replace("50050", str(arena_port)).replace("50051", str(bot_port))
    script = script.replace("/tmp/nardy-venue", str(tmp_path / "venue"))
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env["NARDY_ARENA"] = f"127.0.0.1:{arena_port}"  # the commands' default, moved with the port
    env.pop("NARDY_ARENA_TOKEN", None)
    log = tmp_path / "walkthrough.log"
    with log.open("w") as out_file:
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=DOCS.parents[1],  # the repository's root, as the docs say
            env=env,
            stdout=out_file,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: the background jobs die with it
        )
        try:
            proc.wait(timeout=180)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out = log.read_text()
    assert proc.returncode == 0, out
    assert all(f"registered {name}" in out for name in ("heur", "walker", "js"))
    assert "finished, 12/12 games" in out
    tables = out.split("token written to walker.token")[1].split("games of")[0]
    assert "bot-" not in tables, "ids instead of names in a table"
    assert all(name in tables for name in ("heur", "walker", "js"))
    lines = (tmp_path / "venue" / "weekly.jsonl").read_text().splitlines()
    assert len(lines) == 12 and all(json.loads(line)["result"]["winner"] for line in lines)
    with sqlite3.connect(tmp_path / "venue" / "nardy-arena.db") as db:
        assert db.execute("SELECT COUNT(*) FROM arena_bots").fetchone() == (3,)
