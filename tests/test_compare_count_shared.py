"""``compare``'s count of two systems against one reference without work done twice: the
reference's token words (what every system's tokens are checked against) found once a part, and
a chunk's documents' rows handed on as a view of the table they were counted in where they are a
run of its rows. Each against an independent computation: the words as ``words_at`` finds them,
the rows as the table indexed by the documents present, and whole comparisons against each system
evaluated alone."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.errors import InputError
from spanscore.io import conll as conll_module
from spanscore.io.conll import parse_conll, prefix_masks, words_at
from spanscore.io.conll_plan import iter_chunks_beside
from spanscore.io.reading import Reading
from spanscore.io.sources import ConllSource, train_index
from spanscore.stages import buckets as buckets_module
from spanscore.stages.counts import Options, group_fields
from spanscore.stages.criteria import CRITERIA
from spanscore.stages.documents import scored_columns
from spanscore.stages.parts import Wanted, _rows_of, count_part, twins
from spanscore.stages.spans import Spans


@pytest.fixture(scope="module")
def runs(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("shared")
    gold = sentences(btc / "test.txt")
    # Documents of 7 sentences, so that a chunk may start with a document of its own (key 0 then
    # holds nothing).
    def with_docs(name: str, blocks: list[list[str]]) -> Path:
        path = folder / name
        with path.open("w", encoding="utf-8") as f:
            for at in range(0, len(blocks), 7):
                f.write("-DOCSTART-\tO\n\n")
                f.writelines("\n".join(b) + "\n\n" for b in blocks[at : at + 7])
        return path

    return {
        "gold": write_conll(folder / "gold.conll", gold),
        "a": write_conll(folder / "a.conll", perturb(gold, 1, 0.45)),
        "b": write_conll(folder / "b.conll", perturb(gold, 2, 0.35)),
        "doc_gold": with_docs("doc_gold.conll", gold),
        "doc_a": with_docs("doc_a.conll", perturb(gold, 3, 0.4)),
        "doc_b": with_docs("doc_b.conll", perturb(gold, 4, 0.3)),
    }


@pytest.mark.parametrize("seed", range(6))
def test_rows_of_is_the_table_indexed_by_the_documents_present(seed: int) -> None:
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 50, size=(40, 7))
    cases = [
        np.arange(40),  # every document
        np.arange(1, 40),  # all but key 0: the previous chunk's document, not in this one
        np.arange(0, 39),
        np.arange(12, 13),
        np.zeros(0, dtype=np.int64),
        np.sort(rng.choice(40, size=25, replace=False)),  # gaps: picked
        np.array([0, 2, 3, 4]),
    ]
    for present in cases:
        got = _rows_of(table, present)
        np.testing.assert_array_equal(got, table[present])
        run = present.shape[0] > 0 and int(present[-1]) - int(present[0]) + 1 == present.shape[0]
        assert np.shares_memory(got, table) == run  # a view exactly where the rows are a run
        if run:
            assert got.flags.c_contiguous


def _parts(ref: Path, systems: list[Path], chunk: int) -> list[tuple[Any, ...]]:
    return list(iter_chunks_beside(str(ref), [str(s) for s in systems], chunk))


@pytest.mark.parametrize("chunk", [3_000, 20_000])
def test_documents_rows_of_a_part_equal_the_rows_counted_per_document(runs: dict[str, Path], chunk: int) -> None:
    # Parts that start with a -DOCSTART- hold no unit of key 0: their rows are a view from row 1.
    reading = Reading()
    source = ConllSource(str(runs["doc_gold"]), str(runs["doc_a"]), reading, chunk_bytes=chunk)
    fields = group_fields(tuple(c.name for c in CRITERIA))
    scored = scored_columns(fields, scaled=False)
    wanted = Wanted(documents=True, narrow=True, scored_groups=True, examples=0)
    viewed = 0
    for (part, _) in _parts(runs["doc_gold"], [runs["doc_a"], runs["doc_b"]], chunk):
        data = source.load(part)
        result = count_part(data, Options(), wanted)
        docs = result.docs
        assert docs is not None
        viewed += docs.stats.base is not None
        # Independently: each document of the part counted alone, its mentions only.
        for row, key in zip(docs.stats, docs.keys.tolist(), strict=True):
            units = np.flatnonzero(data.doc_key == key)
            r, p = data.reference, data.predicted
            alone = count_part(
                _only_units(data, units), Options(), Wanted(documents=True, scored_groups=True, examples=0)
            ).docs
            assert alone is not None
            np.testing.assert_array_equal(row, alone.stats.sum(axis=0))
            assert r is data.reference and p is data.predicted
        assert docs.fields == tuple(fields[i] for i in scored)
    assert viewed  # some part's rows were handed on without a copy


def _only_units(data: Any, units: np.ndarray) -> Any:
    """``data`` with only the mentions of ``units`` (every unit kept, so keys stay as they are)."""
    from dataclasses import replace

    keep_r = np.isin(data.reference.unit, units)
    keep_p = np.isin(data.predicted.unit, units)
    return replace(data, reference=data.reference.select(keep_r), predicted=data.predicted.select(keep_p))


def test_token_words_lengths_and_masks_are_found_once_and_not_pickled() -> None:
    data = b"EU B-ORG\nrejects O\nGerman B-MISC\ncall O\n\nPeter B-PER\nBlackburnshire I-PER\n"
    table = parse_conll(data, "x.conll", columns=(-1,))
    words, lengths, masks = table.token_words(), table.token_lengths(), table.token_masks()
    np.testing.assert_array_equal(words, words_at(table.buffer, table.token_start))
    np.testing.assert_array_equal(lengths, [2, 7, 6, 4, 5, 14])
    np.testing.assert_array_equal(masks, prefix_masks(table.token_end - table.token_start))
    assert table.token_words() is words and table.token_lengths() is lengths and table.token_masks() is masks
    assert not (words.flags.writeable or lengths.flags.writeable or masks.flags.writeable)
    again = pickle.loads(pickle.dumps(table))
    assert not {"_token_words", "_token_lengths", "_token_masks"} & again.__dict__.keys()
    np.testing.assert_array_equal(again.token_words(), words)


def test_the_reference_words_are_found_once_for_every_system(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = conll_module.words_at

    def spy(buf: Any, start: Any) -> Any:
        calls.append(int(np.asarray(start).shape[0]))
        return real(buf, start)

    monkeypatch.setattr(conll_module, "words_at", spy)
    reading = Reading()
    sources = [ConllSource(str(runs["gold"]), str(runs[s]), reading, chunk_bytes=10**9) for s in ("a", "b")]
    (parts,) = _parts(runs["gold"], [runs["a"], runs["b"]], 10**9)
    reference = sources[0].read_reference(parts[0])
    tokens = reference.table.n_tokens
    calls.clear()  # the reference's labels are read with it
    for source, part in zip(sources, parts, strict=True):
        source.load(part, reference)
    # Each prediction's labels and tokens, and the reference's tokens once: five, not six.
    assert calls.count(tokens) == 5


def test_a_second_system_whose_token_differs_is_still_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    text = runs["b"].read_text().splitlines(keepends=True)
    k = next(i for i, line in enumerate(text) if line.strip())
    token, label = text[k].split()
    text[k] = f"{token[:-1] or 'x'}Q {label}\n"  # the same length, another last byte
    bad = tmp_path / "b_bad.conll"
    bad.write_text("".join(text))
    with pytest.raises(InputError, match=r"differ|token"):
        spanscore.compare(reference=str(runs["gold"]), systems=[str(runs["a"]), str(bad)], format="conll")


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_comparison_counts_each_system_as_it_is_counted_alone(runs: dict[str, Path], jobs: int) -> None:
    c = spanscore.compare(
        reference=str(runs["doc_gold"]), systems=[str(runs["doc_a"]), str(runs["doc_b"])], format="conll",
        resamples=20, trials=20, jobs=jobs,
    )  # fmt: skip
    for k, system in enumerate(("doc_a", "doc_b")):
        alone = spanscore.evaluate(
            reference=str(runs["doc_gold"]), predicted=str(runs[system]), format="conll", chunk_bytes=7_000
        )
        mine, theirs = c.reports[k].to_dict(), alone.to_dict()
        for key in ("corpus", "metrics", "semeval", "per_type", "errors", "confusion"):
            assert mine[key] == theirs[key]


# A predicted twin's bucket is its reference twin's: against each mention assigned afresh.


@pytest.fixture()
def fresh_buckets() -> Any:
    buckets_module._last_reference = None
    yield
    buckets_module._last_reference = None


@pytest.mark.parametrize("system", ["a", "b"])
@pytest.mark.parametrize("names", [("length", "seen"), ("consistency", "frequency", "depth"), ("seen",)])
def test_predicted_twins_take_their_reference_twins_buckets(
    btc: Path, runs: dict[str, Path], fresh_buckets: None, system: str, names: tuple[str, ...]
) -> None:
    index = train_index(btc / "train.txt", Reading())
    assert index is not None
    source = ConllSource(str(runs["gold"]), str(runs[system]), Reading(), chunk_bytes=1 << 30)
    data = source.load(next(iter(source.parts())))
    ref, pred, text = data.reference, data.predicted, data.text
    found = twins(ref, pred)
    assert found is not None and found[1].any() and not found[1].all()
    wanted = tuple(buckets_module.attribute(n) for n in names)
    # Independently: every mention of each side assigned, nothing remembered, no twins given.
    expected = buckets_module.assign(wanted, ref, pred, text, index)
    buckets_module._last_reference = None
    got = buckets_module.assign(wanted, ref, pred, text, index, found)  # the reference assigned here
    again = buckets_module.assign(wanted, ref, pred, text, index, found)  # its buckets remembered
    for (r, p), (gr, gp), (ar, ap) in zip(expected, got, again, strict=True):
        np.testing.assert_array_equal(gr, r)
        np.testing.assert_array_equal(gp, p)
        np.testing.assert_array_equal(ap, p)
        assert ar is gr and gp.dtype == p.dtype


def test_only_the_predicted_mentions_without_a_twin_are_keyed(
    btc: Path, runs: dict[str, Path], fresh_buckets: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = train_index(btc / "train.txt", Reading())
    assert index is not None
    source = ConllSource(str(runs["gold"]), str(runs["a"]), Reading(), chunk_bytes=1 << 30)
    data = source.load(next(iter(source.parts())))
    found = twins(data.reference, data.predicted)
    assert found is not None
    sizes: list[int] = []
    real = buckets_module._Side.of

    def spy(spans: Spans, *a: Any) -> Any:
        sizes.append(len(spans))
        return real(spans, *a)

    monkeypatch.setattr(buckets_module._Side, "of", staticmethod(spy))
    wanted = (buckets_module.attribute("seen"),)
    buckets_module.assign(wanted, data.reference, data.predicted, data.text, index, found)
    assert sizes == [len(data.reference), int((~found[1]).sum())]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_bucket_comparison_gives_each_system_its_own_buckets_counts(
    btc: Path, runs: dict[str, Path], jobs: int
) -> None:
    options: dict[str, Any] = {"buckets": ["length", "seen"], "train": str(btc / "train.txt")}
    c = spanscore.compare(
        reference=str(runs["gold"]), systems=[str(runs["a"]), str(runs["b"])], format="conll",
        resamples=20, trials=20, jobs=jobs, **options,
    )  # fmt: skip
    for k, system in enumerate(("a", "b")):
        alone = spanscore.evaluate(
            reference=str(runs["gold"]), predicted=str(runs[system]), format="conll", chunk_bytes=9_000, **options
        )
        assert c.reports[k].to_dict()["buckets"] == alone.to_dict()["buckets"]


@pytest.mark.parametrize("seed", range(4))
def test_units_summed_in_one_bincount_are_exact_and_large_ones_are_split(seed: int) -> None:
    from spanscore.stages.counts import _bincount_units

    rng = np.random.default_rng(seed)
    index = rng.integers(0, 5, size=3_000)
    for high in (30, 1 << 20, (1 << 47) + 12345):  # the last: sums past 2^53, where float64 rounds
        weights = rng.integers(0, high, size=3_000).astype(np.int64)
        expected = [0] * 5
        for i, w in zip(index.tolist(), weights.tolist(), strict=True):
            expected[i] += w  # Python integers: exact
        got = _bincount_units(index, weights, 5)
        assert got.dtype == np.int64 and got.tolist() == expected


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("groups", [5, 300])
@pytest.mark.parametrize("layout", ["row", "column", "inner"])
def test_twins_share_adds_to_each_column_as_counted_twin_by_twin(seed: int, groups: int, layout: str) -> None:
    from spanscore.stages.counts import Groups
    from spanscore.stages.parts import _TwinShare

    rng = np.random.default_rng(seed)
    fields = group_fields(tuple(c.name for c in CRITERIA))
    columns = sorted(rng.choice(len(fields), size=30, replace=False).tolist())
    n_ref, n_pred = 900, 800
    start_r = rng.integers(0, 50, n_ref)
    start_p = rng.integers(0, 50, n_pred)
    zeros_r, zeros_p = np.zeros(n_ref, dtype=np.int64), np.zeros(n_pred, dtype=np.int64)
    reference = Spans.build(start_r, start_r + rng.integers(1, 6, n_ref), zeros_r, zeros_r, ["X"])
    predicted = Spans.build(start_p, start_p + rng.integers(1, 6, n_pred), zeros_p, zeros_p, ["X"])
    ref_twin, pred_twin = rng.random(n_ref) < 0.7, rng.random(n_pred) < 0.7
    inner = 4
    g = Groups(rng.integers(0, groups, n_ref), rng.integers(0, groups, n_pred), groups, inner)
    rows = inner if layout == "inner" else groups
    before = rng.integers(0, 1000, size=(rows, len(columns)))
    table = before.copy() if layout != "column" else before.T.copy().T  # column: each column contiguous
    _TwinShare(reference, predicted, ref_twin, pred_twin).add(table, columns, g, inner=layout == "inner")
    # Independent: each twin adds to its group's row, column by column, by the field's name.
    expected = before.tolist()
    for side, spans, twin, keys in ((0, reference, ref_twin, g.reference), (1, predicted, pred_twin, g.predicted)):
        for i in np.flatnonzero(twin).tolist():
            row = int(keys[i]) % inner if layout == "inner" else int(keys[i])
            length = int(spans.end[i] - spans.start[i])
            for j, c in enumerate(columns):
                name = fields[c]
                if side == 0 and (name == "reference" or name.endswith(".full_ref") or name == "errors.correct"):
                    expected[row][j] += 1
                if side == 1 and (name == "predicted" or name.endswith(".full_pred")):
                    expected[row][j] += 1
                if side == 0 and name in ("token.true_positive", "token.reference"):
                    expected[row][j] += length
                if side == 1 and name in ("token.predicted", "token.true_positive_predicted"):
                    expected[row][j] += length
    assert table.dtype == np.int64 and table.tolist() == expected
