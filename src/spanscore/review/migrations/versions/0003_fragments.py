"""Each side's fragments on an item, where that side's mention is discontinuous.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("items") as batch:
        batch.add_column(sa.Column("gold_fragments", sa.Text))
        batch.add_column(sa.Column("pred_fragments", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("items") as batch:
        batch.drop_column("pred_fragments")
        batch.drop_column("gold_fragments")
