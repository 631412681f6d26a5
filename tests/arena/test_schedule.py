"""Tournament definitions (TOML, flags) and their deterministic schedules."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from nardy.arena.competition.schedule import (
    DefinitionError,
    TournamentDef,
    build_schedule,
    definition_from_flags,
    load_definition,
    parse_definition,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tournament.toml"


def _def(**kw: object) -> TournamentDef:
    data: dict[str, object] = {
        "name": "t",
        "bots": ["a", "b", "c"],
        "variant": "long",
        "games": 4,
        "seed": 9,
    }
    data.update(kw)
    if "variants" in kw:
        del data["variant"]
    # Built-in names are only checked when the tournament runs (check_definition).
    return parse_definition(data)


def test_round_robin_every_pair_n_games_colours_balanced() -> None:
    d = _def(games=6)
    units = build_schedule(d)
    per_pair = Counter((u.a, u.b) for u in units)
    assert per_pair == {("a", "b"): 6, ("a", "c"): 6, ("b", "c"): 6}
    whites = Counter((u.a, u.b, u.white) for u in units)
    for a, b in per_pair:
        assert whites[(a, b, a)] == whites[(a, b, b)] == 3
    assert len({u.unit_id for u in units}) == len(units)
    assert [u.order for u in units] == list(range(len(units)))


def test_odd_games_and_colours() -> None:
    units = build_schedule(_def(bots=["a", "b"], games=5))
    assert len(units) == 5
    assert Counter(u.white for u in units) == {"a": 3, "b": 2}
    # The last unit has no partner: its pair id is seen once.
    assert Counter(u.pair_id for u in units).most_common()[-1][1] == 1


def test_duplicate_legs_share_dice_and_rounds_share_across_pairings() -> None:
    units = build_schedule(_def())
    by_pair: dict[str, list[int]] = {}
    for u in units:
        by_pair.setdefault(u.pair_id, []).append(u.seed)
    assert all(len(s) == 2 and s[0] == s[1] for s in by_pair.values())
    seeds_by_round = {(u.round, u.seed) for u in units}
    assert len(seeds_by_round) == 2  # games=4: two rounds, one dice stream each for the field
    independent = build_schedule(_def(duplicate=False))
    assert len({u.seed for u in independent}) == len(independent)


def test_gauntlet() -> None:
    d = _def(bots=["a", "b", "c", "d"], format="gauntlet", champion="c", games=2)
    units = build_schedule(d)
    assert Counter((u.a, u.b) for u in units) == {("c", "a"): 2, ("c", "b"): 2, ("c", "d"): 2}
    assert Counter(u.white for u in units)["c"] == 3
    assert d.pairings()[0][0] == "c"
    assert _def(format="gauntlet").pairings() == [("a", "b"), ("a", "c")]


def test_schedule_is_deterministic_and_extensible() -> None:
    small = build_schedule(_def(games=4))
    again = build_schedule(_def(games=4))
    assert small == again
    large = {u.unit_id: u.seed for u in build_schedule(_def(games=8, concurrency=3))}
    assert all(large[u.unit_id] == u.seed for u in small)
    # games, concurrency and the SPRT do not change the tournament's identity
    assert _def(games=4).tournament_id == _def(games=8, concurrency=4).tournament_id
    assert _def(seed=1).tournament_id != _def(seed=2).tournament_id


def test_match_units_and_game_seeds() -> None:
    d = _def(bots=["a", "b"], variants=[{"name": "backgammon", "options": {"match_length": 3}}])
    u = build_schedule(d)[0]
    assert d.pools[0].label == "backgammon3"
    assert u.match_length == 3
    assert u.game_id(2) == u.unit_id + ".g2"
    assert u.game_seed(1) == u.seed != u.game_seed(2)


def test_example_file_parses() -> None:
    d = load_definition(EXAMPLE)
    assert [p.label for p in d.pools] == ["long", "backgammon3"]
    assert d.bot("heuristic").capacity == 2
    assert TournamentDef.from_json(d.to_json()) == d


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"bots": ["a"]}, "at least two bots"),
        ({"bots": ["a", "a"]}, "used twice"),
        ({"bots": [{"name": "x", "builtin": "random", "endpoint": "h:1"}, "b"]}, "exactly one"),
        ({"colour": 1}, "unknown key(s) colour"),
        ({"games": 0}, "games must be at least 1"),
        ({"games": "ten"}, "games: expected int"),
        ({"sprt": {"elo0": 0, "elo1": 50}}, "head-to-head"),
        ({"bots": ["a", "b"], "sprt": {"elo0": 5, "elo1": 1}}, "below H1"),
        ({"format": "swiss"}, "round_robin or gauntlet"),
        ({"champion": "zz"}, "not one of the bots"),
        ({"bots": [{"name": "a b", "builtin": "random"}, "c"]}, "bot name"),
        ({"bots": [{"name": "x", "endpoint": "h:1", "command": "node b.js"}, "b"]}, "exactly one"),
        ({"bots": [{"name": "x", "command": []}, "b"]}, "command is empty"),
        ({"bots": [{"name": "x", "command": ["node", 1]}, "b"]}, "list of strings"),
        ({"bots": [{"name": "x", "command": "node 'b.js"}, "b"]}, "command: No closing quotation"),
    ],
)
def test_definition_errors(data: dict[str, object], message: str) -> None:
    with pytest.raises(DefinitionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _def(**data)


def test_command_bots() -> None:
    d = _def(
        bots=[
            "a",
            {"name": "js", "command": "node examples/bots/js/bot.js 0 7"},
            {"name": "py", "command": ["python", "-m", "bot", "--port", "0"], "capacity": 1},
        ]
    )
    js, py = d.bot("js"), d.bot("py")
    assert js.command == ("node", "examples/bots/js/bot.js", "0", "7") and js.kind == "command"
    assert py.command == ("python", "-m", "bot", "--port", "0") and py.capacity == 1
    assert TournamentDef.from_json(d.to_json()) == d
    # A started bot is a remote bot like an endpoint: where it runs is not part of the identity.
    moved = _def(bots=["a", {"name": "js", "endpoint": "h:1"}, {"name": "py", "command": "x"}])
    assert moved.tournament_id == d.tournament_id


def test_js_example_file_parses() -> None:
    d = load_definition(EXAMPLE.parent / "round_robin_js.toml")
    assert [b.kind for b in d.bots] == ["builtin", "builtin", "command"]
    assert d.bot("js").command == ("node", "examples/bots/js/bot.js", "0", "7")
    assert len(build_schedule(d)) == 3 * d.games


def test_bad_toml_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('name = "x"\nbots = [\n')
    with pytest.raises(DefinitionError) as info:
        load_definition(path)
    assert str(path) in str(info.value) and "invalid TOML" in str(info.value)
    with pytest.raises(DefinitionError, match="No such file"):
        load_definition(tmp_path / "missing.toml")


def test_flags() -> None:
    d = definition_from_flags(
        variants=["long"], bots="heuristic,r=random,x=127.0.0.1:5000", games=10, seed=3, sprt=None
    )
    assert [(b.name, b.builtin, b.endpoint) for b in d.bots] == [
        ("heuristic", "heuristic", None),
        ("r", "random", None),
        ("x", None, "127.0.0.1:5000"),
    ]
    assert d.name == "heuristic-r-x-long"
    h2h = definition_from_flags(
        variants=["long"], bots="heuristic,random", games=10, seed=3, sprt="0,50"
    )
    assert h2h.sprt is not None and h2h.sprt.elo1 == 50
    with pytest.raises(DefinitionError, match="ELO0,ELO1"):
        definition_from_flags(
            variants=["long"], bots="heuristic,random", games=10, seed=3, sprt="fifty"
        )
