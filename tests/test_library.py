"""The library is the product: for every command with --json, what it prints is the library
object's ``to_dict()`` for the same inputs, and the face offers everything the command line does."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import OptionError
from spanscore.programs.corpus import summarize

DATA = Path(__file__).parent / "data"
GOLD, PRED = DATA / "small.gold.conll", DATA / "small.pred.conll"


def _json(args: list[str]) -> Any:
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def _plain(data: Any) -> Any:
    """The dict as JSON reads it back (tuples become lists, NaN stays NaN)."""
    return json.loads(json.dumps(data))


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def btc_pair(btc: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """BTC test and a prediction that moves some boundaries and changes some types."""
    folder = tmp_path_factory.mktemp("btc-pair")
    lines = (btc / "test.txt").read_text(encoding="utf-8").splitlines()
    kept = lines[: next(k for k in range(4000, len(lines)) if not lines[k].strip()) + 1]
    gold = folder / "gold.conll"
    gold.write_text("\n".join(kept) + "\n", encoding="utf-8")
    changed = []
    for k, line in enumerate(kept):
        if not line.strip():
            changed.append(line)
            continue
        token, label = line.rsplit(maxsplit=1)
        if label.startswith("I-") and k % 3 == 0:
            label = "O"
        elif label.startswith("B-") and k % 5 == 0:
            label = "B-" + {"PER": "ORG", "ORG": "LOC", "LOC": "PER"}.get(label[2:], "PER")
        changed.append(f"{token} {label}")
    pred = folder / "pred.conll"
    pred.write_text("\n".join(changed) + "\n", encoding="utf-8")
    return gold, pred


@pytest.mark.parametrize(
    "extra, keywords",
    [
        ([], {}),
        (["--beta", "2"], {"beta": 2.0}),
        (["--credit", "dice", "--matching", "greedy"], {"credit": "dice", "matching": "greedy"}),
        (["--ci", "0.9", "--resamples", "200", "--seed", "3"], {"ci": 0.9, "resamples": 200, "seed": 3}),
        (
            ["--ci", "0.95", "--resamples", "100", "--beta", "0.5", "--types", "PER,ORG"],
            {"ci": 0.95, "resamples": 100, "beta": 0.5, "types": ["PER", "ORG"]},
        ),
        (["--per-document", "{tmp}/docs.jsonl"], {"documents": True}),
    ],
)
def test_evaluate_json_is_the_reports_dict(
    btc_pair: tuple[Path, Path], tmp_path: Path, extra: list[str], keywords: dict[str, Any]
) -> None:
    gold, pred = btc_pair
    args = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    printed = _json(["evaluate", str(gold), str(pred), "--json", "--jobs", "1", *args])
    report = spanscore.evaluate(reference=gold, predicted=pred, keep_details=False, **keywords)
    assert printed == _plain(report.to_dict())
    assert printed["signature"] == report.signature
    if "ci" in keywords:
        assert printed["intervals"]["resamples"] == keywords["resamples"]
        assert report.intervals is not None and "per_type" in report.intervals


def test_evaluate_by_a_field_is_the_reports_breakdown(tmp_path: Path) -> None:
    gold_rows = [json.loads(line) for line in (DATA / "small.gold.jsonl").read_text().splitlines()]
    pred_rows = [json.loads(line) for line in (DATA / "small.pred.jsonl").read_text().splitlines()]
    for k, row in enumerate(gold_rows):
        row["meta"] = {"source": "news" if k % 2 else "web"}
    gold = _write_jsonl(tmp_path / "gold.jsonl", gold_rows)
    pred = _write_jsonl(tmp_path / "pred.jsonl", pred_rows)
    for extra, keywords in (([], {}), (["--ci", "0.9", "--resamples", "50"], {"ci": 0.9, "resamples": 50})):
        printed = _json(["evaluate", str(gold), str(pred), "--by", "meta.source", "--json", *extra])
        report = spanscore.evaluate(
            reference=gold, predicted=pred, format="jsonl", by="meta.source", keep_details=False, **keywords
        )
        assert printed == _plain(report.to_dict())
        assert report.breakdown is not None
        assert [g["value"] for g in report.breakdown["groups"]] == ["web", "news"]
        assert ("intervals" in report.breakdown["groups"][0]) == ("ci" in keywords)


def test_compare_json_is_the_comparisons_dict(btc_pair: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = btc_pair
    second = tmp_path / "second.conll"
    second.write_text(gold.read_text(encoding="utf-8"), encoding="utf-8")
    args = ["compare", str(gold), str(pred), str(second), "--resamples", "200", "--trials", "200", "--json"]
    printed = _json([*args, "--seed", "4", "--credit", "iou"])
    result = spanscore.compare(
        reference=gold, systems=[pred, second], resamples=200, trials=200, seed=4, credit="iou"
    )
    assert printed == _plain(result.to_dict())
    assert result.names == ["pred.conll", "second.conll"] == [s["name"] for s in printed["systems"]]
    # The typed accessors read the same numbers.
    assert result.scores("second.conll")["strict"]["f1"]["value"] == 1.0
    strict = result.difference(1, "strict")
    assert strict["difference"] == pytest.approx(1.0 - result.scores(0)["strict"]["f1"]["value"])
    assert result.rankings["strict"] == ["second.conll", "pred.conll"]
    # Each system's scores are its evaluation's.
    alone = spanscore.evaluate(reference=gold, predicted=pred, credit="iou", keep_details=False, documents=True)
    assert result.reports[0].to_dict() == alone.to_dict()
    with pytest.raises(OptionError, match="no system named"):
        result.scores("third")


def test_compare_takes_python_data_and_names_its_systems() -> None:
    reference = [["B-PER", "I-PER", "O"], ["B-LOC", "O", "O"], ["O", "B-ORG", "O"]]
    good = [["B-PER", "I-PER", "O"], ["B-LOC", "O", "O"], ["O", "B-ORG", "O"]]
    short = [["B-PER", "O", "O"], ["B-LOC", "O", "O"], ["O", "O", "O"]]
    c = spanscore.compare(reference=reference, systems=[good, short], format="labels", resamples=50, trials=50)
    assert c.names == ["system1", "system2"]
    assert c.to_dict()["systems"][1]["file"] is None
    assert c.scores(1)["strict"]["recall"]["value"] == pytest.approx(1 / 3)
    assert c.scores(1)["overlap"]["recall"]["value"] == pytest.approx(1 / 3 + 0.5 / 3)
    named = spanscore.compare(
        reference=reference, systems=[good, short], names=["a", "b"], format="labels", resamples=50, trials=50
    )
    assert named.names == ["a", "b"]
    with pytest.raises(OptionError, match="one distinct name"):
        spanscore.compare(reference=reference, systems=[good, short], names=["a"], format="labels")


def test_summarize_json_is_the_librarys_summary(tmp_path: Path) -> None:
    assert _json(["summarize", str(GOLD), "--json"]) == _plain(summarize(GOLD))
    both = _json(["summarize", str(GOLD), str(PRED), "--json"])
    assert both == _plain([summarize(GOLD), summarize(PRED)])


def test_judge_benchmark_json_is_the_results_dict(medmentions: Path, tmp_path: Path) -> None:
    from spanscore.programs import judge

    units = (medmentions / "st21pv_test.iob").read_text(encoding="utf-8").strip("\n").split("\n\n")
    train = tmp_path / "slice.iob"
    train.write_text("\n\n".join(units[:300]) + "\n", encoding="utf-8")
    scores = tmp_path / "scores.jsonl"  # the judgements of the slice's sentences
    texts = {s.text for s in judge.read_corpus(train).sentences}
    lines = (medmentions / "judgements.jsonl").read_text(encoding="utf-8").splitlines()
    scores.write_text("\n".join(ln for ln in lines if json.loads(ln)["sentence"] in texts) + "\n", encoding="utf-8")
    printed = _json(["judge", "benchmark", str(scores), "--train", str(train), "--folds", "3", "--baselines", "--json"])
    rows = judge.read_judgements(scores)
    result = judge.benchmark(judge.read_corpus(train), rows, folds=3, path=str(scores), baselines=True)
    expected = _plain(result.to_dict())
    printed.pop("seconds"), expected.pop("seconds")  # time, not a result
    assert printed == expected
    assert set(printed["baselines"]) == {"accept-all", "reject-all"} and printed["folds"] == 3


def test_review_stats_json_is_the_librarys_stats(tmp_path: Path) -> None:
    from spanscore.review import Store, stats

    db = str(tmp_path / "review.db")
    out = CliRunner().invoke(cli, ["review", "create", str(GOLD), str(PRED), "--db", db, "--name", "t"])
    assert out.exit_code == 0, out.output
    assert _json(["review", "stats", "--db", db, "--json"]) == _plain(stats(Store(db), None))


def test_scoring_is_one_object_and_keywords_amend_it() -> None:
    reference = [["B-ORG", "I-ORG", "I-ORG", "I-ORG"]]
    predicted = [["O", "B-ORG", "I-ORG", "I-ORG"]]
    scoring = spanscore.Scoring(credit=1.0, matching="greedy")
    a = spanscore.evaluate(reference=reference, predicted=predicted, format="labels", scoring=scoring)
    b = spanscore.evaluate(reference=reference, predicted=predicted, format="labels", credit=1.0, matching="greedy")
    assert a.to_dict() == b.to_dict()
    assert a.metrics["right"]["f1"] == 1.0
    c = spanscore.evaluate(reference=reference, predicted=predicted, format="labels", scoring=scoring, credit=0.0)
    assert c.metrics["right"]["f1"] == 0.0 and "matching:greedy" in c.signature
    with pytest.raises(OptionError, match="unknown option 'creditt'"):
        spanscore.evaluate(reference=reference, predicted=predicted, format="labels", creditt=1.0)  # type: ignore[call-arg]
    assert spanscore.Scoring(credit="0.25") == spanscore.Scoring(credit=0.25)


def test_a_judge_given_in_python_is_named_in_the_signature() -> None:
    from spanscore.programs.judge import CallableJudge

    judge = CallableJudge(lambda mismatch: 1.0, name="lenient")
    r = spanscore.evaluate(
        reference=[["B-ORG", "I-ORG", "O"]], predicted=[["B-ORG", "O", "O"]], format="labels", judge=judge
    )
    assert "judge:lenient/accept" in r.signature
    assert r.metrics["learned"]["f1"] == 1.0


def test_the_face_names_its_api() -> None:
    for name in ("evaluate", "compare", "load", "Report", "Comparison", "Scoring", "Reading", "SpanscoreError"):
        assert name in dir(spanscore)
        assert getattr(spanscore, name).__doc__


def test_report_in_a_notebook() -> None:
    r = spanscore.evaluate(reference=GOLD, predicted=PRED, ci=0.9, resamples=50)
    html = r._repr_html_()
    assert "<table" in html and "strict" in html and "<script" not in html
    pd = pytest.importorskip("pandas")
    frame = r.to_pandas()
    assert isinstance(frame, pd.DataFrame)
    row = frame[frame["type"].isna() & (frame["family"] == "criterion") & (frame["score"] == "strict")]
    row = row[row["metric"] == "f1"]
    assert row["value"].item() == r.metrics["strict"]["f1"]
    assert not math.isnan(row["low"].item())


def test_judge_user_f_json_is_the_librarys_result(btc_pair: tuple[Path, Path], tmp_path: Path) -> None:
    from spanscore.programs.judge.userf import type5_pairs, user_f

    gold, pred = btc_pair
    report = spanscore.evaluate(reference=gold, predicted=pred, credit=1.0, keep_details=True)
    pairs, _ = type5_pairs(report)
    scores = tmp_path / "scores.jsonl"
    with scores.open("w", encoding="utf-8") as fh:
        for k, p in enumerate(pairs):
            s, gs, ge, ps, pe = p.key
            row = {"sentence_index": s, "gold_start": gs, "gold_end": ge, "pred_start": ps, "pred_end": pe,
                   "gold_text": p.gold_text, "pred_text": p.pred_text, "score": 1 + k % 5}
            fh.write(json.dumps(row) + "\n")
    printed = _json(["judge", "user-f", str(gold), str(pred), "--scores", str(scores), "--json"])
    assert printed == _plain(user_f(gold, pred, scores)) and printed["scored"] == len(pairs) > 0
