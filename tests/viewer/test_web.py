"""The spectator's pages through Starlette's TestClient: every route, escaping, filters, replay."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'nardy[web]'")
pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the dev extra)")

from starlette.testclient import TestClient

from nardy.arena.records.storage import open_store
from nardy.core import game_variant_names
from nardy.web.app import create_app


@pytest.fixture(scope="module")
def client(finished_db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(finished_db))) as c:
        yield c


def ids(finished_db: Path) -> tuple[str, list[str]]:
    store = open_store(str(finished_db), readonly=True)
    try:
        tid = next(t.tournament_id for t in store.tournaments() if t.name == "every-variant")
        return tid, [g.game_id for g in store.games(tid)]
    finally:
        store.close()


def game_url(tid: str, gid: str) -> str:
    return f"/t/{quote(tid, safe='')}/g/{quote(gid, safe='')}"


def test_tournaments_list(client: TestClient, finished_db: Path) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert "every-variant" in page.text and "finished" in page.text
    data = client.get("/api/tournaments").json()
    every = next(t for t in data if t["name"] == "every-variant")
    assert every["games_stored"] == 2 * len(game_variant_names())
    assert sorted(every["variants"]) == sorted(game_variant_names())


def test_tournament_page_standings_pairings_plot(client: TestClient, finished_db: Path) -> None:
    tid, _ = ids(finished_db)
    page = client.get(f"/t/{tid}")
    assert page.status_code == 200
    for pool in game_variant_names():
        assert f'data-pool="{pool}"' in page.text
    assert page.text.count('class="elo-plot"') == len(game_variant_names())
    assert "heuristic vs random" in re.sub(r"<[^>]+>", "", page.text)
    assert 'data-live="' not in page.text  # finished: no live stream
    data = client.get(f"/api/t/{tid}").json()
    assert data["games_stored"] == 2 * len(game_variant_names())
    assert {b["bot"] for b in data["pools"][0]["standings"]} == {"heuristic", "random"}


@pytest.mark.slow  # over 2 s (the fast loop's budget); .ci/run runs it
def test_every_game_of_every_variant_replays(client: TestClient, finished_db: Path) -> None:
    tid, games = ids(finished_db)
    store = open_store(str(finished_db), readonly=True)
    try:
        for gid in games:
            record = store.find_game(gid, tid).record
            assert record is not None
            data = client.get("/api" + game_url(tid, gid)).json()
            assert data["variant"] == record["variant"]
            answered = [d for d in record["decisions"] if "answer" in d]
            steps = data["steps"]
            assert len(steps) == len(answered) + 1 and steps[-1]["kind"] == "end"
            assert [s["answer"] for s in steps[:-1]] == [d["answer"] for d in answered]
            last = client.get(game_url(tid, gid) + f"?ply={len(steps)}")
            assert last.status_code == 200 and "final position" in last.text
    finally:
        store.close()


def test_a_step_without_javascript_and_its_fragment(client: TestClient, finished_db: Path) -> None:
    tid, games = ids(finished_db)
    url = game_url(tid, games[0])
    data = client.get("/api" + url).json()
    page = client.get(url + "?ply=3")
    assert 'data-ply="3"' in page.text and "<svg" in page.text
    assert f'data-position="{data["steps"][2]["position"]}"' in page.text
    fragment = client.get(url + "?partial=1&ply=3")
    assert fragment.text.lstrip().startswith('<div class="step"') and "<html" not in fragment.text
    # Out-of-range and malformed plies are refused (400), not clamped.
    last = len(data["steps"])
    assert f'data-ply="{last}"' in client.get(url + f"?ply={last}").text
    for bad in ("-5", "x", "0", "99999", str(last + 1), "1.5", " 3", "３"):
        answer = client.get(url, params={"ply": bad})
        assert answer.status_code == 400, bad
        assert "ply" in answer.text and "Traceback" not in answer.text
    assert client.get(url + "?ply=2&ply=3").status_code == 400
    assert client.get(url + "?partial=yes&ply=3").status_code == 400
    assert client.get("/api" + url + "?ply=0").json()["error"].startswith("?ply=")


def test_hostile_bot_text_is_escaped(client: TestClient, hostile: tuple[str, str]) -> None:
    HOSTILE_NAME, HOSTILE_COMMENT = hostile
    url = game_url(
        "hostile-0001",
        next(iter(client.get("/api/t/hostile-0001/games").json()["games"]))["game_id"],
    )
    page = client.get(url + "?ply=1")
    assert (
        HOSTILE_NAME not in page.text
        and "<img src=x" not in page.text
        and "<i>late" not in page.text
    )
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "&lt;img src=x onerror=" in page.text
    assert "timeout" in page.text and "random legal answer" in page.text
    assert client.get("/api" + url).json()["white"] == HOSTILE_NAME
    assert client.get("/t/hostile-0001").status_code == 200
    listed = client.get("/t/hostile-0001/games?fault=timeout")
    assert listed.status_code == 200 and 'data-count="1"' in listed.text
    assert HOSTILE_COMMENT in str(client.get("/api" + url).json()["steps"][0]["info"])


def test_games_filters(client: TestClient, finished_db: Path) -> None:
    tid, games = ids(finished_db)
    every = client.get(f"/api/t/{tid}/games").json()
    assert every["count"] == len(games)
    white_wins = client.get(f"/api/t/{tid}/games?result=white").json()
    black_wins = client.get(f"/api/t/{tid}/games?result=black").json()
    assert white_wins["count"] + black_wins["count"] == len(games)
    assert all(g["winner"] == "White" for g in white_wins["games"])
    by_bot = client.get(f"/api/t/{tid}/games?bot=random").json()
    assert by_bot["count"] == len(games)  # random plays every game of a two-bot round robin
    assert client.get(f"/api/t/{tid}/games?bot=nobody").status_code == 400
    assert client.get(f"/api/t/{tid}/games?pool=nowhere").status_code == 400
    assert client.get(f"/api/t/{tid}/games?termination=resigned").status_code == 400
    for pool in game_variant_names():
        only = client.get(f"/api/t/{tid}/games?pool={pool}").json()
        assert only["count"] == 2 and all(g["pool"] == pool for g in only["games"])
    assert client.get(f"/api/t/{tid}/games?fault=any").json()["count"] == 0
    assert client.get("/api/t/hostile-0001/games?fault=timeout").json()["count"] == 1
    assert client.get("/api/t/hostile-0001/games?fault=crash").json()["count"] == 0
    terminations = {g["termination"] for g in every["games"]}
    for termination in terminations:
        only = client.get(f"/api/t/{tid}/games?termination={termination}").json()
        assert {g["termination"] for g in only["games"]} == {termination}
    page = client.get(f"/t/{tid}/games?result=white")
    assert page.status_code == 200 and f'data-count="{white_wins["count"]}"' in page.text


def test_position_page(client: TestClient) -> None:
    page = client.get("/position/------/-----o/------/-----O?variant=long")
    assert page.status_code == 200 and 'data-variant="long"' in page.text
    assert page.text.count('class="checker white"') == 15
    flipped = client.get("/position/------/-----o/------/-----O?variant=long&side=opponent")
    assert 'data-viewer="black"' in flipped.text
    bad = client.get("/position/nonsense?variant=long")
    assert bad.status_code == 400 and "malformed position id" in bad.text
    assert client.get("/position/------/-----o/------/-----O?variant=nope").status_code == 400


def test_not_found(client: TestClient, finished_db: Path) -> None:
    tid, _ = ids(finished_db)
    assert client.get("/t/nope").status_code == 404
    assert client.get(f"/t/{tid}/g/nope").status_code == 404
    assert client.get("/api/t/nope").json()["error"]
    assert client.get("/t/nope/games").status_code == 404


def test_live_stream_sends_the_standings_then_ends(client: TestClient, finished_db: Path) -> None:
    tid, _ = ids(finished_db)
    with client.stream("GET", f"/t/{tid}/live") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        text = ""
        for chunk in response.iter_text():
            text += chunk
            if "event: done" in text:
                break
    assert "event: standings" in text and 'data: <div class="summary">' in text
    assert 'data-games="' in text


def test_static_files_and_no_cdn(client: TestClient, finished_db: Path) -> None:
    tid, games = ids(finished_db)
    assert client.get("/static/nardy.js").status_code == 200
    assert client.get("/static/nardy.css").status_code == 200
    for url in ("/", f"/t/{tid}", game_url(tid, games[0])):
        assert re.findall(r'(?:src|href)="(https?:)?//', client.get(url).text) == []


def test_the_spectator_starts_before_its_database_exists(tmp_path: Path) -> None:
    """``nardy web`` may be started before ``nardy arena run`` creates the database: an empty
    list (and 404s) until then, the tournament once it is there; the file is never created."""
    from nardy.arena.competition.schedule import definition_from_flags
    from nardy.arena.competition.tournament import Tournament

    db = tmp_path / "later.db"
    with TestClient(create_app(str(db))) as c:
        assert c.get("/api/tournaments").json() == []
        page = c.get("/")
        assert page.status_code == 200 and "no tournament yet" in page.text
        assert c.get("/t/anything").status_code == 404
        assert not db.exists()
        store = open_store(str(db))
        try:
            d = definition_from_flags(
                variants=["backgammon"], bots="heuristic,random", games=2, seed=1, name="late"
            )
            Tournament(d, store).run()
        finally:
            store.close()
        assert [t["name"] for t in c.get("/api/tournaments").json()] == ["late"]


def test_match_games_replay_with_their_starter_and_score(tmp_path: Path) -> None:
    """Later games of a match start without an opening throw (the previous winner rolls): the
    replay must follow the record's starter."""
    from nardy.arena.competition.schedule import definition_from_flags
    from nardy.arena.competition.tournament import Tournament

    db = tmp_path / "match.db"
    store = open_store(str(db))
    try:
        d = definition_from_flags(
            variants=["long"], bots="heuristic,random", games=1, seed=3, match_length=5
        )
        Tournament(d, store).run()
        tid = store.tournaments()[0].tournament_id
        rows = store.games(tid, records=True)
    finally:
        store.close()
    assert len(rows) >= 2  # a game is worth at most 3: a match to 5 has two games or more
    with TestClient(create_app(str(db))) as c:
        for row in rows:
            assert row.record is not None
            data = c.get("/api" + game_url(tid, row.game_id)).json()
            answered = [e["answer"] for e in row.record["decisions"] if "answer" in e]
            assert [s["answer"] for s in data["steps"][:-1]] == answered
            page = c.get(game_url(tid, row.game_id))
            text = re.sub(r"<[^>]+>", "", page.text)
            assert f"match to 5, game {row.record['setup']['match']['game_no']}" in text


