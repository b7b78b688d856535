"""The notices in the league's database, on SQLite and a real PostgreSQL: each change told in its own transaction (a
change whose notice cannot be written does not happen), a team's notices apart from another's and from the public
ones, the deliveries queued for the webhooks that should get them (the team's cap; a cleared webhook's dropped), a
delivery's tries, the freeze's, the finals' and a phase's public notices, a challenge's, and the feed token."""

from __future__ import annotations

from datetime import timedelta

import pytest

from arena.league.clock import utc_now
from arena.league.rules.errors import StateError
from arena.league.rules.lifecycle import BUILDING, CHECKING, FAILED, READY
from arena.league.rules.model import Runnable
from arena.league.rules.notices import MAX_QUEUED
from arena.league.storage import versions as versions_module
from arena.league.storage.db import Database

from support.league import a_bot, database, database_url, league  # noqa: F401 - the fixtures, on both databases

SPRT_H1 = {"state": "H1", "elo0": 0.0, "elo1": 40.0, "units": 60, "estimate": {"elo": 90.0,
                                                                                "elo_interval": [20.0, 160.0]}}


def built(database: Database, bot_id: int, n: int) -> int:
    """A version of the bot taken to ready, as the pipeline takes it."""
    version, _ = database.add_version(bot_id, f"{n:064x}")
    database.transition(version.id, BUILDING)
    database.transition(version.id, CHECKING, build_log="ok\n", runnable=Runnable(("bot",), f"{version.id}", "grpc"))
    database.transition(version.id, READY)
    return version.id


def kinds(notices) -> list[tuple[str, str]]:
    return [(notice.kind, notice.title) for notice in notices]


def test_a_teams_versions_are_told_to_it_alone(database: Database, league) -> None:
    ann = a_bot(database, league.id, "ann", "rand")
    bob = a_bot(database, league.id, "bob", "greedy")
    built(database, ann.id, 1)
    broken, _ = database.add_version(bob.id, "b" * 64)
    database.transition(broken.id, BUILDING)
    log = "".join(f"step {n}\n" for n in range(40))
    database.transition(broken.id, FAILED, "build failed: exit status 1", build_log=log)
    ann_id, bob_id = ann.author_id, bob.author_id
    assert kinds(database.notices_of(league.id, ann_id)) == [("ready", "rand-v1 is ready")]
    (failed,) = database.notices_of(league.id, bob_id)
    assert (failed.kind, failed.author_id, failed.link) == ("failed", bob_id, f"/leagues/ladder/versions/{broken.id}/log")
    assert failed.text.endswith("\n".join(f"step {n}" for n in range(20, 40)))
    assert "step 19" not in failed.text
    assert database.notices_of(league.id) == []  # nothing public


