"""All Fives (docs/reference/rules.md#all-fives): the spinner layout, the count, points in play, hand end, next leader, match end.

Each test is an exact scenario from an explicit deal and fails if the rule it names were dropped.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from arena.rules import DRAW, NO_TILE, PASS, Deal, Ending, Kind, OptionError, Point, RulesError, new_game
from arena.rules.scoring import round_to_five
from arena.rules.spinner import NO_SPINNER, Spinner
from arena.rules.tiles import IS_DOUBLE, NAMES, PIPS
from support.notation import deal, do, show, t, tiles

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

A, B, C, D = Point.LINE_A, Point.LINE_B, Point.SIDE_C, Point.SIDE_D


def fives(players: int = 2, **options):
    return new_game("all_fives", players, options)


def count(state) -> int:
    return state.layout.count()


def open_points(state) -> list[str]:
    return [f"{NAMES[tile]} {point.label} {value}" for tile, point, value in state.layout.open_ends()]


# --- deal, options ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("players, hand, boneyard", [(2, 7, 14), (3, 5, 13), (4, 5, 8)])
def test_hand_sizes_and_boneyard(players: int, hand: int, boneyard: int) -> None:
    d = fives(players).deal(seed=5, round_index=0, leader=0)
    assert [len(h) for h in d.hands] == [hand] * players
    assert len(d.boneyard) == boneyard
    assert sorted([x for h in d.hands for x in h] + list(d.boneyard)) == list(range(28))


def test_options_target_150_and_hand_size() -> None:
    assert fives(2).options == {"target": 150, "hand_size": 7}
    assert fives(4).options == {"target": 150, "hand_size": 5}
    d = fives(3, hand_size=6, target=200).deal(seed=5, round_index=0, leader=0)
    assert [len(h) for h in d.hands] == [6, 6, 6] and len(d.boneyard) == 10
    with pytest.raises(OptionError, match="option 'target' of variant 'all_fives'"):
        fives(2, target=0)
    with pytest.raises(OptionError, match="option 'hand_size' of variant 'all_fives' must be between 1 and 14"):
        fives(2, hand_size=15)


def test_first_leader_is_drawn_by_lot() -> None:
    leaders = Counter(fives(3).first_deal(seed).leader for seed in range(1500))
    assert set(leaders) == {0, 1, 2}
    assert all(420 <= n <= 580 for n in leaders.values()), leaders


# --- the lead ---------------------------------------------------------------------------------------------------


def test_the_leader_leads_any_tile_and_may_not_draw() -> None:
    state = fives().new_round(deal("[0|1] [2|3] [5|6]", "[4|4]", boneyard="[1|1] [2|2]"))
    assert show(state.legal_actions()) == ["lead [0|1]", "lead [2|3]", "lead [5|6]"]


@pytest.mark.parametrize(
    "lead, points",
    [("[4|6]", 10), ("[2|3]", 5), ("[5|5]", 10), ("[0|5]", 5), ("[6|6]", 0), ("[1|2]", 0), ("[0|0]", 0)],
)
def test_the_lead_alone_counts_both_halves(lead: str, points: int) -> None:
    """docs/reference/rules.md#all-fives-lead-examples."""
    state = fives().new_round(deal(f"{lead} [1|1]", "[3|3]"))
    do(state, f"lead {lead}")
    assert count(state) == PIPS[t(lead)]
    assert state.play_points == [points, 0]
    assert state.scores() == (points, 0)


# --- the spinner --------------------------------------------------------------------------------------------------


