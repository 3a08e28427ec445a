"""The review store: tasks of matched pairs, reviewers, and every judgement with its history.

One schema through SQLAlchemy Core, on SQLite (a file, WAL, no service) or PostgreSQL (a URL).
A judgement is committed before it is acknowledged; judging an item again, or undoing, keeps the
earlier rows (``superseded`` marks them), so the history of every verdict stays.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import MissingExtra, OptionError
from ..runtime.optional import module
from ..stages.judging import JUDGE_GAP, Mismatch
from ..stages.pairs import RELATIONS
from .schema import tables

Scale = Literal["goodbad", "five"]
SCALES: tuple[str, ...] = ("goodbad", "five")
GOOD, BAD = 1, 0  # verdicts on the Good/Bad scale; the five-point scale stores the score 1-5


@dataclass(frozen=True)
class Item:
    """One pair to judge: a prediction and the reference mention it overlaps, in their sentence.

    Offsets are characters in ``sentence`` (None where the source did not give the sentence)."""

    criterion: str
    sentence: str
    gold_text: str
    gold_label: str
    gold_start: int | None
    gold_end: int | None
    pred_text: str
    pred_label: str
    pred_start: int | None
    pred_end: int | None
    credit: float = 0.5
    unit: int | None = None  # the sentence's (or document's) number in its corpus
    probability: float | None = None  # a judge's acceptance probability, where one was asked
    source_id: str | None = None  # the id an imported judgement had (two judged pairs may look alike)
    gold_level: str | None = None  # each side's nesting level, where the run read levels
    pred_level: str | None = None
    # A discontinuous mention's fragments, [start, end) in ``sentence`` each, where the side has
    # several (the offsets above stay its extent's).
    gold_fragments: tuple[tuple[int, int], ...] | None = None
    pred_fragments: tuple[tuple[int, int], ...] | None = None

    def key(self) -> str:
        """What makes an item the same item: adding a task twice adds nothing twice."""
        fields = asdict(self)
        fields.pop("probability")
        # An item without levels or fragments keeps the key it had before them.
        for side in ("gold_level", "pred_level", "gold_fragments", "pred_fragments"):
            if fields[side] is None:
                fields.pop(side)
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()

    def mismatch(self) -> Mismatch:
        """The pair as a judge sees it (offsets missing count as 0, as a judge needs none)."""
        gold = self.gold_start or 0, self.gold_end or 0
        pred = self.pred_start or 0, self.pred_end or 0
        if pred[0] <= gold[0] and gold[1] <= pred[1]:
            relation = RELATIONS[1]  # longer
        elif gold[0] <= pred[0] and pred[1] <= gold[1]:
            relation = RELATIONS[2]  # shorter
        else:
            relation = RELATIONS[3]
        return Mismatch(
            predicted_text=_judged_text(self.pred_text, self.sentence, self.pred_fragments),
            label=self.pred_label,
            reference_text=_judged_text(self.gold_text, self.sentence, self.gold_fragments),
            context=self.sentence,
            relation=relation,
            same_start=self.gold_start == self.pred_start,
            same_end=self.gold_end == self.pred_end,
        )


def _judged_text(text: str, sentence: str, fragments: tuple[tuple[int, int], ...] | None) -> str:
    """What a judge reads of one side: a discontinuous mention's fragments' words, as the counting's
    judge reads them (``stages.judging.JUDGE_GAP``), never the gap mark the page shows."""
    if not fragments:
        return text
    return JUDGE_GAP.join(sentence[a:b] for a, b in fragments)


def _sqlalchemy() -> Any:
    try:
        module("alembic")
        return module("sqlalchemy")
    except ImportError as exc:
        raise MissingExtra.of(exc, "the review tool (SQLAlchemy and Alembic)", "review") from None


def database_url(db: str | Path) -> str:
    """A path is a SQLite file; anything with ``://`` is a database URL. ``postgresql://`` URLs
    go through psycopg 3 (the extra ``postgres``), SQLAlchemy's default driver being psycopg2."""
    text = str(db)
    if "://" not in text:
        return f"sqlite:///{Path(text).resolve()}"
    scheme, rest = text.split("://", 1)
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        return "postgresql+psycopg://" + rest
    if scheme == "sqlite":
        return text
    raise OptionError(f"--db: give a SQLite file or a postgresql:// URL, not a {scheme}:// URL")


HEAD = "0003"  # the newest migration (migrations/versions)


