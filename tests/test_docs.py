"""The documentation stays true to the repository: docs/ builds with ``mkdocs build --strict`` (a broken link or
anchor fails it), README.md's relative links resolve, every ``docs/<page>.md#<anchor>`` cited in code, tests or docs
exists in the built site, and no tracked file cites a document that is not in the repository (the private rule
notes and design notes the project started from, or the original rule texts by their numbers): a reader of a clone
must be able to open everything a comment points to.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

OUTSIDE_DOCUMENTS = re.compile(r"(?<![\w/.-])(?:RULES|DESIGN|STYLE)\.md\b|(?i:\bseeds? 0\d\d\b)")
"""Names of documents a clone does not hold: the notes the project began with and the numbered rule texts."""

HISTORY = re.compile(r"(?i)\bissues? #?\d+\b|\b(?:part|phase|milestone|sprint) \d+\b|\*\*Changed:?\*\*")
"""How a text tells the project's own history: an issue's number, a numbered part or phase of the work, a "Changed:"
note. A reader of the docs, the code or a file cannot follow them; the history is CHANGELOG.md's alone."""

MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
DOCS_ANCHOR = re.compile(r"\bdocs/([\w/-]+)\.md#([\w-]+)")


def tracked_files() -> list[Path]:
    """The files git tracks (what a clone holds), text files only."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = []
    for name in out.decode().split("\0"):
        path = ROOT / name
        if name and path.is_file() and b"\0" not in path.read_bytes()[:4096]:
            files.append(path)
    return files


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs/ built once with --strict into a temporary folder (never into the work tree)."""
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=600,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    return out


def page_ids(site: Path, page: str) -> set[str]:
    """Every element id of a built page (headings' anchors included)."""
    html = (site / ("" if page == "index" else page) / "index.html").read_text()
    return set(re.findall(r'\bid="([^"]+)"', html))


def test_docs_build_strictly_with_every_page_in_nav(site: Path) -> None:
    pages = sorted(p.relative_to(ROOT / "docs").with_suffix("").as_posix() for p in (ROOT / "docs").rglob("*.md"))
    assert "reference/rules" in pages and "index" in pages
    for page in pages:
        assert page_ids(site, page), f"docs/{page}.md was not built"


def test_no_tracked_file_cites_a_document_outside() -> None:
    found = []
    for path in tracked_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE_DOCUMENTS.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not found, "cite a page of the repository instead:\n" + "\n".join(found)


PAGE_LIMIT = 30_000
"""The most characters a page of docs/ may have: a page longer than this holds more than one reader's question."""


@pytest.mark.fast
def test_no_page_of_the_docs_is_longer_than_the_limit() -> None:
    long = {str(path.relative_to(ROOT)): size for path in sorted((ROOT / "docs").rglob("*.md"))
            if (size := len(path.read_text())) > PAGE_LIMIT}
    assert long == {}


def test_no_file_but_the_changelog_tells_history() -> None:
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}" for path in tracked_files()
             if path.name != "CHANGELOG.md"
             for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1) if HISTORY.search(line)]
    assert found == []


def test_every_relative_readme_link_resolves(site: Path) -> None:
    broken = []
    for target in MARKDOWN_LINK.findall((ROOT / "README.md").read_text()):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        if path and not (ROOT / path).exists():
            broken.append(target)
        elif anchor and path.startswith("docs/") and path.endswith(".md"):
            if anchor not in page_ids(site, path[len("docs/"):-len(".md")]):
                broken.append(target)
    assert not broken, f"README.md links to what is not there: {broken}"


def test_every_cited_docs_anchor_exists(site: Path) -> None:
    """Tests and comments point to docs/<page>.md#<anchor> links; each anchor must be in the built page."""
    missing = []
    cited = 0
    for path in tracked_files():
        for page, anchor in DOCS_ANCHOR.findall(path.read_text(errors="replace")):
            cited += 1
            if not (ROOT / "docs" / f"{page}.md").exists() or anchor not in page_ids(site, page):
                missing.append(f"{path.relative_to(ROOT)}: docs/{page}.md#{anchor}")
    assert cited, "the rule tests cite docs/reference/rules.md anchors: none found"
    assert not missing, "anchors that are not there:\n" + "\n".join(missing)


ORGANISER_TUTORIAL = ROOT / "docs" / "tutorials" / "run-a-competition.md"
ORGANISER_READING = 40_000
"""What an organiser reads for a first competition: the tutorial and the pages it sends them to on the way."""


def pages_for_the_first_run(tutorial: Path) -> set[Path]:
    """The docs pages a tutorial links to before its closing "Where next" (links there are for after the first run)."""
    body = tutorial.read_text().split("\n## Where next", 1)[0]
    pages = set()
    for target in MARKDOWN_LINK.findall(body):
        path = target.split("#", 1)[0]
        if path.endswith(".md") and "://" not in path:
            pages.add((tutorial.parent / path).resolve())
    return pages


@pytest.mark.fast
def test_the_organisers_first_reading_is_short() -> None:
    pages = pages_for_the_first_run(ORGANISER_TUTORIAL)
    assert pages, "the tutorial links to no page: the count below would measure only itself"
    sizes = {page.relative_to(ROOT).as_posix(): len(page.read_text()) for page in {ORGANISER_TUTORIAL, *pages}}
    assert sum(sizes.values()) < ORGANISER_READING, sizes
