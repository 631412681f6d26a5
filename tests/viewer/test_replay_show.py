"""nardy arena replay GAME_ID --show / --svg DIR."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from nardy.arena.records.storage import open_store
from nardy.cli import cli


def a_game(finished_db: Path, variant: str) -> tuple[str, str, dict]:
    store = open_store(str(finished_db), readonly=True)
    try:
        tid = next(t.tournament_id for t in store.tournaments() if t.name == "every-variant")
        row = next(g for g in store.games(tid, records=True) if g.pool == variant)
        assert row.record is not None
        return tid, row.game_id, row.record
    finally:
        store.close()


def test_show_prints_every_decision_with_a_board(finished_db: Path) -> None:
    tid, gid, record = a_game(finished_db, "backgammon")
    result = CliRunner().invoke(
        cli, ["arena", "replay", gid, "--db", str(finished_db), "--tournament", tid, "--show"]
    )
    assert result.exit_code == 0, result.output
    answered = [d for d in record["decisions"] if "answer" in d]
    headlines = re.findall(r"^Decision (\d+)/(\d+) · (White|Black)", result.output, re.M)
    assert len(headlines) == len(answered)
    assert [h[2] for h in headlines] == [d["player"] for d in answered]
    for decision in answered:
        if decision["kind"] == "play":
            assert f"chose {decision['answer'] or '(no move)'}" in result.output
    assert result.output.count("Position ") == len(answered) + 1  # and the final board
    end = next(line for line in result.output.splitlines() if line.startswith("End · "))
    assert re.search(r"(White|Black) \([^)]+\) wins an? \w+|drops the double", end), end
    assert "borne_off" not in end and "take or drop:" not in result.output
    assert result.output.rstrip().splitlines()[-1].startswith("OK ")  # the check still runs


def test_svg_writes_one_board_per_decision(finished_db: Path, tmp_path: Path) -> None:
    tid, gid, record = a_game(finished_db, "long")
    out = tmp_path / "boards"
    result = CliRunner().invoke(
        cli,
        ["arena", "replay", gid, "--db", str(finished_db), "--tournament", tid, "--svg", str(out)],
    )
    assert result.exit_code == 0, result.output
    files = sorted(out.glob("*.svg"))
    answered = [d for d in record["decisions"] if "answer" in d]
    assert len(files) == len(answered) + 1
    assert files[-1].name.endswith("-end.svg")
    for path in files:
        root = ET.fromstring(path.read_text())
        whites = [e for e in root.iter() if e.get("class") == "checker white"]
        blacks = [e for e in root.iter() if e.get("class") == "checker black"]
        assert len(whites) == len(blacks) == 15
        assert root.get("data-viewer") == "white"  # every board from White's seat


def test_svg_into_an_unwritable_place_is_one_line(finished_db: Path, tmp_path: Path) -> None:
    tid, gid, _ = a_game(finished_db, "long")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(
        cli,
        [
            "arena",
            "replay",
            gid,
            "--db",
            str(finished_db),
            "--tournament",
            tid,
            "--svg",
            str(blocker / "sub"),
        ],
    )
    assert result.exit_code == 1
    assert "cannot write into" in result.output and "Traceback" not in result.output