def migrate(engine: Any) -> None:
    """Bring the database's schema to the head revision with Alembic (a new database gets every
    migration, in one transaction)."""
    config = module("alembic.config").Config()
    config.set_main_option("script_location", "spanscore.review:migrations")
    command = module("alembic.command")
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def database_error(exc: BaseException) -> str:
    """The database's own one-line reason for an error (SQLAlchemy wraps it with a page link)."""
    reason = getattr(exc, "orig", None) or exc
    lines = [ln.strip() for ln in str(reason).splitlines() if ln.strip()]
    return lines[0] if lines else type(reason).__name__


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Store:
    """The tables, and every operation the commands and the page perform on them."""

    def __init__(self, db: str | Path) -> None:
        sa = self.sa = _sqlalchemy()
        url = database_url(db)
        if url.startswith("postgresql"):
            try:
                module("psycopg")
            except ImportError as exc:
                raise MissingExtra.of(exc, "a PostgreSQL store (psycopg)", "postgres") from None
        self.engine = sa.create_engine(url, future=True)
        # The largest id or position a query may be given: the columns are sa.Integer, 64-bit in
        # SQLite but 32-bit in PostgreSQL, and a larger number makes the driver raise, not match.
        self.int_max = 2**63 - 1 if url.startswith("sqlite") else 2**31 - 1
        if url.startswith("sqlite"):
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
        schema = tables(sa)
        self.meta, self.tasks, self.items = schema.meta, schema.tasks, schema.items
        self.reviewers, self.judgements = schema.reviewers, schema.judgements
        try:
            migrate(self.engine)
        except sa.exc.SQLAlchemyError as exc:
            shown = sa.engine.make_url(url).render_as_string(hide_password=True)
            raise OptionError(f"--db {shown}: cannot open the review store: {database_error(exc)}") from None
        self._totals: dict[tuple[int, str | None, str | None], tuple[int, float]] = {}

    # Tasks and items.

    def create_task(
        self, name: str, scale: Scale, items: Iterable[Item], run: dict[str, Any] | None = None
    ) -> tuple[int, int]:
        """The task (created if new) and how many of ``items`` it did not hold yet; ``run`` is the
        summary of the run the items come from (``sources.run_summary``)."""
        if scale not in SCALES:
            raise OptionError(f"scale must be goodbad or five, not {scale!r}")
        sa = self.sa
        with self.engine.begin() as db:
            row = db.execute(sa.select(self.tasks).where(self.tasks.c.name == name)).first()
            if row is None:
                summary = None if run is None else json.dumps(run)
                task = db.execute(
                    self.tasks.insert().values(name=name, scale=scale, created=time.time(), run=summary)
                ).inserted_primary_key[0]
            else:
                if row.scale != scale:
                    raise OptionError(f"task {name!r} uses the {row.scale} scale, not {scale}")
                task = row.id
            have = set(db.execute(sa.select(self.items.c.key).where(self.items.c.task_id == task)).scalars())
            position = db.execute(
                sa.select(sa.func.coalesce(sa.func.max(self.items.c.position), -1)).where(self.items.c.task_id == task)
            ).scalar_one()
            rows = []
            for item in items:
                key = item.key()
                if key in have:
                    continue
                have.add(key)
                position += 1
                row = {**asdict(item), "task_id": task, "key": key, "position": position}
                for side in ("gold_fragments", "pred_fragments"):
                    if row[side] is not None:
                        row[side] = json.dumps(row[side])
                rows.append(row)
            if rows:
                db.execute(self.items.insert(), rows)
        return int(task), len(rows)

    def task(self, name: str | None = None) -> Any:
        """A task by name, or the only one there is."""
        sa = self.sa
        with self.engine.connect() as db:
            rows = db.execute(sa.select(self.tasks).order_by(self.tasks.c.id)).all()
        names = ", ".join(r.name for r in rows) or "none"
        if name is not None:
            found = [r for r in rows if r.name == name]
            if not found:
                raise OptionError(f"no task {name!r} in the store (--task): its tasks are {names}")
            return found[0]
        if len(rows) != 1:
            raise OptionError(f"name the task (--task): the store has {names}")
        return rows[0]

    # Reviewers.

    def add_reviewer(self, name: str) -> str:
        """A new reviewer's token (shown once: only its hash is stored)."""
        if not name.strip():
            raise OptionError("a reviewer needs a name")
        token = secrets.token_urlsafe(24)
        sa = self.sa
        with self.engine.begin() as db:
            if db.execute(sa.select(self.reviewers.c.id).where(self.reviewers.c.name == name)).first() is not None:
                raise OptionError(f"there is a reviewer named {name!r} already")
            db.execute(self.reviewers.insert().values(name=name, token_hash=_hash(token)))
        return token

    def reviewer_of(self, token: str) -> Any:
        """The reviewer a token belongs to, or None (compared in constant time)."""
        sa = self.sa
        digest = _hash(token)
        with self.engine.connect() as db:
            rows = db.execute(sa.select(self.reviewers)).all()
        found = None
        for row in rows:
            if hmac.compare_digest(row.token_hash, digest):
                found = row
        return found

    def reviewer_named(self, name: str, *, create: bool = False) -> int:
        sa = self.sa
        with self.engine.begin() as db:
            row = db.execute(sa.select(self.reviewers.c.id).where(self.reviewers.c.name == name)).first()
            if row is not None:
                return int(row.id)
            if not create:
                raise OptionError(f"no reviewer named {name!r}")
            return int(
                db.execute(
                    self.reviewers.insert().values(name=name, token_hash=_hash(secrets.token_urlsafe(24)))
                ).inserted_primary_key[0]
            )

    # Judgements.

    def judge(self, item_id: int, reviewer_id: int, verdict: int, *, scale: Scale) -> int:
        """Record a verdict (earlier ones of this reviewer on this item are kept, superseded)."""
        allowed = (GOOD, BAD) if scale == "goodbad" else (1, 2, 3, 4, 5)
        if verdict not in allowed:
            raise OptionError(f"a verdict on the {scale} scale is one of {allowed}, not {verdict!r}")
        sa, j = self.sa, self.judgements
        for attempt in range(5):
            try:
                with self.engine.begin() as db:
                    db.execute(
                        j.update()
                        .where(j.c.item_id == item_id, j.c.reviewer_id == reviewer_id, j.c.superseded.is_(False))
                        .values(superseded=True)
                    )
                    new = db.execute(
                        j.insert().values(
                            item_id=item_id,
                            reviewer_id=reviewer_id,
                            verdict=verdict,
                            created=time.time(),
                            superseded=False,
                        )
                    ).inserted_primary_key[0]
                return int(new)
            except sa.exc.IntegrityError:
                # The same reviewer's other judgement of this item committed in between (PostgreSQL
                # runs both at once; the index of current verdicts refused the second): judge again
                # on top of it, as if the two had come one after the other.
                if attempt == 4:
                    raise
        raise AssertionError("unreachable")

    def verdicts(self, task_id: int) -> list[Any]:
        """Every current verdict of the task: (item, reviewer, verdict) rows with the item's fields."""
        sa, i, j, r = self.sa, self.items, self.judgements, self.reviewers
        query = (
            sa.select(i, j.c.verdict, j.c.created, r.c.name.label("reviewer"))
            .join(j, j.c.item_id == i.c.id)
            .join(r, r.c.id == j.c.reviewer_id)
            .where(i.c.task_id == task_id, j.c.superseded.is_(False))
            .order_by(i.c.position, r.c.name)
        )
        with self.engine.connect() as db:
            return list(db.execute(query).all())

    def next_item(
        self,
        task_id: int,
        reviewer_id: int,
        *,
        criterion: str | None = None,
        label: str | None = None,
        after: int | None = None,
    ) -> tuple[Any, int, int]:
        """The first item (in task order) this reviewer has no verdict on, and how many of the
        items (after the filters) they have judged and there are: (item or None, judged, total).

        ``after`` (a position) skips: the first such item after it, coming round to the start when
        there is none, so that skipped items come back once the rest is done."""
        sa, i, j = self.sa, self.items, self.judgements
        current = (j.c.reviewer_id == reviewer_id, j.c.superseded.is_(False))
        where = [i.c.task_id == task_id]
        if criterion:
            # An item answering several criteria names them comma-separated.
            where.append(
                sa.or_(
                    i.c.criterion == criterion,
                    i.c.criterion.startswith(criterion + ",", autoescape=True),
                    i.c.criterion.endswith("," + criterion, autoescape=True),
                    i.c.criterion.contains("," + criterion + ",", autoescape=True),
                )
            )
        if label:
            where.append(i.c.gold_label == label)
        # Items in task order, each checked against the reviewer's verdicts through their index:
        # the reviewer's judged items at the front are passed over, the rest is never read.
        judged_it = sa.exists().where(j.c.item_id == i.c.id, *current)
        with self.engine.connect() as db:
            row = None
            if after is not None:
                row = db.execute(
                    sa.select(i).where(*where, i.c.position > after, ~judged_it).order_by(i.c.position).limit(1)
                ).first()
            if row is None:
                row = db.execute(sa.select(i).where(*where, ~judged_it).order_by(i.c.position).limit(1)).first()
            judged = db.execute(
                sa.select(sa.func.count()).select_from(j.join(i, i.c.id == j.c.item_id)).where(*current, *where)
            ).scalar_one()
            total = self._total(db, task_id, criterion, label, where)
        return row, int(judged), int(total)

    def _total(self, db: Any, task_id: int, criterion: str | None, label: str | None, where: list[Any]) -> int:
        """How many items the filters leave; counted once a second at most (a task of 100,000 items
        takes milliseconds to count, and items only change when a task is extended)."""
        key = (task_id, criterion, label)
        now = time.monotonic()
        cached = self._totals.get(key)
        if cached is not None and now - cached[1] < 1.0:
            return cached[0]
        sa, i = self.sa, self.items
        total = int(db.execute(sa.select(sa.func.count()).select_from(i).where(*where)).scalar_one())
        self._totals[key] = (total, now)
        return total

    def undo(self, task_id: int, reviewer_id: int) -> int | None:
        """Take back this reviewer's latest verdict in the task (kept in the history, superseded, and
        the verdict before it, if any, is not restored: the item is to judge again). The item's id."""
        sa, i, j = self.sa, self.items, self.judgements
        with self.engine.begin() as db:
            row = db.execute(
                sa.select(j.c.id, j.c.item_id)
                .join(i, i.c.id == j.c.item_id)
                .where(i.c.task_id == task_id, j.c.reviewer_id == reviewer_id, j.c.superseded.is_(False))
                .order_by(j.c.created.desc(), j.c.id.desc())
                .limit(1)
            ).first()
            if row is None:
                return None
            db.execute(j.update().where(j.c.id == row.id).values(superseded=True))
        return int(row.item_id)

    def facets(self, task_id: int) -> dict[str, dict[str, int]]:
        """How many items of the task each criterion and each reference type has (the page's filters)."""
        sa, i = self.sa, self.items
        out: dict[str, dict[str, int]] = {}
        with self.engine.connect() as db:
            for name, column in (("criteria", i.c.criterion), ("types", i.c.gold_label)):
                rows = db.execute(
                    sa.select(column, sa.func.count()).where(i.c.task_id == task_id).group_by(column).order_by(column)
                ).all()
                counted: dict[str, int] = {}
                for value, n in rows:
                    for part in str(value).split(",") if name == "criteria" else [str(value)]:
                        counted[part] = counted.get(part, 0) + int(n)
                out[name] = dict(sorted(counted.items()))
        return out

    def item(self, item_id: int) -> Any:
        sa, i = self.sa, self.items
        with self.engine.connect() as db:
            return db.execute(sa.select(i).where(i.c.id == item_id)).first()

    def history(self, task_id: int, reviewer_id: int, limit: int = 10) -> list[Any]:
        """This reviewer's latest verdicts, newest first."""
        sa, i, j = self.sa, self.items, self.judgements
        query = (
            sa.select(j.c.id, j.c.item_id, j.c.verdict, j.c.created, i.c.gold_text, i.c.pred_text, i.c.criterion)
            .join(i, i.c.id == j.c.item_id)
            .where(i.c.task_id == task_id, j.c.reviewer_id == reviewer_id, j.c.superseded.is_(False))
            .order_by(j.c.created.desc(), j.c.id.desc())
            .limit(limit)
        )
        with self.engine.connect() as db:
            return list(db.execute(query).all())

    def items_of(self, task_id: int) -> list[Any]:
        sa, i = self.sa, self.items
        with self.engine.connect() as db:
            return list(db.execute(sa.select(i).where(i.c.task_id == task_id).order_by(i.c.position)).all())


