"""Variant options: their declarations, their shared definitions (RULES.md §4) and their parsing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nardy.core.errors import InvalidOptionError


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One option of a variant: its name, default, allowed values and a one-line help."""

    name: str
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    """Allowed values; empty = any value of the default's type (``int`` options may also be None)."""
    kind: type = str

    def coerce(self, value: Any) -> Any:
        """Convert a value (possibly text from the command line) to the option's type, or raise."""
        if isinstance(value, str):
            value = _from_text(value, self.kind)
        if value is None and self.default is None:
            return None
        if self.kind is bool and not isinstance(value, bool):
            raise InvalidOptionError(f"option {self.name} takes true or false, not {value!r}")
        if self.kind is int and (
            not isinstance(value, int) or isinstance(value, bool) or value < 1
        ):
            raise InvalidOptionError(f"option {self.name} takes a positive integer, not {value!r}")
        if self.choices and value not in self.choices:
            allowed = " | ".join(str(c) for c in self.choices)
            raise InvalidOptionError(f"option {self.name} must be one of {allowed}, not {value!r}")
        return value


def _from_text(text: str, kind: type) -> Any:
    lowered = text.strip().lower()
    if lowered in ("null", "none", ""):
        return None
    if kind is bool:
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        return text
    if kind is int:
        return int(lowered) if lowered.lstrip("-").isdigit() else text
    return text


def resolve_options(
    variant: str, specs: Sequence[OptionSpec], given: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The full option mapping of a variant: defaults, overridden by ``given`` (validated)."""
    by_name = {spec.name: spec for spec in specs}
    resolved = {spec.name: spec.default for spec in specs}
    for name, value in (given or {}).items():
        spec = by_name.get(name)
        if spec is None:
            known = ", ".join(sorted(by_name)) or "none"
            raise InvalidOptionError(f"variant {variant} has no option {name!r} (options: {known})")
        resolved[name] = spec.coerce(value)
    return resolved


def parse_option_assignments(items: Sequence[str]) -> dict[str, str]:
    """``["a=b", "c=d"]`` (command line) → ``{"a": "b", "c": "d"}``."""
    parsed: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise InvalidOptionError(f"option {item!r} must be written name=value")
        parsed[name.strip()] = value.strip()
    return parsed


# -- the options of RULES.md §4, shared by the variants that have them ---------------------------------

MATCH_LENGTH = OptionSpec(
    "match_length", None, "play a match to this many points (default: money play)", kind=int
)
CUBE = OptionSpec("cube", False, "use the doubling cube (RULES.md §2.12)", kind=bool)
CUBE_ON = OptionSpec("cube", True, "use the doubling cube (RULES.md §2.12)", kind=bool)
JACOBY = OptionSpec(
    "jacoby", False, "money play: gammons count single unless the cube was turned", kind=bool
)
BEAVERS = OptionSpec("beavers", False, "money play: a doubled player may beaver", kind=bool)
AUTO_DOUBLES = OptionSpec(
    "auto_doubles", False, "money play: opening-throw ties double the cube", kind=bool
)
AUTO_DOUBLES_LIMIT = OptionSpec(
    "auto_doubles_limit", 1, "most automatic doubles per game", kind=int
)
MAX_CUBE = OptionSpec("max_cube", None, "highest cube value (default: unbounded)", kind=int)
FIRST_TURN_HEAD = OptionSpec(
    "first_turn_head",
    "principle",
    "when a second checker may leave the head on the first turn (RULES.md §3.3.4)",
    choices=("principle", "fixed", "head_only"),
)
SCORING = OptionSpec(
    "scoring",
    "standard",
    "oin/mars/koks, or the loser pays per checker",
    choices=("standard", "per_checker"),
)
KOKS = OptionSpec(
    "koks", True, "a mars with a checker in the loser's start quarter scores 3", kind=bool
)
OPENING = OptionSpec(
    "opening",
    "winner_rolls",
    "who starts: the opening-throw winner rolls, or plays the two thrown numbers",
    choices=("winner_rolls", "backgammon_style"),
)
HOME_MOVES = OptionSpec(
    "home_moves",
    "until_all_home",
    "steps inside home: legal until all are home, never, or always (RULES.md §3.5)",
    choices=("until_all_home", "never", "always"),
)
QUARTER_TIMING = OptionSpec(
    "quarter_timing",
    "turn_end",
    "when Fevga's quarter rule is checked: at the end of each segment or after every step",
    choices=("turn_end", "every_step"),
)

CUBE_OPTIONS = (JACOBY, BEAVERS, AUTO_DOUBLES, AUTO_DOUBLES_LIMIT, MAX_CUBE)
