"""What the per-type and per-bucket comparison counts per chunk, checked against ways of counting
that do not share its shortcuts: each attribute's rows per (document, bucket) are those of a
table of every (document, bucket) pair with a mention (counted here with dense groups); each
bucket's totals are those of a count without documents (the buckets counted alone); a document's
row summed from its rows per type is the row counted per document. Also: histograms sent back by
a worker land as they were counted, a worker's result pipe holds a comparison's part, a small
training corpus's index is read without forking, and ``--jobs`` 1 and 2 give the same comparison
(workers then send their histograms back compact)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_bucket_histograms import runs  # noqa: F401  (the fixture)

import spanscore
from spanscore import api
from spanscore.engines.paired import landed, shipped
from spanscore.io.reading import Reading
from spanscore.io.sources import ConllSource
from spanscore.stages import buckets as attributes
from spanscore.stages.counts import Groups, count_grouped, group_fields
from spanscore.stages.criteria import CRITERIA
from spanscore.stages.documents import Histogram, scored_columns
from spanscore.stages.parts import Wanted, count_part
from spanscore.stages.scoring import Scoring, TypeSelection

CHOSEN = (attributes.attribute("length"), attributes.attribute("sentence-length"))


def chunks(runs: dict[str, Path], size: int = 20_000) -> list[Any]:  # noqa: F811
    source = ConllSource.open(runs["gold"], runs["a"], Reading(), TypeSelection(), size)
    return [source.load(part) for part in source.parts()]


def test_bucket_rows_are_the_dense_tables_rows_with_a_mention(runs: dict[str, Path]) -> None:  # noqa: F811
    options = Scoring().options
    fields = group_fields(tuple(c.name for c in CRITERIA))
    scored = scored_columns(fields, scaled=False)
    wanted = Wanted(documents=True, document_types=True, buckets=CHOSEN, scored_groups=True, examples=0)
    alone = Wanted(buckets=CHOSEN, scored_groups=True, examples=0)
    checked = 0
    for data in chunks(runs):
        part = count_part(data, options, wanted)
        # Every (document, bucket) pair a group, most of them empty: the table before this change.
        r, p = data.reference, data.predicted
        n_docs = int(data.doc_key.max()) + 1
        assigned = attributes.assign(CHOSEN, r, p, data.text, None)
        dense = []
        for a, (rb, pb) in zip(CHOSEN, assigned, strict=True):
            n = len(a.labels)
            dense.append(Groups(data.doc_key[r.unit] * n + rb, data.doc_key[p.unit] * n + pb, n_docs * n))
        tables = count_grouped(r, p, options, more_groups=tuple(dense), group_columns=scored).more_groups
        # Each bucket's totals counted with no documents at all (one group a bucket).
        totals = count_part(data, options, alone).buckets
        for a, table in zip(CHOSEN, tables, strict=True):
            n = len(a.labels)
            kept = np.flatnonzero((table[:, 0] > 0) | (table[:, 1] > 0))
            rows = part.bucket_documents[a.name]
            assert rows.names == a.labels
            assert rows.keys.tolist() == (kept // n).tolist()
            assert rows.type_index.tolist() == (kept % n).tolist()
            assert np.array_equal(rows.stats, table[kept])
            assert np.array_equal(part.buckets[a.name].stats, totals[a.name].stats)
            assert part.buckets[a.name].stats[:, scored].sum() > 0
            checked += 1
    assert checked >= 6


def test_a_documents_row_summed_from_its_types_is_the_row_counted_per_document(runs: dict[str, Path]) -> None:  # noqa: F811
    options = Scoring().options
    by_types = Wanted(documents=True, document_types=True, scored_groups=True, examples=0)
    direct = Wanted(documents=True, scored_groups=True, examples=0)
    several = 0
    for data in chunks(runs):
        a, b = count_part(data, options, by_types), count_part(data, options, direct)
        assert a.docs is not None and b.docs is not None and a.docs.type_rows is not None
        assert a.docs.fields == b.docs.fields and a.docs.keys.tolist() == b.docs.keys.tolist()
        assert np.array_equal(a.docs.stats, b.docs.stats)
        keys = a.docs.type_rows.keys
        several += int(np.count_nonzero(keys[1:] == keys[:-1]))  # documents of several types
    assert several > 50


def test_histograms_sent_back_by_a_worker_land_as_counted() -> None:
    rng = np.random.default_rng(3)
    small = Histogram.of(rng.integers(0, 200, (300, 7)), tuple("abcdefg"))
    wide = Histogram.of(rng.integers(0, 3000, (300, 7)), tuple("abcdefg"))
    many = Histogram(small.rows, small.counts * 70_000, small.fields)
    for h in (small, wide, many):
        sent = shipped(h, -1)
        if h is small:
            assert sent.rows.dtype == np.uint8 and sent.counts.dtype == np.uint16
        back = landed(sent)
        assert back.rows.dtype == h.rows.dtype and back.counts.dtype == h.counts.dtype == np.int64
        assert np.array_equal(back.rows, h.rows) and np.array_equal(back.counts, h.counts)
    # Counted where it is merged: nothing to send.
    assert shipped(small, os.getpid()) is small and landed(small) is small


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are set on Linux only")
def test_a_workers_result_pipe_holds_a_comparisons_part() -> None:
    import fcntl

    from spanscore.runtime import workers

    read, write = os.pipe()
    try:
        workers._widen(write)
        # 0.9 MB: a per-type bucket comparison's part of 512 KiB, its histograms sent compact.
        assert fcntl.fcntl(read, fcntl.F_GETPIPE_SZ) >= 1 << 20
    finally:
        os.close(read)
        os.close(write)


def test_a_small_training_corpus_is_indexed_without_forking(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    from spanscore.io import sources

    chosen = (attributes.attribute("seen"),)
    alone = api._train_index(chosen, str(runs["small_gold"]), Reading(), 1)

    def forked(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a training corpus of one chunk was read by forked processes")

    monkeypatch.setattr(sources, "forked_map", forked)
    index = api._train_index(chosen, str(runs["small_gold"]), Reading(), 2)
    assert alone is not None and index is not None
    assert np.array_equal(index.keys, alone.keys) and np.array_equal(index.counts, alone.counts)
    assert np.array_equal(index.occurrences, alone.occurrences)


def test_compare_is_the_same_with_workers_sending_compact_histograms(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setattr(api, "DEFAULT_CHUNK", 6000)  # tens of parts: two processes count them
    sent: list[int] = []
    real = shipped

    def counting(h: Histogram, home: int) -> Histogram:
        out = real(h, home)
        if out is not h:
            os.write(write, b"x")  # from the worker
        return out

    import spanscore.analysis.buckets as bucket_scores
    import spanscore.engines.paired as paired

    read, write = os.pipe()
    os.set_blocking(read, False)
    monkeypatch.setattr(paired, "shipped", counting)
    monkeypatch.setattr(bucket_scores, "shipped", counting)
    options: dict[str, Any] = {"resamples": 100, "trials": 100, "seed": 4}
    systems = [runs["a"], runs["b"]]
    try:
        for extra in ({}, {"per_type": True, "buckets": ["length", "sentence-length"]}):
            one, two = (
                spanscore.compare(reference=runs["gold"], systems=systems, jobs=jobs, **options, **extra).to_dict()
                for jobs in (1, 2)
            )
            assert one == two
            try:
                sent.append(len(os.read(read, 1 << 16)))
            except BlockingIOError:
                sent.append(0)
    finally:
        os.close(read)
        os.close(write)
    assert all(n > 0 for n in sent), sent  # a worker did send its histograms compact


def test_a_training_corpus_read_in_parts_finds_each_parts_words_once(runs: dict[str, Path]) -> None:  # noqa: F811
    # Each part's keys and occurrences from words found apart (as forked readers find them),
    # against the index that finds each part's words once for both.
    parts = [(d.reference, d.text) for d in chunks(runs, 8_000)]
    assert len(parts) > 3
    keyed = attributes.merge_keys([attributes.part_keys(spans, text) for spans, text in parts])
    apart = keyed.index([attributes.part_occurrences(text, keyed) for _, text in parts])
    once = attributes.build_index_parts(parts)
    for name in ("keys", "counts", "occurrences", "vocabulary"):
        assert np.array_equal(getattr(once, name), getattr(apart, name)), name
    assert once.types == apart.types and int(once.occurrences.sum()) > 0


KEYED = tuple(attributes.attribute(n) for n in ("seen", "frequency", "consistency"))


def test_mention_keys_from_the_words_inside_mentions_are_the_whole_texts(
    runs: dict[str, Path], tmp_path: Path  # noqa: F811
) -> None:
    index = api._train_index(KEYED, str(runs["small_gold"]), Reading(), 1)
    assert index is not None
    # A mention with a non-ASCII token: its words are found in the whole text, as before.
    accented = tmp_path / "accented.conll"
    accented.write_text("Zürich\tB-LOC\nis\tO\nbig\tO\n\nParis\tB-LOC\nToo\tO\n\n", encoding="utf-8")
    texts = [*chunks(runs), next(chunk for chunk in chunks({"gold": accented, "a": accented}))]
    inside = 0
    for data in texts:
        r, p = data.reference, data.predicted
        mine = attributes._Words.inside(data.text, (r, p))
        if mine is not None:
            inside += 1
            whole = attributes._Words.of(data.text)
            for spans in (r, p):
                got, expected = mine.keys(spans, data.text), whole.keys(spans, data.text)
                assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
        # A sentence attribute asks for the whole text's words: the mentions' buckets are the same.
        alone = attributes.assign(KEYED, r, p, data.text, index)
        beside = attributes.assign((*KEYED, attributes.attribute("sentence-length")), r, p, data.text, index)
        for (a_ref, a_pred), (b_ref, b_pred) in zip(alone, beside[:3], strict=True):
            assert np.array_equal(a_ref, b_ref) and np.array_equal(a_pred, b_pred)
    assert attributes._Words.inside(texts[-1].text, (texts[-1].reference,)) is None
    assert 0 < inside < len(texts)


@pytest.mark.parametrize("crowded", [0, 3, 40])
def test_keys_found_by_their_buckets_are_found_by_a_binary_search(runs: dict[str, Path], crowded: int) -> None:  # noqa: F811
    index = api._train_index(KEYED, str(runs["small_gold"]), Reading(), 1)
    assert index is not None
    rng = np.random.default_rng(crowded)
    # Keys picked to share one bucket crowd it: a binary search then.
    bits = (index.keys.shape[0] + crowded).bit_length()
    pool = rng.integers(0, 1 << 63, 200_000, dtype=np.uint64)
    crowd = pool[attributes._mixed(pool, bits) == 0][:crowded]
    keys = np.unique(np.concatenate([index.keys, crowd]))
    hashes = np.concatenate([keys, rng.integers(0, 1 << 63, 5_000, dtype=np.uint64), keys[:50] + np.uint64(1)])
    rng.shuffle(hashes)
    lookup = attributes._Lookup.of(keys)
    assert (lookup.depth > 8) == (crowded == 40)
    assert np.array_equal(lookup.find(hashes), attributes._find(keys, hashes))
    empty = attributes._Lookup.of(np.zeros(0, dtype=np.uint64))
    assert np.array_equal(empty.find(hashes[:5]), np.full(5, -1))


def taxonomy_field_by_field(m: Any, pairs: Any, ref_key: Any, pred_key: Any, n: int, n_ref: int, n_pred: int) -> Any:
    """The error taxonomy counted a field at a time from its definition (docs/criteria.md)."""
    from spanscore.stages import counts
    from spanscore.stages.matching import EXACT, SAME_END, SAME_SPAN, SAME_START

    out = np.zeros((len(counts.ERROR_FIELDS), n), dtype=np.int64)
    kind, rt, rel = pairs.kind[m.pair], ref_key[pairs.ref[m.pair]], pairs.relation()[m.pair]

    def add(name: str, keys: Any, where: Any) -> None:
        out[counts.ERROR_FIELDS.index(name)] += np.bincount(keys[where], minlength=n)

    wrong = np.isin(kind, counts.WRONG_LABEL_OVERLAP_KINDS)
    rlo = np.isin(kind, counts.RIGHT_LABEL_OVERLAP_KINDS)
    add("correct", rt, kind == EXACT)
    add("wrong_label_same_span", rt, kind == SAME_SPAN)
    add("wrong_label_overlap", rt, wrong)
    add("right_label_overlap", rt, rlo)
    add("right_label_overlap_longer", rt, rlo & (rel == 1))
    add("right_label_overlap_shorter", rt, rlo & (rel == 2))
    add("right_label_overlap_shifted", rt, rlo & (rel == 3))
    add("right_label_overlap_left_match", rt, rlo & ((kind & SAME_START) > 0))
    add("right_label_overlap_right_match", rt, rlo & ((kind & SAME_END) > 0))
    ref_matched, pred_matched = np.zeros(n_ref, dtype=bool), np.zeros(n_pred, dtype=bool)
    ref_matched[pairs.ref[m.pair]] = True
    pred_matched[pairs.pred[m.pair]] = True
    ref_overlaps, pred_overlaps = np.zeros(n_ref, dtype=bool), np.zeros(n_pred, dtype=bool)
    ref_overlaps[pairs.ref] = True
    pred_overlaps[pairs.pred] = True
    add("false_positive", pred_key, ~pred_matched)
    add("false_positive_overlapping", pred_key, ~pred_matched & pred_overlaps)
    add("false_negative", ref_key, ~ref_matched)
    add("false_negative_overlapping", ref_key, ~ref_matched & ref_overlaps)
    return out


def test_the_error_taxonomy_tallied_at_once_is_counted_field_by_field(runs: dict[str, Path]) -> None:  # noqa: F811
    from spanscore.stages import counts
    from spanscore.stages.matching import find_pairs

    rng = np.random.default_rng(3)
    options = Scoring().options
    checked = 0
    for data in chunks(runs):
        r, p = data.reference, data.predicted
        m = count_grouped(r, p, options).taxonomy
        pairs = find_pairs(r, p)
        kinds = counts._ErrorKinds.of(m, pairs, len(r), len(p))
        for n in (1, 7, 300):
            ref_key, pred_key = rng.integers(0, n, len(r)), rng.integers(0, n, len(p))
            expected = taxonomy_field_by_field(m, pairs, ref_key, pred_key, n, len(r), len(p))
            assert np.array_equal(kinds.tally(ref_key, pred_key, n), expected)
            checked += int(expected.sum())
    assert checked > 0


def test_each_attributes_other_totals_counted_together_are_counted_apart(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    from spanscore.stages import counts

    index = api._train_index(KEYED, str(runs["small_gold"]), Reading(), 1)
    chosen = (attributes.attribute("length"), attributes.attribute("sentence-length"), KEYED[0], KEYED[2])
    for scoring in (Scoring(), Scoring(credit="dice")):
        for documents in (True, False):
            wanted = Wanted(documents=documents, buckets=chosen, train=index, scored_groups=True, examples=0)
            for data in chunks(runs)[:4]:
                together = count_part(data, scoring.options, wanted)
                monkeypatch.setattr(counts, "_COMBINED", 0)
                apart = count_part(data, scoring.options, wanted)
                monkeypatch.undo()
                assert together.buckets.keys() == apart.buckets.keys() and len(together.buckets) == len(chosen)
                for name, rows in together.buckets.items():
                    assert np.array_equal(rows.stats, apart.buckets[name].stats), name
