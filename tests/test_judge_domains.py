"""Judges across domains: the types a judge knows (refused otherwise, in every command that takes
a judge), what a judge file records, the type-agnostic judge, bad numbers, and the benchmark's
intervals, confusion counts and warnings on the paper's BTC verdicts (tests/judge_domains.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("sklearn")

from judge_domains import OWN_TEST_VERDICTS, PAPER_VERDICTS, write_btc_paper_judgements, write_own_test_judgements

from spanscore.cli.main import cli
from spanscore.programs.judge import SpanJudge, load_judge, read_corpus, read_judgements, train_judge
from spanscore.programs.judge.benchmark import auc_interval, confusion, roc_auc, wilson
from spanscore.programs.judge.model import FORMAT_VERSION, UnknownTypes

BTC_TWEETS = 1500  # of BTC train: enough mentions of each type, trains in about a second


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def refused(code: int, output: str, *needles: str) -> None:
    assert code == 2, output
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("spanscore: error:")]
    assert len(errors) == 1, output
    for needle in needles:
        assert needle in errors[0], output


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("domains")


@pytest.fixture(scope="module")
def btc_train(btc: Path, work: Path) -> Path:
    tweets = (btc / "train.txt").read_text(encoding="utf-8").strip("\n").split("\n\n")
    path = work / "btc-train.txt"
    path.write_text("\n\n".join(tweets[:BTC_TWEETS]) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def btc_judge(btc_train: Path, work: Path) -> Path:
    path = work / "btc.judge"
    train_judge(read_corpus(btc_train)).save(path)
    return path


@pytest.fixture(scope="module")
def paper(btc: Path, work: Path) -> Path:
    return write_btc_paper_judgements(btc / "dev.txt", work / "btc-paper.jsonl")


@pytest.fixture(scope="module")
def medical(medmentions: Path, work: Path) -> Path:
    lines = (medmentions / "judgements.jsonl").read_text(encoding="utf-8").splitlines()[:60]
    path = work / "medical.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# Our verdicts on the BTC test partial matches, recorded through the review server's API and
# exported by `spanscore review export` (tools/btc_review.py; its README says how).
REVIEW_EXPORT = Path(__file__).parent / "data" / "btc-review" / "btc-test-verdicts.jsonl"


@pytest.fixture(scope="module")
def own() -> Path:
    return REVIEW_EXPORT


def test_the_review_export_holds_our_btc_test_verdicts(own: Path, btc: Path, work: Path) -> None:
    """The export is read as judgements (offsets checked against each tweet), holds one verdict
    per pair of partial_test_overlap.csv as tests/judge_domains.py writes them down and locates them
    in BTC test, and says it came from the review tool."""
    rows = read_judgements(own)
    assert len(rows) == len(OWN_TEST_VERDICTS) == 107
    assert sum(r.score == 5 for r in rows) == 88 and sum(r.score == 1 for r in rows) == 19
    located = read_judgements(write_own_test_judgements(btc / "test.txt", work / "btc-own.jsonl"))
    for r, want, (gold, pred, good) in zip(rows, located, OWN_TEST_VERDICTS, strict=True):
        assert (r.sentence, r.gold_text, r.pred_text, r.gold_label) == (want.sentence, gold, pred, want.gold_label)
        assert (r.gold_span, r.pred_span, r.sentence_index) == (want.gold_span, want.pred_span, want.sentence_index)
        assert r.gold_span is not None and r.mismatch() == want.mismatch()
        assert r.score == (5 if good else 1) == want.score
    raw = [json.loads(line) for line in own.read_text(encoding="utf-8").splitlines()]
    assert {(x["reviewer"], x["scale"], x["criterion"]) for x in raw} == {("judge34", "goodbad", "overlap")}
    assert [x["verdict"] for x in raw] == ["Good" if good else "Bad" for _, _, good in OWN_TEST_VERDICTS]


def test_type_agnostic_judge_is_never_below_the_rule_on_own_btc_verdicts(btc_train: Path, own: Path) -> None:
    """On the 107 held-out BTC test pairs (judged tweets outside the training split; the learned
    judge cross-fitted over five folds of the judged tweets), over seeds of the classifier's
    'other' sample: the agnostic rule, and the agnostic judge learned from the other folds'
    verdicts, are never below the typed rule in F1; the learned one not in AUC either."""
    from spanscore.programs.judge import benchmark

    corpus = read_corpus(btc_train)
    rows = read_judgements(own)
    for seed in (0, 1, 2):
        rule = benchmark(corpus, rows, rule="contains", seed=seed).users["forgiving"]
        agnostic = benchmark(corpus, rows, rule="agnostic", seed=seed).users["forgiving"]
        learned = benchmark(corpus, rows, rule="agnostic", learn=True, seed=seed).users["forgiving"]
        assert _f1(agnostic) >= _f1(rule), (seed, rule, agnostic)
        assert _f1(learned) >= _f1(rule), (seed, rule, learned)
        assert learned["auc"] >= rule["auc"], (seed, rule, learned)


def test_the_paper_verdicts_are_located_in_btc_dev(paper: Path) -> None:
    rows = read_judgements(paper)  # offsets checked against the texts on reading
    assert len(rows) == len(PAPER_VERDICTS) == 28
    assert sum(r.score == 5 for r in rows) == 26 and sum(r.score == 1 for r in rows) == 2
    assert {r.gold_label for r in rows} <= {"PER", "ORG", "LOC"}


def test_judge_file_records_types_corpus_features_and_version(btc_train: Path, btc_judge: Path) -> None:
    corpus = read_corpus(btc_train)
    # independent count of the corpus: B- tags are the mentions, blank-line blocks the tweets
    text = btc_train.read_text(encoding="utf-8")
    mentions = sum(line.split("\t")[-1].startswith("B-") for line in text.splitlines() if line)
    tweets = len(text.strip("\n").split("\n\n"))
    info = load_judge(btc_judge).describe()
    assert info["types"] == ["LOC", "ORG", "PER"] == list(corpus.types)
    assert info["corpus"] == {"path": str(btc_train), "sentences": tweets, "mentions": mentions}
    assert info["format_version"] == FORMAT_VERSION == 3
    assert info["rule"] == "contains" and info["backend"] == "tfidf"
    assert "pred_margin" in info["features"]
    code, out = run("judge", "show", str(btc_judge))
    assert code == 0, out
    assert "types      LOC, ORG, PER" in out and f"({tweets} sentences, {mentions} mentions)" in out
    code, out = run("judge", "show", str(btc_judge), "--json")
    assert code == 0 and json.loads(out)["types"] == ["LOC", "ORG", "PER"]
    refused(*run("judge", "show", str(btc_train)), "not a spanscore judge file")


def test_unknown_types_are_refused_by_the_library(btc_judge: Path, medical: Path) -> None:
    judge = load_judge(btc_judge)
    items = [j.mismatch() for j in read_judgements(medical)]
    with pytest.raises(UnknownTypes, match="knows the types LOC, ORG, PER") as info:
        judge.accept_probability(items)
    assert "\n" not in str(info.value)
    fallback = judge.with_unknown("agnostic")
    assert fallback.name == judge.name + "+agnostic"
    p = fallback.accept_probability(items)
    assert p.shape == (len(items),) and ((p >= 0) & (p <= 1)).all()
    # the fallback is the agnostic rule: every prediction that contains the gold span is accepted
    longer = np.array([it.relation == "longer" for it in items])
    assert longer.any() and (p[longer] == 1.0).all()


def test_unknown_types_are_refused_in_every_command_that_takes_a_judge(
    btc_judge: Path, medical: Path, work: Path
) -> None:
    code, _ = run("samples", str(work / "samples"))
    assert code == 0
    gold, pred = work / "samples" / "gold.conll", work / "samples" / "pred.conll"  # MISC is not a BTC type
    refused(*run("evaluate", str(gold), str(pred), "--judge", str(btc_judge)), "LOC, ORG, PER", "not MISC")
    refused(*run("judge", "benchmark", str(medical), "--judge", str(btc_judge)), "LOC, ORG, PER")
    refused(*run("review", "create", str(gold), str(pred), "--db", str(work / "r.db"), "--criteria", "overlap",
                 "--judge", str(btc_judge)), "not MISC")
    scores = work / "scores.jsonl"
    scores.write_text(json.dumps({"sentence_index": 1, "gold_start": 0, "gold_end": 1, "pred_start": 0,
                                  "pred_end": 1, "score": 3}) + "\n", encoding="utf-8")
    code, out = run("judge", "user-f", str(gold), str(pred), "--scores", str(scores), "--judge", str(btc_judge),
                    "--missing", "accept")
    refused(code, out, "not MISC")
    # with the explicit option, the type-agnostic model judges them, and the signature says so
    code, out = run("evaluate", str(gold), str(pred), "--judge", str(btc_judge), "--judge-unknown", "agnostic",
                    "--json")
    assert code == 0, out
    assert "judge:tfidf-contains+agnostic/" in json.loads(out)["signature"]
    code, out = run("judge", "benchmark", str(medical), "--judge", str(btc_judge), "--judge-unknown", "agnostic",
                    "--json")
    assert code == 0 and json.loads(out)["judge"] == "tfidf-contains+agnostic"
    refused(*run("evaluate", str(gold), str(pred), "--judge-unknown", "agnostic"), "--judge-unknown")
    # review create: the task is ordered by the judge's type-agnostic model, and says so
    db = work / "agnostic-review.db"
    code, out = run("review", "create", str(gold), str(pred), "--db", str(db), "--criteria", "overlap",
                    "--judge", str(btc_judge), "--judge-unknown", "agnostic")
    assert code == 0, out
    assert "in the review order of judge tfidf-contains+agnostic" in out
    from dataclasses import fields

    from spanscore.review.store import Item, Store

    store = Store(str(db))
    stored = store.items_of(store.task().id)
    assert stored and all(row.probability is not None for row in stored)
    names = [f.name for f in fields(Item)]
    items = [Item(**{k: v for k, v in row._mapping.items() if k in names}) for row in stored]
    assert {it.gold_label for it in items} - {"LOC", "ORG", "PER"}  # types the BTC judge never saw
    expected = load_judge(btc_judge).with_unknown("agnostic").accept_probability([it.mismatch() for it in items])
    np.testing.assert_allclose([row.probability for row in stored], expected, atol=1e-9)
    refused(*run("review", "create", str(gold), str(pred), "--db", str(work / "r2.db"), "--judge-unknown",
                 "agnostic"), "--judge-unknown")


def test_train_scores_labels_are_checked_against_the_corpus(btc_train: Path, medical: Path, work: Path) -> None:
    out_path = work / "never.judge"
    refused(*run("judge", "train", str(btc_train), "--scores", str(medical), "-o", str(out_path)),
            "gold_label", "is not a type of", f"{medical}:1")
    assert not out_path.exists()
    # a type-agnostic judge reads no type: it learns from any domain's scores
    code, out = run("judge", "train", str(btc_train), "--rule", "agnostic", "--scores", str(medical), "-o",
                    str(out_path))
    assert code == 0, out
    judge = load_judge(out_path)
    assert judge.rule == "agnostic" and judge.acceptance is not None
    assert judge.describe()["types"] == "any (type-agnostic)"


@pytest.mark.parametrize(
    "args",
    [
        ["judge", "train", "TRAIN", "-o", "OUT", "--seed", "-7"],
        ["judge", "train", "TRAIN", "-o", "OUT", "--folds", "1"],
        ["judge", "benchmark", "PAPER", "--train", "TRAIN", "--seed", "-7"],
        ["judge", "benchmark", "PAPER", "--train", "TRAIN", "--folds", "0"],
        ["judge", "curve", "TRAIN", "--scores", "PAPER", "--seed", "-7"],
        ["judge", "curve", "TRAIN", "--scores", "PAPER", "--seeds", "0"],
        ["judge", "curve", "TRAIN", "--scores", "PAPER", "--sizes", "-5"],
        ["judge", "curve", "TRAIN", "--scores", "PAPER", "--folds", "-1"],
    ],
)
def test_bad_seeds_folds_and_sizes_are_refused_in_one_line(
    args: list[str], btc_train: Path, paper: Path, work: Path
) -> None:
    given = [{"TRAIN": str(btc_train), "PAPER": str(paper), "OUT": str(work / "bad.judge")}.get(a, a) for a in args]
    option = next(a for a in args if a.startswith("--") and a not in ("--train", "--scores"))
    refused(*run(*given), option)
    assert not (work / "bad.judge").exists()


def test_wilson_and_auc_intervals_against_hand_worked_values() -> None:
    # Wilson (1927), 95%, as scipy's binomtest(k, n).proportion_ci(method="wilson") gives them
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775328, abs=1e-6)
    lo, hi = wilson(26, 28)
    assert (lo, hi) == pytest.approx((0.7735464, 0.9801879), abs=1e-6)
    assert all(math.isnan(v) for v in wilson(0, 0))
    rng = np.random.default_rng(3)
    truth = rng.random(300) < 0.6
    score = truth * 0.3 + rng.random(300)
    lo, hi = auc_interval(truth, score)
    assert lo < roc_auc(truth, score) < hi and hi - lo < 0.2
    assert auc_interval(truth, score) == (lo, hi)  # seeded
    # a perfect ranking stays perfect in every resample
    assert auc_interval(truth, truth.astype(float)) == (1.0, 1.0)


def test_benchmark_json_gives_pairs_confusion_intervals_and_warnings(btc_train: Path, paper: Path) -> None:
    code, out = run("judge", "benchmark", str(paper), "--train", str(btc_train), "--baselines", "--json")
    assert code == 0, out
    data = json.loads(out[out.index("{"):])
    rows = read_judgements(paper)
    # Good/Bad verdicts (5 and 1): both users accept the same pairs, so one row
    assert data["users_coincide"] is True and "forgiving" not in data and "strict" not in data
    block = data["both"]
    p = np.array([pair["probability"] for pair in data["pairs"]])
    assert [pair["line"] for pair in data["pairs"]] == [r.line for r in rows]
    truth = np.array([r.score >= 2 for r in rows])
    # independent count of the confusion from the per-pair probabilities
    judge_yes = p >= 0.5
    assert block["confusion"] == {
        "both_accept": int(np.sum(judge_yes & truth)), "judge_only": int(np.sum(judge_yes & ~truth)),
        "user_only": int(np.sum(~judge_yes & truth)), "both_reject": int(np.sum(~judge_yes & ~truth)),
    }
    assert sum(block["confusion"].values()) == 28
    assert block["confusion"] == confusion(truth, p)
    c = block["confusion"]
    assert block["recall"] == round(c["both_accept"] / 26, 2)  # two decimals for fewer than 100 pairs
    lo, hi = block["intervals"]["recall"]
    assert lo <= block["recall"] <= hi
    assert any("only 28 judged pairs" in w for w in data["warnings"])
    assert any("accept 26 and reject 2" in w for w in data["warnings"])
    assert "holds no judged sentence" in data["crossfit"]
    assert data["baselines"]["accept-all"]["both"]["recall"] == 1.0
    code, text = run("judge", "benchmark", str(paper), "--train", str(btc_train))
    assert code == 0 and " both " in text and "warning: only 28 judged pairs" in text


def test_benchmark_keeps_both_users_where_they_differ(btc_judge: Path, medical: Path) -> None:
    code, out = run("judge", "benchmark", str(medical), "--judge", str(btc_judge), "--judge-unknown", "agnostic",
                    "--json")
    data = json.loads(out)
    assert code == 0 and data["users_coincide"] is False
    assert set(data) >= {"forgiving", "strict", "pairs", "warnings"}


def test_a_corpus_holding_some_judged_sentences_and_not_others_is_refused(
    btc_train: Path, paper: Path, work: Path, btc: Path
) -> None:
    dev = (btc / "dev.txt").read_text(encoding="utf-8")
    mixed = work / "mixed.txt"
    first = json.loads(paper.read_text(encoding="utf-8").splitlines()[0])
    tweet = dev.strip("\n").split("\n\n")[first["sentence_index"]]
    mixed.write_text(btc_train.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + tweet + "\n", encoding="utf-8")
    refused(*run("judge", "benchmark", str(paper), "--train", str(mixed)), "holds the first but not the second")


def test_type_agnostic_judge_is_never_below_the_rule_on_held_out_btc(btc_train: Path, paper: Path) -> None:
    """On the paper's verdicts (judged tweets outside the training split), over seeds of the
    classifier's 'other' sample: the agnostic rule never accepts fewer Good pairs than the typed
    rule, and never more Bad ones."""
    from spanscore.programs.judge import benchmark

    corpus = read_corpus(btc_train)
    rows = read_judgements(paper)
    for seed in (0, 1, 2):
        typed = benchmark(corpus, rows, rule="contains", seed=seed).to_dict()["both"]["confusion"]
        agnostic = benchmark(corpus, rows, rule="agnostic", seed=seed).to_dict()["both"]["confusion"]
        assert agnostic["both_accept"] >= typed["both_accept"], (seed, typed, agnostic)
        assert agnostic["judge_only"] <= max(typed["judge_only"], 1), (seed, typed, agnostic)


def test_agnostic_judges_round_trip(btc_train: Path, medical: Path, work: Path) -> None:
    corpus = read_corpus(btc_train)
    judge = train_judge(corpus, rule="agnostic", judgements=read_judgements(medical))
    assert isinstance(judge, SpanJudge) and judge.name == "tfidf-agnostic-learned-forgiving"
    judge.save(work / "agn.judge")
    loaded = load_judge(work / "agn.judge")
    items = [j.mismatch() for j in read_judgements(medical)]
    np.testing.assert_allclose(loaded.accept_probability(items), judge.accept_probability(items), atol=1e-9)


def _f1(block: dict[str, float]) -> float:
    p, r = block["precision"], block["recall"]
    return 2 * p * r / (p + r) if p + r else 0.0


def test_type_agnostic_judge_is_never_below_the_rule_on_held_out_medical(medmentions: Path, work: Path) -> None:
    """Cross-fitted over three blocks of the first 400 MedMentions sentences (each block scored by
    judges that never saw it or its scores), over seeds: the type-agnostic judge learned from the
    scores is never below the typed rule without scores in F1, for either user. (Its AUC is not
    pinned: on these 167 judgements, 14 of them rejected by the forgiving user, it is 0.775 against
    the rule's 0.793, a paired bootstrap difference of -0.019 (95% -0.149 to +0.093), and for the
    strict user +0.067 (-0.001 to +0.141); with more judgements it is well above, docs/judge.md.)"""
    from spanscore.programs.judge import benchmark

    units = (medmentions / "st21pv_test.iob").read_text(encoding="utf-8").strip("\n").split("\n\n")
    path = work / "mm400.iob"
    path.write_text("\n\n".join(units[:400]) + "\n", encoding="utf-8")
    corpus = read_corpus(path)
    texts = {s.text for s in corpus.sentences}
    rows = [j for j in read_judgements(medmentions / "judgements.jsonl") if j.sentence in texts]
    assert len(rows) > 100
    for seed in (0, 1):
        rule = benchmark(corpus, rows, rule="contains", folds=3, seed=seed).users
        agnostic = benchmark(corpus, rows, rule="agnostic", learn=True, folds=3, seed=seed).users
        for user in ("forgiving", "strict"):
            assert _f1(agnostic[user]) >= _f1(rule[user]), (seed, user, rule[user], agnostic[user])


def test_an_agnostic_model_carries_across_corpora(btc_train: Path, medical: Path, paper: Path, work: Path) -> None:
    """A type-agnostic model learned on medical scores, carried to a judge of BTC's classifier: the
    CLI and the library agree, a typed model is refused, and the carried judge never accepts fewer
    of the paper's Good pairs than the BTC rule."""
    source = work / "med-agnostic.judge"
    code, out = run("judge", "train", str(btc_train), "--rule", "agnostic", "--scores", str(medical), "-o", str(source))
    assert code == 0, out
    carried = work / "carried.judge"
    code, out = run("judge", "train", str(btc_train), "--rule", "agnostic", "--acceptance-from", str(source), "-o",
                    str(carried))
    assert code == 0, out
    judge = load_judge(carried)
    assert judge.name == "tfidf-agnostic+tfidf-agnostic-learned-forgiving"
    info = judge.describe()["acceptance"]
    assert info["carried"] is True and load_judge(source).describe()["acceptance"]["carried"] is False
    scores = read_judgements(medical)
    assert info["acceptance_rate"] == pytest.approx((sum(j.score >= 2 for j in scores) + 1) / (len(scores) + 2))
    code, out = run("judge", "show", str(carried))
    assert code == 0 and "carried to this corpus" in out
    original = load_judge(source).acceptance
    assert judge.acceptance is not None and original is not None
    assert judge.acceptance.groups.keys() == original.groups.keys()
    assert judge.acceptance.carried_over and not original.carried_over
    for g, model in original.carried().groups.items():
        np.testing.assert_array_equal(judge.acceptance.groups[g].coef, model.coef)
        assert judge.acceptance.groups[g].intercept == model.intercept
    code, out = run("judge", "benchmark", str(paper), "--train", str(btc_train), "--rule", "agnostic",
                    "--acceptance-from", str(source), "--json")
    assert code == 0, out
    data = json.loads(out)
    rows = read_judgements(paper)
    np.testing.assert_allclose([pair["probability"] for pair in data["pairs"]],
                               judge.accept_probability([r.mismatch() for r in rows]), atol=1e-4)
    code, out = run("judge", "benchmark", str(paper), "--train", str(btc_train), "--json")
    rule = json.loads(out)["both"]["confusion"]
    assert data["both"]["confusion"]["both_accept"] >= rule["both_accept"]
    rule_judge = work / "rule-only.judge"
    train_judge(read_corpus(btc_train)).save(rule_judge)
    refused(*run("judge", "train", str(btc_train), "--rule", "agnostic", "--acceptance-from", str(rule_judge), "-o",
                 str(work / "x.judge")), "learned no type-agnostic model")
    refused(*run("judge", "train", str(btc_train), "--acceptance-from", str(source), "-o", str(work / "x.judge")),
            "--rule agnostic")


