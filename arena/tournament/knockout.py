"""Knockout brackets, single or double elimination: which matches exist, who plays in each once the matches before
are decided, and the placements they make. Pure (no I/O): the same bracket from the same results, so a resumed run
plays the bracket the run it continues started.

Seeding: the entrants' order (first = seed 1) in a standard bracket of the next power of two, 1 v N, 2 v N-1, ... in
the order that keeps seeds 1 and 2 apart until the final (for 8: 1v8, 4v5, 2v7, 3v6). When the entrants are not a
power of two, the missing seeds are byes: the top seeds advance from the first round without a game (a match with
one entrant, ``decided_by = "bye"``; a losers'-bracket match left with one entrant is a walkover the same way).

Single elimination (``W1-1`` ... ``W<k>-1``, the final): a match lost is the end. Double elimination adds a losers'
bracket (``L1-1`` ...): the losers of the winners' first round meet there, each later winners' round's losers drop in
to meet the losers' bracket's survivors, and a second loss is the end. The grand final (``GF``) is the winners'
bracket's winner against the losers' bracket's; when the losers'-bracket finalist wins it, both have lost once and a
bracket reset (``GF2``) decides.

A match (:func:`settle`) is ``games`` deal sets; tied on its total match points, up to ``tiebreak_games`` more deal
sets are played one at a time, the first that is not tied deciding (sudden death); still tied after them, the higher
seed (the earlier entrant in the file) advances.

Placements (:meth:`Bracket.placements`): the champion, the runner-up, then the entrants out in each round, a later
round before an earlier one, those out in the same round sharing a place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.tournament.matches import BYE, SCORE, SEED, TIEBREAK, Match, bye_match, winner_of

SINGLE = "single"
DOUBLE = "double"
ELIMINATIONS = (SINGLE, DOUBLE)
TIEBREAK_BOUNDS = (0, 50)
"""The fewest and the most sudden-death deal sets of a tied match."""

_EMPTY = -1
"""A slot no entrant fills (a bye's missing opponent, the loser of a walkover)."""

Source = tuple[str, int | str]
"""Where a slot's entrant comes from: ``("seed", entrant or _EMPTY)``, ``("winner", match id)``, ``("loser", id)``."""


@dataclass(frozen=True)
class _Node:
    id: str
    section: str
    """``W``, ``L`` or ``GF`` (the grand finals)."""
    round: int
    sources: tuple[Source, Source]


def seed_order(size: int) -> list[int]:
    """The seeds (from 1) of a bracket of ``size`` (a power of two) slot by slot: 1, 8, 4, 5, 2, 7, 3, 6 for 8."""
    order = [1]
    while len(order) < size:
        order = [seed for s in order for seed in (s, 2 * len(order) + 1 - s)]
    return order


def _size(entrants: int) -> int:
    size = 1
    while size < entrants:
        size *= 2
    return max(2, size)


def _nodes(entrants: int, elimination: str) -> list[_Node]:
    """Every match a bracket of ``entrants`` may play, each after the matches its entrants come from."""
    size = _size(entrants)
    rounds = size.bit_length() - 1
    seeds = [s - 1 if s <= entrants else _EMPTY for s in seed_order(size)]
    nodes = [_Node(f"W1-{i + 1}", "W", 1, (("seed", seeds[2 * i]), ("seed", seeds[2 * i + 1])))
             for i in range(size // 2)]
    for r in range(2, rounds + 1):
        nodes += [_Node(f"W{r}-{i}", "W", r, (("winner", f"W{r - 1}-{2 * i - 1}"), ("winner", f"W{r - 1}-{2 * i}")))
                  for i in range(1, size // 2 ** r + 1)]
    if elimination == SINGLE:
        return nodes
    losers_final: Source = ("loser", "W1-1")
    for j in range(1, rounds):
        odd, even = 2 * j - 1, 2 * j
        if j == 1:
            nodes += [_Node(f"L1-{i}", "L", 1, (("loser", f"W1-{2 * i - 1}"), ("loser", f"W1-{2 * i}")))
                      for i in range(1, size // 4 + 1)]
        else:
            nodes += [_Node(f"L{odd}-{i}", "L", odd, (("winner", f"L{odd - 1}-{2 * i - 1}"),
                                                      ("winner", f"L{odd - 1}-{2 * i}")))
                      for i in range(1, size // 2 ** (j + 1) + 1)]
        count = size // 2 ** (j + 1)
        dropping = [f"W{j + 1}-{i}" for i in range(1, count + 1)]
        if j % 2:  # the winners' losers drop in the other way round every other time: fewer early rematches
            dropping.reverse()
        nodes += [_Node(f"L{even}-{i}", "L", even, (("winner", f"L{odd}-{i}"), ("loser", dropping[i - 1])))
                  for i in range(1, count + 1)]
        losers_final = ("winner", f"L{even}-1")
    nodes.append(_Node("GF", "GF", 1, (("winner", f"W{rounds}-1"), losers_final)))
    nodes.append(_Node("GF2", "GF", 2, (("winner", "GF"), ("loser", "GF"))))
    return nodes


def match_count(entrants: int, elimination: str) -> int:
    """The most matches with a game a bracket of ``entrants`` plays (a bracket reset included)."""
    played = entrants - 1
    return played if elimination == SINGLE else 2 * played + 1


def settle(entrants: tuple[int, ...], deal_sets: Sequence[tuple[float, float]], games: int,
           tiebreak_games: int) -> tuple[int, str] | None:
    """The winner of a match and how it was decided once its deal sets' totals (each entrant's match points, per
    deal set, in order) decide it; None while it wants another deal set (its ``games``, then sudden death)."""
    if len(deal_sets) < games:
        return None
    main = (sum(d[0] for d in deal_sets[:games]), sum(d[1] for d in deal_sets[:games]))
    winner = winner_of(entrants, main)
    if winner is not None:
        return winner, SCORE
    for extra in deal_sets[games:]:
        winner = winner_of(entrants, extra)
        if winner is not None:
            return winner, TIEBREAK
    if len(deal_sets) - games >= tiebreak_games:
        return min(entrants), SEED
    return None


@dataclass(frozen=True)
class Bracket:
    """A bracket as far as its decided matches take it: every match whose entrants are known (byes and walkovers
    included), in bracket order (winners' rounds, losers' rounds, grand finals)."""

    entrants: int
    elimination: str
    matches: tuple[Match, ...]
    finished: bool

    def next_matches(self) -> tuple[Match, ...]:
        """The matches that can be played now: both entrants known, not yet decided."""
        return tuple(m for m in self.matches if not m.decided)

    def match(self, match_id: str) -> Match | None:
        return next((m for m in self.matches if m.id == match_id), None)

    def rounds(self) -> list[tuple[str, list[Match]]]:
        """The matches round by round, each round named (``W1``, ``L2``, ``GF``, ``GF2``)."""
        named: dict[str, list[Match]] = {}
        for match in self.matches:
            named.setdefault(match.id.split("-")[0], []).append(match)
        return list(named.items())

    def placements(self) -> list[tuple[int, ...]]:
        """Groups of entrants best first: the champion, the runner-up, then those out in each round (a later round
        first). Before the end, the entrants still in share the first group."""
        out: dict[int, str] = {}
        for match in self.matches:
            loser = match.loser
            if loser is not None and self._eliminates(match):
                out[loser] = match.id.split("-")[0]
        if self.finished:
            final = self.matches[-1]
            assert final.winner is not None
            groups: list[tuple[int, ...]] = [(final.winner,)]
        else:
            groups = [tuple(e for e in range(self.entrants) if e not in out)]
        for name, _ in reversed(self.rounds()):
            group = tuple(sorted(e for e, where in out.items() if where == name))
            if group:
                groups.append(group)
        return [g for g in groups if g]

    def _eliminates(self, match: Match) -> bool:
        """Whether losing ``match`` is the end: every loss in single elimination; in double, a loss in the losers'
        bracket, the reset, and the grand final when the losers' bracket's finalist loses it."""
        if self.elimination == SINGLE or match.id.startswith("L") or match.id == "GF2":
            return True
        return match.id == "GF" and match.winner == match.entrants[0]


def build_bracket(entrants: int, elimination: str, decided: Mapping[str, Match]) -> Bracket:
    """The bracket of ``entrants`` after the ``decided`` matches (by id; each with its result): every other match
    whose entrants they determine is listed undecided, or, with one entrant, as a bye or walkover."""
    if elimination not in ELIMINATIONS:
        raise ValueError(f"expected elimination among {', '.join(ELIMINATIONS)}, got {elimination!r}")
    if entrants < 2:
        raise ValueError(f"expected a bracket of at least 2 entrants, got {entrants}")
    resolved: dict[str, Match | None] = {}
    """Each node's match, None when it can have no entrant at all; absent while its entrants are not known."""
    for node in _nodes(entrants, elimination):
        slots = [_entrant_of(source, resolved) for source in node.sources]
        if None in slots:
            continue
        present = tuple(e for e in slots if e is not None and e != _EMPTY)
        if node.id == "GF2" and (resolved.get("GF") is None or _reset_not_needed(resolved["GF"])):
            continue
        if not present:
            resolved[node.id] = None
        elif len(present) == 1:
            resolved[node.id] = bye_match(node.id, node.round, present[0])
        else:
            order = present if node.section == "GF" else tuple(sorted(present))
            played = decided.get(node.id)
            if played is not None and played.decided and tuple(played.entrants) != order:
                raise ValueError(f"match {node.id} is between {order}, the result given is for {played.entrants}")
            resolved[node.id] = played if played is not None and played.decided else Match(node.id, node.round,
                                                                                           order)
    matches = tuple(m for m in resolved.values() if m is not None)
    final = f"W{_size(entrants).bit_length() - 1}-1"
    last = (resolved.get("GF2") or resolved.get("GF")) if elimination == DOUBLE else resolved.get(final)
    finished = last is not None and last.decided and (last.id != "GF" or _reset_not_needed(last))
    return Bracket(entrants, elimination, matches, finished)


def _reset_not_needed(grand_final: Match | None) -> bool:
    """The grand final was not won by the losers' bracket's finalist (or not yet played)."""
    return grand_final is None or not grand_final.decided or grand_final.winner == grand_final.entrants[0]


def _entrant_of(source: Source, resolved: Mapping[str, Match | None]) -> int | None:
    """The entrant a source gives (:data:`_EMPTY` for none); None while not known yet."""
    kind, what = source
    if kind == "seed":
        assert isinstance(what, int)
        return what
    assert isinstance(what, str)
    if what not in resolved:
        return None
    match = resolved[what]
    if match is None:
        return _EMPTY
    if not match.decided:
        return None
    found = match.winner if kind == "winner" else match.loser
    return _EMPTY if found is None else found


__all__ = ["BYE", "Bracket", "DOUBLE", "ELIMINATIONS", "SINGLE", "TIEBREAK_BOUNDS", "build_bracket", "match_count",
           "seed_order", "settle"]
