"""The engine's support for search bots: a round rebuilt from one seat's view (arena/rules/restore.py), what a draw
or a pass shows a seat lacks, All Fives' count after a placement without placing, and the engine's Observation
rebuilt from a request's message."""

from __future__ import annotations

import random

import pytest

from arena.protocol.convert import observation_from_pb, observation_pb
from arena.rules import DRAW, PASS, Deal, Kind, RulesError, new_game
from arena.rules.all_fives import points_in_play
from arena.rules.restore import PublicRound
from arena.rules.tiles import HIGH, LOW
from support.notation import deal, do, t, tiles
from support.random_matches import CONFIGS, IDS, random_states

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


@pytest.mark.parametrize("variant, players, options", CONFIGS, ids=IDS)
def test_a_view_plus_the_hidden_tiles_is_the_real_round(variant: str, players: int, options: dict) -> None:
    rng = random.Random(1)
    checked = 0
    for game, state in random_states(variant, players, options, seed=3):
        if rng.random() > 0.3:
            continue
        for seat in {state.turn, rng.randrange(players)}:
            public = PublicRound(game, state.observation(seat))
            drawn = state.drawn if public.pending_draw() else None
            rebuilt = public.determinize(state.hands, list(reversed(state.boneyard)), drawn)
            assert rebuilt.turn == state.turn and rebuilt.scores() == state.scores()
            assert rebuilt.legal_actions() == state.legal_actions()
            assert rebuilt.observation(seat) == state.observation(seat)
            # the same future under the same actions
            real = state.clone()
            future = random.Random(checked)
            while not real.is_over():
                assert rebuilt.legal_actions() == real.legal_actions()
                action = future.choice(real.legal_actions())
                real.apply(action)
                rebuilt.apply(action)
            assert rebuilt.result() == real.result()
            checked += 1
    assert checked > 10


def test_the_public_round_refuses_a_guess_against_the_unseen() -> None:
    game = new_game("draw", 2)
    state = game.new_round(deal("[6|6] [1|2] [0|0]", "[3|6] [0|1] [2|2]", boneyard="[4|4] [1|1] [5|5] [3|3]"))
    do(state, "lead [6|6]", "draw")  # seat 1 draws [4|4], unseen by seat 0
    public = PublicRound(game, state.observation(0))
    assert public.counts == (2, 4) and public.boneyard_count == 3 and public.dealt == (3, 3)
    assert public.unseen == game.all_tiles & ~(1 << t("[6|6]") | 1 << t("[1|2]") | 1 << t("[0|0]"))
    hands = [0, sum(1 << t(x) for x in ("[3|6]", "[0|1]", "[2|2]", "[4|4]"))]
    rebuilt = public.determinize(hands, [t("[1|1]"), t("[5|5]"), t("[3|3]")])
    assert rebuilt.hand(1) == state.hand(1) and rebuilt.boneyard == state.boneyard
    with pytest.raises(RulesError, match="elsewhere"):
        public.determinize([0, hands[1] ^ 1 << t("[4|4]") | 1 << t("[1|2]")], [t("[1|1]"), t("[5|5]"), t("[3|3]")])
    with pytest.raises(RulesError, match="holds 4 tiles"):
        public.determinize([0, hands[1] ^ 1 << t("[4|4]")], [t("[1|1]"), t("[5|5]"), t("[3|3]")])
    with pytest.raises(RulesError, match="boneyard holds 3 tiles"):
        public.determinize(hands, [t("[1|1]")])


@pytest.mark.parametrize("variant, players, options", CONFIGS, ids=IDS)
def test_a_draw_or_pass_shows_only_what_the_mover_lacked(variant: str, players: int, options: dict) -> None:
    shown = 0
    for game, state in random_states(variant, players, options, seed=5):
        legal = state.legal_actions()
        for action in legal:
            if action.kind == Kind.PLACE:
                assert state.lack_shown_by(action) is None
                continue
            lack = state.lack_shown_by(action)
            placements = [a for a in legal if a.kind == Kind.PLACE]
            if lack is None:
                continue
            shown += 1
            assert not placements, f"{action} is legal beside placements, so it cannot show a lack"
            assert state.hands[state.turn] & lack == 0
            assert state.legal_actions() is legal  # nothing changed
    assert shown > 0


def test_what_draws_and_passes_show_in_each_variant() -> None:
    # Draw: a voluntary draw shows nothing; the pass at the protected tiles shows both ends' values are missing.
    game = new_game("draw", 2)
    state = game.new_round(deal("[6|6] [1|2]", "[3|6] [0|1] [2|2]", boneyard="[4|4] [1|1] [5|5]"))
    do(state, "lead [6|6]")
    assert state.lack_shown_by(DRAW) is None
    do(state, "draw", "[3|6] on [6|6] line B")  # the boneyard is down to its two protected tiles
    do(state, "pass")
    lack = state.lack_shown_by(PASS)  # seat 1 to move: ends 6 and 3 on the line
    sixes_and_threes = {x for x in range(28) if {3, 6} & {LOW[x], HIGH[x]}}
    assert lack is not None and {x for x in range(28) if lack >> x & 1} == sixes_and_threes
    # Block: a pass shows the ends' values.
    block = new_game("block", 2).new_round(deal("[5|5] [0|0]", "[1|2] [2|3]"))
    do(block, "lead [5|5]")
    assert block.lack_shown_by(PASS) == sum(1 << x for x in range(28) if 5 in (LOW[x], HIGH[x]))
    # Mexican Train, first-turn trains: the pass that ends one shows nothing.
    mexican = new_game("mexican_train", 2, {"set": 9, "first_turn_train": True, "hand_size": 2})
    state = mexican.new_round(Deal(hands=(tiles("[8|9] [1|2]"), tiles("[0|0] [0|1]")), boneyard=tiles("[3|4]"),
                                   leader=0, engine=t("[9|9]")))
    do(state, "[8|9] on [9|9] on train 0")
    assert [str(a) for a in state.legal_actions()] == ["pass"]
    assert state.lack_shown_by(PASS) is None


def test_the_all_fives_count_is_the_one_the_placement_makes() -> None:
    checked = 0
    for players in (2, 3, 4):
        for game, state in random_states("all_fives", players, {}, seed=players):
            for action in state.legal_actions():
                if action.kind != Kind.PLACE:
                    continue
                expected = state.clone()
                expected.apply(action)
                assert state.layout.count_after(action.tile, action.target, action.point) == expected.layout.count()
                checked += 1
    assert checked > 500
    assert points_in_play(new_game("all_fives", 2).new_round(deal("[4|6]", "[1|1]")).layout.count_after(
        t("[4|6]"), -1, 0)) == 10


@pytest.mark.parametrize("variant, players, options", CONFIGS, ids=IDS)
def test_a_requests_observation_converts_back(variant: str, players: int, options: dict) -> None:
    for game, state in random_states(variant, players, options, seed=7):
        for seat in range(players):
            observation = state.observation(seat)
            assert observation_from_pb(observation_pb(observation, game.side_of), game) == observation
