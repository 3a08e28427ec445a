"""The review store's tables: one schema for SQLite and PostgreSQL, kept by Alembic migrations.

``tables`` is the schema the code reads and writes; the migrations in ``migrations/versions``
build it step by step, and a test checks that a database migrated to the head revision is exactly
this schema (Alembic's compare_metadata finds nothing), on both backends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tables:
    meta: Any
    tasks: Any
    items: Any
    reviewers: Any
    judgements: Any


def tables(sa: Any) -> Tables:
    """The tables on a new MetaData (``sa`` is the sqlalchemy module, imported where it is installed)."""
    meta = sa.MetaData()
    tasks = sa.Table(
        "tasks",
        meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("scale", sa.String(10), nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("run", sa.Text),  # the run's summary (JSON) for the user F-scores, when made from one
    )
    items = sa.Table(
        "items",
        meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("task_id", sa.Integer, sa.ForeignKey("tasks.id"), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("criterion", sa.String(40), nullable=False),
        sa.Column("sentence", sa.Text, nullable=False),
        sa.Column("gold_text", sa.Text, nullable=False),
        sa.Column("gold_label", sa.String(200), nullable=False),
        sa.Column("gold_start", sa.Integer),
        sa.Column("gold_end", sa.Integer),
        sa.Column("pred_text", sa.Text, nullable=False),
        sa.Column("pred_label", sa.String(200), nullable=False),
        sa.Column("pred_start", sa.Integer),
        sa.Column("pred_end", sa.Integer),
        sa.Column("credit", sa.Float, nullable=False),
        sa.Column("unit", sa.Integer),
        sa.Column("probability", sa.Float),
        sa.Column("source_id", sa.String(200)),
        sa.Column("gold_level", sa.String(200)),  # each side's nesting level, where the run had levels
        sa.Column("pred_level", sa.String(200)),
        # each side's fragments (JSON [[start, end], ...] in the sentence), where that side is discontinuous
        sa.Column("gold_fragments", sa.Text),
        sa.Column("pred_fragments", sa.Text),
        sa.UniqueConstraint("task_id", "key", name="items_task_id_key"),
        sa.Index("items_by_position", "task_id", "position"),
    )
    reviewers = sa.Table(
        "reviewers",
        meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    )
    judgements = sa.Table(
        "judgements",
        meta,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("item_id", sa.Integer, sa.ForeignKey("items.id"), nullable=False, index=True),
        sa.Column("reviewer_id", sa.Integer, sa.ForeignKey("reviewers.id"), nullable=False, index=True),
        sa.Column("verdict", sa.Integer, nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("superseded", sa.Boolean, nullable=False),
        sa.Index("judgements_by_reviewer", "reviewer_id", "superseded", "item_id"),
        # One current verdict per reviewer and item, kept by the database itself: two judgements
        # of one item racing each other cannot both stay current.
        sa.Index(
            "judgements_one_current",
            "item_id",
            "reviewer_id",
            unique=True,
            sqlite_where=sa.text("superseded = 0"),
            postgresql_where=sa.text("NOT superseded"),
        ),
    )
    return Tables(meta, tasks, items, reviewers, judgements)
