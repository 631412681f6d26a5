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
