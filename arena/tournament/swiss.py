"""Swiss rounds: who meets whom in each round, and the table the rounds make. Pure (no I/O): the same rounds from the
same results, so a resumed run pairs its rounds as the run it continues did.

Points: a pairing won is 1, drawn ½, lost 0; a bye is 1 (a win without a game). A pairing is decided by the two
entrants' total match points over its deal sets (:mod:`.matches`): equal totals are a draw.

Pairing (:func:`pair_round`):

- **Round 1** by seed (the file's order, first = seed 1): the top half against the bottom half (1 v n/2+1, 2 v n/2+2,
  ...).
- **Later rounds** by score groups: the entrants ranked by points, then seed; the highest entrant not yet paired
  meets, in its score group, the entrant half the group below it (top half against bottom half); with an odd group
  its lowest entrant floats down to the next group. No two entrants ever meet twice: when the preferred pairing
  leaves the rest of the round impossible, the next candidate is tried (a search over the whole round, lower
  groups included), and a round that cannot be paired at all is refused with :class:`PairingError`. With rounds
  still to play after it, the first pairing in that order that leaves the next round pairable is taken (the
  pairings of one round can leave none for the next: six entrants that have not met may be two triangles).
- **Odd number of entrants**: the bye goes to the lowest-ranked entrant that has not had one (and, if the rest then
  cannot be paired, to the next one up). With at most ``entrants - 1`` rounds every entrant has one bye at most.
- **Seats**: with duplicate deals every pairing plays each deal set under both rotations, so seats are even; the
  entrant listed first (who sits first under rotation 0, so holds one first seat more when a pairing plays an odd
  number of fresh-deal games) is the one listed first fewer times before, the higher-ranked when level.

The table (:func:`swiss_table`): points, then Buchholz (the sum of the points of the entrant's opponents; a bye has
no opponent and adds nothing), then Sonneborn-Berger (the points of the opponents it beat, plus half those of the
opponents it drew), then seed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from arena.errors import ArenaError
from arena.tournament.matches import Match, bye_match

Pairing = Match
"""A Swiss pairing is a :class:`~arena.tournament.matches.Match` with an id ``R<round>-<number>``."""
TIE_BREAKS = ("points", "Buchholz (opponents' points; a bye adds none)",
              "Sonneborn-Berger (points of opponents beaten, half of those drawn)", "seed")
"""The Swiss table's order, as its caption says it."""


class PairingError(ArenaError, ValueError):
    """A Swiss round that cannot be paired without two entrants meeting again."""


@dataclass(frozen=True)
class SwissRow:
    """One entrant's line of the Swiss table."""

    entrant: int
    rank: int
    """From 1; entrants level on every tie-break share no rank (the seed breaks the last tie)."""
    points: float
    buchholz: float
    sonneborn_berger: float
    wins: int
    draws: int
    losses: int
    byes: int
    opponents: tuple[int, ...]
    """Its opponents, round by round (a bye is no opponent)."""

    def to_json(self, names: list[str]) -> dict[str, object]:
        return {"rank": self.rank, "entrant": names[self.entrant], "points": self.points,
                "buchholz": self.buchholz, "sonneborn_berger": self.sonneborn_berger, "wins": self.wins,
                "draws": self.draws, "losses": self.losses, "byes": self.byes,
                "opponents": [names[e] for e in self.opponents]}


@dataclass(frozen=True)
class SwissTable:
    """The Swiss table after the decided pairings of some rounds, best first."""

    rows: tuple[SwissRow, ...]

    def ranking(self) -> list[int]:
        """Entrant indices best first."""
        return [row.entrant for row in self.rows]

    def row(self, entrant: int) -> SwissRow:
        return next(row for row in self.rows if row.entrant == entrant)


def pairing_points(match: Match, entrant: int) -> float:
    """What a decided pairing (or bye) gives ``entrant``: 1 a win or a bye, ½ a draw, 0 a loss."""
    if match.winner is None:
        return 0.5
    return 1.0 if match.winner == entrant else 0.0


