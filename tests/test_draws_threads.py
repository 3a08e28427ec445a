"""The Poisson lookups' random words are the bit generator's raw words (``random_raw``, which lets
the GIL go at once), checked against ``Generator.integers`` over all 64 bits, the call they
replace, in a stream that other draws share; and the top-up's tallies, cut into pieces anywhere,
against a count of each resample's picks written here."""

from __future__ import annotations

import numpy as np
import pytest

from spanscore.analysis import significance
from spanscore.analysis.significance import _Sampler


@pytest.mark.parametrize("shape", [(1, 1), (256, 20), (3, 7), (40,)])
def test_raw_words_are_the_full_range_integers(shape: tuple[int, ...]) -> None:
    a, b = np.random.default_rng([3, 1, 4]), np.random.default_rng([3, 1, 4])
    # Other draws before and after (a binomial, a pending 32-bit half, bounded integers) share the
    # stream: the raw words must be the same words at the same place in it.
    for gen in (a, b):
        gen.binomial(1000, 0.3, size=5)
        gen.integers(0, 1 << 16, size=3, dtype=np.uint32)
    want = a.integers(0, 1 << 64, size=shape, dtype=np.uint64)
    got = b.bit_generator.random_raw(shape)
    assert got.dtype == np.uint64 and np.array_equal(got, want)
    after = [gen.integers(0, 1 << 16, size=9, dtype=np.uint32) for gen in (a, b)]
    assert np.array_equal(*after)
    assert a.random() == b.random()


def _top_up_reference(sampler: _Sampler, rng: np.random.Generator, wanted: np.ndarray) -> np.ndarray:
    """``_Sampler._pooled`` written out plainly: the Poisson counts as the sampler draws them, then
    each resample's missing draws one by one, each tallied into its own resample's row."""
    counts = sampler._poisson(rng, wanted)
    over = np.flatnonzero(counts.sum(axis=1) > wanted)
    while over.shape[0]:
        counts[over] = sampler._poisson(rng, wanted[over])
        over = over[counts[over].sum(axis=1) > wanted[over]]
    missing = wanted - counts.sum(axis=1)
    documents = rng.integers(0, sampler.pooled, size=int(missing.sum()))
    rows = np.searchsorted(np.cumsum(sampler._pool), documents, side="right")
    at = 0
    for r, m in enumerate(missing.tolist()):
        for row in rows[at : at + m].tolist():
            counts[r, row] += 1
        at += m
    return counts


@pytest.mark.parametrize("piece", [1, 7, 100, 1 << 16])
def test_top_up_tallies_are_each_resamples_picks(piece: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(significance, "TOP_UP_PIECE", piece)
    rng = np.random.default_rng(11)
    held = rng.integers(3, 40, size=60)  # common rows only (more than ``RARE`` documents each)
    sampler = _Sampler(held)
    wanted = rng.binomial(int(held.sum()), 0.97, size=33)
    wanted[4] = 0  # a resample with no draws at all
    got = sampler._pooled(np.random.default_rng(2), wanted)
    want = _top_up_reference(sampler, np.random.default_rng(2), wanted)
    assert np.array_equal(got, want) and np.array_equal(got.sum(axis=1), wanted)
