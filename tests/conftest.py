"""Shared fixtures. Real data is read from ../shared (never copied into the project)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
BTC = SHARED / "data" / "btc"
MEDMENTIONS = SHARED / "data" / "medmentions-expert"
SEED_PAIRS = SHARED / "data" / "seed-partial-matches"
SYNTH = SHARED / "tools" / "synth_corpus.py"


# The one reason given when the shared data is absent: .ci/run looks for it and fails the run,
# since CI has ../shared; a fresh clone without it still runs every other test.
SHARED_MISSING = "needs the shared data in ../shared"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{SHARED_MISSING} ({path} is absent)")
    return path


@pytest.fixture(scope="session")
def btc() -> Path:
    return _need(BTC)


@pytest.fixture(scope="session")
def medmentions() -> Path:
    return _need(MEDMENTIONS)


@pytest.fixture(scope="session")
def seed_pairs() -> Path:
    return _need(SEED_PAIRS)


@pytest.fixture(scope="session")
def synth_tool() -> Path:
    return _need(SYNTH)
