"""What a notice says, pure (arena/league/rules/notices.py): each kind's exact title, text and link; the build log's
last lines and nothing of another team; the webhook's signature against an independent HMAC; the refused webhook
addresses; the retries' backoff; and the [notices] keys of a league file."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from arena.league.rules.config import NoticeSettings, league_from_text
from arena.league.rules.errors import ConfigError
from arena.league.rules.notices import (
    NoticeDraft,
    address_problem,
    challenge_notices,
    finals_notice,
    log_tail,
    phase_notice,
    retry_delay,
    signature,
    signature_matches,
    url_problem,
    version_notice,
)

pytestmark = pytest.mark.fast

SPRT_H1 = {"state": "H1", "elo0": 0.0, "elo1": 40.0, "units": 120, "estimate": {"elo": 80.0,
                                                                                 "elo_interval": [30.0, 130.0]}}
SPRT_H0 = {**SPRT_H1, "state": "H0"}


def test_a_ready_version_is_told_to_its_team_with_its_bot_page() -> None:
    assert version_notice("spring", 7, "rand", 3, 42, "checking", "ready", None, None) == NoticeDraft(
        7, "ready", "rand-v3 is ready",
        "Version 42 (rand-v3) of league spring passed its build and check: it is its bot's active version and plays "
        "on the ladder.", "/leagues/spring/bots/rand")


def test_a_reinstated_version_is_ready_again() -> None:
    draft = version_notice("spring", 7, "rand", 3, 42, "suspended", "ready", None, None)
    assert draft is not None and draft.title == "rand-v3 is ready again"
    assert "reinstated by the operator" in draft.text


def test_a_failed_build_quotes_its_reason_and_the_logs_last_lines_only() -> None:
    log = "".join(f"line {n}\n" for n in range(1, 31)) + "\n\n"
    draft = version_notice("spring", 7, "rand", 3, 42, "building", "failed", "build failed: exit status 2", log)
    assert draft == NoticeDraft(
        7, "failed", "rand-v3 failed",
        "Version 42 (rand-v3) of league spring failed: build failed: exit status 2.\n\nThe build log's last lines:\n"
        + "\n".join(f"line {n}" for n in range(11, 31)), "/leagues/spring/versions/42/log")


def test_a_failed_check_without_a_log_says_its_reason_alone() -> None:
    draft = version_notice("spring", 7, "rand", 3, 42, "checking", "failed", "check failed: no match was played",
                           None)
    assert draft is not None
    assert draft.text == "Version 42 (rand-v3) of league spring failed: check failed: no match was played."


def test_a_suspension_says_why() -> None:
    draft = version_notice("spring", 7, "rand", 3, 42, "ready", "suspended", "failed to start 3 times", None)
    assert draft == NoticeDraft(7, "suspended", "rand-v3 is suspended",
                                "Version 42 (rand-v3) of league spring was suspended: failed to start 3 times. It "
                                "plays no more until the operator reinstates it.", "/leagues/spring/mine")


@pytest.mark.parametrize("state", ["uploaded", "building", "checking", "retired"])
def test_other_states_tell_nothing(state: str) -> None:
    assert version_notice("spring", 7, "rand", 3, 42, "uploaded", state, None, None) is None


def test_log_tail_keeps_the_last_characters_of_long_lines() -> None:
    assert log_tail("a\n" + "x" * 50, lines=2, chars=10) == "…" + "x" * 9
    assert log_tail(None) == log_tail("") == ""


def test_a_challenge_won_tells_the_asker_the_verdict_and_the_beaten_team_without_the_challenger() -> None:
    drafts = challenge_notices("spring", 5, 1, 2, "rand-v3", "greedy-v1", {"sprt": SPRT_H1, "verdict": "H1 after 120"},
                               None)
    assert [(d.team_id, d.kind, d.title) for d in drafts] == [
        (1, "challenge", "challenge 5: rand-v3 better"), (2, "beaten", "greedy-v1 was beaten in a challenge")]
    assert drafts[0].text.startswith("Challenge 5 of league spring, rand-v3 against greedy-v1: better (the SPRT")
    assert "rand" not in drafts[1].text  # the challenger is its asker's business
    assert drafts[1].text.startswith("Your version greedy-v1 of league spring was beaten in a challenge: the "
                                     "challenger was better (the SPRT accepted H1")


def test_a_challenge_not_won_or_against_its_own_team_tells_no_one_else() -> None:
    assert [d.team_id for d in challenge_notices("s", 5, 1, 2, "a-v1", "b-v1", {"sprt": SPRT_H0}, None)] == [1]
    assert [d.team_id for d in challenge_notices("s", 5, 1, 1, "a-v1", "a-v2", {"sprt": SPRT_H1}, None)] == [1]


def test_a_failed_challenge_tells_its_asker_why_and_an_operators_tells_nobody() -> None:
    (failed,) = challenge_notices("s", 5, 1, 2, "a-v1", "b-v1", None, "b-v1 cannot play: gone")
    assert (failed.team_id, failed.kind, failed.title) == (1, "challenge", "challenge 5 failed")
    assert failed.text == "Challenge 5 of league s (a-v1 against b-v1) failed: b-v1 cannot play: gone."
    assert challenge_notices("s", 5, None, 2, "a-v1", "b-v1", None, "b-v1 cannot play: gone") == []
    assert [d.team_id for d in challenge_notices("s", 5, None, 2, "a-v1", "b-v1", {"sprt": SPRT_H1}, None)] == [2]


def test_the_finals_are_public_and_a_failure_keeps_its_reason_private() -> None:
    ranking = [{"rank": str(n), "version": f"bot{n}-v1"} for n in range(1, 5)]
    assert finals_notice("spring", {"state": "done", "ranking": ranking}) == NoticeDraft(
        None, "finals", "the finals of spring are published",
        "The finals of league spring are over and their ranking is published: 1. bot1-v1, 2. bot2-v1, 3. bot3-v1 and 1 "
        "more.",
        "/leagues/spring/finals")
    failed = finals_notice("spring", {"state": "failed", "error": "secret-bot-v2 cannot play: its folder is gone"})
    assert failed.team_id is None and "secret" not in failed.text and "folder" not in failed.text


def test_finals_over_before_their_publication_name_no_place() -> None:
    ranking = [{"rank": "1", "version": "bot1-v1"}]
    withheld = finals_notice("spring", {"state": "done", "ranking": ranking}, published_at="2026-12-07 12:00 UTC")
    assert withheld == NoticeDraft(None, "finals", "the finals of spring are over",
                                   "The finals of league spring are over; their ranking is published at 2026-12-07 "
                                   "12:00 UTC.", "/leagues/spring/finals")


def test_a_phase_is_public_and_checked() -> None:
    assert phase_notice("spring", "frozen") == NoticeDraft(
        None, "phase", "spring: frozen", "League spring is frozen for its finals: the ladder and the challenges "
                                         "stop.", "/leagues/spring")
    assert phase_notice("spring", "open").text == "League spring is open: its ladder plays."
    assert phase_notice("spring", "upcoming").text == "League spring entered its phase 'upcoming'."
    with pytest.raises(ValueError, match="a phase is 1 to 32 letters"):
        phase_notice("spring", "<script>")


def test_links_quote_the_names() -> None:
    draft = version_notice("spring", 7, "a.b_c-1", 1, 9, "checking", "ready", None, None)
    assert draft is not None and draft.link == "/leagues/spring/bots/a.b_c-1"


def test_the_signature_is_the_hmac_of_the_timestamp_and_the_body() -> None:
    body = b'{"kind": "ready"}'
    expected = hmac.new(b"s3cret", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert signature("s3cret", "1700000000", body) == f"sha256={expected}"
    assert signature_matches("s3cret", "1700000000", body, f"sha256={expected}")
    assert not signature_matches("s3cret", "1700000001", body, f"sha256={expected}")  # a replay, restamped
    assert not signature_matches("other", "1700000000", body, f"sha256={expected}")
    assert not signature_matches("s3cret", "1700000000", body + b" ", f"sha256={expected}")


@pytest.mark.parametrize(("url", "allow", "problem"), [
    ("http://hooks.example.org/x", False, "a webhook's URL must start with https:// (got http scheme); plain http "
                                          "is allowed only with [notices] allow_private_webhooks"),
    ("ftp://hooks.example.org/x", True, "a webhook's URL must start with https:// (got ftp scheme)"),
    ("hooks.example.org/x", False, "a webhook's URL must start with https:// (got no scheme); plain http is "
                                   "allowed only with [notices] allow_private_webhooks"),
    ("https:///x", False, "a webhook's URL must name a host"),
    ("https://user:pw@hooks.example.org/", False, "a webhook's URL may not carry a user or password"),
    ("https://hooks.example.org:99999/", False, "cannot read the URL 'https://hooks.example.org:99999/': Port out of "
                                                "range 0-65535"),
    ("https://hooks.example.org/x", False, None),
    ("http://127.0.0.1:8080/x", True, None),
])
def test_webhook_urls(url: str, allow: bool, problem: str | None) -> None:
    assert url_problem(url, allow) == problem


@pytest.mark.parametrize(("address", "kind"), [
    ("127.0.0.1", "a loopback address"), ("10.0.0.1", "a private address"), ("192.168.1.5", "a private address"),
    ("169.254.169.254", "a link-local address"), ("::1", "a loopback address"), ("fe80::1%eth0", "a link-local address"),
    ("::ffff:10.0.0.1", "a private address"), ("0.0.0.0", "the unspecified address"),
    ("100.64.0.1", "not a public address"), ("224.0.0.1", "a multicast address"), ("fd00::1", "a private address"),
])
def test_non_public_addresses_are_refused_unless_allowed(address: str, kind: str) -> None:
    problem = address_problem("hooks.example.org", ["93.184.216.34", address], allow_private=False)
    assert problem is not None and problem.startswith(f"the webhook's host 'hooks.example.org' resolves to ")
    assert f", {kind}: a webhook must reach a public address" in problem
    assert address_problem("hooks.example.org", [address], allow_private=True) is None


def test_public_addresses_pass_and_no_address_is_refused() -> None:
    assert address_problem("hooks.example.org", ["93.184.216.34", "2606:2800:220:1::1"], False) is None
    assert address_problem("nowhere", [], True) == "the webhook's host 'nowhere' resolves to no address"


def test_retries_back_off_exponentially_to_an_hour() -> None:
    assert [retry_delay(n, 30.0) for n in (1, 2, 3, 4)] == [30.0, 60.0, 120.0, 240.0]
    assert retry_delay(20, 30.0) == 3600.0


def test_the_notices_table_of_a_league_file() -> None:
    head = 'name = "x"\nvariant = "draw"\n'
    assert league_from_text(head).notices == NoticeSettings()
    config = league_from_text(head + "[notices]\nallow_private_webhooks = true\nretry_s = 0.1\nattempts = 3\n")
    assert config.notices == NoticeSettings(allow_private_webhooks=True, retry_s=0.1, attempts=3, timeout_s=10.0)
    for bad, line in (("retry_s = 0", "key 'notices.retry_s' must be a number of seconds from 0.01 to 3600, got 0"),
                      ("allow_private_webhooks = 1", "key 'notices.allow_private_webhooks' must be true or false, "
                                                     "got 1"),
                      ("secret = 1", "unknown key")):
        with pytest.raises(Exception) as caught:
            league_from_text(head + f"[notices]\n{bad}\n")
        assert line in str(caught.value)
    assert issubclass(ConfigError, Exception)
