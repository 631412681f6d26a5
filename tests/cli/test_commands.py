"""``nardy``'s commands join it one way: a line of ``nardy.cli.COMMANDS`` (docs/architecture.md,
"Adding a command"); each loads when used, and the shared options read the same everywhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from nardy.cli import COMMANDS, cli
from nardy.cli_options import TableGroup


@pytest.mark.parametrize("group", ["nardy", "arena", "bot"])
def test_every_command_comes_from_the_table_and_is_named_as_its_line(group: str) -> None:
    from nardy.arena.cli import arena_group, bot_group

    command_group = {"nardy": cli, "arena": arena_group, "bot": bot_group}[group]
    assert isinstance(command_group, TableGroup)
    assert command_group.commands == {}  # nothing attached by a decorator or add_command
    context = click.Context(command_group)
    for name in command_group.table:
        command = command_group.get_command(context, name)
        assert isinstance(command, click.Command), name
        assert command.name == name
    assert command_group.list_commands(context) == sorted(command_group.table)
    if group == "nardy":
        assert command_group.table is COMMANDS


def test_a_command_loads_only_its_own_module() -> None:
    """``nardy variants`` imports none of the other commands' modules (nor numpy)."""
    code = (
        "import sys\nfrom nardy.cli import main\ntry:\n    main(['variants', '--json'])\n"
        "except SystemExit:\n    pass\n"
        "others = [m.partition(':')[0] for n, m in __import__('nardy.cli').cli.COMMANDS.items()]\n"
        "print(sorted({m for m in others if m in sys.modules}), 'numpy' in sys.modules, "
        "file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "['nardy.cli'] False"


@pytest.mark.parametrize(
    "command",
    [
        ["analyze", "RECORD"],
        ["arena", "run", "--variant", "long", "--bots", "random,heuristic", "--db", "DB"],
    ],
)
def test_the_shared_ray_address_rule_reads_the_same_in_every_command(
    command: list[str], tmp_path: Path
) -> None:
    record = tmp_path / "games.jsonl"
    record.write_text("")
    files = {"RECORD": str(record), "DB": str(tmp_path / "arena.db")}
    args = [files.get(a, a) for a in command]
    result = CliRunner().invoke(cli, [*args, "--ray-address", "head:6379"])
    assert result.exit_code == 2, result.output
    assert "--ray-address goes with --executor ray" in result.output
