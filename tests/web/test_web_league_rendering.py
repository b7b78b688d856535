"""The league's pages as the server renders them, from known data and without a server: the bot page's rating chart
(its line only moves right, whatever order the tables ended in; the 95% band; axes a person reads), the human
timestamps, the check report as a table, the challenge form's preselected pair, and the queue's and the bot page's
links to the games."""

from __future__ import annotations

import re

import pytest

from arena.league.rules.rating import online_elo
from arena.web.league import rating_chart
from support.charts import path_xs

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


def point(table: int, deal_set: int, mu: float, sigma: float, ended: str = "2026-12-05T10:00:00+00:00") -> dict:
    """A rating point as history_json writes it."""
    return {"table": table, "sequence": deal_set, "deal_set": deal_set, "ended_at": ended, "mu": mu, "sigma": sigma,
            "elo": online_elo(mu), "elo_low": online_elo(mu, sigma, -1.96), "elo_high": online_elo(mu, sigma, 1.96)}


def test_the_rating_chart_moves_right_when_tables_ended_out_of_order() -> None:
    """Table 9 was rated before table 4, and table 4 before table 2 (numbered as queued, rated as they ended): x
    follows the rating order, never the tables' numbers."""
    ratings = {"bot-v1": [point(9, 1, 26.0, 7.0), point(4, 2, 27.0, 6.0), point(2, 3, 25.5, 5.5),
                          point(12, 5, 28.0, 5.0)],
               "bot-v2": [point(11, 4, 24.0, 8.0), point(7, 6, 29.0, 6.5)]}
    svg = rating_chart(ratings)
    for name, count in (("bot-v1", 4), ("bot-v2", 2)):
        xs = path_xs(svg, name)
        assert len(xs) == count and all(a < b for a, b in zip(xs, xs[1:])), (name, xs)
    assert path_xs(svg, "bot-v1")[0] == 56.0 and path_xs(svg, "bot-v2")[-1] == 760 - 14  # deal set 1 and 6
    # the 95% interval as a band per version: its upper edge forward, its lower edge back
    assert re.findall(r'<path class="band" d="M[^"]+ Z" fill="#[0-9a-f]{6}" fill-opacity="0.15" stroke="none" '
                      r'data-band="(bot-v\d)"/>', svg) == ["bot-v1", "bot-v2"]
    # the axes: Elo ticks with signs, round deal-set ticks, what the x axis counts, the legend with each version's now
    assert ">Elo (0: a new version)</text>" in svg
    assert re.findall(r'text-anchor="middle">(\d+)</text>', svg) == ["1", "2", "3", "4", "5", "6"]
    assert "the bot&#x27;s 6 deal sets, in the order they were rated (5 Dec 2026 to 5 Dec 2026)" in svg
    assert "bot-v2: +118 [-258, +494] after 2 deal sets" in svg.replace("&#x27;", "'")
    assert ">0</text>" in svg and re.search(r">\+\d+</text>", svg) and re.search(r">-\d+</text>", svg)


def test_the_rating_chart_waits_for_two_deal_sets() -> None:
    assert rating_chart({"bot-v1": [point(3, 1, 26.0, 7.0)]}) == (
        '<p class="meta">The chart starts after two deal sets.</p>')


def test_online_ratings_read_as_elo() -> None:
    """A new version is 0; a point of mu is about 29.5 Elo (Plackett–Luce's logistic over beta √2, Elo's over
    400 / ln 10); the interval's ends are z sigmas away."""
    assert online_elo(25.0) == 0.0
    assert online_elo(26.0) == pytest.approx(29.4809, abs=1e-4)
    assert online_elo(25.0, 2.0, 1.96) == pytest.approx(2 * 1.96 * 29.4809, abs=1e-3)
