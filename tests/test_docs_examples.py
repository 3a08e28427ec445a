"""Every console and Python example of README.md and docs/*.md runs as written.

Each page runs in a fresh folder holding the samples (``spanscore samples``: gold.conll,
pred.conll, alt.conll, the JSONL pair, every annotation format, llm.jsonl), its blocks in order,
Python blocks sharing one namespace as in a notebook. A block is a fenced ``console`` block (its
``$`` lines, with ``\\`` continuations), a ``bash`` or ``sh`` block (run as one script), or a
``python`` block. A comment line right above a block says when it cannot run here:

- ``<!-- example: needs MODULE -->``: skipped, with the reason, when MODULE (an optional extra's)
  is not importable;
- ``<!-- example: needs shared -->``: reads ../shared (the real corpora), skipped without it;
- ``<!-- example: skip REASON -->``: never run here (a server that waits for requests, other
  hosts, a benchmark of minutes); the reason is shown.

A block that fails fails the test with the page, the line of the block and what it printed.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from spanscore.programs.samples import write_samples

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w+)?\s*$")
MARK = re.compile(r"^<!--\s*example:\s*(needs|skip)\s+(.*?)\s*-->$")
LANGUAGES = ("console", "bash", "sh", "python")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    text: str
    mark: tuple[str, str] | None


def blocks(page: Path) -> list[Block]:
    out = []
    lines = page.read_text(encoding="utf-8").splitlines()
    k = 0
    while k < len(lines):
        found = FENCE.match(lines[k])
        if found is None:
            k += 1
            continue
        language = found.group(1) or ""
        end = next(j for j in range(k + 1, len(lines)) if lines[j].startswith("```"))
        if language in LANGUAGES:
            above = next((lines[j] for j in range(k - 1, -1, -1) if lines[j].strip()), "")
            mark = MARK.match(above.strip())
            out.append(
                Block(page, k + 1, language, "\n".join(lines[k + 1 : end]), mark.groups() if mark else None)  # type: ignore[arg-type]
            )
        k = end + 1
    return out


def console_script(text: str) -> str:
    """The commands of a console block: its ``$`` lines and their continuations."""
    commands: list[str] = []
    going = False
    for line in text.splitlines():
        if line.startswith("$ "):
            commands.append(line[2:])
            going = line.endswith("\\")
        elif going:
            commands.append(line)
            going = line.endswith("\\")
    return "\n".join(commands)


def _why_not(block: Block) -> str | None:
    if block.mark is None:
        return None
    kind, what = block.mark
    if kind == "skip":
        return what
    if what == "shared":
        return None if SHARED.is_dir() else "needs the shared data in ../shared"
    return None if importlib.util.find_spec(what) is not None else f"needs {what} (an optional extra)"


def _where(block: Block) -> str:
    return f"{block.page.relative_to(ROOT)}:{block.line}"


def run_page(page: Path, folder: Path) -> list[str]:
    """Run every block of ``page`` in ``folder``; the reasons of the blocks left out."""
    write_samples(folder)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["SHARED"] = str(SHARED)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    skipped = []
    here = Path.cwd()
    for block in blocks(page):
        reason = _why_not(block)
        if reason is not None:
            skipped.append(f"{_where(block)}: {reason}")
            continue
        if block.language == "python":
            os.chdir(folder)
            try:
                exec(compile(block.text, _where(block), "exec"), namespace)
            except Exception as exc:
                pytest.fail(f"{_where(block)}: {type(exc).__name__}: {exc}")
            finally:
                os.chdir(here)
            continue
        script = console_script(block.text) if block.language == "console" else block.text
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script], cwd=folder, env=env, capture_output=True, text=True,
            timeout=600,
        )
        if done.returncode != 0:
            said = done.stdout[-2000:] + done.stderr[-2000:]
            pytest.fail(f"{_where(block)}: exit {done.returncode}\n{script}\n{said}")
    return skipped


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_the_examples_of_a_page_run(page: Path, tmp_path: Path) -> None:
    skipped = run_page(page, tmp_path / "run")
    if skipped and len(skipped) == len(blocks(page)):
        pytest.skip("; ".join(skipped))


def test_every_page_with_examples_is_checked() -> None:
    assert len(PAGES) >= 10
    assert sum(len(blocks(p)) for p in PAGES) >= 30
