"""The ``nardy`` command line (nardy.cli), through click's CliRunner and once as the installed script."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from nardy.cli import NardyGroup, _unavailable, cli
from nardy.core import Position, load_variant
from nardy.core.board_text import pip_counts

BUILTINS = (
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
    "hypergammon",
    "portes",
    "plakoto",
    "tavli",
)
OPENING = "b----E/-C---e/E---c-/e----B"
LONG_START = "------/-----o/------/-----O"


def runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2
    except TypeError:
        return CliRunner()  # click ≥ 8.2 keeps stderr apart by itself


def invoke(*args: str, input: str | None = None):
    # A wide terminal, so rich does not wrap the tables' cells.
    return runner().invoke(cli, list(args), input=input, env={"COLUMNS": "200"})


def assert_one_line_error(result, exit_code: int = 2) -> str:
    assert result.exit_code == exit_code, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.stderr
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    return lines[0]


class TestVariants:
    def test_table_lists_every_builtin_with_options(self):
        result = invoke("variants")
        assert result.exit_code == 0, result.output
        for name in BUILTINS:
            assert name in result.stdout
        for option in (
            "first_turn_head",
            "principle | fixed | head_only",
            "quarter_timing",
            "match_length",
        ):
            assert option in result.stdout
        assert "a match of portes → plakoto → fevga" in result.stdout

    def test_json(self):
        result = invoke("variants", "--json")
        assert result.exit_code == 0, result.output
        data = {v["name"]: v for v in json.loads(result.stdout)}
        assert set(BUILTINS) <= set(data)
        assert data["trictrac"]["base"] == "backgammon"
        assert data["tavli"]["cycle"] == ["portes", "plakoto", "fevga"]  # RULES.md §3.12.3
        assert "cycle" not in data["portes"]
        head = {o["name"]: o for o in data["long"]["options"]}["first_turn_head"]
        assert head["default"] == "principle"
        assert head["choices"] == ["principle", "fixed", "head_only"]
        for variant in data.values():
            assert variant["title"] and variant["summary"]
            assert all(
                {"name", "default", "choices", "type", "help"} <= set(o) for o in variant["options"]
            )


class TestPlay:
    def play_json(self, *args: str) -> dict:
        result = invoke("play", "--json", "--quiet", *args)
        assert result.exit_code == 0, (result.stdout, result.stderr)
        return json.loads(result.stdout)

    @pytest.mark.parametrize(
        ("variant", "options", "names"),
        [
            ("backgammon", [], {"single", "gammon", "backgammon", "drop"}),
            ("long", ["-o", "cube=true"], {"oin", "mars", "koks", "drop"}),
            ("trictrac", [], {"value 1", "value 2", "value 4", "value 8"}),
        ],
    )
    def test_results_by_kind_add_up_to_the_summary(self, variant, options, names):
        """Every game once under its kind; each bot's net points are the points of the games it
        won minus those it lost; a kind's points are its value times the cube (no Jacoby here)."""
        summary = self.play_json("-v", variant, *options, "--games", "30", "--seed", "5")
        rows = summary["results"]
        assert {row["result"] for row in rows} <= names
        assert sum(sum(row["wins"]) for row in rows) == summary["games_played"] == 30
        for slot, bot in enumerate(summary["bots"]):
            won = sum(row["points"] * row["wins"][slot] for row in rows)
            lost = sum(row["points"] * row["wins"][1 - slot] for row in rows)
            assert won - lost == bot["points"]
            assert sum(row["wins"][slot] for row in rows) == bot["wins"]
        for row in rows:
            value = 1 if row["result"] == "drop" else row["value"]
            assert row["points"] == value * row["cube"], row
        if variant != "trictrac":
            assert any(row["cube"] > 1 for row in rows)  # the cube is on: its values show

    def test_the_text_summary_shows_the_results_by_kind(self):
        result = invoke("play", "-v", "backgammon", "--games", "10", "--seed", "2", "--quiet")
        assert result.exit_code == 0, result.stderr
        assert "Results by kind" in result.stdout and "gammon" in result.stdout

    def test_twenty_games_summary_is_consistent(self, tmp_path):
        records = tmp_path / "games.jsonl"
        summary = self.play_json(
            "--variant",
            "long",
            "--bots",
            "heuristic,random",
            "--games",
            "20",
            "--seed",
            "7",
            "--jsonl",
            str(records),
        )
        assert summary["units"] == summary["games_played"] == 20 and summary["unit"] == "game"
        a, b = summary["bots"]
        assert (a["name"], b["name"]) == ("heuristic", "random")
        assert a["wins"] + b["wins"] == 20
        assert math.isclose(a["win_rate"] + b["win_rate"], 1.0)
        assert a["points"] == -b["points"]
        assert math.isclose(a["points_per_unit"], a["points"] / 20)
        assert a["points_se"] is not None and a["points_se"] >= 0
        low, high = a["points_ci95"]
        assert low <= a["points_per_unit"] <= high
        low, high = a["win_rate_ci95"]
        assert 0 <= low <= a["win_rate"] <= high <= 1

        lines = [json.loads(line) for line in records.read_text().splitlines()]
        assert len(lines) == 20
        assert [r["game"] for r in lines] == list(range(20))
        assert len({r["seed"] for r in lines}) == 20
        # The bots swap colours every game.
        assert [r["bots"]["White"] for r in lines[:4]] == [
            "heuristic",
            "random",
            "heuristic",
            "random",
        ]
        heuristic_wins = sum(
            (r["result"]["winner"] == "White") == (r["bots"]["White"] == "heuristic") for r in lines
        )
        assert heuristic_wins == a["wins"]
        assert sum(r["result"]["winner"] == "White" for r in lines) == summary["white_wins"]

    def test_same_seed_same_games(self):
        runs = [
            self.play_json("--variant", "backgammon", "--games", "6", "--seed", "3")
            for _ in range(2)
        ]
        for run in runs:
            run.pop("seconds")
        assert runs[0] == runs[1]

    def test_table(self):
        result = invoke(
            "play", "--variant", "long", "--games", "4", "--seed", "1", "--bots", "random,random"
        )
        assert result.exit_code == 0, result.stderr
        assert "random (A)" in result.stdout and "random (B)" in result.stdout
        assert "4 games" in result.stdout and "Points/game" in result.stdout

    def test_plakoto_draws_are_nobodys_wins(self, tmp_path):
        """A plakoto draw (both mothers pinned, RULES.md §3.12.2) scores 0 and is neither bot's
        win: wins + draws = games, per bot and per kind of result (seed 1 has 3 draws in 10)."""
        records = tmp_path / "games.jsonl"
        summary = self.play_json(
            "-v", "plakoto", "--bots", "random,random", "--games", "10", "--seed", "1",
            "--jsonl", str(records),
        )  # fmt: skip
        games = [json.loads(line) for line in records.read_text().splitlines()]
        drawn = [g for g in games if g["result"].get("draw")]
        assert summary["draws"] == len(drawn) == 3
        assert all(g["result"]["winner"] is None and g["result"]["points"] == 0 for g in drawn)
        assert all(g["result"]["termination"] == "draw" for g in drawn)
        assert sum(bot["wins"] for bot in summary["bots"]) + summary["draws"] == 10
        assert summary["bots"][0]["points"] + summary["bots"][1]["points"] == 0
        rows = summary["results"]
        assert [row["draws"] for row in rows if row["result"] == "draw"] == [3]
        assert all(row["wins"] == [0, 0] for row in rows if row["result"] == "draw")
        assert sum(sum(row["wins"]) + row["draws"] for row in rows) == 10
        for slot, bot in enumerate(summary["bots"]):
            assert sum(row["wins"][slot] for row in rows) == bot["wins"]
        text = invoke("play", "-v", "plakoto", "--bots", "random,random", "--games", "10",
                      "--seed", "1", "--quiet")  # fmt: skip
        assert "Draws: 3 of 10 games" in text.stdout

    def test_tavli_match_cycles_the_games_variants(self, tmp_path):
        """RULES.md §3.12.3: a tavli match plays portes → plakoto → fevga → portes …, each game by its
        own variant, until a player has ≥ 5 points (a draw adds 0); the game after a decided game is
        started by its winner (no opening throw), after a draw by a new opening throw."""
        records = tmp_path / "games.jsonl"
        summary = self.play_json(
            "-v", "tavli", "--match", "5", "--games", "2", "--seed", "3",
            "--jsonl", str(records),
        )  # fmt: skip
        games = [json.loads(line) for line in records.read_text().splitlines()]
        cycle = ["portes", "plakoto", "fevga"]
        for match in (0, 1):
            mine = [g for g in games if g["match"] == match]
            assert [g["game"] for g in mine] == list(range(len(mine)))
            assert [g["variant"] for g in mine] == [cycle[i % 3] for i in range(len(mine))]
            score = {"White": 0, "Black": 0}
            previous: dict | None = None
            for game in mine:
                assert max(score.values()) < 5  # no game after the match is won
                first = game["events"][0]
                if previous is None or previous["result"]["winner"] is None:
                    assert first["kind"] == "opening"
                else:
                    assert first["kind"] == "roll"
                    assert first["player"] == previous["result"]["winner"]
                previous = game
                if game["result"]["winner"] is not None:
                    score[game["result"]["winner"]] += game["result"]["points"]
            assert max(score.values()) >= 5
            assert summary["bots"][0]["points"] != 0
        assert (
            summary["games_played"] == len(games) >= 6
        )  # 2 matches of ≥ 3 games (≤ 2 points each)
        assert {g["variant"] for g in games} == set(cycle)

    def test_tavli_is_played_only_as_a_match(self):
        result = invoke("play", "-v", "tavli", "--games", "1")
        assert result.exit_code == 2 and "give --match N" in result.stderr
        assert "Traceback" not in result.output
        # A single game's commands name one of the match's variants (a tavli board is none).
        for args in (
            ("show", "--variant", "tavli", "o-----/------/------/-----O"),
            ("plays", "--variant", "tavli", "o-----/------/------/-----O", "6-5"),
            ("train", "--variant", "tavli", "--games", "1", "--out", "x.npz"),
        ):
            result = invoke(*args)
            assert_one_line_error(result)
            assert "tavli is a match of portes → plakoto → fevga" in result.stderr, args
            assert "--variant portes" in result.stderr

    def test_matches(self):
        summary = self.play_json(
            "--variant", "backgammon", "--games", "2", "--match", "3", "--seed", "5"
        )
        assert summary["units"] == 2 and summary["unit"] == "match" and summary["match_length"] == 3
        assert summary["games_played"] >= 2
        assert sum(bot["wins"] for bot in summary["bots"]) == 2


