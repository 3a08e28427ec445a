"""compare's paired tests hold a large family's rows (and its differences between systems) in
their own integers, made floats a piece at a time where the draws multiply them
(``significance._product``). Checked here: the pieces' products are the float product's very
numbers (whole numbers: exact in any order), whole comparisons are the same whether every family
is held as integers or as floats, and a large family's rows take their integers' bytes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.analysis import significance
from spanscore.analysis.buckets import joint_groups
from spanscore.analysis.significance import Resampling, compare_histograms, joint_histogram
from spanscore.stages.documents import DocCounts, Histogram


@pytest.mark.parametrize("cells", [1, 7, 64, 1 << 16])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.int64])
def test_products_of_integer_rows_are_the_float_products(
    cells: int, dtype: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(significance, "PRODUCT_CELLS", cells)
    rng = np.random.default_rng(cells)
    low = 0 if np.iinfo(dtype).min == 0 else -5
    for k, width, size in ((0, 3, 4), (5, 0, 2), (1, 1, 1), (301, 7, 5), (1000, 13, 17)):
        rows = rng.integers(low, 9, size=(k, width)).astype(dtype)
        counts = rng.poisson(3.0, size=(size, k)).astype(np.float64)
        got = significance._product(counts, rows)
        want = counts @ rows.astype(np.float64)
        assert got.dtype == np.float64 and got.shape == (size, width)
        assert np.array_equal(got, want)
        # Sums of whole numbers: the same floats to the bit (signs of zeros aside, which no
        # total added to them keeps).
        assert np.array_equal(np.abs(got).view(np.int64), np.abs(want).view(np.int64))


def test_a_large_familys_rows_take_their_integers_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    rows = rng.integers(0, 7, size=(3000, 6))
    joint = Histogram.of(rows, tuple(f"{s}:{c}" for s in "01" for c in "abc"), rng.integers(1, 4, size=3000))
    floats = significance._Family("x", joint, [[0, 1, 2], [3, 4, 5]], [0, 1, 2])
    kept = floats.differences(1)
    monkeypatch.setattr(significance, "NARROW_ROWS", 1000)
    narrow = significance._Family("x", joint, [[0, 1, 2], [3, 4, 5]], [0, 1, 2])
    assert all(a.dtype == np.float64 for a in floats.apart)
    assert all(np.issubdtype(a.dtype, np.integer) for a in narrow.apart)
    held = sum(a.nbytes for a in narrow.apart)
    assert held * 4 <= sum(a.nbytes for a in floats.apart)
    for block in range(3):
        assert np.array_equal(
            narrow.resampled(np.random.default_rng(block), 9), floats.resampled(np.random.default_rng(block), 9)
        )
    swaps = narrow.differences(1)
    assert np.issubdtype(swaps.ordered.dtype, np.signedinteger) and kept.ordered.dtype == np.float64
    for block in range(3):
        assert np.array_equal(
            swaps.trials(np.random.default_rng(block), 11), kept.trials(np.random.default_rng(block), 11)
        )
    narrow.queued()
    assert not hasattr(narrow, "rows") and not hasattr(narrow, "counts")
    assert np.array_equal(narrow.resampled(np.random.default_rng(4), 5), floats.resampled(np.random.default_rng(4), 5))


@pytest.fixture(scope="module")
def systems(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> list[DocCounts]:
    folder = tmp_path_factory.mktemp("narrow")
    gold = sentences(btc / "test.txt")
    paths = [write_conll(folder / "gold.conll", gold)]
    paths += [write_conll(folder / f"{n}.conll", perturb(gold, k, p)) for n, k, p in (("a", 1, 0.45), ("b", 2, 0.35))]
    out = []
    for pred in paths[1:]:
        docs = spanscore.evaluate(
            reference=paths[0], predicted=pred, documents=True, document_types=True, keep_details=False
        ).documents
        assert docs is not None
        out.append(docs)
    return out


def test_comparisons_are_the_same_with_every_familys_rows_in_integers(
    systems: list[DocCounts], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [d.type_rows for d in systems]
    assert rows[0] is not None and rows[1] is not None
    groups = joint_groups([(systems[0], rows[0]), (systems[1], rows[1])], "0.5")
    hists = [joint_histogram(systems, "0.5"), *(h for _, h in groups)]
    options = {"zero_division": 0.0, "credit": "0.5", "resampling": Resampling(resamples=300, trials=300, seed=9)}
    monkeypatch.setattr(significance, "NARROW_ROWS", 1 << 60)
    floats = compare_histograms(hists, ["a", "b"], **options)  # type: ignore[arg-type]
    held: list[np.dtype[np.generic]] = []
    family = significance._Family

    def spied(*args: object) -> significance._Family:
        made = family(*args)  # type: ignore[arg-type]
        held.extend(a.dtype for a in made.apart)
        return made

    monkeypatch.setattr(significance, "_Family", spied)
    monkeypatch.setattr(significance, "NARROW_ROWS", 0)
    monkeypatch.setattr(significance, "PRODUCT_CELLS", 97)  # many pieces a product
    assert compare_histograms(hists, ["a", "b"], **options) == floats  # type: ignore[arg-type]
    assert held and all(np.issubdtype(d, np.integer) for d in held)


@pytest.mark.parametrize("top", [9, (1 << 14) - 1, 1 << 14, 40_000])
def test_a_familys_differences_are_every_documents_whatever_its_counts(top: int) -> None:
    # Counted in 16 bits below 2^14, in 64 bits from there: each distinct difference and its
    # documents, as counted here one distinct row at a time in Python integers.
    rng = np.random.default_rng(top)
    rows = rng.integers(0, 4, size=(500, 4))
    rows[::7, 1] = top
    rows[::11, 3] = top
    weights = rng.integers(1, 5, size=500)
    joint = Histogram.of(rows, ("0:a", "0:b", "1:a", "1:b"), weights)
    swaps = significance._Family("x", joint, [[0, 1], [2, 3]], [0, 1]).differences(1)
    want: dict[tuple[int, ...], int] = {}
    for row, n in zip(joint.rows.tolist(), joint.counts.tolist(), strict=True):
        delta = (row[2] - row[0], row[3] - row[1])
        if any(delta):
            want[delta] = want.get(delta, 0) + n
    got = swaps.distinct[:, swaps.expand].astype(np.int64).tolist()
    assert {tuple(r): n for r, n in zip(got, swaps.draws.counts.tolist(), strict=True)} == want
    assert len(got) == len(want)
