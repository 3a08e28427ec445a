"""mkdocs hooks (mkdocs.yml ``hooks:``): pages that are generated from the code, so they cannot drift.

- ``<!-- cli-reference -->`` becomes the reference of every command and option, read from the
  click commands themselves: usage, description, and a table of options (names, value, default, help).
- ``<!-- spanscore-output: ARGS -->`` becomes what ``spanscore ARGS`` prints, run at build time in
  a folder holding the samples (``spanscore samples``), at 80 columns.
"""

from __future__ import annotations

import inspect
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

OUTPUT = re.compile(r"^<!-- spanscore-output: (.*?) -->$", re.MULTILINE)
WIDTH = 80  # the content column of the site holds 80 columns of code


def on_page_markdown(markdown: str, **_: Any) -> str:
    if "<!-- cli-reference -->" in markdown:
        markdown = markdown.replace("<!-- cli-reference -->", cli_reference())
    if OUTPUT.search(markdown):
        markdown = OUTPUT.sub(lambda m: "```text\n" + run(m.group(1)).rstrip("\n") + "\n```", markdown)
    return markdown


def _commands(group: click.Group, prefix: str) -> list[tuple[str, click.Command]]:
    # The group loads its commands when asked for them (list_commands, get_command).
    ctx = click.Context(group, info_name=prefix)
    out: list[tuple[str, click.Command]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        out.append((f"{prefix} {name}", command))
        if isinstance(command, click.Group):
            out += _commands(command, f"{prefix} {name}")
    return out


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _option_row(param: click.Parameter, ctx: click.Context) -> str:
    assert isinstance(param, click.Option)
    names = ", ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])
    if param.is_flag:
        value = ""
    elif isinstance(param.type, click.Choice):
        value = " \\| ".join(f"`{c}`" for c in param.type.choices)
    else:
        value = f"`{param.make_metavar(ctx)}`"
    default = ""
    if param.show_default and param.default is not None and not param.is_flag:
        default = f"`{param.default}`"
    return f"| {names} | {value} | {default} | {_cell(param.help or '')} |"


def cli_reference() -> str:
    from spanscore.cli.main import cli

    assert isinstance(cli, click.Group)
    parts = []
    if not _commands(cli, "spanscore"):
        raise RuntimeError("no spanscore command was found for the command-line reference")
    for path, command in _commands(cli, "spanscore"):
        ctx = click.Context(command, info_name=path)
        pieces = command.collect_usage_pieces(ctx)
        parts.append(f"## {path}\n")
        parts.append(f"```text\n{path} {' '.join(pieces)}\n```\n")
        if command.help:
            parts.append(inspect.cleandoc(click.unstyle(command.help).split("\f")[0]) + "\n")
        options = [p for p in command.get_params(ctx) if isinstance(p, click.Option) and not p.hidden]
        arguments = [p for p in command.params if isinstance(p, click.Argument)]
        if arguments:
            parts.append("Arguments: " + ", ".join(f"`{a.make_metavar(ctx)}`" for a in arguments) + ".\n")
        if options:
            parts.append("| option | value | default | what it does |\n|---|---|---|---|")
            parts.append("\n".join(_option_row(p, ctx) for p in options) + "\n")
    return "\n".join(parts)


def run(args: str) -> str:
    from spanscore.cli.main import cli
    from spanscore.programs.samples import write_samples

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        write_samples(Path(folder))
        os.chdir(folder)
        try:
            result = CliRunner().invoke(cli, args.split(), terminal_width=WIDTH, env={"COLUMNS": str(WIDTH)})
        finally:
            os.chdir(here)
    if result.exit_code != 0:
        raise RuntimeError(f"spanscore {args} failed while building the docs: {result.output}")
    return result.output
