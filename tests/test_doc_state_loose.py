"""The documents that joining two runs of chunks closes wait as rows (``DocState.loose``) and are
made histograms a batch at a time (``LOOSE_ROWS``) or when the run is finished: the finished
state is the same, row for row and count for count, as the state of every document counted at
once, whatever the batch, the chunks and the documents a chunk boundary cuts in two; and a run's
``documents`` counts the loose ones along the way."""

from __future__ import annotations

import numpy as np
import pytest

from spanscore.stages import documents
from spanscore.stages.documents import DocCounts, DocState, TypeRows

FIELDS = ("a.full_ref", "a.full_pred", "b", "c")
NAMES = ("LOC", "ORG", "PER")


def corpus(rng: np.random.Generator, n: int) -> tuple[np.ndarray, list[list[tuple[int, np.ndarray]]]]:
    stats = rng.integers(0, 4, size=(n, len(FIELDS)))
    per_type = [[(t, rng.integers(0, 3, size=len(FIELDS))) for t in range(3) if rng.random() < 0.5] for _ in range(n)]
    return stats, per_type


def chunk(stats: np.ndarray, per_type: list, first: int, docs: list[tuple[int, float]]) -> DocCounts:
    """The documents ``docs`` (global key, share of the document in this chunk), keys from ``first``."""
    keys, rows, t_keys, t_index, t_stats = [], [], [], [], []
    for key, share in docs:
        keys.append(key - first)
        part = np.floor(stats[key] * share).astype(np.int64) if share < 1 else stats[key]
        rows.append(part)
        for t, s in per_type[key]:
            t_keys.append(key - first)
            t_index.append(t)
            t_stats.append(np.floor(s * share).astype(np.int64) if share < 1 else s)
    type_rows = TypeRows(
        np.asarray(t_keys, dtype=np.int64),
        np.asarray(t_index, dtype=np.int64),
        NAMES,
        np.asarray(t_stats, dtype=np.int64).reshape(-1, len(FIELDS)),
    )
    keyed = np.asarray(keys, dtype=np.int64)
    return DocCounts(keyed, np.asarray(rows, dtype=np.int64), FIELDS, None, "document", type_rows)


def chunks(stats: np.ndarray, per_type: list, rng: np.random.Generator, pieces: int) -> list[tuple[DocCounts, int]]:
    """The corpus cut into ``pieces`` chunks; at some cuts a document in two (half and the rest)."""
    n = stats.shape[0]
    cuts = sorted(rng.choice(np.arange(1, n), size=pieces - 1, replace=False).tolist())
    out = []
    start, carried = 0, None
    for end in [*cuts, n]:
        docs: list[tuple[int, float]] = []
        if carried is not None:
            docs.append((carried, -1.0))  # the rest of the document cut at the last boundary
        docs += [(k, 1.0) for k in range(start if carried is None else start + 1, end)]
        carried = None
        if end < n and rng.random() < 0.5 and docs[-1][1] == 1.0 and len(docs) > 1:
            carried = end  # cut document ``end``: its first half here, the rest in the next chunk
            docs.append((end, 0.5))
        out.append((docs, docs[0][0]))
        start = end
    return [(chunk_rest(stats, per_type, first, docs), first) for docs, first in out]


def chunk_rest(stats: np.ndarray, per_type: list, first: int, docs: list[tuple[int, float]]) -> DocCounts:
    """``chunk``, where a share of -1 is what a half (0.5) left of the document."""
    full = [(k, 1.0 if s == 1.0 else 0.5) for k, s in docs]
    d = chunk(stats, per_type, first, full)
    rest = [i for i, (_, s) in enumerate(docs) if s < 0]
    if not rest:
        return d
    # The rest: the whole document less its first half.
    k = docs[0][0]
    d.stats[0] = stats[k] - np.floor(stats[k] * 0.5).astype(np.int64)
    at = np.flatnonzero(d.type_rows.keys == k - first)
    for row, (_, s) in zip(at.tolist(), per_type[k], strict=True):
        d.type_rows.stats[row] = s - np.floor(s * 0.5).astype(np.int64)
    return d


def same(a: DocState, b: DocState) -> None:
    assert np.array_equal(a.closed.rows, b.closed.rows) and a.closed.rows.dtype == b.closed.rows.dtype
    assert np.array_equal(a.closed.counts, b.closed.counts)
    assert a.types is not None and b.types is not None and sorted(a.types) == sorted(b.types)
    for name in a.types:
        assert np.array_equal(a.types[name].rows, b.types[name].rows)
        assert np.array_equal(a.types[name].counts, b.types[name].counts)
    assert a.documents == b.documents


@pytest.mark.parametrize("loose_rows", [1, 2, 3, 512])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_loose_documents_give_the_state_of_all_documents_at_once(
    loose_rows: int, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents, "LOOSE_ROWS", loose_rows)
    rng = np.random.default_rng(seed)
    n = 300
    stats, per_type = corpus(rng, n)
    whole = DocState.of(chunk(stats, per_type, 0, [(k, 1.0) for k in range(n)])).finished()
    for pieces in (2, 17, 120):
        state = None
        seen = 0
        for d, first in chunks(stats, per_type, rng, pieces):
            part = DocState.of(d)
            state = part if state is None else state.then(part, first)
            seen = int(d.keys[-1]) + first + 1
            assert state.documents == seen  # the loose ones counted too
        assert state is not None
        if loose_rows == 512 and pieces > 2:
            assert state.loose is not None and state.loose.keys.shape[0] > 0  # some wait as rows
        same(state.finished(), whole)
    assert whole.documents == n


def test_joins_of_runs_with_loose_documents_on_both_sides(monkeypatch: pytest.MonkeyPatch) -> None:
    # A tree of joins (as Dask folds): each side brings documents it closed itself.
    monkeypatch.setattr(documents, "LOOSE_ROWS", 1 << 20)
    rng = np.random.default_rng(9)
    n = 200
    stats, per_type = corpus(rng, n)
    whole = DocState.of(chunk(stats, per_type, 0, [(k, 1.0) for k in range(n)])).finished()
    parts = [(DocState.of(d), first) for d, first in chunks(stats, per_type, rng, 16)]
    while len(parts) > 1:
        joined = []
        for i in range(0, len(parts) - 1, 2):
            (a, fa), (b, fb) = parts[i], parts[i + 1]
            joined.append((a.then(b, fb - fa), fa))
        if len(parts) % 2:
            joined.append(parts[-1])
        parts = joined
    state = parts[0][0]
    assert state.loose is not None and state.loose.keys.shape[0] > 0
    same(state.finished(), whole)
