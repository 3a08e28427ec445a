"""Bucket compare lets each group's joint histogram go once its paired tests are queued
(analysis/buckets.py ``compare_groupings``, analysis/significance.py ``compare_histograms``): the
groups' histograms grow with the corpus, and the caller used to hold every one of them until the
end of the run. Their mention totals are taken first, so the output is the same."""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_compare import perturb, sentences, write_conll

import spanscore
from spanscore.analysis import buckets, significance
from spanscore.analysis.buckets import compare_groupings, joint_groups
from spanscore.analysis.significance import Resampling


def _table(hist: Any) -> tuple[Any, Any]:
    whole = hist.compacted()
    return whole.rows, whole.counts


def _files(btc: Path, tmp_path: Path) -> list[Path]:
    gold = sentences(btc / "test.txt")[:1200]
    return [
        write_conll(tmp_path / "gold.conll", gold),
        write_conll(tmp_path / "a.conll", perturb(gold, 1, 0.45)),
        write_conll(tmp_path / "b.conll", perturb(gold, 2, 0.35)),
    ]


def test_group_histograms_freed_once_queued(btc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Weak references to every group's histogram as ``compare`` hands them over; each time a
    # batch is scored, those queued so far must be gone (nothing else holds them), and by the
    # last batch every one.
    files = _files(btc, tmp_path)
    refs: list[weakref.ref[Any]] = []
    alive: list[int] = []
    original_groupings = buckets.compare_groupings
    original_batch = significance._compare_batch

    def groupings(*args: Any, **kwargs: Any) -> Any:
        for groups in args[1].values():
            for _, hist in groups:
                assert hist.compacted() is hist  # the very histograms the tests read
                refs.append(weakref.ref(hist))
        del hist  # (the loop's name would hold the last one)
        return original_groupings(*args, **kwargs)

    def batch(*args: Any) -> Any:
        alive.append(sum(r() is not None for r in refs))
        return original_batch(*args)

    monkeypatch.setattr(buckets, "compare_groupings", groupings)
    monkeypatch.setattr(significance, "_compare_batch", batch)
    monkeypatch.setattr(significance, "_threads", lambda: 2)  # batches of two histograms
    compared = spanscore.compare(
        reference=files[0], systems=files[1:], per_type=True, buckets=["length"], resamples=50, trials=50,
    )
    assert compared.groups is not None and len(refs) >= 6
    # Three batches or more: at the first one scored, two batches are queued (three groups and
    # the corpus's histogram); at the last, every group.
    assert len(alive) >= 3
    assert alive[0] <= len(refs) - 3
    assert alive[-1] == 0
    assert alive == sorted(alive, reverse=True)


def test_consumed_groupings_give_the_same_numbers(btc: Path, tmp_path: Path) -> None:
    # The same groups tested with and without letting them go: the same tests and mention totals
    # (counted here from each group's rows in Python integers), and the lists emptied.
    files = _files(btc, tmp_path)
    reports = [
        spanscore.evaluate(
            reference=files[0], predicted=p, documents=True, document_types=True, buckets=["length"],
            keep_details=False,
        )
        for p in files[1:]
    ]

    def made() -> dict[str, list[Any]]:
        docs = [r.documents for r in reports if r.documents]
        lengths = [(r.bucket_rows or {})["length"] for r in reports]
        return {
            "per_type": joint_groups([(d, d.type_rows) for d in docs], "0.5"),
            "length": joint_groups(list(zip(docs, lengths, strict=True)), "0.5"),
        }

    options: dict[str, Any] = {
        "zero_division": 0.0, "credit": "0.5", "resampling": Resampling(resamples=100, trials=100, seed=5),
    }
    kept = made()
    expected = compare_groupings(None, kept, ["a", "b"], **options)[1]
    given = made()
    counted = {
        g: [
            [sum(int(c) * int(row[h.fields.index(f)]) for row, c in zip(*_table(h), strict=True))
             for f in ("0:reference", "0:predicted", "1:predicted")]
            for _, h in groups
        ]
        for g, groups in given.items()
    }
    got = compare_groupings(None, given, ["a", "b"], **options, consume=True)[1]
    assert got == expected
    assert all(not groups for groups in given.values())
    assert all(groups for groups in kept.values())
    for g, rows in got.items():
        assert [[r["reference_mentions"], *(s["predicted_mentions"] for s in r["systems"])] for r in rows] == counted[g]
    assert np.all([len(rows) for rows in got.values()])
