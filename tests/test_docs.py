"""The user documentation stays short, generated where it can drift, and whole.

README is for users (at most 300 lines and 3 dates: dated narration goes to the lab notebooks);
`docs/cli.md` is what `docs/gen_cli.py` writes from the parsers now; every page mkdocs.yml's nav
names exists. No network, no `../shared`, no mkdocs needed (the strict build is `make docs`).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from jobdedup.pipeline.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DATE = re.compile(r"20\d\d-\d\d-\d\d")
# Written by the decision-policy part of issue 51; the nav names it before it exists.
MAY_BE_MISSING: set[str] = set()


def _gen_cli() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _command_names(parser: argparse.ArgumentParser) -> list[str]:
    """Every command and subcommand as typed: 'jobdedup dedup', 'jobdedup index add', ..."""
    names = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names += [sub.prog, *_command_names(sub)]
    return names


def nav_pages(text: str) -> list[str]:
    """The Markdown files named in the `nav:` block of mkdocs.yml (read without a YAML library).

    Example:
        >>> nav_pages("site_name: x\\nnav:\\n  - Home: index.md\\n  - Guide:\\n      - cli.md\\ntheme: y\\n")
        ['index.md', 'cli.md']
    """
    pages: list[str] = []
    in_nav = False
    for line in text.splitlines():
        if re.match(r"^nav:\s*$", line):
            in_nav = True
            continue
        if in_nav and line.strip() and not line.startswith((" ", "-", "#")):
            break
        if in_nav:
            found = re.match(r"^\s*-\s*(?:[^:]+:\s*)?(\S+\.md)\s*$", line)
            if found:
                pages.append(found.group(1))
    return pages


def test_readme_is_short_and_nearly_undated() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    dates = DATE.findall(text)
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move detail to docs/ (at most 300)"
    assert len(dates) <= 3, (
        f"README.md names {len(dates)} dates {dates}; at most 3 (history: docs/QUALITY_LOG.md)"
    )


def test_cli_page_is_what_the_generator_writes() -> None:
    committed = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert committed == _gen_cli().render(), "docs/cli.md is stale: run .venv/bin/python docs/gen_cli.py"


def test_cli_page_names_every_command() -> None:
    names = _command_names(build_parser())
    assert "jobdedup index add" in names and len(names) >= 12
    headings = set(re.findall(r"^#+ (.+)$", (DOCS / "cli.md").read_text(encoding="utf-8"), re.M))
    missing = [name for name in names if name not in headings]
    assert missing == []


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """`parser` and every parser below it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def test_cli_page_names_every_option() -> None:
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    options = {
        option
        for parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
        for option in action.option_strings
    }
    assert {"--engine", "--token-file", "--ids"} <= options
    assert [option for option in sorted(options) if f"`{option}`" not in page] == []


def test_every_nav_page_exists() -> None:
    pages = nav_pages((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert {"index.md", "cli.md", "architecture.md", "decisions.md"} <= set(pages)
    missing = [page for page in pages if not (DOCS / page).is_file() and page not in MAY_BE_MISSING]
    assert missing == []


@pytest.mark.parametrize("page", sorted(MAY_BE_MISSING))
def test_pages_written_elsewhere_exist_or_are_skipped(page: str) -> None:
    if not (DOCS / page).is_file():
        pytest.skip(f"docs/{page} is not written yet")
    assert (DOCS / page).read_text(encoding="utf-8").strip()


def test_docs_pins_match_the_makefile() -> None:
    """`make docs` installs the versions pyproject's `docs` extra names."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]["docs"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = makefile[makefile.index("\ndocs:") :]
    assert extra and all(pin in target for pin in extra)
