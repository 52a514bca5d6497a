"""An entrant's first day in a real browser (Chromium), against a real ``tavolo arena serve``
over TLS whose worker builds in the sandbox and whose ladder plays: sign in with a token,
submit a bot whose build fails, read why in its build log, submit the fix, see it
validated, rated, and climb above the two random bots already on the ladder."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.sandbox.probe import sandbox_problem
from tests.test_arena_account import ARENA, make_certificate, start_serve
from tests.test_arena_ladder import ready
from tournaments.arena.archives import pack
from tournaments.arena.store import ArenaStore

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=str(sandbox_problem()))
CLIMB_SECONDS = 420
"""Time for the fixed bot to be built, validated and rated above both random bots."""
BROKEN_BUILD = (
    '["sh", "-c", "echo compiling bot.c; echo \'bot.c:7: error: expected ; before }\' >&2; exit 1"]'
)
FIXED_BUILD = '["sh", "-c", "echo making the bot; cp template.py bot.py"]'
HEURISTIC = "from tavolo_bot.bots.heuristic import main\nmain()\n"


def archive(folder: Path, build: str) -> Path:
    """``folder`` holding a bot built by ``build``, packed as ``folder``.tar.gz."""
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "mybot"\ncommand = ["{sys.executable}", "bot.py"]\nbuild = {build}\n',
        encoding="utf-8",
    )
    (folder / "template.py").write_text(HEURISTIC, encoding="utf-8")
    path = folder.with_name(folder.name + ".tar.gz")
    path.write_bytes(pack(folder))
    return path


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[tuple[str, str]]:
    (tmp_path / "arena.toml").write_text(ARENA, encoding="utf-8")
    make_certificate(tmp_path)
    store = ArenaStore(tmp_path / "arena.db")
    _, token = store.invite("alice")
    for name in ("bob", "carol"):
        entrant, _ = store.invite(name)
        ready(store, entrant, tmp_path / name, "random")
    store.close()
    serve, url = start_serve(tmp_path, tls=True)
    try:
        yield url, token
    finally:
        serve.terminate()
        serve.wait(15)


def state_of(page: Any, number: int) -> str:
    return str(page.get_attribute(f"#submission-{number}", "data-state"))


def wait_for_state(page: Any, number: int, states: set[str], seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while (state := state_of(page, number)) not in states:
        assert time.monotonic() < deadline, f"submission {number} still {state}"
        time.sleep(1)
        page.reload()
    return state


def submit(page: Any, path: Path) -> int:
    page.set_input_files("input[name=archive]", str(path))
    page.click("#submit button[type=submit]")
    page.wait_for_selector("#notice")
    notice = page.inner_text("#notice")
    assert "received" in notice, notice
    return int(notice.split()[1])


def test_sign_in_submit_a_broken_build_fix_it_and_climb(
    arena: tuple[str, str], browser: Any, tmp_path: Path
) -> None:
    url, token = arena
    context = browser.new_context(ignore_https_errors=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(url + "account")
        assert page.url.endswith("/signin")
        page.fill("input[name=token]", token)
        page.click("#signin button[type=submit]")
        page.wait_for_selector("#submit")
        assert "alice: your submissions" in page.inner_text("h1")
        cookies = {c["name"]: c for c in context.cookies()}
        session = cookies["__Host-tavolo_session"]
        assert session["httpOnly"] and session["secure"] and session["sameSite"] == "Strict"
        # The page's script cannot read the session cookie.
        assert "tavolo_session" not in page.evaluate("document.cookie")

        broken = submit(page, archive(tmp_path / "broken", BROKEN_BUILD))
        assert wait_for_state(page, broken, {"failed", "ready"}, 120) == "failed"
        section = f"#submission-{broken}"
        assert "build" in page.inner_text(f"{section} .reason")
        page.click(f'{section} details[data-log="build"] summary')
        log = page.inner_text(f'{section} details[data-log="build"] pre')
        assert "expected ; before }" in log and "compiling bot.c" in log

        fixed = submit(page, archive(tmp_path / "fixed", FIXED_BUILD))
        assert wait_for_state(page, fixed, {"failed", "ready"}, 180) == "ready", page.inner_text(
            f"#submission-{fixed}"
        )
        # Rated, and above both random bots on the public leaderboard.
        deadline = time.monotonic() + CLIMB_SECONDS
        while True:
            page.goto(url)
            ranked = page.eval_on_selector_all(
                "#leaderboard tbody tr", "rows => rows.map(r => Number(r.dataset.submission))"
            )
            if len(ranked) == 3 and ranked[0] == fixed:
                break
            assert time.monotonic() < deadline, f"the fixed bot did not climb: {ranked}"
            time.sleep(3)
        page.click(f'a[href="/submissions/{fixed}"]')
        page.wait_for_selector("#elo")
        assert "rank 1" in page.inner_text("#elo")
        # Its rating after each meeting since it was first fitted.
        points = page.eval_on_selector_all(
            "#history tbody tr", "rows => rows.map(r => Number(r.cells[1].textContent))"
        )
        assert points and all(p == p for p in points)  # numbers, not NaN
        if len(points) > 1:
            assert page.locator("#curve polyline").count() == 1
        # Signing out in the page ends the session: the account asks for a sign-in again.
        page.goto(url + "account")
        page.click("#signout")
        page.goto(url + "account")
        assert page.url.endswith("/signin")
    finally:
        context.close()
    assert not errors, errors
