"""``spanscore`` command group: every subcommand module registers its commands here.

Library errors (``SpanscoreError``) become one line on stderr and exit status 2; nothing else is
caught, so a bug still shows its traceback.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from .. import __version__
from ..errors import InputError, SpanscoreError

# Each module defines ``commands``: a list of click commands. Modules of optional features may be
# absent in a trimmed install; a module that exists but fails to import is a bug and raises.
COMMAND_MODULES = ("evaluate", "corpus", "transform", "tagger", "judge", "demo", "review")


class Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SpanscoreError as exc:
            click.echo(f"spanscore: error: {exc}", err=True)
            if isinstance(exc, InputError):
                for line in exc.details[1:]:
                    click.echo(f"  {line}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("spanscore: interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:
            sys.exit(0)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="spanscore")
def cli() -> None:
    """Evaluate named-entity recognition and any span labelling under every criterion."""


for _name in COMMAND_MODULES:
    try:
        _module = importlib.import_module(f"{__package__}.{_name}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"{__package__}.{_name}":
            raise
        continue
    for _command in _module.commands:
        cli.add_command(_command)


def main() -> None:
    cli(prog_name="spanscore")


if __name__ == "__main__":
    main()
