"""Alembic's entry for the league database: it runs on the connection :func:`arena.league.storage.db.migrate` hands it,
never on a URL of its own (there is no ``alembic.ini``)."""

from __future__ import annotations

from alembic import context

from arena.league.storage.tables import METADATA

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("the league's migrations run through arena.league.storage.db.migrate(engine), not the alembic command")
context.configure(connection=connection, target_metadata=METADATA, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
