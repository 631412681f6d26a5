"""The ``human`` bot: a person at the terminal answers the game's decisions (``docs/play.md``).

``nardy play --bots human,neural`` seats a person as one more decider of the bot protocol
(:class:`~nardy.bots.base.Bot`), so the game loop (:func:`~nardy.bots.base.play_game`), the
kernel's turn plan and the ``--jsonl`` records are the same as between two bots. ``human,human``
is hot-seat play on one terminal.

What the person sees at each decision: what happened since he last answered (the opponent's
rolls, plays and cube actions, and his own forced plays, which the kernel makes without asking),
the text board from his seat in his own numbering (:func:`~nardy.core.board_text.render_board`),
the dice of the segment and its legal plays, numbered. He answers with a number or the play in
RULES.md §1.5 notation (``13/7 8/7``, read by :meth:`~nardy.core.variant.LegalPlays.find`).

A play may also be entered in parts (``13/7``, then ``8/7``): a part is kept when the dice left
can still reach some legal play's result from the board after it, and ``undo`` takes back the
last part. Nothing is sent to the game until the segment's play is complete, so ``undo`` reaches
back to the start of the current segment and no further: a segment once played (an earlier
stage of a progression, the roll before a re-roll, the transferred steps before the roll) has
been answered to the kernel's game, which cannot take an answer back, and the dice that
followed were thrown for the position it made.

``hint`` ranks the legal plays by the analysis' search (:class:`~nardy.engines.search.Searcher`
over the ``neural`` evaluator by default, ``human:EVALUATOR`` for another; ``hint 1`` searches
1-ply); at a cube decision it gives the money-play cube analysis
(:func:`~nardy.analysis.cube.analyse_cube`). End of input, ``quit`` and Ctrl-C stop the game:
:class:`HumanQuit` (a :class:`KeyboardInterrupt`) reaches ``nardy play``, which records the game
so far as interrupted.
"""

from __future__ import annotations

import contextlib
import re
import signal
import sys
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from nardy.bots.base import Bot
from nardy.core.board_text import render_board
from nardy.core.errors import NardyError
from nardy.core.game import (
    COLOURS,
    Cube,
    CubeAnswer,
    DoubleDecision,
    Game,
    GameEvent,
    PlayDecision,
    TakeDecision,
)
from nardy.core.notation import OFF, parse_steps
from nardy.core.position import Position
from nardy.core.variant import Variant, apply_steps
from nardy.interrupt import InterruptFlag
from nardy.words import result_words

if TYPE_CHECKING:
    from nardy.engines.search import Searcher

__all__ = ["HumanBot", "HumanQuit", "has_human", "show_result", "watch_game"]

SHOWN_PLAYS = 40
"""Legal plays listed at most before ``list``: a double in backgammon's middle game can have
hundreds, which would push the board off the screen."""
HINTS_SHOWN = 10
"""Ranked plays ``hint`` prints."""

HELP = """\
Answer with:
  a number         the legal play of that number
  a play           in your own numbering: 13/7 8/7, 24/18/13, bar/20, 6/off, 8/5(2)
  part of a play   13/7, then 8/7: kept while it can still become a legal play
  undo             take back the last part (back to the start of this segment; a
                   segment already played, e.g. an earlier stage, stays played)
  hint [PLY]       the engine's ranking of the plays (PLY 0 by default; 1 is slower)
  list             every legal play (a long list is cut at the first 40)
  board            the board again
  quit             stop (end of input, Ctrl-C too); --jsonl keeps the game so far
At the cube: roll (or Enter) / double; take / pass / beaver; hint gives the cube.
"""


class HumanQuit(KeyboardInterrupt):
    """The person stopped the game (end of input, ``quit``): an interruption, like Ctrl-C, so
    that ``nardy play`` stops the run and records the unfinished game, and no ``except Exception``
    on the way (a bot driver's fault handling) mistakes it for a bot's error."""


@dataclass
class _Table:
    """What the human seats watching one game share: how much of its record has been printed
    (so that two people on one terminal see each event once) and the players' names."""

    names: tuple[str, str]
    printed: int = 0
    skip: set[int] = field(default_factory=set)
    """Indexes of events that record an answer the person has just typed (not echoed back)."""
    announced: bool = False
    result_shown: bool = False
    """The result is printed once, to the first seat that looks after the end."""


