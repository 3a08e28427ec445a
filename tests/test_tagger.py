"""spanscore train / predict: a small CRF on BTC, prediction files that line up, safe model files."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import InputError
from spanscore.programs.demo import sentence_chunks
from spanscore.programs.tagger import (
    MODEL_FORMAT_VERSION,
    CrfConfig,
    ProgressEvent,
    load_model,
    predict_file,
    read_meta,
    read_sentences,
    train_crf,
)

pytest.importorskip("sklearn_crfsuite")


def head(src: Path, dst: Path, n: int) -> Path:
    dst.write_bytes(b"\n".join(sentence_chunks(src.read_bytes())[:n]) + b"\n")
    return dst


@pytest.fixture(scope="module")
def small(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A CRF trained on 500 BTC tweets for 40 iterations, and 100 test tweets."""
    d = tmp_path_factory.mktemp("crf")
    files = {
        "train": head(btc / "train.txt", d / "train.txt", 500),
        "dev": head(btc / "dev.txt", d / "dev.txt", 50),
        "test": head(btc / "test.txt", d / "test.txt", 100),
        "model": d / "btc.crf",
    }
    res = CliRunner().invoke(
        cli, ["train", "crf", str(files["train"]), "--dev", str(files["dev"]), "-o", str(files["model"]),
              "--iterations", "40"],
    )
    assert res.exit_code == 0, res.output
    assert "trained crf on 500 sentences" in res.output
    return files


def test_predict_then_evaluate(small: dict[str, Path], tmp_path: Path) -> None:
    pred = tmp_path / "test.pred"
    res = CliRunner().invoke(cli, ["predict", str(small["model"]), str(small["test"]), "-o", str(pred)])
    assert res.exit_code == 0, res.output
    gold_lines = small["test"].read_bytes().split(b"\n")
    pred_lines = pred.read_bytes().split(b"\n")
    assert len(gold_lines) == len(pred_lines)
    assert [ln.split(b"\t")[0] for ln in gold_lines] == [ln.split(b"\t")[0] for ln in pred_lines]
    report = spanscore.evaluate(reference=small["test"], predicted=pred)
    assert report.counts.sentences == 100
    assert report.metrics["strict"]["f1"] > 0.05  # a weak tagger, but not one that predicts only O
    res = CliRunner().invoke(cli, ["evaluate", str(small["test"]), str(pred), "--json"])
    assert res.exit_code == 0, res.output


def test_predict_keeps_the_file_layout(small: dict[str, Path], tmp_path: Path) -> None:
    src = tmp_path / "odd.conll"
    src.write_bytes(b"-DOCSTART- -X- O\r\n\r\n# a long comment\r\n@ NN B-PER\r\nbob NN O\r\n\r\nhi UH O")
    out = tmp_path / "odd.pred"
    predict_file(small["model"], src, out)
    lines = out.read_bytes().split(b"\r\n")
    assert lines[:3] == [b"-DOCSTART- -X- O", b"", b"# a long comment"]
    assert [ln.split(b" ")[:2] for ln in lines[3:5]] == [[b"@", b"NN"], [b"bob", b"NN"]]
    assert not out.read_bytes().endswith(b"\n")
    # Tokens only: the predictions become a new column; --append adds one to a labelled file.
    tokens = tmp_path / "tokens.txt"
    tokens.write_bytes(b"@\nbob\n\nhi\n")
    result = predict_file(small["model"], tokens, tmp_path / "tokens.pred")
    assert result.appended and result.sentences == 2
    assert [len(ln.split(b"\t")) for ln in (tmp_path / "tokens.pred").read_bytes().split(b"\n") if ln] == [2, 2, 2]
    merged = tmp_path / "merged.txt"
    res = CliRunner().invoke(cli, ["predict", str(small["model"]), str(small["test"]), "-o", str(merged), "--append"])
    assert res.exit_code == 0, res.output
    assert spanscore.evaluate(reference=merged, merged=True).counts.sentences == 100


def test_model_file_format(small: dict[str, Path], tmp_path: Path) -> None:
    meta = read_meta(small["model"])
    assert meta["format"] == "spanscore-tagger" and meta["format_version"] == MODEL_FORMAT_VERSION
    assert meta["kind"] == "crf" and "B-PER" in meta["labels"]
    assert meta["training"]["train_sentences"] == 500 and meta["training"]["iterations"] == 40
    assert load_model(small["model"]).kind == "crf"

    newer = tmp_path / "newer.crf"
    with zipfile.ZipFile(small["model"]) as zin, zipfile.ZipFile(newer, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == "spanscore-model.json":
                data = json.dumps({**json.loads(data), "format_version": MODEL_FORMAT_VERSION + 1}).encode()
            zout.writestr(item, data)
    with pytest.raises(InputError, match="newer spanscore"):
        load_model(newer)
    junk = tmp_path / "junk.crf"
    junk.write_bytes(b"not a model")
    with pytest.raises(InputError, match="not a spanscore model"):
        load_model(junk)
    res = CliRunner().invoke(cli, ["predict", str(junk), str(small["test"]), "-o", str(tmp_path / "p")])
    assert res.exit_code == 2 and "not a spanscore model" in res.output


def test_interrupted_training_writes_nothing(btc: Path, tmp_path: Path) -> None:
    train = read_sentences(btc / "train.txt").head(50)
    target = tmp_path / "model.crf"
    target.write_bytes(b"previous model")

    def progress(event: ProgressEvent) -> None:
        if event.stage == "train" and event.done >= 3:
            raise KeyboardInterrupt  # what Ctrl-C raises

    with pytest.raises(KeyboardInterrupt):
        train_crf(train, target, config=CrfConfig(max_iterations=50), progress=progress)
    assert target.read_bytes() == b"previous model"
    assert [p.name for p in tmp_path.iterdir()] == ["model.crf"]


def test_training_errors(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_bytes(b"a\nb\n")
    res = CliRunner().invoke(cli, ["train", "crf", str(tokens), "-o", str(tmp_path / "m")])
    assert res.exit_code == 2 and "label column" in res.output
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("limit", ["0", "-5", "nan"])
def test_flair_time_limit_must_be_positive(btc: Path, tmp_path: Path, limit: str) -> None:
    out = tmp_path / "m.flair"
    res = CliRunner().invoke(cli, ["train", "flair", str(btc / "train.txt"), "-o", str(out), "--time-limit", limit])
    assert res.exit_code == 2 and "--time-limit must be a positive number of seconds" in res.output
    assert not out.exists()
