"""Alembic's environment for the review store: migrations run on the connection the store gives
(``config.attributes["connection"]``), so no URL or file path is read here."""

from __future__ import annotations

from alembic import context

from spanscore.review.schema import tables

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=tables(__import__("sqlalchemy")).meta, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
