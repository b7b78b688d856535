"""Gauntlets and the SPRT of a tournament: the gauntlet's tables, the file's keys, the test
fed by finished games in any order, and real runs that stop at a bound, with the test rebuilt from the records on
``--resume``.

The real runs use bots whose choice is a hash of what they see (tests/bots/hashed_bot.py) and the greedy bot, on a
seeded master seed: the games are the same at every run, so the verdicts asserted here are facts of those games,
not chances."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from arena.rules import new_game
from arena.tournament.schedule import Schedule
from arena.tournament.sequential import MatchupTest
from arena.tournament.spec import SpecError, spec_from_dict
from arena.tournament.sprt import H0, H1, Sprt, llr
from support.paths import ROOT
from support.waiting import wait_for
from support.outcomes import outcome

PYTHON = sys.executable
HASHED = str(ROOT / "tests" / "bots" / "hashed_bot.py")
GREEDY = str(ROOT / "bots" / "python" / "greedy_bot.py")


# --- the gauntlet's tables ---------------------------------------------------------------------------------------


@pytest.mark.fast
def test_a_two_player_gauntlet_meets_everyone_once() -> None:
    one = Schedule(4, new_game("draw", 2), games=1, duplicate=True, master_seed="g", candidates=(0,))
    assert list(one.tables()) == [(0, 1), (0, 2), (0, 3)]
    two = Schedule(4, new_game("draw", 2), games=1, duplicate=True, master_seed="g", candidates=(2, 0))
    assert list(two.tables()) == [(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)]
    assert (one.table_count(), two.table_count()) == (3, 5)
    assert two.total() == 10 and len(list(two)) == 10
    assert two.processes_per_entrant() == 2
    with pytest.raises(ValueError, match="an entrant that is not a candidate"):
        Schedule(2, new_game("mexican_train", 4), games=1, duplicate=True, master_seed="g", candidates=(0, 1))


@pytest.mark.fast
def test_k_player_tables_each_seat_one_candidate() -> None:
    game = new_game("mexican_train", 4)
    many = Schedule(6, game, games=1, duplicate=False, master_seed="g", candidates=(1, 4))
    tables = list(many.tables())
    assert len(tables) == many.table_count() == 2 * 4  # each candidate with every 3 of the 4 others
    assert tables[:4] == [(1, 0, 2, 3), (1, 0, 2, 5), (1, 0, 3, 5), (1, 2, 3, 5)]
    assert all(sum(e in (1, 4) for e in table) == 1 for table in tables)
    alone = Schedule(2, game, games=1, duplicate=True, master_seed="g", candidates=(0,))
    assert list(alone.tables()) == [(0, 1, 1, 1)]
    assert alone.seats_per_entrant() == 3 and alone.processes_per_entrant() == 6
    rotations = [g.seats for g in alone]
    assert rotations == [(0, 1, 1, 1), (1, 1, 1, 0), (1, 1, 0, 1), (1, 0, 1, 1)]  # the candidate in every seat


@pytest.mark.fast
def test_a_team_gauntlet_pairs_teams_with_a_candidate() -> None:
    schedule = Schedule(3, new_game("la_plaza_teams", 4), games=1, duplicate=True, master_seed="g", candidates=(2,))
    assert list(schedule.tables()) == [(0, 2, 0, 2), (1, 2, 1, 2)]
    assert [g.seats for g in schedule][:2] == [(0, 2, 0, 2), (2, 0, 2, 0)]


# --- the file's keys ---------------------------------------------------------------------------------------------


def table(bots: int = 2, **top) -> dict:
    return {"variant": "block", "bots": [{"name": f"b{i}", "command": "python x.py"} for i in range(bots)], **top}


@pytest.mark.parametrize(("top", "message"), [
    ({"format": "ladder"},
     "key 'format' must be one of round_robin, gauntlet, balanced, swiss, knockout, got 'ladder'"),
    ({"format": "gauntlet"}, "key 'candidates' must list the names of the gauntlet's candidates, got None"),
    ({"format": "gauntlet", "candidates": ["b9"]},
     "key 'candidates' names 'b9', which is not a bot that plays (bots: b0, b1)"),
    ({"format": "gauntlet", "candidates": ["b0", "b1"]},
     "key 'candidates' names every bot: a gauntlet needs at least one bot that is not a candidate"),
    ({"format": "gauntlet", "candidates": ["b0", "b0"]}, "key 'candidates' must name each bot once, got ['b0', 'b0']"),
    ({"candidates": ["b0"]}, "key 'candidates' is for format = \"gauntlet\", got it with 'round_robin'"),
    ({"sprt": {"elo0": 0, "elo1": 10, "tau": 1}},
     "unknown key 'tau' in [sprt]; valid keys: elo0, elo1, alpha, beta, model"),
    ({"sprt": {"elo0": 10, "elo1": 0}}, "[sprt]: expected elo0 < elo1, got elo0 = 10.0 and elo1 = 0.0"),
    ({"sprt": {"alpha": 0.7}}, "[sprt]: expected alpha between 0 and 0.5 (exclusive), got 0.7"),
    ({"sprt": {"elo1": "ten"}}, "key 'sprt.elo1' must be a number, got 'ten'"),
    ({"sprt": {"model": "bayes"}}, "key 'sprt.model' must be one of logistic, normalized, got 'bayes'"),
    ({"sprt": 3}, "key 'sprt' must be a table with elo0, elo1, alpha, beta, model, got 3"),
])
@pytest.mark.fast
def test_bad_gauntlet_and_sprt_keys_get_one_clear_line(top: dict, message: str) -> None:
    with pytest.raises(SpecError) as error:
        spec_from_dict(table(**top))
    assert str(error.value) == message


@pytest.mark.fast
def test_an_sprt_needs_one_match_up() -> None:
    with pytest.raises(SpecError) as error:
        spec_from_dict(table(3, sprt={}))
    assert str(error.value) == ("[sprt] tests one match-up: two bots, or a gauntlet of one candidate against one other "
                                "bot; this file has 3 tables (3 bots)")
    with pytest.raises(SpecError) as error:
        spec_from_dict(table(3, sprt={}, format="gauntlet", candidates=["b2"]))
    assert "this file has 2 tables (3 bots, 1 candidates)" in str(error.value)
    spec = spec_from_dict(table(2, sprt={"elo1": 20}))
    assert spec.sprt is not None and (spec.sprt.elo0, spec.sprt.elo1) == (0.0, 20.0)
    assert spec.games == 10_000, "with [sprt], games is the test's cap: large unless the file says"


# --- the test fed by finished games ------------------------------------------------------------------------------


@pytest.mark.fast
def test_a_deal_set_counts_as_one_pentanomial_unit() -> None:
    spec = spec_from_dict(table(2, sprt={"elo1": 20}))
    test = MatchupTest.for_tournament(spec, spec.schedule("s"))
    assert test is not None and test.test.kind == "pentanomial"
    test.add(outcome("0/0", ("b0", "b1"), 0))  # b0 wins the first rotation of deal 0
    test.add(outcome("0/1", ("b1", "b0"), 0))  # deal 1 arrives first: b1 wins
    assert test.test.counts == [0, 0, 0, 0, 0] and test.games == 0
    test.add(outcome("0/1", ("b0", "b1"), 1))  # b1 wins again: deal 1 is LL for b0
    test.add(outcome("0/0", ("b1", "b0"), 1))  # b0 wins again: deal 0 is WW
    assert test.test.counts == [1, 0, 0, 0, 1] and test.games == 4
    assert test.test.llr == pytest.approx(llr([1, 0, 0, 0, 1], 0, 20))


@pytest.mark.fast
def test_the_verdict_says_why_the_standings_count_more_games() -> None:
    """A game whose deal set is left unfinished is in the standings (27 games) but not in the test (26): the verdict
    line printed beside the standings says so, instead of two counts and two Elo figures that seem to disagree."""
    spec = spec_from_dict(table(2, sprt={"elo1": 20}))
    test = MatchupTest.for_tournament(spec, spec.schedule("s"))
    assert test is not None
    test.add(outcome("0/0", ("b0", "b1"), 0))
    test.add(outcome("0/0", ("b1", "b0"), 1))
    test.add(outcome("0/1", ("b0", "b1"), 0))  # its deal set's other game never played
    assert test.summary(recorded=2) == test.summary() and test.summary().endswith("1 deal sets (2 games)")
    assert test.summary(recorded=3) == (
        test.summary() + "; the standings also count 1 game of a deal set left unfinished when the test decided "
        "(the test counts complete deal sets only), so their games and Elo differ")


@pytest.mark.fast
def test_a_four_seat_unit_counts_every_opponent_side() -> None:
    spec = spec_from_dict({"variant": "mexican_train", "players": 4, "format": "gauntlet", "candidates": ["c"],
                           "sprt": {"elo1": 50}, "bots": [{"name": "c", "command": "x"}, {"name": "g", "command": "x"}]})
    test = MatchupTest.for_tournament(spec, spec.schedule("s"))
    assert test is not None and test.test.meetings == 12 and len(test.test.counts) == 25
    for rotation, seats in enumerate([("c", "g", "g", "g"), ("g", "g", "g", "c"), ("g", "g", "c", "g"),
                                      ("g", "c", "g", "g")]):
        test.add(outcome("0/0", seats, seats.index("c") if rotation < 3 else 0))
    # the candidate won three games (3 meetings each) and lost one, placed last or not: 9 wins; the lost game puts it
    # below the winner, level with the two other greedy sides (scores 0 = 0): 1 loss, 2 draws
    assert test.test.counts[2 * 9 + 2] == 1


# --- real runs -----------------------------------------------------------------------------------------------------


def sprt_text(out: Path, first: list[str], second: list[str], *, elo1: float, games: int = 400,
              concurrency: int = 2, duplicate: bool = True) -> str:
    return f'''name = "sprt"
variant = "block"
games = {games}
duplicate = {"true" if duplicate else "false"}
seed = "sprt-test"
concurrency = {concurrency}
output = "{out}"

[options]
target = 1

[sprt]
elo0 = 0
elo1 = {elo1}

[[bots]]
name = "first"
command = {json.dumps(first)}

[[bots]]
name = "second"
command = {json.dumps(second)}
'''


def run_file(tmp_path: Path, text: str, *extra: str) -> subprocess.CompletedProcess:
    path = tmp_path / "sprt.toml"
    path.write_text(text)
    return subprocess.run([PYTHON, "-m", "arena", "run", str(path), *extra], capture_output=True, text=True,
                          timeout=600, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})  # titles on one line


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def counts_from_records(games: list[dict], candidate: str) -> list[int]:
    """The pentanomial counts of the complete deal sets, computed here from the records alone: the candidate's half
    points over the two games of each deal (a win 2, a draw 1: Block to 1 point has a winner or a tie)."""
    halves: dict[str, list[int]] = defaultdict(list)
    for game in games:
        result = game["result"]
        mine = game["seats"].index(candidate)
        winner = result.get("winner")
        halves[game["dealKey"]].append(1 if winner is None else 2 if winner == mine else 0)
    counts = [0] * 5
    for points in halves.values():
        if len(points) == 2:
            counts[sum(points)] += 1
    return counts


def test_a_stronger_bot_is_accepted_at_the_bound(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run_file(tmp_path, sprt_text(out, [PYTHON, GREEDY], [PYTHON, HASHED, "--salt", "b"], elo1=40))
    assert done.returncode == 0, done.stdout + done.stderr
    standings = json.loads((out / "standings.json").read_text())
    test = standings["sprt"]
    assert (test["state"], test["candidate"], test["opponent"], test["kind"]) == (H1, "first", "second", "pentanomial")
    games = records(out)
    assert len(games) < 800, "stopped at the bound, not at the cap"
    assert len({int(g.get("index", 0)) for g in games}) == len(games) == standings["games"]
    assert test["counts"] == counts_from_records(games, "first")
    assert test["llr"] == pytest.approx(llr(test["counts"], 0, 40)) and test["llr"] > test["bounds"][1]
    # Beyond the deal sets the test counted: the first rotation of its block's deal sets not yet played under the
    # second (a block of 16 deal sets at concurrency 2, arena/tournament/phases.py), and the games then in flight.
    assert 2 * test["decided_at"] <= len(games) <= 2 * test["decided_at"] + 16 + 2 * 2, "only games in flight were added"
    line = next(line for line in done.stdout.splitlines() if line.startswith("SPRT "))
    assert line.startswith(f"SPRT first vs second: H1 accepted: LLR {test['llr']:.2f} [-2.94, 2.94], Elo +")
    extra = len(games) - test["games"]
    assert line.endswith(f"(95%), {test['units']} deal sets ({test['games']} games)" + (
        f"; the standings also count {extra} game{'' if extra == 1 else 's'} of "
        f"{'a deal set' if extra == 1 else 'deal sets'} left unfinished when the "
        f"test decided (the test counts complete deal sets only), so their games and Elo differ" if extra else ""))
    assert f"records: {out / 'games.jsonl'} ({len(games)} games)" in done.stdout
    progress = [line for line in done.stdout.splitlines() if line.startswith("games ")]
    assert progress and all("games/s; LLR " in line and " [-2.94, 2.94]; leaders: " in line for line in progress)
    assert (out / "seed.json").exists(), "a decided test ends the tournament: the seed is revealed"


def hashed_pair(out: Path, **kw) -> str:
    return sprt_text(out, [PYTHON, HASHED, "--salt", "a"], [PYTHON, HASHED, "--salt", "b"], **kw)


def test_equal_bots_are_rejected_and_a_kill_resumes_the_test(tmp_path: Path) -> None:
    """Two bots of the same strength: H0. The same run killed (kill -9) mid-test and resumed decides at the same
    deal set with the same counts: the test is rebuilt from the records, and the games are the same games."""
    whole = tmp_path / "whole"
    done = run_file(tmp_path, hashed_pair(whole, elo1=60, concurrency=1))
    assert done.returncode == 0, done.stdout + done.stderr
    expected = json.loads((whole / "standings.json").read_text())["sprt"]
    assert expected["state"] == H0 and expected["decided_at"] >= 10

    cut = tmp_path / "cut"
    path = tmp_path / "cut.toml"
    path.write_text(hashed_pair(cut, elo1=60, concurrency=1))
    process = subprocess.Popen([PYTHON, "-m", "arena", "run", str(path)], cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    lines = cut / "games.jsonl"
    wait_for(lambda: lines.exists() and lines.read_bytes().count(b"\n") >= 7, 120, "seven recorded games")
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (cut / "seed.json").exists()
    resumed = subprocess.run([PYTHON, "-m", "arena", "run", str(path), "--resume"], capture_output=True, text=True,
                             timeout=600, cwd=ROOT)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    test = json.loads((cut / "standings.json").read_text())["sprt"]
    assert (test["state"], test["decided_at"], test["counts"]) == (H0, expected["decided_at"], expected["counts"])
    assert "SPRT first vs second: H0 accepted" in resumed.stdout
    assert sorted(int(g.get("index", 0)) for g in records(cut)) == sorted(int(g.get("index", 0)) for g in records(whole))


def test_reaching_the_cap_says_undecided(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run_file(tmp_path, hashed_pair(out, elo1=10, games=3, duplicate=False))
    assert done.returncode == 0, done.stdout + done.stderr
    test = json.loads((out / "standings.json").read_text())["sprt"]
    assert (test["state"], test["kind"], test["units"], test["unit"]) == ("continue", "trinomial", 3, "games")
    assert "SPRT first vs second: undecided: LLR " in done.stdout and ", 3 games" in done.stdout


def test_a_gauntlet_plays_only_candidate_tables(tmp_path: Path) -> None:
    out = tmp_path / "run"
    text = f'''name = "g"
variant = "block"
games = 2
seed = "gauntlet"
format = "gauntlet"
candidates = ["cand"]
output = "{out}"
[options]
target = 1
[[bots]]
name = "base-a"
command = {json.dumps([PYTHON, HASHED, "--salt", "a"])}
[[bots]]
name = "cand"
command = {json.dumps([PYTHON, GREEDY])}
[[bots]]
name = "base-b"
command = {json.dumps([PYTHON, HASHED, "--salt", "b"])}
'''
    done = run_file(tmp_path, text)
    assert done.returncode == 0, done.stdout + done.stderr
    games = records(out)
    assert len(games) == 2 * 2 * 2  # two tables (cand against each base), two deal sets, two rotations
    assert all("cand" in g["seats"] for g in games)
    assert {frozenset(g["seats"]) for g in games} == {frozenset({"cand", "base-a"}), frozenset({"cand", "base-b"})}
    gauntlet = done.stdout.split("gauntlet (W-D-L of each candidate")[1]
    rows = [line for line in gauntlet.splitlines() if line.startswith("│")]
    assert len(rows) == 1 and rows[0].split("│")[1].strip() == "cand"
    pairwise = json.loads((out / "standings.json").read_text())["pairwise"]["cand"]
    cells = [cell.strip() for cell in rows[0].split("│")[2:-1]]
    header = [cell.strip() for cell in gauntlet.splitlines()[[i for i, line in enumerate(gauntlet.splitlines())
                                                              if line.startswith("┃")][0]].split("┃")[2:-1]]
    assert sorted(header) == ["base-a", "base-b"], "no column of a candidate against itself"
    for name, cell in zip(header, cells):
        assert cell == "{wins}-{draws}-{losses}".format(**pairwise[name]), (name, cell)
    assert sum(pairwise[name]["wins"] + pairwise[name]["draws"] + pairwise[name]["losses"]
               for name in ("base-a", "base-b")) == 8


@pytest.mark.fast
def test_a_gauntlet_sprt_round_trips_the_server() -> None:
    import tomllib

    from arena.server.submission import dict_from_message, message_from_dict, parse_submission, toml_text

    text = (ROOT / "tournaments" / "sprt_mexican_train.toml").read_text()
    data = tomllib.loads(text)
    message = message_from_dict(data)
    assert (message.format, list(message.candidates)) == ("gauntlet", ["py-search"])
    assert (message.sprt.elo0, message.sprt.elo1, message.sprt.HasField("alpha")) == (0.0, 50.0, True)
    spec, kept = parse_submission(message, text)  # the message and the TOML must say the same
    assert kept == text and spec.sprt is not None and spec.sprt.elo1 == 50.0 and spec.candidates == ("py-search",)
    alone, written = parse_submission(message, "")
    assert alone == spec and spec_from_dict(tomllib.loads(written)) == spec
    empty = message_from_dict({**data, "sprt": {}})
    assert empty.HasField("sprt") and dict_from_message(empty)["sprt"] == {}
    assert "sprt = {  }" in toml_text(dict_from_message(empty))