def test_a_lead_spinner_counts_in_full_then_opens_c_and_d() -> None:
    """docs/reference/rules.md#all-fives-spinner-example: [5|5] 10; [5|0] on line A 10; [5|3] on line B count 3; [5|2] on
    side C 5."""
    state = fives().new_round(deal("[5|5] [3|5] [1|6] [4|6]", "[0|5] [2|5] [1|1] [6|6]", boneyard="[0|0]"))
    do(state, "lead [5|5]")
    assert state.layout.spinner == t("[5|5]")
    assert (count(state), state.play_points) == (10, [10, 0])
    assert show(state.legal_actions()) == [
        "[0|5] on [5|5] line A", "[2|5] on [5|5] line A", "[0|5] on [5|5] line B", "[2|5] on [5|5] line B",
    ]
    do(state, "[0|5] on [5|5] line A")
    # the spinner still has line B open: it counts both halves, 10 + 0
    assert (count(state), state.play_points) == (10, [10, 10])
    # one long side covered: the short sides are still shut
    assert open_points(state) == ["[0|5] low end 0", "[5|5] line B 5"]
    assert show(state.legal_actions()) == ["[3|5] on [5|5] line B"]
    do(state, "[3|5] on [5|5] line B")
    # both long sides covered: the spinner counts nothing, sides C and D are open but count nothing yet
    assert (count(state), state.play_points) == (3, [10, 10])
    assert open_points(state) == ["[0|5] low end 0", "[3|5] low end 3", "[5|5] side C 5", "[5|5] side D 5"]
    assert show(state.legal_actions()) == ["[2|5] on [5|5] side C", "[2|5] on [5|5] side D"]
    do(state, "[2|5] on [5|5] side C")
    # arm C started: 0 + 3 + 2 = 5; side D still open and still counts nothing
    assert (count(state), state.play_points) == (5, [10, 15])
    assert open_points(state) == ["[0|5] low end 0", "[3|5] low end 3", "[2|5] low end 2", "[5|5] side D 5"]
    view = state.layout.view()
    assert (view.spinner, view.side_c, view.side_d, view.count) == (t("[5|5]"), (t("[2|5]"),), (), 5)
    assert view.line == tiles("[0|5] [5|5] [3|5]")
    assert [str(c) for c in view.connections] == [
        "[5|5] line A – [0|5] high end", "[5|5] line B – [3|5] high end", "[5|5] side C – [2|5] high end",
    ]


def test_a_mid_line_spinner_opens_c_and_d_after_one_tile_on_b() -> None:
    state = fives().new_round(deal("[2|5] [3|5] [1|6]", "[5|5] [1|5] [0|0]", boneyard="[4|4]"))
    do(state, "lead [2|5]")
    assert (count(state), state.play_points) == (7, [0, 0])
    do(state, "[5|5] on [2|5] high end")
    assert state.layout.spinner == t("[5|5]")
    # 2 + the spinner in full (10) = 12
    assert (count(state), state.play_points) == (12, [0, 0])
    assert open_points(state) == ["[2|5] low end 2", "[5|5] line B 5"]
    assert show(state.legal_actions()) == ["[3|5] on [5|5] line B"]
    do(state, "[3|5] on [5|5] line B")
    # 2 + 3: the spinner no longer counts (it would be 15)
    assert (count(state), state.play_points) == (5, [5, 0])
    assert open_points(state) == ["[2|5] low end 2", "[3|5] low end 3", "[5|5] side C 5", "[5|5] side D 5"]
    assert show(state.legal_actions()) == ["[1|5] on [5|5] side C", "[1|5] on [5|5] side D"]
    do(state, "[1|5] on [5|5] side D")
    assert (count(state), state.play_points) == (6, [5, 0])


def test_a_mid_line_spinner_counts_both_halves() -> None:
    state = fives().new_round(deal("[0|5] [1|6]", "[5|5] [2|2]", boneyard="[4|4]"))
    do(state, "lead [0|5]")
    assert state.play_points == [5, 0]
    do(state, "[5|5] on [0|5] high end")
    assert (count(state), state.play_points) == (10, [5, 10])