@pytest.mark.slow
def test_nardy_web_serves_a_database_created_after_it_started(tmp_path: Path) -> None:
    import json
    import urllib.request

    from spectator_browser import spectator

    from nardy.arena.competition.schedule import definition_from_flags
    from nardy.arena.competition.tournament import Tournament

    db = tmp_path / "later.db"
    with spectator(db) as base:
        with urllib.request.urlopen(base + "/api/tournaments", timeout=5) as answer:
            assert json.load(answer) == []
        store = open_store(str(db))
        try:
            d = definition_from_flags(
                variants=["long"], bots="heuristic,random", games=2, seed=2, name="later"
            )
            Tournament(d, store).run()
        finally:
            store.close()
        with urllib.request.urlopen(base + "/", timeout=5) as answer:
            assert "later" in answer.read().decode()


def test_a_tavli_match_page_shows_each_games_variant_and_the_score(
    client: TestClient, finished_db: Path
) -> None:
    """RULES.md §3.12.3: a tavli match's page names the match variant and its cycle, each game's
    own variant (portes → plakoto → fevga in turn) and the running score, which the stored
    results add up to (a draw adds 0); the standings and pairings show a Drawn column."""
    store = open_store(str(finished_db), readonly=True)
    try:
        tid = next(t.tournament_id for t in store.tournaments() if t.name == "tavli")
        rows = store.games(tid, records=True)
    finally:
        store.close()
    cycle = ["portes", "plakoto", "fevga"]
    units = sorted({r.unit_id for r in rows})
    assert len(units) == 2
    for unit in units:
        games = sorted((r for r in rows if r.unit_id == unit), key=lambda r: r.game_no)
        a, b = games[0].a, games[0].b
        score = {a: 0, b: 0}
        expected = []
        for g in games:
            if g.winner is not None:
                score[g.white if g.winner == 0 else g.black] += g.points
            expected.append([score[a], score[b]])
        data = client.get(f"/api/t/{tid}/m/{quote(unit, safe='')}").json()
        assert data["variant"] == "tavli" and data["cycle"] == cycle and data["length"] == 3
        assert [g["variant"] for g in data["games"]] == [cycle[i % 3] for i in range(len(games))]
        assert [g["score_after"] for g in data["games"]] == expected
        assert data["score"] == expected[-1] and max(data["score"]) >= 3
        page = client.get(f"/t/{tid}/m/{quote(unit, safe='')}")
        assert page.status_code == 200
        cells = re.findall(r'<td class="variant">(\w+)</td>', page.text)
        assert cells == [g["variant"] for g in data["games"]]
        assert "tavli" in page.text and "portes → plakoto → fevga" in page.text
    standings = client.get(f"/t/{tid}").text
    assert standings.count('<th class="num draws"') == 2  # the standings and the pairings
    assert len(re.findall(r'<td class="num draws">\d+</td>', standings)) == 3  # 2 bots, 1 pairing


