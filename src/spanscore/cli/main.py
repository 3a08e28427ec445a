"""``spanscore`` command group: subcommand modules are imported when their command runs.

Library errors (``SpanscoreError``) and errors writing an output (a full disk, a read-only
folder) become one line on stderr and exit status 2; nothing else is caught, so a bug still shows
its traceback.
"""

from __future__ import annotations

import atexit
import errno
import importlib
import os
import sys
import threading
from typing import Any, NoReturn

import click

from .. import __version__
from ..errors import InputError, SpanscoreError
from ..runtime.memory import keep_freed_memory

# Command name -> the module that defines it (in its ``commands`` list). Modules are imported when
# their command runs, so that ``spanscore evaluate`` does not pay for the tagger's or the judge's
# imports. Modules of optional features may be absent in a trimmed install.
COMMANDS = {
    "evaluate": "evaluate",
    "compare": "compare",
    "summarize": "corpus",
    "validate": "corpus",
    "repair": "corpus",
    "convert": "corpus",
    "transform": "transform",
    "train": "tagger",
    "predict": "tagger",
    "judge": "judge",
    "review": "review",
    "demo": "demo",
    "samples": "samples",
}

# Each command's one-line summary, so that ``spanscore --help`` lists the commands without importing
# their modules (and numpy with them). tests/test_cli_help.py checks that each equals the summary
# click derives from the command itself, so the two cannot drift apart.
SUMMARIES = {
    "compare": "Systems against one reference: intervals and paired significance tests.",
    "convert": "Between label encodings, JSONL and annotation formats.",
    "demo": "The paper's experiment: train, tag, score, report.",
    "evaluate": "Score a prediction under every criterion.",
    "judge": "Learned judges of right-label/overlapping (Type-5) mismatches.",
    "predict": "Tag a file with a trained tagger.",
    "repair": "Write FILE with its invalid transitions repaired.",
    "review": "Human review of partial matches.",
    "samples": "Write sample files to try every command on.",
    "summarize": "Documents, sentences, tokens and mentions per type.",
    "train": "Train a CRF or Flair tagger.",
    "transform": "Rewrite labels: merge at @-mentions, filter, map types.",
    "validate": "List every invalid label transition (exit 1 if there is any).",
}


def _load(module_name: str) -> dict[str, click.Command]:
    try:
        module = importlib.import_module(f"{__package__}.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.{module_name}":
            raise  # a module that exists but fails to import is a bug
        return {}
    return {c.name: c for c in module.commands if c.name}


class Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click would load every command to ask for its summary; the summaries are kept here.
        rows = [(name, SUMMARIES[name]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module_name = COMMANDS.get(cmd_name)
        return None if module_name is None else _load(module_name).get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # here, so that a full disk is reported like any other error
            return result
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
            _quiet_stdout()
            sys.exit(0)
        except OSError as exc:
            if exc.errno not in WRITE_ERRORS:
                raise
            where = f" {exc.filename}" if exc.filename else " the output"
            click.echo(f"spanscore: error: cannot write{where}: {exc.strerror}", err=True)
            _quiet_stdout()
            sys.exit(2)


# Errors of writing an output (a full or read-only disk, a file we may not write): the user's to fix.
WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, errno.EIO}


def _quiet_stdout() -> None:
    """Drop what stdout still holds, so that closing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="spanscore")
def cli() -> None:
    """Evaluate named-entity recognition and any span labelling under every criterion."""


def main() -> None:
    # This process is ours to set up, before numpy loads. No command does linear algebra that
    # needs BLAS threads (the judge's classifier trains on a few thousand sparse rows); numpy's
    # OpenBLAS would start one per core at import (0.1 s of CPU here) that compete with the worker
    # processes for the cores. torch (the flair and transformer extras) has threads of its own.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    keep_freed_memory()  # see spanscore.runtime.memory
    try:
        code = cli.main(prog_name="spanscore", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:  # ``spanscore`` alone: its help
        click.echo(exc.format_message())
        sys.exit(0)
    except click.UsageError as exc:
        # One line, as every other bad input: click's own usage block is three.
        where = exc.ctx.command_path if exc.ctx is not None else "spanscore"
        click.echo(f"spanscore: error: {exc.format_message()} (see '{where} --help')", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"spanscore: error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("spanscore: interrupted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


def run() -> NoReturn:
    """The ``spanscore`` program (the console script): ``main()``, then a quick end where nothing waits.

    Once a command has finished and its output is flushed, tearing the interpreter down (freeing
    every module, numpy's included) costs about 0.03 s of CPU and does nothing a user can see. It
    is skipped only where nothing is registered to run at exit (``atexit``: logging's flush,
    multiprocessing's children, ``weakref.finalize`` of temporary folders, ...) and no thread but
    this one is still to be joined; otherwise, and for an exit status Python would print, the
    exit is the ordinary one. Never from ``main()`` itself: tests and programs that call it go on.
    """
    try:
        main()
    except SystemExit as exc:
        code = exc.code
        if code is None:
            code = 0
        if not isinstance(code, int) or not _nothing_pending():
            raise
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            raise exc from None  # Python's own exit reports it, as it always has
        os._exit(code)
    raise AssertionError("main() returns only by SystemExit")  # pragma: no cover


def _nothing_pending() -> bool:
    """Whether an exit may skip the interpreter's teardown: no exit handler, no thread to join."""
    if atexit._ncallbacks() != 0 or sys.flags.inspect or os.environ.get("PYTHONINSPECT"):
        return False  # with ``python -i`` the prompt comes after the command
    main_thread = threading.main_thread()
    return all(t is main_thread or t.daemon or not t.is_alive() for t in threading.enumerate())


if __name__ == "__main__":
    run()
