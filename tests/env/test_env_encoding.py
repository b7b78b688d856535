"""The environments' shared encoding (arena/env/encoding.py): every legal action has one index and comes back from
it, in every variant; the observation vector shows one seat's view and nothing of the hidden tiles."""

from __future__ import annotations

import importlib
import random
import sys
from dataclasses import replace

import numpy as np
import pytest

from arena.env import Encoding, MissingExtra
from arena.rules import DRAW, PASS, Deal, IllegalActionError, new_game, placement
from arena.rules.actions import Point
from arena.rules.restore import PublicRound
from arena.rules.tiles import parse_tile
from support.random_matches import CONFIGS, IDS, random_states

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


@pytest.mark.parametrize("variant, players, options", CONFIGS, ids=IDS)
def test_every_legal_action_has_one_index_and_back(variant: str, players: int, options: dict) -> None:
    checked = 0
    for game, state in random_states(variant, players, options, seed=5):
        encoding = Encoding(game)
        legal = state.legal_actions()
        indices = [encoding.index(a, state) for a in legal]
        assert len(set(indices)) == len(indices)
        assert all(0 <= i < encoding.num_actions for i in indices)
        observation = state.observation(state.turn)
        assert [encoding.index(a, observation) for a in legal] == indices
        assert [encoding.action(i, state) for i in indices] == legal
        assert [encoding.action(i, observation) for i in indices] == legal
        mask = encoding.mask(state)
        assert sorted(np.flatnonzero(mask).tolist()) == sorted(indices) == encoding.legal_indices(state)
        checked += 1
    assert checked > 50


def test_the_action_space_of_each_layout() -> None:
    draw = Encoding(new_game("draw", 2))
    assert (draw.tiles, draw.slots, draw.num_actions) == (28, 3, 86)
    assert (draw.draw_index, draw.pass_index) == (84, 85)
    fives = Encoding(new_game("all_fives", 3))
    assert (fives.slots, fives.num_actions) == (5, 142)
    mexican = Encoding(new_game("mexican_train", 4))
    assert (mexican.tiles, mexican.slots, mexican.num_actions) == (91, 5, 457)
    assert mexican.index(DRAW, new_game("mexican_train", 4).new_match(1).round) == 455


def test_a_lead_then_the_left_and_right_ends_of_the_line() -> None:
    game = new_game("block", 2)
    encoding = Encoding(game)
    state = game.new_round(Deal(((parse_tile("[5|6]"), parse_tile("[1|2]")), (parse_tile("[6|6]"), parse_tile("[5|5]"),
                                                                              parse_tile("[0|0]"))), (), 0))
    five_six = parse_tile("[5|6]")
    assert encoding.index(placement(five_six), state) == five_six * 3
    state.apply(encoding.action(five_six * 3, state))
    six_six, five_five = parse_tile("[6|6]"), parse_tile("[5|5]")
    # a lead non-double opens its low end on the left (slot 1) and its high end on the right (slot 2)
    assert encoding.legal_indices(state) == sorted([five_five * 3 + 1, six_six * 3 + 2])
    assert encoding.action(six_six * 3 + 2, state) == placement(six_six, five_six, Point.HIGH_END)


def test_mexican_train_slots_are_relative_to_the_mover() -> None:
    game = new_game("mexican_train", 3)
    encoding = Encoding(game)
    state = game.new_match(2).round
    mover = state.turn
    for action in state.legal_actions():
        if action.kind.name != "PLACE":
            continue
        slot = encoding.index(action, state) % encoding.slots
        expected = 3 if action.train == -2 else (action.train - mover) % 3
        assert slot == expected


def test_an_index_outside_the_space_or_at_a_closed_end_is_refused() -> None:
    game = new_game("draw", 2)
    encoding = Encoding(game)
    state = game.new_match(1).round
    with pytest.raises(IllegalActionError, match="between 0 and 85, got 86"):
        encoding.action(86, state)
    with pytest.raises(IllegalActionError, match="end slot 1, which is not open"):
        encoding.action(1, state)  # [0|0] on the left end of an empty line
    assert encoding.action(encoding.pass_index, state) == PASS


@pytest.mark.parametrize("variant, players, options", CONFIGS, ids=IDS)
def test_the_vector_never_shows_another_seats_hand(variant: str, players: int, options: dict) -> None:
    """Swap the hidden tiles for another guess consistent with the seat's view: the same vector."""
    rng = random.Random(2)
    checked = 0
    for game, state in random_states(variant, players, options, seed=7):
        if rng.random() > 0.2:
            continue
        encoding = Encoding(game)
        seat = rng.randrange(players)
        observation = state.observation(seat)
        public = PublicRound(game, observation)
        unseen = [t for t in range(encoding.tiles) if public.unseen >> t & 1]
        rng.shuffle(unseen)
        hands = []
        for s in range(players):
            take = 0 if s == seat else state.counts[s]
            hands.append(sum(1 << t for t in unseen[:take]))
            unseen = unseen[take:]
        drawn = None
        if public.pending_draw():
            drawn = (hands[state.turn] & -hands[state.turn]).bit_length() - 1
        other = public.determinize(hands, unseen[:public.boneyard_count], drawn)
        if other.hands == state.hands and other.boneyard == state.boneyard:
            continue  # the guess happened to be the truth
        vector = encoding.vector(observation)
        assert np.array_equal(encoding.vector(other.observation(seat)), vector)
        assert np.array_equal(encoding.vector(replace(observation, legal_actions=())), vector)
        checked += 1
    assert checked > 5


def test_the_vector_reads_relative_to_the_observer() -> None:
    game = new_game("draw", 3)
    encoding = Encoding(game)
    state = game.new_match(4).round
    o = encoding.offsets
    for seat in range(3):
        vector = encoding.vector(state.observation(seat))
        assert vector[o["hand"]:o["hand"] + 28].sum() == 7
        assert vector[o["turn"] + (state.turn - seat) % 3] == 1
        assert vector[o["boneyard"]] == 7
        assert list(vector[o["hand_counts"]:o["hand_counts"] + 3]) == [7, 7, 7]
    assert encoding.size == sum(size for _, size in encoding.parts) == 80


@pytest.mark.parametrize("module, library, extra", [("arena.env.pettingzoo", "pettingzoo", "pettingzoo"),
                                                     ("arena.env.gymnasium", "gymnasium", "pettingzoo"),
                                                     ("arena.env.openspiel", "pyspiel", "openspiel")])
def test_the_core_imports_without_the_frameworks(monkeypatch: pytest.MonkeyPatch, module: str, library: str,
                                                 extra: str) -> None:
    """With the frameworks hidden the encoding still works, and a framework's module is one line naming its extra."""
    for name in [m for m in sys.modules if m.startswith(("arena.env.", "pettingzoo", "gymnasium", "pyspiel"))
                 and m != "arena.env.encoding" and m != "arena.env.extras"]:
        monkeypatch.delitem(sys.modules, name)
    for name in ("pettingzoo", "gymnasium", "pyspiel"):
        monkeypatch.setitem(sys.modules, name, None)
    encoding = importlib.import_module("arena.env").Encoding(new_game("block", 2))
    assert encoding.num_actions == 86
    with pytest.raises(MissingExtra) as refused:
        importlib.import_module(module)
    assert str(refused.value) == (f"{library} is not installed: pip install 'dominoes-arena[{extra}]' "
                                  "(or ARENA_WITH_RESEARCH=1 bash scripts/setup.sh)")
