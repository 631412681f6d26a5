"""The neural bot: shipped weights, batched inference, the cube rule, and deterministic training."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="the neural bot needs numpy (pip install 'nardy[neural]')")

from nardy.bots import is_builtin_bot, make_bot, play_game  # noqa: E402
from nardy.bots.heuristic import HeuristicBot  # noqa: E402
from nardy.bots.neural import NeuralBot  # noqa: E402
from nardy.core import load_variant, variant_names  # noqa: E402
from nardy.core.dice import SeededDice  # noqa: E402
from nardy.core.game import Cube, DoubleDecision, Game, PlayDecision, TakeDecision  # noqa: E402
from nardy.engines.net import (  # noqa: E402
    INPUTS,
    ValueNet,
    load_net,
    shipped_value_weights,
    shipped_weights,
)
from nardy.engines.outcome_net import OutcomeNet  # noqa: E402
from nardy.train.td import TrainConfig, train  # noqa: E402

BUILT_IN = (
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
    "portes",
    "plakoto",
)


@pytest.mark.parametrize("name", BUILT_IN)
def test_shipped_weights_load_for_every_built_in_variant(name: str) -> None:
    assert name in variant_names()
    path = shipped_weights(name)
    assert path.stat().st_size < 300_000
    net = load_net(path)
    assert net.meta["variant"] == name
    if net.meta.get("method") == "average":  # nets averaged (docs/bots.md): each one's record
        records = net.meta["averaged"]
        assert len(records) >= 2
        assert all(r["games"] > 0 and r["history"] and r["sha256"] for r in records)
    else:
        assert net.meta["games"] > 0 and net.meta["history"], "a training record travels with them"
    # The policy-iteration value net stays shipped, as VARIANT.value.npz where an outcome net of
    # batched TD (docs/bots.md) has taken its place.
    value = ValueNet.load(shipped_value_weights(name))
    assert value.meta["variant"] == name and value.w.shape == (value.hidden, INPUTS)
    if isinstance(net, OutcomeNet):
        # Batched TD's net, or generations of it fitted to its own look-ahead (docs/bots.md).
        assert net.meta["method"] in ("batched-td", "consistency", "average")
        if net.meta["method"] == "consistency":
            assert net.meta["consistency"]["config"]["net"] == "shipped"
        assert shipped_value_weights(name) != path
    else:
        assert shipped_value_weights(name) == path


@pytest.mark.parametrize("name", ["portes", "plakoto"])
def test_tavli_weights_carry_their_sidecar(name: str) -> None:
    # Trained with the documented recipe for this variant, and the sha256 is the file's.
    path = shipped_weights(name)
    meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert meta["variant"] == name and meta["encoder"] == "nardy196_v1"
    assert meta["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert meta["scale"] == 3.0  # RULES.md §3.12: a gammon is the largest game value (2) ≤ 3


@pytest.mark.parametrize("name", ["portes", "plakoto"])
def test_tavli_weights_play_legal_games_and_use_the_network(name: str) -> None:
    variant = load_variant(name)
    neural = make_bot("neural", 1)
    heuristic = HeuristicBot(1)
    heuristic.bind(variant)
    differ = decisions = pinned_results = 0
    for seed in (3,) if name == "plakoto" else (3, 4):  # a plakoto game is long: one suffices
        game = Game(variant, SeededDice(seed))
        neural.start_game(variant, 0)
        while (decision := game.decision) is not None:
            assert isinstance(decision, PlayDecision)  # no cube in portes or plakoto
            if decision.player == 1:
                game.decide(heuristic.choose_play(decision))
                continue
            choice = neural.choose_play(decision)
            assert 0 <= choice < len(decision.plays)
            decisions += len(decision.plays) > 1
            differ += choice != heuristic.choose_play(decision)
            pinned_results += sum(bool(play.result.pinned) for play in decision.plays)
            game.decide(choice)  # the game refuses an illegal play
        assert game.result is not None
    assert decisions > 15
    # The network re-ranks: some of its plays are not the heuristic prior's.
    assert differ > 0
    if name == "plakoto":
        assert pinned_results > 0  # it judged results holding pinned checkers


def _forward_by_hand(net: ValueNet, row: list[float]) -> float:
    """The network in plain Python loops: an independent check of the numpy forward pass."""
    total = net.c + net.a * row[-1]
    for unit in range(net.hidden):
        pre = net.b[unit] + sum(float(net.w[unit][i]) * row[i] for i in range(INPUTS))
        total += float(net.v[unit]) * math.tanh(pre)
    return total


@pytest.mark.parametrize("name", ["backgammon", "long"])
def test_one_batch_for_all_plays_equals_the_network_row_by_row(name: str) -> None:
    variant = load_variant(name)
    bot = NeuralBot(0, shipped_value_weights(name), variant=variant)  # the value net's pass
    position = variant.start_position()
    plays = variant.legal_plays(position, (6, 5) if name == "long" else (3, 1))
    decision = PlayDecision(0, None, position, plays)  # type: ignore[arg-type]
    inputs = bot.inputs_of_plays(decision)
    assert inputs.shape == (len(plays), INPUTS)
    assert bot.net is not None
    values = bot.net.values(inputs)
    for index in range(len(plays)):
        assert values[index] == pytest.approx(_forward_by_hand(bot.net, list(inputs[index])))
    # Rows are the plays' results, encoded one at a time the same way.
    single = bot.inputs_of([plays[0].result])
    assert np.allclose(single[0], inputs[0])
    assert bot.choose_play(decision) == int(np.argmax(values))


@pytest.mark.parametrize("name", ["trictrac", "khachapuri"])
def test_make_bot_neural_plays_a_game(name: str) -> None:
    variant = load_variant(name)
    game = play_game(variant, (make_bot("neural", 1), make_bot("heuristic", 2)), SeededDice(3))
    assert game.result is not None


class _Fixed(NeuralBot):
    """A neural bot whose equity estimate is given."""

    def __init__(self, equity: float) -> None:
        super().__init__(0, variant=load_variant("backgammon"))
        self.fixed = equity

    def afterstate_equity(self, position: object) -> float:
        return -self.fixed  # equity() negates the opponent's afterstate: on roll = fixed


def test_cube_rule() -> None:
    start = load_variant("backgammon").start_position()

    def double(equity: float, value: int = 1) -> bool:
        return _Fixed(equity).offer_double(DoubleDecision(0, start, Cube(value, 0)))

    assert not double(0.5) and double(0.7) and not double(1.2)
    assert not double(0.7, value=NeuralBot.MAX_REDOUBLE)

    def answer(taker_afterstate_equity: float, beaver: bool = False) -> str:
        bot = _Fixed(-taker_afterstate_equity)
        return bot.respond_to_double(TakeDecision(1, start, Cube(1, None), beaver))

    assert answer(-0.4) == "take" and answer(-0.6) == "drop"
    assert answer(0.2, beaver=True) == "beaver" and answer(0.0, beaver=True) == "take"


def test_weights_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no weights file"):
        NeuralBot(0, tmp_path / "missing.npz")
    source = shipped_value_weights("long")  # the value net's own checks
    copy = tmp_path / "long.npz"
    copy.write_bytes(source.read_bytes())
    with pytest.raises(ValueError, match="sidecar"):
        ValueNet.load(copy)
    sidecar = json.loads(source.with_suffix(".json").read_text())
    copy.with_suffix(".json").write_text(json.dumps(sidecar))
    bot = NeuralBot(0, copy)
    with pytest.raises(ValueError, match="trained for 'long'"):
        bot.start_game(load_variant("backgammon"), 0)
    sidecar["sha256"] = "0" * 64
    copy.with_suffix(".json").write_text(json.dumps(sidecar))
    with pytest.raises(ValueError, match="sha256"):
        ValueNet._read(copy)
    assert is_builtin_bot("neural:some.npz") and not is_builtin_bot("neuralish")


def _train(tmp_path: Path, name: str, games: int, resume: bool = False) -> ValueNet:
    config = TrainConfig("khachapuri", games=games, seed=3, eval_games=0, checkpoint_every=2)
    return train(load_variant("khachapuri"), config, tmp_path / name, resume=resume)


def test_training_is_deterministic_and_resumable(tmp_path: Path) -> None:
    first = _train(tmp_path, "a.npz", 4)
    second = _train(tmp_path, "b.npz", 4)
    for key, array in first.params().items():
        assert np.array_equal(array, second.params()[key]), key
    # Two games, then two more from the checkpoint: the same weights as four at once.
    _train(tmp_path, "c.npz", 2)
    resumed = _train(tmp_path, "c.npz", 4, resume=True)
    for key, array in first.params().items():
        assert np.array_equal(array, resumed.params()[key]), key
    assert resumed.meta["games"] == 4
    # Learning happened: the weights moved from their initial values.
    initial = ValueNet.initial(64, np.random.default_rng(3), {})
    assert not np.array_equal(initial.w, first.w)


@pytest.mark.slow  # training
def test_train_command(tmp_path: Path) -> None:
    out = tmp_path / "k.npz"
    command = [sys.executable, "-m", "nardy", "train", "--variant", "khachapuri", "--games", "2"]
    command += ["--method", "td"]
    done = subprocess.run(
        [*command, "--eval-every", "2", "--eval-games", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "khachapuri after 2 games" in done.stderr
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["games"] == 2 and [e["games"] for e in meta["history"]] == [0, 2]
    bad = subprocess.run(
        [*command, "--out", str(tmp_path / "k.pkl")], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and "must end in .npz" in bad.stderr
    missing = subprocess.run(
        [*command, "--resume", "--out", str(tmp_path / "none.npz")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 1 and "no checkpoint" in missing.stderr
    assert "Traceback" not in bad.stderr + missing.stderr


def test_play_command_with_a_weights_file(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nardy",
            "play",
            "--variant",
            "khachapuri",
            "--games",
            "2",
            "--bots",
            f"neural:{shipped_weights('khachapuri')},heuristic",
            "--seed",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "nardy",
            "play",
            "--variant",
            "long",
            "--games",
            "2",
            "--bots",
            "neural:nothing.npz,heuristic",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2 and "no weights file" in missing.stderr
