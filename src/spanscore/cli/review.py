"""``spanscore review``: build review tasks of partial matches, import and export judgements, agreement."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import click

from ..errors import OptionError
from ..io.reading import Reading
from .options import reading_options


def _review() -> Any:
    return importlib.import_module("spanscore.review")


DB = click.option(
    "--db", required=True, help="The store: a SQLite file (made if new), or a database URL (postgresql://...)."
)
TASK = click.option("--task", "task_name", help="The task's name (default: the only task of the store).")


def existing(db: str) -> str:
    """A store that a command reads must exist: a misspelt --db would otherwise make an empty one."""
    if "://" not in db and not Path(db).is_file():
        raise OptionError(f"--db {db}: unable to open: no such review store; make one with spanscore review create")
    return db


class ReviewGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            # A database that goes away or refuses a statement mid-command: one line, exit 2.
            if not type(exc).__module__.startswith(("sqlalchemy", "psycopg", "sqlite3")):
                raise
            store = importlib.import_module("spanscore.review.store")
            raise OptionError(f"the review store (--db): {store.database_error(exc)}") from None


@click.group("review", cls=ReviewGroup, short_help="Human review of partial matches.")
def review_group() -> None:
    """Human review of partial matches (Kong and Sullivan, section 5.3): tasks, judgements, agreement."""


@review_group.command("create", short_help="A task of the partial matches of a run.")
@click.argument("gold", type=click.Path(path_type=Path))
@click.argument("pred", type=click.Path(path_type=Path))
@DB
@click.option("--name", help="The task's name (default: the prediction file's name).")
@click.option("--criteria", default="left,right,overlap", show_default=True, help="Whose partial matches to review.")
@click.option("--type5", is_flag=True, help="Also the right-label, overlapping (Type-5) pairs of the taxonomy.")
@click.option(
    "--judge",
    "judge_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A judge file: items in the review order that teaches a judge most (docs/judge.md).",
)
@click.option(
    "--judge-unknown",
    type=click.Choice(["refuse", "agnostic"]),
    default="refuse",
    show_default=True,
    help="A mention of a type the judge was not trained on: refuse, or order it by the judge's type-agnostic model.",
)
@click.option(
    "--scale",
    type=click.Choice(["goodbad", "five"]),
    default="goodbad",
    show_default=True,
    help="Good/Bad (the paper's review) or scores 1-5 (Nejadgholi et al. 2020).",
)
@reading_options(formats=True, documents=True)
def create_command(
    gold: Path,
    pred: Path,
    db: str,
    name: str | None,
    criteria: str,
    type5: bool,
    judge_path: Path | None,
    judge_unknown: str,
    scale: str,
    reading: Reading,
) -> None:
    """Build (or extend) a review task from the partial matches of PRED against GOLD."""
    review = _review()
    judges = importlib.import_module("spanscore.programs.judge")
    if judge_path is None and judge_unknown != "refuse":
        raise OptionError("--judge-unknown: give --judge")
    judge = judges.load_judge(judge_path).with_unknown(judge_unknown) if judge_path is not None else None
    names = tuple(c.strip() for c in criteria.split(",") if c.strip())
    report = importlib.import_module("spanscore.api").evaluate(
        reference=gold, predicted=pred, reading=reading, keep_details=True
    )
    items = review.ordered(review.items_from_report(report, criteria=names, type5=type5, judge=judge))
    _, added = review.Store(db).create_task(name or pred.name, scale, items, review.run_summary(report))
    by = f", in the review order of judge {getattr(judge, 'name', judge_path)}" if judge is not None else ""
    click.echo(f"task {name or pred.name}: {added} new items ({len(items) - added} already there){by}", err=True)


@review_group.command("import", short_help="Judgements made elsewhere: the paper's, or expert scores.")
@click.argument("source", type=click.Path(dir_okay=False, path_type=Path))
@DB
@click.option("--name", required=True, help="The task to put them in.")
@click.option("--reviewer", required=True, help="Whose judgements they are.")
def import_command(source: Path, db: str, name: str, reviewer: str) -> None:
    """SOURCE is the paper's judgements.md (Good/Bad) or JSONL of scores 1-5 (the judgements format)."""
    review = _review()
    if source.suffix.lower() == ".md":
        rows, scale = review.paper_judgements(source), "goodbad"
    elif source.suffix.lower() == ".jsonl":
        rows, scale = review.expert_judgements(source), "five"
    else:
        raise OptionError(f"{source}: give judgements.md (the paper's tables) or a .jsonl file of scores")
    store = review.Store(db)
    task_id, added = store.create_task(name, scale, [item for item, _ in rows])
    who = store.reviewer_named(reviewer, create=True)
    ids = {it.key: it.id for it in store.items_of(task_id)}
    for item, verdict in rows:
        store.judge(ids[item.key()], who, verdict, scale=scale)
    click.echo(f"task {name}: {len(rows)} judgements by {reviewer} ({added} new items)", err=True)


