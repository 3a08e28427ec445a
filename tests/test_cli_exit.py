"""The ``spanscore`` program ends without the interpreter's teardown only where nothing waits for it.

``run()`` (the console script, and ``python -m spanscore.cli.main``) skips Python's teardown after a
command when no exit handler is registered and no thread is left to join. Each test runs the
program in its own process and checks what a user sees: the whole output, the exit status, the
files written, and that handlers and threads registered by the process still run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from spanscore.cli.main import cli

GOLD = "John\tB-PER\nSmith\tI-PER\nvisited\tO\nNew\tB-LOC\nYork\tI-LOC\n.\tO\n\nShe\tO\nleft\tO\n\n"
PRED = "John\tB-PER\nSmith\tO\nvisited\tO\nNew\tB-LOC\nYork\tI-LOC\n.\tO\n\nShe\tB-PER\nleft\tO\n\n"
INVALID = "John\tI-PER\nSmith\tI-PER\n\n"  # I- without B-: an invalid BIO transition

# os._exit wrapped so that the test sees whether the quick end was taken (it prints to stderr,
# after stdout has been flushed by run()).
PROGRAM = (
    "import os, sys\n"
    "_exit = os._exit\n"
    "def marked(code):\n"
    "    sys.stderr.write('[quick exit]\\n'); sys.stderr.flush(); _exit(code)\n"
    "os._exit = marked\n"
    "{setup}\n"
    "from spanscore.cli.main import run\n"
    "sys.argv[0] = 'spanscore'\n"
    "run()\n"
)


def program(*args: str, setup: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM.format(setup=setup), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80"},
    )


@pytest.fixture()
def pair(tmp_path: Path) -> tuple[str, str]:
    gold, pred = tmp_path / "gold.conll", tmp_path / "pred.conll"
    gold.write_text(GOLD, encoding="utf-8")
    pred.write_text(PRED, encoding="utf-8")
    return str(gold), str(pred)


def test_a_plain_evaluate_ends_quickly_with_its_whole_output(pair: tuple[str, str]) -> None:
    proc = program("evaluate", *pair, "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "[quick exit]\n"
    expected = CliRunner().invoke(cli, ["evaluate", *pair, "--json"])
    assert expected.exit_code == 0
    assert json.loads(proc.stdout) == json.loads(expected.output)
    assert proc.stdout == expected.output


def test_a_large_output_is_complete(tmp_path: Path) -> None:
    # More than a pipe's buffer: everything is written before the process ends.
    gold, pred = tmp_path / "gold.conll", tmp_path / "pred.conll"
    gold.write_text(GOLD * 3000, encoding="utf-8")
    pred.write_text(PRED * 3000, encoding="utf-8")
    proc = program("evaluate", str(gold), str(pred), "--json", "--jobs", "2", "--chunk-size", "4096")
    assert proc.returncode == 0, proc.stderr
    assert "[quick exit]" in proc.stderr
    expected = CliRunner().invoke(cli, ["evaluate", str(gold), str(pred), "--json", "--jobs", "1"])
    assert proc.stdout == expected.output


def test_files_written_are_complete(pair: tuple[str, str], tmp_path: Path) -> None:
    report, per_document = tmp_path / "report", tmp_path / "documents.csv"
    args = ["evaluate", *pair, "--report", str(report), "--per-document", str(per_document)]
    proc = program(*args)
    assert proc.returncode == 0, proc.stderr
    written = {p.relative_to(report): p.read_bytes() for p in sorted(report.rglob("*")) if p.is_file()}
    again = tmp_path / "again"
    expected = CliRunner().invoke(
        cli, ["evaluate", *pair, "--report", str(again), "--per-document", str(tmp_path / "d2.csv")]
    )
    assert expected.exit_code == 0, expected.output
    assert written.keys() == {p.relative_to(again) for p in again.rglob("*") if p.is_file()}
    assert written
    assert per_document.read_bytes() == (tmp_path / "d2.csv").read_bytes()
    assert not [p for p in tmp_path.rglob(".*") if p.is_file()]  # no temporary file left behind


def test_statuses_are_kept(pair: tuple[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.conll"
    bad.write_text(INVALID, encoding="utf-8")
    proc = program("validate", str(bad))
    assert proc.returncode == 1
    assert "[quick exit]" in proc.stderr
    expected = CliRunner().invoke(cli, ["validate", str(bad)])
    assert expected.exit_code == 1
    assert proc.stdout == expected.stdout

    proc = program("evaluate", pair[0], str(tmp_path / "missing.conll"))
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line != "[quick exit]"]
    assert len(errors) == 1 and errors[0].startswith("spanscore: error:") and "missing.conll" in errors[0]
    assert proc.stdout == ""

    proc = program("evaluate", "--no-such-option")
    assert proc.returncode == 2
    assert [line for line in proc.stderr.splitlines() if line.startswith("spanscore: error:")]
    assert "Traceback" not in proc.stderr

    for args in (["--version"], ["--help"], []):
        proc = program(*args)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout


def test_exit_handlers_and_threads_of_the_process_still_run(pair: tuple[str, str], tmp_path: Path) -> None:
    proc = program("evaluate", *pair, "--json", setup="import atexit; atexit.register(print, 'handler ran')")
    assert proc.returncode == 0
    assert proc.stdout.rstrip().endswith("handler ran")
    assert "[quick exit]" not in proc.stderr

    marker = tmp_path / "thread.txt"
    setup = (
        "import threading, time\n"
        # Writes once the main thread has ended: only an exit that joins it lets it.
        "def late():\n    while threading.main_thread().is_alive():\n        time.sleep(0.01)\n"
        f"    open({str(marker)!r}, 'w').write('done')\n"
        "threading.Thread(target=late).start()"
    )
    proc = program("evaluate", *pair, "--json", setup=setup)
    assert proc.returncode == 0
    assert marker.read_text() == "done"
    assert "[quick exit]" not in proc.stderr


def test_main_itself_raises_system_exit(pair: tuple[str, str]) -> None:
    # Programs and tests that call main() go on after it: it never ends the process itself.
    code = (
        "import sys\nfrom spanscore.cli.main import main\n"
        f"sys.argv = ['spanscore', 'evaluate', {pair[0]!r}, {pair[1]!r}, '--json']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    print('status', exc.code)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("status 0")


def test_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    gold, pred = tmp_path / "gold.conll", tmp_path / "pred.conll"
    gold.write_text(GOLD * 3000, encoding="utf-8")
    pred.write_text(PRED * 3000, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "spanscore.cli.main", "evaluate", str(gold), str(pred), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait() == 0
    assert err == ""


def test_python_dash_i_still_gets_its_prompt(pair: tuple[str, str]) -> None:
    code = PROGRAM.format(setup="")
    proc = subprocess.run(
        [sys.executable, "-i", "-c", code, "evaluate", *pair, "--json"],
        input="print('prompt ' + 'reached')\n",
        capture_output=True,
        text=True,
    )
    assert "prompt reached" in proc.stdout
    assert "[quick exit]" not in proc.stderr
