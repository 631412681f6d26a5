"""``nardy``'s commands join it one way: a line of ``nardy.cli.COMMANDS`` (docs/architecture.md,
"Adding a command"); each loads when used, and the shared options read the same everywhere."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from rich.console import Console

from nardy.cli import COMMANDS, cli
from nardy.cli_options import TableGroup, progress_bar


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


def test_the_progress_bar_is_drawn_on_a_terminal_only_and_unless_quiet() -> None:
    """``nardy play``, ``analyze``, ``rollout`` and ``train`` draw one bar (``progress_bar``): on
    a terminal unless quiet, never into a pipe or a log; the times a command asks for follow the
    count; it is gone once done unless the command keeps it (train's phases)."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

    terminal = Console(file=io.StringIO(), force_terminal=True)
    piped = Console(file=io.StringIO(), force_terminal=False)
    kept = progress_bar(terminal, False, TimeRemainingColumn(), transient=False)
    assert not kept.disable and not kept.live.transient
    kinds = [TextColumn, BarColumn, MofNCompleteColumn, TimeRemainingColumn]
    assert [type(column) for column in kept.columns] == kinds
    assert progress_bar(terminal, False).live.transient
    assert progress_bar(terminal, True).disable
    assert progress_bar(piped, False).disable


def test_an_operator_call_waits_for_the_arena_and_carries_the_token_only_where_asked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``nardy arena bots|register|create|list|cancel|games|standings`` make their unary calls one
    way (``_Remote.unary``): waiting for an arena that is starting (``wait_for_ready``, up to the
    call's timeout), with the admin token on the operator's calls only; a failure is one line."""
    import grpc

    from nardy.arena.operator_cli import _Remote
    from nardy.arena.service.auth import ADMIN_TOKEN_ENV

    monkeypatch.setenv(ADMIN_TOKEN_ENV, "secret")
    remote = _Remote("127.0.0.1:1", tmp_path / "absent.token")
    calls: list[tuple[str, dict[str, object]]] = []

    def rpc(request: str, **settings: object) -> str:
        calls.append((request, settings))
        return f"answer to {request}"

    assert remote.unary(rpc, "create", timeout=60, admin=True) == "answer to create"
    assert remote.unary(rpc, "list", timeout=30) == "answer to list"
    token = (("authorization", "Bearer secret"),)
    assert calls == [
        ("create", {"timeout": 60, "wait_for_ready": True, "metadata": token}),
        ("list", {"timeout": 30, "wait_for_ready": True, "metadata": None}),
    ]

    class Late(grpc.RpcError):
        def code(self) -> grpc.StatusCode:
            return grpc.StatusCode.DEADLINE_EXCEEDED

        def details(self) -> str:
            return "Deadline Exceeded"

    def late(request: str, **settings: object) -> str:
        raise Late()

    with pytest.raises(click.ClickException) as failure:
        remote.unary(late, "list", timeout=30)
    assert failure.value.message == (
        "DEADLINE_EXCEEDED: no answer from an arena at 127.0.0.1:1 (Deadline Exceeded)"
    )
