"""Side by side, each chunk's documents that lie whole in it are paired into the systems' joint
histograms (the corpus's, and each group's for per-type and bucket comparisons) in the process
that counts the chunk: only the first and last document of a chunk, which a chunk boundary may
cut, go back as rows. What the evaluating process gets is checked here; that the histograms are
the same as pairing every row is checked by tests/test_compare_paired.py and
tests/test_bucket_histograms.py, and end to end by the same outputs for every chunk size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from test_bucket_histograms import BUCKETS, runs  # noqa: F401  (the fixture)
from test_compare import btc_runs  # noqa: F401  (the fixture)
from test_group_tables import expected_groups

from spanscore.analysis.buckets import GroupCounter, _JoinedGroups
from spanscore.analysis.significance import resampled_columns
from spanscore.engines import LocalEngine, PartCounter
from spanscore.engines.paired import _Joined, side_by_side
from spanscore.io.reading import Reading
from spanscore.io.sources import open_source
from spanscore.stages.buckets import attribute
from spanscore.stages.documents import Histogram
from spanscore.stages.parts import Wanted
from spanscore.stages.scoring import Scoring, TypeSelection


def test_each_chunk_sends_back_only_its_cut_documents_as_rows(btc_runs: dict[str, Path]) -> None:  # noqa: F811
    wanted = Wanted(documents=True, narrow=True, examples=0)
    counters = [
        PartCounter(
            open_source(btc_runs["gold"], btc_runs[n], Reading(), TypeSelection(), 3000), Scoring().options, wanted
        )
        for n in ("a", "b")
    ]
    together = side_by_side(counters, LocalEngine(1))
    assert together is not None
    joined = _Joined(together, lambda f: resampled_columns(f, "0.5"))
    paired = 0
    for items in joined.plan():
        whole = together(items)
        results, inner = joined(items)
        n = whole[0].docs.keys.shape[0] if whole[0].docs is not None else 0
        if n <= 2:
            assert inner is None
            continue
        paired += 1
        assert isinstance(inner, Histogram) and inner.documents == n - 2
        for r, w in zip(results, whole, strict=True):
            assert r.docs is not None and w.docs is not None
            assert r.docs.keys.tolist() == w.docs.keys[[0, -1]].tolist()
            assert np.array_equal(r.docs.stats, w.docs.stats[[0, -1]])
        # The inner documents' joint rows, as the evaluating process would pair them.
        cols = [resampled_columns(w.docs.fields, "0.5") for w in whole if w.docs is not None]
        stats = np.hstack([np.take(w.docs.stats, c, axis=1)[1:-1] for w, c in zip(whole, cols, strict=True)])
        expected = Histogram.of(stats, inner.fields)
        assert np.array_equal(inner.rows, expected.rows) and np.array_equal(inner.counts, expected.counts)
    assert paired > 3


def test_each_chunk_pairs_its_whole_documents_per_group(runs: dict[str, Path]) -> None:  # noqa: F811
    chosen = tuple(attribute(n) for n in BUCKETS)
    wanted = Wanted(documents=True, document_types=True, buckets=chosen, examples=0)
    counters = [
        GroupCounter(open_source(runs["gold"], runs[n], Reading(), TypeSelection(), 2000), Scoring().options, wanted)
        for n in ("a", "b")
    ]
    together = side_by_side(counters, LocalEngine(1))
    assert together is not None
    joined = _JoinedGroups(together)
    paired = 0
    for items in joined.plan():
        whole = together(items)
        results, inner = joined(items)
        docs = whole[0].docs
        if docs is None or docs.keys.shape[0] <= 2:
            assert inner is None
            continue
        paired += 1
        assert inner is not None
        corpus, groups = inner.joint, inner.per_group
        assert corpus.documents == docs.keys.shape[0] - 2
        ends = docs.keys[[0, -1]]
        for r, w in zip(results, whole, strict=True):
            assert r.docs is not None and w.docs is not None
            assert r.docs.type_rows is not None and w.docs.type_rows is not None
            assert r.docs.type_rows.names == w.docs.type_rows.names
            assert set(r.docs.type_rows.keys.tolist()) <= set(ends.tolist())
            at_ends = np.isin(w.docs.type_rows.keys, ends)
            assert r.docs.type_rows.keys.shape[0] == int(at_ends.sum())
        # Each group's histogram holds the inner documents with a mention in that group (either side).
        for name, h in groups.items():
            held = set()
            for w in whole:
                assert w.docs is not None and w.docs.type_rows is not None
                t = w.docs.type_rows
                mine = np.array([t.names[i] == name for i in t.type_index.tolist()], dtype=bool)
                held |= {k for k in t.keys[mine].tolist() if k not in ends.tolist()}
            assert h.documents == len(held), name
        # And its rows are each inner document's rows in the group, the systems side by side.
        rows = []
        for w in whole:
            assert w.docs is not None and w.docs.type_rows is not None
            t = w.docs.type_rows
            inner_rows = ~np.isin(t.keys, ends)
            named = np.array([sorted(groups).index(t.names[i]) if t.names[i] in groups else -1
                              for i in t.type_index.tolist()], dtype=np.int64)
            rows.append((t.keys[inner_rows], named[inner_rows], t.stats[inner_rows]))
        expected = expected_groups(rows, [r[2].shape[1] for r in rows])
        assert sorted(expected) == list(range(len(groups)))
        for g, counted in expected.items():
            h = groups[sorted(groups)[g]]
            assert [tuple(r) for r in h.rows.tolist()] == sorted(counted)
            assert h.counts.tolist() == [counted[tuple(r)] for r in h.rows.tolist()]
    assert paired > 3


def test_systems_side_by_side_share_the_references_text_and_its_words(btc_runs: dict[str, Path]) -> None:  # noqa: F811
    import gc

    from spanscore.stages import buckets as attributes

    seen: list[object] = []

    class Noting(PartCounter):
        def count(self, item, data):  # type: ignore[no-untyped-def]
            seen.append(data.text)
            return super().count(item, data)

    counters = [
        Noting(
            open_source(btc_runs["gold"], btc_runs[n], Reading(), TypeSelection(), 3000), Scoring().options, Wanted()
        )
        for n in ("a", "b", "a")
    ]
    together = side_by_side(counters, LocalEngine(1))
    assert together is not None
    items = next(iter(together.plan()))
    together(items)
    assert len(seen) == 3 and seen[0] is seen[1] is seen[2]
    # The words of one text are found once; another text (an equal one) gets its own.
    text = seen[0]
    words = attributes._words_of(text)  # type: ignore[arg-type]
    assert attributes._words_of(text) is words  # type: ignore[arg-type]
    other = counters[0].source.load(items[0].part).text
    assert other is not text and attributes._words_of(other) is not words
    assert np.array_equal(attributes._words_of(other).start, words.start)
    # Nothing is kept alive for it.
    del seen[:], text, other
    gc.collect()
    assert attributes._last_words is None or attributes._last_words[0]() is None
