"""Shared fixtures. Real data is read from ../shared (never copied into the project)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


# Outside pip: Debian's chromium (for the review page) and a PostgreSQL server (for the review
# store). .ci/run installs and starts both, and fails the run if a test skipped for want of them.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_MISSING = "needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
POSTGRES_MISSING = "needs a PostgreSQL server: set SPANSCORE_TEST_POSTGRES to a database URL"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """A headless Debian chromium driven by Playwright."""
    if not CHROMIUM.exists():
        pytest.skip(CHROMIUM_MISSING)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """A PostgreSQL database to test on (emptied of spanscore's tables first)."""
    url = os.environ.get("SPANSCORE_TEST_POSTGRES")
    if not url:
        pytest.skip(POSTGRES_MISSING)
    return url


def _empty_postgres(url: str) -> None:
    """Drop every table of the test database, so each test starts from a new schema."""
    sa = pytest.importorskip("sqlalchemy")
    from spanscore.review.store import database_url

    engine = sa.create_engine(database_url(url))
    try:
        meta = sa.MetaData()
        meta.reflect(engine)
        meta.drop_all(engine)
    finally:
        engine.dispose()


@contextlib.contextmanager
def _database_lock(url: str) -> Iterator[None]:
    """Hold the test database alone: pytest-xdist's workers would otherwise empty it under each
    other's tests (one lock file per database URL, released when the test ends)."""
    name = hashlib.sha1(url.encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"spanscore-test-db-{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(params=["sqlite", "postgresql"])
def review_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A review store's --db on each backend: a SQLite file, and a real PostgreSQL server."""
    if request.param == "sqlite":
        yield str(tmp_path / "r.db")
        return
    url: str = request.getfixturevalue("postgres_url")
    with _database_lock(url):
        _empty_postgres(url)
        yield url
