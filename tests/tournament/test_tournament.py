"""Tournaments: the file format and its messages, the schedule, a real run with its run folder, and resume after
kill -9 with nothing lost or doubled."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from arena.rules import new_game
from arena.tournament.backend import time_control_of
from arena.tournament.schedule import BY_TABLE, INTERLEAVED, Schedule
from arena.tournament.spec import SpecError, load_spec
from support.paths import ROOT
from support.processes import bot_processes
from support.waiting import wait_for
from support.tournaments import kill_run_after

RANDOM_BOT = ROOT / "bots" / "python" / "random_bot.py"
GOOD = f'''
name = "t"
variant = "block"
games = 2
[[bots]]
name = "a"
command = ["{sys.executable}", "{RANDOM_BOT}"]
[[bots]]
name = "b"
command = ["{sys.executable}", "{RANDOM_BOT}"]
'''


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda t: t.replace('games = 2', 'games = 2\ngmaes = 3'),
         "unknown key 'gmaes' at the top level; valid keys: name, variant, players, options, bots, games"),
        (lambda t: t.replace('variant = "block"', 'variant = "chess"'),
         "key 'variant': unknown variant 'chess'; valid variants: draw, block"),
        (lambda t: t.replace('variant = "block"\n', ''), "key 'variant' is missing"),
        (lambda t: t.replace('games = 2', 'games = 0'), "key 'games' must be an integer >= 1, got 0"),
        (lambda t: t.replace('games = 2', 'games = "two"'), "key 'games' must be an integer >= 1, got 'two'"),
        (lambda t: t.replace('games = 2', 'games = 2\nplayers = 9'),
         "key 'players': variant 'block' is played by 2, 3, 4 players, got 9"),
        (lambda t: t.replace('games = 2', 'games = 2\n[options]\ntarget = -3'),
         "key 'options': option 'target' of variant 'block' must be an integer >= 1, got -3"),
        (lambda t: t.replace('games = 2', 'games = 2\nconcurrency = 0'),
         "key 'concurrency' must be an integer >= 1 and <= 256, got 0"),
        (lambda t: t.replace('games = 2', 'games = 2\nfault_policy = "ignore"'),
         "key 'fault_policy' must be one of forfeit, got 'ignore'"),
        (lambda t: t.replace('games = 2', 'games = 2\n[time]\nmove_ms = -5'),
         "key 'time.move_ms' must be an integer >= 1, got -5"),
        (lambda t: t.replace('games = 2', 'games = 2\n[time]\ngrace_ms = -1'),
         "key 'time.grace_ms' must be an integer >= 0 and <= 60000, got -1"),
        (lambda t: t.replace('games = 2', 'games = 2\n[time]\ngrace_ms = 60001'),
         "key 'time.grace_ms' must be an integer >= 0 and <= 60000, got 60001"),
        (lambda t: t.replace('games = 2', 'games = 2\n[time]\ngrace_ms = 0.5'),
         "key 'time.grace_ms' must be an integer >= 0 and <= 60000, got 0.5"),
        (lambda t: t.replace('name = "b"', 'name = "a"'), "key 'bots[2].name' must be unique, got 'a' twice"),
        (lambda t: t.replace('name = "b"', 'name = "b"\naddress = "127.0.0.1:1"'),
         "bot 'b' needs exactly one of 'command' or 'address'"),
        (lambda t: t.split("[[bots]]")[0] + '[[bots]]\nname = "x"\naddress = "nowhere"\n[[bots]]\nname="y"\naddress="127.0.0.1:2"',
         "key 'bots[1].address' must be like 127.0.0.1:50051 or unix:/path, got 'nowhere'"),
        (lambda t: t.split("[[bots]]")[0], "key 'bots' must be a list of [[bots]] tables"),
        (lambda t: t.replace('games = 2', 'games = 2\nseed = true'), "key 'seed' must be a non-empty text or an integer"),
        (lambda t: t.replace('games = 2', 'games = '), "not valid TOML: "),
        (lambda t: t.replace('name = "b"', 'name = "b"\ncolour = "red"'),
         "unknown key 'colour' in [[bots]] number 2; valid keys: name, command, address, env, cwd, folder, limits, "
         "transport, protocol, skip_if_missing"),
    ],
)
@pytest.mark.fast
def test_a_malformed_file_names_key_problem_and_choices(tmp_path, change, message) -> None:
    path = write(tmp_path, change(GOOD))
    with pytest.raises(SpecError) as error:
        load_spec(path)
    assert str(error.value).startswith(f"{path}: ")
    assert message in str(error.value)


@pytest.mark.parametrize("table, grace_ms", [("", 250), ("[time]\ngrace_ms = 40", 40), ("[time]\ngrace_ms = 0", 0)])
@pytest.mark.fast
def test_the_files_grace_ms_reaches_the_referees_clock(tmp_path: Path, table: str, grace_ms: int) -> None:
    """``[time] grace_ms``: 250 when not given, 0 for none; the runner's clock waits move + bank + exactly that."""
    spec = load_spec(write(tmp_path, GOOD.replace("games = 2", f"games = 2\n{table}")))
    clock = time_control_of(spec)
    assert spec.time.grace_ms == clock.grace_ms == grace_ms
    assert clock.deadline_ms(300) == spec.time.move_ms + 300 + grace_ms