class TestErrors:
    @pytest.mark.parametrize(
        ("args", "fragment"),
        [
            (("play", "--variant", "nosuch"), "unknown variant 'nosuch'"),
            (("play", "--variant", "long", "-o", "first_turn_head=sometimes"), "first_turn_head"),
            (("play", "-o", "nosuch=1"), "no option 'nosuch'"),
            (("play", "-o", "cube"), "name=value"),
            (("play", "--bots", "heuristic,nosuch"), "unknown bot 'nosuch'"),
            (("play", "--bots", "heuristic"), "two bots"),
            (("play", "--games", "0"), "--games"),
            (("play", "-o", "match_length=3", "--match", "5"), "contradicts"),
            (("show", "not-an-id"), "malformed position id"),
            (("show", OPENING, "--variant", "nosuch"), "unknown variant"),
            (("show", OPENING.replace("B", "C")), "16 checkers"),
            (("plays",), "POSITION and DICE"),
            (("plays", OPENING, "9-1"), "'dice' must be two integers"),
            (("nosuch",), "No such command"),
            (("--nosuch",), "No such option"),
        ],
    )
    def test_usage_errors_are_one_line(self, args, fragment):
        line = assert_one_line_error(invoke(*args))
        assert fragment in line

    def test_other_errors_exit_1(self, tmp_path):
        missing = tmp_path / "no" / "such" / "dir" / "games.jsonl"
        line = assert_one_line_error(
            invoke("play", "--games", "1", "--jsonl", str(missing)), exit_code=1
        )
        assert "No such file or directory" in line

    def test_missing_grpc_is_one_line(self):
        group = NardyGroup()

        @group.command()
        def needs_grpc() -> None:
            raise ModuleNotFoundError("No module named 'grpc'", name="grpc")

        group.add_command(
            _unavailable("arena", "'nardy arena' needs gRPC: pip install nardy[arena]")
        )
        for args in (["needs-grpc"], ["arena", "serve", "--port", "0"]):
            line = assert_one_line_error(runner().invoke(group, args), exit_code=1)
            assert "pip install nardy[arena]" in line

    def test_arena_and_bot_are_attached(self):
        result = invoke("--help")
        assert result.exit_code == 0
        for name in ("variants", "play", "show", "plays"):
            assert name in result.stdout
        if isinstance(cli.get_command(click.Context(cli), "arena"), click.Group):
            assert "arena" in result.stdout and "bot" in result.stdout