def test_no_drawn_column_where_no_game_can_draw(client: TestClient, finished_db: Path) -> None:
    """Only plakoto's double mother pin draws (RULES.md §2.6): other pools show no Drawn column."""
    store = open_store(str(finished_db), readonly=True)
    try:
        tournaments = [t for t in store.tournaments() if t.name != "tavli"]
        pools = {
            t.tournament_id: {
                (r.record or {}).get("variant") for r in store.games(t.tournament_id, records=True)
            }
            for t in tournaments
        }
    finally:
        store.close()
    checked = 0
    for tid, variants in pools.items():
        if any(v in ("plakoto", "tavli") for v in variants):
            continue
        page = client.get(f"/t/{tid}").text
        assert "draws" not in page, tid
        checked += 1
    assert checked


def test_plakoto_plays_show_their_pins(client: TestClient, finished_db: Path) -> None:
    """RULES.md §3.12.2 writes a pinning step ``13/7^``: the spectator shows each plakoto play with
    its pins marked (the recorded answer stays as the bot sent it), the other variants unmarked."""
    tid, games = ids(finished_db)
    marked = 0
    for gid in games:
        data = client.get("/api" + game_url(tid, gid)).json()
        for step in data["steps"]:
            if step["kind"] != "play" or step["answer"] is None:
                continue
            assert step["shown"].replace("^", "") == step["answer"]
            if "^" in step["shown"]:
                assert data["variant"] == "plakoto"
                marked += 1
    assert marked > 0


