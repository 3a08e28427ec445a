"""Usage errors (an option out of range, an unknown option or command, a missing argument) are
one line naming what was wrong and where help is, exit status 2, as every other bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest

CASES = [
    (["evaluate", "g.conll", "p.conll", "--jobs", "-1"], "'--jobs'"),
    (["evaluate", "g.conll", "p.conll", "--chunk-size", "0"], "'--chunk-size'"),
    (["evaluate", "g.conll", "p.conll", "--bogus"], "--bogus"),
    (["evaluate"], "GOLD"),
    (["compare", "g.conll"], "SYSTEMS"),
    (["nope"], "nope"),
    (["judge", "nope"], "nope"),
]


@pytest.mark.parametrize(("args", "needle"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_usage_errors_are_one_line(args: list[str], needle: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from spanscore.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("spanscore: error: ") and needle in lines[0] and "--help" in lines[0]
    assert done.stdout == ""


def test_help_and_version_still_exit_0() -> None:
    for args in ([], ["--help"], ["--version"], ["evaluate", "--help"]):
        done = subprocess.run(
            [sys.executable, "-c", "from spanscore.cli.main import main; main()", *args], capture_output=True, text=True
        )
        assert done.returncode == 0 and done.stdout and not done.stderr
