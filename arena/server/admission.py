"""What a server agrees to run for a client: its operator's registered bots, named by the submission; a command or an
address only when the operator started it with ``--allow-commands``; every bot in its sandbox; limits only within
the operator's; names fit for a terminal; at most ``--max-entrants`` entrants.

A submission names bots (``[[bots]] name = "py-greedy"``, optionally with ``limits`` that lower the registered
ones). :meth:`Admission.resolve` puts the registered bot's command, folder, environment and limits in for each name
before the tournament file's own validation runs, so the tournament that is validated is exactly the one that will
run. The same resolution runs again when a restarted server resumes a tournament: the operator's registry of that
day decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.protocol import tournament_pb2 as tpb
from arena.sandbox import Limits, LimitsError, exceeds, limits_from_table
from arena.server.registry import Registry, check_exposure, check_name
from arena.server.submission import check_programs, parse_submission
from arena.tournament.spec import BOT_KEYS, SpecError, TournamentSpec

DEFAULT_MAX_ENTRANTS = 64
DEFAULT_MAX_BOT_PROCESSES = 64
REFERENCE_KEYS = ("name", "limits")
"""What a submission may say about a registered bot: which one, and lower limits."""
NO_BOTS = ("this arena server has no bots to run: its operator starts it with --bots FILE (a registry of bots that "
           "submissions name), or with --allow-commands to run the commands submissions give (a tournament whose "
           "entrants all dial in needs neither)")


class NothingToRun(SpecError):
    """A submission that needs bots run here, on a server that runs none (FAILED_PRECONDITION, not the
    submission's mistake)."""


def all_dial_in(entries: Any) -> bool:
    """Every entrant dials in (``dial_in = true``): the server starts and calls nothing for the tournament, so it
    needs neither a registry nor ``--allow-commands``."""
    return (isinstance(entries, list) and bool(entries)
            and all(isinstance(e, Mapping) and e.get("dial_in") is True for e in entries))


@dataclass(frozen=True)
class Admission:
    """The server's rules for submissions (immutable: used from worker threads and the trio thread alike)."""

    registry: Registry | None = None
    allow_commands: bool = False
    max_entrants: int = DEFAULT_MAX_ENTRANTS
    protected: tuple[Path, ...] = ()
    """Paths no bot may see: the data folder, the token file, the TLS key, the registry."""
    cwd: Path | None = None
    """Where bot commands and their ``cwd`` are resolved (the server's working folder)."""

    @property
    def runs_anything(self) -> bool:
        return self.registry is not None or self.allow_commands

    @property
    def ceiling(self) -> Limits:
        """The most a submitted command bot may get, and its defaults: the registry's [limits]."""
        return self.registry.limits if self.registry is not None else Limits()

    # --- the whole submission ---

    def admit(self, message: tpb.TournamentSpec | None, toml: str) -> tuple[TournamentSpec, str]:
        """A new submission, validated and resolved to the bots this server runs; SpecError names any problem."""
        spec, text = self.validate(message, toml)
        if len(spec.bots) > self.max_entrants:
            raise SpecError(f"key 'bots': this tournament has {len(spec.bots)} entrants; this server takes at most "
                            f"{self.max_entrants} per tournament (arena serve --max-entrants)")
        return spec, text

    def validate(self, message: tpb.TournamentSpec | None, toml: str) -> tuple[TournamentSpec, str]:
        """:meth:`admit` without the caps: also for a tournament this server accepted before a restart (a lower cap
        since then does not fail it; a bot no longer registered does)."""
        spec, text = parse_submission(message, toml, resolve=self.resolve)
        cwd = self.cwd or Path.cwd()
        check_programs(spec.bots, cwd)
        check_exposure(spec.bots, self.protected, cwd)
        return spec, text

    def resolve(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The submission's tables with each bot as this server will run it. Anything of the wrong type is left as
        it is, for spec_from_dict to name."""
        if not self.runs_anything and not all_dial_in(data.get("bots")):
            raise NothingToRun(NO_BOTS)
        if data.get("sandbox") is False:
            raise SpecError("key 'sandbox': this server runs every bot in its sandbox; a submission cannot turn it "
                            "off (leave 'sandbox' out)")
        check_name("name", data.get("name"))
        entries = data.get("bots")
        if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
            return dict(data)
        for number, entry in enumerate(entries, 1):
            check_name(f"bots[{number}].name", entry.get("name"))
        top = data.get("limits", {})
        resolved = dict(data)
        resolved["bots"] = [self._bot(entry, f"bots[{number}].", top) for number, entry in enumerate(entries, 1)]
        try:
            resolved["limits"] = limits_from_table(top, self.ceiling).to_json()
        except LimitsError as error:
            raise SpecError(str(error)) from None
        return resolved

    # --- one [[bots]] entry ---

    def _bot(self, entry: Mapping[str, Any], where: str, top: Any) -> Mapping[str, Any]:
        """A command or an address is the client's own bot; anything else names a registered one."""
        if set(entry) - set(BOT_KEYS):
            return entry  # an unknown key: spec_from_dict lists the valid ones
        name = entry.get("name")
        if entry.get("dial_in") is True:
            return entry  # the bot dials in: nothing runs here (spec_from_dict checks the entry)
        if "command" in entry or "address" in entry:
            return self._command_bot(entry, where, top, name)
        return self._registered_bot(entry, where, top, name)

    def _command_bot(self, entry: Mapping[str, Any], where: str, top: Any, name: Any) -> Mapping[str, Any]:
        """A bot the client describes itself: only on an --allow-commands server, within the server's limits."""
        if not self.allow_commands:
            kind = "command" if "command" in entry else "address"
            registered = f" (registered here: {self.registry.names()})" if self.registry is not None else ""
            raise SpecError(f"key '{where}{kind}': bot {name!r} is given by a {kind}, but this server runs only its "
                            f"operator's bots: name a registered bot instead{registered}; commands are accepted "
                            f"only by a server started with --allow-commands")
        limits = self._limits(top, entry.get("limits", {}), self.ceiling, where, name, "this server's [limits]")
        return {**entry, "limits": limits.to_json()}

    def _registered_bot(self, entry: Mapping[str, Any], where: str, top: Any, name: Any) -> Mapping[str, Any]:
        """A name from the registry: its command, folder and environment, and its limits (lowered if asked)."""
        if not isinstance(name, str) or not name:
            return entry  # spec_from_dict: "key 'bots[N].name' is missing"
        if set(entry) - set(REFERENCE_KEYS):
            extra = sorted(set(entry) - set(REFERENCE_KEYS))[0]
            raise SpecError(f"key '{where}{extra}': a bot without a command or an address is one of the server's "
                            f"registered bots, given by its name (and, to lower them, its limits) only")
        if self.registry is None:
            raise SpecError(f"key '{where}name': bot {name!r} has no command or address, and this server has no "
                            f"registry of bots to name (its operator starts it with --bots FILE)")
        bot = self.registry.bots.get(name)
        if bot is None:
            if name in self.registry.skipped:
                raise SpecError(f"key '{where}name': bot {name!r} is registered but not installed on this server")
            raise SpecError(f"key '{where}name': no bot named {name!r} is registered on this server; registered: "
                            f"{self.registry.names()}")
        limits = self._limits(top, entry.get("limits", {}), bot.limits, where, name,
                             "its limits in this server's registry")
        table: dict[str, Any] = {"name": name, "env": dict(bot.env), "limits": limits.to_json()}
        table.update({"command": list(bot.command)} if bot.command else {"address": bot.address})
        table.update({k: getattr(bot, k) for k in ("cwd", "folder") if getattr(bot, k)})
        return table

    @staticmethod
    def _limits(top: Any, own: Any, base: Limits, where: str, name: Any, ceiling: str) -> Limits:
        """``base`` with the tournament's [limits] then the bot's own applied; none of them may go above ``base``."""
        try:
            limits = limits_from_table(own, limits_from_table(top, base), where=f"{where}limits.")
        except LimitsError as error:
            raise SpecError(str(error)) from None
        over = exceeds(limits, base)
        if over is not None:
            key = over.split()[0]
            source = f"{where}limits" if isinstance(own, Mapping) and key in own else "limits"
            raise SpecError(f"key '{source}.{key}': bot {name!r} may not go above {ceiling} ({over})")
        return limits
