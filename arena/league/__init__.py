"""The league: authors submit their own bots, every version is built and checked before it plays.

This package is the league's foundation: its configuration file (:mod:`.config`), its database (:mod:`.db`, with
Alembic migrations in ``migrations/``) and its authors and tokens (:mod:`.authors`). Nothing below it (rules,
referee, tournaments, sandbox) knows about leagues; see ``DESIGN.md``, "The league".
"""
