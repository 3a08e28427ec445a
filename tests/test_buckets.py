"""Buckets (``evaluate(buckets=...)``, ``compare(buckets=...)``): invariants, intervals, document
fields, comparisons and bad options, on the shipped samples. The per-bucket figures themselves are
checked against an independent count on real data in tests/test_buckets_independent.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import OptionError
from spanscore.programs.samples import write_samples
from spanscore.stages.buckets import ATTRIBUTES, attribute


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("samples")
    write_samples(folder)
    return folder


def buckets_of(samples: Path, **kw: Any) -> dict[str, Any]:
    report = spanscore.evaluate(
        reference=samples / "gold.conll", predicted=samples / "pred.conll", train=samples / "alt.conll", **kw
    )
    return dict(report.to_dict())


def test_every_attribute_adds_up_to_the_corpus(samples: Path) -> None:
    out = buckets_of(samples, buckets=list(ATTRIBUTES))
    corpus = out["corpus"]
    assert list(out["buckets"]) == list(ATTRIBUTES)
    for name, entries in out["buckets"].items():
        assert [e["bucket"] for e in entries] == list(attribute(name).labels)
        assert sum(e["reference_mentions"] for e in entries) == corpus["reference_mentions"], name
        assert sum(e["predicted_mentions"] for e in entries) == corpus["predicted_mentions"], name


def test_one_bucket_is_the_whole_corpus(samples: Path) -> None:
    """With an edge above every mention's length, the first bucket holds everything: its scores are
    the corpus's."""
    out = buckets_of(samples, buckets=["length"], bucket_edges={"length": [1000]})
    first, rest = out["buckets"]["length"]
    assert rest["reference_mentions"] == rest["predicted_mentions"] == 0
    for name, block in out["metrics"].items():
        got = first["metrics"][name]
        assert (got["precision"], got["recall"], got["f1"]) == pytest.approx(
            (block["precision"], block["recall"], block["f1"])
        ), name
    for name, block in out["semeval"].items():
        got = first["semeval"][name]
        assert (got["precision"], got["recall"], got["f1"]) == pytest.approx(
            (block["precision"], block["recall"], block["f1"])
        ), name


def test_buckets_do_not_change_the_other_figures(samples: Path) -> None:
    plain = buckets_of(samples)
    bucketed = buckets_of(samples, buckets=["length", "seen", "oov"])
    bucketed.pop("buckets")
    assert bucketed == plain


@pytest.mark.parametrize("kw", [{"chunk_bytes": 200}, {"jobs": 2}, {"chunk_bytes": 300, "jobs": 2}])
def test_chunks_and_workers_give_the_same_buckets_and_intervals(samples: Path, kw: dict[str, Any]) -> None:
    options = {"buckets": ["length", "seen", "density"], "ci": 0.9, "resamples": 200}
    assert buckets_of(samples, **options, **kw)["buckets"] == buckets_of(samples, **options)["buckets"]


def test_intervals_surround_each_bucket_score(samples: Path) -> None:
    out = buckets_of(samples, buckets=["length", "seen"], ci=0.95, resamples=300)
    seen_interval = False
    for entries in out["buckets"].values():
        for e in entries:
            for block in (*e["metrics"].values(), *e["semeval"].values()):
                for metric, low, high in (("f1", "low", "high"), ("precision", "precision_low", "precision_high")):
                    assert low in block and high in block
                    if block[low] is not None and e["reference_mentions"] and e["predicted_mentions"]:
                        seen_interval = True
                        assert block[low] - 1e-12 <= block[metric] <= block[high] + 1e-12
    assert seen_interval


def test_a_document_field_is_a_bucket_attribute(samples: Path) -> None:
    """A JSONL field as an attribute gives the figures of --by for that field."""
    report = spanscore.evaluate(
        reference=samples / "gold.jsonl", predicted=samples / "pred.jsonl", format="jsonl",
        buckets=["id", "length"], by="id",
    )
    out = report.to_dict()
    groups = {g["value"]: g for g in out["breakdown"]["groups"]}
    assert [e["bucket"] for e in out["buckets"]["id"]] == list(groups)
    for e in out["buckets"]["id"]:
        g = groups[e["bucket"]]
        assert e["reference_mentions"] == g["reference_mentions"]
        assert e["metrics"]["strict"]["f1"] == pytest.approx(g["scores"]["strict"]["f1"])
    # Character offsets: lengths in characters, with their own default buckets.
    assert [e["bucket"] for e in out["buckets"]["length"]] == ["1-4", "5-9", "10-19", "20+"]


