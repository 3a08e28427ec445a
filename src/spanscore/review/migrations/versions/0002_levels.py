"""Each side's nesting level on an item, where the run had levels.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("items") as batch:
        batch.add_column(sa.Column("gold_level", sa.String(200)))
        batch.add_column(sa.Column("pred_level", sa.String(200)))


def downgrade() -> None:
    with op.batch_alter_table("items") as batch:
        batch.drop_column("pred_level")
        batch.drop_column("gold_level")
