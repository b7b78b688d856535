"""Tiles, sets and the seeded shuffle."""

from __future__ import annotations

import hashlib

import pytest

from arena.rules import RulesError, new_game, parse_tile, tile_id, tile_name
from arena.rules.rng import Rng
from arena.rules.tiles import HIGH, LOW, PIPS, full_set, set_size

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


@pytest.mark.parametrize("double, size", [(6, 28), (9, 55), (12, 91), (15, 136), (18, 190)])
def test_set_sizes(double: int, size: int) -> None:
    tiles = full_set(double)
    assert len(tiles) == size == set_size(double)
    assert {(LOW[t], HIGH[t]) for t in tiles} == {(a, b) for b in range(double + 1) for a in range(b + 1)}


def test_tile_names_and_pips() -> None:
    assert tile_name(tile_id(5, 3)) == "[3|5]"
    assert PIPS[parse_tile("[6|6]")] == 12
    assert PIPS[parse_tile("[0|0]")] == 0
    assert parse_tile("5|3") == parse_tile("[3|5]")


@pytest.mark.parametrize("bad", ["35", "[3|x]", "", "[3|19]"])
def test_bad_tile_text_is_refused_with_the_text_shown(bad: str) -> None:
    with pytest.raises(RulesError) as error:
        parse_tile(bad)
    assert "expected" in str(error.value)


def test_unsupported_set_is_refused() -> None:
    with pytest.raises(RulesError, match="double-7"):
        full_set(7)


def test_shuffle_stream_is_the_documented_shake256() -> None:
    """below(n) reads SHAKE-256 of 'dominoes/v1/<label>/<seed>' byte by byte with rejection sampling."""
    stream = hashlib.shake_256(b"dominoes/v1/deal/0/1").digest(64)
    expected = []
    for byte in stream:
        if byte < 256 - 256 % 28:
            expected.append(byte % 28)
        if len(expected) == 5:
            break
    rng = Rng("deal/0", 1)
    assert [rng.below(28) for _ in range(5)] == expected == [13, 2, 15, 25, 14]


def test_same_seed_same_deal_and_a_pinned_vector() -> None:
    game = new_game("draw", 2)
    assert game.deal(1, 0, 0) == game.deal(1, 0, 0)
    assert game.deal(1, 0, 0) != game.deal(2, 0, 0)
    assert game.deal(1, 0, 0) != game.deal(1, 1, 0)
    # Pinned: a change of the shuffle would silently change every recorded deal.
    assert game.deal(1, 0, 0).hands == ((22, 24, 4, 25, 18, 26, 5), (15, 19, 6, 20, 9, 17, 27))


def test_below_is_uniform_enough_and_in_range() -> None:
    rng = Rng("test", "uniform")
    counts = [0] * 7
    for _ in range(7000):
        counts[rng.below(7)] += 1
    assert all(850 < c < 1150 for c in counts), counts
    assert all(0 <= rng.below(300) < 300 for _ in range(1000))
