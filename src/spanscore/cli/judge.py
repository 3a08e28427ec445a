"""``spanscore judge``: train a judge of boundary mismatches, benchmark it against human scores,
and compare criteria with a strict and a forgiving user (Nejadgholi et al. 2020)."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import time
from pathlib import Path
from typing import Any

import click

from ..errors import OptionError
from ..io.files import atomic_output
from ..io.reading import Reading
from .options import reading_options, refuse_overwrite

BACKEND_CHOICES = ["tfidf", "minilm"]
USER_CHOICES = ["forgiving", "strict"]
RULE_CHOICES = ["contains", "classifier", "agnostic"]
UNKNOWN_HELP = ("A judged mention of a type the judge was not trained on: refuse (one line naming the types), or "
                "judge it with the judge's type-agnostic model (its name then ends in +agnostic).")


def _carried(path: Path | None, backend: str) -> tuple[Any, str | None]:
    """The type-agnostic acceptance model of a judge file, and the name of a judge carrying it."""
    if path is None:
        return None, None
    source = _judge_module().load_judge(path)
    model = source.agnostic_model()
    if model is None:
        raise OptionError(f"--acceptance-from {path}: judge {source.name} learned no type-agnostic model (train it"
                          " with --scores)")
    return model, f"{backend}-agnostic+{source.base_name}"


def _numbers(*, seed: int | None = None, folds: int | None = None, seeds: int | None = None) -> None:
    """Refuse a bad --seed, --folds or --seeds in one line before any file is read."""
    crossfit = importlib.import_module("spanscore.programs.judge.crossfit")
    if seed is not None:
        crossfit.check_seed(seed)
    if folds is not None:
        crossfit.check_folds(folds)
    if seeds is not None and seeds < 1:
        raise OptionError(f"--seeds must be a whole number, 1 or more, not {seeds}")


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
@click.option("--rule", type=click.Choice(RULE_CHOICES), default="contains", show_default=True,
              help="Decision without human scores: classifier = Nejadgholi et al.'s (top class is the label); contains "
                   "also accepts every prediction that contains the gold span; agnostic reads no type (for other "
                   "domains and types).")
@click.option("--scores", "scores_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Human scores to learn from: a review export (spanscore review export -o FILE.jsonl) or JSONL "
                   "as medmentions-expert.")
@click.option("--reviewers", help="Learn from these reviewers' verdicts only (comma-separated names; default: every "
                                  "reviewer of --scores).")
@click.option("--agreed", is_flag=True, help="Each pair once, and only where the reviewers who judged it agree (for "
                                             "--user).")
@click.option("--user", type=click.Choice(USER_CHOICES), default="forgiving", show_default=True,
              help="Whose acceptance --scores teaches: forgiving (score >= 2) or strict (>= 3).")
@click.option("--acceptance-from", "acceptance_from", type=click.Path(dir_okay=False, path_type=Path),
              help="With --rule agnostic: carry over the type-agnostic acceptance model of this judge file (learned on "
                   "another corpus) instead of learning one from --scores.")
@click.option("--folds", type=int, default=5, show_default=True,
              help="Judged sentences of TRAIN get features from classifiers that leave out at most 1/FOLDS of it.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the 'other' sample.")
def train_command(
    train: Path,
    output: Path,
    reading: Reading,
    backend: str,
    rule: str,
    scores_path: Path | None,
    reviewers: str | None,
    agreed: bool,
    user: str,
    acceptance_from: Path | None,
    folds: int,
    seed: int,
) -> None:
    """Train a judge on the gold mentions of TRAIN (CoNLL) and write it to a file; with --scores, a
    judge that starts from the rule and learns from human scores."""
    refuse_overwrite(output, train, scores_path, acceptance_from)
    _numbers(seed=seed, folds=folds)
    if scores_path is None and (reviewers is not None or agreed):
        raise OptionError("--reviewers and --agreed choose among the verdicts of --scores: give --scores")
    jm = _judge_module()
    t0 = time.perf_counter()
    corpus = jm.read_corpus(train, reading)
    rows, names = None, ()
    if scores_path is not None:
        chosen = None if reviewers is None else [r.strip() for r in reviewers.split(",") if r.strip()]
        selection = jm.select(jm.read_judgements(scores_path), reviewers=chosen, agreed=agreed, user=user,
                              path=str(scores_path))
        rows, names = list(selection.judgements), selection.reviewers
        click.echo(f"scores: {selection.describe(user)}", err=True)
    fixed, name = _carried(acceptance_from, backend)
    judge = jm.train_judge(corpus, backend=backend, rule=rule, judgements=rows, user=user, folds=folds, seed=seed,
                           judgements_path=str(scores_path), reviewers=names, fixed=fixed, name=name)
    judge.save(output)
    click.echo(f"judge {judge.name} written to {output} ({time.perf_counter() - t0:.1f} s)", err=True)


@judge_group.command("benchmark", short_help="Agreement of a judge with human scores.")
@click.argument("judgements", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--train", "train_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The corpus the judged sentences come from (CoNLL); judges are cross-fitted over it.")
@click.option("--judge", "judge_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Instead of --train: measure this judge file as it is (no training, no cross-fitting).")
@reading_options(repair=False)
@click.option("--backend", type=click.Choice(BACKEND_CHOICES), default="tfidf", show_default=True,
              help="Entity classifier backend.")
@click.option("--rule", type=click.Choice(RULE_CHOICES), default="contains", show_default=True,
              help="Decision rule of a judge that does not learn from the scores (agnostic: type-agnostic).")
@click.option("--learn/--no-learn", default=False, show_default=True,
              help="Also learn an acceptance model from the human scores (cross-fitted, nested).")
@click.option("--user", type=click.Choice(USER_CHOICES), default="forgiving", show_default=True,
              help="Whose acceptance --learn learns.")
@click.option("--folds", type=int, default=5, show_default=True, help="Contiguous blocks of sentences.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the 'other' sample.")
@click.option("--baselines", is_flag=True, help="Also report the accept-all and reject-all judges.")
@click.option("--acceptance-from", "acceptance_from", type=click.Path(dir_okay=False, path_type=Path),
              help="With --train and --rule agnostic: each cross-fitted classifier carries this judge file's "
                   "type-agnostic acceptance model (learned on another corpus).")
@click.option("--judge-unknown", type=click.Choice(["refuse", "agnostic"]), default="refuse", show_default=True,
              help=UNKNOWN_HELP + " With --judge only.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def benchmark_command(
    judgements: Path,
    train_path: Path | None,
    judge_path: Path | None,
    reading: Reading,
    backend: str,
    rule: str,
    learn: bool,
    user: str,
    folds: int,
    seed: int,
    baselines: bool,
    acceptance_from: Path | None,
    judge_unknown: str,
    as_json: bool,
) -> None:
    """Measure a judge against the human scores in JUDGEMENTS: one cross-fitted over --train (never
    scoring a judgement with a model that saw its block), or a judge file as it is (--judge)."""
    jm = _judge_module()
    if (train_path is None) == (judge_path is None):
        raise OptionError("give --train (cross-fit a judge over that corpus) or --judge (measure a judge file)")
    _numbers(seed=seed, folds=folds)
    if judge_path is None and judge_unknown != "refuse":
        raise OptionError("--judge-unknown: for a judge file (--judge); --train trains on the judged types")
    if judge_path is not None:
        ctx = click.get_current_context()
        given = [f"--{name}" for name in ("backend", "rule", "learn", "user", "folds", "seed")
                 if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
        if acceptance_from is not None:
            given.append("--acceptance-from")
        if given:
            raise OptionError(f"{', '.join(given)}: for cross-fitting with --train; --judge measures the file as it is")
        judge = jm.load_judge(judge_path).with_unknown(judge_unknown)
        rows = jm.read_judgements(judgements)
        judge.check_types({r.gold_label for r in rows})
        result = jm.benchmark_judge(judge, rows)
        if baselines:
            result = dataclasses.replace(
                result, baselines=tuple(jm.baseline(rows, b) for b in ("accept-all", "reject-all"))
            )
    else:
        assert train_path is not None
        fixed, name = _carried(acceptance_from, backend)
        corpus = jm.read_corpus(train_path, reading)
        rows = jm.read_judgements(judgements)
        result = jm.benchmark(corpus, rows, backend=backend, rule=rule, learn=learn, user=user, folds=folds,
                              seed=seed, path=str(judgements), baselines=baselines, fixed=fixed,
                              fixed_name=(name or "").split("+", 1)[-1])
    data = result.to_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    blocks = [(data["judge"], data)] + [(k, v) for k, v in data.get("baselines", {}).items()]
    how = data.get("crossfit") or f"judge file {judge_path}"
    click.echo(f"{data['judgements']} judgements; {how}; {data['seconds']:.1f} s")
    head = ("judge", "user", "precision (95%)", "recall (95%)", "disagree", "AUC (95%)", "accepts")
    click.echo(f"{head[0]:28s} {head[1]:10s} {head[2]:>19s} {head[3]:>19s} {head[4]:>9s} {head[5]:>19s} {head[6]:>8s}")
    users = ["both"] if data["users_coincide"] else USER_CHOICES
    for name, block in blocks:
        for u in users:
            b = block[u]
            ci = b.get("intervals", {})

            def cell(key: str, b: dict[str, Any] = b, ci: dict[str, Any] = ci) -> str:
                lo, hi = ci.get(key, (None, None))
                return f"{_fmt(b[key])} ({_fmt(lo).strip()}-{_fmt(hi).strip()})"

            click.echo(f"{name:28s} {u:10s} {cell('precision'):>19s} {cell('recall'):>19s} "
                       f"{_fmt(b['disagreement']):>9s} {cell('auc'):>19s} {_fmt(b['judge_accepts']):>8s}")
    for warning in data.get("warnings", []):
        click.echo(f"warning: {warning}", err=True)


def _sizes(text: str) -> list[int | None]:
    out: list[int | None] = []
    for part in (p.strip() for p in text.split(",")):
        if part.lower() == "all":
            out.append(None)
        elif part.isdigit():
            out.append(int(part))
        else:
            raise OptionError(f"--sizes: {part!r} is not a number of scores (0 or more, or all)")
    if not out:
        raise OptionError("--sizes: give numbers of scores, e.g. 100,200,400")
    return list(dict.fromkeys(out))


@judge_group.command("curve", short_help="A judge after K reviews, in review order and at random.")
@click.argument("train", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--scores", "scores_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Human scores to learn from (JSONL as medmentions-expert, or a review export).")
@click.option("--test", "test_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Human scores to measure on (no sentence of --scores); without it, nested cross-fitting over "
                   "TRAIN, which must hold the judged sentences.")
@reading_options(repair=False)
@click.option("--sizes", default="100,200,400", show_default=True,
              help="Numbers of scores to learn from, comma-separated; 0 is the judge without scores, all every score.")
@click.option("--seeds", type=int, default=3, show_default=True,
              help="Random orders per size, and seeds of the review order's shuffle within its strata.")
@click.option("--user", type=click.Choice(USER_CHOICES), default="forgiving", show_default=True,
              help="Whose acceptance the judges learn.")
@click.option("--backend", type=click.Choice(BACKEND_CHOICES), default="tfidf", show_default=True,
              help="Entity classifier backend.")
@click.option("--rule", type=click.Choice(RULE_CHOICES), default="contains", show_default=True,
              help="The judge without scores that the curve starts from (agnostic: type-agnostic).")
@click.option("--folds", type=int, default=5, show_default=True,
              help="Blocks of cross-fitting (without --test); out-of-fold classifiers leave out at most 1/FOLDS.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the 'other' sample.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a page with the curve as a chart.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def curve_command(
    train: Path,
    scores_path: Path,
    test_path: Path | None,
    reading: Reading,
    sizes: str,
    seeds: int,
    user: str,
    backend: str,
    rule: str,
    folds: int,
    seed: int,
    html_path: Path | None,
    as_json: bool,
) -> None:
    """How good a judge gets with the number of reviews: for each size, judges learn from that many
    scores of --scores, in the review order of spanscore review create --judge and in random orders,
    each measured on --test (or cross-fitted over TRAIN's blocks)."""
    wanted = _sizes(sizes)
    _numbers(seed=seed, folds=folds, seeds=seeds)
    refuse_overwrite(html_path, train, scores_path, test_path, option="--html")
    jm = _judge_module()
    corpus = jm.read_corpus(train, reading)
    scores = jm.read_judgements(scores_path)
    test = jm.read_judgements(test_path) if test_path is not None else None
    curve = jm.learning_curve(
        corpus, scores, test=test, sizes=wanted, seeds=seeds, user=user, backend=backend, rule=rule, folds=folds,
        seed=seed, scores_path=str(scores_path), test_path=str(test_path),
    )
    if html_path is not None:
        with atomic_output(html_path) as fh:
            fh.write(curve.to_html().encode("utf-8"))
    if as_json:
        click.echo(json.dumps(curve.to_dict(), indent=2))
        return
    how = f"nested cross-fitting over {curve.folds} blocks" if curve.folds is not None else f"{curve.test} test scores"
    click.echo(f"{curve.judge}, learning the {curve.user} user's acceptance from {curve.scores} scores; measured on "
               f"{how}; mean over {curve.seeds} seed(s); {curve.seconds:.0f} s")
    head = ("reviews", "order", "P (95%)", "R (95%)", "F1", "F1 min", "AUC (95%)", "accepts", "strict F1",
            "strict AUC")
    click.echo(f"{head[0]:>7s} {head[1]:6s} {head[2]:>19s} {head[3]:>19s} {head[4]:>8s} {head[5]:>8s} "
               f"{head[6]:>19s} " + " ".join(f"{h:>10s}" for h in head[7:]))

    def ranged(figure: dict[str, Any]) -> str:
        return f"{_fmt(figure['mean'])} ({_fmt(figure.get('low')).strip()}-{_fmt(figure.get('high')).strip()})"

    for row in curve.summary():
        f, st = row["forgiving"], row["strict"]
        values = (f["judge_accepts"]["mean"], st["f1"]["mean"], st["auc"]["mean"])
        click.echo(f"{row['size']!s:>7s} {row['order']:6s} {ranged(f['precision']):>19s} {ranged(f['recall']):>19s} "
                   f"{_fmt(f['f1']['mean']):>8s} {_fmt(f['f1']['min']):>8s} {ranged(f['auc']):>19s} "
                   + " ".join(f"{_fmt(v):>10s}" for v in values))
    click.echo("(95%: each seed's interval, Wilson for P and R, bootstrap for the AUC, its bounds averaged over seeds)")
    if html_path is not None:
        click.echo(f"chart written to {html_path}", err=True)


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
@click.option("--judge-unknown", type=click.Choice(["refuse", "agnostic"]), default="refuse", show_default=True,
              help=UNKNOWN_HELP)
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
    judge_unknown: str,
    missing: str,
    as_json: bool,
) -> None:
    """F-scores of a strict and a forgiving user from human scores of the Type-5 pairs of PRED,
    and the error of the exact, relaxed and learned F-scores against them (Nejadgholi et al. 2020, Table 2)."""
    from ..programs.judge.userf import user_f

    judge = None
    if judge_path is not None:
        judge = _judge_module().load_judge(judge_path).with_unknown(judge_unknown)
    elif judge_unknown != "refuse":
        raise OptionError("--judge-unknown: give --judge")
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


