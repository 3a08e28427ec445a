"""A judge that learns from a few reviews: it starts from the rule and never collapses to
accept-all; the review order; the learning curve; benchmarking a judge file; training from a
review export."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("sklearn")

from spanscore.cli.main import cli
from spanscore.errors import InputError, OptionError
from spanscore.programs.judge import (
    Corpus,
    Judgement,
    benchmark_judge,
    learning_curve,
    load_judge,
    prepare,
    read_corpus,
    read_judgements,
    review_order,
    roc_auc,
    select,
    train_judge,
)
from spanscore.programs.judge.acceptance import PRIOR_SCORES, Acceptance, GroupModel, prior_precision
from spanscore.programs.judge.benchmark import agreement
from spanscore.programs.judge.crossfit import Prepared, backend_trainer
from spanscore.programs.judge.features import FEATURES, features
from spanscore.programs.judge.judgements import accepts
from spanscore.stages.judging import Mismatch

SLICE = 1200  # sentences of st21pv_test.iob: 424 judged mismatches


@pytest.fixture(scope="module")
def slice_path(medmentions: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    units = (medmentions / "st21pv_test.iob").read_text(encoding="utf-8").strip("\n").split("\n\n")
    path = tmp_path_factory.mktemp("learning") / "slice.iob"
    path.write_text("\n\n".join(units[:SLICE]) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpus(slice_path: Path) -> Corpus:
    return read_corpus(slice_path)


@pytest.fixture(scope="module")
def judgements(medmentions: Path, corpus: Corpus) -> list[Judgement]:
    texts = {s.text for s in corpus.sentences}
    return [j for j in read_judgements(medmentions / "judgements.jsonl") if j.sentence in texts]


@pytest.fixture(scope="module")
def judgements_path(judgements: list[Judgement], medmentions: Path, slice_path: Path) -> Path:
    lines = (medmentions / "judgements.jsonl").read_text(encoding="utf-8").splitlines()
    ids = {j.id for j in judgements}
    path = slice_path.parent / "slice-judgements.jsonl"
    path.write_text("\n".join(ln for ln in lines if json.loads(ln)["id"] in ids) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def split(corpus: Corpus, judgements: list[Judgement]) -> tuple[Prepared, list[Judgement], np.ndarray, np.ndarray]:
    """Scores from the first two thirds of the slice's sentences, measured on the last third: the
    classifier never saw a measured sentence."""
    cut = {s.text for s in corpus.sentences[2 * SLICE // 3 :]}
    learn = [j for j in judgements if j.sentence not in cut]
    test = [j for j in judgements if j.sentence in cut]
    keep = [i for i, s in enumerate(corpus.sentences) if s.text not in cut]
    prepared = prepare(corpus.subset(keep), learn, trainer=backend_trainer())
    judge = prepared.judge()
    items = [j.mismatch() for j in test]
    return prepared, test, features(items, judge.classifier, judge.lexicon), judge.rule_probability(items)


# --- the acceptance model starts from the rule and cannot collapse --------------------------------


def test_without_scores_a_group_keeps_the_rule_exactly(
    split: tuple[Prepared, list[Judgement], np.ndarray, np.ndarray],
) -> None:
    prepared, test, x, rule = split
    items = [j.mismatch() for j in test]
    shorter = [k for k, it in enumerate(prepared.items) if it.relation != "longer"]
    acceptance = prepared.acceptance(shorter, "forgiving")
    assert set(acceptance.groups) == {"drops"}  # no scores of predictions that only add words
    p = acceptance.predict(x, items, rule)
    adds = np.array([it.relation == "longer" for it in items])
    assert adds.any()
    np.testing.assert_array_equal(p[adds], rule[adds])


def test_a_handful_of_scores_nudges_the_rule_and_never_accepts_everything(
    split: tuple[Prepared, list[Judgement], np.ndarray, np.ndarray],
) -> None:
    """The no-collapse property: small, unbalanced samples (no, one or two rejections among 10 to
    40 scores) never make the judge accept every mismatch, nor more than the users do, and on
    average over random samples the judge is no worse than the rule in AUC or forgiving-user F1.
    Replacing the model by the sample's acceptance rate when it holds few rejections (what the
    judge once did), or fitting a one-verdict sample with unit weights, accepts everything and
    fails this test."""
    prepared, test, x, rule = split
    items = [j.mismatch() for j in test]
    truth = accepts(test, "forgiving")
    base = agreement(truth, rule)
    base_f1 = 2 * base["precision"] * base["recall"] / (base["precision"] + base["recall"])
    accepted = prepared.accepted("forgiving")
    yes, no = np.flatnonzero(accepted), np.flatnonzero(~accepted)
    for k in (10, 20, 40):
        aucs, f1s = [], []
        for seed in range(9):
            rng = np.random.default_rng(seed)
            # none, one or two rejections among k scores
            rows = np.concatenate([rng.permutation(yes)[: k - seed % 3], rng.permutation(no)[: seed % 3]])
            got = agreement(truth, prepared.acceptance(rows, "forgiving").predict(x, items, rule))
            assert got["judge_accepts"] < base["user_accepts"], (k, seed, got)
            if seed % 3 == 0:  # acceptances only: nothing to balance, the rule stands
                assert got == base
            # and samples as they come, at random
            rows = rng.permutation(len(accepted))[:k]
            got = agreement(truth, prepared.acceptance(rows, "forgiving").predict(x, items, rule))
            assert got["judge_accepts"] < base["user_accepts"], (k, seed, got)
            aucs.append(got["auc"])
            f1s.append(2 * got["precision"] * got["recall"] / (got["precision"] + got["recall"]))
        assert np.mean(aucs) >= base["auc"] - 0.005, (k, np.mean(aucs), base["auc"])
        assert np.mean(f1s) >= base_f1 - 0.005, (k, np.mean(f1s), base_f1)


def _population(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Mismatch]]:
    """Synthetic shorter predictions: one informative feature, a rule that is right 85% of the
    time, and users who accept 90%."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, len(FEATURES)))
    accepted = rng.random(n) < 1 / (1 + np.exp(-(2.5 + 2.0 * x[:, 0])))
    rule = np.clip(np.where(accepted, 0.7, 0.35) + rng.normal(scale=0.2, size=n), 0.01, 0.99)
    items = [Mismatch("b", "x", "a b", "a b", "shorter", False, True)] * n
    return x, rule, accepted, items