def test_only_the_first_double_spins_later_count_both_halves() -> None:
    state = fives(2).new_round(deal("[2|3] [2|2] [3|4] [0|6]", "[3|3] [1|2] [0|0] [5|6]", boneyard="[6|6]"))
    do(state, "lead [2|3]")
    assert state.play_points == [5, 0]
    do(state, "[3|3] on [2|3] high end")
    assert (count(state), state.layout.spinner) == (2 + 6, t("[3|3]"))
    do(state, "[2|2] on [2|3] low end")
    # [2|2] at the end of its arm counts 4; the spinner still counts 6
    assert (count(state), state.play_points) == (10, [15, 0])
    assert state.layout.spinner == t("[3|3]")
    do(state, "[1|2] on [2|2] line B")
    # [2|2] is covered on both long sides but is no spinner: no side C or D on it
    assert open_points(state) == ["[1|2] low end 1", "[3|3] line B 3"]
    assert show(state.legal_actions()) == ["[3|4] on [3|3] line B"]
    do(state, "[3|4] on [3|3] line B")
    assert (count(state), state.play_points) == (1 + 4, [20, 0])
    assert open_points(state) == ["[1|2] low end 1", "[3|4] high end 4", "[3|3] side C 3", "[3|3] side D 3"]


def test_end_doubles_count_double_five_as_ten_blank_as_zero() -> None:
    state = fives(2).new_round(deal("[4|4] [4|5] [0|0] [6|6]", "[0|4] [5|5] [1|6] [2|6]", boneyard="[3|3]"))
    do(state, "lead [4|4]")
    assert (count(state), state.play_points) == (8, [0, 0])
    do(state, "[0|4] on [4|4] line A")
    assert (count(state), state.play_points) == (8, [0, 0])
    do(state, "[4|5] on [4|4] line B")
    assert (count(state), state.play_points) == (5, [5, 0])
    do(state, "[5|5] on [4|5] high end")
    assert (count(state), state.play_points) == (10, [5, 10])
    do(state, "[0|0] on [0|4] low end")
    assert (count(state), state.play_points) == (10, [15, 10])


def test_c_and_d_are_both_legal_and_either_alone_counts() -> None:
    """A lead double spinner with both long sides covered, then the two short arms started one after the other."""
    state = fives(2).new_round(deal("[6|6] [1|6] [3|6]", "[0|6] [2|6] [4|4]", boneyard="[5|5]"))
    do(state, "lead [6|6]", "[0|6] on [6|6] line B", "[1|6] on [6|6] line A")
    assert count(state) == 0 + 1
    assert show(state.legal_actions()) == ["[2|6] on [6|6] side C", "[2|6] on [6|6] side D"]
    do(state, "[2|6] on [6|6] side D")
    assert (count(state), state.play_points) == (3, [0, 0])
    do(state, "[3|6] on [6|6] side C")
    assert (count(state), state.play_points) == (6, [0, 0])
    assert state.layout.open_ends() == [(t("[1|6]"), Point.LOW_END, 1), (t("[0|6]"), Point.LOW_END, 0),
                                        (t("[3|6]"), Point.LOW_END, 3), (t("[2|6]"), Point.LOW_END, 2)]


def test_the_layout_refuses_a_side_that_is_not_open() -> None:
    layout = Spinner()
    layout.lead(t("[5|5]"))
    with pytest.raises(RulesError, match=r"\[5\|5\] side C is not an open end of the layout"):
        layout.place(t("[2|5]"), t("[5|5]"), C)
    with pytest.raises(RulesError, match=r"\[1\|2\] does not match 5"):
        layout.place(t("[1|2]"), t("[5|5]"), A)


def test_copy_is_independent() -> None:
    layout = Spinner()
    layout.lead(t("[5|5]"))
    layout.place(t("[0|5]"), t("[5|5]"), A)
    other = layout.copy()
    other.place(t("[3|5]"), t("[5|5]"), B)
    assert (layout.count(), len(layout.open_ends()), layout.long_open) == (10, 2, 1)
    assert (other.count(), len(other.open_ends()), other.long_open) == (3, 4, 0)
    assert layout.view().played == tiles("[5|5] [0|5]")


# --- drawing and passing --------------------------------------------------------------------------------------------


