"""Storage: the league's state in a SQL database (SQLite or PostgreSQL) and its Alembic migrations.

The only part of the league that imports SQLAlchemy: every statement the league runs is in this package, in the
module of its aggregate's name (``versions.py``, ``ladder.py``, ``challenges.py``...), over the schema of
``tables.py``; :mod:`.db` opens the database and puts them together as one ``Database`` (and ``AsyncDatabase`` for
trio). The rows come and go as the league's domain values (:mod:`arena.league.rules.model`).
"""
