"""The league: authors submit their own bots, and every version is stored, built in the sandbox and checked.

A layer above tournaments (docs/architecture.md): nothing below it (rules, referee, tournaments, sandbox) knows
about leagues. Its foundation so far: the configuration file (:mod:`.config`), the database (:mod:`.db`, with
Alembic migrations in ``migrations/``), authors and tokens (:mod:`.authors`), and the uploads: the bot's manifest
(:mod:`.manifest`), archives checked without extracting anything unsafe (:mod:`.archive`) and the content-addressed
store (:mod:`.store`). This package holds no imports of its own, so each module can be read on its own.
"""