@pytest.mark.parametrize("rejections", [0, 1, 2])
def test_tiny_unbalanced_samples_stay_near_the_rule(rejections: int) -> None:
    x, rule, accepted, items = _population(4000, 1)
    test_x, test_rule, test_truth, test_items = _population(4000, 2)
    yes, no = np.flatnonzero(accepted), np.flatnonzero(~accepted)
    rows = np.concatenate([yes[:12], no[:rejections]])
    model = Acceptance.fit(x[rows], [items[k] for k in rows], rule[rows], accepted[rows], "forgiving")
    p = model.predict(test_x, test_items, test_rule)
    if rejections == 0:
        assert not model.groups  # one verdict: the rule stands
        np.testing.assert_array_equal(p, test_rule)
    rule_accepts = float((test_rule >= 0.5).mean())
    assert abs(float((p >= 0.5).mean()) - rule_accepts) < 0.1
    # ... while thousands of scores learn the feature the rule does not know
    model = Acceptance.fit(x, items, rule, accepted, "forgiving")
    assert roc_auc(test_truth, model.predict(test_x, test_items, test_rule)) > roc_auc(test_truth, test_rule) + 0.05


def test_the_prior_fades_as_scores_come() -> None:
    assert prior_precision(1) == pytest.approx(PRIOR_SCORES * prior_precision(PRIOR_SCORES))
    assert prior_precision(PRIOR_SCORES) == prior_precision(10 * PRIOR_SCORES)
    x, rule, accepted, _ = _population(200, 3)
    m = GroupModel.fit(x, rule, accepted)
    assert m.scores == 200 and m.slope > 0
    with pytest.raises(ValueError):
        GroupModel.fit(x[accepted], rule[accepted], accepted[accepted])


# --- the review order ------------------------------------------------------------------------------


def _mm(relation: str) -> Mismatch:
    return Mismatch("p", "t", "g", "s", relation, relation == "longer", False)