def test_compare_per_bucket_matches_each_evaluation(samples: Path) -> None:
    systems = [samples / "pred.conll", samples / "alt.conll"]
    comparison = spanscore.compare(
        reference=samples / "gold.conll", systems=systems, buckets=["length"], per_type=True,
        resamples=200, trials=200,
    )
    out = comparison.to_dict()
    assert {"per_type", "buckets"} <= set(out)
    for k, system in enumerate(systems):
        alone = spanscore.evaluate(reference=samples / "gold.conll", predicted=system, buckets=["length"])
        for mine, theirs in zip(out["buckets"]["length"], alone.to_dict()["buckets"]["length"], strict=True):
            assert mine["bucket"] == theirs["bucket"]
            assert mine["systems"][k]["predicted_mentions"] == theirs["predicted_mentions"]
            assert mine["systems"][k]["metrics"]["strict"]["f1"]["value"] == pytest.approx(
                theirs["metrics"]["strict"]["f1"]
            )
        for group in out["per_type"]:
            scores = alone.to_dict()["per_type"].get(group["bucket"])
            if scores is not None:
                assert group["systems"][k]["metrics"]["strict"]["f1"]["value"] == pytest.approx(
                    scores["metrics"]["strict"]["f1"]
                )
    for group in out["buckets"]["length"]:
        entry = next(c for c in group["comparisons"] if c["criterion"] == "strict" and c["metric"] == "f1")
        a, b = (s["metrics"]["strict"]["f1"]["value"] for s in group["systems"])
        assert entry["difference"] == pytest.approx(b - a)


