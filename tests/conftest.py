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


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"{path} is missing: the tests read the shared data from ../shared")
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
