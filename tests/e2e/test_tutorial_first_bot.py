"""The tutorial docs/tutorials/first-bot.md, followed as a reader follows it: every shell block it marks is run, in
its order, by one bash in a fresh folder (tests/support/tutorial.py: the convention, the runner); then what the page
says you should see is asserted (the bot passes ``check-bot``, its upload becomes ready, the ladder plays tables, the
standings list both bots).

The tutorial's server is started in the background by a block that writes its pid to ``server.pid``; its last block
stops it, and this test stops it too whatever happens (``finally``). The waits are the page's own bounded loops on
the CLI's answers, never sleeps in place of a fact. The server listens at the default address, 127.0.0.1:50500, as a
reader's would: the test waits for any other tutorial's test to be done with it, and fails at once, saying so, when
something else holds it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.tutorial import Tutorial

from arena.sandbox import host

pytestmark = pytest.mark.skipif(host().bwrap_problem is not None or host().cgroups is None,
                                reason="a league builds and checks its versions in the sandbox")

TUTORIAL = Tutorial("first-bot")
SCRIPT_S = 600
"""A bound for the whole page; it takes well under a minute on a quiet machine."""


def test_the_setup_block_is_what_this_test_does() -> None:
    setup = TUTORIAL.setup()
    assert "bash scripts/setup.sh" in setup and 'PATH="$PWD/.venv/bin:$PATH"' in setup


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    assert len(TUTORIAL.blocks()) >= 10, "the page's blocks were not found: see tests/support/tutorial.py"
    ran = TUTORIAL.run_with_server(tmp_path, timeout=SCRIPT_S)
    of = ran.of

    assert "a python bot named 'my-bot'" in of("arena new-bot python my-bot")
    assert 'entry = "bot.py"' in of("cat > my-bot/bot.py")
    check = of("arena check-bot")
    assert "handshake: doubles-first" in check and re.search(r"^PASS$", check, re.M), check
    assert re.search(r"^result: seat \d \(\S+\) wins", of("arena play"), re.M)
    assert "listening on 127.0.0.1:50500" in of("python -c 'import secrets")
    assert "uploaded: version 1 of bot 'my-bot'" in of("arena league add-author you")
    versions = of("arena league versions my-bot")
    assert re.search(r"│ my-bot │ 1\s+│ ready \(active\)", versions), versions
    assert re.search(r"│ rival\s+│ 1\s+│ ready \(active\)", of("arena league add-author rival"))
    tables = re.findall(r"^table \d+: (?:my-bot-v1 vs rival-v1|rival-v1 vs my-bot-v1) \(done",
                        of("arena league watch"), re.M)
    assert len(tables) == 5, of("arena league watch")
    board = of("arena league standings")
    for bot, author in (("my-bot", "you"), ("rival", "rival")):
        assert re.search(rf"│ {re.escape(bot)}\s+│ {author}\s+│", board), board