class TestShow:
    def test_start_position(self):
        result = invoke("show", OPENING)
        assert result.exit_code == 0, result.stderr
        out = result.stdout
        board = [line for line in out.splitlines() if "|" in line]
        top, upper, lower, bottom = board  # the rules between them are drawn with '+'
        assert top.split("|")[0].split() == ["13", "14", "15", "16", "17", "18"]
        assert bottom.split("|")[-1].split() == ["6", "5", "4", "3", "2", "1"]
        # Mover: 2 on 24, 5 on 13, 3 on 8, 5 on 6; opponent (mover's coordinates): 2 on 1, 5 on 12, 3 on 17, 5 on 19.
        assert upper.split() == [
            "5X",
            ".",
            ".",
            ".",
            "3O",
            ".",
            "|",
            "|",
            "5O",
            ".",
            ".",
            ".",
            ".",
            "2X",
        ]
        assert lower.split() == [
            "5O",
            ".",
            ".",
            ".",
            "3X",
            ".",
            "|",
            "|",
            "5X",
            ".",
            ".",
            ".",
            ".",
            "2O",
        ]
        assert "Bar:  X 0   O 0" in out and "Off:  X 0   O 0" in out
        assert "Pips: X 167   O 167" in out
        assert "mover's own coordinates" in out

    def test_opponent_side_backgammon_and_long(self):
        out = invoke("show", OPENING, "--side", "opponent").stdout
        assert "Seen by: the opponent" in out and "opponent's own coordinates" in out
        # The start position is symmetric: the opponent sees his own checkers (O) where X stood.
        upper = [line for line in out.splitlines() if "|" in line][1]
        assert upper.split() == [
            "5O",
            ".",
            ".",
            ".",
            "3X",
            ".",
            "|",
            "|",
            "5X",
            ".",
            ".",
            ".",
            ".",
            "2O",
        ]
        # Long nardy: the id starts with '-', and the flip is the same-direction one (12 points).
        out = invoke("show", LONG_START, "--variant", "long", "--side", "opponent").stdout
        rows = [line for line in out.splitlines() if "|" in line]
        assert rows[1].split()[-1] == "15O" and rows[2].split()[0] == "15X"
        assert "Bar:" not in out and "Pips: X 360   O 360" in out

    def test_absolute_numbering(self):
        out = invoke("show", OPENING, "--side", "opponent", "--absolute").stdout
        assert "absolute (White's coordinates; the mover is White)" in out
        rows = [line for line in out.splitlines() if "|" in line]
        assert rows[0].split("|")[0].split() == ["12", "11", "10", "9", "8", "7"]
        out = invoke("show", LONG_START, "-v", "long", "--absolute", "--mover", "black").stdout
        rows = [line for line in out.splitlines() if "|" in line]
        assert rows[0].split("|")[0].split() == ["1", "2", "3", "4", "5", "6"]

    def test_json_and_pips_with_a_bar(self):
        position = Position.from_sides(
            {6: 5, 8: 3, 13: 5, 24: 1}, {1: 2, 12: 5, 17: 3, 19: 5}, bar=(1, 0)
        )
        result = invoke("show", position.id(), "--json")
        data = json.loads(result.stdout)
        assert data["position"] == position.to_json()
        assert data["pips"] == [167 - 24 + 25, 167]
        assert pip_counts(position, "opposite") == (168, 167)
        # Position JSON is accepted too.
        assert invoke("show", json.dumps(position.to_json())).exit_code == 0
        text = invoke("show", position.id()).stdout
        assert "Bar:  X 1   O 0" in text


