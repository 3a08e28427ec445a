"""Help a newcomer can read: every command summary whole at 80 columns, every option explained."""

from __future__ import annotations

import click
from click.testing import CliRunner

from spanscore.cli.main import cli


def _commands(group: click.Group, ctx: click.Context, prefix: str = "spanscore") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        out.append((f"{prefix} {name}", command))
        if isinstance(command, click.Group):
            out += _commands(command, ctx, f"{prefix} {name}")
    return out


def test_command_summaries_are_whole_at_80_columns() -> None:
    out = CliRunner().invoke(cli, ["--help"], terminal_width=80, env={"COLUMNS": "80"})
    assert out.exit_code == 0
    listing = out.output.split("Commands:", 1)[1]
    assert "..." not in listing, listing


def test_every_option_of_every_command_has_help() -> None:
    ctx = click.Context(cli)
    missing = [
        f"{path} {'/'.join(p.opts)}"
        for path, command in _commands(cli, ctx)
        for p in command.params
        if isinstance(p, click.Option) and not p.help and p.name != "help"
    ]
    assert not missing, missing
