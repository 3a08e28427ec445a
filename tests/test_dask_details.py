"""``evaluate(engine=DaskEngine(...))`` keeps the matched pairs only where asked (``keep_details=True``):
by default its workers would send every chunk's pairs and text back for ``Report.pair_rows``, which
a run on a cluster rarely reads. The numbers are the same either way, and the same as the local
engine's, which keeps the pairs by default (they are already in this process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import spanscore
from spanscore.errors import NoDetails, OptionError

pytest.importorskip("distributed")
from spanscore.engines.dask_engine import DaskEngine


def test_dask_runs_keep_the_pairs_only_where_asked(btc: Path) -> None:
    gold = btc / "dev.txt"
    local = spanscore.evaluate(reference=gold, predicted=gold, ci=0.95, resamples=50)
    assert local.has_details  # the local default is unchanged
    engine = DaskEngine(n_workers=2, partition_bytes=20000)
    plain = spanscore.evaluate(reference=gold, predicted=gold, ci=0.95, resamples=50, engine=engine)
    assert not plain.has_details
    with pytest.raises(NoDetails, match="keep_details=True"):
        next(plain.pair_rows("strict"))
    asked = spanscore.evaluate(reference=gold, predicted=gold, ci=0.95, resamples=50, engine=engine, keep_details=True)
    assert asked.has_details
    assert list(asked.pair_rows("overlap")) == list(local.pair_rows("overlap"))
    dumped = [json.dumps(r.to_dict(), sort_keys=True) for r in (local, plain, asked)]
    assert dumped[0] == dumped[1] == dumped[2]


def test_keep_details_is_true_false_or_left_out(btc: Path) -> None:
    with pytest.raises(OptionError, match="keep_details is True or False"):
        spanscore.evaluate(reference=btc / "dev.txt", predicted=btc / "dev.txt", keep_details="yes")  # type: ignore[arg-type]
