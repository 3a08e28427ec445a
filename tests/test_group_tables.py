"""Every group's joint rows of a chunk tabled together (analysis/buckets.py ``_Groups.tabled``):
one histogram whose first column is the group, split into each group's histogram. Checked here
against an independent pairing (each system's rows summed per document and group in a
dictionary, the systems' rows side by side, each group's distinct rows counted), for chunk-like
blocks (no document and group twice: the narrow, dense path), blocks where a cut document's
halves repeat a pair (summed in 64 bits), and keys too sparse for the dense path (np.unique).
Also: ``compare`` builds the training corpus's index once for every system."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_bucket_histograms import runs  # noqa: F401  (the fixture)

import spanscore
from spanscore import api
from spanscore.analysis.buckets import GroupBlock, _Groups
from spanscore.stages.documents import Histogram, compact_rows

Rows = tuple[np.ndarray, np.ndarray, np.ndarray]


def expected_groups(rows: list[Rows], widths: list[int]) -> dict[int, Counter[tuple[int, ...]]]:
    """Each group's joint rows counted, paired with dictionaries: no numpy sorting involved."""
    summed: list[dict[tuple[int, int], list[int]]] = []
    for (keys, gids, stats), width in zip(rows, widths, strict=True):
        mine: dict[tuple[int, int], list[int]] = {}
        for k, g, row in zip(keys.tolist(), gids.tolist(), stats.tolist(), strict=True):
            have = mine.setdefault((g, k), [0] * width)
            mine[(g, k)] = [a + b for a, b in zip(have, row, strict=True)]
        summed.append(mine)
    pairs = {p for mine in summed for p in mine}
    out: dict[int, Counter[tuple[int, ...]]] = {}
    for g, k in pairs:
        joint: list[int] = []
        for mine, width in zip(summed, widths, strict=True):
            joint += mine.get((g, k), [0] * width)
        out.setdefault(g, Counter())[tuple(joint)] += 1
    return out


def same_split(block: Histogram | None, rows: list[Rows], fields: tuple[str, ...]) -> None:
    expected = expected_groups(rows, [r[2].shape[1] for r in rows])
    assert block is not None
    assert block.fields == ("group", *fields)
    names = tuple(f"g{i}" for i in range(int(block.rows[:, 0].max()) + 1))
    split = GroupBlock(names, block).split()
    assert sorted(split) == sorted(f"g{g}" for g in expected)
    for g, counted in expected.items():
        hist = split[f"g{g}"]
        got = [tuple(r) for r in hist.rows.tolist()]
        assert got == sorted(counted), g  # sorted lexicographically, each distinct row once
        assert hist.counts.tolist() == [counted[r] for r in got]
        assert hist.fields == fields
        # In the narrowest integers that hold them, as Histogram.of keeps its rows.
        assert hist.rows.dtype == compact_rows(hist.rows.astype(np.int64)).dtype
        assert hist.rows.flags.c_contiguous
        # The same histogram as the group's own rows would make.
        own = Histogram.of(np.array(sorted(counted.elements()), dtype=np.int64), fields)
        assert np.array_equal(own.rows, hist.rows) and np.array_equal(own.counts, hist.counts)


def systems_rows(rng: np.random.Generator, n_docs: int, n_groups: int, widths: list[int], *, low: int = 0,
                 spread: int = 1, repeat: bool = False, kind: Any = np.uint8) -> list[Rows]:
    out = []
    for width in widths:
        # A few (document, group) pairs per document, ordered by document as a chunk's rows are.
        mark = rng.random((n_docs, n_groups)) < 0.35
        docs, gids = np.nonzero(mark)
        if repeat:  # a cut document's two halves: some pairs come twice
            again = rng.random(docs.shape[0]) < 0.2
            docs, gids = np.concatenate((docs, docs[again])), np.concatenate((gids, gids[again]))
        stats = rng.integers(0, 4, size=(docs.shape[0], width)) * (rng.random((docs.shape[0], width)) < 0.5)
        out.append((low + docs.astype(np.int64) * spread, gids.astype(np.int64), stats.astype(kind)))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_a_chunks_rows_tabled_together_are_each_groups_histogram(seed: int) -> None:
    rng = np.random.default_rng(seed)
    widths = [int(w) for w in rng.integers(1, 7, size=int(rng.integers(2, 4)))]
    fields = tuple(f"{s}:c{j}" for s, w in enumerate(widths) for j in range(w))
    rows = systems_rows(rng, int(rng.integers(1, 60)), int(rng.integers(1, 12)), widths, low=int(rng.integers(0, 500)))
    same_split(_Groups.tabled(rows, fields), rows, fields)


@pytest.mark.parametrize("seed", range(6))
def test_a_cut_documents_halves_are_summed(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    widths = [3, 3]
    fields = tuple(f"{s}:c{j}" for s in range(2) for j in range(3))
    # Counts near the narrow type's top: the halves' sum needs wider integers than either half.
    rows = systems_rows(rng, 40, 5, widths, repeat=True)
    rows = [(k, g, (s.astype(np.int64) * 80).astype(np.uint8)) for k, g, s in rows]
    same_split(_Groups.tabled(rows, fields), rows, fields)


@pytest.mark.parametrize("seed", range(4))
def test_sparse_keys_are_paired_by_sorting(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    widths = [2, 4]
    fields = tuple(f"{s}:c{j}" for s, w in enumerate(widths) for j in range(w))
    # Keys a thousand apart: a mark per possible pair would be far larger than the rows.
    rows = systems_rows(rng, 30, 7, widths, spread=1000, kind=np.int64)
    same_split(_Groups.tabled(rows, fields), rows, fields)


def test_one_system_without_rows_and_none_at_all() -> None:
    fields = ("0:a", "1:a")
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 1), dtype=np.uint8))
    assert _Groups.tabled([empty, empty], fields) is None
    one = (np.array([4, 4, 6]), np.array([0, 2, 0]), np.array([[1], [2], [0]], dtype=np.uint8))
    same_split(_Groups.tabled([one, empty], fields), [one, empty], fields)
    same_split(_Groups.tabled([empty, one], fields), [empty, one], fields)


def test_the_training_corpus_is_indexed_once_for_every_system(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path  # noqa: F811
) -> None:
    calls: list[Any] = []
    built = api.train_index

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return built(*args, **kwargs)

    monkeypatch.setattr(api, "train_index", counted)
    train = runs["small_gold"]
    again = tmp_path / "a2.conll"
    again.write_bytes(runs["a"].read_bytes())
    compared = spanscore.compare(
        reference=runs["gold"], systems=[runs["a"], runs["b"], again], names=["a", "b", "a2"],
        buckets=["seen", "length"], train=train, resamples=20, trials=20,
    ).to_dict()
    assert len(calls) == 1
    # Each system's buckets are those it gets evaluated alone with the same training corpus.
    for k, name in enumerate(("a", "b", "a")):
        alone = spanscore.evaluate(
            reference=runs["gold"], predicted=runs[name], buckets=["seen"], train=train, keep_details=False
        ).to_dict()["buckets"]["seen"]
        got = {g["bucket"]: g for g in compared["buckets"]["seen"]}
        for bucket in alone:
            entry = got[bucket["bucket"]]
            assert entry["reference_mentions"] == bucket["reference_mentions"]
            assert entry["systems"][k]["predicted_mentions"] == bucket["predicted_mentions"]
