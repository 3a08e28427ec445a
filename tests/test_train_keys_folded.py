"""A training corpus's mention keys gathered part by part as distinct (key, type) rows and folded
as the parts come: the same index as gathering every mention of every part at once (spanscore's
way before), for any number of parts and any fold step, with at most a fold's parts waiting."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from test_bucket_histograms import runs  # noqa: F401  (the fixture)
from test_compare_counting import chunks

from spanscore.io.reading import Reading
from spanscore.io.sources import train_index
from spanscore.stages import buckets as attributes


def mention_by_mention(parts: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """Every mention's key of every part at once, then one sort: the keys as they were gathered
    before (an independent path: no distinct rows, no fold)."""
    names: list[str] = []
    for spans, _ in parts:
        names += [t for t in spans.types if t not in names]
    hashes, words, types, vocabulary = [], [], [], []
    for spans, text in parts:
        w = attributes._Words.of(text)
        h, n = w.keys(spans, text)
        full = n > 0
        hashes.append(h[full])
        words.append(n[full])
        types.append(np.array([names.index(t) for t in spans.types] or [0], dtype=np.int64)[spans.type[full]])
        vocabulary.append(np.unique(w.hashes()))
    all_h, all_n, all_t = np.concatenate(hashes), np.concatenate(words), np.concatenate(types)
    keys, row = np.unique(all_h, return_inverse=True)
    counts = np.zeros((keys.shape[0], len(names)), dtype=np.int64)
    np.add.at(counts, (row, all_t), 1)
    length = np.zeros(keys.shape[0], dtype=np.int64)
    length[row] = all_n
    return keys, counts, length, np.unique(np.concatenate(vocabulary)), tuple(names)


@pytest.mark.parametrize("size", [6_000, 40_000, 10**9])
@pytest.mark.parametrize("fold", [1, 3, 100])
def test_folded_distinct_keys_equal_every_mentions_keys_at_once(
    runs: dict[str, Path], size: int, fold: int, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    parts = [(d.reference, d.text) for d in chunks(runs, size)]
    monkeypatch.setattr(attributes, "FOLD_PARTS", fold)
    keyed = attributes.merge_keys(iter([attributes.part_keys(spans, text) for spans, text in parts]))
    keys, counts, length, vocabulary, names = mention_by_mention(parts)
    assert keyed.types == names
    assert np.array_equal(keyed.keys, keys)
    assert np.array_equal(keyed.counts, counts)
    assert np.array_equal(keyed.length, length)
    assert np.array_equal(keyed.vocabulary, vocabulary)
    assert int(counts.sum()) > 100 and keys.shape[0] < int(counts.sum())  # the corpus repeats its mentions


def test_a_part_holds_its_distinct_keys_with_their_mentions(runs: dict[str, Path]) -> None:  # noqa: F811
    (spans, text), *_ = [(d.reference, d.text) for d in chunks(runs, 10**9)]
    part = attributes.part_keys(spans, text)
    h, n = attributes._Words.of(text).keys(spans, text)
    full = n > 0
    pairs = set(zip(h[full].tolist(), spans.type[full].tolist(), strict=True))
    assert part.hashes.shape[0] == len(pairs) < int(full.sum())
    assert int(part.counts.sum()) == int(full.sum())
    assert set(zip(part.hashes.tolist(), part.type_index.tolist(), strict=True)) == pairs


def test_parts_are_folded_as_they_come(runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    # What waits for the fold is at most FOLD_PARTS parts, whatever the number of parts: the
    # workers' results are not all held at once.
    monkeypatch.setattr(attributes, "FOLD_PARTS", 2)
    parts = [(d.reference, d.text) for d in chunks(runs, 4_000)]
    assert len(parts) > 6
    alive: list[weakref.ref] = []
    most = 0

    def given() -> Iterator[attributes.PartKeys]:
        nonlocal most
        for spans, text in parts:
            gc.collect()
            most = max(most, sum(r() is not None for r in alive))
            part = attributes.part_keys(spans, text)
            alive.append(weakref.ref(part))
            yield part
            del part

    attributes.merge_keys(given())
    assert most <= 2


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_the_index_is_the_same_for_every_number_of_readers(runs: dict[str, Path], jobs: int) -> None:  # noqa: F811
    one = train_index(str(runs["gold"]), Reading(), 1)
    other = train_index(str(runs["gold"]), Reading(), jobs)
    assert one is not None and other is not None
    for name in ("keys", "counts", "occurrences", "vocabulary"):
        assert np.array_equal(getattr(one, name), getattr(other, name)), name
    assert one.types == other.types