def test_curve_gives_each_point_its_intervals(btc_train: Path, btc_judge: Path, own: Path, paper: Path) -> None:
    """`judge curve` learning from the 107 BTC test verdicts, measured on the paper's 28 dev
    verdicts: each point's intervals are Wilson's of its own counts and a bootstrap around its AUC;
    the judge without scores has the intervals `judge benchmark` gives the same judge; the table
    shows them."""
    code, out = run("judge", "curve", str(btc_train), "--scores", str(own), "--test", str(paper), "--sizes", "0,all",
                    "--seeds", "2", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert len(data["points"]) == 2 * 2 * 2
    n = 28
    for point in data["points"]:
        for user in ("forgiving", "strict"):
            block = point[user]
            yes = round(block["user_accepts"] * n)
            accepted = round(block["judge_accepts"] * n)
            both = round(block["recall"] * yes)
            ci = block["intervals"]
            assert ci["recall"] == pytest.approx(wilson(both, yes), abs=1e-4)
            assert ci["precision"] == pytest.approx(wilson(both, accepted), abs=1e-4)
            lo, hi = ci["auc"]
            assert lo <= block["auc"] <= hi
    code, out = run("judge", "benchmark", str(paper), "--judge", str(btc_judge), "--json")
    assert code == 0, out
    bench = json.loads(out)["both"]["intervals"]
    start = next(p for p in data["points"] if p["size"] == 0)
    for figure in ("precision", "recall", "auc"):
        assert start["forgiving"]["intervals"][figure] == pytest.approx(bench[figure], abs=0.006)
    code, text = run("judge", "curve", str(btc_train), "--scores", str(own), "--test", str(paper), "--sizes", "0,all",
                     "--seeds", "2")
    assert code == 0, text
    assert "P (95%)" in text and "AUC (95%)" in text and "bounds averaged over seeds" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("0 "))
    low, high = start["forgiving"]["intervals"]["recall"]
    assert f"({low:.3f}-{high:.3f})" in row


