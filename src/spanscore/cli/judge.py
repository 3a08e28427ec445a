"""``spanscore judge``: train a judge of boundary mismatches, benchmark it against human scores,
and compare criteria with a strict and a forgiving user (Nejadgholi et al. 2020)."""

from __future__ import annotations

import importlib
import json
import math
import time
from pathlib import Path
from typing import Any

import click

from ..io.reading import Reading
from .options import reading_options, refuse_overwrite

BACKEND_CHOICES = ["tfidf", "minilm"]
USER_CHOICES = ["forgiving", "strict"]


def _judge_module() -> Any:
    # Imported on use: ``spanscore --help`` stays fast.
    return importlib.import_module("spanscore.programs.judge")


def _fmt(x: float | None) -> str:
    return "  n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


@click.group("judge")
def judge_group() -> None:
    """Learned judges of right-label/overlapping (Type-5) mismatches."""


@judge_group.command("train", short_help="Train a judge on the gold mentions of a corpus.")
@click.argument("train", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the judge file.")
@reading_options(repair=False)
@click.option("--backend", type=click.Choice(BACKEND_CHOICES), default="tfidf", show_default=True,
              help="Entity classifier: character n-gram TF-IDF, or MiniLM embeddings (needs torch).")
@click.option("--rule", type=click.Choice(["contains", "classifier"]), default="contains", show_default=True,
              help="Decision without human scores: classifier = Nejadgholi et al.'s (top class is the label); contains "
                   "also accepts every prediction that contains the gold span.")
@click.option("--scores", "scores_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Human judgements (JSONL as medmentions-expert) to learn an acceptance model from.")
@click.option("--user", type=click.Choice(USER_CHOICES), default="forgiving", show_default=True,
              help="Whose acceptance --scores teaches: forgiving (score >= 2) or strict (>= 3).")
@click.option("--folds", type=int, default=5, show_default=True,
              help="Blocks for the out-of-fold features of judged sentences that are in TRAIN.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the 'other' sample.")
def train_command(
    train: Path,
    output: Path,
    reading: Reading,
    backend: str,
    rule: str,
    scores_path: Path | None,
    user: str,
    folds: int,
    seed: int,
) -> None:
    """Train a judge on the gold mentions of TRAIN (CoNLL) and write it to a file."""
    refuse_overwrite(output, train, scores_path)
    jm = _judge_module()
    t0 = time.perf_counter()
    corpus = jm.read_corpus(train, reading)
    rows = jm.read_judgements(scores_path) if scores_path is not None else None
    judge = jm.train_judge(corpus, backend=backend, rule=rule, judgements=rows, user=user, folds=folds, seed=seed,
                           judgements_path=str(scores_path))
    judge.save(output)
    click.echo(f"judge {judge.name} written to {output} ({time.perf_counter() - t0:.1f} s)", err=True)


@judge_group.command("benchmark", short_help="Agreement of a judge with human scores (cross-fitted).")
@click.argument("judgements", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--train", "train_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The corpus the judged sentences come from (CoNLL); judges are cross-fitted over it.")
@reading_options(repair=False)
@click.option("--backend", type=click.Choice(BACKEND_CHOICES), default="tfidf", show_default=True,
              help="Entity classifier backend.")
@click.option("--rule", type=click.Choice(["contains", "classifier"]), default="contains", show_default=True,
              help="Decision rule of a judge that does not learn from the scores.")
@click.option("--learn/--no-learn", default=False, show_default=True,
              help="Also learn an acceptance model from the human scores (cross-fitted, nested).")
@click.option("--user", type=click.Choice(USER_CHOICES), default="forgiving", show_default=True,
              help="Whose acceptance --learn learns.")
@click.option("--folds", type=int, default=5, show_default=True, help="Contiguous blocks of sentences.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the 'other' sample.")
@click.option("--baselines", is_flag=True, help="Also report the accept-all and reject-all judges.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def benchmark_command(
    judgements: Path,
    train_path: Path,
    reading: Reading,
    backend: str,
    rule: str,
    learn: bool,
    user: str,
    folds: int,
    seed: int,
    baselines: bool,
    as_json: bool,
) -> None:
    """Measure a judge against the human scores in JUDGEMENTS, cross-fitted over --train."""
    jm = _judge_module()
    corpus = jm.read_corpus(train_path, reading)
    rows = jm.read_judgements(judgements)
    result = jm.benchmark(corpus, rows, backend=backend, rule=rule, learn=learn, user=user, folds=folds, seed=seed,
                          path=str(judgements), baselines=baselines)
    data = result.to_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    blocks = [(data["judge"], data)] + [(k, v) for k, v in data.get("baselines", {}).items()]
    click.echo(f"{data['judgements']} judgements, {folds} block folds, {data['seconds']:.1f} s")
    head = ("judge", "user", "precision", "recall", "disagree", "AUC", "accepts")
    click.echo(f"{head[0]:28s} {head[1]:10s} " + " ".join(f"{h:>9s}" for h in head[2:]))
    for name, block in blocks:
        for u in USER_CHOICES:
            b = block[u]
            values = (b["precision"], b["recall"], b["disagreement"], b["auc"], b["judge_accepts"])
            click.echo(f"{name:28s} {u:10s} " + " ".join(f"{_fmt(v):>9s}" for v in values))


@judge_group.command("user-f", short_help="Strict and forgiving users' F-scores vs the criteria.")
@click.argument("gold", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("pred", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--scores", "scores_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="JSONL: sentence_index, gold_start, gold_end, pred_start, pred_end (characters) and score 1-5.")
@reading_options(repair=False, formats=True)
@click.option("--judge", "judge_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A judge file: adds the learned criterion.")
@click.option("--judge-credit", type=click.Choice(["accept", "probability"]), default="accept", show_default=True,
              help="Credit of a judged pair.")
@click.option("--missing", type=click.Choice(["error", "accept", "reject"]), default="error", show_default=True,
              help="What a user does with a Type-5 pair that has no score.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def user_f_command(
    gold: Path,
    pred: Path,
    scores_path: Path,
    reading: Reading,
    judge_path: Path | None,
    judge_credit: str,
    missing: str,
    as_json: bool,
) -> None:
    """F-scores of a strict and a forgiving user from human scores of the Type-5 pairs of PRED,
    and the error of the exact, relaxed and learned F-scores against them (Nejadgholi et al. 2020, Table 2)."""
    from ..programs.judge.userf import user_f

    judge = None
    if judge_path is not None:
        judge = _judge_module().load_judge(judge_path)
    data = user_f(
        gold, pred, scores_path, judge=judge, judge_credit=judge_credit,  # type: ignore[arg-type]
        judge_name=judge.name if judge is not None else "none", missing=missing,  # type: ignore[arg-type]
        reading=reading,
    )
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"{data['type5_pairs']} right-label/overlapping pairs, {data['scored']} scored,"
               f" {data['exact_matches']} exact matches")
    click.echo(f"{'user':10s} {'F1':>6s}  " + "  ".join(f"{'err ' + c:>12s}" for c in data["criteria"]))
    for u in USER_CHOICES:
        b = data[u]
        click.echo(f"{u:10s} {_fmt(b['f1']):>6s}  " + "  ".join(f"{100 * e:+11.2f}%" for e in b["error"].values()))
    click.echo("criteria F1: " + ", ".join(f"{c} {_fmt(v)}" for c, v in data["criteria"].items()))


commands = [judge_group]