def test_review_order_interleaves_verdicts_and_gives_adds_one_in_ten() -> None:
    items = [_mm("longer")] * 30 + [_mm("shorter")] * 60 + [_mm("shifted")] * 10
    p = np.array([1.0] * 30 + [0.9] * 50 + [0.2] * 10 + [0.6] * 10)
    order = review_order(items, p, seed=4)
    assert sorted(order.tolist()) == list(range(100))
    first = order[:10].tolist()
    kinds = ["adds" if items[k].relation == "longer" else ("accepted" if p[k] >= 0.5 else "rejected") for k in first]
    assert kinds == ["rejected", "accepted"] * 4 + ["rejected", "adds"]
    # the 10 rejected ones are used up within 20 reviews; the accepted and adds go on as in a
    # cycle without them, 4:1
    later = order[30:60].tolist()
    assert sum(items[k].relation == "longer" for k in later) == 6
    assert order.tolist() == review_order(items, p, seed=4).tolist()
    assert order.tolist() != review_order(items, p, seed=5).tolist()
    with pytest.raises(ValueError):
        review_order(items, p[:5])


def test_review_create_and_the_apis_next_item_follow_the_review_order(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    from spanscore.io.reading import Reading
    from spanscore.programs.judge import CallableJudge
    from spanscore.review import Store, items_from_run, ordered
    from spanscore.review.server import ReviewApp

    data = Path(__file__).resolve().parent / "data"
    judge = CallableJudge(lambda m: 0.3 if m.reference_text[:1].islower() else 0.8, name="j")
    items = items_from_run(data / "small.gold.conll", data / "small.pred.conll", Reading(), judge=judge, type5=True)
    got = ordered(items)
    expected = review_order([it.mismatch() for it in items], [it.probability or 0.0 for it in items], 0)
    assert got == [items[k] for k in expected.tolist()]
    store = Store(tmp_path / "r.db")
    store.create_task("t", "five", got)
    token = store.add_reviewer("ann")
    app = ReviewApp(store, "t")
    auth = {"authorization": f"Bearer {token}"}
    seen = []
    while (item := app.handle("GET", "/api/next", auth, b"")[1]["item"]) is not None:
        seen.append((item["reference"]["text"], item["predicted"]["text"], item["criterion"]))
        app.handle("POST", "/api/judgements", auth, json.dumps({"item": item["id"], "verdict": 3}).encode())
    assert seen == [(it.gold_text, it.pred_text, it.criterion) for it in got]


# --- the learning curve ------------------------------------------------------------------------


def test_curve_json_is_the_library_object(slice_path: Path, judgements_path: Path, tmp_path: Path) -> None:
    args = ["judge", "curve", str(slice_path), "--scores", str(judgements_path), "--sizes", "0,20,all",
            "--seeds", "2", "--folds", "3"]
    page = tmp_path / "curve.html"
    result = CliRunner().invoke(cli, [*args, "--json", "--html", str(page)])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    curve = learning_curve(
        read_corpus(slice_path), read_judgements(judgements_path), sizes=[0, 20, None], seeds=2, folds=3,
        scores_path=str(judgements_path),
    )
    assert printed == curve.to_dict()
    assert {(p["size"], p["order"], p["seed"]) for p in printed["points"]} == {
        (s, o, k) for s in (0, 20, "all") for o in ("judge", "random") for k in (0, 1)
    }
    point = printed["points"][0]
    assert set(point) == {"size", "order", "seed", "forgiving", "strict"}
    assert set(point["forgiving"]) >= {"precision", "recall", "disagreement", "auc", "judge_accepts", "f1"}
    # size 0 is the judge without scores, whatever the order; all is every score, whatever the order
    zero = [p for p in printed["points"] if p["size"] == 0]
    assert all(p["forgiving"] == zero[0]["forgiving"] for p in zero)
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "judge order" in text
    table = CliRunner().invoke(cli, args)
    assert table.exit_code == 0 and "reviews" in table.output and "random" in table.output


def test_curve_with_a_test_set(slice_path: Path, judgements: list[Judgement], judgements_path: Path,
                               tmp_path: Path) -> None:
    lines = judgements_path.read_text(encoding="utf-8").splitlines()
    half = {j.sentence for j in judgements[: len(judgements) // 2]}
    learn, test = tmp_path / "learn.jsonl", tmp_path / "test.jsonl"
    learn.write_text("\n".join(ln for ln in lines if json.loads(ln)["sentence"] in half) + "\n")
    test.write_text("\n".join(ln for ln in lines if json.loads(ln)["sentence"] not in half) + "\n")
    result = CliRunner().invoke(cli, ["judge", "curve", str(slice_path), "--scores", str(learn), "--test", str(test),
                                      "--sizes", "0,30", "--seeds", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["folds"] is None and data["test"] == len(read_judgements(test))
    # the same sentence on both sides is refused, naming the test file and line
    result = CliRunner().invoke(cli, ["judge", "curve", str(slice_path), "--scores", str(judgements_path), "--test",
                                      str(test), "--sizes", "10"])
    assert result.exit_code == 2
    assert f"{test}:1:" in result.output and len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("sizes", "says"), [("10,abc", "--sizes: 'abc'"), ("100000", "--sizes 100000"), ("", "--sizes")]
)
def test_curve_refuses_bad_sizes(slice_path: Path, judgements_path: Path, sizes: str, says: str) -> None:
    result = CliRunner().invoke(cli, ["judge", "curve", str(slice_path), "--scores", str(judgements_path),
                                      "--sizes", sizes])
    assert result.exit_code == 2
    assert says in result.output and len(result.output.strip().splitlines()) == 1


# --- benchmarking a judge file ---------------------------------------------------------------


def test_benchmark_a_judge_file_as_it_is(
    corpus: Corpus, judgements: list[Judgement], judgements_path: Path, slice_path: Path, tmp_path: Path
) -> None:
    path = tmp_path / "rule.judge"
    train_judge(corpus).save(path)
    runner = CliRunner()
    result = runner.invoke(cli, ["judge", "benchmark", str(judgements_path), "--judge", str(path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    crossfitted = runner.invoke(cli, ["judge", "benchmark", str(judgements_path), "--train", str(slice_path),
                                      "--folds", "3", "--json"])
    other = json.loads(crossfitted.stdout)
    del other["folds"]
    assert set(data) == set(other) and all(set(data[u]) == set(other[u]) for u in ("forgiving", "strict"))
    assert data["judge"] == "tfidf-contains" and data["judgements"] == len(judgements)
    p = load_judge(path).accept_probability([j.mismatch() for j in judgements])
    digits = 2 if len(judgements) < 100 else 3 if len(judgements) < 1000 else 4  # as many as n supports
    assert data["forgiving"]["auc"] == round(roc_auc(accepts(judgements, "forgiving"), p), digits)
    library = benchmark_judge(load_judge(path), read_judgements(judgements_path)).to_dict()
    assert {k: v for k, v in data.items() if k != "seconds"} == {k: v for k, v in library.items() if k != "seconds"}
    table = runner.invoke(cli, ["judge", "benchmark", str(judgements_path), "--judge", str(path), "--baselines"])
    assert table.exit_code == 0 and "accept-all" in table.output
    for extra in (["--train", str(slice_path)], ["--learn"], ["--backend", "tfidf"]):
        result = runner.invoke(cli, ["judge", "benchmark", str(judgements_path), "--judge", str(path), *extra])
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    result = runner.invoke(cli, ["judge", "benchmark", str(judgements_path)])
    assert result.exit_code == 2 and "--train" in result.output and "--judge" in result.output
    result = runner.invoke(cli, ["judge", "benchmark", str(judgements_path), "--judge", str(judgements_path)])
    assert result.exit_code == 2 and str(judgements_path) in result.output


# --- training from a review export -------------------------------------------------------------------


def _export(judgements: Sequence[Judgement], path: Path, reviewers: dict[str, Any]) -> None:
    """Rows as ``spanscore review export`` writes them, one per reviewer's verdict."""
    rows = []
    for k, j in enumerate(judgements):
        for name, score in reviewers.items():
            row = {"id": f"t-{k}-{name}", "sentence": j.sentence, "gold_text": j.gold_text, "gold_label": j.gold_label,
                   "pred_text": j.pred_text, "score": score(k, j), "reviewer": name}
            if j.gold_span and j.pred_span:
                row.update(gold_start=j.gold_span[0], gold_end=j.gold_span[1], pred_start=j.pred_span[0],
                           pred_end=j.pred_span[1])
            rows.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_select_every_reviewer_or_an_agreed_subset(judgements: list[Judgement], tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    _export(judgements[:50], path, {"ann": lambda k, j: j.score, "bob": lambda k, j: 1 if k % 10 == 0 else j.score})
    rows = read_judgements(path)
    every = select(rows)
    assert len(every.judgements) == 100 and every.reviewers == ("ann", "bob") and every.pairs == 50
    ann = select(rows, reviewers=["ann"])
    assert len(ann.judgements) == 50 and ann.reviewers == ("ann",)
    agreed = select(rows, agreed=True, user="forgiving")
    differ = sum(1 for k, j in enumerate(judgements[:50]) if k % 10 == 0 and j.score >= 2)
    assert agreed.disagreed == differ and len(agreed.judgements) == 50 - differ
    assert "left out" in agreed.describe("forgiving")
    with pytest.raises(InputError, match="no verdicts by 'carl'") as info:
        select(rows, reviewers=["carl"], path=str(path))
    assert info.value.path == str(path)
    with pytest.raises(OptionError):
        select(rows, user="lenient")


def test_judge_train_reads_a_review_export(
    slice_path: Path, judgements_path: Path, tmp_path: Path
) -> None:
    """The expert's scores go into a review store as two reviewers' verdicts (the second one
    stricter), come out through `review export`, and `judge train --scores` reads that file."""
    pytest.importorskip("sqlalchemy")
    lines = judgements_path.read_text(encoding="utf-8").splitlines()[:120]
    ann, bob = tmp_path / "ann.jsonl", tmp_path / "bob.jsonl"
    ann.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stricter = [{**json.loads(ln), "score": max(1, json.loads(ln)["score"] - 1)} for ln in lines]
    bob.write_text("".join(json.dumps(r) + "\n" for r in stricter), encoding="utf-8")
    db, export, out = tmp_path / "r.db", tmp_path / "export.jsonl", tmp_path / "learned.judge"
    runner = CliRunner()
    for args in (
        ["review", "import", str(ann), "--db", str(db), "--name", "mm", "--reviewer", "ann"],
        ["review", "import", str(bob), "--db", str(db), "--name", "mm", "--reviewer", "bob"],
        ["review", "export", "--db", str(db), "-o", str(export)],
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["judge", "train", str(slice_path), "--scores", str(export), "--reviewers", "ann",
                                 "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "120 of 240 verdicts on 120 pairs, 1 reviewer(s): ann" in result.stderr
    judge = load_judge(out)
    assert judge.acceptance is not None and judge.acceptance.reviewers == ("ann",)
    # bob rejects, for the forgiving user, what ann scored 2: those pairs are left out
    differ = sum(json.loads(ln)["score"] == 2 for ln in lines)
    result = runner.invoke(cli, ["judge", "train", str(slice_path), "--scores", str(export), "--agreed",
                                 "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{120 - differ} of 240 verdicts" in result.stderr and "2 reviewer(s): ann, bob" in result.stderr
    assert f"{differ} pairs left out where they disagree" in result.stderr
    result = runner.invoke(cli, ["judge", "train", str(slice_path), "--scores", str(export), "--reviewers", "zed",
                                 "-o", str(out)])
    assert result.exit_code == 2 and f"{export}: no verdicts by 'zed'" in result.output
    result = runner.invoke(cli, ["judge", "train", str(slice_path), "--agreed", "-o", str(out)])
    assert result.exit_code == 2 and "--scores" in result.output


# --- judge files ---------------------------------------------------------------------------------


def test_learned_judge_file_round_trip_and_version_one_rule_judges(
    corpus: Corpus, judgements: list[Judgement], tmp_path: Path
) -> None:
    judge = train_judge(corpus, judgements=judgements[:80], reviewers=("ann",))
    judge.save(tmp_path / "v2.judge")
    items = [j.mismatch() for j in judgements]
    loaded = load_judge(tmp_path / "v2.judge")
    np.testing.assert_allclose(loaded.accept_probability(items), judge.accept_probability(items), atol=1e-6)
    assert loaded.acceptance is not None and loaded.acceptance.reviewers == ("ann",)

    def as_version_one(src: Path, dst: Path) -> None:
        with np.load(src, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(arrays["__meta__"].tobytes())
        meta["format_version"] = 1
        arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        with open(dst, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]

    as_version_one(tmp_path / "v2.judge", tmp_path / "v1-learned.judge")
    with pytest.raises(InputError, match="train the judge again"):
        load_judge(tmp_path / "v1-learned.judge")
    train_judge(corpus.subset(range(200))).save(tmp_path / "rule.judge")
    as_version_one(tmp_path / "rule.judge", tmp_path / "v1-rule.judge")
    assert load_judge(tmp_path / "v1-rule.judge").acceptance is None
