"""The query engine of ``nardy plays --jsonl`` (nardy.core.jsonl) and the command around it."""

from __future__ import annotations

import gc
import gzip
import io
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from nardy.core import Position, load_variant
from nardy.core.jsonl import answer_query, run_jsonl, run_jsonl_stream

ORACLE = Path(__file__).parents[1] / "data" / "backgammon-oracle.jsonl.gz"
OPENING = "b----E/-C---e/E---c-/e----B"


@pytest.fixture(scope="module")
def backgammon():
    return load_variant("backgammon")


@pytest.fixture(scope="module")
def oracle() -> list[dict]:
    with gzip.open(ORACLE, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def opening_json() -> dict:
    return Position.from_id(OPENING).to_json()


def results(answer: dict) -> set[Position]:
    return {Position.from_json(play["result"]) for play in answer["plays"]}


def run(variant, lines: list[str]) -> list[dict]:
    out = io.StringIO()
    run_jsonl(variant, lines, out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


class TestAnswers:
    def test_opening_3_1_has_16_plays(self, backgammon):
        answer = answer_query(backgammon, {"position": opening_json(), "dice": [3, 1]})
        plays = answer["plays"]
        assert len(plays) == 16
        assert len({p["text"] for p in plays}) == 16
        assert len(results(answer)) == 16
        assert "8/5 6/5" in {p["text"] for p in plays}
        for play in plays:
            backgammon.validate(Position.from_json(play["result"]))

    @pytest.mark.parametrize(
        ("variant", "position", "dice", "steps"),
        [
            ("backgammon", OPENING, [3, 1], [3, 1]),
            ("backgammon", OPENING, [1, 3], [3, 1]),
            ("backgammon", OPENING, [4, 4], [4, 4, 4, 4]),
            ("long", "------/-----o/------/-----O", [6, 6], [6, 6, 6, 6]),
            ("long", "------/-----o/------/-----O", [6, 5], [5, 6]),
            # A progression's first stage is four steps of the rolled number, like any double.
            ("mad", "------/-----o/------/-----O", [3, 3], [3, 3, 3, 3]),
        ],
    )
    def test_dice_and_steps_forms_agree(self, variant, position, dice, steps):
        v = load_variant(variant)
        p = Position.from_id(position).to_json()
        by_dice = answer_query(v, {"position": p, "dice": dice})
        by_steps = answer_query(v, {"position": p, "steps": steps})
        assert "plays" in by_dice, by_dice
        assert results(by_dice) == results(by_steps)

    def test_steps_for_a_partial_segment(self):
        # Two transferred sixes are one segment of two equal steps.
        v = load_variant("long")
        answer = answer_query(v, {"position": v.start_position().to_json(), "steps": [6, 6]})
        assert [p["text"] for p in answer["plays"]] == ["24/18(2)"]

    def test_no_legal_play_is_the_empty_play(self, backgammon):
        # The mover is on the bar against a closed board.
        position = Position.from_sides(
            {13: 14}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 1: 3}, bar=(1, 0)
        )
        answer = answer_query(backgammon, {"position": position.to_json(), "dice": [6, 5]})
        assert answer == {"plays": [{"text": "", "result": position.to_json()}]}

    def test_id_is_echoed_and_state_is_ignored(self, backgammon):
        query = {
            "id": "q-7",
            "position": {**opening_json(), "state": {"head_steps": 1}},
            "dice": [3, 1],
        }
        answer = answer_query(backgammon, query)
        assert answer["id"] == "q-7"
        assert len(answer["plays"]) == 16
        bad = answer_query(backgammon, {"id": 3, "position": opening_json(), "dice": [9, 1]})
        assert bad["id"] == 3 and "error" in bad

    def test_oracle_case_matches(self, backgammon, oracle):
        case = oracle[0]
        answer = answer_query(backgammon, {"position": case["position"], "dice": case["dice"]})
        assert results(answer) == {Position.from_json(r) for r in case["results"]}

    def test_oracle_sample_through_the_stream(self, backgammon, oracle):
        sample = oracle[::25]
        data = "".join(
            json.dumps({"position": c["position"], "dice": c["dice"]}) + "\n" for c in sample
        )
        out = io.StringIO()
        stats = run_jsonl_stream(backgammon, io.BytesIO(data.encode()), out)
        assert (stats.queries, stats.errors) == (len(sample), 0)
        lines = out.getvalue().splitlines()
        assert len(lines) == len(sample)
        for case, line in zip(sample, lines, strict=True):
            answer = json.loads(line)
            assert results(answer) == {Position.from_json(r) for r in case["results"]}, case["id"]
            # The hand-written fast path is byte-identical to json.dumps of answer_query's dict.
            slow = answer_query(backgammon, {"position": case["position"], "dice": case["dice"]})
            assert line == json.dumps(slow, separators=(",", ":"))


BAD_LINES = (
    ("{not json", "not valid JSON"),
    ("[3, 1]", "must be a JSON object"),
    ('{"dice": [3, 1]}', "needs a 'position'"),
    ('{"position": P}', "exactly one of 'dice'"),
    ('{"position": P, "dice": [3, 1], "steps": [3, 1]}', "exactly one of 'dice'"),
    ('{"position": P, "dice": [3, 1], "colour": "white"}', "unknown field"),
    ('{"position": P, "dice": [7, 1]}', "'dice' must be two integers"),
    ('{"position": P, "dice": [3]}', "'dice' must be two integers"),
    ('{"position": P, "dice": [true, 1]}', "'dice' must be two integers"),
    ('{"position": P, "steps": [6, 5, 4]}', "one segment"),
    ('{"position": P, "steps": []}', "'steps' must be 1-4 integers"),
    ('{"position": {"points": [1, 2]}, "dice": [3, 1]}', "24 integers"),
    (
        '{"position": {"points": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,14], "bar": [0,0], '
        '"off": [0,0]}, "dice": [3, 1]}',
        "checkers",
    ),
    (
        '{"position": {"points": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,15], "bar": [0,0], '
        '"off": [0,15], "extra": 1}, "dice": [3, 1]}',
        "unknown position field",
    ),
    (
        '{"position": {"points": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,15], "bar": [0,0], '
        '"off": [0,15], "state": 5}, "dice": [3, 1]}',
        "'state' must be an object",
    ),
)
"""Malformed query lines and a fragment of the error each must get (P = the opening position)."""


class TestErrors:
    def test_each_bad_line_gets_an_error_and_later_lines_an_answer(self, backgammon):
        position = json.dumps(opening_json())
        good = json.dumps({"position": opening_json(), "dice": [3, 1]})
        lines = []
        for text, _ in BAD_LINES:
            lines += [text.replace("P", position), "", "   "]
        lines.append(good)
        answers = run(backgammon, lines)
        assert len(answers) == len(BAD_LINES) + 1  # blank lines get no answer
        for answer, (_, expected) in zip(answers, BAD_LINES, strict=False):
            assert set(answer) == {"error"}, answer
            assert expected in answer["error"]
        assert len(answers[-1]["plays"]) == 16

    @pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
    def test_nan_and_infinity_are_not_json(self, backgammon, constant):
        """Python's reader takes them; the answer must still be JSON any reader accepts."""
        query = json.dumps({"position": opening_json(), "dice": [3, 1]})
        line = query.replace('{"position"', f'{{"id": {constant}, "position"', 1)
        out = io.StringIO()
        run_jsonl(backgammon, [line], out)

        def strict(name: str) -> None:
            raise AssertionError(f"the answer holds {name}: {out.getvalue()}")

        answer = json.loads(out.getvalue(), parse_constant=strict)
        assert answer == {"error": f"line 1: not valid JSON: {constant} is not a JSON value"}

    def test_position_invalid_for_the_variant(self):
        # A bar checker is fine in backgammon but impossible in long nardy (Variant.validate).
        long = load_variant("long")
        position = Position.from_sides({24: 14}, {12: 15}, bar=(1, 0)).to_json()
        answer = answer_query(long, {"position": position, "dice": [3, 1]})
        assert "no bar" in answer["error"]

    def test_stream_handles_crlf_partial_lines_and_bad_utf8(self, backgammon):
        good = json.dumps({"position": opening_json(), "dice": [3, 1]}).encode()
        data = b"\xff\xfe\r\n" + good + b"\r\n\r\n" + good  # no newline at the end
        out = io.StringIO()
        stats = run_jsonl_stream(backgammon, io.BytesIO(data), out)
        answers = [json.loads(line) for line in out.getvalue().splitlines()]
        assert (stats.queries, stats.errors) == (3, 1)
        assert "error" in answers[0]
        assert len(answers[1]["plays"]) == len(answers[2]["plays"]) == 16


class TestCommand:
    def test_cli_answers_in_order(self):
        from click.testing import CliRunner

        from nardy.cli import cli

        good = json.dumps({"position": opening_json(), "dice": [3, 1]})
        stdin = f"{good}\nnot json\n\n{good}\n"
        result = CliRunner().invoke(
            cli, ["plays", "--variant", "backgammon", "--jsonl"], input=stdin
        )
        assert result.exit_code == 0, result.output
        answers = [json.loads(line) for line in result.stdout.splitlines()]
        assert [len(a.get("plays", [])) for a in answers] == [16, 0, 16]
        assert "error" in answers[1]

    def test_interactive_peer_gets_each_answer_before_sending_the_next(self):
        # A program that writes one query and waits for its answer must not deadlock on buffering.
        process = subprocess.Popen(
            [sys.executable, "-m", "nardy", "plays", "--jsonl"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdin is not None and process.stdout is not None
        answers: list[str] = []
        try:
            for dice in ([3, 1], [6, 6]):
                process.stdin.write(json.dumps({"position": opening_json(), "dice": dice}) + "\n")
                process.stdin.flush()
                reader = threading.Thread(target=lambda: answers.append(process.stdout.readline()))
                reader.start()
                reader.join(timeout=30)
                assert not reader.is_alive(), "no answer while the query stream is still open"
        finally:
            process.stdin.close()
            process.wait(timeout=30)
        backgammon = load_variant("backgammon")
        expected = [
            answer_query(backgammon, {"position": opening_json(), "dice": d})
            for d in ([3, 1], [6, 6])
        ]
        assert [json.loads(a) for a in answers] == expected


class _FailingOut:
    """An output that breaks on the first write, like a closed pipe."""

    def write(self, text: str) -> None:
        raise BrokenPipeError("closed")

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("runner", ["lines", "stream"])
def test_the_collector_is_switched_back_on(backgammon, runner: str) -> None:
    """The loops pause the garbage collector while they answer, and leave it as they found it, also
    when the output fails."""
    line = json.dumps({"position": opening_json(), "dice": [6, 6]}) + "\n"

    def run(out: io.StringIO | _FailingOut) -> None:
        if runner == "lines":
            run_jsonl(backgammon, [line] * 3, out)
        else:
            run_jsonl_stream(backgammon, io.BytesIO(line.encode() * 3), out)

    assert gc.isenabled()
    run(io.StringIO())
    assert gc.isenabled()
    with pytest.raises(BrokenPipeError):
        run(_FailingOut())
    assert gc.isenabled()
    gc.disable()
    try:
        run(io.StringIO())
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()


def test_answers_with_an_id_take_the_fast_path_with_the_same_text(backgammon, oracle) -> None:
    """Queries with an "id" (any JSON value) are answered like answer_query + json.dumps."""
    ids = [7, "g1", None, [1, {"a": "é"}], 2.5]
    lines = [
        json.dumps({"id": ids[i % len(ids)], "position": c["position"], "dice": c["dice"]})
        for i, c in enumerate(oracle[:200])
    ]
    out = io.StringIO()
    run_jsonl(backgammon, lines, out)
    expected = [
        json.dumps(answer_query(backgammon, json.loads(line)), separators=(",", ":"))
        for line in lines
    ]
    assert out.getvalue().splitlines() == expected


def test_both_play_writers_write_json_dumps_text(backgammon, oracle) -> None:
    """The two writers of a query's plays (the compiled build joins each result with
    movegen.result_json, the pure build formats it) write json.dumps's text for every oracle
    query, whichever one this build uses."""
    from nardy.core import jsonl

    for case in oracle[::5]:
        dice = case["dice"]
        steps = (dice[0],) * 4 if dice[0] == dice[1] else tuple(dice)
        plays = backgammon.legal_plays(Position.from_json(case["position"]), steps)
        expected = json.dumps(
            [{"text": p.text, "result": p.result.to_json()} for p in plays], separators=(",", ":")
        )
        assert "[" + jsonl._formatted_plays_text(plays) + "]" == expected, case["id"]
        assert "[" + jsonl._joined_plays_text(plays) + "]" == expected, case["id"]


def test_result_json_is_json_dumps_of_the_position() -> None:
    """Every count from -15 to 15 in every field, and larger ones (written by str)."""
    from nardy.core.movegen import board_of, position_of, result_json

    keys = [tuple(range(-15, 13)), tuple(range(13, -15, -1)), (16, *([0] * 24), 17, 0, -16)]
    keys += [tuple(board_of(Position.from_id("b----E/-C---e/E---c-/e----B")))]
    for key in keys:
        expected = json.dumps(position_of(key).to_json(), separators=(",", ":"))
        assert result_json(key) == expected, key
