"""A league's dial-in versions: bots its authors play from their own machines (``arena connect``), never uploaded nor
built, that the ladder plays only while they are connected.

The server's dial-in registry (:data:`arena.players.dial_in.REGISTRY`) accepts a stream only for a bot something on
the server waits for; :class:`DialInVersions` keeps the registry waiting for exactly the league's ready dial-in
versions (a version retired, suspended or deleted is let go, and its stream is closed), and tells the ladder which
of them are not connected now, so that the matchmaker leaves them out. A dial-in version at a table whose stream
drops mid-game faults as any bot that crashes (its games forfeit); it comes back to the ladder when it dials in
again.
"""

from __future__ import annotations

from collections.abc import Iterable

from arena.league.intake.pipeline import dial_in_spec
from arena.league.play.table_run import entrant_name
from arena.league.rules.model import Version
from arena.players.dial_in import REGISTRY, DialInRegistry
from arena.players.process import BotSpec


class DialInVersions:
    """One league's dial-in versions as the server's registry waits for them (on the trio thread)."""

    def __init__(self, registry: DialInRegistry = REGISTRY) -> None:
        self.registry = registry
        self._expected: dict[int, BotSpec] = {}

    def sync(self, versions: Iterable[tuple[str, Version]]) -> set[int]:
        """Wait for exactly these versions (the league's ready dial-in ones, with their bots' names) from now on,
        each under its name at a table (``bot-vN``: what its author connects as); the ids of those among them that
        are not connected now (the ladder leaves them out)."""
        wanted = {version.id: dial_in_spec(version, entrant_name(bot, version)) for bot, version in versions}
        self.registry.forget([spec for id_, spec in self._expected.items() if id_ not in wanted])
        self.registry.expect([spec for id_, spec in wanted.items() if id_ not in self._expected])
        self._expected = wanted
        return {id_ for id_, spec in wanted.items() if not self.registry.connected(spec.name, spec.token_sha256)}

    def close(self) -> None:
        """The ladder stops: the registry waits for none of them any more (their streams are closed)."""
        self.registry.forget(self._expected.values())
        self._expected = {}
