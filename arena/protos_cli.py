"""``nardy protos --out DIR``: write the protocol's ``.proto`` files, which ship inside the package.

A bot author who has run nothing but ``pip install nardy[arena]`` gets the exact protocol of the
installed arena, ready for protoc in any language. The files live in the package as
``nardy/arena/protos/<domain>/v1/*.proto`` (setup.py copies them there from ``protos/nardy``; a
source checkout reads ``protos/nardy`` itself) and are written under ``DIR/nardy/...``, the import
paths the files use among themselves, so ``DIR`` is the include root: ``protoc -I DIR ...
nardy/bot/v1/bot.proto``. The well-known types they import (``google/protobuf/duration.proto``,
``timestamp.proto``, ``descriptor.proto``) come with every protoc (and with ``grpcio-tools``).
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import click

__all__ = ["proto_sources", "protos_command", "write_protos"]


def _walk(node: Traversable, prefix: str) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for child in node.iterdir():
        name = f"{prefix}/{child.name}"
        if child.is_dir():
            found.update(_walk(child, name))
        elif child.name.endswith(".proto"):
            found[name] = child.read_bytes()
    return found


def proto_sources() -> dict[str, bytes]:
    """``{import path: content}`` of every shipped proto file, e.g. ``"nardy/bot/v1/bot.proto"``,
    sorted by path. Raises ``FileNotFoundError`` if the installation has none (a broken build)."""
    root: Traversable = resources.files("nardy.arena") / "protos"
    source = Path(__file__).resolve().parent.parent / "protos" / "nardy"
    if not root.is_dir() and source.is_dir():
        root = source  # a source checkout or editable install: the repository's protos/nardy
    if not root.is_dir():
        raise FileNotFoundError("this installation of nardy ships no .proto files")
    found = _walk(root, "nardy")
    if not found:
        raise FileNotFoundError("this installation of nardy ships no .proto files")
    return dict(sorted(found.items()))


def write_protos(out: Path) -> list[Path]:
    """Write every proto file under ``out`` (created if needed; existing files of the same path
    are replaced, nothing else is touched). Returns the paths written."""
    if out.exists() and not out.is_dir():
        raise click.ClickException(f"{out}: exists and is not a directory")
    written = []
    for name, content in proto_sources().items():
        target = out.joinpath(*name.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        written.append(target)
    return written


@click.command("protos")
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory to write into (the include root: files go to OUT/nardy/...).",
)
def protos_command(out: Path) -> None:
    """Write the arena protocol's .proto files, for generating a bot's code in any language.

    \b
    Examples:
      nardy protos --out protos
      mkdir -p gen && protoc -I protos --cpp_out=gen nardy/game/v1/game.proto nardy/bot/v1/bot.proto
      NARDY_PROTOS=protos node examples/bots/js/bot.js     # the JS example reads them at run time

    Python bots need no generated code: nardy.arena.sdk (docs/arena.md, "Writing a bot").
    """
    for path in write_protos(out):
        click.echo(path)
    click.echo(
        f"include root: {out} (the files import google/protobuf/*.proto, which protoc provides)",
        err=True,
    )
