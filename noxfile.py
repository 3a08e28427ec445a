"""Build the wheel and the sdist once, then install each in a fresh environment of every Python
the package supports that this machine has, and run the paper's experiment end to end.

    pip install nox && nox            # or: nox -s demo-3.12
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nox

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
DIST = Path(__file__).parent / "dist"
nox.options.error_on_missing_interpreters = False


@nox.session(python=False)
def build(session: nox.Session) -> None:
    shutil.rmtree(DIST, ignore_errors=True)
    session.run(sys.executable, "-m", "build", "--outdir", str(DIST), external=True)  # nox's own Python has build


@nox.session(python=PYTHONS)
@nox.parametrize("artifact", ["wheel", "sdist"])
def demo(session: nox.Session, artifact: str) -> None:
    """Install the built artifact with the demo extra and run ``spanscore demo``."""
    pattern = "*.whl" if artifact == "wheel" else "*.tar.gz"
    found = sorted(DIST.glob(pattern))
    if not found:
        session.error("no built package: run `nox -s build` first")
    session.install(f"{found[-1]}[demo]")
    out = session.create_tmp()
    session.chdir(out)
    session.run("spanscore", "samples", "samples")
    session.run("spanscore", "evaluate", "samples/gold.conll", "samples/pred.conll", "--json", silent=True)
    session.run("spanscore", "demo", "--out", "demo")
