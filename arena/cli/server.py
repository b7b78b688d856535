"""``arena serve`` and its clients: ``submit``, ``status``, ``watch``, ``games``, ``fetch``, ``cancel``; and
``connect`` (a bot on this machine dialed in to a server) with ``new-token`` (a dial-in bot's token).

Every client command takes ``--server ADDR`` (default 127.0.0.1:50500, the default of ``arena serve --listen``),
``--token-file F`` (the server's token, sent as ``authorization: Bearer <token>``) and, for a TLS server,
``--tls-ca F`` (the PEM certificate to trust) or ``--tls`` (the system's roots). A mistake on the command line
prints one ``error:`` line and exits with status 2; a call the server refuses (or a server that cannot be
reached) prints one ``error:`` line and exits with status 1.

Moved here from ``arena/server/cli.py``: the server is below the command line and never imports it.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from rich.table import Table

from arena import guest
from arena.cli.client import EXIT_REFUSED, _client, _refused, _with_client, client_command, new_private_file
from arena.display import make_console, move_label, safe_markup, safe_name
from arena.errors import UsageError
from arena.players.dial_in import token_digest
from arena.players.faults import BotFailure
from arena.players.process import BotProcess, BotSpec
from arena.players.relay import Backoff, ProcessBot, Relay, dial_in, last_words
from arena.protocol import arena_pb2 as apb
from arena.protocol.addresses import is_loopback
from arena.records.export import row_from_summary, save_csv, write_csv
from arena.records.format import full_tiles
from arena.server.auth import ConfigError
from arena.server.client import ServerSaidNo, describe
from arena.server.events import entrant_standing
from arena.server.submission import message_from_dict
from arena.server.tournaments import STATE_NAMES
from arena.tournament.spec import read_spec_text
from arena.tournament.standings import (
    GameOutcome,
    OutcomeError,
    Standings,
    row_cells,
    shows_calibration,
    table_frame,
)


def cmd_connect(args: argparse.Namespace) -> int:
    """Run the local bot and relay between it and the server, dialing again when the connection drops, until the
    server ends the stream (exit 0 when it ends it cleanly, 1 when it refuses the bot or cannot be reached, 130 on
    Ctrl-C); the decisions served and the latency seen on the way out."""
    command = tuple(c for c in args.command if c != "--")
    if not command:
        raise UsageError("expected the bot's command after --: arena connect --server ADDR --bot NAME --token-file F "
                         "-- COMMAND ...")
    if not args.token_file:
        raise UsageError("expected --token-file F: the bot's token, which lets it play as --bot only")
    if not (args.tls or args.tls_ca) and not is_loopback(args.server):
        raise ConfigError(f"refusing to dial in to {args.server} in plain text: beyond loopback the token must travel "
                          f"over TLS; pass --tls-ca CERT (or --tls for the system's roots)")
    if args.startup_ms < 1:
        raise UsageError(f"--startup-ms must be at least 1, got {args.startup_ms}")
    if args.reconnect < 0:
        raise UsageError(f"--reconnect must be 0 or more, got {args.reconnect}")
    first = _client(args)  # reads the token file now: a missing one is one line, before anything starts
    metadata = first.metadata
    first.close()
    logs = Path(tempfile.mkdtemp(prefix="arena-connect-"))
    process = BotProcess(BotSpec(name=args.bot, command=command, sandbox=False, transport=args.transport,
                                 protocol=args.protocol), logs, args.startup_ms / 1000)
    relay = Relay(ProcessBot(process), None, args.bot, metadata)

    try:
        ended = guest.run(dial_in, relay, lambda: _client(args, aio=True).channel, Backoff(args.reconnect))
    except BotFailure as failure:
        return _refused(f"the bot did not start: {failure} (its log: {process.log_path})")
    status, lines = last_words(relay, ended, f"; bot log: {process.log_path}")
    for line in lines:
        print(safe_name(line, 4000), file=sys.stderr)
    return status


def cmd_new_token(args: argparse.Namespace) -> int:
    """A fresh token in a private file; its SHA-256 goes in the tournament file (only the hash is ever shared)."""
    token = secrets.token_urlsafe(32)
    with new_private_file(args.file, "the token") as f:
        f.write(token + "\n")
    print(f"token_sha256 = \"{token_digest(token)}\"")
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    path = Path(args.file)
    text = read_spec_text(path)
    request = apb.SubmitTournamentRequest(toml=text)
    try:
        request.spec.CopyFrom(message_from_dict(tomllib.loads(text)))
    except (tomllib.TOMLDecodeError, ValueError, TypeError, KeyError, AttributeError):
        pass  # the server validates the text alone and names the problem

    def body(client: Any) -> int:
        reply = client.call("SubmitTournament", request)
        info = reply.tournament
        print(f"submitted {safe_name(info.id)}: {safe_name(info.name)!r} ({safe_name(info.variant)}, "
              f"{info.games_total} games), {_state(info.state)}")
        for note in reply.notes:
            print(f"note: {safe_name(note, 2000)}")
        print(f"follow it: {client_command(args, 'watch', info.id)}")
        return 0

    return _with_client(args, body)


def cmd_status(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        if args.id:
            reply = client.call("GetStandings", apb.GetStandingsRequest(id=args.id))
            print_info(reply.tournament)
            if reply.standings.entrants:
                make_console().print(standings_table(reply.standings,
                                                 f"standings after {_games_text(reply.standings.games)}"))
            if reply.standings.HasField("sprt"):
                print(safe_name(reply.standings.sprt.summary, 1000))
            return 0
        reply = client.call("ListTournaments", apb.ListTournamentsRequest())
        if not reply.tournaments:
            print("no tournaments yet (submit one with: arena submit FILE)")
            return 0
        table = Table(title=f"tournaments on {safe_markup(args.server)}")
        for column in ("id", "name", "variant", "state", "games", "playing", "submitted"):
            table.add_column(column, justify="right" if column in ("games", "playing") else "left")
        for info in reply.tournaments:
            table.add_row(safe_markup(info.id), safe_markup(info.name), safe_markup(info.variant), _state(info.state),
                          games_cell(info), str(info.games_in_progress), _when(info.created_at))
        make_console().print(table)
        return 0

    return _with_client(args, body)


def cmd_watch(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        view = WatchView(moves=args.moves)
        stream = client.stream("WatchTournament", apb.WatchTournamentRequest(id=args.id, moves=args.moves))
        try:
            for reply in stream:
                for ev in reply.events:
                    view.show(ev)
        except grpc.RpcError as error:
            return _refused(describe(error, args.server))
        finally:
            stream.cancel()
        if view.final is None:
            return _refused("the watch ended before the tournament did")
        print_final_standings(client, view.final)
        view.print_ending()
        return 0 if view.final.tournament.state == apb.TOURNAMENT_STATE_FINISHED else EXIT_REFUSED

    return _with_client(args, body)


def cmd_games(args: argparse.Namespace) -> int:
    """The recorded games as a table, or with ``--csv`` as ``arena export`` writes a run's (from ListGames: its
    summaries carry every column, the seed only once the master seed is revealed; a page holds 1000 games, where
    GetGame would fetch every move of every game)."""
    if args.out and not args.csv:
        raise UsageError("--out goes with --csv (the table is printed)")

    def body(client: Any) -> int:
        games, total = all_games(client, args.id)
        if args.csv:
            rows = [row_from_summary(g) for g in games]
            if args.out:
                print(f"wrote {save_csv(rows, args.out)} games to {args.out}", file=sys.stderr)
            else:
                write_csv(rows, sys.stdout)
                sys.stdout.flush()
            return 0
        make_console().print(games_table(games, total))
        return 0

    return _with_client(args, body)


def all_games(client: Any, tournament_id: str) -> tuple[list[Any], int]:
    """Every recorded game's summary in index order (ListGames, 1000 a page), and the games in the schedule."""
    games: list[Any] = []
    while True:
        reply = client.call("ListGames", apb.ListGamesRequest(id=tournament_id, offset=len(games), limit=1000))
        games.extend(reply.games)
        if not reply.games or len(games) >= reply.games_done:
            return games, reply.games_total


