"""docs/architecture.md says where each concern lives, and stays true: every path it
names exists, and every module of the referee and the tournaments is named in it (the
CLI's commands, the web pages and the benchmarks by their folders)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
NAMED_BY_FOLDER = ("tournaments/cli/", "tournaments/web/", "tournaments/benchmarks/")
"""Folders the page names as a whole: each file there is one command, page or benchmark."""


def named_paths() -> set[str]:
    """Every repository path the page writes in backticks (``referee/match/clock.py``)."""
    text = DOC.read_text(encoding="utf-8")
    found = set()
    for token in re.findall(r"`([^`\s]+)`", text):
        token = token.rstrip(",.;:")
        if re.fullmatch(r"(referee|tournaments|clients|proto|tests|docs)/[\w./-]*", token):
            found.add(token)
    return found


def test_the_page_names_paths() -> None:
    names = named_paths()
    assert len(names) > 40
    assert "referee/engine/registry.py" in names


def test_every_path_the_page_names_exists() -> None:
    missing = sorted(n for n in named_paths() if not (ROOT / n).exists())
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_every_module_is_named_on_the_page() -> None:
    names = named_paths()
    unnamed = []
    for package in ("referee", "tournaments"):
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if path.name == "__init__.py" and path.stat().st_size < 2000:
                continue  # a package's docstring: its modules are named one by one
            if relative.startswith(NAMED_BY_FOLDER):
                if not any(relative.startswith(f) and f in names for f in NAMED_BY_FOLDER):
                    unnamed.append(relative)
                continue
            if relative not in names:
                unnamed.append(relative)
    assert not unnamed, f"docs/architecture.md does not say where these live: {unnamed}"
