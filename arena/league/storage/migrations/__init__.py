"""The league database's Alembic migrations, run by :func:`arena.league.storage.db.migrate` at every open.

A new migration (for developers): ``.venv/bin/python -m arena.league.storage.migrations "what changes"`` writes
``versions/NNNN_*.py`` from ``script.py.mako``. Write its ``upgrade`` with explicit ``op`` calls (never from
:data:`arena.league.storage.tables.METADATA`, which describes only the newest schema) and change the tables in
``tables.py`` to match: a test checks that the migrated schema is the declared one.
"""
