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

    assert ",".join(FlairConfig.embeddings) == tagger.FLAIR_EMBEDDINGS
    assert demo.DEFAULT_OUT == demo_program.DEFAULT_OUT


def test_encoding_names_are_re_exported() -> None:
    """The encodings' rules moved to stages.schemes (no numpy); stages.encoding still names them."""
    from spanscore.stages import encoding, schemes

    for name in ("ALIASES", "ENCODINGS", "REPAIRS", "EncodingSpec", "check_repair", "get_encoding", "B", "I"):
        assert getattr(encoding, name) is getattr(schemes, name), name


# What a plain ``spanscore evaluate GOLD PRED --json`` on CoNLL files imports: the readers of CoNLL,
# the counting stages, the engine, the face and the report. The analyses (intervals, groups,
# buckets and the mention attributes they read), comparison, the presentation, the JSONL and
# annotation-format readers and the strings locator load only where a run asks for them. A module
# added here must be one a plain count runs.
PLAIN_EVALUATE = {
    "spanscore",
    "spanscore.api",
    "spanscore.cli",
    "spanscore.cli.evaluate",
    "spanscore.cli.main",
    "spanscore.cli.options",
    "spanscore.engines",
    "spanscore.engines.local",
    "spanscore.errors",
    "spanscore.io",
    "spanscore.io.conll",
    "spanscore.io.conll_plan",
    "spanscore.io.files",
    "spanscore.io.load",
    "spanscore.io.reading",
    "spanscore.io.sources",
    "spanscore.report",
    "spanscore.results",
    "spanscore.runtime",
    "spanscore.runtime.memory",
    "spanscore.runtime.records",
    "spanscore.runtime.workers",
    "spanscore.stages",
    "spanscore.stages.counts",
    "spanscore.stages.criteria",
    "spanscore.stages.documents",
    "spanscore.stages.encoding",
    "spanscore.stages.matching",
    "spanscore.stages.pairs",
    "spanscore.stages.parts",
    "spanscore.stages.schemes",
    "spanscore.stages.scores",
    "spanscore.stages.scoring",
    "spanscore.stages.spans",
    "spanscore.stages.text",
}
# Third-party and standard modules a plain count has no use for (numpy.random: only resampling).
NOT_LOADED = ("rich", "pandas", "matplotlib", "torch", "sklearn", "dask", "numpy.random", "difflib", "tempfile")

EVALUATE_PROBE = """
import json, sys
from spanscore.cli.main import cli
try:
    cli(args=sys.argv[1:], prog_name="spanscore")
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _loaded(*args: str) -> tuple[set[str], str]:
    done = subprocess.run([sys.executable, "-c", EVALUATE_PROBE, *args], capture_output=True, text=True, check=True)
    import json

    return set(json.loads(done.stderr.strip().splitlines()[-1])), done.stdout


def test_plain_evaluate_json_imports_only_what_it_runs() -> None:
    import json

    modules, out = _loaded("evaluate", str(DATA / "small.gold.conll"), str(DATA / "small.pred.conll"), "--json")
    assert json.loads(out)["metrics"]["strict"]["f1"] is not None
    ours = {m for m in modules if m == "spanscore" or m.startswith("spanscore.")}
    assert ours == PLAIN_EVALUATE, (sorted(ours - PLAIN_EVALUATE), sorted(PLAIN_EVALUATE - ours))
    heavy = [m for m in NOT_LOADED if m in modules]
    assert not heavy, heavy


def test_analyses_load_where_a_run_asks_for_them() -> None:
    """The other side of the pin: --ci loads the resampling, and its numbers are there."""
    import json

    gold, pred = str(DATA / "small.gold.conll"), str(DATA / "small.pred.conll")
    modules, out = _loaded("evaluate", gold, pred, "--json", "--ci", "0.9", "--resamples", "20")
    assert "spanscore.analysis.significance" in modules
    assert "intervals" in json.loads(out)
