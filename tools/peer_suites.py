#!/usr/bin/env python3
"""Run seqeval's and nervaluate's own test suites against spanscore's drop-ins.

    python tools/peer_suites.py [seqeval] [nervaluate] [--cache DIR] [-- PYTEST ARGS...]

Each peer's source distribution is downloaded once (``pip download --no-deps --no-binary :all:``)
into the cache folder, its tests are copied to a work folder, and only their import lines are
rewritten (``from seqeval.X import ...`` -> ``from spanscore.compat.seqeval.X import ...``, the
same for nervaluate); nothing else in the tests changes. Then pytest runs them in that folder (the
tests open their data and conlleval.pl relative to it). The exit status is pytest's.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

PEERS = {"seqeval": "1.2.2", "nervaluate": "1.2.1"}
ROOT = Path(__file__).resolve().parent.parent
IMPORT = re.compile(r"^(\s*)(from|import)(\s+)(seqeval|nervaluate)\b")


def sdist(name: str, cache: Path) -> Path:
    """The unpacked source distribution of the pinned version (downloaded once)."""
    version = PEERS[name]
    folder = cache / f"{name}-{version}"
    if (folder / "tests").is_dir():
        return folder
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"{name}-{version}.tar.gz"
    if not archive.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(cache),
             f"{name}=={version}"],
            check=True,
        )
    with tarfile.open(archive) as tar:
        tar.extractall(cache, filter="data")
    return folder


def rewrite(line: str) -> str:
    """One import line pointed at the drop-in; any other line as it is."""
    return IMPORT.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}spanscore.compat.{m.group(4)}", line)


def prepare(name: str, cache: Path, work: Path) -> tuple[Path, int]:
    """The peer's tests in ``work`` with their imports rewritten, and how many lines changed."""
    source = sdist(name, cache)
    target = work / name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source / "tests", target / "tests")
    changed = 0
    for path in sorted((target / "tests").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        new = [rewrite(line) for line in lines]
        changed += sum(a != b for a, b in zip(lines, new, strict=True))
        path.write_text("".join(new), encoding="utf-8")
    return target, changed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("peers", nargs="*", help="seqeval, nervaluate (default: both)")
    cache = Path(os.environ.get("SPANSCORE_PEER_CACHE", Path.home() / ".cache" / "spanscore" / "peer-suites"))
    ap.add_argument("--cache", type=Path, default=cache, help="Where the source distributions are kept between runs.")
    ap.add_argument("--work", type=Path, default=ROOT / ".cache" / "peer-suites" / "work")
    args, pytest_args = ap.parse_known_args()
    unknown = sorted(set(args.peers) - set(PEERS))
    if unknown:
        ap.error(f"unknown peer {unknown[0]!r}: use {', '.join(PEERS)}")
    status = 0
    for name in args.peers or list(PEERS):
        folder, changed = prepare(name, args.cache, args.work)
        print(f"peer-suites: {name} {PEERS[name]}: {changed} import lines rewritten; running its tests", flush=True)
        # From the tests' folder: seqeval's run ``perl conlleval.pl`` from the working directory.
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(folder), ".",
             *[a for a in pytest_args if a != "--"]],
            cwd=folder / "tests",
        )
        status = status or run.returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
