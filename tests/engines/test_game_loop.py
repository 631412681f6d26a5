"""The one decider protocol (nardy.bots.decider) and the one game loop (nardy.bots.loop): each
question goes to the method that answers it, an answer is checked, and the loop's fault policy,
clock, disqualification and stop are values that change only what the issue says they change."""

from __future__ import annotations

import random
import threading
import time

import pytest

from nardy.bots import Bot, RandomBot, make_bot, play_game
from nardy.bots.decider import Reply, ask, check_answer, fallback_answer
from nardy.bots.faults import BotIllegalAnswerError, FaultCounter, FaultPolicy
from nardy.bots.loop import GameLoop, Limit, TimeControl
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.errors import IllegalPlayError
from nardy.core.game import (
    CubeAnswer,
    CubeSettings,
    DoubleDecision,
    Game,
    PlayDecision,
    TakeDecision,
)


def _game(variant: str = "long", seed: int = 3, **kwargs: object) -> Game:
    return Game(load_variant(variant), SeededDice(seed), **kwargs)  # type: ignore[arg-type]


class Asked(Bot):
    """Answers as RandomBot would, writing down which method each question reached."""

    name = "asked"

    def __init__(self) -> None:
        self.inner = RandomBot(1, double_rate=0.3, take_rate=0.5)
        self.calls: list[tuple[str, type]] = []

    def choose_play(self, decision: PlayDecision) -> int:
        self.calls.append(("play", type(decision)))
        return self.inner.choose_play(decision)

    def offer_double(self, decision: DoubleDecision) -> bool:
        self.calls.append(("double", type(decision)))
        return self.inner.offer_double(decision)

    def respond_to_double(self, decision: TakeDecision) -> CubeAnswer:
        self.calls.append(("take", type(decision)))
        return self.inner.respond_to_double(decision)


def test_ask_sends_each_question_to_its_method() -> None:
    bot = Asked()
    game = _game("backgammon", cube=CubeSettings(enabled=True))
    while game.decision is not None:
        reply = ask(bot, game.decision)
        game.decide(reply.answer if isinstance(reply, Reply) else reply)
    kinds = {kind: cls for kind, cls in bot.calls}
    assert kinds == {"play": PlayDecision, "double": DoubleDecision, "take": TakeDecision}


def test_check_answer() -> None:
    game = _game()
    decision = game.decision
    assert isinstance(decision, PlayDecision)
    assert check_answer(decision, len(decision.plays) - 1) == len(decision.plays) - 1
    for wrong in (True, len(decision.plays), -1, "0"):
        with pytest.raises(BotIllegalAnswerError):
            check_answer(decision, wrong)
    rng = random.Random(0)
    assert 0 <= int(fallback_answer(decision, rng)) < len(decision.plays)


def test_play_game_is_the_loop_unchanged() -> None:
    """play_game (no policy, no clock, nothing recorded) and the loop with a policy and a record
    play the same game, answer for answer."""
    variant = load_variant("long")
    plain = play_game(variant, (make_bot("heuristic", 1), make_bot("random", 2)), SeededDice(9))
    played = GameLoop(
        Game(variant, SeededDice(9)),
        (make_bot("heuristic", 1), make_bot("random", 2)),
        policy=FaultPolicy(),
        time_control=TimeControl(per_decision=60.0),
    ).play()
    assert played.forfeit is None and played.aborted is None
    assert played.game.record() == plain.record()
    assert [d["seq"] for d in played.decisions] == list(range(1, len(played.decisions) + 1))
    assert all("latency_ms" in d and "fault" not in d for d in played.decisions)


class Broken(RandomBot):
    """Raises on its ``every``-th play."""

    name = "broken"

    def __init__(self, seed: int, every: int = 1) -> None:
        super().__init__(seed)
        self.every, self.n = every, 0

    def choose_play(self, decision: PlayDecision) -> int:
        self.n += 1
        if self.n % self.every == 0:
            raise RuntimeError("boom")
        return super().choose_play(decision)


