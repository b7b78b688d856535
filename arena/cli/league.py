"""``arena league ...``: the clients of a server's leagues (``arena serve --league FILE``).

``add-author NAME``, ``revoke NAME`` and ``reinstate VERSION`` are the operator's (``--token-file`` the server's
token); ``status``, ``standings``, ``queue`` and ``watch`` anyone's with a token; ``upload``, ``bots``, ``versions``,
``log``, ``table-log`` and ``retire`` are an author's (``--token-file`` the token of a member of the author's team: its
captain's, given once by ``add-author`` or ``sign-up``, or another member's, given once by ``add-member``) or the
operator's. The teams' own verbs (``sign-up``, ``invite``, ``add-member``, ...) are in :mod:`arena.cli.teams`, a
team's notices (``feed-url``, ``webhook``) in :mod:`arena.cli.notices`. Each takes the connection options of the other
client commands (``--server``, ``--tls-ca``, ...). A call the server refuses prints one ``error:`` line and exits
with status 1. What a bot or its build wrote (``table-log``, ``log``) is printed without its control characters but
its line breaks (:func:`arena.display.safe_text`): a bot's log and a build's are a stranger's text.

``upload`` of a folder checks and packs it here first (:func:`arena.league.intake.archive.pack`, the server's own check,
so a mistake is told before anything is sent) and sends the canonical archive; an archive file (tar, tar.gz, zip)
is sent as it is, and the server checks it.

``copy-database`` and ``prepare-kits`` are no clients: they run on the server's machine, the first on the leagues'
database itself, with the server stopped; they are in :mod:`arena.cli.league_admin`, so that no client loads the
database.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
from rich.table import Table

from arena.cli.client import (
    CLIENT_FLAGS,
    _client,
    _refused,
    _with_client,
    client_command,
    new_private_file,
    shown_once,
)
from arena.cli.notices import web_prefix
from arena.display import make_console, safe_markup, safe_name, safe_text
from arena.errors import UsageError
from arena.league.intake.archive import ArchiveError, pack
from arena.league.rules.config import KNOCKOUT, SWISS, WIDEST_UPLOAD, shown_moment, upload_archive_limits
from arena.protocol import league_pb2 as lpb
from arena.protocol import league_pb2_grpc as lpb_grpc
from arena.server.client import describe

CHUNK_BYTES = 256 * 1024
"""An upload's chunk: far below the message size limit, big enough to be few."""
UPLOAD_TIMEOUT_S = 300.0
LEAGUE_FLAGS = (*CLIENT_FLAGS, "league")
"""The flags a printed follow-up command repeats: the client's, and the league's name when one was given."""


def _league_client(args: argparse.Namespace) -> Any:
    """The connection of the other client commands, with a stub of the league's service."""
    client = _client(args)
    return dataclasses.replace(client, stub=lpb_grpc.LeagueServiceStub(client.channel))


def _run(args: argparse.Namespace, body: Any) -> int:
    return _with_client(args, body, connect=_league_client)


