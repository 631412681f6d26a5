"""The JSON outputs of the command line match their shipped JSON Schemas (nardy.schemas)."""

from __future__ import annotations

import io
import json

import jsonschema
import pytest
from click.testing import CliRunner

from nardy.cli import cli
from nardy.core import load_variant
from nardy.core.jsonl import run_jsonl_stream
from nardy.schemas import NAMES, schema


def _check(name: str, instance: object) -> None:
    jsonschema.Draft202012Validator(schema(name)).validate(instance)


@pytest.mark.parametrize("name", NAMES)
def test_schemas_are_valid(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(schema(name))


def _json(args: list[str]) -> object:
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_play_money_and_match_have_the_same_keys() -> None:
    money = _json(["play", "-v", "long", "--games", "3", "--seed", "1", "--json"])
    match = _json(["play", "-v", "backgammon", "--match", "3", "--games", "2", "--json"])
    _check("play", money)
    _check("play", match)
    assert isinstance(money, dict) and isinstance(match, dict)
    assert money.keys() == match.keys()
    assert (money["unit"], match["unit"]) == ("game", "match")
    with pytest.raises(jsonschema.ValidationError):
        _check("play", {**money, "games": 3})


def test_play_with_draws() -> None:
    """A plakoto run with draws (seed 1: 3 of 10): the draw rows and counts fit the schema."""
    summary = _json(
        [
            "play",
            "-v",
            "plakoto",
            "--bots",
            "random,random",
            "--games",
            "10",
            "--seed",
            "1",
            "--json",
        ]
    )
    _check("play", summary)
    assert isinstance(summary, dict) and summary["draws"] == 3


def test_variants_check_variant_and_plays_answers() -> None:
    _check("variants", _json(["variants", "--json"]))
    _check("check-variant", _json(["check-variant", "hypergammon", "--games", "2", "--json"]))
    variant = load_variant("backgammon")
    good = json.dumps({"position": variant.start_position().to_json(), "dice": [3, 1], "id": 7})
    out = io.StringIO()
    run_jsonl_stream(variant, io.BytesIO(f"{good}\nnot json\n".encode()), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    for answer in answers:
        _check("plays-answer", answer)
    assert "plays" in answers[0] and "error" in answers[1]


def test_tournament_definitions_match_the_schema() -> None:
    import tomllib
    from pathlib import Path

    from nardy.arena.competition.schedule import DefinitionError, parse_definition

    examples = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.toml"))
    assert examples
    for path in examples:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        parse_definition(data)  # the engine accepts it ...
        _check("tournament", data)  # ... and so does the schema
    # What the engine refuses, the schema refuses too.
    for bad in (
        {"bots": ["heuristic", "random"]},  # no variant
        {"bots": ["heuristic", "random"], "variant": "long", "colour": "red"},
        {"bots": ["heuristic", "random"], "variant": "long", "seed": -1},
        {"bots": [{"builtin": "random", "port": 1}], "variant": "long"},
        {"bots": ["a", "b"], "variant": "long", "faults": {"on_fault": "ignore"}},
    ):
        with pytest.raises(DefinitionError):
            parse_definition(bad)
        with pytest.raises(jsonschema.ValidationError):
            _check("tournament", bad)
