"""The spectator in a real browser (Debian's Chromium via Playwright), served by a real process.

Skipped, with the reason, where playwright or chromium is missing; ``.ci/run`` installs both.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from spectator_browser import browser_page, spectator, why_no_browser

pytestmark = [
    pytest.mark.slow,  # drives a browser
    pytest.mark.browser,
    pytest.mark.slow,  # each starts a server process and Chromium: seconds, not milliseconds
    pytest.mark.skipif(why_no_browser() is not None, reason=str(why_no_browser())),
]

from nardy.arena.records.storage import open_store  # noqa: E402
from nardy.core import load_variant  # noqa: E402
from nardy.core.dice import ScriptedDice  # noqa: E402
from nardy.core.game import CubeSettings, Game  # noqa: E402
from nardy.core.position import Position  # noqa: E402

# What the page shows for every checker: its colour, its point (as printed: the coordinates of the
# player to decide, "bar" or "off") and whether it is drawn inside that point's triangle.
CHECKERS_JS = """() => Array.from(document.querySelectorAll('#step svg .checker')).map(c => {
  const point = c.dataset.point;
  let inside = true;
  if (point !== 'bar' && point !== 'off') {
    const tri = document.querySelector(`#step svg polygon.point[data-point="${point}"]`).getBBox();
    const cx = Number(c.getAttribute('cx'));
    inside = tri.x <= cx && cx <= tri.x + tri.width;
  }
  return [c.classList.contains('white') ? 'white' : 'black', point, inside];
})"""


def movers_views(record: dict[str, Any]) -> list[tuple[Position, str]]:
    """The position at every recorded decision from the deciding player's view, then at the end
    from the winner's, with that player's colour: the kernel replays the record's dice and
    answers (independently of the spectator's own replay code)."""
    variant = load_variant(record["variant"], record.get("options") or {})
    setup = record.get("setup") or {}
    cube = CubeSettings(**setup["cube"]) if "cube" in setup else None
    game = Game(
        variant, ScriptedDice(record["game"]["rolls"]), starter=setup.get("starter"), cube=cube
    )
    colours = ("white", "black")
    out = []
    for entry in record["decisions"]:
        decision = game.decision
        assert decision is not None
        out.append((game.position_for(decision.player), colours[decision.player]))
        if "answer" not in entry:
            break
        answer: Any = entry["answer"]
        if entry["kind"] == "double":
            answer = answer == "double"
        game.decide(answer)
    winner = game.result.winner if game.result is not None else game.mover
    out.append((game.position_for(winner), colours[winner]))
    return out


def expected_checkers(position: Position, mover: str = "white") -> list[tuple[str, str]]:
    """Each checker's colour and printed point on a board numbered in ``mover``'s coordinates."""
    other = "black" if mover == "white" else "white"
    found = []
    for index, count in enumerate(position.points):
        colour = mover if count > 0 else other
        found += [(colour, str(index + 1))] * abs(count)
    for point in position.pinned:  # plakoto (RULES.md §3.12.2): beneath the other side's stack
        found.append((other if position.points[point - 1] > 0 else mover, str(point)))
    for side, colour in ((0, mover), (1, other)):
        found += [(colour, "bar")] * position.bar[side] + [(colour, "off")] * position.off[side]
    return sorted(found)


def stored(db: Path, name: str) -> tuple[str, list[Any]]:
    store = open_store(str(db), readonly=True)
    try:
        tid = next(t.tournament_id for t in store.tournaments() if t.name == name)
        return tid, store.games(tid, records=True)
    finally:
        store.close()


def test_step_through_a_game_of_every_variant_with_the_arrow_keys(finished_db: Path) -> None:
    tid, games = stored(finished_db, "every-variant")
    one_per_variant = {g.pool: g for g in games}
    with spectator(finished_db) as base, browser_page() as page:
        page.goto(f"{base}/")
        page.click(f'tr[data-tournament="{tid}"] a')
        page.wait_for_selector(".standings")
        assert page.url.endswith(f"/t/{tid}")
        for pool, row in sorted(one_per_variant.items()):
            positions = movers_views(row.record)
            page.goto(f"{base}/t/{tid}/games?bot=heuristic")
            page.click(f'tr[data-game="{row.game_id}"] a')
            page.wait_for_selector('#step[data-ply="1"]')
            for ply, (position, mover) in enumerate(positions, start=1):
                if ply > 1:
                    page.keyboard.press("ArrowRight")
                    page.wait_for_selector(f'#step[data-ply="{ply}"]')
                shown = page.evaluate(CHECKERS_JS)
                assert sorted((c, p) for c, p, _ in shown) == expected_checkers(position, mover), (
                    pool,
                    ply,
                )
                assert all(inside for _, _, inside in shown), (pool, ply)
            # The last step stays the last; the URL is the step's permalink.
            page.keyboard.press("ArrowRight")
            assert page.get_attribute("#step", "data-ply") == str(len(positions))
            assert f"ply={len(positions)}" in page.url
            page.keyboard.press("ArrowLeft")
            page.wait_for_selector(f'#step[data-ply="{len(positions) - 1}"]')
        # A permalink opened afresh shows the same step, also without the script.
        row = one_per_variant["backgammon"]
        url = f"{base}/t/{quote(tid, safe='')}/g/{quote(row.game_id, safe='')}?ply=5"
        page.goto(url)
        assert page.get_attribute("#step", "data-ply") == "5"
        position, mover = movers_views(row.record)[4]
        assert sorted((c, p) for c, p, _ in page.evaluate(CHECKERS_JS)) == expected_checkers(
            position, mover
        )


def test_a_tavli_match_page_shows_each_games_variant(finished_db: Path, tmp_path: Path) -> None:
    """RULES.md §3.12.3: the tavli match page names each game's variant (portes → plakoto →
    fevga in turn) and the score after it; a game link opens that game, drawn by its own variant's
    board (plakoto's and fevga's checkers as the kernel replays them)."""
    tid, games = stored(finished_db, "tavli")
    unit = min(g.unit_id for g in games)
    mine = sorted((g for g in games if g.unit_id == unit), key=lambda g: g.game_no)
    cycle = ["portes", "plakoto", "fevga"]
    with spectator(finished_db) as base, browser_page((1280, 800)) as page:
        page.goto(f"{base}/t/{quote(tid, safe='')}/m/{quote(unit, safe='')}")
        shown = page.evaluate(
            """() => Array.from(document.querySelectorAll('#match tbody tr')).map(
                r => [r.querySelector('td.variant').textContent, r.dataset.score])"""
        )
        assert [v for v, _ in shown] == [cycle[i % 3] for i in range(len(mine))]
        assert "portes → plakoto → fevga" in page.text_content(".meta")
        page.screenshot(path=str(tmp_path / "tavli-match.png"), full_page=True)
        for row in mine[1:3]:  # the plakoto and fevga games, each on its own board
            page.goto(f"{base}/t/{quote(tid, safe='')}/m/{quote(unit, safe='')}")
            page.click(f'tr[data-game="{row.game_id}"] a')
            page.wait_for_selector('#step[data-ply="1"]')
            position, mover = movers_views(row.record)[0]
            assert sorted((c, p) for c, p, _ in page.evaluate(CHECKERS_JS)) == (
                expected_checkers(position, mover)
            ), row.record["variant"]


def test_a_hostile_bot_name_is_shown_as_text(finished_db: Path, hostile: tuple[str, str]) -> None:
    name, comment = hostile
    _, games = stored(finished_db, "hostile")
    dialogs: list[str] = []
    with spectator(finished_db) as base, browser_page() as page:
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{base}/t/hostile-0001/g/{quote(games[0].game_id, safe='')}?ply=1")
        assert page.text_content("#white-name") == name
        assert comment in (page.text_content(".comment") or "")
        assert page.locator("script").count() == 1  # only our own nardy.js
        time.sleep(0.3)
        assert dialogs == []


def test_a_running_tournament_updates_without_reload(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nardy",
            "arena",
            "run",
            "--variant",
            "long",
            "--bots",
            "heuristic,random",
            "--games",
            "5000",  # far more than the test watches; it is stopped at the end
            "--seed",
            "3",
            "--db",
            str(db),
            "--quiet",
            "--name",
            "live",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:  # wait until the run has created its tournament
            if db.exists():
                try:
                    store = open_store(str(db), readonly=True)
                    try:
                        if store.tournaments():
                            break
                    finally:
                        store.close()
                except Exception:
                    pass
            assert run.poll() is None and time.monotonic() < deadline, "the run did not start"
            time.sleep(0.1)
        tid = "live-"  # the id is the name and a hash
        with spectator(db) as base, browser_page() as page:
            page.goto(f"{base}/")
            page.click('tr[data-tournament^="live-"] a')
            page.wait_for_selector("#games-stored")
            tid = page.url.rsplit("/", 1)[-1]
            page.evaluate("() => { window.__notReloaded = true; }")
            first = int(page.get_attribute("#games-stored", "data-games") or "0")
            page.wait_for_function(
                f"() => Number(document.querySelector('#games-stored').dataset.games) >= {first + 3}",
                timeout=60_000,
            )
            later = int(page.get_attribute("#games-stored", "data-games") or "0")
            assert later >= first + 3
            assert page.evaluate("() => window.__notReloaded") is True
            assert page.url.endswith(tid)
            games_cell = page.text_content('tr[data-bot="heuristic"] td.games')
            assert games_cell is not None and int(games_cell) >= later - 1
            assert "on" in (page.get_attribute("#live-badge", "class") or "")
    finally:
        run.terminate()
        try:
            run.wait(timeout=20)
        except subprocess.TimeoutExpired:
            run.kill()
            run.wait()
        if run.stderr:
            run.stderr.close()


def test_live_standings_from_the_arenas_watch_stream(tmp_path: Path) -> None:
    """An arena server runs the tournament; ``nardy web --arena`` wakes the page on its
    ``WatchTournament`` events (the database poll is set to 60 s, so it cannot be what updates
    the page)."""
    grpc = pytest.importorskip("grpc")
    from google.protobuf.duration_pb2 import Duration

    from nardy.arena.protocol import arena_pb2, arena_pb2_grpc, game_pb2
    from nardy.arena.sdk import builtin, serve_bot
    from nardy.arena.service.core import Arena
    from nardy.arena.service.server import ArenaServer
    from nardy.bots.loop import TimeControl

    db = tmp_path / "arena.db"
    arena = Arena(time_control=TimeControl(per_decision=5.0), db=db, standings_interval=0.0)
    server = ArenaServer(arena).start()
    bots = [serve_bot(builtin("heuristic", 1)), serve_bot(builtin("random", 2))]
    try:
        ids = [
            arena.register_server_bot(name, bot.address).bot_id
            for name, bot in zip(("heuristic", "random"), bots, strict=True)
        ]
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            created = arena_pb2_grpc.ArenaServiceStub(channel).CreateTournament(
                arena_pb2.CreateTournamentRequest(
                    name="watched",
                    bot_ids=ids,
                    variant=game_pb2.VariantSpec(name="long"),
                    games_per_pairing=400,
                    seed=5,
                    concurrency=1,
                    time_control=arena_pb2.TimeControl(per_decision=Duration(seconds=5)),
                ),
                timeout=10,
            )
        tid = created.tournament_id
        address = f"127.0.0.1:{server.port}"
        with spectator(db, "--arena", address, "--poll", "60") as base, browser_page() as page:
            page.goto(f"{base}/t/{quote(tid, safe='')}")
            page.wait_for_selector("#games-stored")
            page.evaluate("() => { window.__notReloaded = true; }")
            first = int(page.get_attribute("#games-stored", "data-games") or "0")
            page.wait_for_function(
                f"() => Number(document.querySelector('#games-stored').dataset.games) >= {first + 2}",
                timeout=30_000,
            )
            assert page.evaluate("() => window.__notReloaded") is True
    finally:
        server.stop(grace=0.5)
        for bot in bots:
            bot.stop(0)


# -- a board players read at a glance, on a phone and on a desktop --------------------------------

OVERFLOW_JS = """() => {
  const d = document.documentElement;
  const wide = Array.from(document.querySelectorAll('body *')).filter(e => {
    if (e.closest('.scroll')) return false;  // a table may scroll inside its own box
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.right > d.clientWidth + 1;
  }).map(e => e.tagName + '.' + e.className);
  return [d.scrollWidth, d.clientWidth, wide.slice(0, 5)];
}"""


# The page's text without the technical ids shown as code (a game id names the bots' ids).
VISIBLE_NAMES_JS = """() => {
  const body = document.body.cloneNode(true);
  body.querySelectorAll('code.id, script, desc').forEach(e => e.remove());
  return body.textContent;
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_pages_fit_the_window_and_read_at_a_glance(
    named_db: Path, tmp_path: Path, width: int
) -> None:
    """Every page at 390 and 1280 px: nothing wider than the window (tables scroll in their own
    box), the bots by name, the board with both pip counts and the match score."""
    tid, games = stored(named_db, "served")
    game = games[0]
    urls = {
        "tournaments": "/",
        "tournament": f"/t/{quote(tid, safe='')}",
        "games": f"/t/{quote(tid, safe='')}/games",
        "match": f"/t/{quote(tid, safe='')}/m/{quote(game.unit_id, safe='')}",
        "game": f"/t/{quote(tid, safe='')}/g/{quote(game.game_id, safe='')}?ply=2",
        "analysis": f"/t/{quote(tid, safe='')}/a/{quote(game.game_id, safe='')}?d=2",
        "position": "/position/b----E/-C---e/E---c-/e----B?side=opponent&mover=black",
    }
    with spectator(named_db) as base, browser_page((width, 800)) as page:
        for name, url in urls.items():
            page.goto(base + url)
            scroll, client, wide = page.evaluate(OVERFLOW_JS)
            assert scroll <= client and wide == [], (name, width, scroll, client, wide)
            page.screenshot(path=str(tmp_path / f"{name}-{width}.png"), full_page=True)
            text = page.evaluate(VISIBLE_NAMES_JS)
            if name not in ("tournaments", "position"):
                assert "heur" in text and "local-heur" not in text, name
        page.goto(base + urls["game"])
        bands = page.evaluate(
            """() => Array.from(document.querySelectorAll('#step svg .band')).map(
                b => [b.getAttribute('class'), b.textContent.replace(/\\s+/g, ' ').trim()])"""
        )
        assert len(bands) == 2 and all("pips" in t for _, t in bands), bands
        assert any("match to 5" in t for _, t in bands), bands
        # The board is numbered as the player to decide writes: Black decides at ply 2.
        assert page.get_attribute("#step", "data-player") == "Black"
        assert page.get_attribute("#step svg", "data-numbering") == "black"
        # A phone shows the board at least 350 px wide.
        box = page.locator("#step svg").bounding_box()
        assert box is not None and box["width"] >= min(350, width - 40)


def test_autoplay_steps_through_the_game_and_pauses(finished_db: Path) -> None:
    """The game page's Play steps through the decisions by itself (the arrow keys' step-swapping:
    each step the position the kernel replays), Pause stops it where it is, and it stops by
    itself at the final position; without the script there is no button."""
    tid, games = stored(finished_db, "every-variant")
    row = next(g for g in games if g.pool == "backgammon")
    positions = movers_views(row.record)
    url = f"/t/{quote(tid, safe='')}/g/{quote(row.game_id, safe='')}"
    with spectator(finished_db) as base, browser_page() as page:
        page.goto(base + url)
        page.wait_for_selector("#autoplay:visible")
        page.evaluate("() => { document.getElementById('autoplay').dataset.interval = '300'; }")
        page.click("#autoplay")
        assert page.get_attribute("#autoplay", "aria-pressed") == "true"
        page.wait_for_function("() => Number(document.getElementById('step').dataset.ply) >= 4")
        page.click("#autoplay")
        assert page.get_attribute("#autoplay", "aria-pressed") == "false"
        page.wait_for_timeout(400)  # a step already asked for may still land
        paused = int(page.get_attribute("#step", "data-ply") or 0)
        page.wait_for_timeout(800)
        assert int(page.get_attribute("#step", "data-ply") or 0) == paused >= 4
        assert f"ply={paused}" in page.url
        position, mover = positions[paused - 1]
        shown = sorted((c, p) for c, p, _ in page.evaluate(CHECKERS_JS))
        assert shown == expected_checkers(position, mover)
        # Played on, it stops at the final position.
        page.keyboard.press("p")
        page.wait_for_selector(f'#step[data-ply="{len(positions)}"]', timeout=60_000)
        page.wait_for_selector('#autoplay[aria-pressed="false"]')
        assert page.text_content("#autoplay") == "▶ Play"
        # Without the script the button stays hidden (the page works by links alone).
        page.route("**/nardy.js", lambda route: route.abort())
        page.goto(base + url)
        assert not page.is_visible("#autoplay")


BAND_TEXT_JS = """() => Array.from(document.querySelectorAll('#step svg .band')).map(
  band => Array.from(band.querySelectorAll('text')).map(t => {
    const r = t.getBoundingClientRect();
    return [t.getAttribute('class').split(' ')[0], t.textContent, r.left, r.right, r.height];
  }))"""


def test_pip_counts_read_on_a_phone(named_db: Path, tmp_path: Path) -> None:
    """At 390 px the board is drawn at under half its size: the pip counts are still written at
    a readable size (over 14 px high, as the page's own small print), and run into neither the
    name nor the match score beside them."""
    tid, games = stored(named_db, "served")
    game = games[0]
    url = f"/t/{quote(tid, safe='')}/g/{quote(game.game_id, safe='')}?ply=2"
    with spectator(named_db) as base, browser_page((390, 800)) as page:
        page.goto(base + url)
        page.locator("#step .board").screenshot(path=str(tmp_path / "pips-390.png"))
        bands = page.evaluate(BAND_TEXT_JS)
        pips = [t for band in bands for t in band if t[0] == "pips"]
        assert len(pips) == 2 and all(t[1].endswith(" pips") for t in pips), bands
        assert all(height >= 14 for *_, height in pips), bands
        assert any(t[0] == "score" for band in bands for t in band), bands  # a match game
        for band in bands:
            boxes = sorted((left, right, kind) for kind, _, left, right, _ in band)
            for (_, right, kind), (left, _, other) in itertools.pairwise(boxes):
                if "pips" in (kind, other):
                    assert right <= left, (kind, other, band)
