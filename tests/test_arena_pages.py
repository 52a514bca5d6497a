"""The arena's public pages, served by a real ``tavolo arena serve`` whose ladder plays for
real, read by httpx and by Chromium: the leaderboard, a submission's page with who it beat
and lost to and its games, an entrant's page, a game's replay; nothing private shown."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from referee.sandbox.probe import sandbox_problem
from tests.test_arena_ladder import ARENA, ready
from tournaments.arena.store import ArenaStore, State

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=str(sandbox_problem()))
TAVOLO = Path(sys.executable).with_name("tavolo")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}


class Site:
    def __init__(self, url: str, failed: int, ids: list[int]) -> None:
        self.url, self.failed, self.ids = url, failed, ids


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("arena-pages")
    (tmp / "arena.toml").write_text(ARENA, encoding="utf-8")
    store = ArenaStore(tmp / "arena.db")
    ids = []
    # Four rated: a field of the size users run (a 4-entry table once broke a report).
    for name, module in (
        ("alice", "heuristic"),
        ("bob", "random"),
        ("carol", "random"),
        ("erin", "heuristic"),
    ):
        entrant, _ = store.invite(name)
        ids.append(ready(store, entrant, tmp / name, module))
    dave, _ = store.invite("dave")
    failed = ready(store, dave, tmp / "dave", "random")
    store.set_state(failed, State.FAILED, "conformance failed: SECRET-DETAIL of dave's bot")
    store.close()
    serve = subprocess.Popen(
        [str(TAVOLO), "arena", "serve", str(tmp / "arena.toml"), "--db", str(tmp / "arena.db"),
         "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    try:
        assert serve.stdout is not None
        url = serve.stdout.readline().split()[-1]
        deadline = time.monotonic() + 240
        with httpx.Client(base_url=url, timeout=30) as http:
            # Four ready submissions: the ladder meets each new one first, at once.
            while len(http.get("/api/v1/leaderboard").json()["submissions"]) < 4:
                assert time.monotonic() < deadline, "the ladder rated nobody"
                time.sleep(0.5)
        yield Site(url, failed, ids)
    finally:
        serve.terminate()
        serve.wait(15)


def test_the_pages_over_http(site: Site) -> None:
    with httpx.Client(base_url=site.url, timeout=30) as http:
        board = http.get("/")
        assert board.status_code == 200 and board.headers["content-type"].startswith("text/html")
        ranked = re.findall(r'<tr data-submission="(\d+)" data-entrant="(\w+)">', board.text)
        assert {int(n) for n, _ in ranked} == set(site.ids)
        # Not rated: shown as such, its reason kept for its entrant alone.
        failed = http.get(f"/submissions/{site.failed}")
        assert failed.status_code == 200 and "not rated" in failed.text
        assert "SECRET-DETAIL" not in failed.text and "failed" not in failed.text
        assert "SECRET-DETAIL" not in http.get("/entrants/dave").text
        one = http.get(f"/submissions/{site.ids[0]}")
        assert 'id="opponents"' in one.text and "/games/" in one.text
        game = re.search(r'href="(/games/\d+/\d+)"', one.text)
        assert game is not None
        replay = http.get(game.group(1))
        # The record's lines, each a JSON text inside the page's JSON list.
        assert replay.status_code == 200 and '{\\"type\\":\\"game\\"' in replay.text
        for missing in ("/submissions/9999", "/entrants/nobody", "/games/9999/1"):
            answer = http.get(missing)
            assert answer.status_code == 404 and 'id="missing"' in answer.text


def test_the_pages_in_a_browser(site: Site, page: Any) -> None:
    page.goto(site.url)
    rows = page.eval_on_selector_all(
        "#leaderboard tbody tr", "rows => rows.map(r => Number(r.dataset.submission))"
    )
    assert sorted(rows) == sorted(site.ids)
    ranks = page.eval_on_selector_all(
        "#leaderboard tbody tr td:first-child", "cells => cells.map(c => Number(c.textContent))"
    )
    assert ranks == list(range(1, len(rows) + 1))
    page.click(f'a[href="/submissions/{rows[0]}"]')
    page.wait_for_selector("#opponents tbody tr")
    played = page.eval_on_selector_all(
        "#opponents tbody tr",
        "rows => rows.map(r => [...r.cells].slice(1).map(c => Number(c.textContent)))",
    )
    games = page.locator("#games tbody tr").count()
    assert sum(sum(r) for r in played) == games > 0
    page.click("#games a >> nth=0")
    page.wait_for_selector("[data-card]")
    text = page.locator("main").inner_text()
    for word in ("undefined", "NaN", "[object"):
        assert word not in text
