"""A worker process that dies (killed, out of memory) is one line and exit status 2, not a traceback.

The worker really dies: it is forked and ends itself with ``os._exit`` as it starts, before it
sends back any result, which is what the kernel's out-of-memory killer does to it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from spanscore.errors import SpanscoreError
from spanscore.runtime.workers import WorkerDied, forked_map

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes are forked")

SENTENCE = "John\tB-PER\nSmith\tI-PER\nvisited\tO\nNew\tB-LOC\nYork\tI-LOC\n.\tO\n\n"

# The program run by the test: the same console entry point, with the workers' start replaced by
# one that ends the forked process at once (the parent keeps the real one: it counts too).
PROGRAM = (
    "import os, sys\n"
    "import spanscore.engines.local as local\n"
    "parent = os.getpid()\n"
    "real = local.start_worker\n"
    "def dying(*a, **k):\n"
    "    if os.getpid() != parent:\n"
    "        os._exit(9)\n"
    "    return real(*a, **k)\n"
    "local.start_worker = dying\n"
    "from spanscore.cli.main import run\n"
    "sys.argv[0] = 'spanscore'\n"
    "run()\n"
)


def _die(x: int) -> int:
    os._exit(9)


def test_worker_died_is_a_spanscore_error_and_still_a_runtime_error() -> None:
    with pytest.raises(WorkerDied) as info:
        list(forked_map(_die, range(4), 2))
    assert isinstance(info.value, SpanscoreError)
    assert isinstance(info.value, RuntimeError)
    assert "--jobs 1" in str(info.value)


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_a_dead_worker_is_one_line_and_exit_status_2(tmp_path: Path, command: str) -> None:
    gold = tmp_path / "gold.conll"
    pred = tmp_path / "pred.conll"
    gold.write_text(SENTENCE * 100000)
    pred.write_text(SENTENCE * 100000)
    files = [str(gold), str(pred)]
    if command == "compare":
        alt = tmp_path / "alt.conll"
        alt.write_text(SENTENCE.replace("I-PER", "O") * 100000)
        files.append(str(alt))
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM, command, *files, "--json", "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("spanscore: error: a worker process (pid ")
    assert "run it again, or with --jobs 1" in lines[0]
    assert proc.stdout == ""