_TABLES: weakref.WeakKeyDictionary[Game, _Table] = weakref.WeakKeyDictionary()


@dataclass
class _Entry:
    """A play being entered in parts within one segment."""

    parts: list[str] = field(default_factory=list)
    middle: Position | None = None
    """The board after the parts (mover's view); None before the first."""
    left: tuple[int, ...] = ()
    """The dice still to play after them."""
    completes: list[int] = field(default_factory=list)
    """Indexes of the legal plays the parts can still become."""


class HumanBot(Bot):
    """A person at the terminal (module doc). ``hints`` names the evaluator of ``hint``
    (``neural`` by default; any name :func:`~nardy.engines.evaluator.make_evaluator` knows).

    ``stdin``/``stdout`` default to the process's; with the real stdin on a terminal the prompts
    read through :func:`input` (line editing and history by :mod:`readline` where it exists).
    """

    name = "human"
    interactive = True

    def __init__(
        self,
        seed: int | None = None,
        hints: str | None = None,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
    ) -> None:
        # The seed is unused (a person is not random); it is taken because every bot's factory
        # is called with one (nardy.bots.registry).
        self.hints = hints or "neural"
        if hints:  # refused when the bot is named (nardy play --bots), not at the first hint
            from nardy.engines.evaluator import evaluator_names

            if hints.partition(":")[0] not in evaluator_names():
                raise ValueError(
                    f"human:{hints}: no evaluator {hints!r} for hints; known: "
                    + ", ".join(evaluator_names())
                )
        self._stdin = stdin
        self._stdout = stdout
        self._variant: Variant | None = None
        self._colour = 0
        self._game: Game | None = None
        self._searcher: Searcher | None = None

    # -- the bot protocol ------------------------------------------------------------------------

    def start_game(self, variant: Variant, colour: int) -> None:
        self._variant = variant
        self._colour = colour
        self._game = None
        if self._searcher is not None and self._searcher.variant is not variant:
            self._searcher = None  # a match of tavli changes the variant from game to game

    def watch(self, game: Game, names: tuple[str, str]) -> None:
        """The game being played, with the players' names (White, Black): what the person is
        shown comes from its record (``nardy play`` calls this when the game starts)."""
        self._game = game
        table = _TABLES.get(game)
        if table is None:
            table = _TABLES[game] = _Table(names)
        if not table.announced:
            table.announced = True
            self._say(self._announcement(game, table))

    def game_over(self, game: Game) -> None:
        """Show what happened since the last decision, the result and the final board."""
        self._game = game
        self._catch_up()

    def choose_play(self, decision: PlayDecision) -> int:
        with self._at_keyboard():
            return self._choose_play(decision)

    def offer_double(self, decision: DoubleDecision) -> bool:
        with self._at_keyboard():
            self._catch_up()
            self._say(self._board(decision.position))
            self._say(
                f"{self._you()}: cube at {self._cube_text(decision.cube)}. Roll, or double to "
                f"{2 * decision.cube.value}?"
            )
            while True:
                word = self._read("cube (roll/double/hint/board/help)> ").lower()
                if word in ("", "r", "roll", "n", "no"):  # Enter rolls: no double by accident
                    return False
                if word in ("d", "double", "y", "yes"):
                    self._skip_next_event()
                    return True
                if not self._common(word, decision.position, decision.cube):
                    self._say(f"'{word}' is not an answer here: roll or double (r/d), or help.")

    def respond_to_double(self, decision: TakeDecision) -> CubeAnswer:
        with self._at_keyboard():
            self._catch_up()
            self._say(self._board(decision.position))
            offered = 2 * decision.cube.value
            choices = ["take", "pass"] + (["beaver"] if decision.beaver_allowed else [])
            doubled = (
                f"beavers: the cube is {offered} and theirs"
                if decision.after_beaver
                else f"doubles to {offered}"
            )
            self._say(f"{self._you()}: your opponent {doubled}. {' or '.join(choices)}?")
            while True:
                word = self._read(f"cube ({'/'.join(choices)}/hint/board/help)> ").lower()
                answer = _CUBE_ANSWERS.get(word)
                if answer == "beaver" and not decision.beaver_allowed:
                    self._say("No beaver here (beavers are off, or this double is a beaver's).")
                    continue
                if answer is not None:
                    self._skip_next_event()
                    return answer
                if not self._common(word, decision.position, decision.cube, take=decision):
                    self._say(f"'{word}' is not an answer here: {' or '.join(choices)}, or help.")

    # -- plays -----------------------------------------------------------------------------------

    def _choose_play(self, decision: PlayDecision) -> int:
        self._catch_up()
        plays = decision.plays
        entry = _Entry()
        self._show_decision(decision, entry)
        while True:
            line = self._read("play> ")
            word = line.lower()
            if word == "undo":
                if not entry.parts:
                    self._say(
                        "Nothing to undo: this segment starts here (a segment already "
                        "played stays played)."
                    )
                    continue
                entry = self._entry(decision, entry.parts[:-1])
                self._say("Took back the last part.")
                self._show_decision(decision, entry)
                continue
            if word in ("list", "l"):
                self._say(self._plays_text(decision, range(len(plays)), limit=None))
                continue
            if word in ("board", "b"):
                self._show_decision(decision, entry)
                continue
            hint = re.fullmatch(r"hint(?:\s+(\d+))?", word)
            if hint:
                self._hint(decision, int(hint.group(1) or 0))
                continue
            if word in ("quit", "exit", "q"):
                raise HumanQuit("quit")
            if word in ("help", "?", "h"):
                self._say(HELP)
                continue
            if not word:
                continue
            if line.isdigit():
                number = int(line)
                if 1 <= number <= len(plays):
                    self._skip_next_event()
                    return number - 1
                self._say(f"There is no play {number}: give 1 to {len(plays)}, or the play.")
                continue
            chosen = self._enter(decision, entry, line)
            if isinstance(chosen, int):
                self._skip_next_event()
                return chosen
            if chosen is not None:
                entry = chosen
                self._show_decision(decision, entry)

    def _enter(self, decision: PlayDecision, entry: _Entry, line: str) -> int | _Entry | None:
        """A play, or a part of one, typed: the index of the complete legal play it makes with the
        parts before it (or alone: a whole play typed after some parts replaces them), the entry
        with it added, or None (the reason told)."""
        plays = decision.plays
        parts = [*entry.parts, line]
        try:
            parse_steps(line)
        except NardyError as error:
            self._say(f"Cannot read {line!r}: {error}. Type help for the notation.")
            return None
        for whole in (parts, [line]) if entry.parts else (parts,):
            try:
                return plays.index_of(plays.find(" ".join(whole)).result)
            except NardyError:
                pass  # not a whole legal play: perhaps the start of one
        try:
            return self._entry(decision, parts)
        except NardyError as error:
            dice = "-".join(map(str, plays.dice))
            sofar = f" after {' '.join(entry.parts)}" if entry.parts else ""
            self._say(f"{line!r}{sofar} is not a legal play with {dice}: {error}")
            return None

    def _entry(self, decision: PlayDecision, parts: Sequence[str]) -> _Entry:
        """The entry made of ``parts``: the board after them and the legal plays they can still
        become (the dice left must reach one of those plays' results from that board, as the
        kernel judges plays, by their result). Raises :class:`NardyError` with the reason."""
        if not parts:
            return _Entry()
        assert self._variant is not None
        plays = decision.plays
        steps = parse_steps(" ".join(parts))
        left = list(plays.dice)
        used = 0
        for step in steps:
            dice = _dice_for(step.src - step.dst, left, bear_off=step.dst == OFF, src=step.src)
            if dice is None:
                raise _NotAPart(
                    f"{step.src}/{step.dst if step.dst != OFF else 'off'} is no step of the "
                    f"dice left ({'-'.join(map(str, left)) or 'none'})"
                )
            for die in dice:
                left.remove(die)
            used += len(dice)
        # Where a checker cannot go, the kernel's reason says so first ("point 7 is closed").
        middle = apply_steps(decision.position, steps, pins=self._variant.rules.hitting.pins)
        if used == plays.dice_used:
            raise _NotAPart("those steps are none of the legal plays")
        if used > plays.dice_used:
            raise _NotAPart(f"a legal play here uses {plays.dice_used} of the dice")
        reachable = set(self._variant.legal_plays(middle, tuple(left)).positions())
        completes = [i for i, result in enumerate(plays.positions()) if result in reachable]
        if not completes:
            raise _NotAPart("no legal play starts that way")
        return _Entry(list(parts), middle, tuple(left), completes)

    # -- hints -----------------------------------------------------------------------------------

    def _searcher_now(self) -> Searcher:
        if self._searcher is None:
            from nardy.engines.evaluator import make_evaluator
            from nardy.engines.search import Searcher

            assert self._variant is not None
            self._searcher = Searcher(self._variant, make_evaluator(self.hints, self._variant))
        return self._searcher

    def _hint(self, decision: PlayDecision, ply: int) -> None:
        if ply > 2:
            self._say("hint searches 0, 1 or 2 plies deep.")
            return
        try:
            ranking = self._searcher_now().rank(
                decision.position, decision.segment.dice, ply, kind=decision.segment.kind
            )
        except (ValueError, ImportError) as error:  # an unknown evaluator, numpy missing
            self._say(f"No hint: {error}")
            return
        self._say(f"Ranked by {self.hints} at {ply}-ply (equity after the play, cubeless):")
        width = len(str(len(decision.plays)))
        for rank in ranking[:HINTS_SHOWN]:
            loss = f"  -{rank.loss:.3f}" if rank.loss > 0 else ""
            text = decision.plays[rank.index].text or "(no move)"
            self._say(f"  {rank.index + 1:>{width}}. {text:<24} {rank.equity:+.3f}{loss}")
        if len(ranking) > HINTS_SHOWN:
            self._say(f"  ... {len(ranking) - HINTS_SHOWN} more")

    def _cube_hint(self, position: Position, cube: Cube, take: TakeDecision | None) -> None:
        """The money-play cube analysis of the player on roll (the doubler)."""
        assert self._variant is not None
        if take is not None and take.after_beaver:
            self._say("No hint for the answer to a beaver.")
            return
        try:
            from nardy.analysis.cube import analyse_cube, probabilities_from_equity
            from nardy.engines.evaluator import equity_on_roll

            searcher = self._searcher_now()
            doubler = position if take is None else self._variant.flip(position)
            evaluator = searcher.evaluator
            probabilities = evaluator.probabilities(doubler) or probabilities_from_equity(
                equity_on_roll(evaluator, self._variant, doubler)
            )
        except (ValueError, ImportError) as error:
            self._say(f"No hint: {error}")
            return
        # Only a player with access to the cube doubles: it is centred or the doubler's.
        analysis = analyse_cube(
            probabilities,
            "centre" if cube.owner is None else "me",
            jacoby=self._game is not None and self._game.cube_settings.jacoby,
        )
        match = ", match score not counted" if self.match else ""
        self._say(
            f"Cube by {self.hints} (money play, Janowski{match}), the doubler's equity per cube: "
            f"no double {analysis.no_double:+.3f}, double/take {analysis.double_take:+.3f}, "
            f"double/pass {analysis.double_pass:+.3f}.\nProper action: {analysis.best}."
        )

    def _common(
        self, word: str, position: Position, cube: Cube, take: TakeDecision | None = None
    ) -> bool:
        """The words every cube prompt knows (a play's prompt answers ``hint`` and ``board``
        before); True if ``word`` was one (and was answered)."""
        if word in ("quit", "exit", "q"):
            raise HumanQuit("quit")
        if word in ("help", "?", "h"):
            self._say(HELP)
            return True
        if word in ("board", "b"):
            self._say(self._board(position))
            return True
        if word == "hint":
            self._cube_hint(position, cube, take)
            return True
        return word == ""  # an empty line: the prompt again

    # -- what is shown ---------------------------------------------------------------------------

    def _you(self) -> str:
        table = None if self._game is None else _TABLES.get(self._game)
        name = "you" if table is None else table.names[self._colour]  # not watched: a bot server
        return f"{COLOURS[self._colour]} ({name})"

    def _cube_text(self, cube: Cube) -> str:
        owner = (
            "centred"
            if cube.owner is None
            else ("yours" if cube.owner == self._colour else "your opponent's")
        )
        return f"{cube.value}, {owner}"

    def _announcement(self, game: Game, table: _Table) -> str:
        variant = game.variant
        lines = [
            "",
            f"=== {variant.name}: White {table.names[0]} - Black {table.names[1]} ===",
            "Each player numbers the points from his own side (RULES.md §1.1): your board and "
            "plays use yours, the opponent's plays his.",
        ]
        if self.match is not None:  # Bot.set_match: what nardy play --match said
            length, own, other = self.match
            lines.append(
                f"Match to {length}: {COLOURS[self._colour]} {own}, "
                f"{COLOURS[1 - self._colour]} {other}."
            )
        if game.cube_settings.enabled:
            lines.append("The cube is in play: you are asked to double before your rolls.")
        lines.append("Type help at any prompt.")
        return "\n".join(lines)

    def _board(self, position: Position) -> str:
        assert self._variant is not None
        text = render_board(
            position, self._variant, mover_colour="white" if self._colour == 0 else "black"
        )
        you = f"You: X, {COLOURS[self._colour]}"
        if self._game is not None and self._game.cube_settings.enabled:
            you += f" · cube {self._cube_text(self._game.cube)}"
        return f"{text}{you}"

    def _show_decision(self, decision: PlayDecision, entry: _Entry) -> None:
        segment = decision.segment
        dice = "-".join(map(str, segment.dice))
        self._say(self._board(decision.position if entry.middle is None else entry.middle))
        self._say(f"{self._you()} to play: {dice} ({segment.description})")
        if entry.parts:
            left = "-".join(map(str, entry.left))
            self._say(
                f"Entered: {' '.join(entry.parts)} (the board above is after it); still to "
                f"play: {left}.\nType the rest, or undo. The plays it can become:"
            )
            self._say(self._plays_text(decision, entry.completes, limit=SHOWN_PLAYS))
        else:
            self._say(f"{len(decision.plays)} legal plays:")
            self._say(self._plays_text(decision, range(len(decision.plays)), limit=SHOWN_PLAYS))
        self._say("Type a number or a play (e.g. 13/7 8/7); hint, undo, help.")

    def _plays_text(self, decision: PlayDecision, indexes: Sequence[int], limit: int | None) -> str:
        plays = decision.plays
        width = len(str(len(plays)))
        shown = list(indexes) if limit is None else list(indexes)[:limit]
        lines = [f"  {i + 1:>{width}}. {plays[i].text or '(no move)'}" for i in shown]
        if len(indexes) > len(shown):
            lines.append(f"  ... and {len(indexes) - len(shown)} more (list shows them all)")
        return "\n".join(lines)

    def _catch_up(self) -> None:
        """Print the game's events since they were last printed (the person's own typed answers
        left out), and, once the game is over, its result and final board."""
        game = self._game
        if game is None:
            return
        table = _TABLES.setdefault(game, _Table(("White", "Black")))
        events = game.events
        lines = []
        for number in range(table.printed, len(events)):
            if number not in table.skip:
                line = _event_line(events[number], table.names, self._colour)
                if line:
                    lines.append(line)
        table.printed = len(events)
        if lines:
            self._say("\n".join(lines))
        if game.result is not None and not table.result_shown:
            table.result_shown = True
            record = game.record()["result"]
            record["termination"] = _TERMINATION.get(game.result.reason, game.result.reason)
            record["multiplier"] = game.result.base_value
            names = {colour: name for colour, name in zip(COLOURS, table.names, strict=True)}
            self._say(self._board(game.position_for(self._colour)))
            self._say(
                "Game over: "
                + result_words(record, game.variant, cube=game.result.cube_value, names=names)
            )

    def _skip_next_event(self) -> None:
        """The answer being returned is logged as the game's next event: the person typed it and
        sees it, so it is not printed back to him."""
        if self._game is not None:
            _TABLES[self._game].skip.add(len(self._game.events))

    # -- input and output ------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        out = self._stdout or sys.stdout
        out.write(text + "\n")
        out.flush()

    def _read(self, prompt: str) -> str:
        """One line from the person, stripped; :class:`HumanQuit` at the end of input."""
        try:
            if self._stdin is None:
                (self._stdout or sys.stdout).flush()
                if sys.stdin.isatty():
                    _readline()
                return input(prompt).strip()
            out = self._stdout or sys.stdout
            out.write(prompt)
            out.flush()
            line = self._stdin.readline()
            if not line:
                raise EOFError
            return line.strip()
        except EOFError:
            self._say("")
            raise HumanQuit("end of input") from None
        except KeyboardInterrupt:
            self._say("")  # the message that follows starts a line of its own, not after the prompt
            raise

    @contextmanager
    def _at_keyboard(self) -> Iterator[None]:
        """While the person decides, Ctrl-C stops at once: ``nardy play`` defers it to the end of
        the game (:mod:`nardy.interrupt`), which a person waiting at a prompt would never reach
        (:func:`input` is resumed after the deferred handler returns). A Ctrl-C already deferred
        while the opponent thought stops here, before the prompt."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.getsignal(signal.SIGINT)
        owner = getattr(previous, "__self__", None)
        if isinstance(owner, InterruptFlag) and owner.requested:
            raise KeyboardInterrupt
        signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


_TERMINATION = {"bear_off": "borne_off", "drop": "double_dropped"}
"""The records' words for the kernel's end reasons where they differ (``mother`` and ``draw`` are
the same), which :func:`~nardy.words.result_words` reads: ``nardy.results.TERMINATION``, whose
layer (the applications, docs/architecture.md) a bot may not import."""

_CUBE_ANSWERS: dict[str, CubeAnswer] = {
    "t": "take",
    "take": "take",
    "p": "drop",
    "pass": "drop",
    "drop": "drop",
    "b": "beaver",
    "beaver": "beaver",
}
"""The words of a take decision: ``pass`` is the player's word for the kernel's ``drop``."""


class _NotAPart(NardyError, ValueError):
    """The typed steps are not the start of a legal play (the message says why)."""


def _dice_for(distance: int, left: Sequence[int], *, bear_off: bool, src: int) -> list[int] | None:
    """The dice a step of ``distance`` takes from those ``left``: one die of that number, several
    that add up to it (``24/13`` with 6-5, ``24/16`` with 4-4), or for a bear-off the smallest
    larger die (RULES.md §2.5 lets it bear off from below); None if none do."""
    if distance in left:
        return [distance]
    values = sorted(left)
    for count in range(2, len(values) + 1):
        for start in range(len(values) - count + 1):
            chosen = values[start : start + count]
            if sum(chosen) == distance:
                return chosen
    if bear_off:
        larger = [die for die in values if die > src]
        if larger:
            return [larger[0]]
    return None


def _event_line(event: GameEvent, names: tuple[str, str], viewer: int) -> str:
    """One line of the record for the person at ``viewer``'s seat (empty for none)."""
    who = f"{COLOURS[event.player]} ({names[event.player]})"
    data: dict[str, Any] = event.data
    kind = event.kind
    if kind == "opening":
        white, black = data["dice"]
        if white == black:
            return f"Opening throw: White {white}, Black {black}: a tie, thrown again."
        first = "White" if white > black else "Black"
        return f"Opening throw: White {white}, Black {black}: {first} starts."
    if kind == "roll":
        a, b = data["dice"]
        return f"{who} {'re-rolls' if data.get('reroll') else 'rolls'} {a}-{b}."
    if kind == "play":
        text = data.get("play") or "(no move)"
        segment = "" if data.get("segment_kind") == "roll" else f" [{data.get('segment')}]"
        forced = " (forced)" if data.get("choices") == 1 else ""
        own = " (your numbering)" if event.player == viewer else ""
        return f"{who} plays {text}{segment}{forced}{own}."
    if kind == "transfer":
        steps = ", ".join(f"{count} x {value}" for value, count in data.get("steps", []))
        return f"{who} hands the steps he could not play to the opponent: {steps}."
    if kind == "double":
        return f"{who} doubles to {data.get('value')}."
    if kind in ("take", "beaver"):
        return f"{who} {kind}s."
    if kind == "drop":
        return f"{who} passes."
    return ""  # "end": the result is shown in full after the events


_READLINE_LOADED = False


def _readline() -> None:
    """Load :mod:`readline` once, for line editing at a terminal (where it exists)."""
    global _READLINE_LOADED
    if not _READLINE_LOADED:
        _READLINE_LOADED = True
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401


def watch_game(bots: Sequence[Bot], game: Game, names: tuple[str, str]) -> None:
    """Show ``game`` to the human seats among ``bots`` (White, Black; ``names`` likewise)."""
    for bot in bots:
        if isinstance(bot, HumanBot):
            bot.watch(game, names)


def show_result(bots: Sequence[Bot], game: Game) -> None:
    """The end of ``game`` for the human seats among ``bots`` (shown once on one terminal)."""
    for bot in bots:
        if isinstance(bot, HumanBot):
            bot.game_over(game)


def has_human(names: Sequence[str]) -> bool:
    """Whether a person plays one of the seats named (``human`` or ``human:EVALUATOR``)."""
    return any(name.partition(":")[0] == HumanBot.name for name in names)
