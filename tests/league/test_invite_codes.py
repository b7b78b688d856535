"""An invite code is typed on a command line (``arena league sign-up TEAM --invite CODE``): it must never read as an
option, and it must be as hard to guess as a token of its length allows."""

from __future__ import annotations

import re

import pytest

from arena.league.authors import invite_code

pytestmark = pytest.mark.fast


def test_invite_codes_are_letters_and_digits_only() -> None:
    codes = [invite_code() for _ in range(2000)]  # a URL-safe token would hold '-' or '_' many times over here
    assert all(re.fullmatch(r"[A-Za-z0-9]{22}", code) for code in codes), [c for c in codes if "-" in c or "_" in c]
    assert len(set(codes)) == len(codes)