def test_auc_interval_matches_a_plain_bootstrap() -> None:
    """The counted bootstrap against resampling item by item (independent code, more resamples),
    with ties: the quantiles agree to within the bootstraps' own noise."""
    rng = np.random.default_rng(11)
    truth = rng.random(120) < 0.8
    score = np.round(rng.random(120) + 0.4 * truth, 1)  # many ties
    pos, neg = score[truth], score[~truth]
    plain = []
    for _ in range(4000):
        p = pos[rng.integers(0, len(pos), len(pos))]
        q = neg[rng.integers(0, len(neg), len(neg))]
        plain.append(((p[:, None] > q[None, :]).sum() + 0.5 * (p[:, None] == q[None, :]).sum()) / (len(p) * len(q)))
    lo, hi = np.quantile(plain, [0.025, 0.975])
    got = auc_interval(truth, score)
    assert got == pytest.approx((lo, hi), abs=0.015)


def test_a_carried_model_shrinks_toward_the_rule_and_takes_the_source_rate_back() -> None:
    """Hand-worked: a group of 100 scores weighs half (100 / (100 + 100)); every log-odds gains
    log(81 / 21), the smoothed odds of the 80 acceptances among 100 scores, the rule's in a group
    without a model too; carrying twice changes nothing; a model that kept no counts (an older
    file) is only shrunk."""
    from spanscore.programs.judge.acceptance import Acceptance, GroupModel
    from spanscore.stages.judging import Mismatch

    model = GroupModel(np.zeros(2), np.ones(2), np.array([1.0, -2.0]), 1.6, -0.4, 100, 80)
    carried = Acceptance({"drops": model}, "forgiving", scores=100, accepted=80).carried()
    m = carried.groups["drops"]
    odds = math.log(81 / 21)
    assert m.slope == pytest.approx(1.3) and m.coef.tolist() == pytest.approx([0.5, -1.0])
    assert m.intercept == pytest.approx(-0.2 + odds) and carried.shift == pytest.approx(odds)
    assert carried.carried() is carried
    cut = Mismatch(predicted_text="b", label="X", reference_text="a b", context="a b", relation="shorter",
                   same_start=False, same_end=True)
    longer = Mismatch(predicted_text="a b c", label="X", reference_text="a b", context="a b c", relation="longer",
                      same_start=True, same_end=False)
    x, rule = np.array([[0.3, 0.1], [0.0, 0.0]]), np.array([0.7, 0.4])
    eta = 1.3 * math.log(0.7 / 0.3) - 0.2 + odds + 0.5 * 0.3 - 1.0 * 0.1
    got = carried.predict(x, [cut, longer], rule)
    assert got[0] == pytest.approx(1 / (1 + math.exp(-eta)))
    assert got[1] == pytest.approx(1 / (1 + math.exp(-(math.log(0.4 / 0.6) + odds))))  # "adds": the rule, moved
    old = Acceptance({"drops": model}, "forgiving").carried()
    assert old.shift == 0.0 and old.groups["drops"].intercept == pytest.approx(-0.2)