class TestPlaysCommand:
    def test_lists_plays(self):
        result = invoke("plays", OPENING, "3-1")
        assert result.exit_code == 0, result.stderr
        assert result.stdout.splitlines()[0].startswith("16 legal plays")
        assert "8/5 6/5" in result.stdout

    def test_plakoto_plays_show_their_pins(self):
        """RULES.md PL-02 (§3.12.2): the pinning step is written ``8/5^``; the listing marks it,
        while --jsonl answers keep the plays' own text (both read back as the same play)."""
        position = "N---a-/-A----/------/-gg---"  # PL-02's start: a lone opposing checker on 5
        result = invoke("plays", "--variant", "plakoto", position, "3-1")
        assert result.exit_code == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines[0] == "2 legal plays (plakoto, 3-1):"
        assert "8/5^ 1/off" in lines[2] and "^5" in lines[2]  # the result pins a checker on 5
        assert "8/5^/4" in lines[1]  # passing over 5 pins it and frees it again
        start = Position.from_id(position).to_json()
        query = json.dumps({"position": start, "dice": [3, 1]})
        answer = json.loads(invoke("plays", "-v", "plakoto", "--jsonl", input=query).stdout)
        assert [p["text"] for p in answer["plays"]] == ["8/5/4", "8/5 1/off"]

    def test_long_start_id_starting_with_a_dash(self):
        result = invoke("plays", "--variant", "long", LONG_START, "6-6")
        assert result.exit_code == 0, result.stderr
        assert "24/18(2)" in result.stdout
        variant = load_variant("long")
        assert len(variant.legal_plays(variant.start_position(), (6, 6, 6, 6))) == 1


