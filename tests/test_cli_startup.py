"""Start-up: every command's --help answers without numpy, and a plain ``evaluate --json`` imports
only the stages it runs (``bench/startup_bench.py`` times both)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

from spanscore.cli.main import cli

DATA = Path(__file__).parent / "data"

# Every command path, found in the child (the parent has loaded them all already).
HELP_PROBE = """
import sys
import click
from spanscore.cli.main import cli

def paths(group, ctx, prefix):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield [*prefix, name]
        if isinstance(command, click.Group):
            yield from paths(command, ctx, [*prefix, name])

ctx = click.Context(cli)
heavy = ("numpy", "rich", "pandas", "torch", "sklearn", "spanscore.api", "spanscore.programs.tagger")
for path in [[], *paths(cli, ctx, [])]:
    try:
        cli(args=[*path, "--help"], prog_name="spanscore")
    except SystemExit:
        pass
    loaded = [m for m in heavy if m in sys.modules]
    print("LOADED", " ".join(path) or "(root)", loaded, file=sys.stderr)
"""


def test_every_command_help_loads_no_numpy() -> None:
    """Commands are found as click finds them (each module loaded), and then each --help: none
    may load numpy, rich, the face or a tagger."""
    done = subprocess.run([sys.executable, "-c", HELP_PROBE], capture_output=True, text=True, check=True)
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("LOADED ")]
    ctx = click.Context(cli)
    assert len(lines) > len(cli.list_commands(ctx)) + 1, done.stderr  # the root, each command, the subcommands
    assert any(ln.startswith("LOADED judge train ") for ln in lines), lines
    loading = [ln for ln in lines if not ln.endswith(" []")]
    assert not loading, loading


def test_names_given_to_help_are_the_library_defaults() -> None:
    """Defaults written into the command line (so that its --help loads nothing) are the library's."""
    from spanscore.cli import demo, tagger
    from spanscore.programs import demo as demo_program
    from spanscore.programs.tagger import FlairConfig

    assert tagger.FLAIR_EMBEDDINGS == ",".join(FlairConfig.embeddings)
    assert demo.DEFAULT_OUT == demo_program.DEFAULT_OUT


def test_encoding_names_are_re_exported() -> None:
    """The encodings' rules moved to stages.schemes (no numpy); stages.encoding still names them."""
    from spanscore.stages import encoding, schemes

    for name in ("ALIASES", "ENCODINGS", "REPAIRS", "EncodingSpec", "check_repair", "get_encoding", "B", "I"):
        assert getattr(encoding, name) is getattr(schemes, name), name