def points_of(entrants: int, rounds: Sequence[Sequence[Match]]) -> list[float]:
    """Each entrant's points over the decided pairings of ``rounds``."""
    points = [0.0] * entrants
    for match in (m for matches in rounds for m in matches if m.decided):
        for entrant in match.entrants:
            points[entrant] += pairing_points(match, entrant)
    return points


def swiss_table(entrants: int, rounds: Sequence[Sequence[Match]]) -> SwissTable:
    """The table of the decided pairings of ``rounds`` (see the module docstring for its order)."""
    points = points_of(entrants, rounds)
    opponents: list[list[int]] = [[] for _ in range(entrants)]
    counts = [[0, 0, 0, 0] for _ in range(entrants)]  # wins, draws, losses, byes
    sonneborn = [0.0] * entrants
    for match in (m for matches in rounds for m in matches if m.decided):
        if match.bye:
            counts[match.entrants[0]][3] += 1
            continue
        for entrant, other in (match.entrants, match.entrants[::-1]):
            opponents[entrant].append(other)
            got = pairing_points(match, entrant)
            counts[entrant][0 if got == 1 else 1 if got == 0.5 else 2] += 1
            sonneborn[entrant] += got * points[other]
    buchholz = [sum(points[o] for o in opponents[e]) for e in range(entrants)]
    order = sorted(range(entrants), key=lambda e: (-points[e], -buchholz[e], -sonneborn[e], e))
    return SwissTable(tuple(SwissRow(e, rank, points[e], buchholz[e], sonneborn[e], wins=counts[e][0],
                                     draws=counts[e][1], losses=counts[e][2], byes=counts[e][3],
                                     opponents=tuple(opponents[e])) for rank, e in enumerate(order, 1)))


LOOKAHEAD = 200
"""The most pairings of a round (in order of preference) tried for one that leaves the next round pairable."""


def pair_round(entrants: int, rounds: Sequence[Sequence[Match]], rounds_left: int = 0) -> tuple[Match, ...]:
    """The pairings of the round after ``rounds`` (every pairing of which must be decided), a bye last; raises
    :class:`PairingError` when no pairing of the round avoids a repeat (or every entrant has had a bye).
    ``rounds_left``: the rounds still to play after this one; when there are some, the first pairing in order of
    preference that leaves the next round pairable is taken (among the first :data:`LOOKAHEAD`), else the first."""
    number = len(rounds) + 1
    if any(not m.decided for matches in rounds for m in matches):
        raise PairingError(f"round {number} cannot be paired before every pairing of the rounds before is decided")
    points = points_of(entrants, rounds)
    ranked = sorted(range(entrants), key=lambda e: (-points[e], e))
    met = {frozenset(m.entrants) for matches in rounds for m in matches if not m.bye}
    had_bye = {m.entrants[0] for matches in rounds for m in matches if m.bye}
    byes: list[int | None] = [None]
    if entrants % 2:
        byes = [e for e in reversed(ranked) if e not in had_bye]
    fallback: tuple[int | None, list[tuple[int, int]]] | None = None
    for bye in byes:
        players = [e for e in ranked if e != bye]
        if number == 1:
            fallback = fallback or (bye, _first_round(players))
            break
        after = had_bye | ({bye} if bye is not None else set())

        def leaves_a_next_round(pairs: list[tuple[int, int]], after: set[int] = after) -> bool:
            return _pairable(entrants, met | {frozenset(pair) for pair in pairs}, after)

        pairs, viable = _PairSearch(players, points, met).pairs(leaves_a_next_round if rounds_left else None)
        if pairs is not None and viable:
            return _matches(number, bye, pairs, rounds, ranked)
        if pairs is not None and fallback is None:
            fallback = (bye, pairs)
    if fallback is not None:
        return _matches(number, fallback[0], fallback[1], rounds, ranked)
    raise PairingError(f"round {number} of {entrants} entrants cannot be paired without two entrants meeting again"
                       f"{' or a second bye' if entrants % 2 else ''}; play fewer rounds")