@review_group.command("add-reviewer", short_help="A reviewer and their token (printed once).")
@click.argument("name")
@DB
def add_reviewer_command(name: str, db: str) -> None:
    """Add a reviewer; the token printed is theirs to open the page with (only its hash is kept)."""
    click.echo(_review().Store(existing(db)).add_reviewer(name))


@review_group.command("export", short_help="Judgements as JSONL (the judgements format) or CSV.")
@DB
@TASK
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="*.jsonl: the format spanscore judge reads; anything else: CSV.",
)
def export_command(db: str, task_name: str | None, output: Path) -> None:
    """Every current verdict of a task (Good/Bad as scores 5/1, the verdict beside it)."""
    review = _review()
    rows = review.export_rows(review.Store(existing(db)), task_name)
    review.write_export(rows, output)
    click.echo(f"{output}: {len(rows)} judgements", err=True)


@review_group.command("stats", short_help="Table 5 of the paper per criterion, and agreement.")
@DB
@TASK
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def stats_command(db: str, task_name: str | None, as_json: bool) -> None:
    """Per criterion: pairs given partial credit, judged, good and % good; Cohen's kappa of each pair
    of reviewers and Krippendorff's alpha of all, on the items they share."""
    data = _review().stats(_review().Store(existing(db)), task_name)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"task {data['task']} ({data['scale']}), reviewers: {', '.join(data['reviewers']) or 'none'}")
    for criterion, entry in data["criteria"].items():
        if data["scale"] == "goodbad":
            share = entry["good_share"]
            pct = "n/a" if share is None else f"{100 * share:.1f}%"
            click.echo(
                f"  {criterion:8s} pairs {entry['pairs']:5d}  judged {entry['judged']:5d}"
                f"  good {entry['good']:5d}  {pct}"
            )
        else:
            click.echo(
                f"  {criterion:8s} pairs {entry['pairs']:5d}  judged {entry['judged']:5d}"
                f"  forgiving accepts {entry['accepted_forgiving']}  strict accepts {entry['accepted_strict']}"
            )
    for user in ("forgiving", "strict"):
        u = data.get("users", {}).get(user)
        if u is not None:
            click.echo(
                f"  {user} user: F1 {100 * u['f1']:.2f} ({u['accepted']} of {data['users']['type5_pairs']} Type-5"
                f" pairs accepted); exact F1 {100 * data['users']['criteria']['exact']:.2f},"
                f" relaxed F1 {100 * data['users']['criteria']['relaxed']:.2f}"
            )
    alpha = data["agreement"]["krippendorff_alpha"]
    click.echo(
        f"  Krippendorff's alpha ({data['agreement']['alpha_level']}): {'n/a' if alpha is None else f'{alpha:.3f}'}"
    )
    for pair, k in data["agreement"]["cohen_kappa"].items():
        kappa = "n/a" if k["kappa"] is None else f"{k['kappa']:.3f}"
        click.echo(f"  Cohen's kappa {pair}: {kappa} on {k['items']} items")


@review_group.command("serve", short_help="The review page and its JSON API, for reviewers and scripts.")
@DB
@TASK
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback unless told).")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="Port on 127.0.0.1 (0: any free)."
)
def serve_command(db: str, task_name: str | None, host: str, port: int) -> None:
    """Serve the review page of a task and its JSON API (docs/review.md); Ctrl-C stops it."""
    server_mod = importlib.import_module("spanscore.review.server")
    app = server_mod.ReviewApp(_review().Store(existing(db)), task_name)
    try:
        server = server_mod.make_server(app, host, port)
    except OSError as exc:
        raise OptionError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    bound = server.server_address
    base = f"http://{bound[0]}:{bound[1]}/"
    click.echo(
        f"serving task {app.task.name} on {base} (reviewers open {base}#token=THEIR_TOKEN; the API is under"
        f" {base}api/; Ctrl-C stops)",
        err=True,
    )
    try:
        server.serve_forever()
    finally:
        server.server_close()


commands = [review_group]
