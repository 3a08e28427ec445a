"""The shipped samples: every format holds the same run, so every criterion scores it alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import OptionError
from spanscore.programs.samples import write_samples


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("samples") / "s"
    out = CliRunner().invoke(cli, ["samples", str(folder)])
    assert out.exit_code == 0, out.output
    assert len(out.output.splitlines()) == 18  # llm/gold.jsonl, llm/llm.jsonl and discontinuous/ among them
    return folder


def _scores(report: spanscore.Report) -> dict[str, tuple[float, float, float]]:
    return {k: (v["precision"], v["recall"], v["f1"]) for k, v in report.metrics.items() if k != "token"}


def test_every_format_of_the_samples_scores_as_the_conll_pair(samples: Path) -> None:
    conll = spanscore.evaluate(reference=samples / "gold.conll", predicted=samples / "pred.conll")
    assert conll.counts.documents == 3 and conll.counts.sentences == 18
    assert int(conll.counts.reference.sum()) == 41 and int(conll.counts.predicted.sum()) == 42
    # Every criterion differs from strict on this run: the samples show what partial credit does.
    scores = _scores(conll)
    assert len({v[2] for v in scores.values()}) >= 4
    runs = {
        "jsonl": dict(reference=samples / "gold.jsonl", predicted=samples / "pred.jsonl", format="jsonl"),
        "brat": dict(reference=samples / "brat/gold", predicted=samples / "brat/pred", format="brat"),
        "doccano": dict(reference=samples / "doccano/gold.jsonl", predicted=samples / "doccano/pred.jsonl",
                        format="doccano"),
        "prodigy": dict(reference=samples / "prodigy/gold.jsonl", predicted=samples / "prodigy/pred.jsonl",
                        format="prodigy"),
        "label-studio": dict(reference=samples / "label-studio/gold.json", predicted=samples / "label-studio/pred.json",
                             format="label-studio", predicted_options={"source": "predictions"}),
        "strings": dict(reference=samples / "gold.jsonl", predicted=samples / "llm.jsonl", format="jsonl",
                        predicted_format="strings"),
    }
    for name, kwargs in runs.items():
        report = spanscore.evaluate(**kwargs)  # type: ignore[arg-type]
        got = _scores(report)
        for criterion, value in scores.items():
            assert got[criterion] == pytest.approx(value), (name, criterion)


def test_the_samples_folder_must_be_new_or_empty(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("mine")
    with pytest.raises(OptionError, match="new or empty folder"):
        write_samples(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["kept.txt"]


def test_every_command_that_takes_a_format_takes_its_folders_and_options(samples: Path, tmp_path: Path) -> None:
    import json

    runner = CliRunner()
    common = ["--resamples", "50", "--trials", "50", "--json"]
    brat = runner.invoke(
        cli, ["compare", str(samples / "brat/gold"), str(samples / "brat/pred"), str(samples / "brat/gold"),
              "--format", "brat", *common]
    )
    assert brat.exit_code == 0, brat.output
    strict = [s["metrics"]["strict"]["f1"]["value"] for s in json.loads(brat.output)["systems"]]
    conll = spanscore.evaluate(reference=samples / "gold.conll", predicted=samples / "pred.conll")
    assert strict == [pytest.approx(conll.metrics["strict"]["f1"]), 1.0]
    studio = runner.invoke(
        cli, ["compare", str(samples / "label-studio/gold.json"), str(samples / "label-studio/pred.json"),
              "--format", "label-studio", "--predicted-option", "source=predictions", *common]
    )
    assert studio.exit_code == 0, studio.output
    assert json.loads(studio.output)["systems"][0]["metrics"]["strict"]["f1"]["value"] == pytest.approx(
        conll.metrics["strict"]["f1"]
    )
    db = tmp_path / "review.db"
    made = runner.invoke(
        cli, ["review", "create", str(samples / "brat/gold"), str(samples / "brat/pred"), "--format", "brat",
              "--db", str(db)]
    )
    assert made.exit_code == 0, made.output
    # One item per distinct pair of a right label and an overlapping span (Type-5), each naming
    # every criterion it answers: as many as the CoNLL copy's taxonomy counts.
    type5 = conll.to_dict()["errors"]["right_label_overlap"]
    assert type5 == 8 and f"{type5} new items" in made.output