@judge_group.command("show", short_help="What a judge file holds: types, corpus, features, version.")
@click.argument("judge_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def show_command(judge_file: Path, as_json: bool) -> None:
    """Print what JUDGE_FILE was trained on and how it decides: its types, corpus, rule, features,
    the scores it learned from, its type-agnostic model and the versions that wrote it."""
    data = _judge_module().load_judge(judge_file).describe()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    corpus = data["corpus"]
    where = "not recorded (an older judge file)" if corpus is None else (
        f"{corpus['path']} ({corpus['sentences']} sentences, {corpus['mentions']} mentions)")
    types = data["types"] if isinstance(data["types"], str) else ", ".join(data["types"])
    lines = [
        f"judge      {data['name']}",
        f"format     spanscore-judge version {data['format_version']}, written by spanscore {data['written_by']}",
        f"backend    {data['backend']}",
        f"rule       {data['rule']}",
        f"types      {types}",
        f"corpus     {where}",
    ]
    for key, label in (("acceptance", "learned"), ("agnostic_fallback", "agnostic")):
        model = data[key]
        if model is None:
            lines.append(f"{label:10s} none" + (" (the rule decides)" if key == "acceptance" else
                                               " learned (--judge-unknown agnostic uses the agnostic rule)"))
            continue
        who = ", ".join(model["reviewers"]) or "no reviewer named"
        groups = ", ".join(f"{g} {n} scores" for g, n in model["groups"].items()) or "no group had both verdicts"
        carried = " (carried to this corpus: shrunk toward its rule, the source's acceptance rate kept)" \
            if model.get("carried") else ""
        lines.append(f"{label:10s} for the {model['user']} user from {who}: {groups}{carried}")
    lines.append(f"features   {', '.join(data['features'])}")
    click.echo("\n".join(lines))


commands = [judge_group]
