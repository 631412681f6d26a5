"""Make the pictures in docs/img: example SVG boards and screenshots of the web spectator.

Needs the web extra, playwright and Debian's chromium (``apt-get install chromium``)::

    .venv/bin/python docs/img/make_images.py             # every picture
    .venv/bin/python docs/img/make_images.py analysis    # the analysis page's only

It plays two small tournaments into a temporary database, serves it with ``nardy web`` on a free
loopback port and photographs the main pages with Chromium.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tests" / "viewer"))

from spectator_browser import browser_page, spectator  # noqa: E402

from nardy.arena.records.storage import open_store  # noqa: E402
from nardy.core import Position, load_variant  # noqa: E402
from nardy.svg import board  # noqa: E402


def boards() -> dict[str, str]:
    bg = load_variant("backgammon")
    long = load_variant("long")
    return {
        "board-backgammon.svg": board(
            bg.start_position(), bg, dice=(6, 5), last_play="13/7 13/8", cube=(1, None)
        ),
        "board-backgammon-bar.svg": board(
            Position.from_sides(
                {24: 1, 13: 3, 8: 2, 6: 4, 5: 2, 4: 1}, {20: 3, 19: 4, 7: 2, 12: 3}, bar=(2, 1)
            ),
            bg,
            mover="black",
            dice=(4, 2),
            cube=(4, "opponent"),
        ),
        "board-long.svg": board(
            Position.from_sides(
                {24: 9, 19: 1, 17: 1, 14: 1, 10: 1, 5: 2}, {12: 8, 7: 2, 2: 1, 20: 1, 15: 3}
            ),
            long,
            dice=(5, 3),
            last_play="24/19 14/11",
        ),
        "board-match.svg": board(
            Position.from_sides(
                {13: 4, 8: 2, 6: 5, 5: 2, 4: 1, 24: 1}, {1: 2, 12: 4, 17: 3, 19: 4, 22: 2}
            ),
            bg,
            cube=(2, "opponent"),
            offered=4,
            pips=True,
            names=("gnubg0", "heur"),
            score=(2, 3),
            match_length=5,
        ),
    }


def run(*args: str, db: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "nardy", "arena", "run", *args, "--db", str(db), "--quiet"],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def analysis_shots(base: str, page: Any, tournament_id: str, game_id: str) -> None:
    """The analysis page of a game at its first blundered play, at 1280 and 390 px, and the
    tournament's analysed standings."""
    path = f"/t/{tournament_id}/a/{quote(game_id, safe='')}"
    with urllib.request.urlopen(f"{base}/api{path}", timeout=120) as answer:
        decisions = json.load(answer)["decisions"]
    shown = next(
        (
            d["number"]
            for d in decisions
            if d["kind"] == "play" and d["mark"] == "blunder" and d["played"]
        ),
        1,
    )
    for width, name in ((1280, "spectator-analysis.png"), (390, "spectator-analysis-390.png")):
        page.set_viewport_size({"width": width, "height": 1000 if width > 400 else 844})
        page.goto(f"{base}{path}?d={shown}")
        page.screenshot(path=str(HERE / name), full_page=True)
    # The tournament's analysed standings, once its background job is done.
    api = f"{base}/api/t/{tournament_id}/analysis"
    for _ in range(600):
        with urllib.request.urlopen(api, timeout=60) as answer:
            if json.load(answer)["finished"]:
                break
        time.sleep(0.5)
    page.set_viewport_size({"width": 1280, "height": 600})
    page.goto(f"{base}/t/{tournament_id}/analysis")
    page.screenshot(path=str(HERE / "spectator-tournament-analysis.png"), full_page=True)


def main(only: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "demo.db"
        run(
            "--variant",
            "long",
            "--bots",
            "heuristic,random,gambler=random,steady=heuristic",
            "--games",
            "8",
            "--seed",
            "3",
            "--name",
            "long-round-robin",
            db=db,
        )
        run(
            "--variant",
            "backgammon",
            "--bots",
            "heuristic,random",
            "--games",
            "10",
            "--seed",
            "3",
            "--name",
            "backgammon-duel",
            db=db,
        )
        run(
            "--variant",
            "backgammon",
            "--bots",
            "heuristic,random",
            "--games",
            "2",
            "--match-length",
            "5",
            "--seed",
            "4",
            "--name",
            "backgammon-matches",
            db=db,
        )
        store = open_store(str(db), readonly=True)
        bid = next(t.tournament_id for t in store.tournaments() if t.name == "backgammon-duel")
        analysed = next(
            g.game_id
            for g in store.games(bid, records=True)
            if 30 <= len((g.record or {}).get("decisions", [])) <= 70
        )
        tid = next(t.tournament_id for t in store.tournaments() if t.name == "long-round-robin")
        game = store.games(tid)[5].game_id
        mid = next(t.tournament_id for t in store.tournaments() if t.name == "backgammon-matches")
        match_games = store.games(mid)
        unit = match_games[0].unit_id
        match_game = match_games[0].game_id
        store.close()
        with spectator(db) as base, browser_page((1280, 900)) as page:
            if only == "analysis":
                analysis_shots(base, page, bid, analysed)
                return
            for name, svg in boards().items():
                (HERE / name).write_text(svg + "\n", encoding="utf-8")
                page.set_content(f"<body style='margin:0'>{svg}</body>")
                page.locator("svg").screenshot(path=str(HERE / name.replace(".svg", ".png")))
            shots = {
                "spectator-tournaments.png": "/",
                "spectator-tournament.png": f"/t/{tid}",
                "spectator-games.png": f"/t/{tid}/games?bot=steady",
                "spectator-game.png": f"/t/{tid}/g/{quote(game, safe='')}?ply=12",
            }
            shots["spectator-match.png"] = f"/t/{mid}/m/{quote(unit, safe='')}"
            shots["spectator-match-game.png"] = f"/t/{mid}/g/{quote(match_game, safe='')}?ply=6"
            for name, url in shots.items():
                # A full-page shot is as tall as the page; the games list is cut at 900 pixels.
                # (The game page's list of decisions is as tall as 80% of the window.)
                full = name != "spectator-games.png"
                tall = not full or "game" in name
                page.set_viewport_size({"width": 1280, "height": 1000 if tall else 300})
                page.goto(base + url)
                page.screenshot(path=str(HERE / name), full_page=full)
            # A phone (390 px wide): the whole page, scrolled.
            page.set_viewport_size({"width": 390, "height": 844})
            phone = {
                "spectator-game-390.png": shots["spectator-game.png"],
                "spectator-games-390.png": f"/t/{tid}/games",
                "spectator-tournament-390.png": f"/t/{tid}",
            }
            for name, url in phone.items():
                page.goto(base + url)
                page.screenshot(path=str(HERE / name), full_page=name != "spectator-games-390.png")
            analysis_shots(base, page, bid, analysed)
    print("wrote", ", ".join(sorted(p.name for p in HERE.glob("*.png"))))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
