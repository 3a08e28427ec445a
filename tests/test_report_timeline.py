"""bench/report_timeline.py wraps the functions a report run passes through by name: a rename in
the library would silently drop a span from the timeline, so one small run must show each."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench" / "report_timeline.py"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/stat and CLOCK_BOOTTIME")
def test_a_report_run_shows_every_stage_in_every_process(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    gold, pred = tmp_path / "gold.conll", tmp_path / "pred.conll"
    # 200 sentences in parts of a few sentences: enough parts for a worker process to be forked.
    gold.write_text("".join(f"w{k} B-PER\nx I-PER\ny O\nz B-LOC\n\n" for k in range(200)), encoding="utf-8")
    pred.write_text("".join(f"w{k} B-PER\nx O\ny O\nz B-ORG\n\n" for k in range(200)), encoding="utf-8")
    command = [sys.executable, str(BENCH), "--out", str(tmp_path / "t.tsv"), "--"]
    args = ["evaluate", str(gold), str(pred), "--report", str(tmp_path / "report"), "--jobs", "2"]
    done = subprocess.run([*command, *args, "--chunk-size", "200"], env=env, capture_output=True, text=True, check=True)
    text = done.stdout
    for name in (
        "the library's evaluate", "read and count a part", "make rows", "fold a part", "report writer takes a part",
        "writing thread", "finish the folder", "report.html", "the tables (rich)", "import numpy", "exit",
    ):  # fmt: skip
        assert name in text, name
    assert any(line.startswith("worker ") for line in text.splitlines()), "no span of a worker process"
    assert (tmp_path / "report" / "report.html").is_file()