def games_table(games: list[Any], total: int) -> Any:
    """The games as a rich table (every name from the server made safe to print)."""
    table = Table(title=f"{len(games)} of {total} games recorded")
    for column in ("game", "seats", "scores", "winner", "rounds", "faults", "seconds"):
        table.add_column(column, justify="right" if column in ("game", "rounds", "seconds") else "left")
    for g in games:
        table.add_row(str(g.index), safe_markup(", ".join(g.seats), 400),
                      " ".join(str(s) for s in g.result.scores), safe_markup(_winner(g), 200),
                      str(g.result.rounds),
                      safe_markup("; ".join(f"{f.kind} (seat {f.seat})" for f in g.faults), 400),
                      f"{g.duration_s:.2f}")
    return table


def cmd_fetch(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("GetGame", apb.GetGameRequest(id=args.id, index=args.game))
        # ASCII JSON: a name or a fault message in the record cannot reach the terminal as a control character.
        # Tiles in full, as records are stored ([0|0] is {"low":0,"high":0}; protobuf's mapping would write {}).
        record = full_tiles(json_format.MessageToDict(reply.record))
        print(json.dumps(record, separators=(",", ":"), ensure_ascii=True))
        if reply.seed_withheld:
            print("note: the seed is withheld until the tournament's master seed is revealed", file=sys.stderr)
        return 0

    return _with_client(args, body)


def cmd_cancel(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        info = client.call("CancelTournament", apb.CancelTournamentRequest(id=args.id), timeout=60).tournament
        print(f"tournament {safe_name(info.id)}: {_state(info.state)} after {info.games_done}/{info.games_total} "
              f"games")
        return 0

    return _with_client(args, body)


def _state(state: apb.TournamentState.ValueType) -> str:
    return STATE_NAMES.get(state, "unknown")


def _when(unix: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(unix)) if unix else "-"


def _tile(t: Any) -> str:
    return f"[{t.low}|{t.high}]"


def _sides(seats: Any, side_of_seat: Any) -> list[str]:
    """A name per side: its entrants, joined by + (each once), made safe to print."""
    names: dict[int, list[str]] = {}
    for seat, name in enumerate(safe_name(s) for s in seats):
        side = side_of_seat[seat] if seat < len(side_of_seat) else seat
        if name not in names.setdefault(side, []):
            names[side].append(name)
    return ["+".join(names[s]) for s in sorted(names)]


def _winner(game: Any) -> str:
    if not game.result.HasField("winner"):
        return "drawn"
    sides = _sides(game.seats, game.side_of_seat)
    w = game.result.winner
    return sides[w] if w < len(sides) else f"side {w}"


def print_info(info: Any) -> None:
    """A tournament's facts as lines; every text from the server made safe to print."""
    print(f"tournament {safe_name(info.id)}: {safe_name(info.name)!r}, {safe_name(info.variant)} with "
          f"{info.players} players; {_state(info.state)}")
    print(f"games: {games_recorded(info)}, {info.games_in_progress} being played")
    print(f"entrants: {', '.join(safe_name(e) for e in info.entrants)}")
    print(f"submitted {_when(info.created_at)}; started {_when(info.started_at)}; ended {_when(info.finished_at)}")
    if info.error:
        print(f"note: {safe_name(info.error, 1000)}")
    if info.resumable:
        print("resumable: its recorded games are safe; the server resumes it at its next start")
    for line in info.given_up:
        print(f"warning: {safe_name(line, 1000)}")
    if info.seed_commitment:
        print(f"seed commitment: {safe_name(info.seed_commitment)}"
              + (f"; master seed revealed: {safe_name(info.master_seed)}" if info.master_seed else ""))


def games_recorded(info: Any, unit: str = "") -> str:
    """``12/40 recorded``; with [sprt] the total is only the test's cap, so it is said as one."""
    return recorded_of(info.games_done, info.games_total, info.sprt, unit)


def recorded_of(done: int, total: int, sprt: bool, unit: str = "") -> str:
    """``12/40{unit} recorded``, or for a tournament with [sprt] ``12{unit} recorded (SPRT: stops when it decides;
    cap 800)``."""
    if sprt:
        return f"{done}{unit} recorded (SPRT: stops when it decides; cap {total})"
    return f"{done}/{total}{unit} recorded"


def games_cell(info: Any) -> str:
    """The games column of the tournaments table: ``12/40``, or ``12 (SPRT, cap 20000)``."""
    return f"{info.games_done} (SPRT, cap {info.games_total})" if info.sprt else f"{info.games_done}/{info.games_total}"


def standings_table(standings: Any, title: str) -> Any:
    """A Standings message as the same table ``arena run`` prints: the columns, cells and tie-break caption of
    :func:`~arena.tournament.standings.table_frame`, each row by :func:`~arena.tournament.standings.row_cells`
    (the server's order is the standings' own)."""
    entrants = [(e.rank, entrant_standing(e)) for e in standings.entrants]
    calibration = shows_calibration([entrant for _, entrant in entrants])
    table = table_frame(title, standings.rating, calibration)
    for rank, entrant in entrants:
        table.add_row(*row_cells(rank, entrant, standings.rating).table_row(calibration))
    return table


class WatchView:
    """Prints a watch stream's events as lines, one per finished game (with ``--moves``, also each game's start,
    moves and rounds); keeps the final event, whose standings :func:`print_final_standings` prints in full."""

    def __init__(self, moves: bool) -> None:
        self.moves = moves
        self.final: Any = None
        """The TournamentFinished event, once it came."""
        self.seats: dict[int, list[str]] = {}
        self.sprt = False
        """The tournament has [sprt]: its total is only the test's cap (from the snapshot)."""

    def out(self, text: str) -> None:
        """Every line of the view; its parts from the server are already through safe_name."""
        print(text, flush=True)

    def show(self, ev: Any) -> None:
        kind = ev.WhichOneof("kind")
        getattr(self, f"_{kind}")(getattr(ev, kind))

    def _snapshot(self, s: Any) -> None:
        info = s.tournament
        self.sprt = info.sprt
        self.out(f"tournament {safe_name(info.id)}: {safe_name(info.name)!r} ({safe_name(info.variant)}), "
                 f"{_state(info.state)}; {games_recorded(info, ' games')}, {len(s.in_progress)} being played")
        for g in s.in_progress:
            self.seats[g.index] = list(g.seats)

    def _game_started(self, g: Any) -> None:
        """Only with --moves, as the heading of the game's moves: the finished line says who played."""
        self.seats[g.index] = list(g.seats)
        if self.moves:
            self.out(f"game {g.index} started: {' v '.join(safe_name(s) for s in g.seats)}")

    def _move(self, m: Any) -> None:
        """Rounds and moves numbered from 1, moves through the whole game, as every other view numbers them."""
        seats = self.seats.get(m.game, [])
        who = f"seat {m.seat}" + (f" ({safe_name(seats[m.seat])})" if m.seat < len(seats) else "")
        self.out(f"  game {m.game} round {m.round_index + 1} {move_label(m.move_number_in_game)}: {who}: "
                 f"{safe_name(m.action.text)}" + (" (forced)" if m.forced else ""))

    def _round_finished(self, r: Any) -> None:
        res = r.result
        ending = {1: "domino", 2: "block"}.get(res.ending, "?")
        hands = "; ".join(f"seat {i}: {' '.join(_tile(t) for t in h.tiles) or '-'}" for i, h in enumerate(res.hands))
        self.out(f"  game {r.game} round {res.round_index + 1} ended by {ending}: points {list(res.points)}, "
                 f"scores {list(res.scores)}; hands {hands}")

    def _game_finished(self, f: Any) -> None:
        """The one line of a game: who played, the scores, the winner, any fault."""
        g = f.game
        if not self.moves:  # with --moves, a game's moves may come after it finished (held for its deal set)
            self.seats.pop(g.index, None)
        sides = _sides(g.seats, g.side_of_seat)
        scores = ", ".join(f"{name} {score}" for name, score in zip(sides, g.result.scores, strict=False))
        faults = "; ".join(f"{safe_name(x.kind)} by seat {x.seat} at {move_label(x.move_number)}: "
                           f"{safe_name(x.message, 300)}" for x in g.faults)
        count = f"{f.games_done} recorded, SPRT cap {f.games_total}" if self.sprt else f"{f.games_done}/{f.games_total}"
        self.out(f"game {g.index} finished ({count}): {scores}; winner {_winner(g)}"
                 + (f"; fault: {faults}" if faults else ""))

    def _standings(self, s: Any) -> None:
        """Not printed: a line per update would double the lines per game; the full standings come at the end
        (and ``arena status ID`` shows them at any time)."""

    def _dropped(self, d: Any) -> None:
        self.out(f"note: this watcher fell behind: {d.moves} move events and {d.standings} standings updates "
                 f"were dropped")

    def _finished(self, f: Any) -> None:
        self.final = f

    def print_ending(self) -> None:
        """The last line: how the tournament ended, and its master seed once revealed."""
        info = self.final.tournament
        count = games_recorded(info, " games") if info.sprt else f"{info.games_done}/{info.games_total} games"
        self.out(f"tournament {safe_name(info.id)} {_state(info.state)}: {count}"
                 + (f" ({safe_name(info.error, 1000)})" if info.error else "")
                 + (f"; master seed {safe_name(info.master_seed)}" if info.master_seed else ""))
        if self.final.standings.HasField("sprt"):
            self.out(safe_name(self.final.standings.sprt.summary, 1000))
        for line in info.given_up:
            self.out(f"warning: {safe_name(line, 1000)}")


def print_final_standings(client: Any, final: Any) -> None:
    """The standings and the pairwise table exactly as ``arena run`` prints them (the tables of
    arena/tournament/standings.py), from the tournament's recorded games; the server's own standings table when the
    games cannot be listed (the server is stopping) or do not add up."""
    info = final.tournament
    console = make_console()
    try:
        games, _ = all_games(client, info.id)
        standings = standings_from_games(games, final.standings)
    except (ServerSaidNo, OutcomeError) as error:
        if final.standings.entrants:
            console.print(standings_table(final.standings, f"{info.name}: {info.variant}, "
                                                           f"{_games_text(final.standings.games)}"))
        console.print(f"note: the pairwise table is not shown: {safe_markup(str(error), 300)}")
        return
    if not standings.games:
        return
    console.print(standings.table(f"{info.name}: {info.variant}, {_games_text(standings.games)}"))
    console.print(standings.pairwise_table())


def _games_text(count: int) -> str:
    return f"{count} game" + ("" if count == 1 else "s")


def standings_from_games(games: list[Any], reported: Any) -> Any:
    """A :class:`~arena.tournament.standings.Standings` fed with the games' summaries in the order they finished
    (the order the server counted them: OpenSkill depends on it). A summary has no think times, so each entrant's
    totals from the server's standings (``reported``, a Standings message) go with its first seat: the table's
    per-decision mean is the same; so does its calibration (a summary has no beliefs)."""
    think = {e.name: (e.think_ms_per_decision * e.decisions, e.decisions) for e in reported.entrants
             if e.HasField("think_ms_per_decision")}
    calibration = {e.name: entrant_standing(e).calibration for e in reported.entrants if e.HasField("calibration")}
    standings = Standings(group_size=max(1, reported.group_size))
    for g in sorted(games, key=lambda g: (g.started_at + g.duration_s, g.index)):
        seats = tuple(g.seats)
        think_ms, decisions = [0.0] * len(seats), [0] * len(seats)
        beliefs = []
        for seat, name in enumerate(seats):
            if name in think:
                think_ms[seat], decisions[seat] = think.pop(name)
            if name in calibration:
                beliefs.append((seat, calibration.pop(name)))
        standings.add(GameOutcome(
            index=g.index, deal_key=g.deal_key, seats=seats, side_of=tuple(g.side_of_seat) or tuple(range(len(seats))),
            scores=tuple(g.result.scores), ranking=tuple(g.result.ranking),
            winner=g.result.winner if g.result.HasField("winner") else None,
            fault_seats=tuple(sorted({f.seat for f in g.faults})), think_ms=tuple(think_ms),
            decisions=tuple(decisions), calibration=tuple(beliefs)))
    return standings