def _sqlite_pragmas(connection: Any, record: Any) -> None:
    del record
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers never wait for the writer
    # In WAL mode, NORMAL makes each commit durable against the process dying (SIGKILL included),
    # without an fsync per commit; only a power loss may take the last commits with it.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def verdict_names(scale: Scale) -> dict[int, str]:
    return {GOOD: "Good", BAD: "Bad"} if scale == "goodbad" else {s: str(s) for s in range(1, 6)}


def five_point(verdict: int, scale: Scale) -> int:
    """A verdict as a score 1-5 (the judgements format): Good 5, Bad 1 on the Good/Bad scale."""
    if scale == "five":
        return verdict
    return 5 if verdict == GOOD else 1


def ordered(items: Sequence[Item], seed: int = 0) -> list[Item]:
    """Items a judge has scored first, in the review order that teaches a judge most per review
    (``spanscore.programs.judge.order``: the judge's accepted and rejected mismatches in turn,
    stratified, seeded), then the rest in their own order. The store keeps this order as the
    items' positions, so the API's next item follows it."""
    from ..programs.judge.order import review_order

    scored = [it for it in items if it.probability is not None]
    rest = [it for it in items if it.probability is None]
    if scored:
        order = review_order([it.mismatch() for it in scored], [float(it.probability or 0.0) for it in scored], seed)
        scored = [scored[k] for k in order.tolist()]
    return scored + rest