def test_draws_one_at_a_time_until_playable_never_by_choice() -> None:
    state = fives().new_round(
        deal("[6|6] [0|1]", "[2|3] [4|5]", boneyard="[1|1] [2|2] [3|6] [4|4] [0|0]")
    )
    do(state, "lead [6|6]")
    assert state.legal_actions() == [DRAW]
    do(state, "draw")
    assert (state.turn, state.hand(1), len(state.boneyard)) == (1, tiles("[1|1] [2|3] [4|5]"), 4)
    assert state.legal_actions() == [DRAW]
    do(state, "draw", "draw")
    assert (state.turn, state.hand(1), len(state.boneyard)) == (1, tiles("[1|1] [2|2] [2|3] [4|5] [3|6]"), 2)
    # a playable tile came: must place it, drawing again is not allowed
    assert show(state.legal_actions()) == ["[3|6] on [6|6] line A", "[3|6] on [6|6] line B"]
    do(state, "[3|6] on [6|6] line A")
    # seat 0 holds [0|1], nothing fits 6 or 3: it draws [4|4], then [0|0], then the boneyard is empty
    assert state.legal_actions() == [DRAW]
    do(state, "draw", "draw")
    assert len(state.boneyard) == 0
    assert state.legal_actions() == [PASS]


def test_pass_only_with_an_empty_boneyard_and_no_play() -> None:
    state = fives(2).new_round(deal("[6|6] [0|1]", "[2|3] [3|6]", boneyard=""))
    do(state, "lead [6|6]")
    assert PASS not in state.legal_actions() and DRAW not in state.legal_actions()
    do(state, "[3|6] on [6|6] line B")
    assert state.legal_actions() == [PASS]


# --- hand end -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seat1, seat2, bonus",
    [
        ("[3|4]", "[0|5]", 10),  # 12 -> 10
        ("[3|4]", "[0|6]", 15),  # 13 -> 15
        ("[0|2]", "[0|0]", 0),  # 2 -> 0
        ("[0|3]", "[0|0]", 5),  # 3 -> 5
        ("[0|2]", "[1|1]", 5),  # summed first: 2 + 2 = 4 -> 5 (rounding each hand would give 0)
        ("[0|3]", "[1|2]", 5),  # summed first: 3 + 3 = 6 -> 5 (rounding each hand would give 10)
    ],
)
def test_domino_scores_the_other_hands_rounded_to_five(seat1: str, seat2: str, bonus: int) -> None:
    """docs/reference/rules.md#all-fives-rounding-examples."""
    state = fives(3).new_round(deal("[0|1]", seat1, seat2))
    do(state, "lead [0|1]")
    result = state.result()
    assert (result.ending, result.winner, result.out_seat) == (Ending.DOMINO, 0, 0)
    assert result.play_points == (0, 0, 0)
    assert result.points == (bonus, 0, 0)


def test_domino_adds_the_bonus_to_points_in_play() -> None:
    state = fives(3).new_round(deal("[3|6] [0|0]", "[1|1] [2|2]", "[6|6]", boneyard=""))
    do(state, "lead [3|6]", "pass", "[6|6] on [3|6] high end")
    result = state.result()
    # 3 + 12 = 15 in play, then 0 + 6 = 6 -> 5 at the hand end
    assert (result.ending, result.winner) == (Ending.DOMINO, 2)
    assert result.play_points == (0, 0, 15)
    assert result.points == (0, 0, 20)


def test_everyone_passing_blocks_and_pays_the_sole_lowest() -> None:
    state = fives(3).new_round(deal("[6|6] [0|1] [0|2]", "[1|2] [3|4]", "[4|5]", boneyard=""))
    do(state, "lead [6|6]", "pass", "pass")
    assert not state.is_over()
    do(state, "pass")
    result = state.result()
    assert (result.ending, result.winner, result.pips) == (Ending.BLOCK, 0, (3, 10, 9))
    # 10 + 9 = 19 -> 20; subtracting the winner's own 3 would give 16 -> 15
    assert result.points == (20, 0, 0)


def test_a_pass_then_a_placement_is_no_block() -> None:
    state = fives(3).new_round(deal("[6|6] [4|6] [0|0]", "[1|2] [3|5]", "[0|1] [2|3]", boneyard=""))
    do(state, "lead [6|6]", "pass", "pass", "[4|6] on [6|6] line A", "pass", "pass")
    assert not state.is_over()
    assert state.legal_actions() == [PASS]
    do(state, "pass")
    assert state.result().ending is Ending.BLOCK


