"""League files: the sample loads, every key is checked, and each mistake gets one line naming the file and key."""

from __future__ import annotations

import copy
import os
import tomllib
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import pytest

from arena.errors import ArenaError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.league.rules.config import (
    KITS,
    ConfigError,
    LadderSettings,
    LeagueConfig,
    league_from_dict,
    league_from_text,
)
from arena.league.rules.manifest import Manifest, parse_manifest
from arena.sandbox.contain import INTERPRETER_CANDIDATES, installed_interpreters
from arena.league.files import load_league, load_leagues
from arena.league.rules.errors import ConfigError as ConfigErrorFromErrors
from arena.rules.errors import RulesError
from arena.sandbox import Limits
from arena.sandbox.build import BuildLimits
from arena.tournament.spec import SpecError, TimeSpec
from support.paths import ROOT

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

MINIMAL = 'name = "ladder"\nvariant = "draw"\n'


def write(tmp_path: Path, text: str, name: str = "league.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_sample_league_loads_with_every_table() -> None:
    league = load_league(ROOT / "leagues" / "demo.toml")
    assert league.name == "demo"
    assert league.variant == "draw" and league.players == 2
    assert league.options["target"] == 100 and league.options["hand_size"] == 7  # resolved by the rules engine
    assert league.time == TimeSpec(move_ms=2000, bank_ms=0, startup_ms=15000, first_move_ms=5000)
    assert league.limits == Limits(memory_mb=1024, pids=128)
    assert (league.upload.archive_mb, league.upload.unpacked_mb, league.upload.files) == (16, 64, 2000)
    assert league.upload.archive_bytes == 16 << 20
    assert league.build == BuildLimits(memory_mb=2048, pids=256, disk_mb=1024, tmp_mb=256, log_mb=4, cpus=1.0,
                                       timeout_s=600.0)
    assert (league.authors.uploads_per_day, league.authors.versions_kept) == (20, 10)
    assert league.kits == KITS and league.accepts_kit("rust")
    assert league.game().players == 2
    assert league.ladder == LadderSettings(concurrency=2, coverage=4, placement=3, pairing_penalty=3.0)


def test_a_minimal_file_gets_the_defaults(tmp_path: Path) -> None:
    league = load_league(write(tmp_path, MINIMAL))
    assert league == LeagueConfig(name="ladder", title="ladder", variant="draw", players=2,
                                  options=league.options, interpreters=installed_interpreters())
    assert league.kits == KITS and league.duplicate is True
    assert league.build == BuildLimits() and league.limits == Limits()


def test_a_config_is_frozen(tmp_path: Path) -> None:
    league = load_league(write(tmp_path, MINIMAL))
    with pytest.raises(FrozenInstanceError):
        league.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        league.options["target"] = 5  # type: ignore[index]


def test_kits_restrict_what_is_accepted(tmp_path: Path) -> None:
    league = load_league(write(tmp_path, MINIMAL + 'kits = ["go", "binary"]\n'))
    assert league.kits == ("go", "binary")
    assert league.accepts_kit("go") and not league.accepts_kit("python")


def stdio_manifest(interpreter: str) -> Manifest:
    return parse_manifest(f'kit = "stdio"\nentry = "bot.x"\ninterpreter = "{interpreter}"\nvariants = ["draw"]\n'
                          .encode())


def test_interpreters_say_what_the_stdio_kit_may_run(tmp_path: Path) -> None:
    league = load_league(write(tmp_path, MINIMAL + 'interpreters = ["python3", "perl", "/usr/bin/bash"]\n'))
    assert league.interpreters == ("python3", "perl", "/usr/bin/bash")
    assert league.interpreter_refusal(stdio_manifest("perl")) is None
    assert league.interpreter_refusal(stdio_manifest("/usr/bin/bash")) is None
    assert league.interpreter_refusal(stdio_manifest("cobol")) == (
        "the stdio kit's interpreter 'cobol' is not one this league allows: python3, perl, /usr/bin/bash")
    assert league.interpreter_refusal(stdio_manifest("bash")) == (  # the very word the league file says
        "the stdio kit's interpreter 'bash' is not one this league allows: python3, perl, /usr/bin/bash")
    assert league.interpreter_refusal(parse_manifest(b'kit = "go"\nentry = "m.go"\nvariants = ["draw"]\n')) is None


def test_the_default_interpreters_are_python3_and_the_candidates_in_usr_bin(tmp_path: Path) -> None:
    """python3 always (the arena's Python), then each candidate that is an executable in /usr/bin, in the
    candidates' order; a league file read by the rules alone (no machine) gets python3."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, mode in (("perl", 0o755), ("ruby", 0o644), ("bash", 0o755), ("cobol", 0o755)):
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(mode)
    (folder / "node").symlink_to(folder / "bash")
    assert installed_interpreters(str(folder)) == ("python3", "perl", "bash", "node")
    expected = tuple(["python3"] + [name for name in INTERPRETER_CANDIDATES[1:]
                                    if os.access(Path("/usr/bin") / name, os.X_OK)
                                    and (Path("/usr/bin") / name).is_file()])
    assert load_league(write(tmp_path, MINIMAL)).interpreters == expected
    assert league_from_text(MINIMAL).interpreters == ("python3",)


@pytest.mark.parametrize(("extra", "message"), [
    ('interpreters = []\n', "key 'interpreters' must list at least one interpreter like [\"python3\", \"perl\"], "
                            "got []"),
    ('interpreters = "perl"\n', "key 'interpreters' must list at least one interpreter like"),
    ('interpreters = ["perl", "perl"]\n', "key 'interpreters' must name each interpreter once, got ['perl', 'perl']"),
    ('interpreters = ["perl -w"]\n', "key 'interpreters': each must be a program's name like 'perl' (letters, "
                                     "digits, '.', '_', '+' or '-') or an absolute path like '/usr/bin/perl', got "
                                     "'perl -w'"),
    ('interpreters = [3]\n', "key 'interpreters': each must be a program's name like 'perl'"),
    ('colour = "red"\n', "unknown key 'colour' at the top level; valid keys: name, title, variant"),
    ('players = 9\n', "key 'players': variant 'draw' is played by"),
    ('[options]\ntarget = -3\n', "key 'options': "),
    ('[time]\nmove_ms = 0\n', "key 'time.move_ms' must be an integer >= 1, got 0"),
    ('[time]\nhurry = 1\n', "unknown key 'hurry' in [time]"),
    ('[limits]\nmemory_mb = 1\n', "key 'limits.memory_mb' must be an integer from 16 to"),
    ('kits = ["cobol"]\n', "key 'kits' names an unknown kit 'cobol'; valid kits: python, node"),
    ('kits = []\n', "key 'kits' must list at least one of python"),
    ('kits = ["go", "go"]\n', "key 'kits' must name each kit once"),
    ('duplicate = "yes"\n', "key 'duplicate' must be true or false, got 'yes'"),
    ('upload = 3\n', "key 'upload' must be a table with archive_mb, unpacked_mb, files, got 3"),
    ('[upload]\narchive_mb = 0\n', "key 'upload.archive_mb' must be an integer >= 1 and <= 4096, got 0"),
    ('[upload]\narchive_mb = 100\nunpacked_mb = 50\n', "key 'upload.unpacked_mb' must be at least upload.archive_mb"),
    ('[upload]\nfiles = true\n', "key 'upload.files' must be an integer"),
    ('[build]\ntime_s = 0\n', "key 'build.time_s' must be an integer >= 1"),
    ('[build]\npids = 1\n', "key 'build.pids' must be an integer from 4 to"),
    ('[build]\nnetwork = true\n', "unknown key 'network' in [build]; valid keys: time_s, disk_mb, memory_mb"),
    ('[build]\ndisk_mb = 2\n', "key 'build.disk_mb' must be an integer >= 16 and <= 65536, got 2"),
    ('[build]\ntmp_mb = 0\n', "key 'build.tmp_mb' must be an integer from 1 to"),
    ('players = 4\n[options]\nhand_size = 10\n', "key 'options': option 'hand_size' of variant 'draw' must be between"),
    ('[authors]\nuploads_per_day = 0\n', "key 'authors.uploads_per_day' must be an integer >= 1"),
    ('[authors]\nversions_kept = 1.5\n', "key 'authors.versions_kept' must be an integer"),
    ('ladder = 2\n', "key 'ladder' must be a table with concurrency, coverage, placement, pairing_penalty, got 2"),
    ('[ladder]\nconcurrency = 0\n', "key 'ladder.concurrency' must be an integer >= 1 and <= 256, got 0"),
    ('[ladder]\ncoverage = -1\n', "key 'ladder.coverage' must be an integer >= 0 and <= 10000, got -1"),
    ('[ladder]\nplacement = 2.5\n', "key 'ladder.placement' must be an integer >= 0 and <= 1000, got 2.5"),
    ('[ladder]\npairing_penalty = "high"\n', "key 'ladder.pairing_penalty' must be a number from 0 to 1000 "
                                              "(rating points a recent meeting costs a pairing), got 'high'"),
    ('[ladder]\npairing_penalty = true\n', "key 'ladder.pairing_penalty' must be a number from 0 to 1000"),
    ('[ladder]\ntables = 3\n', "unknown key 'tables' in [ladder]; valid keys: concurrency, coverage, placement, "
                               "pairing_penalty"),
])
def test_a_bad_key_is_one_line_naming_file_and_key(tmp_path: Path, extra: str, message: str) -> None:
    path = write(tmp_path, MINIMAL + extra)
    with pytest.raises(ConfigError) as caught:
        load_league(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: ") and message in text, text
    assert "\n" not in text


@pytest.mark.parametrize(("text", "message"), [
    ('variant = "draw"\n', "key 'name' is missing"),
    ('name = "Draw Ladder"\nvariant = "draw"\n', "key 'name' must be 1 to 64 lowercase letters"),
    ('name = "ladder"\n', "key 'variant' is missing"),
    ('name = "ladder"\nvariant = "chess"\n', "key 'variant': unknown variant 'chess'"),
    ('name = "ladder"\nvariant = \n', "not valid TOML"),
])
def test_name_and_variant_are_required_and_checked(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_league(write(tmp_path, text))


def test_a_missing_or_unreadable_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no such league file"):
        load_league(tmp_path / "absent.toml")
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match=r"cannot read the league file"):
        load_league(binary)


def test_two_leagues_of_a_server_need_different_names(tmp_path: Path) -> None:
    first = write(tmp_path, MINIMAL, "a.toml")
    second = write(tmp_path, 'name = "other"\nvariant = "block"\n', "b.toml")
    assert [league.name for league in load_leagues([first, second])] == ["ladder", "other"]
    again = write(tmp_path, MINIMAL, "c.toml")
    with pytest.raises(ConfigError, match=rf"{again}: league name 'ladder' is already the name of {first}"):
        load_leagues([first, again])


def test_config_errors_are_one_line_in_every_command() -> None:
    assert ConfigError is ConfigErrorFromErrors
    assert issubclass(ConfigError, SpecError) and issubclass(ConfigError, ArenaError)
    assert not issubclass(ConfigError, RulesError)


DEMO = tomllib.loads((ROOT / "leagues" / "demo.toml").read_text())
KEY_PATHS = [(key,) for key in DEMO] + [(table, key) for table, value in DEMO.items() if isinstance(value, dict)
                                        for key in value]
toml_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(KEY_PATHS), toml_values), min_size=1, max_size=3))
def test_any_value_anywhere_is_one_config_error_or_valid(flips: list[tuple[tuple[str, ...], Any]]) -> None:
    data = copy.deepcopy(DEMO)
    for path, value in flips:
        table = data
        for key in path[:-1]:
            if not isinstance(table.get(key), dict):
                table[key] = {}
            table = table[key]
        if value is None:
            table.pop(path[-1], None)  # TOML has no null: None stands for a missing key
        else:
            table[path[-1]] = value
    try:
        league = league_from_dict(data)
    except ConfigError as error:
        assert str(error) and "\n" not in str(error)
        return
    assert league.game().players == league.players and set(league.kits) <= set(KITS)
    assert league.upload.unpacked_mb >= league.upload.archive_mb >= 1 and league.build.timeout_s >= 1
