"""The reference scale (arena/tournament/reference.py): the references rated against random, a candidate placed on
the scale with the references held fixed, the tournament files both runs play, and the standings' deal-set results
they are computed from. In-process: closed forms and explicit results."""

from __future__ import annotations

import json
import math
import tomllib

import pytest
from support.paths import ROOT

from arena.players.builtin import BUILTIN_PLAYERS, MixedPlayer, builtin_player
from arena.rules import new_game
from arena.simulate import play_local_match
from arena.tournament.likelihood import FitError, Tally, fit, place
from arena.tournament.ratings import elo_of_logit, logit_of_elo
from arena.tournament.reference import (
    ANCHOR,
    REFERENCE_KINDS,
    Scale,
    ScaleError,
    ScalePoint,
    extension_file,
    gauntlet_file,
    placement,
    playable,
    published_scale,
    published_scales,
    read_scale,
    round_robin_file,
    scale_markdown,
    scale_of,
    unavailable,
    within,
)
from arena.tournament.spec import spec_from_dict
from arena.tournament.standings import GameOutcome, Standings

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

WIDE_PRIOR = 1e9
"""A prior so wide that the placement is the plain maximum likelihood."""


def results(wins: int, losses: int, candidate: str, opponent: str) -> list:
    return [((candidate,), (opponent,))] * wins + [((opponent,), (candidate,))] * losses


def tally_of(found: list) -> Tally:
    tally = Tally()
    for places in found:
        tally.add(places)
    return tally


def test_a_placement_against_one_fixed_opponent_is_its_rating_plus_the_log_odds_of_the_score() -> None:
    evidence = tally_of(results(30, 10, "bot", "greedy")).evidence()
    theta, error = place(evidence, {"greedy": 1.5}, "bot", prior_sd_elo=WIDE_PRIOR)
    assert theta == pytest.approx(1.5 + math.log(30 / 10), abs=1e-7)
    assert error == pytest.approx(math.sqrt(1 / (40 * 0.75 * 0.25)), rel=1e-6)  # 1 / √(n p (1-p))


def test_a_placement_against_two_opponents_solves_the_likelihood_equation() -> None:
    found = results(8, 2, "bot", "a") + results(3, 7, "bot", "b")
    theta, _ = place(tally_of(found).evidence(), {"a": 0.0, "b": 2.0}, "bot", prior_sd_elo=WIDE_PRIOR)
    expected_wins = 10 / (1 + math.exp(-theta)) + 10 / (1 + math.exp(-(theta - 2.0)))
    assert expected_wins == pytest.approx(11, abs=1e-7)


def test_a_placement_refuses_an_opponent_off_the_scale_and_a_missing_candidate() -> None:
    evidence = tally_of(results(3, 1, "bot", "stranger")).evidence()
    with pytest.raises(FitError, match="'stranger' is not on the scale"):
        place(evidence, {"greedy": 0.0}, "bot")
    with pytest.raises(FitError, match="no entrant 'nobody'"):
        place(evidence, {"stranger": 0.0}, "nobody")


def test_the_scale_is_anchored_at_random_with_the_intervals_of_the_differences() -> None:
    found = results(20, 20, "mixed", "random") + results(15, 5, "greedy", "mixed") + results(18, 2, "greedy", "random")
    fitted = fit(tally_of(found).evidence())
    scale = scale_of(fitted, "draw", 2, {}, 40, "seed", "arena reference draw")
    assert [p.name for p in scale.points][0] in ("random", "mixed")
    assert scale.point(ANCHOR) == ScalePoint(ANCHOR, 0.0, 0.0, 0.0, 60)
    for name, deal_sets in (("mixed", 60), ("greedy", 40)):
        elo, low, high = fitted.difference(name, ANCHOR)
        assert scale.point(name) == ScalePoint(name, round(elo, 1), round(low, 1), round(high, 1), deal_sets)
    assert scale.point("greedy").elo > 150  # 33 of 40 deal sets won against the other two


def test_a_candidate_that_plays_as_a_reference_does_is_placed_where_that_reference_is() -> None:
    """The results of greedy in a round robin, replayed under another name against the other references with
    their fitted ratings held: the placement is greedy's own rating, to the fit's precision."""
    found = results(12, 28, "mixed", "random") + results(30, 10, "greedy", "mixed") + results(35, 5, "greedy", "random")
    fitted = fit(tally_of(found).evidence(), prior_sd_elo=WIDE_PRIOR)
    scale = scale_of(fitted, "draw", 2, {}, 40, "seed", "arena reference draw")
    as_candidate = [tuple(tuple("bot" if name == "greedy" else name for name in group) for group in places)
                    for places in found if any("greedy" in group for group in places)]
    greedy = scale.point("greedy")
    placed = placement(tally_of(as_candidate), scale, "bot")
    # The scale's ratings are rounded to 0.1 Elo and the placement keeps the default prior: within 2 Elo.
    assert placed.elo == pytest.approx(greedy.elo, abs=2.0)
    assert placed.deal_sets == 80
    assert within(placed, greedy)
    assert not within(placed, scale.point("random"))