def test_a_tied_block_keeps_points_in_play_and_rotates_the_lead() -> None:
    game = fives(3)
    match = game.new_match(seed=3, first_deal=deal("[1|4]", "[5|5] [2|3]", "[0|6] [1|2]", leader=1))
    do(match, "lead [5|5]")
    assert match.round.play_points == [0, 10, 0]
    do(match, "pass", "pass", "pass")
    result = match.round.result()
    assert (result.ending, result.winner, result.pips) == (Ending.BLOCK, None, (5, 5, 9))
    assert result.points == (0, 10, 0)
    assert match.scores == (0, 10, 0)
    # not the winner (none), not the previous leader or the last placer (seat 1): the seat after the leader
    assert match.next_round().deal.leader == 2


def test_next_leader_is_the_domino_winner() -> None:
    game = fives(3)
    match = game.new_match(seed=3, first_deal=deal("[3|6] [0|0]", "[1|1] [2|2]", "[6|6]", leader=0))
    do(match, "lead [3|6]", "pass", "[6|6] on [3|6] high end")
    assert match.round.result().winner == 2
    assert match.scores == (0, 0, 20)
    assert match.next_round().deal.leader == 2


def test_next_leader_is_the_sole_lowest_after_a_block() -> None:
    game = fives(3)
    match = game.new_match(seed=3, first_deal=deal("[6|6] [1|5]", "[1|2] [3|4]", "[0|1]", leader=0))
    do(match, "lead [6|6]", "pass", "pass", "pass")
    assert match.round.result().winner == 2
    assert match.scores == (0, 0, 15)  # 6 + 10 = 16 -> 15
    assert match.next_round().deal.leader == 2


# --- match end ----------------------------------------------------------------------------------------------------


def _rest_of_set(*excluded: str) -> tuple[int, ...]:
    out = {t(x) for x in excluded}
    return tuple(x for x in range(28) if x not in out)


def _hand_one() -> Deal:
    """Seat 0 leads its only tile [1|2]; seat 1 holds 147 pips: seat 0 scores 145, short of 150."""
    seat1 = _rest_of_set("[1|2]", "[6|6]", "[2|4]")
    assert sum(PIPS[x] for x in seat1) == 147
    return Deal((tiles("[1|2]"), seat1), tiles("[6|6] [2|4]"), leader=0)


def _hand_two(dropped: str) -> Deal:
    """Seat 0 holds [5|5] and everything else but [0|5] (seat 1's only tile) and ``dropped``."""
    seat0 = _rest_of_set("[0|5]", dropped)
    return Deal((seat0, tiles("[0|5]")), tiles(dropped), leader=0)


def _two_hand_match(monkeypatch: pytest.MonkeyPatch, dropped: str):
    game = fives(2)
    match = game.new_match(seed=1, first_deal=_hand_one())

    def next_deal(seed, round_index, previous, result):
        d = _hand_two(dropped)
        return Deal(d.hands, d.boneyard, game.next_leader(previous, result))

    monkeypatch.setattr(game, "next_deal", next_deal)
    do(match, "lead [1|2]")
    assert match.scores == (145, 0)
    assert not match.is_over()
    assert match.next_round().deal.leader == 0
    do(match, "lead [5|5]")
    # 155 in play: the hand goes on, the match ends only after the hand
    assert match.round.scores() == (155, 0)
    assert not match.round.is_over() and not match.is_over()
    do(match, "[0|5] on [5|5] line A")
    return match


def test_the_hand_reaching_150_ends_the_match_highest_wins(monkeypatch) -> None:
    # seat 0 keeps 150 pips: seat 1 scores 10 in play and 150 for the domino, 160 > 155
    match = _two_hand_match(monkeypatch, dropped="[0|3]")
    assert match.round.result().points == (10, 160)
    assert match.is_over()
    result = match.result()
    assert (result.scores, result.winner, result.drawn, result.rounds) == ((155, 160), 1, False, 2)
    with pytest.raises(RulesError, match="the match is over"):
        match.next_round()


