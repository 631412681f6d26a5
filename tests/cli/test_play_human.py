"""``nardy play --bots human,…``: a person at the terminal, driven here through the real process's
stdin and stdout (docs/play.md).

Each test reads the screen as a person would (the board's position id, the dice, the numbered
plays), answers, and checks what the game recorded in ``--jsonl``: the play the person meant is
the play the game made.
"""

from __future__ import annotations

import io
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from nardy.core import load_variant
from nardy.core.position import Position

PROMPT = "play> "
CUBE = "cube (roll/double"
TAKE = "cube (take/pass"


class Session:
    """``nardy play ARGS`` with pipes: :meth:`until` reads the screen up to a text, :meth:`send`
    types a line."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "COLUMNS": "100", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nardy", "play", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.screen = ""
        self._mark = 0

    def until(self, *texts: str, timeout: float = 60.0) -> tuple[str, str]:
        """Read until one of ``texts`` appears after what was read before: (the text found, what
        was printed up to and including it)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            found = [(self.screen.find(t, self._mark), t) for t in texts]
            found = [(at, t) for at, t in found if at >= 0]
            if found:
                at, text = min(found)
                chunk = self.screen[self._mark : at + len(text)]
                self._mark = at + len(text)
                return text, chunk
            left = deadline - time.monotonic()
            if left <= 0:
                self.proc.kill()
                raise AssertionError(
                    f"no {texts} within {timeout} s; screen:\n{self.screen[-3000:]}"
                )
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                data = os.read(self.proc.stdout.fileno(), 65536)
                if not data:
                    self.proc.wait(10)
                    raise AssertionError(
                        f"the game ended before {texts}; screen:\n{self.screen[-3000:]}"
                    )
                self.screen += data.decode()

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def finish(self, timeout: float = 60.0) -> tuple[int, str, str]:
        """Close stdin (end of input) and wait: (exit status, the rest of stdout, stderr)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.stdin = None  # closed: communicate() would flush it
        out, err = self.proc.communicate(timeout=timeout)
        self.screen += out.decode()
        rest = self.screen[self._mark :]
        self._mark = len(self.screen)
        return self.proc.returncode, rest, err.decode()


@pytest.fixture
def sessions() -> Any:
    started: list[Session] = []

    def start(*args: str) -> Session:
        session = Session(*args)
        started.append(session)
        return session

    yield start
    for session in started:
        if session.proc.poll() is None:
            session.proc.kill()
            session.proc.wait()


def decision(chunk: str) -> tuple[Position, tuple[int, ...], dict[int, str]]:
    """The last play decision shown in ``chunk``: position (the person's view), the segment's
    dice and the numbered plays listed."""
    ids = re.findall(r"^Position (\S+) \(", chunk, re.M)
    dice = re.findall(r" to play: ([\d-]+) \(", chunk)
    assert ids and dice, chunk
    listed = chunk[chunk.rfind(" legal plays:") :]
    plays = {int(n): text for n, text in re.findall(r"^\s+(\d+)\. (.+)$", listed, re.M)}
    return Position.from_id(ids[-1]), tuple(int(d) for d in dice[-1].split("-")), plays


def human_plays(path: Path, colour: str = "White") -> list[str]:
    """The plays the person chose in the recorded game (forced ones left out)."""
    (record,) = [json.loads(line) for line in path.read_text().splitlines()]
    return [
        e["play"]
        for e in record["events"]
        if e["kind"] == "play" and e["player"] == colour and e["choices"] > 1
    ]


def first_with(
    session: Session, wanted: Any, answer: str = "1"
) -> tuple[Position, tuple[int, ...], dict[int, str], str]:
    """Answer ``answer`` at every play prompt until a decision whose plays satisfy ``wanted``."""
    while True:
        _, chunk = session.until(PROMPT)
        position, dice, plays = decision(chunk)
        if wanted(plays):
            return position, dice, plays, chunk
        session.send(answer)


def two_parts(plays: dict[int, str]) -> list[int]:
    return [n for n, text in plays.items() if len(text.split()) == 2 and "(" not in text]


# -- the tests ------------------------------------------------------------------------------------


def test_a_number_and_a_play_in_notation_make_those_plays(sessions: Any, tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    game = sessions(
        "--variant", "long", "--bots", "human,random", "--seed", "3", "--jsonl", str(out)
    )
    _, _, plays, chunk = first_with(game, lambda plays: len(two_parts(plays)) >= 1)
    assert "White (human) to play:" in chunk and "X moves 24" in chunk  # his seat, his numbering
    number = two_parts(plays)[-1]
    # The steps in the other order: the kernel reads a play by its result, not its spelling.
    game.send(" ".join(reversed(plays[number].split())))
    _, chunk = game.until(PROMPT)
    _, _, later = decision(chunk)
    game.send("2")
    game.until(PROMPT)
    status, _, err = game.finish()
    assert status == 130 and "Traceback" not in err
    assert human_plays(out)[-2:] == [plays[number], later[2]]


def test_bad_input_is_told_and_asked_again(sessions: Any, tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    game = sessions(
        "--variant", "long", "--bots", "human,random", "--seed", "3", "--jsonl", str(out)
    )
    _, _, plays, _ = first_with(game, lambda plays: len(plays) > 2)
    for line, told in [
        ("foo", "Cannot read 'foo'"),
        ("99", f"There is no play 99: give 1 to {len(plays)}"),
        ("0", "There is no play 0"),
        ("24/1", "'24/1' is not a legal play"),
        ("13/7 8/7 6/1 5/2 4/3", "is not a legal play"),
        ("double", "Cannot read 'double'"),
        ("undo", "Nothing to undo"),
        ("hint 7", "hint searches 0, 1 or 2 plies deep"),
    ]:
        game.send(line)
        _, chunk = game.until(PROMPT)
        assert told in chunk, (line, chunk)
    game.send("3")
    game.until(PROMPT)
    status, _, err = game.finish()
    assert status == 130
    assert "Traceback" not in game.screen + err
    assert human_plays(out)[-1] == plays[3]


def test_a_play_in_parts_and_undo_within_the_segment(sessions: Any, tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    game = sessions(
        "--variant", "long", "--bots", "human,random", "--seed", "3", "--jsonl", str(out)
    )
    _, dice, plays, _ = first_with(game, lambda plays: len(two_parts(plays)) >= 1)
    first, second = plays[two_parts(plays)[0]].split()
    game.send(first)
    _, chunk = game.until(PROMPT)
    left = dice[1] if int(first.split("/")[0]) - int(first.split("/")[1]) == dice[0] else dice[0]
    assert f"Entered: {first} (the board above is after it); still to play: {left}" in chunk
    game.send("undo")
    _, chunk = game.until(PROMPT)
    assert "Took back the last part." in chunk and "Entered:" not in chunk
    game.send("undo")
    _, chunk = game.until(PROMPT)
    assert "Nothing to undo" in chunk
    # The two parts in the other order make the same play.
    game.send(second)
    _, chunk = game.until(PROMPT)
    assert f"Entered: {second}" in chunk
    game.send(first)
    game.until(PROMPT)
    game.finish()
    assert human_plays(out)[-1] == plays[two_parts(plays)[0]]


def test_hint_is_the_searchers_ranking(sessions: Any) -> None:
    from nardy.engines.evaluator import make_evaluator
    from nardy.engines.search import Searcher

    game = sessions("--variant", "long", "--bots", "human,random", "--seed", "3")
    position, dice, plays, _ = first_with(game, lambda plays: len(plays) >= 5)
    game.send("hint")
    _, chunk = game.until(PROMPT)
    shown = re.findall(r"^\s+(\d+)\. (\S+(?: \S+)*)\s+([+-]\d\.\d{3})", chunk, re.M)
    variant = load_variant("long")
    ranking = Searcher(variant, make_evaluator("neural", variant)).rank(position, dice, 0)
    assert shown == [
        (str(r.index + 1), plays[r.index + 1], f"{r.equity:+.3f}") for r in ranking[:10]
    ]
    game.finish()


def test_end_of_input_stops_and_keeps_the_game_as_interrupted(
    sessions: Any, tmp_path: Path
) -> None:
    from nardy.analysis.records import from_arena_record

    out = tmp_path / "g.jsonl"
    game = sessions(
        "--variant", "long", "--bots", "human,random", "--seed", "3", "--jsonl", str(out)
    )
    first_with(game, lambda plays: True)
    game.send("1")
    first_with(game, lambda plays: True)
    status, _, err = game.finish()
    assert status == 130
    assert "Traceback" not in game.screen + err
    assert f"the game so far is in {out}, marked interrupted" in err
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["interrupted"] is True and record["result"] is None
    assert record["bots"] == {"White": "human", "Black": "random"} and record["seed"] == 3000009
    # The analysis reads it as an unfinished game: its plays replay on the kernel.
    game_input = from_arena_record("g", record)
    assert game_input.winner is None
    assert len([a for a in game_input.actions if a.kind == "play"]) == len(
        [e for e in record["events"] if e["kind"] == "play"]
    )


def test_ctrl_c_at_the_prompt_stops_at_once(sessions: Any, tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    game = sessions(
        "--variant", "long", "--bots", "human,random", "--seed", "3", "--jsonl", str(out)
    )
    first_with(game, lambda plays: True)
    # The prompt is printed just before the read starts: a signal in between waits for the read
    # to return (Python runs handlers between bytecodes), a gap no person's key press falls into.
    time.sleep(0.5)
    game.proc.send_signal(signal.SIGINT)
    # stdin stays open: a Ctrl-C deferred to the end of the game would leave it at the prompt.
    game.proc.wait(timeout=20)
    status, _, err = game.finish()
    assert status == 130 and "Traceback" not in err
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["interrupted"] is True


def test_hot_seat_double_and_pass(sessions: Any, tmp_path: Path) -> None:
    """Two people on one terminal (backgammon, the cube): one doubles, the other passes."""
    out = tmp_path / "g.jsonl"
    game = sessions(
        "--variant", "backgammon", "--bots", "human,human", "--seed", "1", "--jsonl", str(out)
    )
    while True:
        found, chunk = game.until(PROMPT, CUBE)
        if found == CUBE:
            break
        game.send("1")
    doubler = re.findall(r"^(White|Black) \(human \([AB]\)\): cube at 1, centred", chunk, re.M)
    assert doubler, chunk
    game.send("hint")  # the money-play cube analysis
    _, chunk = game.until(CUBE)
    assert re.search(r"no double [+-]\d\.\d{3}, double/take [+-]\d\.\d{3}", chunk), chunk
    assert "Proper action: " in chunk
    game.send("double")
    found, chunk = game.until(TAKE, PROMPT)
    assert found == TAKE and "your opponent doubles to 2" in chunk
    taker = "Black" if doubler[-1] == "White" else "White"
    assert f"{taker} (human (" in chunk
    game.send("pass")
    status, rest, err = game.finish()
    assert status == 0, err
    assert f"{taker} (human (" in rest and "drops the double" in rest
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["result"]["termination"] == "double_dropped"
    assert record["result"]["winner"] == doubler[-1]
    assert game.screen.count("Game over:") == 1  # shown once, not once per seat


def test_a_whole_game_by_numbers_ends_with_the_result_and_summary(
    sessions: Any, tmp_path: Path
) -> None:
    out = tmp_path / "g.jsonl"
    game = sessions(
        "--variant", "long", "--bots", "random,human", "--seed", "4", "--jsonl", str(out)
    )
    assert game.proc.stdin is not None
    game.proc.stdin.write(b"1\n" * 400)  # more than a game needs: the rest is never read
    status, _, err = game.finish()
    assert status == 0, err
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert "interrupted" not in record and record["result"]["winner"] in ("White", "Black")
    # random,human: game 1 seats the first bot, random, as White; the person is Black.
    assert record["bots"] == {"White": "random", "Black": "human"}
    assert "Black (human) to play:" in game.screen
    assert "Game over:" in game.screen and "1 game, seed 4" in game.screen
    assert human_plays(out, "Black")  # the person decided


def test_unknown_hint_evaluator_is_refused_up_front() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "nardy", "play", "--bots", "human:nonsense,random"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 2 and "no evaluator 'nonsense' for hints" in done.stderr


# -- the bot itself, on positions made for the purpose ----------------------------------------------


def _seat(
    variant_name: str, points: list[int], bar: list[int], rolls: list[tuple[int, int]], typed: str
) -> tuple[Any, Any, io.StringIO]:
    """A game from ``points``/``bar`` (White to roll ``rolls``) and a human White reading ``typed``."""
    from nardy.bots.human import HumanBot
    from nardy.core.dice import ScriptedDice
    from nardy.core.game import CubeSettings, Game

    variant = load_variant(variant_name)
    position = Position.from_json({"points": points, "bar": bar, "off": [0, 0]})
    game = Game(variant, ScriptedDice(rolls), position=position, cube=CubeSettings())
    screen = io.StringIO()
    bot = HumanBot(stdin=io.StringIO(typed), stdout=screen)
    bot.start_game(variant, 0)
    bot.watch(game, ("you", "them"))
    return game, bot, screen


def test_a_part_that_no_legal_play_starts_with_is_refused() -> None:
    """A checker on the bar, 6-5, the 5's entry point closed: it must enter with the 6, so 13/7
    (a step the 6 can make on the board) starts no legal play; bar/19 does, and 13/8 ends it."""
    points = [-2, 0, 0, 0, 0, 4, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, 0, -2, -3, 0, 0, 2]
    game, bot, screen = _seat("backgammon", points, [1, 0], [(6, 5)], "13/7\nbar/19\n13/8\n")
    plays = game.decision.plays
    assert len(plays) > 1
    chosen = _answer(bot, game.decision)
    shown = screen.getvalue()
    assert "'13/7' is not a legal play with 6-5: no legal play starts that way" in shown
    assert "Entered: bar/19" in shown
    assert plays[chosen] == plays.find("bar/19 13/8")


def test_a_whole_play_typed_after_a_part_replaces_it() -> None:
    points = [-2, 0, 0, 0, 0, 4, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, 0, -2, -3, 0, 0, 2]
    game, bot, screen = _seat("backgammon", points, [1, 0], [(6, 5)], "bar/19\nbar/19 8/3\n")
    plays = game.decision.plays
    assert plays[_answer(bot, game.decision)] == plays.find("bar/19 8/3")
    assert "Entered: bar/19" in screen.getvalue()


def test_undo_reaches_back_to_the_start_of_the_segment_only() -> None:
    """mad's 3-3 progression from outside home: stage 3 is answered, then stage 4 is asked; its
    undo takes back its own part but not stage 3, which the game has already played."""
    points = [0] * 24
    points[21] = points[19] = points[15] = 5
    points[11] = -15
    typed = "22/19(4)\n22/18\nundo\nundo\n22/18 20/16(3)\n"
    game, bot, screen = _seat("mad", points, [0, 0], [(3, 3)], typed)
    assert game.decision.segment.description == "stage 3 of a 3-3 progression"
    game.decide(_answer(bot, game.decision))
    assert game.decision.segment.description == "stage 4 of a 3-3 progression"
    game.decide(_answer(bot, game.decision))
    shown = screen.getvalue()
    assert "Entered: 22/18" in shown and "Took back the last part." in shown
    assert shown.count("Nothing to undo: this segment starts here") == 1
    plays = [e.data["play"] for e in game.events if e.kind == "play"]
    assert plays[:2] == ["22/19(4)", "22/18 20/16(3)"]


def _answer(bot: Any, decision: Any) -> int:
    """The bot's answer; its input running out is a failure of the test, not an interrupt of the
    test run (HumanQuit is a KeyboardInterrupt)."""
    from nardy.bots.human import HumanQuit

    try:
        answer: int = bot.choose_play(decision)
    except HumanQuit:
        raise AssertionError("the bot read all its input without answering") from None
    return answer


class _Answers(io.StringIO):
    """A person who doubles at every chance, takes every double and plays the first play: the
    answer is chosen by the prompt last written to ``screen``."""

    def __init__(self, screen: io.StringIO) -> None:
        super().__init__()
        self.screen = screen
        self.asked: list[str] = []

    def readline(self, size: int | None = -1) -> str:
        prompt = self.screen.getvalue().rsplit("\n", 1)[-1]
        self.asked.append(prompt)
        if len(self.asked) > 2000:
            return ""
        if prompt.startswith("cube (roll"):
            return "double\n"
        if prompt.startswith("cube (take"):
            return "take\n"
        return "1\n"


def test_the_seat_plays_in_play_game_alone() -> None:
    """Any driver of the bot protocol can seat a person (the arena's bot server would): without
    nardy play's watch() the seat still shows the board, asks the cube and plays to the end."""
    from nardy.bots import RandomBot, play_game
    from nardy.bots.human import HumanBot
    from nardy.core.dice import SeededDice

    screen = io.StringIO()
    answers = _Answers(screen)
    bot = HumanBot(stdin=answers, stdout=screen)
    game = play_game(load_variant("backgammon"), (bot, RandomBot(2)), SeededDice(5))
    assert game.result is not None
    assert any(p.startswith("cube (roll") for p in answers.asked)
    assert any(p == "play> " for p in answers.asked)
    assert "White (you): cube at 1, centred." in screen.getvalue()
    assert any(e.kind == "double" and e.player == 0 for e in game.events)