def test_a_model_carried_across_domains_is_never_below_the_target_rule(
    btc_train: Path, own: Path, paper: Path, medmentions: Path, work: Path
) -> None:
    """Both ways, over seeds, for both users, in F1 on held-out pairs of the target (its rule
    measured on the same pairs, cross-fitted alike): the type-agnostic model learned from the 135
    BTC verdicts on the first 400 MedMentions sentences' scores (cross-fitted over three blocks),
    and the one learned from those medical scores on the 107 and the 28 BTC verdicts (BTC train's
    classifier, which never saw them). Neither saw a score of the target."""
    from spanscore.programs.judge import benchmark, prepare
    from spanscore.programs.judge.crossfit import backend_trainer

    units = (medmentions / "st21pv_test.iob").read_text(encoding="utf-8").strip("\n").split("\n\n")
    path = work / "mm400-carry.iob"
    path.write_text("\n\n".join(units[:400]) + "\n", encoding="utf-8")
    medical = read_corpus(path)
    texts = {s.text for s in medical.sentences}
    med_rows = [j for j in read_judgements(medmentions / "judgements.jsonl") if j.sentence in texts]
    btc = read_corpus(btc_train)
    btc_rows = read_judgements(own) + read_judgements(paper)
    for seed in (0, 1):
        trainer = backend_trainer("tfidf", seed)
        btc_prepared = prepare(btc, btc_rows, rule="agnostic", trainer=trainer)
        med_prepared = prepare(medical, med_rows, rule="agnostic", trainer=trainer)
        med_rule = benchmark(medical, med_rows, folds=3, seed=seed).users
        btc_rule = {t: benchmark(btc, read_judgements(t), seed=seed).users for t in (own, paper)}
        for user in ("forgiving", "strict"):
            from_btc = btc_prepared.acceptance(range(len(btc_rows)), user)
            from_med = med_prepared.acceptance(range(len(med_rows)), user)
            carried = benchmark(medical, med_rows, rule="agnostic", fixed=from_btc, folds=3, seed=seed).users[user]
            assert _f1(carried) >= _f1(med_rule[user]), (seed, user, "BTC -> medical", med_rule[user], carried)
            for target in (own, paper):
                rule = btc_rule[target][user]
                rows = read_judgements(target)
                carried = benchmark(btc, rows, rule="agnostic", fixed=from_med, seed=seed).users[user]
                assert _f1(carried) >= _f1(rule), (seed, user, f"medical -> {target.name}", rule, carried)


