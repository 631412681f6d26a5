"""The Play page's referee and JSON API (nardy.web.play, nardy.web.play_session).

The referee is checked against the kernel on every plays case of RULES.md §5 and on random
games: walking the steps it offers reaches exactly the legal plays' results (none missing, no
other), so a player can enter every legal play and nothing else.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("httpx2", reason="the test client needs httpx2 (the dev extra)")

from nardy.bots.base import Bot
from nardy.bots.random_bot import RandomBot
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import Game, PlayDecision, Segment
from nardy.core.movegen import board_of
from nardy.core.notation import BAR, OFF, Step
from nardy.core.position import Position
from nardy.core.variant import Variant, apply_steps
from nardy.schemas import schema
from nardy.web.app import create_app
from nardy.web.play import NEW_GAMES_PER_ADDRESS, NewGameLimit
from nardy.web.play_session import PlayError, PlaySession, SeatSpec, next_steps
from tests import rules_cases as rc
from tests.loop_client import LoopClient

PLAYS_CASES = [c for c in rc.load_cases() if c.get("kind", rc.KIND_PLAYS) == rc.KIND_PLAYS]


def _decision(variant: Variant, position: Any, dice: tuple[int, ...]) -> PlayDecision:
    plays = variant.legal_plays(position, dice)
    return PlayDecision(0, Segment(0, dice, "roll", "test"), position, plays)


def _walk(variant: Variant, decision: PlayDecision) -> set[tuple[int, ...]]:
    """Every result reached by entering offered steps until the referee says complete; fails
    if a walk gets stuck (offered nothing, yet not complete)."""
    pins = variant.rules.hitting.pins
    reached: set[tuple[int, ...]] = set()

    def walk(entered: list[Step]) -> None:
        offered, done = next_steps(variant, decision, entered)
        if done:
            result = apply_steps(decision.position, entered, pins=pins)
            reached.add(tuple(board_of(result)))
            return
        assert offered, f"stuck after {entered} with {decision.segment.dice}"
        for step in offered:
            walk([*entered, step])

    walk([])
    return reached


@pytest.mark.parametrize("case", PLAYS_CASES, ids=lambda c: str(c["id"]))
def test_the_offered_steps_reach_exactly_the_legal_plays_of_every_rules_case(
    case: dict[str, Any],
) -> None:
    variant = load_variant(case["variant"], case.get("options") or {})
    position = Position.from_json(rc.case_position(case))
    decision = _decision(variant, position, rc.dice_of(case))
    if decision.plays.dice_used == 0:
        assert next_steps(variant, decision, []) == ([], True)
        return
    assert _walk(variant, decision) == set(decision.plays.board_keys())


@pytest.mark.parametrize(
    "name", ["long", "backgammon", "plakoto", "fevga", "nardgammon", "giul", "gulbar"]
)
def test_the_offered_steps_reach_exactly_the_legal_plays_in_random_games(name: str) -> None:
    variant = load_variant(name)
    rng = random.Random(name)
    checked = 0
    for seed in range(3):
        game = Game(variant, SeededDice(seed))
        while game.decision is not None:
            decision = game.decision
            if isinstance(decision, PlayDecision):
                if len(decision.segment.dice) <= 2 or checked % 4 == 0:
                    assert _walk(variant, decision) == set(decision.plays.board_keys())
                checked += 1
                game.decide(rng.randrange(len(decision.plays)))
            else:
                game.decide(False if not hasattr(decision, "beaver_allowed") else "take")
    assert checked > 100


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(["long", "backgammon", "nardgammon", "plakoto", "fevga"]),
    seed=st.integers(0, 2**32),
    turns=st.integers(0, 80),
)
def test_any_decision_of_any_game_can_be_entered_step_by_step(
    name: str, seed: int, turns: int
) -> None:
    """Hypothesis picks a game and a decision in it: every order the referee offers ends in a
    legal play, and every legal play is reached (head rule, larger die, pins, quarters…)."""
    variant = load_variant(name)
    rng = random.Random(seed)
    game = Game(variant, SeededDice(seed))
    seen = 0
    while game.decision is not None:
        decision = game.decision
        if isinstance(decision, PlayDecision):
            if seen == turns:
                break
            seen += 1
            game.decide(rng.randrange(len(decision.plays)))
        else:
            game.decide(False if not hasattr(decision, "beaver_allowed") else "take")
    if isinstance(game.decision, PlayDecision):
        assert _walk(variant, game.decision) == set(game.decision.plays.board_keys())


def _case(case_id: str) -> tuple[Variant, PlayDecision]:
    case = next(c for c in PLAYS_CASES if c["id"] == case_id)
    variant = load_variant(case["variant"], case.get("options") or {})
    return variant, _decision(variant, Position.from_json(rc.case_position(case)), rc.dice_of(case))


def _pairs(steps: list[Step]) -> set[tuple[int, int, int]]:
    return {(s.src, s.dst, s.die) for s in steps}


def test_bar_first_and_the_larger_die_rule() -> None:
    # BG-07: "bar first — the 6 enters, then the 4 is free": 13/9 is refused until the entry.
    variant, decision = _case("BG-07")
    offered, done = next_steps(variant, decision, [])
    assert _pairs(offered) == {(BAR, 19, 6)} and not done
    offered, _ = next_steps(variant, decision, [Step(BAR, 19, 6)])
    assert _pairs(offered) == {(19, 15, 4), (13, 9, 4)}
    # BG-04: "either die alone but not both — the larger (6) must be played".
    variant, decision = _case("BG-04")
    offered, _ = next_steps(variant, decision, [])
    assert _pairs(offered) == {(13, 7, 6)}
    assert next_steps(variant, decision, [Step(13, 7, 6)]) == ([], True)


def test_another_order_of_the_same_steps_is_accepted() -> None:
    """The kernel lists one order per result (§2.3 item 7); the player may enter the other."""
    variant = load_variant("backgammon")
    decision = _decision(variant, variant.start_position(), (6, 1))
    play = next(p for p in decision.plays if p.text == "13/7 8/7")
    for order in (list(play.steps), list(reversed(play.steps))):
        entered: list[Step] = []
        for step in order:
            offered, done = next_steps(variant, decision, entered)
            assert not done and (step.src, step.dst, step.die) in _pairs(offered)
            entered.append(step)
        assert next_steps(variant, decision, entered) == ([], True)


def test_the_head_rule_of_long_nardy() -> None:
    """RULES.md §3.3: one checker leaves the head per turn (5-3 is no first-turn exception)."""
    variant = load_variant("long")
    decision = _decision(variant, variant.start_position(), (5, 3))
    offered, _ = next_steps(variant, decision, [])
    assert {s.src for s in offered} == {24}
    offered, _ = next_steps(variant, decision, [Step(24, 19, 5)])
    assert 24 not in {s.src for s in offered} and (19, 16, 3) in _pairs(offered)


def test_a_session_refuses_a_step_out_of_the_rules_with_a_reason(tmp_path: Path) -> None:
    seats = (SeatSpec("human", secret="w"), SeatSpec("human", secret="b"))
    session = PlaySession("t", "backgammon", {}, None, seats, 3)
    decision = session.decision
    assert isinstance(decision, PlayDecision)
    me = decision.player
    with pytest.raises(PlayError, match="no legal play moves a checker from point 1"):
        session.step(me, 1, OFF, None)
    with pytest.raises(PlayError, match="turn"):
        session.step(1 - me, 13, 7, None)
    offered, _ = next_steps(session.game.variant, decision, [])
    first = offered[0]
    session.step(me, first.src, first.dst, first.die)
    session.undo(me)
    assert session.entered == []


# -- the JSON API -----------------------------------------------------------------------------------


@pytest.fixture
def client(tmp_path: Path) -> Iterator[LoopClient]:
    with LoopClient(create_app(str(tmp_path / "arena.db"))) as c:
        yield c


def _seat(url: str) -> str:
    return url.split("#seat=", 1)[1]


def _inlined(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with each ``{"$ref": "#/$defs/NAME"}`` replaced by that definition (play-state's
    references have no sibling keywords and no cycles): the same checks, without jsonschema
    resolving a reference for each field of every state (half of a played-out game's time)."""
    if isinstance(node, dict):
        if set(node) == {"$ref"}:
            return _inlined(defs[node["$ref"].removeprefix("#/$defs/")], defs)
        return {k: _inlined(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inlined(v, defs) for v in node]
    return node


class _StateChecker:
    """Validates a game's play states against the play-state schema (references inlined,
    :func:`_inlined`) the way a played-out game needs it cheaply: the whole state's shape
    (required fields, no others) every time, but each field's value only the first time it is
    seen. A game sends thousands of states that differ in a few fields each, and validating every
    field of every state was two fifths of a played-out game's time. The log only grows, so
    of each seat's log only the entries past those last seen are validated (validating all of
    it at every state made the checks quadratic). Every value of every state is still validated
    once."""

    def __init__(self) -> None:
        state = schema("play-state")
        inlined = _inlined(state, state["$defs"])
        assert "$ref" not in str(inlined)
        fields = inlined["properties"]
        self.shape = jsonschema.Draft202012Validator(
            {**inlined, "properties": dict.fromkeys(fields, True)}
        )
        self.fields = {name: jsonschema.Draft202012Validator(sub) for name, sub in fields.items()}
        self.seen: set[tuple[str, str]] = set()
        self.logs: dict[str, list[Any]] = {}

    def validate(self, seat: str, state: dict[str, Any]) -> None:
        self.shape.validate(state)
        log = self.logs.setdefault(seat, [])
        entries = state["log"]
        known = len(log) if entries[: len(log)] == log else 0
        self.fields["log"].validate(entries[known:])
        log[:] = entries
        for name, value in state.items():
            key = (name, json.dumps(value, sort_keys=True))
            if name != "log" and key not in self.seen:
                self.fields[name].validate(value)
                self.seen.add(key)


def _play_out(
    client: LoopClient,
    game_id: str,
    secrets: dict[str, str],
    rng: random.Random,
    *,
    match: bool = False,
    frames: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Play the game to its end through the API, each seat entering random offered steps.

    Every state a seat is sent is validated: the reply to each of its actions (the seat's new
    state) and, after each action, every other seat's state read anew."""
    checker = _StateChecker()
    states: dict[str, dict[str, Any]] = {}

    def take(secret: str, state: dict[str, Any]) -> None:
        checker.validate(secret, state)
        if frames is not None and state["last_play"] is not None:
            frames.append(state["last_play"])
        states[secret] = state

    def read(*skip: str) -> None:
        for secret in secrets.values():
            if secret not in skip:
                h = {"X-Nardy-Seat": secret}
                take(secret, client.get(f"/api/play/{game_id}", headers=h).json())

    def act(secret: str, state: dict[str, Any]) -> Any:
        h = {"X-Nardy-Seat": secret}
        d = state["decision"]
        if state["result"] is not None:
            return client.post(f"/api/play/{game_id}/next", headers=h)
        if d["kind"] == "double":
            return client.post(f"/api/play/{game_id}/cube", json={"action": "roll"}, headers=h)
        if d["kind"] == "take":
            return client.post(f"/api/play/{game_id}/cube", json={"action": "take"}, headers=h)
        if state["complete"]:
            return client.post(f"/api/play/{game_id}/confirm", headers=h)
        step = rng.choice(state["offered"])
        return client.post(f"/api/play/{game_id}/step", json=step, headers=h)

    read()
    for _ in range(5000):
        first_secret, first = next(iter(states.items()))
        if first["result"] is not None and not (match and first["can_next"]):
            return dict(first)
        if first["result"] is not None:
            mover: str | None = first_secret
        else:
            mover = next(
                (
                    secret
                    for secret, state in states.items()
                    if state["decision"] is not None
                    and state["decision"]["player"] == state["seat"]
                ),
                None,
            )
        if mover is None:
            time.sleep(0.01)  # no seat's turn: a bot is thinking
            read()
            continue
        r = act(mover, states[mover])
        assert r.status_code == 200, r.text
        take(mover, r.json())
        read(mover)
    raise AssertionError("the game did not end")


def _new(client: LoopClient, **body: Any) -> dict[str, Any]:
    r = client.post("/api/play", json=body)
    assert r.status_code == 201, r.text
    jsonschema.Draft202012Validator(schema("play-new")).validate(body)
    return dict(r.json())


@pytest.mark.parametrize("variant", ["long", "backgammon"])
def test_a_whole_game_against_a_bot_through_the_api(client: LoopClient, variant: str) -> None:
    made = _new(
        client,
        variant=variant,
        opponent={"kind": "bot", "bot": "heuristic"},
        colour="black",
        seed=11,
    )
    assert made["friend_url"] is None and made["colour"] == "black"
    shown: list[dict[str, Any]] = []
    end = _play_out(
        client, made["id"], {"black": _seat(made["seat_url"])}, random.Random(1), frames=shown
    )
    # The bot's plays, step by step: one board per step, each a step further (a new position).
    assert shown and all(p["player"] == "white" for p in shown)
    for play in shown:
        ids = [f.split('data-position="', 1)[1].split('"', 1)[0] for f in play["frames"]]
        assert len(set(ids)) == len(ids) >= 1
    assert end["result"]["points"] >= 1 and end["decision"] is None
    assert end["result"]["text"]
    records = client.get(f"/api/play/{made['id']}/records").json()["games"]
    assert records[0]["variant"] == variant and records[0]["result"] is not None
    plays = [e for e in records[0]["events"] if e["kind"] == "play"]
    assert any(e["player"] == "White" for e in plays) and any(e["player"] == "Black" for e in plays)


def test_a_friend_game_403_without_or_with_the_other_seat_secret(client: LoopClient) -> None:
    made = _new(client, variant="backgammon", opponent={"kind": "friend"}, colour="white", seed=4)
    secrets = {"white": _seat(made["seat_url"]), "black": _seat(made["friend_url"])}
    game = made["id"]
    watch = client.get(f"/api/play/{game}").json()
    assert watch["seat"] is None and watch["offered"] == []
    mover = watch["decision"]["player"]
    other = "black" if mover == "white" else "white"
    mine = client.get(f"/api/play/{game}", headers={"X-Nardy-Seat": secrets[mover]}).json()
    step = mine["offered"][0]
    for headers in ({}, {"X-Nardy-Seat": "nonsense"}):
        r = client.post(f"/api/play/{game}/step", json=step, headers=headers)
        assert r.status_code == 403, r.text
        assert client.post(f"/api/play/{game}/resign", headers=headers).status_code == 403
    r = client.post(f"/api/play/{game}/step", json=step, headers={"X-Nardy-Seat": secrets[other]})
    assert r.status_code == 400 and "turn" in r.json()["error"]
    r = client.post(f"/api/play/{game}/step", json=step, headers={"X-Nardy-Seat": secrets[mover]})
    assert r.status_code == 200 and r.json()["entered"] == [step]
    # The secret never shows in what a spectator (or the other seat) reads.
    assert secrets[mover] not in client.get(f"/api/play/{game}").text
    assert secrets[mover] not in client.get(f"/play/{game}").text
    end = _play_out(client, game, secrets, random.Random(2))
    assert end["result"] is not None


def test_cube_double_take_then_resign_and_rematch(client: LoopClient) -> None:
    made = _new(client, variant="backgammon", opponent={"kind": "friend"}, seed=8)
    secrets = {"white": _seat(made["seat_url"]), "black": _seat(made["friend_url"])}
    game = made["id"]

    def state(colour: str) -> dict[str, Any]:
        return dict(
            client.get(f"/api/play/{game}", headers={"X-Nardy-Seat": secrets[colour]}).json()
        )

    def post(colour: str, what: str, **body: Any) -> Any:
        return client.post(
            f"/api/play/{game}/{what}", json=body, headers={"X-Nardy-Seat": secrets[colour]}
        )

    # Play the first turn (no cube before it), then the other side may double.
    first = state("white")["decision"]["player"]
    while state(first)["decision"]["player"] == first:
        s = state(first)
        r = post(first, "confirm") if s["complete"] else post(first, "step", **s["offered"][0])
        assert r.status_code == 200, r.text
    second = "black" if first == "white" else "white"
    assert state(second)["decision"]["kind"] == "double"
    assert post(second, "cube", action="take").status_code == 400
    assert post(second, "cube", action="double").json()["decision"]["kind"] == "take"
    assert post(first, "cube", action="beaver").status_code == 400  # beavers are off by default
    s = post(first, "cube", action="take").json()
    assert s["cube"] == {"enabled": True, "value": 2, "owner": first}
    s = post(second, "resign").json()
    # Resigning concedes the game as it stands: no checker off and two still in the winner's
    # home, a backgammon (3, RULES.md §3.1), at the cube's 2.
    assert s["result"]["winner"] == first.title() and s["result"]["resigned"]
    assert s["result"]["points"] == 3 * 2 and "resign" in s["result"]["text"]
    analysed = client.get(s["analysis_url"])  # a resigned game is analysed too
    assert analysed.status_code == 200 and "decision 1 of 3<" in analysed.text  # play, double, take
    assert post(second, "step", **{"from": 13, "to": 7}).status_code == 400
    re = post(second, "rematch").json()
    assert re == post(first, "rematch").json()  # one rematch, whoever asks
    new = client.get(f"/api/play/{re['id']}", headers={"X-Nardy-Seat": secrets[second]}).json()
    assert new["seat"] == first  # colours swapped, each keeps his secret
    records = client.get(f"/api/play/{game}/records").json()["games"]
    assert records[0]["result"]["reason"] == "resign"


def test_a_restart_resumes_every_game(tmp_path: Path) -> None:
    db = str(tmp_path / "arena.db")
    with LoopClient(create_app(db)) as c:
        made = _new(c, variant="long", opponent={"kind": "bot", "bot": "random"}, seed=5)
        secret = _seat(made["seat_url"])
        h = {"X-Nardy-Seat": secret}
        rng = random.Random(3)
        for _ in range(40):  # a few turns, stopping in the middle of one
            s = c.get(f"/api/play/{made['id']}", headers=h).json()
            if s["decision"] and s["decision"]["player"] == s["seat"] and s["offered"]:
                c.post(f"/api/play/{made['id']}/step", json=rng.choice(s["offered"]), headers=h)
            elif s["complete"]:
                c.post(f"/api/play/{made['id']}/confirm", headers=h)
            else:
                time.sleep(0.02)
        before = c.get(f"/api/play/{made['id']}", headers=h).json()
    with LoopClient(create_app(db)) as c:
        after = c.get(f"/api/play/{made['id']}", headers=h).json()
    keep = ("board", "entered", "offered", "log", "decision", "score", "cube")
    assert {k: after[k] for k in keep} == {k: before[k] for k in keep}
    assert len(before["log"]) > 6


def test_bad_requests_are_refused_in_words(client: LoopClient) -> None:
    for body, word in (
        ({"variant": "chess"}, "no variant"),
        ({"variant": "long", "match_length": 0}, "match_length"),
        ({"variant": "long", "opponent": {"kind": "bot", "bot": "no-such-bot"}}, "no bot"),
        ({"variant": "long", "colour": "red"}, "colour"),
        ({"variant": "long", "options": {"cube": "maybe"}}, "cube"),
        ({"variant": "tavli"}, "match"),
    ):
        r = client.post("/api/play", json=body)
        assert r.status_code == 400 and word in r.json()["error"], (body, r.text)
    assert client.get("/api/play/nope").status_code == 404
    assert client.get("/play").status_code == 200


@pytest.mark.parametrize(
    ("variant", "options", "length"),
    [
        ("giul", {}, None),  # progressions and transferred steps, each segment its own decision
        ("gulbar", {}, None),  # re-rolled doubles
        ("plakoto", {"mother": "off"}, None),  # pins, the mother option
        ("tavli", {}, 2),  # a match whose games cycle portes, plakoto, fevga
    ],
)
def test_friends_play_every_turn_plan_through_the_api(
    client: LoopClient, variant: str, options: dict[str, Any], length: int | None
) -> None:
    made = _new(
        client,
        variant=variant,
        options=options,
        match_length=length,
        opponent={"kind": "friend"},
        seed=21,
    )
    secrets = {"white": _seat(made["seat_url"]), "black": _seat(made["friend_url"])}
    end = _play_out(client, made["id"], secrets, random.Random(4), match=length is not None)
    assert end["options"] == options
    games = client.get(f"/api/play/{made['id']}/records").json()["games"]
    kinds = {e.get("segment_kind") for g in games for e in g["events"] if e["kind"] == "play"}
    if variant == "giul":
        assert "stage" in kinds
    if variant == "gulbar":
        assert "reroll" in kinds or any(e.get("reroll") for g in games for e in g["events"])
    if length is not None:
        assert end["match_over"] and max(end["score"]) >= length
        assert [g["variant"] for g in games][:2] == ["portes", "plakoto"][: len(games)]
    else:
        assert len(games) == 1


def test_a_finished_game_opens_on_the_analysis_page(client: LoopClient) -> None:
    made = _new(client, variant="backgammon", opponent={"kind": "bot", "bot": "random"}, seed=6)
    end = _play_out(client, made["id"], {"white": _seat(made["seat_url"])}, random.Random(5))
    page = client.get(end["analysis_url"])
    assert page.status_code == 200, page.text
    assert "analysis" in page.text and "error rate" in page.text
    # Every decision of both sides is analysed (the arena-shaped record replays).
    records = client.get(f"/api/play/{made['id']}/records").json()["games"]
    decided = sum(1 for e in records[0]["events"] if e["kind"] == "play" and e["choices"] > 1)
    assert "decision 1 of " in page.text
    total = int(page.text.split("decision 1 of ", 1)[1].split("<", 1)[0])
    assert total >= decided
    assert client.get(f"/play/{made['id']}/analysis/2").status_code == 404
    listed = client.get("/play").text  # the form lists the latest games, without secrets
    assert f'href="/play/{made["id"]}"' in listed and _seat(made["seat_url"]) not in listed


class Doubler(RandomBot):
    """Doubles at every chance (a plugin bot seated by ``module:Class``)."""

    def offer_double(self, decision: Any) -> bool:
        return True


class Crasher(Bot):
    """Fails at its first play: the page must say so, and the server stay up."""

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed

    def choose_play(self, decision: PlayDecision) -> int:
        raise RuntimeError("no idea")


@pytest.fixture
def trusting(tmp_path: Path) -> Iterator[LoopClient]:
    """The Play routes seating ``module:Class`` bots too (a trusted caller's option)."""
    from starlette.applications import Starlette

    from nardy.web.play import play_routes
    from nardy.web.play_session import PlayStore

    store = PlayStore(tmp_path / "play.db", module_bots=True)
    with LoopClient(Starlette(routes=play_routes(str(tmp_path / "a.db"), store=store))) as c:
        yield c


def test_the_page_seats_installed_bots_only(client: LoopClient) -> None:
    """A ``module:Class`` name would have the server import any module a request names."""
    for name in ("tests.viewer.test_play:Doubler", "antigravity:x", "os:getcwd"):
        r = client.post(
            "/api/play", json={"variant": "long", "opponent": {"kind": "bot", "bot": name}}
        )
        assert r.status_code == 400 and "installed bots" in r.json()["error"], r.text
    made = _new(client, variant="long", opponent={"kind": "bot", "bot": "neural:1"})
    assert made["id"]


def test_a_plugin_bot_doubles_and_the_human_passes(trusting: LoopClient) -> None:
    client = trusting
    made = _new(
        client,
        variant="backgammon",
        opponent={"kind": "bot", "bot": "tests.viewer.test_play:Doubler"},
        seed=2,
    )
    h = {"X-Nardy-Seat": _seat(made["seat_url"])}
    rng = random.Random(6)
    for _ in range(400):
        s = client.get(f"/api/play/{made['id']}", headers=h).json()
        d = s["decision"]
        if d is not None and d["player"] == s["seat"] and d["kind"] == "take":
            assert d["offered"] == 2 and not d["beaver_allowed"]
            s = client.post(f"/api/play/{made['id']}/cube", json={"action": "drop"}, headers=h)
            result = s.json()["result"]
            assert result["points"] == 1 and "drops the double" in result["text"]
            return
        if d is not None and d["player"] == s["seat"]:
            if d["kind"] == "double":
                r = client.post(f"/api/play/{made['id']}/cube", json={"action": "roll"}, headers=h)
            elif s["complete"]:
                r = client.post(f"/api/play/{made['id']}/confirm", headers=h)
            else:
                r = client.post(
                    f"/api/play/{made['id']}/step", json=rng.choice(s["offered"]), headers=h
                )
            assert r.status_code == 200, r.text
        else:
            time.sleep(0.01)
    raise AssertionError("the bot never doubled")


def test_a_failing_bot_is_reported_on_the_page(trusting: LoopClient) -> None:
    client = trusting
    made = _new(
        client,
        variant="long",
        opponent={"kind": "bot", "bot": "tests.viewer.test_play:Crasher"},
        colour="black",
        seed=1,
    )
    for _ in range(200):
        s = client.get(f"/api/play/{made['id']}").json()
        if s["bot_error"]:
            assert "no idea" in s["bot_error"]
            return
        time.sleep(0.01)
    raise AssertionError("the bot's failure was not reported")


def test_sessions_beyond_the_memory_cap_wait_in_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nardy.web import play_session
    from nardy.web.play_session import PlayStore

    monkeypatch.setattr(play_session, "IN_MEMORY", 1)
    store = PlayStore(tmp_path / "play.db")
    seats = (SeatSpec("human", secret="w"), SeatSpec("human", secret="b"))
    first = store.create("long", {}, None, seats, seed=1)
    second = store.create("backgammon", {}, None, seats, seed=2)
    assert list(store._sessions) == [second.id]  # the first left memory, not the file
    again = store.get(first.id)
    assert again is not first and again.to_json() == first.to_json()


def test_a_spectator_whose_folder_cannot_be_written_still_serves(tmp_path: Path) -> None:
    """The played games' file opens on first use: the tournaments still show without it, and
    the Play page says why it cannot start a game (503), instead of the server not starting."""
    db = tmp_path / "missing" / "folder" / "arena.db"
    with LoopClient(create_app(str(db))) as c:
        assert c.get("/").status_code == 200
        assert c.get("/play").status_code == 200
        r = c.post("/api/play", json={"variant": "long"})
        assert r.status_code == 503 and "cannot be opened" in r.json()["error"]
        assert c.get("/api/play/abc").status_code == 503


# -- starting games is limited (issue 34: no anonymous visitor fills the played games' file) ------


def test_new_game_limit_counts_a_sliding_window_per_address_and_in_all() -> None:
    now = [0.0]
    limit = NewGameLimit(per_address=2, in_all=3, window=10.0, clock=lambda: now[0])
    assert limit.admit("a") is None and limit.admit("a") is None
    assert limit.admit("a") == pytest.approx(10.0)  # a's first start leaves the window at 10
    assert limit.admit("b") is None
    now[0] = 4.0
    assert limit.admit("c") == pytest.approx(6.0)  # three in all within the window
    now[0] = 10.0  # a's two starts have left it
    assert limit.admit("c") is None and limit.admit("a") is None
    assert limit.addresses == 2  # b's start (at 0) left with a's: b is forgotten
    now[0] = 30.0
    assert limit.admit("d") is None and limit.addresses == 1  # only d is remembered


def test_an_address_starting_too_many_games_is_told_when_to_come_back(client: LoopClient) -> None:
    made = [
        client.post("/api/play", json={"variant": "long", "opponent": {"kind": "friend"}})
        for _ in range(NEW_GAMES_PER_ADDRESS + 1)
    ]
    assert [r.status_code for r in made[:-1]] == [201] * NEW_GAMES_PER_ADDRESS
    refused = made[-1]
    assert refused.status_code == 429 and "too many new games" in refused.json()["error"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 600
