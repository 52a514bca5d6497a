"""A real headless browser for the tests: Debian's chromium, driven by Playwright.

Playwright's own browser download cannot run here, so the browser is the system's
``chromium`` (or ``$TAVOLO_CHROMIUM``), started with ``executable_path``. With
``TAVOLO_REQUIRE_BROWSER=1`` (CI) a machine without it fails every browser test;
elsewhere they are skipped with the reason.

Playwright's sync API keeps an event loop running in the test's thread while the browser
is open, so ``asyncio.run`` cannot be called there meanwhile: a browser test runs the
commands that play over gRPC (``tavolo tournament run``, ``tavolo play``) as subprocesses
(``tests.test_cli.run``), not in-process. The browser lives for one test module, so the
modules after it get their thread back.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

REQUIRED = os.environ.get("TAVOLO_REQUIRE_BROWSER") == "1"


def chromium_path() -> str | None:
    """The chromium to drive, or None if this machine has none."""
    given = os.environ.get("TAVOLO_CHROMIUM")
    if given:
        return given
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _missing(problem: str) -> None:
    if REQUIRED:
        pytest.fail(f"{problem} (TAVOLO_REQUIRE_BROWSER=1: no browser test may be skipped)")
    pytest.skip(problem)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One headless chromium for the test module."""
    path = chromium_path()
    if path is None:
        _missing("no chromium here: apt-get install chromium (or set TAVOLO_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed: make setup installs it")
    with sync_playwright() as playwright:
        # As root, chromium's own sandbox cannot start; the page is our own file anyway.
        launched = playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A fresh page (its own context) that reports the page's JavaScript errors at the end."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield tab
    finally:
        context.close()
    assert not errors, f"JavaScript errors in the page: {errors}"


def screenshot(page: object, folder: Path, name: str) -> Path:
    """Save the whole page as ``folder/screenshots/NAME.png`` (the test's output folder)."""
    out = folder / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    return path
