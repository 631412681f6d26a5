"""The Play page's state under load: its version, the state rendered once per change, the long
poll (``GET /api/play/{id}?after=VERSION``), docs/play.md "The JSON API".

The server caches the state it answers by (session, seat, version), so the version must move on
every change that a seat or a spectator can see: bot moves and cube actions included.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the dev extra)")

from starlette.applications import Starlette
from starlette.testclient import TestClient

from nardy.bots.random_bot import RandomBot
from nardy.core.game import DoubleDecision, PlayDecision
from nardy.web import play as play_module
from nardy.web.app import create_app
from nardy.web.play import FramesMemo, play_routes, state_json
from nardy.web.play_session import PlayError, PlaySession, PlayStore, SeatSpec, next_steps


def _views(session: PlaySession, memo: FramesMemo) -> dict[Any, Any]:
    """Each seat's state; the frames kept in ``memo`` between calls (as the server keeps them)
    give the same state as frames drawn afresh."""
    views = {seat: state_json(session, seat) for seat in (0, 1, None)}
    for seat, view in views.items():
        assert state_json(session, seat, memo) == view
    return views


def _acts(session: PlaySession, me: int, rng: random.Random) -> str:
    """One thing the human seat ``me`` does (randomly, undo and resign included); its name."""
    decision = session.decision
    assert decision is not None and decision.player == me
    if isinstance(decision, DoubleDecision):
        session.cube(me, "roll")  # no redouble: the cube stays at 2, the match lasts games
        return "roll"
    if not isinstance(decision, PlayDecision):
        session.cube(me, "take")
        return "take"
    offered, complete = next_steps(session.game.variant, decision, session.entered)
    # What the session remembers of its searches (PlaySession.offered, which refereed the
    # steps so far and answers the page) is what a search afresh finds.
    assert session.offered(decision) == (offered, complete)
    if session.entered and rng.random() < 0.15:
        session.undo(me)
        return "undo"
    if complete:
        session.confirm(me)
        return "confirm"
    step = rng.choice(offered)
    session.step(me, step.src, step.dst, step.die)
    return "step"


@pytest.mark.parametrize(
    ("variant", "length", "seed"),
    [("backgammon", 9, 5), ("gulbar", None, 2), ("plakoto", None, 3)],
)
def test_every_change_a_seat_can_see_moves_the_version(
    variant: str, length: int | None, seed: int
) -> None:
    """A human against a bot that doubles at every chance (cube actions, bot plays, the human's
    steps, undos, confirms, takes, a match's next game, a resignation): after each change the
    version has grown, and the state of no seat (nor a spectator's) changed without it. The
    listeners of :meth:`PlaySession.listen` are told of each change."""
    bot = "tests.viewer.test_play:Doubler"
    seats = (SeatSpec("human", secret="w"), SeatSpec("bot", bot=bot))
    session = PlaySession("v", variant, {}, length, seats, seed)
    rng = random.Random(seed)
    told: list[int] = []
    seen = session.version
    memo: FramesMemo = {}
    views = _views(session, memo)
    done: dict[str, int] = {}
    for _ in range(3000):
        session.listen(lambda: told.append(session.version))
        told.clear()
        if session.game_result is not None:
            if length is None or session.match.is_over:
                break
            session.next_game(0)
            what = "next"
        elif session.bot_to_move():
            assert session.bot_move()
            what = "bot"
        elif sum(done.values()) == 60 and variant == "plakoto":
            session.resign(0)
            what = "resign"
        else:
            what = _acts(session, 0, rng)
        done[what] = done.get(what, 0) + 1
        assert session.version > seen, what
        assert told and told[0] == seen + 1, (what, told)  # the first change tells the listener
        seen = session.version
        now = _views(session, memo)
        if what != "undo":
            assert now != views, f"{what} changed nothing a seat sees"
        views = now
    else:
        raise AssertionError(f"the game did not end: {done}")
    assert done.get("bot", 0) > 10 and done.get("step", 0) > 10 and done.get("confirm", 0) > 5, str(
        done
    )
    if variant == "backgammon":
        assert done.get("take", 0) >= 1 and done.get("next", 0) >= 1, str(done)
    if variant == "plakoto":
        assert done.get("resign") == 1, str(done)


def test_a_state_that_did_not_change_is_answered_without_being_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Any] = []
    original = play_module.state_json

    def counting(session: PlaySession, seat: int | None, memo: Any = None) -> dict[str, Any]:
        built.append(seat)
        return original(session, seat, memo)

    monkeypatch.setattr(play_module, "state_json", counting)
    with TestClient(create_app(str(tmp_path / "arena.db"))) as client:
        made = client.post("/api/play", json={"variant": "long", "opponent": {"kind": "friend"}})
        game = made.json()["id"]
        secret = made.json()["seat_url"].split("#seat=")[1]
        first = [client.get(f"/api/play/{game}").json() for _ in range(5)]
        assert len(built) == 1 and all(s == first[0] for s in first)
        mine = [client.get(f"/api/play/{game}", headers={"X-Nardy-Seat": secret}) for _ in "ab"]
        assert len(built) == 2 and mine[0].json()["seat"] == "white"
        assert mine[0].content == mine[1].content


def test_a_board_shown_twice_is_drawn_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last step's board is the confirmed play's, and the opponent's last frame is his
    play's (the same arrows, given as steps or as text): each move draws them once; and a second
    game, seated and played alike, draws none of its boards again."""
    drawn: list[str] = []
    original = play_module.board

    def counting(*args: Any, **kwargs: Any) -> Any:
        svg = original(*args, **kwargs)
        drawn.append(str(svg))
        return svg

    monkeypatch.setattr(play_module, "board", counting)
    play_module._drawn.cache_clear()
    asked: list[str] = []
    after: list[int] = []  # boards drawn after each game
    for _ in "ab":
        seats = (SeatSpec("human", secret="w"), SeatSpec("bot", bot="heuristic"))
        session = PlaySession("d", "backgammon", {}, None, seats, 8)
        rng = random.Random(4)
        memo: FramesMemo = {}
        confirms = 0
        while confirms < 6 and session.game_result is None:
            if session.bot_to_move():
                assert session.bot_move()
            elif _acts(session, 0, rng) == "confirm":
                confirms += 1
            state = state_json(session, 0, memo)
            asked += [state["board"], *(state["last_play"] or {"frames": []})["frames"]]
        after.append(len(drawn))
    assert len(drawn) == len(set(drawn)), "a board was drawn twice"
    assert after[0] == after[1] > 10, "the second game drew again"
    assert len(set(asked)) == len(drawn) < len(asked) / 3
    assert set(asked) == set(drawn)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "arena.db"))) as c:
        yield c