def test_the_standings_give_each_finished_deal_set_one_result_ranked_by_exact_mean_points() -> None:
    def outcome(index: int, deal: str, seats: tuple[str, ...], scores: tuple[int, ...]) -> GameOutcome:
        ranking = tuple(sorted(range(len(scores)), key=lambda side: -scores[side]))
        best = ranking[0] if scores[ranking[0]] > scores[ranking[1]] else None
        return GameOutcome(index=index, deal_key=deal, seats=seats, side_of=tuple(range(len(seats))),
                           scores=scores, ranking=ranking, winner=best)

    standings = Standings(group_size=2)
    standings.add(outcome(0, "d0", ("a", "b"), (100, 20)))
    standings.add(outcome(1, "d0", ("b", "a"), (100, 20)))  # one game each: a tied deal set
    standings.add(outcome(2, "d1", ("a", "b"), (100, 20)))
    standings.add(outcome(3, "d1", ("b", "a"), (20, 100)))  # a won both
    standings.add(outcome(4, "d2", ("a", "b"), (100, 20)))  # unfinished: no result
    assert standings.deal_set_results.results == 2
    evidence = standings.deal_set_results.evidence()
    assert list(evidence.deal_sets) == [2, 2]
    assert standings.fit().rating("a")[0] > 0 > standings.fit().rating("b")[0]


def test_the_round_robin_file_is_a_duplicate_round_robin_of_the_built_in_references() -> None:
    text = round_robin_file("block", 3, {}, 7, "runs/ref", seed="s")
    spec = spec_from_dict(tomllib.loads(text))
    assert (spec.variant, spec.players, spec.games, spec.duplicate, spec.format) == ("block", 3, 7, True,
                                                                                       "round_robin")
    assert [b.name for b in spec.bots] == list(REFERENCE_KINDS)
    assert all(b.builtin == b.name for b in spec.bots)
    assert spec.seed == "s"


def test_the_gauntlet_file_puts_the_candidate_against_every_reference_and_refuses_a_reference_name() -> None:
    scale = Scale("draw", 2, {}, (ScalePoint("random", 0, 0, 0, 9), ScalePoint("greedy", 900, 700, 1100, 9)),
                  9, "seed", "arena reference draw")
    text = gauntlet_file(scale, "my bot", ["python", "bot's file.py", "--flag=\"x\""], 5, "runs/g")
    spec = spec_from_dict(tomllib.loads(text))
    assert spec.format == "gauntlet" and spec.candidates == ("my bot",) and spec.games == 5
    assert spec.bots[-1].command == ("python", "bot's file.py", "--flag=\"x\"")
    assert spec.sandbox
    with pytest.raises(ScaleError, match="the candidate's name 'greedy' is a reference player's"):
        gauntlet_file(scale, "greedy", ["python", "bot.py"], 5, "runs/g")


def test_a_scale_file_round_trips_and_garbage_is_refused_in_a_line() -> None:
    scale = Scale("draw", 2, {"target": 50}, (ScalePoint("random", 0, 0, 0, 9),), 9, "seed", "cmd")
    assert read_scale(json.dumps(scale.to_json())) == scale
    with pytest.raises(ScaleError, match="not a reference scale"):
        read_scale("{not json")
    with pytest.raises(ScaleError, match="not a reference scale"):
        read_scale(json.dumps({"variant": "draw"}))


def test_an_unpublished_scale_names_the_published_ones_and_the_command_that_makes_it() -> None:
    with pytest.raises(ScaleError, match=r"no reference scale for draw with 4 players .*arena reference draw"):
        published_scale("draw", 4)


def test_every_published_scale_is_anchored_at_random_and_printed_in_the_docs() -> None:
    page = (ROOT / "docs/explanation/reference-scale.md").read_text()
    scales = published_scales()
    assert {(scale.variant, scale.players) for scale in scales} >= {("draw", 2)}
    for scale in scales:
        assert scale.point(ANCHOR) == ScalePoint(ANCHOR, 0.0, 0.0, 0.0, scale.point(ANCHOR).deal_sets)
        assert {point.name for point in scale.points} <= set(BUILTIN_PLAYERS)
        assert " reference " in scale.command and f"--seed {scale.seed}" in scale.command
        assert scale_markdown(scale) in page, f"the docs do not show the {scale.variant} scale as published"


def test_the_reference_players_are_built_in_and_mixed_sits_between_random_and_greedy() -> None:
    assert set(REFERENCE_KINDS) <= set(BUILTIN_PLAYERS)
    game = new_game("draw", 2)
    wins = 0
    for index in range(40):
        mixed, other = MixedPlayer(seed=index), builtin_player("random", seed=index)
        seats = [mixed, other] if index % 2 == 0 else [other, mixed]
        result = play_local_match(game, seats, index).result()
        wins += result.winner == index % 2
    assert wins == 33  # mixed beats random most of the time, not always (seeded: the same count every run)


def test_elo_and_logits_convert_both_ways_for_the_scale() -> None:
    assert elo_of_logit(logit_of_elo(312.5)) == pytest.approx(312.5)


def test_a_reference_player_this_installation_cannot_make_is_left_out_of_a_placement() -> None:
    scale = Scale("draw", 2, {}, (ScalePoint("random", 0, 0, 0, 9), ScalePoint("oracle", 900, 700, 1100, 9)),
                  9, "seed", "arena reference draw")
    kept, left_out = playable(scale)
    assert [point.name for point in kept.points] == ["random"] and left_out == ["oracle"]
    assert unavailable(["greedy", "oracle"]) == {
        "oracle": f"unknown built-in player 'oracle'; valid players: {', '.join(BUILTIN_PLAYERS)}"}


def test_the_extension_file_pairs_the_added_players_with_the_rated_ones_and_one_another() -> None:
    text = extension_file("draw", 2, {}, ("random", "greedy"), ("search10", "ismcts16"), 3, "runs/x", seed="s")
    spec = spec_from_dict(tomllib.loads(text))
    assert spec.format == "gauntlet" and spec.candidates == ("search10", "ismcts16")
    assert [b.name for b in spec.bots] == ["random", "greedy", "search10", "ismcts16"]
    with pytest.raises(ScaleError, match="'greedy' is rated already"):
        extension_file("draw", 2, {}, ("random", "greedy"), ("greedy",), 3, "runs/x")