@pytest.mark.fast
def test_a_missing_program_can_be_skipped(tmp_path: Path) -> None:
    text = GOOD + '[[bots]]\nname = "c"\ncommand = "no-such-program-xyz bot.js"\nskip_if_missing = true\n'
    spec = load_spec(write(tmp_path, text))
    assert [b.name for b in spec.bots] == ["a", "b"] and spec.skipped == ("c",)


def test_run_with_a_bad_file_is_one_line_and_status_2(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace('games = 2', 'games = 0'))
    out = subprocess.run([sys.executable, "-m", "arena", "run", str(path)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == f"error: {path}: key 'games' must be an integer >= 1, got 0"


@pytest.mark.fast
def test_every_ready_tournament_file_is_valid() -> None:
    files = sorted((ROOT / "tournaments").glob("*.toml"))
    assert {f.stem for f in files} >= {"demo", "draw", "block", "la_plaza", "la_plaza_teams", "all_fives",
                                       "mexican_train"} - {"draw"}
    for path in files:
        if path.stem == "server-demo":
            continue  # it names a server's registered bots: test_server_registry.py checks it against the registry
        spec = load_spec(path)
        assert len(spec.bots) >= 2


# --- the schedule -------------------------------------------------------------------------------------------------


@pytest.mark.fast
def test_two_player_round_robin_with_duplicate_rotations() -> None:
    schedule = Schedule(3, new_game("draw", 2), games=2, duplicate=True, master_seed="m")
    games = list(schedule)
    assert len(schedule) == len(games) == 3 * 2 * 2
    # Deal set 0 of every table, then deal set 1 of every table; the rotations of a deal set side by side.
    assert [(g.seats, g.seed, g.rotation) for g in games[:6]] == [
        ((0, 1), "m/0/0", 0), ((1, 0), "m/0/0", 1), ((0, 2), "m/1/0", 0), ((2, 0), "m/1/0", 1),
        ((1, 2), "m/2/0", 0), ((2, 1), "m/2/0", 1)]
    assert games[6].seed == "m/0/1"
    assert {g.seats for g in games} == {(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)}
    assert [g.index for g in games] == list(range(12))
    assert schedule.group_size == 2 and schedule.processes_per_entrant() == 2


@pytest.mark.fast
def test_without_duplicate_deals_are_fresh_and_seats_alternate() -> None:
    games = list(Schedule(2, new_game("block", 2), games=3, duplicate=False, master_seed="s"))
    assert [(g.seats, g.seed) for g in games] == [((0, 1), "s/0/0"), ((1, 0), "s/0/1"), ((0, 1), "s/0/2")]


@pytest.mark.fast
def test_k_player_tables_rotate_combinations_through_seats() -> None:
    schedule = Schedule(4, new_game("all_fives", 3), games=1, duplicate=True, master_seed="x")
    games = list(schedule)
    assert len(games) == 4 * 3
    assert [g.seats for g in games[:3]] == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]


@pytest.mark.fast
def test_fewer_entrants_than_seats_fill_the_seats_in_turn() -> None:
    schedule = Schedule(3, new_game("mexican_train", 4), games=1, duplicate=True, master_seed="x")
    games = list(schedule)
    assert [g.seats for g in games] == [(0, 1, 2, 0), (1, 2, 0, 0), (2, 0, 0, 1), (0, 0, 1, 2)]
    assert schedule.processes_per_entrant() == 2 * 2  # two seats, in each of two lanes


@pytest.mark.fast
def test_team_variants_pair_entrants_as_teams_and_swap_them() -> None:
    schedule = Schedule(3, new_game("la_plaza_teams", 4), games=1, duplicate=True, master_seed="x")
    games = list(schedule)
    assert [g.seats for g in games[:2]] == [(0, 1, 0, 1), (1, 0, 1, 0)]
    assert len(games) == 3 * 2
    assert schedule.processes_per_entrant() == 2 * 2


@pytest.mark.parametrize("order", [INTERLEAVED, BY_TABLE])
@pytest.mark.parametrize(("variant", "players", "entrants", "candidates"), [
    ("draw", 2, 4, ()), ("draw", 2, 4, (2,)), ("mexican_train", 4, 3, ()), ("mexican_train", 4, 6, (0,)),
    ("la_plaza_teams", 4, 3, ()), ("all_fives", 3, 5, ())])
@pytest.mark.fast
def test_each_index_holds_the_game_played_there(variant: str, players: int, entrants: int,
                                                candidates: tuple[int, ...], order: str) -> None:
    """What resume checks a recorded game against (``game_at``) is, index by index, what the run plays."""
    for games, duplicate in ((3, True), (3, False)):
        schedule = Schedule(entrants, new_game(variant, players), games=games, duplicate=duplicate, master_seed="m",
                            order=order, candidates=candidates)
        assert [schedule.game_at(index) for index in range(schedule.total())] == list(schedule)
        with pytest.raises(IndexError):
            schedule.game_at(schedule.total())


@pytest.mark.fast
def test_a_huge_schedule_is_lazy() -> None:
    schedule = Schedule(50, new_game("draw", 2), games=100, duplicate=True, master_seed="big")
    assert len(schedule) == 50 * 49 // 2 * 100 * 2  # 245,000 games, counted without generating them
    started = time.perf_counter()
    first = next(iter(schedule))
    assert first.index == 0 and time.perf_counter() - started < 0.5


# --- real runs ----------------------------------------------------------------------------------------------------


def tournament_text(tag: str, games: int, concurrency: int, seed: str | None = "fixed") -> str:
    seed_line = f'seed = "{seed}"\n' if seed else ""
    return f'''
name = "t"
variant = "block"
games = {games}
duplicate = true
concurrency = {concurrency}
{seed_line}
[options]
target = 1

[[bots]]
name = "alpha"
command = ["{sys.executable}", "{RANDOM_BOT}", "--tag", "{tag}"]

[[bots]]
name = "beta"
command = ["{sys.executable}", "{RANDOM_BOT}", "--tag", "{tag}"]
'''


def arena_run(path: Path, out: Path, *extra: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def test_a_run_writes_a_complete_run_folder(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    path = write(tmp_path, tournament_text(tag, games=2, concurrency=2, seed=None))
    out = tmp_path / "run"
    result = arena_run(path, out)
    assert result.returncode == 0, result.stdout + result.stderr
    games = records(out)
    assert sorted(int(g.get("index", 0)) for g in games) == [0, 1, 2, 3]
    assert (out / "tournament.toml").read_text() == path.read_text()
    revealed = json.loads((out / "seed.json").read_text())
    commitment = (out / "commitment.txt").read_text().split()[0]
    assert commitment == revealed["commitment"] == hashlib.sha256(
        f"dominoes/v1/commit/{revealed['nonce']}/{revealed['seed']}".encode()).hexdigest()
    assert not (out / "seed.secret").exists()
    assert {g["seed"] for g in games} == {f"{revealed['seed']}/0/0", f"{revealed['seed']}/0/1"}
    bots = json.loads((out / "bots.json").read_text())
    assert [(b["name"], b["hello"]["name"]) for b in bots] == [("alpha", "py-random"), ("beta", "py-random")]
    standings = json.loads((out / "standings.json").read_text())
    assert sum(e["games"] for e in standings["entrants"]) == 8
    events = [json.loads(line)["event"] for line in (out / "arena.log").read_text().splitlines()]
    assert events[0] == "tournament_started" and events[-1] == "tournament_finished"
    assert events.count("game_finished") == 4
    # The hint is a command that works as typed: this arena was started as `python -m arena`.
    assert result.stdout.splitlines()[-1] == (f"replay a game: {sys.executable} -m arena replay {out} --game 0 "
                                              f"(or --game 0 --html FILE: a page to open in a browser)")


def test_built_in_players_are_entrants_like_any_bot(tmp_path: Path) -> None:
    """``command = "builtin:greedy"`` (as ``play`` and ``check-bot`` take it): the built-in plays its seats in the
    arena's process, with no program to find on the PATH and no process started; the same file played twice plays
    the same moves (each seat's built-in is seeded from its game's seed, not from the games it played before)."""
    tag = uuid.uuid4().hex
    text = tournament_text(tag, games=2, concurrency=2).replace(
        f'command = ["{sys.executable}", "{RANDOM_BOT}", "--tag", "{tag}"]', 'command = "builtin:greedy"', 1)
    text += '[[bots]]\nname = "gamma"\ncommand = "builtin:random"\n'
    path = write(tmp_path, text)
    moves = []
    for run in ("one", "two"):
        result = arena_run(path, tmp_path / run)
        assert result.returncode == 0, result.stdout + result.stderr
        games = records(tmp_path / run)
        assert sorted({tuple(sorted(g["seats"])) for g in games}) == [("alpha", "beta"), ("alpha", "gamma"),
                                                                      ("beta", "gamma")]
        moves.append(sorted(json.dumps([g.get("index", 0), g["seats"], [[m["action"] for m in r["moves"]]
                                                                         for r in g["rounds"]]])
                            for g in games if "beta" not in g["seats"]))  # the games of two built-ins
        bots = {b["name"]: b["processes"] for b in json.loads((tmp_path / run / "bots.json").read_text())}
        assert bots == {"alpha": 0, "beta": 2, "gamma": 0}  # duplicate: one process per rotation
    assert len(moves[0]) == 4 and moves[0] == moves[1]


@pytest.mark.fast
def test_an_unknown_built_in_player_is_one_line(tmp_path: Path) -> None:
    text = GOOD.replace(f'command = ["{sys.executable}", "{RANDOM_BOT}"]', 'command = "builtin:clever"', 1)
    with pytest.raises(SpecError) as error:
        load_spec(write(tmp_path, text))
    assert str(error.value).endswith("key 'bots[1].command': unknown built-in player 'clever'; valid players: "
                                     "random, mixed, greedy, search10, search50, search250, ismcts, ismcts16, "
                                     "ismcts64")


def test_a_finished_run_folder_is_not_overwritten(tmp_path: Path) -> None:
    path = write(tmp_path, tournament_text(uuid.uuid4().hex, games=1, concurrency=1))
    out = tmp_path / "run"
    assert arena_run(path, out).returncode == 0
    again = arena_run(path, out)
    assert again.returncode == 2
    assert again.stderr == (f"error: {out}: this folder holds a finished tournament; give --out a new folder for "
                            f"a new run\n")
    resumed = arena_run(path, out, "--resume")
    assert resumed.returncode == 2 and "this tournament is finished" in resumed.stderr






def test_resume_after_kill_9_loses_and_doubles_nothing(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    path = write(tmp_path, tournament_text(tag, games=60, concurrency=3))
    out = tmp_path / "run"
    records_file = out / "games.jsonl"
    before = kill_run_after(path, out, tag, 5, ROOT)
    assert before.endswith(b"\n")
    complete = before.count(b"\n")
    assert 5 <= complete < 120, "the run must be interrupted in the middle"
    with open(records_file, "ab") as f:  # a write cut short by the crash
        f.write(b'{"recordVersion":1,"index":"9')

    resumed = arena_run(path, out, "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "dropped a torn last record line" in resumed.stdout
    assert f"{complete} games were already recorded" in resumed.stdout
    games = records(out)
    indices = [int(g.get("index", 0)) for g in games]
    assert sorted(indices) == list(range(120)), "every game exactly once"
    assert [json.loads(line) for line in before.decode().splitlines()] == games[:complete], "kept as they were"
    assert not bot_processes(tag)

    # An uninterrupted run of the same file deals exactly the same games.
    fresh = tmp_path / "fresh"
    assert arena_run(path, fresh).returncode == 0
    by_index = {int(g.get("index", 0)): g for g in records(fresh)}
    assert len(by_index) == 120
    for game in games:
        twin = by_index[int(game.get("index", 0))]
        assert (game["seed"], game["seats"], game["rounds"][0]["deal"]) == (
            twin["seed"], twin["seats"], twin["rounds"][0]["deal"])


def test_ctrl_c_stops_cleanly_and_the_run_resumes(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    path = write(tmp_path, tournament_text(tag, games=60, concurrency=3))
    out = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-m", "arena", "run", str(path), "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    records_file = out / "games.jsonl"
    wait_for(lambda: records_file.exists() and records_file.read_bytes().count(b"\n") >= 3, 120, "three games")
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr and "--resume" in stdout
    wait_for(lambda: not bot_processes(tag), 20, "the bots to be stopped")
    assert records_file.read_bytes().endswith(b"\n")
    resumed = arena_run(path, out, "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert sorted(int(g.get("index", 0)) for g in records(out)) == list(range(120))


BAD_BOT = ROOT / "tests" / "bots" / "bad_bot.py"


def test_a_crash_under_concurrency_is_only_a_fault(tmp_path: Path) -> None:
    text = tournament_text(uuid.uuid4().hex, games=10, concurrency=8).replace(
        f'"{RANDOM_BOT}", "--tag"', f'"{BAD_BOT}", "--mode", "exit_mid", "--tag"', 1)
    path = write(tmp_path, text)
    out = tmp_path / "run"
    result = arena_run(path, out)
    assert result.returncode == 0, result.stdout + result.stderr
    games = records(out)
    assert sorted(int(g.get("index", 0)) for g in games) == list(range(20))
    kinds = {f["kind"] for g in games for f in g.get("faults", ())}
    assert "crashed" in kinds
    bots = json.loads((out / "bots.json").read_text())
    assert bots[0]["starts"] > 1, "the crashed bot is restarted"


def test_resume_replays_an_incomplete_record(tmp_path: Path) -> None:
    path = write(tmp_path, tournament_text(uuid.uuid4().hex, games=2, concurrency=2))
    out = tmp_path / "run"
    assert arena_run(path, out).returncode == 0
    lines = (out / "games.jsonl").read_text().splitlines()
    kept = [line for line in lines if int(json.loads(line).get("index", 0)) != 3]
    (out / "games.jsonl").write_text("\n".join(kept + ['{"recordVersion":1,"index":"3"}']) + "\n")
    (out / "seed.json").rename(out / "seed.json.bak")  # pretend the run is unfinished
    secret = json.loads((out / "seed.json.bak").read_text())
    (out / "seed.secret").write_text(json.dumps({"seed": secret["seed"], "nonce": secret["nonce"]}))
    resumed = arena_run(path, out, "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "not a complete game record: no seats" in resumed.stdout
    complete = [g for g in records(out) if "result" in g]
    assert sorted(int(g.get("index", 0)) for g in complete) == [0, 1, 2, 3]


def test_resume_refuses_changed_entrants(tmp_path: Path) -> None:
    path = write(tmp_path, tournament_text(uuid.uuid4().hex, games=1, concurrency=1))
    out = tmp_path / "run"
    assert arena_run(path, out).returncode == 0
    (out / "entrants.json").write_text('["alpha", "gamma", "beta"]\n')
    (out / "seed.secret").write_text('{"seed": "x", "nonce": "y"}')
    resumed = arena_run(path, out, "--resume")
    assert resumed.returncode == 2
    assert "the entrants differ from this run's start (alpha, gamma, beta; now alpha, beta)" in resumed.stderr


@pytest.mark.parametrize("bad_out, message", [("file", "cannot write the run folder"),
                                              ("/proc/nope", "cannot write the run folder")])
def test_an_unwritable_run_folder_is_one_line(tmp_path: Path, bad_out: str, message: str) -> None:
    path = write(tmp_path, tournament_text(uuid.uuid4().hex, games=1, concurrency=1))
    target = tmp_path / "a-file" if bad_out == "file" else Path(bad_out)
    if bad_out == "file":
        target.write_text("x")
    result = arena_run(path, target)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.fast
def test_a_schedule_too_large_to_finish_is_refused(tmp_path: Path) -> None:
    bots = "".join(f'[[bots]]\nname = "b{i}"\naddress = "127.0.0.1:{1000 + i}"\n' for i in range(200))
    path = write(tmp_path, f'variant = "mexican_train"\nplayers = 12\ngames = 1\n{bots}')
    with pytest.raises(SpecError, match="key 'games': this tournament would play .* games .*; at most 10,000,000"):
        load_spec(path)


def test_a_timed_out_bot_restarts_after_its_games(tmp_path: Path) -> None:
    text = tournament_text(uuid.uuid4().hex, games=3, concurrency=2).replace(
        f'"{RANDOM_BOT}", "--tag"', f'"{BAD_BOT}", "--mode", "hang", "--tag"', 1).replace(
        "[options]", "[time]\nmove_ms = 200\n\n[options]")
    path = write(tmp_path, text)
    out = tmp_path / "run"
    result = arena_run(path, out)
    assert result.returncode == 0, result.stdout + result.stderr
    games = records(out)
    assert len(games) == 6 and all(f["kind"] == "timeout" for g in games for f in g.get("faults", ()))
    alpha = json.loads((out / "bots.json").read_text())[0]
    # Each of its two processes (one per rotation of a deal set) started once, plus one start per restart.
    assert alpha["processes"] == 2
    assert alpha["restarts_after_timeouts"] >= 1 and alpha["starts"] == alpha["restarts_after_timeouts"] + 2