def _friend_game(client: TestClient) -> tuple[str, dict[str, str]]:
    made = client.post(
        "/api/play", json={"variant": "backgammon", "opponent": {"kind": "friend"}, "seed": 4}
    ).json()
    seats = {"white": made["seat_url"], "black": made["friend_url"]}
    return made["id"], {c: {"X-Nardy-Seat": u.split("#seat=")[1]} for c, u in seats.items()}


def test_a_long_poll_answers_at_the_next_change(client: TestClient) -> None:
    game, headers = _friend_game(client)
    state = client.get(f"/api/play/{game}").json()
    mover = headers[state["decision"]["player"]]
    version = state["version"]
    answers: list[tuple[float, dict[str, Any]]] = []

    def watch() -> None:
        started = time.monotonic()
        r = client.get(f"/api/play/{game}", params={"after": version, "wait": 20})
        answers.append((time.monotonic() - started, r.json()))

    watcher = threading.Thread(target=watch)
    watcher.start()
    time.sleep(0.5)
    assert not answers, "the long poll answered before anything changed"
    step = client.get(f"/api/play/{game}", headers=mover).json()["offered"][0]
    assert client.post(f"/api/play/{game}/step", json=step, headers=mover).status_code == 200
    watcher.join(10)
    assert answers, "the long poll did not answer the change"
    waited, seen = answers[0]
    assert 0.4 < waited < 5 and seen["version"] == version + 1
    assert seen["entered"] == [step] and seen["seat"] is None  # the step, as a spectator sees it