def test_a_judge_file_without_the_counts_still_reads(btc_train: Path, medical: Path, work: Path) -> None:
    """Judge files written before the counts were kept (no `scores`, `accepted`, `carried`, `shift`)
    load, judge as before within their domain, and are carried without the rate's shift; a file
    with the counts round-trips them."""
    from spanscore.programs.judge.model import _META

    path = work / "counts.judge"
    judge = train_judge(read_corpus(btc_train), rule="agnostic", judgements=read_judgements(medical))
    judge.save(path)
    acceptance = load_judge(path).acceptance
    assert acceptance is not None and judge.acceptance is not None
    assert (acceptance.scores, acceptance.accepted) == (judge.acceptance.scores, judge.acceptance.accepted) == (
        60, sum(j.score >= 2 for j in read_judgements(medical)))
    with np.load(path, allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files}
    meta = json.loads(arrays[_META].tobytes().decode("utf-8"))
    for key in ("scores", "accepted", "carried", "shift"):
        del meta["acceptance"][key]
    for group in meta["acceptance"]["groups"].values():
        del group["accepted"]
    arrays[_META] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    older = work / "older.judge"
    with older.open("wb") as fh:
        np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]
    old = load_judge(older)
    assert old.acceptance is not None and old.acceptance.scores is None and not old.acceptance.carried_over
    items = [j.mismatch() for j in read_judgements(medical)]
    np.testing.assert_allclose(old.accept_probability(items), judge.accept_probability(items), atol=1e-12)
    assert old.acceptance.carried().shift == 0.0 and acceptance.carried().shift != 0.0
    assert old.describe()["acceptance"]["acceptance_rate"] is None