def test_the_then_lines_are_written_in_the_numbers_of_the_board_shown(
    client: TestClient, finished_db: Path
) -> None:
    """The game page's "Then" (a forced reply) reads on the board beside it: in the decider's
    numbers (nardy.game_view's ``after_shown``), not in the opponent's, as the record has it."""
    from nardy.game_view import game_steps

    tid, _ = ids(finished_db)
    store = open_store(str(finished_db), readonly=True)
    try:
        rows = [g for g in store.games(tid, records=True) if g.pool == "backgammon"]
    finally:
        store.close()
    for row in rows:
        for step in game_steps(row.record or {}).steps:
            if step.after_shown == step.after:
                continue
            page = client.get(game_url(tid, row.game_id) + f"?ply={step.number}").text
            then = page[page.index("<dt>Then</dt>") :]
            then = then[: then.index("</dd>")]
            assert re.findall(r"<li>(.*?)</li>", then) == [
                line.replace("&", "&amp;") for line in step.after_shown
            ]
            return
    pytest.fail("no backgammon game with a forced reply of the opponent")


def test_a_tavli_games_list_names_which_game_each_is(client: TestClient, finished_db: Path) -> None:
    """The games list of a tavli pool names each game's own variant (portes, plakoto or fevga,
    from its record), which the pool's name (tavli…) does not say; the JSON too."""
    store = open_store(str(finished_db), readonly=True)
    try:
        tid = next(t.tournament_id for t in store.tournaments() if t.name == "tavli")
        rows = store.games(tid, records=True)
        every = next(t.tournament_id for t in store.tournaments() if t.name == "every-variant")
    finally:
        store.close()
    own = {r.game_id: (r.record or {})["variant"] for r in rows}
    assert len(set(own.values())) >= 2 and set(own.values()) <= {"portes", "plakoto", "fevga"}
    page = client.get(f"/t/{quote(tid, safe='')}/games").text
    shown = dict(
        re.findall(
            r'<tr data-game="([^"]+)">.*?<span class="sub variant"[^>]*>(\w+)</span>', page, re.S
        )
    )
    assert shown == own
    data = client.get(f"/api/t/{quote(tid, safe='')}/games").json()
    assert {g["game_id"]: g["variant"] for g in data["games"]} == own
    # A pool of one variant: its name says it; the list adds nothing, the JSON names it.
    plain = client.get(f"/t/{quote(every, safe='')}/games").text
    assert 'class="sub variant"' not in plain
    listed = client.get(f"/api/t/{quote(every, safe='')}/games").json()["games"]
    assert all(g["variant"] == g["pool"] for g in listed)


def test_a_pinned_checker_is_explained_under_the_board(
    client: TestClient, finished_db: Path
) -> None:
    """RULES.md §3.12.2: a board that draws a pinned checker (a gold ring, with a tooltip a phone
    does not show) has a legend line under it; a board without one has none."""
    from nardy.game_view import game_steps

    tid, _ = ids(finished_db)
    store = open_store(str(finished_db), readonly=True)
    try:
        rows = [g for g in store.games(tid, records=True) if g.pool == "plakoto"]
    finally:
        store.close()
    seen = {True: 0, False: 0}
    for row in rows:
        for step in game_steps(row.record or {}).steps[:-1]:
            pinned = bool(step.position.pinned)
            if seen[pinned]:
                continue
            page = client.get(game_url(tid, row.game_id) + f"?ply={step.number}").text
            board = page[page.index('<div class="board">') :]
            board = board[: board.index("<dl")]
            assert ('class="checker white pinned"' in board or 'black pinned"' in board) == pinned
            assert board.count('<p class="legend">') == pinned
            assert ("gold ring: a pinned checker" in board) == pinned
            seen[pinned] += 1
    assert seen[True] and seen[False], seen