def test_a_change_whose_notice_cannot_be_written_does_not_happen(database: Database, league,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    bot = a_bot(database, league.id, "ann", "rand")
    version, _ = database.add_version(bot.id, "a" * 64)
    database.transition(version.id, BUILDING)

    def broken(*args, **kwargs):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(versions_module, "record_notice", broken)
    with pytest.raises(RuntimeError, match="the disk is full"):
        database.transition(version.id, FAILED, "build failed: exit status 1")
    assert database.version(version.id).state == BUILDING  # rolled back with its notice
    monkeypatch.undo()
    database.transition(version.id, FAILED, "build failed: exit status 1")
    assert kinds(database.notices_of(league.id, bot.author_id)) == [("failed", "rand-v1 failed")]


def test_a_refused_change_tells_nothing(database: Database, league) -> None:
    bot = a_bot(database, league.id, "ann", "rand")
    version, _ = database.add_version(bot.id, "a" * 64)
    with pytest.raises(StateError):
        database.transition(version.id, READY)  # uploaded -> ready is not a step of the lifecycle
    assert database.notices_of(league.id, bot.author_id) == []


def test_deliveries_are_queued_for_the_webhooks_that_should_get_them(database: Database, league) -> None:
    ann = a_bot(database, league.id, "ann", "rand")
    bob = a_bot(database, league.id, "bob", "greedy")
    database.set_webhook(league.id, ann.author_id, "https://ann.example.org/hook", "s" * 43)
    built(database, bob.id, 2)  # bob's: not for ann's webhook
    assert database.deliveries_of(ann.author_id) == []
    built(database, ann.id, 1)
    phase = database.phase_changed(league.id, "open")
    assert (phase.author_id, phase.kind, phase.title) == (None, "phase", "ladder: open")
    queued = database.deliveries_of(ann.author_id)
    assert [(d.state, d.attempts) for d in queued] == [("pending", 0), ("pending", 0)]
    assert [database.notice(d.notice_id).kind for d in queued] == ["ready", "phase"]
    assert database.deliveries_of(bob.author_id) == []  # bob has no webhook
    assert [d.id for d in database.due_deliveries(league.id, utc_now())] == [d.id for d in queued]


def test_a_teams_queue_is_capped_and_a_cleared_webhook_drops_its_deliveries(database: Database, league) -> None:
    ann = a_bot(database, league.id, "ann", "rand")
    database.set_webhook(league.id, ann.author_id, "https://ann.example.org/hook", "s" * 43)
    for _ in range(MAX_QUEUED + 1):
        database.phase_changed(league.id, "open")
    states = [d.state for d in database.deliveries_of(ann.author_id)]
    assert states == ["pending"] * MAX_QUEUED + ["dropped"]
    assert database.clear_webhook(league.id, ann.author_id) is True
    assert {d.state for d in database.deliveries_of(ann.author_id)} == {"dropped"}
    assert database.due_deliveries(league.id, utc_now()) == []
    assert database.clear_webhook(league.id, ann.author_id) is False
    assert len(database.notices_of(league.id, ann.author_id, limit=1000)) == MAX_QUEUED + 1  # the feed keeps all


def test_a_deliverys_tries(database: Database, league) -> None:
    ann = a_bot(database, league.id, "ann", "rand")
    database.set_webhook(league.id, ann.author_id, "https://ann.example.org/hook", "s" * 43)
    database.phase_changed(league.id, "open")
    (delivery,) = database.deliveries_of(ann.author_id)
    later = utc_now() + timedelta(minutes=5)
    retried = database.delivery_tried(delivery.id, "answered 503 Service Unavailable", later)
    assert (retried.state, retried.attempts, retried.error) == ("pending", 1, "answered 503 Service Unavailable")
    assert database.due_deliveries(league.id, utc_now()) == []  # not due before its retry
    assert abs((database.next_delivery_at(league.id) - later).total_seconds()) < 1
    assert [d.id for d in database.due_deliveries(league.id, later + timedelta(seconds=1))] == [delivery.id]
    done = database.delivery_tried(delivery.id, None, None)
    assert (done.state, done.attempts, done.error) == ("delivered", 2, None)
    assert database.delivery_tried(delivery.id, "late", None).state == "delivered"  # an ended one stays
    assert database.next_delivery_at(league.id) is None
    database.phase_changed(league.id, "open")
    given_up = database.delivery_tried(database.deliveries_of(ann.author_id)[-1].id, "timed out", None)
    assert (given_up.state, given_up.error) == ("failed", "timed out")


def test_the_freeze_and_the_finals_are_told_to_everyone(database: Database, league) -> None:
    ann = a_bot(database, league.id, "ann", "rand")
    version = built(database, ann.id, 1)
    database.freeze(league.id, [version])
    database.set_finals(league.id, {"state": "playing", "deal_sets": 1})
    database.set_finals(league.id, {"state": "playing", "deal_sets": 1})  # no change: nothing told
    database.set_finals(league.id, {"state": "done", "ranking": [{"rank": "1", "version": "rand-v1"}]})
    public = database.notices_of(league.id)
    assert kinds(reversed(public)) == [("phase", "ladder: frozen"), ("phase", "ladder: finals"),
                                       ("finals", "the finals of ladder are published"), ("phase", "ladder: ended")]
    assert public[1].text == "The finals of league ladder are over and their ranking is published: 1. rand-v1."
    with pytest.raises(StateError):
        database.freeze(league.id, [version])  # refused: told nothing more
    assert len(database.notices_of(league.id)) == 4


def test_finals_withheld_until_their_publication_are_told_twice_once_each(database: Database, league) -> None:
    ann = a_bot(database, league.id, "ann", "rand")
    version = built(database, ann.id, 1)
    database.freeze(league.id, [version])
    assert not database.publish_finals(league.id)  # not done yet: nothing to publish
    database.set_finals(league.id, {"state": "playing", "deal_sets": 1})
    database.set_finals(league.id, {"state": "done", "ranking": [{"rank": "1", "version": "rand-v1"}]},
                        "2026-12-07 12:00 UTC")
    over = [n for n in database.notices_of(league.id) if n.kind == "finals"]
    assert [(n.title, n.text) for n in over] == [("the finals of ladder are over", "The finals of league ladder are "
                                                  "over; their ranking is published at 2026-12-07 12:00 UTC.")]
    assert database.publish_finals(league.id) and not database.publish_finals(league.id)  # once, also after a restart
    published = [n for n in database.notices_of(league.id) if n.kind == "finals"]
    assert [n.title for n in published] == ["the finals of ladder are published", "the finals of ladder are over"]
    assert published[0].text == "The finals of league ladder are over and their ranking is published: 1. rand-v1."


def test_the_opening_is_told_once(database: Database, league) -> None:
    assert database.phase_changed_once(league.id, "open")
    assert not database.phase_changed_once(league.id, "open")  # a restarted server's timeline looks again
    assert kinds(database.notices_of(league.id)) == [("phase", "ladder: open")]


def test_a_challenges_end_is_told_to_its_asker_and_to_the_beaten(database: Database, league) -> None:
    ann = a_bot(database, league.id, "ann", "rand")
    bob = a_bot(database, league.id, "bob", "greedy")
    mine, theirs = built(database, ann.id, 1), built(database, bob.id, 2)
    challenge = database.add_challenge(league.id, ann.author_id, mine, theirs, 100)
    database.start_challenge(challenge.id)
    database.end_challenge(challenge.id, {"sprt": SPRT_H1, "verdict": "H1 accepted"})
    database.end_challenge(challenge.id, None, "again")  # ended once: told once
    assert kinds(database.notices_of(league.id, ann.author_id))[0] == ("challenge",
                                                                       f"challenge {challenge.id}: rand-v1 better")
    beaten = database.notices_of(league.id, bob.author_id)[0]
    assert (beaten.kind, beaten.title) == ("beaten", "greedy-v1 was beaten in a challenge")
    assert "rand" not in beaten.text
    assert len(database.notices_of(league.id, ann.author_id)) == 2  # its ready version, its challenge


def test_the_feed_token_is_one_per_team_and_replaced(database: Database, league) -> None:
    ann = a_bot(database, league.id, "ann", "rand")
    database.feed_token(ann.author_id, "first-" + "x" * 30)
    assert database.feed_token(ann.author_id) == "first-" + "x" * 30
    assert database.feed_holder("first-" + "x" * 30) == ann.author_id
    database.feed_token(ann.author_id, "second-" + "y" * 30)
    assert database.feed_holder("first-" + "x" * 30) is None
    assert database.feed_holder("second-" + "y" * 30) == ann.author_id
    assert database.feed_holder("") is None
