"""Fair play of duplicate deals as the run's order keeps it (arena/tournament/phases.py), without processes: games
handed to concurrent workers that end in a shuffled order, each lane's processes counted as generations that a
``stop_lane`` ends. For every game: no live process of a seated entrant has seen its deal under another rotation."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest
import trio

from arena.rules import new_game
from arena.tournament.phases import PhasedOrder, block_size
from arena.tournament.schedule import Schedule, ScheduledGame

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


class Processes:
    """The entrants' processes as generations: (entrant, process) -> the deals (deal key, rotation) its live
    generation has seen; ``stop_lane`` ends every generation of a lane."""

    def __init__(self, schedule: Schedule) -> None:
        self.schedule = schedule
        self.seen: dict[tuple[int, int], set[tuple[str, int]]] = defaultdict(set)
        self.stops: list[int] = []
        self.violations: list[str] = []

    async def stop_lane(self, lane: int) -> None:
        self.stops.append(lane)
        per_lane = self.schedule.seats_per_entrant()
        for key in [key for key in self.seen if key[1] // per_lane == lane]:
            del self.seen[key]
        await trio.lowlevel.checkpoint()

    def start(self, game: ScheduledGame) -> None:
        """Check the game against every live process of its entrants, then let its own processes see it."""
        for entrant in set(game.seats):
            for (owner, process), deals in self.seen.items():
                if owner == entrant and any(key == game.deal_key and r != game.rotation for key, r in deals):
                    self.violations.append(f"entrant {entrant}'s process {process} saw deal {game.deal_key} under "
                                           f"another rotation and is alive while game {game.index} plays it")
        occurrence: dict[int, int] = defaultdict(int)
        for entrant in game.seats:
            process = self.schedule.process_for(game, occurrence[entrant])
            occurrence[entrant] += 1
            assert 0 <= process < self.schedule.processes_per_entrant()
            assert (game.deal_key, game.rotation) not in self.seen[(entrant, process)], "a process saw a deal twice"
            self.seen[(entrant, process)].add((game.deal_key, game.rotation))


async def play_all(schedule: Schedule, concurrency: int, block: int, done: frozenset[int] = frozenset(),
                   seed: int = 0) -> tuple[list[int], Processes]:
    """Every game handed out to ``concurrency`` workers, each game lasting a random number of scheduler turns."""
    processes = Processes(schedule)
    order = PhasedOrder(schedule, done, block, processes.stop_lane)
    played: list[int] = []
    turns = random.Random(seed)

    async def worker() -> None:
        while (game := await order.next()) is not None:
            processes.start(game)
            for _ in range(turns.randrange(1, 30)):
                await trio.lowlevel.checkpoint()
            played.append(game.index)
            await order.ended(game)

    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(worker)
    return played, processes


@pytest.mark.parametrize(("variant", "players", "entrants", "duplicate"), [
    ("draw", 2, 3, True), ("draw", 2, 3, False), ("mexican_train", 4, 3, True), ("mexican_train", 4, 6, True),
    ("la_plaza_teams", 4, 3, True), ("all_fives", 3, 4, True)])
@pytest.mark.parametrize(("concurrency", "block"), [(1, 1), (4, 2), (6, 5), (16, 3)])
async def test_no_live_process_has_seen_a_deal_under_another_rotation(
        variant: str, players: int, entrants: int, duplicate: bool, concurrency: int, block: int) -> None:
    schedule = Schedule(entrants, new_game(variant, players), games=7, duplicate=duplicate, master_seed="m")
    played, processes = await play_all(schedule, concurrency, block, seed=concurrency * 31 + block)
    assert sorted(played) == list(range(schedule.total()))
    assert processes.violations == []


async def test_lanes_alternate_by_block_each_phase_stopping_its_lane() -> None:
    """Draw, 2 entrants, 6 deal sets in blocks of 2: phases (block, rotation) 0..5 on lanes 0, 1, 0, 1, 0, 1, one
    game at a time: rotation 0 of a block, then rotation 1, each ended by stopping its lane."""
    schedule = Schedule(2, new_game("draw", 2), games=6, duplicate=True, master_seed="m")
    played, processes = await play_all(schedule, 1, 2)
    assert played == [0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11]
    assert processes.stops == [0, 1, 0, 1, 0, 1]


async def test_a_resume_plays_the_missing_and_skips_empty_phases() -> None:
    schedule = Schedule(2, new_game("draw", 2), games=6, duplicate=True, master_seed="m")
    done = frozenset(range(0, 8))  # blocks 0 and 1 recorded whole
    played, processes = await play_all(schedule, 2, 2, done=done)
    assert sorted(played) == [8, 9, 10, 11]
    assert processes.violations == []


async def test_a_finished_order_gives_nothing_and_wakes_all_waiters() -> None:
    """A decided test or a failed write ends the run: workers waiting for the next phase get None, not a hang."""
    schedule = Schedule(2, new_game("draw", 2), games=4, duplicate=True, master_seed="m")
    order = PhasedOrder(schedule, frozenset(), 4, lambda lane: trio.lowlevel.checkpoint())
    first = [await order.next() for _ in range(4)]  # rotation 0 of all four deal sets, none ended
    assert [g.index for g in first if g is not None] == [0, 2, 4, 6]
    results: list[object] = []

    async def waiter() -> None:
        results.append(await order.next())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiter)
        await trio.testing.wait_all_tasks_blocked()
        assert results == []  # rotation 1 waits for rotation 0's games to end
        order.finish()
    assert results == [None]


def test_blocks_are_as_large_as_allowed_and_equal() -> None:
    """A run: one block up to 1,000 deal sets, then equal blocks. A sequential test: 8 deal sets per game in flight,
    at least 16, cut equally (96 deal sets at 6 in flight: two blocks of 48; at 5 in flight: 40 allowed, three of
    32)."""
    demo = Schedule(4, new_game("draw", 2), games=16, duplicate=True, master_seed="m")
    assert demo.deal_sets() == 96
    assert block_size(demo, 6) == 96
    large = Schedule(2, new_game("draw", 2), games=2500, duplicate=True, master_seed="m")
    assert block_size(large, 6) == 834  # three blocks: 834, 834, 832
    assert [block_size(demo, c, sequential=True) for c in (1, 5, 6, 64)] == [16, 32, 48, 96]