def _matches(number: int, bye: int | None, pairs: list[tuple[int, int]], rounds: Sequence[Sequence[Match]],
             ranked: list[int]) -> tuple[Match, ...]:
    """The round's pairings with their ids, each oriented (see the module docstring), the bye last."""
    firsts = _times_first(len(ranked), rounds)
    matches = [Match(f"R{number}-{k}", number, _oriented(pair, firsts, ranked)) for k, pair in enumerate(pairs, 1)]
    if bye is not None:
        matches.append(bye_match(f"R{number}-{len(matches) + 1}", number, bye))
    return tuple(matches)


def _pairable(entrants: int, met: set[frozenset[int]], had_bye: set[int]) -> bool:
    """Whether a round can pair every entrant (one bye, to an entrant without one, when they are odd) with no
    repeat, whatever the scores."""
    level = [0.0] * entrants
    byes: list[int | None] = [e for e in range(entrants) if e not in had_bye] if entrants % 2 else [None]
    return any(next(_PairSearch([e for e in range(entrants) if e != bye], level, met).every(), None) is not None
               for bye in byes)


def _first_round(players: list[int]) -> list[tuple[int, int]]:
    """Top half against bottom half, by seed."""
    half = len(players) // 2
    return [(players[i], players[i + half]) for i in range(half)]


class _PairSearch:
    """A depth-first search for a round's pairs in order of preference (see the module docstring); a set of
    entrants found unpairable is remembered, so that the search is never repeated for it."""

    def __init__(self, players: list[int], points: list[float], met: set[frozenset[int]]) -> None:
        self.players, self.points, self.met = players, points, met
        self.dead: set[frozenset[int]] = set()

    def pairs(self, accept: Callable[[list[tuple[int, int]]], bool] | None = None
              ) -> tuple[list[tuple[int, int]] | None, bool]:
        """The first pairing ``accept`` takes among the first :data:`LOOKAHEAD` (and True), else the first pairing
        (and whether it was accepted: True without ``accept``); None when there is none."""
        first: list[tuple[int, int]] | None = None
        for tried, pairs in enumerate(self.every()):
            if accept is None or accept(pairs):
                return pairs, True
            first = first or pairs
            if tried + 1 >= LOOKAHEAD:
                break
        return first, False

    def every(self) -> Iterator[list[tuple[int, int]]]:
        """Every pairing of the players with no repeat, in order of preference."""
        return self._pair(tuple(self.players))

    def _pair(self, left: tuple[int, ...]) -> Iterator[list[tuple[int, int]]]:
        if not left:
            yield []
            return
        if frozenset(left) in self.dead:
            return
        found = False
        top = left[0]
        for other in self._candidates(left):
            if frozenset((top, other)) in self.met:
                continue
            for rest in self._pair(tuple(e for e in left[1:] if e != other)):
                found = True
                yield [(top, other), *rest]
        if not found:
            self.dead.add(frozenset(left))

    def _candidates(self, left: tuple[int, ...]) -> list[int]:
        """The opponents of ``left[0]`` in order of preference: the one half its score group below it (the group
        without its lowest entrant when the group is odd), the rest of the group, then the entrants below it."""
        group = [e for e in left if self.points[e] == self.points[left[0]]]
        half = len(group) // 2
        preferred = [*group[half:], *group[1:half]] if half else group[1:]
        return [*preferred, *(e for e in left[1:] if e not in group)]


def _times_first(entrants: int, rounds: Sequence[Sequence[Match]]) -> list[int]:
    """How often each entrant was listed first in a pairing (it sits first under rotation 0)."""
    firsts = [0] * entrants
    for match in (m for matches in rounds for m in matches if not m.bye):
        firsts[match.entrants[0]] += 1
    return firsts


def _oriented(pair: tuple[int, int], firsts: list[int], ranked: list[int]) -> tuple[int, int]:
    """The pair with first the entrant listed first fewer times before, the higher-ranked when level."""
    a, b = pair
    if (firsts[a], ranked.index(a)) > (firsts[b], ranked.index(b)):
        return b, a
    return a, b


__all__ = ["Pairing", "PairingError", "SwissRow", "SwissTable", "TIE_BREAKS", "pair_round", "pairing_points",
           "points_of", "swiss_table"]
