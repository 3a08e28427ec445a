"""The first schema: tasks, items, reviewers and judgements with their history.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tasks",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("scale", sa.String(10), nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("run", sa.Text),
    )
    op.create_table(
        "items",
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
        sa.UniqueConstraint("task_id", "key", name="items_task_id_key"),
    )
    op.create_index("items_by_position", "items", ["task_id", "position"])
    op.create_table(
        "reviewers",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    )
    op.create_table(
        "judgements",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("item_id", sa.Integer, sa.ForeignKey("items.id"), nullable=False),
        sa.Column("reviewer_id", sa.Integer, sa.ForeignKey("reviewers.id"), nullable=False),
        sa.Column("verdict", sa.Integer, nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("superseded", sa.Boolean, nullable=False),
    )
    op.create_index("ix_judgements_item_id", "judgements", ["item_id"])
    op.create_index("ix_judgements_reviewer_id", "judgements", ["reviewer_id"])
    op.create_index("judgements_by_reviewer", "judgements", ["reviewer_id", "superseded", "item_id"])
    op.create_index(
        "judgements_one_current",
        "judgements",
        ["item_id", "reviewer_id"],
        unique=True,
        sqlite_where=sa.text("superseded = 0"),
        postgresql_where=sa.text("NOT superseded"),
    )


def downgrade() -> None:
    op.drop_table("judgements")
    op.drop_table("reviewers")
    op.drop_table("items")
    op.drop_table("tasks")
