"""spanscore review: the store, the paper's judgements (Table 5), expert scores, agreement, exports."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("sqlalchemy")

import spanscore
from spanscore.cli.main import cli
from spanscore.io.reading import Reading
from spanscore.programs.judge import CallableJudge
from spanscore.programs.judge.judgements import read_judgements
from spanscore.review import (
    Store,
    cohen_kappa,
    expert_judgements,
    export_rows,
    items_from_run,
    krippendorff_alpha,
    ordered,
    paper_judgements,
    stats,
    write_export,
)
from spanscore.review.store import HEAD

DATA = Path(__file__).resolve().parent / "data"


def test_agreement_equals_the_reference_implementations() -> None:
    krippendorff = pytest.importorskip("krippendorff")
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(11)
    for _ in range(150):
        n, r = rng.randint(2, 25), rng.randint(2, 5)
        matrix = [[rng.choice([1, 2, 3, 4, 5]) if rng.random() < 0.8 else None for _ in range(n)] for _ in range(r)]
        units = [[row[i] for row in matrix if row[i] is not None] for i in range(n)]
        data = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
        for level in ("nominal", "ordinal"):
            try:
                expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
            except (ValueError, ZeroDivisionError):
                expected = float("nan")
            got = krippendorff_alpha(units, level)
            assert (np.isnan(expected) and np.isnan(got)) or got == pytest.approx(expected, abs=1e-9)
        a = [rng.choice([0, 1]) for _ in range(n)]
        b = [rng.choice([0, 1]) if rng.random() < 0.5 else x for x in a]
        if len(set(a) | set(b)) > 1:
            assert cohen_kappa(a, b) == pytest.approx(metrics.cohen_kappa_score(a, b), abs=1e-12)


def test_the_papers_judgements_reproduce_table_5(seed_pairs: Path, tmp_path: Path, review_db: str) -> None:
    store = Store(review_db)
    rows = paper_judgements(seed_pairs / "judgements.md")
    task, added = store.create_task("paper-dev", "goodbad", [item for item, _ in rows])
    assert added == 54
    who = store.reviewer_named("kong-sullivan", create=True)
    ids = {it.key: it.id for it in store.items_of(task)}
    for item, verdict in rows:
        store.judge(ids[item.key()], who, verdict, scale="goodbad")
    table = stats(store)["criteria"]
    shown = {c: (e["good"], e["judged"]) for c, e in table.items()}
    assert shown == {"left": (15, 15), "right": (11, 13), "overlap": (24, 26)}  # Kong and Sullivan, Table 5
    assert store.create_task("paper-dev", "goodbad", [item for item, _ in rows])[1] == 0  # nothing twice


def test_expert_scores_round_trip_through_an_export(medmentions: Path, tmp_path: Path, review_db: str) -> None:
    source = medmentions / "judgements.jsonl"
    store = Store(review_db)
    rows = expert_judgements(source)
    task, _ = store.create_task("mm", "five", [item for item, _ in rows])
    who = store.reviewer_named("expert", create=True)
    ids = {it.key: it.id for it in store.items_of(task)}
    for item, score in rows:
        store.judge(ids[item.key()], who, score, scale="five")
    out = tmp_path / "export.jsonl"
    write_export(export_rows(store), out)
    original, exported = read_judgements(source), read_judgements(out)

    def fields(j: object) -> tuple[object, ...]:
        keys = (
            "id",
            "sentence",
            "gold_text",
            "gold_label",
            "pred_text",
            "score",
            "sentence_index",
            "gold_span",
            "pred_span",
        )
        return tuple(getattr(j, k) for k in keys)

    # Every field `judge benchmark` and `judge train --scores` read is the same, in the same order.
    assert [fields(j) for j in exported] == [fields(j) for j in original]
    csv_out = tmp_path / "export.csv"
    write_export(export_rows(store), csv_out)
    assert csv_out.read_text(encoding="utf-8").splitlines()[0].startswith("id,criterion,reviewer,verdict,score")


def test_items_from_a_run_are_its_partial_matches_ordered_by_a_judge(tmp_path: Path) -> None:
    gold, pred = DATA / "small.gold.conll", DATA / "small.pred.conll"
    items = items_from_run(gold, pred, Reading(), type5=True)
    report = spanscore.evaluate(reference=gold, predicted=pred)
    for criterion in ("left", "right", "overlap"):
        assert sum(criterion in it.criterion.split(",") for it in items) == report.metrics[criterion]["partial"]
    assert sum("type5" in it.criterion.split(",") for it in items) == report.to_dict()["errors"]["right_label_overlap"]
    # One item per pair: a reviewer never judges the same pair twice.
    places = [(it.unit, it.gold_start, it.gold_end, it.pred_start, it.pred_end) for it in items]
    assert len(places) == len(set(places))
    nyt = next(it for it in items if "right" in it.criterion.split(","))
    assert (nyt.gold_text, nyt.pred_text) == ("the New York Times", "New York Times")
    assert nyt.sentence[nyt.gold_start : nyt.gold_end] == nyt.gold_text
    assert nyt.sentence[nyt.pred_start : nyt.pred_end] == nyt.pred_text
    judge = CallableJudge(lambda m: 0.45 if m.relation == "shorter" else 0.9, name="j")
    judged = ordered(items_from_run(gold, pred, Reading(), judge=judge))
    assert [it.probability for it in judged] == sorted((it.probability for it in judged), key=lambda p: abs(p - 0.5))


def test_one_item_per_pair_and_its_verdict_under_every_criterion(review_db: str) -> None:
    samples = Path(spanscore.__file__).parent / "programs" / "sample_data"
    report = spanscore.evaluate(reference=samples / "gold.conll", predicted=samples / "pred.conll")
    items = items_from_run(samples / "gold.conll", samples / "pred.conll", Reading(), type5=True)
    errors = report.to_dict()["errors"]
    # On the samples every partial pair is right-label and overlapping: left, right and overlap
    # partial pairs are all among the Type-5 ones, 8 in all.
    assert len(items) == errors["right_label_overlap"] == 8
    store = Store(review_db)
    task, added = store.create_task("dedup", "goodbad", items)
    assert added == 8
    who = store.reviewer_named("r1", create=True)
    for it in store.items_of(task):
        store.judge(it.id, who, 1, scale="goodbad")
    table = stats(store, "dedup")["criteria"]
    for criterion in ("left", "right", "overlap"):
        assert table[criterion]["judged"] == table[criterion]["good"] == report.metrics[criterion]["partial"]
    assert table["type5"]["judged"] == 8
    for criterion in ("left", "overlap", "type5"):
        row, judged, total = store.next_item(task, who, criterion=criterion)
        assert row is None and judged == total == table[criterion]["pairs"]
    facets = store.facets(task)["criteria"]
    assert facets == {c: table[c]["pairs"] for c in table}


def test_two_reviewers_history_and_agreement(tmp_path: Path, review_db: str) -> None:
    store = Store(review_db)
    samples = Path(spanscore.__file__).parent / "programs" / "sample_data"
    items = items_from_run(samples / "gold.conll", samples / "pred.conll", Reading(), type5=True)
    task, _ = store.create_task("t", "goodbad", items)
    rows = store.items_of(task)
    a, b = store.reviewer_named("ann", create=True), store.reviewer_named("bob", create=True)
    verdicts_a = [1, 1, 0, 1, 1, 0, 0, 1]
    verdicts_b = [1, 0, 0, 1, 1, 1, 0, 1]
    for row, va, vb in zip(rows, verdicts_a, verdicts_b, strict=True):
        store.judge(row.id, a, 0, scale="goodbad")
        store.judge(row.id, a, va, scale="goodbad")  # judged again: the first verdict is kept, superseded
        store.judge(row.id, b, vb, scale="goodbad")
    data = stats(store)
    assert data["agreement"]["cohen_kappa"]["ann / bob"]["kappa"] == pytest.approx(cohen_kappa(verdicts_a, verdicts_b))
    assert data["agreement"]["krippendorff_alpha"] == pytest.approx(
        krippendorff_alpha([[x, y] for x, y in zip(verdicts_a, verdicts_b, strict=True)])
    )
    with store.engine.connect() as db:
        assert db.execute(store.sa.select(store.sa.func.count()).select_from(store.judgements)).scalar_one() == 24
    with pytest.raises(spanscore.OptionError):
        store.judge(rows[0].id, a, 3, scale="goodbad")


def test_review_commands(seed_pairs: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    runner = CliRunner()
    out = runner.invoke(
        cli, ["review", "import", str(seed_pairs / "judgements.md"), "--db", db, "--name", "p", "--reviewer", "ks"]
    )
    assert out.exit_code == 0, out.output
    table = json.loads(runner.invoke(cli, ["review", "stats", "--db", db, "--json"]).output)
    assert table["criteria"]["right"]["good"] == 11
    args = ["review", "create", str(DATA / "small.gold.conll"), str(DATA / "small.pred.conll"), "--db", db]
    assert runner.invoke(cli, [*args, "--name", "small"]).exit_code == 0
    token = runner.invoke(cli, ["review", "add-reviewer", "ann", "--db", db]).output.strip()
    store = Store(db)
    assert store.reviewer_of(token).name == "ann" and store.reviewer_of(token + "x") is None
    refused = runner.invoke(cli, ["review", "stats", "--db", db])
    assert refused.exit_code == 2 and "name the task" in refused.output
    for command in (["serve"], ["stats"], ["export", "-o", str(tmp_path / "none.jsonl")]):
        unknown = runner.invoke(cli, ["review", *command, "--db", db, "--task", "nope"])
        assert unknown.exit_code == 2, unknown.output
        assert "'nope'" in unknown.output and "p, small" in unknown.output, unknown.output  # the tasks there are
        assert len(unknown.output.strip().splitlines()) == 1
    export = runner.invoke(cli, ["review", "export", "--db", db, "--task", "p", "-o", str(tmp_path / "e.jsonl")])
    assert export.exit_code == 0 and len((tmp_path / "e.jsonl").read_text(encoding="utf-8").splitlines()) == 54


def test_the_extra_is_named_when_sqlalchemy_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)
    with pytest.raises(spanscore.OptionError, match=r"pip install 'spanscore\[review\]'"):
        Store(tmp_path / "r.db")


def test_stats_give_the_users_f_scores_as_judge_user_f_does(tmp_path: Path) -> None:
    from spanscore.programs.judge.userf import user_f

    gold, pred = DATA / "small.gold.conll", DATA / "small.pred.conll"
    db = str(tmp_path / "r.db")
    out = CliRunner().invoke(cli, ["review", "create", str(gold), str(pred), "--db", db, "--name", "t", "--type5"])
    assert out.exit_code == 0, out.output
    store = Store(db)
    task = store.task("t")
    who = store.reviewer_named("ann", create=True)
    type5 = [it for it in store.items_of(task.id) if "type5" in it.criterion.split(",")]
    assert sorted(it.gold_text for it in type5) == ["Bank of America", "the New York Times"]
    verdict = {"the New York Times": 1, "Bank of America": 0}
    for it in type5:
        store.judge(it.id, who, verdict[it.gold_text], scale="goodbad")
    users = stats(store, "t")["users"]
    assert users["exact_matches"] == 2 and users["judged"] == 2 and users["unjudged"] == 0
    assert users["forgiving"]["f1"] == pytest.approx(0.5) and users["strict"]["f1"] == pytest.approx(0.5)
    # The same scores through judge user-f (Good 5, Bad 1, as the export writes them).
    scores = {}
    for it in type5:
        scores[(it.unit, it.gold_start, it.gold_end, it.pred_start, it.pred_end)] = 5 if verdict[it.gold_text] else 1
    reference = user_f(gold, pred, scores)
    for user in ("forgiving", "strict"):
        assert users[user]["f1"] == pytest.approx(reference[user]["f1"])
    assert users["criteria"]["exact"] == pytest.approx(reference["criteria"]["exact"])
    assert users["criteria"]["relaxed"] == pytest.approx(reference["criteria"]["relaxed"])
    shown = CliRunner().invoke(cli, ["review", "stats", "--db", db, "--task", "t"]).output
    assert "forgiving user: F1 50.00" in shown


def test_the_migrated_schema_is_the_schema_the_code_uses(review_db: str) -> None:
    # Alembic's own comparison: a database migrated to the head revision differs in nothing
    # (tables, columns, types, indexes, constraints) from the tables the store reads and writes.
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    store = Store(review_db)
    with store.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), store.meta) == []
        assert MigrationContext.configure(connection).get_current_revision() == HEAD
    Store(review_db)  # opening it again migrates nothing and fails on nothing
    store.engine.dispose()