def test_a_tie_for_highest_is_a_drawn_match(monkeypatch) -> None:
    # seat 0 keeps 145 pips: seat 1 scores 10 + 145 = 155, equal to seat 0's 155
    match = _two_hand_match(monkeypatch, dropped="[2|6]")
    result = match.result()
    assert (result.scores, result.winner, result.drawn) == ((155, 155), None, True)


def test_match_result_hook() -> None:
    game = fives(3)
    assert game.match_result((149, 100, 0), 4) is None
    assert game.match_result((150, 100, 0), 4).winner == 0
    assert game.match_result((150, 170, 0), 4).winner == 1
    assert game.match_result((170, 170, 0), 4).drawn


# --- observation and invariants -------------------------------------------------------------------------------------


def _policy_game(players: int, seed: int):
    """A seeded round played by a seeded random policy, yielding the state before every action."""
    game = fives(players)
    state = game.new_round(game.deal(seed, 0, seed % players))
    rng = random.Random(seed)
    while not state.is_over():
        yield state
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
    yield state


@pytest.mark.parametrize("players", [2, 3, 4])
def test_an_observation_never_holds_another_seats_tile(players: int) -> None:
    draws_seen = 0
    for seed in range(12):
        for state in _policy_game(players, seed):
            for seat in range(players):
                hidden = {x for s in range(players) if s != seat for x in state.hand(s)} | set(state.boneyard)
                obs = state.observation(seat)
                assert obs.hand == state.hand(seat)
                assert not hidden & set(obs.hand)
                assert not hidden & set(obs.layout.played)
                assert not hidden & {a.tile for a in obs.legal_actions}
                for s, action in obs.history:
                    assert action.tile not in hidden
                    if action.kind == Kind.DRAW and s != seat:
                        assert action == DRAW and action.tile == NO_TILE
                        draws_seen += 1
                assert obs.boneyard_count == len(state.boneyard)
    assert draws_seen > 0


def _reference_count(view) -> int:
    """The count recomputed from the open ends: each end's outer value, a double's both halves, the spinner once in
    full while a long side of it is open, its short sides nothing until started."""
    total = 0
    spinner_counted = False
    for tile, point, value in view.open_ends:
        if tile == view.spinner:
            if point in (C, D):
                continue
            if not spinner_counted:
                total += 2 * value
                spinner_counted = True
        else:
            total += 2 * value if IS_DOUBLE[tile] else value
    return total


def _long_sides_touched(view) -> int:
    s = view.spinner
    return sum(
        1 for c in view.connections
        if (c.target == s and c.target_point in (A, B)) or (c.tile == s and c.tile_point in (A, B))
    )


@pytest.mark.parametrize("players", [2, 3, 4])
def test_count_spinner_and_points_hold_over_random_hands(players: int) -> None:
    opened = scored = 0
    for seed in range(150):
        before = None
        for state in _policy_game(players, seed):
            view = state.layout.view()
            assert view.count == _reference_count(view)
            doubles = [x for x in view.played if IS_DOUBLE[x]]
            assert view.spinner == (doubles[0] if doubles else NO_SPINNER)
            sides = {p for tile, p, _ in view.open_ends if p in (C, D)} | {
                c.target_point for c in view.connections if c.target_point in (C, D)
            }
            if view.spinner != NO_SPINNER and _long_sides_touched(view) == 2:
                assert sides == {C, D}
                opened += 1
            else:
                assert not sides
            if before is not None:
                seat, action = state.history[-1]
                gained = [n - b for n, b in zip(state.play_points, before)]
                if action.kind == Kind.PLACE and view.count and view.count % 5 == 0:
                    scored += 1
                    assert gained == [view.count if s == seat else 0 for s in range(players)]
                else:
                    assert gained == [0] * players
            before = list(state.play_points)
        result = state.result()
        if result.winner is not None:
            others = sum(result.pips) - result.pips[result.winner]
            bonus = round_to_five(others)
            expected = [p + (bonus if s == result.winner else 0) for s, p in enumerate(state.play_points)]
            assert list(result.points) == expected
        else:
            assert result.points == tuple(state.play_points)
    assert opened > 0 and scored > 0
