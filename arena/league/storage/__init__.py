"""Storage: the league's state in a SQL database (SQLite or PostgreSQL) and its Alembic migrations.

The only part of the league that imports SQLAlchemy: every statement the league runs is in this package.
"""
