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


def test_root_summaries_are_the_commands_own() -> None:
    """The root help lists summaries kept beside the command table: each must be the command's own."""
    from spanscore.cli.main import COMMANDS, SUMMARIES

    ctx = click.Context(cli)
    assert set(SUMMARIES) == set(COMMANDS)
    for name, summary in SUMMARIES.items():
        command = cli.get_command(ctx, name)
        assert command is not None
        assert command.get_short_help_str(limit=200) == summary, name


def test_root_help_and_version_load_no_command_and_no_numpy() -> None:
    """``spanscore --help`` and ``--version`` answer before numpy or any reader is imported."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from spanscore.cli.main import cli\n"
        "try:\n"
        "    cli(args=[sys.argv[1]], prog_name='spanscore')\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = sorted(m for m in sys.modules if m == 'numpy' or m.startswith(('spanscore.io', 'spanscore.stages',"
        " 'spanscore.cli.', 'rich')) and m != 'spanscore.cli.main')\n"
        "print('LOADED', loaded, file=sys.stderr)\n"
    )
    for flag in ("--help", "--version"):
        done = subprocess.run([sys.executable, "-c", probe, flag], capture_output=True, text=True, check=True)
        assert "LOADED []" in done.stderr, (flag, done.stderr)