def test_a_long_poll_answers_at_once_when_behind_and_after_its_wait(client: TestClient) -> None:
    game, _ = _friend_game(client)
    version = client.get(f"/api/play/{game}").json()["version"]
    for after in (version - 1, version + 5):  # an older version, or a restarted server's
        started = time.monotonic()
        r = client.get(f"/api/play/{game}", params={"after": after})
        assert r.status_code == 200 and time.monotonic() - started < 2
    started = time.monotonic()
    r = client.get(f"/api/play/{game}", params={"after": version, "wait": 0.5})
    assert r.status_code == 200 and r.json()["version"] == version
    assert 0.45 < time.monotonic() - started < 3
    for params, word in (({"after": "x"}, "after"), ({"after": 1, "wait": 60}, "wait")):
        r = client.get(f"/api/play/{game}", params=params)
        assert r.status_code == 400 and word in r.json()["error"], r.text
    assert client.get("/api/play/nope", params={"after": 0}).status_code == 404


class Slow(RandomBot):
    """A random bot that thinks for 0.3 s (seated by ``module:Class``): a reply to wait for."""

    def choose_play(self, decision: PlayDecision) -> int:
        time.sleep(0.3)
        return super().choose_play(decision)


def test_a_bots_reply_wakes_the_long_poll(tmp_path: Path) -> None:
    store = PlayStore(tmp_path / "play.db", module_bots=True)
    app = Starlette(routes=play_routes(str(tmp_path / "a.db"), store=store))
    with TestClient(app) as client:
        made = client.post(
            "/api/play",
            json={"variant": "long", "opponent": {"kind": "bot", "bot": f"{__name__}:Slow"}},
        ).json()
        game, h = made["id"], {"X-Nardy-Seat": made["seat_url"].split("#seat=")[1]}
        rng = random.Random(1)
        waits: list[float] = []
        state = client.get(f"/api/play/{game}", headers=h).json()
        for _ in range(400):
            if len(waits) >= 3 or state["result"] is not None:
                break
            d = state["decision"]
            if d["player"] != state["seat"]:
                started = time.monotonic()
                params = {"after": state["version"]}
                state = client.get(f"/api/play/{game}", params=params, headers=h).json()
                waits.append(time.monotonic() - started)
                assert state["version"] > params["after"]
            elif state["complete"]:
                state = client.post(f"/api/play/{game}/confirm", headers=h).json()
            else:
                step = rng.choice(state["offered"])
                state = client.post(f"/api/play/{game}/step", json=step, headers=h).json()
        # Each wait ended with the bot's move (0.3 s of thinking), not the long poll's 25 s.
        assert len(waits) >= 3 and all(0.1 < w < 5 for w in waits), waits


def test_the_version_survives_a_restart(tmp_path: Path) -> None:
    """A page's long poll names the version it saw: after a restart the game goes on from it
    (stored with the session), not from 0, which an old page would wait past for nothing."""
    store = PlayStore(tmp_path / "play.db")
    seats = (SeatSpec("human", secret="w"), SeatSpec("human", secret="b"))
    session = store.create("long", {}, None, seats, seed=3)
    rng = random.Random(2)
    for _ in range(30):
        me = session.decision.player if session.decision else 0
        try:
            _acts(session, me, rng)
        except PlayError:
            break
        store.changed(session)
    version = session.version
    assert version > 20
    store.close()
    again = PlayStore(tmp_path / "play.db").get(session.id)
    assert again.version == version and again.entered == session.entered