def test_compare_html_draws_a_forest_plot(samples: Path, tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    result = CliRunner().invoke(
        cli,
        ["compare", str(samples / "gold.conll"), str(samples / "pred.conll"), str(samples / "alt.conll"),
         "--buckets", "length", "--per-type", "--resamples", "100", "--trials", "100", "--html", str(page), "--json"],
    )
    assert result.exit_code == 0, result.output
    text = page.read_text(encoding="utf-8")
    assert "<svg" in text and "length 1" in text and "type PER" in text
    assert "<script" not in text
    assert json.loads(result.output)["buckets"]["length"]


def test_cli_json_equals_python(samples: Path) -> None:
    args = ["evaluate", str(samples / "gold.conll"), str(samples / "pred.conll"), "--buckets", "length,seen",
            "--train", str(samples / "alt.conll"), "--bucket-edges", "length=2,3", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    python = buckets_of(samples, buckets=["length", "seen"], bucket_edges={"length": [2, 3]})
    assert json.loads(result.output)["buckets"] == json.loads(json.dumps(python["buckets"]))


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"buckets": ["seen"], "train": None}, "give train"),
        ({"buckets": ["length", "length"]}, "twice"),
        ({"buckets": "length"}, "a list of attribute names"),
        ({"buckets": ["length"], "bucket_edges": {"length": [3, 2]}}, "must increase"),
        ({"buckets": ["length"], "bucket_edges": {"length": [1.5]}}, "whole numbers"),
        ({"buckets": ["length"], "bucket_edges": {"length": [float("nan")]}}, "must increase"),
        ({"buckets": ["consistency"], "bucket_edges": {"consistency": [1.2]}}, "between 0 and 1"),
        ({"buckets": ["seen"], "bucket_edges": {"seen": [1]}}, "takes no edges"),
        ({"buckets": ["length"], "bucket_edges": {"density": [0.5]}}, "not among the buckets"),
        ({"buckets": ["length"], "bucket_edges": {"length": "2,4"}}, r"bucket_edges\['length'\] is a list of numbers"),
        ({"buckets": ["lenght"]}, "'lenght' is not an attribute .*length.* no document of .* has this field"),
    ],
)
def test_bad_options_are_option_errors(samples: Path, kw: dict[str, Any], message: str) -> None:
    train = kw.pop("train", samples / "alt.conll")
    with pytest.raises(OptionError, match=message):
        spanscore.evaluate(reference=samples / "gold.conll", predicted=samples / "pred.conll", train=train, **kw)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--buckets", "seen"], "--train"),
        (["--train", "x.conll"], "go with --buckets"),
        (["--buckets", "length", "--bucket-edges", "length"], "KEY=VALUE"),
        (["--buckets", "length", "--bucket-edges", "length=a,b"], "numbers separated by commas"),
        (["--buckets", "length", "--bucket-edges", "length="], "gives no edges"),
        (["--buckets", "seen", "--train", "missing.conll"], "missing.conll"),
        (["--buckets", "lenght"], "'lenght' is not an attribute (length, seen"),
        (["--by", "nosuch"], "by (--by) 'nosuch': no document of"),
        (["--ci", "0.9", "--resamples", "10000000000"], "--resamples"),
    ],
)
def test_bad_options_on_the_command_line(samples: Path, extra: list[str], message: str) -> None:
    result = CliRunner().invoke(
        cli, ["evaluate", str(samples / "gold.conll"), str(samples / "pred.conll"), *extra]
    )
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_report_folder_has_a_chart_and_a_table_per_attribute(samples: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the charts need the report extra (matplotlib)")
    folder = tmp_path / "report"
    result = CliRunner().invoke(
        cli,
        ["evaluate", str(samples / "gold.conll"), str(samples / "pred.conll"), "--buckets", "length,seen",
         "--train", str(samples / "alt.conll"), "--ci", "0.9", "--resamples", "100", "--report", str(folder)],
    )
    assert result.exit_code == 0, result.output
    for name in ("buckets-length.png", "buckets-seen.png"):
        assert (folder / name).read_bytes().startswith(b"\x89PNG")
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert "buckets-length.png" in json.dumps(summary)
    for page in ("report.html", "summary.md"):
        text = (folder / page).read_text(encoding="utf-8")
        assert "By length" in text and "By seen" in text


def test_notebook_view_and_frame(samples: Path) -> None:
    pytest.importorskip("pandas", reason="the frame needs the pandas extra")
    report = spanscore.evaluate(
        reference=samples / "gold.conll", predicted=samples / "pred.conll", buckets=["length"], ci=0.9,
        resamples=100,
    )
    assert "F1 by length" in report._repr_html_()
    frame = report.to_pandas("buckets")
    data = report.to_dict()["buckets"]["length"]
    strict = (frame.family == "criterion") & (frame.score == "strict") & (frame.metric == "f1")
    row = frame[(frame.bucket == data[0]["bucket"]) & strict]
    assert row["value"].item() == pytest.approx(data[0]["metrics"]["strict"]["f1"])
    assert row["low"].item() == pytest.approx(data[0]["metrics"]["strict"]["low"])
    assert set(frame.attribute) == {"length"} and set(frame.family) == {"criterion", "semeval"}
    with pytest.raises(OptionError, match="scores or buckets"):
        report.to_pandas("nothing")


def test_a_train_file_that_is_not_utf8_is_refused(samples: Path, tmp_path: Path) -> None:
    """Read as it is, its accented words would never match the reference's: unseen, silently."""
    train = tmp_path / "train.conll"
    train.write_bytes("Café\tB-LOC\nx\tO\n\n".encode("latin-1"))
    with pytest.raises(spanscore.SpanscoreError, match=r"train.conll:1: is not UTF-8 text .*--encoding"):
        spanscore.evaluate(
            reference=samples / "gold.conll", predicted=samples / "pred.conll", buckets=["seen"], train=train
        )
    out = CliRunner().invoke(cli, ["evaluate", str(samples / "gold.conll"), str(samples / "pred.conll"),
                                   "--buckets", "seen", "--train", str(train)])
    assert out.exit_code == 2 and "not UTF-8" in out.output and len(out.output.strip().splitlines()) == 1


def test_an_accented_train_word_in_utf8_is_seen(tmp_path: Path) -> None:
    text = "Café\tB-LOC\nx\tO\n\n"
    for name in ("ref.conll", "pred.conll", "train.conll"):
        (tmp_path / name).write_text(text, encoding="utf-8")
    out = spanscore.evaluate(reference=tmp_path / "ref.conll", predicted=tmp_path / "pred.conll",
                             buckets=["seen"], train=tmp_path / "train.conll").to_dict()
    assert {b["bucket"]: b["reference_mentions"] for b in out["buckets"]["seen"]}["seen"] == 1


@pytest.mark.parametrize("attribute", ["seen", "consistency", "frequency", "oov"])
@pytest.mark.parametrize("format", ["labels", "spans"])
def test_word_buckets_of_data_without_words_are_refused(attribute: str, format: str) -> None:
    """Labels carry no words: every mention would be unseen."""
    data: Any = [["B-A", "O"]] if format == "labels" else [[(0, 1, "A")]]
    with pytest.raises(OptionError, match=f"the {attribute} buckets compare the words .* gives no words"):
        spanscore.evaluate(reference=data, predicted=data, format=format, buckets=[attribute], train=data)


def test_a_field_some_documents_have_is_a_bucket_and_missing_is_counted(tmp_path: Path) -> None:
    """Only a field no document has is refused: documents without it still form (missing)."""
    rows = [{"id": "a", "text": "John", "spans": [{"start": 0, "end": 4, "label": "PER"}], "source": "web"},
            {"id": "b", "text": "Mary", "spans": [{"start": 0, "end": 4, "label": "PER"}]}]
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = spanscore.evaluate(reference=path, predicted=path, format="jsonl", buckets=["source"]).to_dict()
    assert [b["bucket"] for b in out["buckets"]["source"]] == ["web", "(missing)"]
    with pytest.raises(OptionError, match=r"'sourse'.* their fields are source"):
        spanscore.evaluate(reference=path, predicted=path, format="jsonl", by="sourse")


def test_a_latin1_train_file_is_read_in_the_encoding_given(tmp_path: Path) -> None:
    """With --encoding, every CoNLL file of the run (--train too) is read in it: Café is seen."""
    for name in ("ref.conll", "pred.conll", "train.conll"):
        (tmp_path / name).write_bytes("Café\tB-LOC\nx\tO\n\n".encode("latin-1"))
    out = spanscore.evaluate(reference=tmp_path / "ref.conll", predicted=tmp_path / "pred.conll",
                             reading=spanscore.Reading(encoding="latin-1"), buckets=["seen"],
                             train=tmp_path / "train.conll").to_dict()
    assert {b["bucket"]: b["reference_mentions"] for b in out["buckets"]["seen"]}["seen"] == 1
