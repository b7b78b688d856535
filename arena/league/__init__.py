"""The league: authors submit their own bots, and every version is stored, built in the sandbox, checked and played.

A layer above tournaments (docs/explanation/architecture.md): nothing below it (rules, referee, tournaments, sandbox) knows
about leagues. Inside, its wings, each importing only those before it:

- :mod:`arena.league.rules`: pure, no I/O: the league file (:mod:`~arena.league.rules.config`), the bot's manifest,
  the errors, the domain values (:mod:`~arena.league.rules.model`), the lifecycles of versions, tables and
  challenges (:mod:`~arena.league.rules.lifecycle`), retention, who may do what
  (:mod:`~arena.league.rules.permissions`), the matchmaker and the online rating; and the league's clock
  (:mod:`arena.league.clock`).
- :mod:`arena.league.storage`: the database gateway (:class:`~arena.league.storage.db.Database`, one module per
  aggregate) and its Alembic migrations; the only part that speaks SQL.
- :mod:`arena.league.authors` (tokens and the checks that read the database) and :mod:`arena.league.intake`: an
  upload becomes a ready version.
- :mod:`arena.league.play`: the ready versions at tables: the ladder, challenges, finals, the public pages.
- :mod:`arena.league.core` (the use cases, :class:`LeagueCore`), :mod:`arena.league.views` (what they answer) and
  :mod:`arena.league.assembly`, which puts all of it together (:func:`open_league`).

Nothing is imported here (as in :mod:`arena.server`): a module of the league is loaded with only what it imports,
so a command that needs the league's rules or its upload check (``arena league upload``, ``arena new-bot``) does not
load its database; the server imports the names it uses from their modules.
"""