def test_no_policy_leaves_a_fault_to_the_caller() -> None:
    class Wrong(Bot):
        def choose_play(self, decision: PlayDecision) -> int:
            return len(decision.plays)

    with pytest.raises(IllegalPlayError):
        play_game(load_variant("long"), (Wrong(), Wrong()), SeededDice(1))
    with pytest.raises(RuntimeError, match="boom"):
        play_game(load_variant("long"), (Broken(1), Broken(2)), SeededDice(1))


def test_forfeit_policy() -> None:
    played = GameLoop(
        _game(), (RandomBot(1), Broken(2)), names=("a", "b"), policy=FaultPolicy()
    ).play()
    assert played.forfeit is not None and played.forfeit.loser == 1
    assert played.forfeit.termination == "bot_failure"
    assert played.forfeit.reason == "b: crash: RuntimeError: boom"
    assert played.faults[1]["crash"] == 1 and played.game.result is None
    assert played.decisions[-1]["fault"] == {"kind": "crash", "message": "RuntimeError: boom"}


def test_random_policy_plays_on_and_disqualifies() -> None:
    played = GameLoop(
        _game(), (RandomBot(1), Broken(2, every=3)), policy=FaultPolicy(on_fault="random")
    ).play()
    assert played.forfeit is None and played.game.result is not None
    fallbacks = [d for d in played.decisions if d.get("fallback")]
    assert fallbacks and len(fallbacks) == played.faults[1]["crash"]
    counters = (FaultCounter(), FaultCounter())
    played = GameLoop(
        _game(),
        (RandomBot(1), Broken(2, every=3)),
        names=("a", "b"),
        policy=FaultPolicy(on_fault="random", max_faults=2),
        counters=counters,
    ).play()
    assert played.forfeit is not None and played.forfeit.loser == 1
    assert played.forfeit.reason.endswith("(disqualified after 2 faults)")
    assert counters[1].disqualified and counters[1].counts["crash"] == 2
    again = GameLoop(
        _game(), (RandomBot(1), RandomBot(2)), names=("a", "b"), policy=FaultPolicy(),
        counters=counters,
    ).play()  # fmt: skip
    assert again.forfeit is not None and again.forfeit.reason == "b is disqualified"


class Slow(RandomBot):
    name = "slow"

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.limits: list[Limit | None] = []
        self.loop: GameLoop | None = None

    def choose_play(self, decision: PlayDecision) -> int:
        assert self.loop is not None
        self.limits.append(self.loop.limit)
        time.sleep(0.03)
        return super().choose_play(decision)


def test_clock_times_out_a_late_answer() -> None:
    slow = Slow(2)
    loop = GameLoop(
        _game(),
        (RandomBot(1), slow),
        policy=FaultPolicy(),
        time_control=TimeControl(per_decision=0.01, reserve=0.035, slack=0.0),
    )
    slow.loop = loop
    played = loop.play()
    assert played.forfeit is not None and played.forfeit.fault == "timeout"
    assert played.forfeit.termination == "time_forfeit"
    first, second = slow.limits[0], slow.limits[1]
    assert first is not None and second is not None
    assert first.time_left == pytest.approx(0.045) and first.previous_latency is None
    assert second.time_left < first.time_left and second.previous_latency is not None
    assert len(slow.limits) == 2  # the reserve is spent by the first two answers


def test_stop_aborts_before_the_next_question() -> None:
    stop = threading.Event()
    stop.set()
    played = GameLoop(_game(), (RandomBot(1), RandomBot(2)), policy=FaultPolicy(), stop=stop).play()
    assert played.aborted == "interrupted: arena shut down" and not played.decisions


def test_reply_info_is_recorded() -> None:
    class Talks(RandomBot):
        def choose_play(self, decision: PlayDecision) -> Reply:  # type: ignore[override]
            return Reply(super().choose_play(decision), {"comment": "hi"})

    played = GameLoop(_game(), (Talks(1), RandomBot(2)), policy=FaultPolicy()).play()
    white = [d for d in played.decisions if d["player"] == "White"]
    assert white and all(d["info"] == {"comment": "hi"} for d in white)