def cmd_add_author(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("AddAuthor", lpb.AddAuthorRequest(name=args.name))
        return shown_once(f"author {safe_name(reply.author.name)!r} created; its token (shown this once, the server "
                          f"keeps only its hash; give it to the author, who saves it in a private file for "
                          f"--token-file):", reply.token)

    return _run(args, body)


def cmd_revoke(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("RevokeToken", lpb.RevokeTokenRequest(author=args.name))
        print(f"the token of author {safe_name(reply.author.name)!r} is revoked")
        return 0

    return _run(args, body)


def cmd_upload(args: argparse.Namespace) -> int:
    source = Path(args.source)
    if not source.exists():
        raise UsageError(f"{source}: no such folder or archive")
    with tempfile.TemporaryDirectory(prefix="arena-upload-") as tmp:
        if source.is_dir():
            try:
                # within what any league may allow: the server checks its league's own [upload] limits
                archive = pack(source, tmp, upload_archive_limits(WIDEST_UPLOAD)).path
            except ArchiveError as error:
                return _refused(f"{source}: {error}")
        else:
            archive = source

        def body(client: Any) -> int:
            reply = client.call("Upload", upload_messages(args.league, args.bot, archive), timeout=UPLOAD_TIMEOUT_S)
            v = reply.version
            what = "uploaded" if reply.created else "already uploaded (the same archive is one version)"
            print(f"{what}: version {v.id} of bot {safe_name(v.bot)!r} (number {v.number}), sha256 {v.sha256}, "
                  f"{state_name(v.state)}")
            print(f"follow it: {client_command(args, 'league', 'versions', v.bot, flags=LEAGUE_FLAGS)}")
            return 0

        return _run(args, body)


def upload_messages(league: str, bot: str, archive: Path) -> Iterator[lpb.UploadRequest]:
    """The upload's stream: its start, then the archive's chunks."""
    yield lpb.UploadRequest(start=lpb.UploadStart(league=league, bot=bot))
    with open(archive, "rb") as data:
        while chunk := data.read(CHUNK_BYTES):
            yield lpb.UploadRequest(chunk=chunk)


def cmd_dial_in(args: argparse.Namespace) -> int:
    """A dial-in version: its bot token into a new private file (made before the call, so that a token is never
    shown and lost), and the ``arena connect`` command that plays it."""
    with new_private_file(args.bot_token_file, "the bot token") as out:
        def body(client: Any) -> int:
            reply = client.call("AddDialInVersion", lpb.AddDialInVersionRequest(league=args.league, bot=args.bot))
            out.write(reply.token + "\n")
            out.flush()
            v = reply.version
            print(f"dial-in version {v.id} of bot {safe_name(v.bot)!r} (number {v.number}), {state_name(v.state)}; "
                  f"its bot token is in {args.bot_token_file}")
            as_bot = argparse.Namespace(**{**vars(args), "token_file": args.bot_token_file})
            connect = client_command(as_bot, "connect", "--bot", reply.connect_as)
            print(f"play it from your machine: {connect} -- COMMAND ...")
            return 0

        status = _run(args, body)
    if status != 0:
        Path(args.bot_token_file).unlink(missing_ok=True)  # nothing was added: no empty token file left behind
    return status


def cmd_bots(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("ListBots", lpb.ListBotsRequest(league=args.league))
        if not reply.bots:
            print("no bots yet (upload one with: arena league upload DIR --bot NAME)")
            return 0
        table = Table(title="bots")
        for column in ("league", "bot", "author", "versions", "active version"):
            table.add_column(column)
        for bot in reply.bots:
            table.add_row(safe_markup(bot.league), safe_markup(bot.name), safe_markup(bot.author), str(bot.versions),
                          str(bot.active_version) if bot.active_version else "none ready")
        make_console().print(table)
        return 0

    return _run(args, body)


def cmd_versions(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("ListVersions", lpb.ListVersionsRequest(league=args.league, bot=args.bot or ""))
        if not reply.versions:
            print("no versions yet")
            return 0
        table = Table(title="versions")
        for column in ("id", "bot", "number", "state", "sha256", "uploaded", "reason"):
            table.add_column(column)
        for v in reply.versions:
            state = state_name(v.state) + (" (active)" if v.active else "")
            table.add_row(str(v.id), safe_markup(v.bot), str(v.number), state, v.sha256[:12], _when(v.created_at),
                          safe_markup(safe_name(v.reason, 300)))
        make_console().print(table)
        return 0

    return _run(args, body)


def cmd_log(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("GetBuildLog", lpb.GetBuildLogRequest(version_id=args.version))
        v = reply.version
        print(f"version {v.id} of bot {safe_name(v.bot)!r}: {state_name(v.state)}"
              + (f" ({safe_name(v.reason, 1000)})" if v.reason else ""))
        print("--- build log ---")
        print(safe_text(reply.build_log) or "(no build yet)")
        print("--- check report ---")
        print(safe_text(reply.check_report) or "(no check yet)")
        return 0

    return _run(args, body)


def cmd_table_log(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("GetTableLog", lpb.GetTableLogRequest(table_id=args.table, version_id=args.version))
        print(f"{table_line(reply.table)}; the logs of {safe_name(reply.version)!r}:", file=sys.stderr)
        if not reply.logs:
            print("(no log: its bot did not start at this table)", file=sys.stderr)
        for log in reply.logs:
            print(log_heading(log))
            print(safe_text(log.tail.decode(errors="replace")), end="" if log.tail.endswith(b"\n") else "\n")
        return 0

    return _run(args, body)


def log_heading(log: Any) -> str:
    """The line before a bot log's text: its file, and how much of it is shown when it was cut."""
    cut = f" (its last {len(log.tail)} of {log.size} bytes)" if log.truncated else ""
    return f"--- {safe_name(log.name)}{cut} ---"


def cmd_retire(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("RetireVersion", lpb.RetireVersionRequest(version_id=args.version))
        print(f"version {reply.version.id} of bot {safe_name(reply.version.bot)!r} is retired")
        return 0

    return _run(args, body)


def cmd_reinstate(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("ReinstateVersion", lpb.ReinstateVersionRequest(version_id=args.version))
        print(f"version {reply.version.id} of bot {safe_name(reply.version.bot)!r} is ready again")
        return 0

    return _run(args, body)


def cmd_standings(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("GetLadderStandings", lpb.GetLadderStandingsRequest(league=args.league))
        if not reply.standings:
            print("no bot rated yet (the ladder rates a bot's active version after its first table)")
            return 0
        console = make_console()
        console.print(f"ladder of {safe_markup(reply.league)}, one row per bot (its active version): "
                      f"{safe_markup(reply.rating)}, 95% intervals; fit of {reply.deal_sets_fitted} of "
                      f"{reply.deal_sets_rated} deal sets", highlight=False)
        table = Table()
        for column in STANDINGS_COLUMNS:
            table.add_column(column, justify="left" if column in TEXT_COLUMNS else "right")
        for row in reply.standings:
            table.add_row(*standing_cells(row))
        console.print(table)
        for row in reply.standings:
            if row.tied_with:
                console.print(f"{safe_markup(row.bot)}-v{row.number} (rank {rank_text(row)}): not yet told apart "
                              f"from {tied_text(list(row.tied_with))}", highlight=False)
        console.print(safe_markup(reply.rank_rule, 500), highlight=False)
        return 0

    return _run(args, body)


STANDINGS_COLUMNS = ("rank", "version", "bot", "author", "rating", "95% interval", "deal sets", "games",
                     "online mu ± sigma", "state")
TEXT_COLUMNS = ("bot", "author", "state")
TIED_SHOWN = 10
"""The names a "not yet told apart from" line lists (the rest counted), so a dense field keeps short lines."""


def rank_text(row: Any) -> str:
    """``"3"``, or ``"2-4"`` when the intervals leave the row anywhere from second to fourth."""
    return str(row.rank_best) if row.rank_best == row.rank_worst else f"{row.rank_best}-{row.rank_worst}"


def tied_text(names: Sequence[str]) -> str:
    shown = ", ".join(safe_markup(name) for name in names[:TIED_SHOWN])
    return shown + (f" and {len(names) - TIED_SHOWN} more" if len(names) > TIED_SHOWN else "")


def standing_cells(row: Any) -> list[str]:
    """One leaderboard row as the standings print it (a version not fitted yet: its rating cells say so)."""
    rating, interval = ((f"{row.rating:.0f}", f"{row.rating_low:.0f} to {row.rating_high:.0f}") if row.fitted
                        else ("not fitted yet", ""))
    return [rank_text(row), f"{row.version_id} (v{row.number})", safe_markup(row.bot), safe_markup(row.author), rating,
            interval, str(row.deal_sets), str(row.games), f"{row.online_mu:.2f} ± {row.sigma:.2f}",
            state_name(row.state)]


def cmd_queue(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("GetLadderQueue", lpb.GetLadderQueueRequest(league=args.league))
        print(f"ladder of {safe_name(reply.league)}: {len(reply.playing)} of {reply.concurrency} tables playing")
        for title, tables in (("playing", reply.playing), ("next (if chosen now)", reply.next),
                              ("last ended", reply.recent)):
            print(f"{title}:")
            for t in tables:
                print("  " + table_line(t))
            if not tables:
                print("  none")
        if reply.note:
            print(f"note: {safe_name(reply.note, 500)}")
        return 0

    return _run(args, body)


def cmd_watch(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        stream = client.stream("WatchLadder", lpb.WatchLadderRequest(league=args.league))
        seen = 0
        try:
            for reply in stream:
                print(table_line(reply.table), flush=True)
                for row in reply.ratings:
                    print(f"  {watch_line(row, reply.deal_sets_fitted)}", flush=True)
                seen += 1
                if args.tables and seen >= args.tables:
                    return 0
        except grpc.RpcError as error:
            return _refused(describe(error, args.server))
        finally:
            stream.cancel()
        return 0

    return _run(args, body)


def watch_line(row: Any, fitted: int) -> str:
    """A version's ratings after a table: online (updated by it) and the leaderboard's (the last refit's)."""
    online = f"online {row.online_mu:.2f} (sigma {row.sigma:.2f}, {row.deal_sets} deal sets)"
    if not row.fitted:
        return f"{safe_name(row.bot)}-v{row.number}: {online}; leaderboard: not fitted yet"
    return (f"{safe_name(row.bot)}-v{row.number}: {online}; leaderboard rank {rank_text(row)}, rating "
            f"{row.rating:.0f} ({row.rating_low:.0f} to {row.rating_high:.0f}; fit of {fitted} deal sets)")


def table_line(t: Any) -> str:
    """One table as the queue and the watch print it: its id, versions, state, reason, result or error."""
    state = lpb.TableState.Name(t.state).removeprefix("TABLE_STATE_").lower()
    who = " vs ".join(safe_name(name) for name in t.versions)
    head = f"table {t.id}: " if t.id else ""
    line = f"{head}{who} ({state}; {safe_name(t.reason, 300)})"
    if t.points:
        line += " points " + " - ".join(f"{p:g}" for p in t.points)
    if t.error:
        line += f": {safe_name(t.error, 500)}"
    return line


def state_name(state: lpb.VersionState.ValueType) -> str:
    return lpb.VersionState.Name(state).removeprefix("VERSION_STATE_").lower()


def _when(moment: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(moment)) if moment else ""


def _when_minute(moment: float) -> str:
    """A moment of the league's timeline as its messages write it: ``2026-12-05 18:00 UTC`` (with seconds when it
    has any)."""
    return shown_moment(datetime.fromtimestamp(moment, UTC))


def cmd_status(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("GetStatus", lpb.GetStatusRequest(league=args.league))
        print(f"{safe_name(reply.title)} ({safe_name(reply.league)}): {safe_name(reply.variant)}, {reply.phase}"
              + (f"; {safe_name(reply.next, 500)}" if reply.next else ""))
        return 0

    return _run(args, body)


def cmd_share(args: argparse.Namespace) -> int:
    """The link alone on stdout (``> FILE`` keeps it alone), what it opens and until when on stderr."""
    web = web_prefix(args.web)
    if args.hours < 0:  # the server says what else it refuses; a negative count fits no message
        return _refused(f"--hours must be 1 or more, got {args.hours}")

    def body(client: Any) -> int:
        reply = client.call("ShareLeague", lpb.ShareLeagueRequest(league=args.league_name, hours=args.hours))
        where = "" if web else " (its path on the server's web dashboard: give --web URL for the whole link)"
        print(f"a read-only link to league {safe_name(reply.league)!r}{where}; whoever opens it sees its public "
              f"pages until {_when_minute(reply.expires_at)}:", file=sys.stderr)
        print(web + reply.path)
        return 0

    return _run(args, body)


def cmd_challenge(args: argparse.Namespace) -> int:
    if args.deal_sets < 0:
        return _refused(f"--deal-sets must be 1 or more, got {args.deal_sets}")

    def body(client: Any) -> int:
        reply = client.call("Challenge", lpb.ChallengeRequest(league=args.league, version_id=args.version,
                                                              opponent_id=args.against, deal_sets=args.deal_sets))
        print(f"{challenge_line(reply.challenge)}; follow it with: "
              f"{client_command(args, 'league', 'challenges', reply.challenge.id, flags=LEAGUE_FLAGS)}")
        return 0

    return _run(args, body)


def cmd_challenges(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        if args.id is not None:
            print(challenge_line(client.call("GetChallenge", lpb.GetChallengeRequest(id=args.id)).challenge))
            return 0
        found = client.call("ListChallenges", lpb.ListChallengesRequest(league=args.league)).challenges
        for challenge in found:
            print(challenge_line(challenge))
        if not found:
            print("no challenges")
        return 0

    return _run(args, body)


def challenge_line(c: Any) -> str:
    """One challenge: its id, who against whom, its state, and its verdict or why it failed."""
    state = lpb.TableState.Name(c.state).removeprefix("TABLE_STATE_").lower()
    line = (f"challenge {c.id}: {safe_name(c.version)} ({c.version_id}) vs {safe_name(c.opponent)} "
            f"({c.opponent_id}), up to {c.deal_sets} deal sets: {state}")
    if c.outcome:
        line += f": {safe_name(c.outcome, 200)} ({safe_name(c.outcome_why, 500)})"
    if c.verdict:
        line += f"; {safe_name(c.verdict, 500)}" if c.outcome else f": {safe_name(c.verdict, 500)}"
    if c.error:
        line += f": {safe_name(c.error, 500)}"
    return line


def cmd_freeze(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("Freeze", lpb.FreezeRequest(league=args.league))
        print(f"league {safe_name(reply.league)!r} frozen at {_when(reply.frozen_at)} UTC; its field: "
              + ", ".join(f"{safe_name(name)} ({vid})" for name, vid in zip(reply.field, reply.field_ids, strict=False)))
        return 0

    return _run(args, body)


EVENT_RANKINGS = {SWISS: "ranked by the Swiss table (points, Buchholz, Sonneborn-Berger, then seed)",
                  KNOCKOUT: "ranked by the knockout's placements (versions out in the same round placed equal)"}
"""The title of a Swiss's or a knockout's ranking: the event's order, no rating."""


def finals_table(reply: Any) -> Table | None:
    """The finals' ranking as their format ranks them (the answer's ``format``; a server that names none ran a
    round robin, the only finals before formats): a Swiss's or a knockout's order with each version's deal sets
    and those placed equal, a round robin's fit with ratings and intervals; None before there is a ranking."""
    if not reply.ranking:
        return None
    title = EVENT_RANKINGS.get(reply.format)
    if title is not None:
        table = Table(title=title)
        for column in ("rank", "version", "deal sets", "placed equal with"):
            table.add_column(column, justify="right" if column == "deal sets" else "left")
        for row in reply.ranking:
            table.add_row(row.rank, f"{safe_markup(row.version)} ({row.version_id})", str(row.deal_sets),
                          ", ".join(safe_markup(name) for name in row.tied_with) or "-")
        return table
    table = Table(title="ranked by the maximum-likelihood fit (Elo, 95% interval)")
    for column in ("rank", "version", "rating", "interval", "deal sets", "cannot be told apart from"):
        table.add_column(column, justify="right" if column in ("rating", "deal sets") else "left")
    for row in reply.ranking:
        table.add_row(row.rank, f"{safe_markup(row.version)} ({row.version_id})", f"{row.rating:+.0f}",
                      f"{row.rating_low:+.0f} to {row.rating_high:+.0f}", str(row.deal_sets),
                      ", ".join(safe_markup(name) for name in row.tied_with) or "-")
    return table


def cmd_finals(args: argparse.Namespace) -> int:
    for flag, value in (("--deal-sets", args.deal_sets), ("--tables", args.tables)):
        if value is not None and value < 1:
            return _refused(f"{flag} must be 1 or more, got {value}")
    start = args.start or args.deal_sets is not None or args.tables is not None

    def body(client: Any) -> int:
        reply = client.call("Finals", lpb.FinalsRequest(league=args.league, start=start,
                                                        deal_sets=args.deal_sets or 0, tables=args.tables or 0))
        head = f"finals of {safe_name(reply.league)!r}: {reply.state}"
        if reply.scheduled:
            head += f", {reply.games} of {reply.scheduled} games recorded in {reply.folder}"
        print(head + (f": {safe_name(reply.error, 500)}" if reply.error else ""))
        if reply.results_at:
            print(f"results are published at {_when_minute(reply.results_at)}")
        table = finals_table(reply)
        if table is not None:
            make_console().print(table)
        return 0

    return _run(args, body)
