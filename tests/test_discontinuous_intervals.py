"""Intervals of the discontinuous figures (Dai et al. 2020) and their per-document rows.

On the PGxCorpus excerpt (BRAT, 40 documents, 13 discontinuous mentions) against a seeded
prediction that keeps some discontinuous mentions and joins others into their extents: the
intervals come from the document bootstrap, are the same whatever the chunks, workers or
per-document rows, contain their point values, and agree within Monte Carlo error with a
bootstrap written here in plain Python over documents counted by hand from the ``.ann`` files.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_discontinuous import REAL, _ann, _corpus, write_brat

import spanscore
from spanscore.errors import FewUnitsWarning

Mentions = list[tuple[str, list[tuple[int, int]]]]


def _prediction(tmp_path: Path, seed: int) -> Path:
    """Each discontinuous mention kept or joined into its extent, and one continuous mention in
    five dropped (seeded): every figure then has errors to resample."""
    rng = random.Random(seed)
    out = {}
    for name, (text, ms) in _corpus().items():
        changed: Mentions = []
        for label, pieces in ms:
            if len(pieces) > 1 and rng.random() < 0.5:
                pieces = [(pieces[0][0], pieces[-1][1])]
            elif len(pieces) == 1 and rng.random() < 0.2:
                continue
            changed.append((label, pieces))
        out[name] = (text, changed)
    return write_brat(tmp_path / "pred", out)


@pytest.fixture(scope="module")
def pred(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _prediction(tmp_path_factory.mktemp("disc"), seed=5)


def _by_hand(pred: Path) -> dict[str, tuple[int, ...]]:
    """Each document's counts in plain Python: discontinuous mentions (reference, predicted,
    correct), and every mention of a document whose reference holds one (reference, predicted,
    correct); correct is a multiset match of (type, fragments)."""
    out = {}
    for name, (_, ms) in _corpus().items():
        gold = Counter((label, tuple(p)) for label, p in ms)
        hyp = Counter((label, tuple(p)) for label, p in _ann(pred / f"{name}.ann"))
        disc_gold = Counter({k: v for k, v in gold.items() if len(k[1]) > 1})
        disc_hyp = Counter({k: v for k, v in hyp.items() if len(k[1]) > 1})
        mentions = (sum(disc_gold.values()), sum(disc_hyp.values()), sum((disc_gold & disc_hyp).values()))
        held = bool(disc_gold)
        units = (sum(gold.values()), sum(hyp.values()), sum((gold & hyp).values())) if held else (0, 0, 0)
        out[name] = (*mentions, *units, int(held))
    return out


def _f1(t: np.ndarray[Any, Any], at: int) -> np.ndarray[Any, Any]:
    ref, pred, correct = t[..., at], t[..., at + 1], t[..., at + 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(pred > 0, correct / np.where(pred > 0, pred, 1), 0.0)
        r = np.where(ref > 0, correct / np.where(ref > 0, ref, 1), 0.0)
        f = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)
    return {"precision": p, "recall": r, "f1": f}  # type: ignore[return-value]


def test_the_rows_add_up_to_the_figures_and_match_a_count_by_hand(pred: Path) -> None:
    report = spanscore.evaluate(reference=REAL, predicted=pred, format="brat", documents=True)
    figures = report.to_dict()["discontinuous"]
    hand = _by_hand(pred)
    totals = np.array(list(hand.values())).sum(axis=0)
    assert (figures["mentions"]["reference"], figures["mentions"]["predicted"], figures["mentions"]["correct"]) == (
        tuple(totals[:3])
    )
    assert figures["units"]["units"] == totals[6] == 7
    assert 0 < figures["mentions"]["correct"] < figures["mentions"]["reference"]  # errors to resample
    rows = list(report.document_rows())
    assert len(rows) == 40
    for row in rows:
        d = row["discontinuous"]
        m, u = d["mentions"], d["units"]
        assert (
            m["reference"],
            m["predicted"],
            m["correct"],
            u["reference"],
            u["predicted"],
            u["correct"],
            u["units"],
        ) == hand[row["id"]], row["id"]
        if m["reference"]:
            assert m["recall"] == m["correct"] / m["reference"]


def test_the_intervals_are_the_same_whatever_the_chunks_workers_and_rows(pred: Path) -> None:
    ci: dict[str, Any] = {"ci": 0.9, "resamples": 500, "seed": 3}
    whole = spanscore.evaluate(reference=REAL, predicted=pred, format="brat", **ci).intervals
    assert whole is not None
    for options in (
        {"chunk_bytes": 300},
        {"chunk_bytes": 300, "jobs": 2},
        {"documents": True},
        {"chunk_bytes": 700, "documents": True},
    ):
        other = spanscore.evaluate(reference=REAL, predicted=pred, format="brat", **ci, **options).intervals
        assert other is not None
        assert other["discontinuous"] == whole["discontinuous"], options
    # A new seed draws other resamples.
    again = spanscore.evaluate(reference=REAL, predicted=pred, format="brat", ci=0.9, resamples=500, seed=4)
    assert again.intervals is not None and again.intervals["discontinuous"] != whole["discontinuous"]


def test_each_interval_holds_its_value_and_all_mentions_are_the_strict_score(pred: Path) -> None:
    report = spanscore.evaluate(reference=REAL, predicted=pred, format="brat", ci=0.95, resamples=1000)
    assert report.intervals is not None
    figures = report.to_dict()["discontinuous"]
    got = report.intervals["discontinuous"]
    assert got["all"] == {m: report.intervals["scores"]["strict"][m] for m in ("precision", "recall", "f1")}
    for name in ("mentions", "units"):
        for metric in ("precision", "recall", "f1"):
            block = got[name][metric]
            assert block["value"] == figures[name][metric]
            assert block["low"] <= block["value"] <= block["high"], (name, metric)
            assert block["low"] < block["high"], (name, metric)  # 40 documents do vary
    assert report.to_dict()["intervals"]["discontinuous"] == got  # in the JSON too
    from typing import is_typeddict

    from spanscore import results

    def keys(typed: Any, value: Any) -> None:
        assert is_typeddict(typed)
        assert typed.__required_keys__ <= set(value) <= typed.__required_keys__ | typed.__optional_keys__

    keys(results.Intervals, report.intervals)
    keys(results.DiscontinuousIntervals, got)
    for block in got.values():
        for interval in block.values():
            keys(results.Interval, interval)


def test_the_intervals_agree_with_a_bootstrap_over_documents_written_here(pred: Path) -> None:
    from spanscore.analysis import discontinuous
    from spanscore.analysis.significance import Resampling

    resamples = 4000
    # 80%: the 10% quantile keeps clear of the resamples without a predicted discontinuous mention
    # (about one in twenty here), whose precision is zero_division: a quantile on such a jump
    # flips between the jump's two sides from one set of draws to another.
    report = spanscore.evaluate(
        reference=REAL, predicted=pred, format="brat", ci=0.8, resamples=resamples, documents=True
    )
    assert report.intervals is not None
    got = report.intervals["discontinuous"]
    ours = discontinuous.resampled(
        discontinuous.histogram(report.discontinuous_documents, 40), Resampling(resamples=resamples)
    )
    table = np.array(list(_by_hand(pred).values()), dtype=np.float64)
    rng = np.random.default_rng(20260527)
    drawn = table[rng.integers(0, table.shape[0], size=(resamples, table.shape[0]))].sum(axis=1)
    for name, at, at_ours in (("mentions", 0, 0), ("units", 3, 5)):
        theirs = _f1(drawn, at)
        mine = _f1(ours[:, [at_ours, at_ours + 1, at_ours + 3]], 0)
        for metric in ("precision", "recall", "f1"):
            a, b = mine[metric], theirs[metric]
            # The same distribution: means within four standard errors, spreads within a quarter.
            z = (a.mean() - b.mean()) / np.sqrt((a.var() + b.var()) / resamples)
            assert abs(z) < 4, (name, metric, z)
            assert 0.8 < a.std() / b.std() < 1.25, (name, metric, a.std(), b.std())
            # The reported interval: the quantiles of those draws, and within a step of a count
            # (13 discontinuous mentions: about a tenth) of the other bootstrap's.
            low, high = np.quantile(b, [0.1, 0.9])
            assert (got[name][metric]["low"], got[name][metric]["high"]) == tuple(np.quantile(a, [0.1, 0.9]))
            assert abs(got[name][metric]["low"] - low) <= 0.1, (name, metric, got[name][metric], low)
            assert abs(got[name][metric]["high"] - high) <= 0.1, (name, metric, got[name][metric], high)


def test_no_discontinuous_intervals_without_discontinuous_mentions(tmp_path: Path) -> None:
    text = "Aspirin helps"
    gold = write_brat(tmp_path / "g", {"a": (text, [("DRUG", [(0, 7)])]), "b": (text, [])})
    with pytest.warns(FewUnitsWarning):
        report = spanscore.evaluate(reference=gold, predicted=gold, format="brat", ci=0.9, resamples=50)
    assert report.intervals is not None and "discontinuous" not in report.intervals
    assert all(
        "discontinuous" not in row
        for row in spanscore.evaluate(reference=gold, predicted=gold, format="brat", documents=True).document_rows()
    )


def test_the_cli_prints_the_intervals_and_the_per_document_rows(pred: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from spanscore.cli.main import cli

    args = ["evaluate", str(REAL), str(pred), "--format", "brat", "--ci", "0.9", "--resamples", "200", "--no-per-type"]
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    import json

    data = json.loads(result.output)
    got = data["intervals"]["discontinuous"]
    text = CliRunner().invoke(cli, args, env={"COLUMNS": "160"}).output
    assert "Discontinuous mentions: strict scores with 90% intervals" in text
    low, high = got["mentions"]["f1"]["low"], got["mentions"]["f1"]["high"]
    assert f"[{100 * low:.2f}, {100 * high:.2f}]" in text
    rows_file = tmp_path / "rows.jsonl"
    result = CliRunner().invoke(
        cli, ["evaluate", str(REAL), str(pred), "--format", "brat", "--per-document", str(rows_file)]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in rows_file.read_text(encoding="utf-8").splitlines()]
    assert sum(r["discontinuous"]["mentions"]["correct"] for r in rows) == data["discontinuous"]["mentions"]["correct"]