def test_console_script_help():
    script = shutil.which("nardy", path=str(Path(sys.executable).parent)) or shutil.which("nardy")
    if script is None:
        pytest.skip("the nardy console script is not installed")
    completed = subprocess.run(
        [script, "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr
    for name in ("variants", "play", "show", "plays"):
        assert name in completed.stdout
    module = subprocess.run(
        [sys.executable, "-m", "nardy", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert module.returncode == 0 and "nardy" in module.stdout


def test_result_kinds_are_named_as_the_rules_name_them() -> None:
    from nardy.core.game import GameResult
    from nardy.core.rules import FevgaScoring, LongScoring, PerCheckerScoring
    from nardy.results import result_kind

    def result(value: int, reason: str = "bear_off", resigned: bool = False) -> GameResult:
        return GameResult(0, value, value, 1, reason, resigned)  # type: ignore[arg-type]

    assert result_kind(LongScoring(), result(3)) == "koks"
    assert result_kind(LongScoring(), result(2, resigned=True)) == "mars (resigned)"
    assert result_kind(LongScoring(), result(1, reason="drop")) == "drop"
    assert result_kind(PerCheckerScoring(), result(11)) == "11 checkers"
    assert result_kind(PerCheckerScoring(), result(1)) == "1 checker"
    assert result_kind(FevgaScoring(), result(2)) == "value 2"


def test_play_records_speak_the_arena_records_words(tmp_path: Path) -> None:
    """`nardy play --jsonl` results carry the arena records' keys (docs/tournaments.md):
    termination and multiplier; `reason` stays as the old name of termination."""
    import re as regex

    doc = (Path(__file__).parents[2] / "docs" / "tournaments.md").read_text()
    listed = regex.search(r"`result` \(([^)]*)\)", doc)
    assert listed is not None
    arena_keys = set(regex.findall(r"`(\w+)`", listed[1])) - {"reason"}  # arena: a free text
    records = tmp_path / "games.jsonl"
    done = invoke(
        "play",
        "-v",
        "backgammon",
        "--games",
        "6",
        "--seed",
        "4",
        "--quiet",
        "--jsonl",
        str(records),
    )
    assert done.exit_code == 0, done.stderr
    for line in records.read_text().splitlines():
        result = json.loads(line)["result"]
        assert arena_keys <= set(result), result
        assert (
            result["termination"]
            == {"bear_off": "borne_off", "drop": "double_dropped"}[result["reason"]]
        )
        multiplier = 1 if result["termination"] == "double_dropped" else result["multiplier"]
        assert result["points"] == multiplier * result["cube"], result


def test_the_command_line_starts_without_numpy(tmp_path):
    """The core install has no numpy: `nardy --help` works and `nardy analyze` says what to
    install (the wheel's bare install in .ci/run found `nardy --help` failing on it)."""
    import subprocess
    import sys

    record = tmp_path / "games.jsonl"
    record.write_text("")
    block = "import sys; sys.modules['numpy'] = None; from nardy.cli import main; main()"
    helped = subprocess.run(
        [sys.executable, "-c", block, "--help"], capture_output=True, text=True, timeout=60
    )
    assert helped.returncode == 0, helped.stderr
    assert "analyze" in helped.stdout
    analysed = subprocess.run(
        [sys.executable, "-c", block, "analyze", str(record)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert analysed.returncode == 1
    assert "nardy analyze needs numpy" in analysed.stderr and "nardy[neural]" in analysed.stderr
    assert "Traceback" not in analysed.stderr


def _python_bot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> str:
    """``module:Class`` of a Python bot called ``name`` (a RandomBot underneath)."""
    module = f"issue34_{abs(hash(name)) % 10_000}"
    (tmp_path / f"{module}.py").write_text(
        f"from nardy.bots import RandomBot\n\n\nclass Mine(RandomBot):\n    name = {name!r}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{module}:Mine"


def test_a_python_bot_plays_under_its_own_name(tmp_path, monkeypatch):
    """``--bots module:Class`` showed the bot as ``module:Class``; it has a name of its own."""
    bot = _python_bot(tmp_path, monkeypatch, "blotbot")
    records = tmp_path / "games.jsonl"
    args = ("play", "--bots", f"{bot},random", "--games", "2", "--seed", "1")
    result = invoke(*args, "--json", "--jsonl", str(records))
    assert result.exit_code == 0, result.stderr
    assert [b["name"] for b in json.loads(result.stdout)["bots"]] == ["blotbot", "random"]
    first = json.loads(records.read_text().splitlines()[0])
    assert set(first["bots"].values()) == {"blotbot", "random"}


def test_tables_through_a_pipe_are_never_cut(tmp_path, monkeypatch):
    """No terminal and no COLUMNS: rich took 80 columns and cut the cells (``blotb…``)."""
    name = "blotbot-" + "x" * 80
    bot = _python_bot(tmp_path, monkeypatch, name)
    result = runner().invoke(cli, ["play", "--bots", f"{bot},random", "--games", "12"])
    assert result.exit_code == 0, result.stderr
    assert "…" not in result.stdout
    assert any(name in line and "%" in line for line in result.stdout.splitlines())


def test_few_units_print_no_standard_error():
    """Below 10 games (or matches) the table prints n/a for the SE and the interval
    (docs/statistics.md); the JSON keeps the numbers."""
    args = ("play", "--variant", "long", "--bots", "heuristic,random", "--seed", "2")
    few = invoke(*args, "--games", "4")
    assert few.exit_code == 0, few.stderr
    rows = [line for line in few.stdout.splitlines() if "heuristic " in line and "%" in line]
    assert rows and all("n/a" in row and "±" in row and "[" not in row for row in rows)
    assert "n/a: fewer than 10 games" in few.stdout
    assert json.loads(invoke(*args, "--games", "4", "--json").stdout)["bots"][0]["points_se"]
    many = invoke(*args, "--games", "10")
    assert "n/a" not in many.stdout and "[" in many.stdout


def test_match_play_is_reported_in_matches_and_turns_no_dead_cube(tmp_path):
    """Heuristic against neural in 3-point matches (seed 1): neither bot, told the score, turns
    a dead cube (one at or above what the doubler needs), so no game's cube passes 4; it reached
    16 when they were not told. The summary shows each bot's match equity (+1 a match won, -1
    lost), not its points."""
    records = tmp_path / "games.jsonl"
    args = ("play", "-v", "backgammon", "--bots", "heuristic,neural", "--match", "3")
    args += ("--games", "5", "--seed", "1")
    summary = json.loads(invoke(*args, "--json", "--jsonl", str(records)).stdout)
    cubes = [json.loads(line)["result"]["cube"] for line in records.read_text().splitlines()]
    assert max(cubes) <= 4, cubes
    for bot in summary["bots"]:
        assert bot["match_equity"] == pytest.approx((2 * bot["wins"] - 5) / 5)
    table = invoke(*args).stdout
    assert "Match equity ± SE" in table and "Points/match" not in table


def test_the_analysis_table_through_a_pipe_is_never_cut(tmp_path):
    """``nardy analyze``'s per-bot table has nine columns: at rich's 80 columns (no terminal)
    they were cut to ``decis…``, ``point…``, ``heuri…``."""
    records = tmp_path / "games.jsonl"
    played = invoke("play", "--games", "2", "--seed", "3", "--jsonl", str(records), "--json")
    assert played.exit_code == 0, played.stderr
    args = ["analyze", str(records), "--evaluator", "heuristic", "--show", "none"]
    result = runner().invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    assert "…" not in result.stdout
    assert "luck-adjusted/game" in result.stdout and "heuristic " in result.stdout
