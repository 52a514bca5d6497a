"""The live view (``--web``): a running tournament and a running referee, in a real browser.

Everything is real: the ``tavolo`` command as its own process, its referee over gRPC, bot
processes (``tests/bots/scripted.py`` through a ``cmd:`` entry, slowed down so that a
deal can be watched as it is played), SQLite, and headless chromium (tests/browser.py).
What the page shows is checked against the stored records and ``tavolo tournament
table``, never against figures written in here.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

import pytest

from tests.bots.harness import SCRIPTED
from tests.browser import screenshot
from tests.network import free_port, other_address
from tests.test_cli import assert_one_error, tavolo
from tournaments.storage import Store
from tournaments.web.live_view import LiveViewError, WebAddress, parse_web

TAVOLO = Path(sys.executable).with_name("tavolo")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
WAIT_MS = 60_000
"""The longest any one thing on the page is waited for (a slow machine, not a target)."""


def slow_bot(sleep_ms: int) -> str:
    """A ``cmd:`` entry that plays legal cards, each after ``sleep_ms``."""
    argv = [sys.executable, str(SCRIPTED), "--mode", "late", "--at", "1", "--times", "1000000",
            "--sleep-ms", str(sleep_ms)]  # fmt: skip
    return "cmd:" + shlex.join(argv)


def tournament_file(tmp_path: Path, *, sleep_ms: int = 40, games: int = 2, deals: int = 2) -> Path:
    """Three entries, one of them slow: its two matches take a few seconds each."""
    path = tmp_path / "live.toml"
    path.write_text(
        f"""name = "live-cup"
seed = "live-1"
format = "round-robin"
concurrency = 2

[game]
preset = "tressette"
deals = {deals}

[match]
games = {games}
sandbox = "off"

[[entry]]
name = "slow"
bot = {json.dumps(slow_bot(sleep_ms))}

[[entry]]
name = "heuristic"
bot = "heuristic"

[[entry]]
name = "random"
bot = "random"
""",
        encoding="utf-8",
    )
    return path


class Lines:
    """A process's output read in a thread of its own, so a test can wait for a line."""

    def __init__(self, stream: IO[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, prefix: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line {prefix!r} in {timeout} s: {self.seen}") from None
            if line is None:
                raise AssertionError(f"the output ended without {prefix!r}: {self.seen}")
            self.seen.append(line)
            if line.startswith(prefix):
                return line

    def rest(self) -> list[str]:
        """Every line until the stream ends (the process has ended)."""
        while (line := self._queue.get(timeout=60)) is not None:
            self.seen.append(line)
        return self.seen


# The page's DOM, recorded at every change: per snapshot, the followed table, its deal in
# progress, every card code anywhere in the page outside the finished deals (by text, in
# the serialised DOM: attributes, text, everything), and the hands shown for finished deals.
OBSERVER = r"""
() => {
  window.__snaps = [];
  const CARD = /(?<![A-Za-z0-9])([32AKQJ7654][DCSB])(?![A-Za-z0-9])/g;
  let last = "";
  function snap() {
    const follow = document.querySelector("#follow[data-table]");
    if (!follow) return;
    const copy = document.documentElement.cloneNode(true);
    copy.querySelectorAll('[data-state="scored"], [data-state="cut"]').forEach((n) => n.remove());
    const cards = [...new Set([...copy.outerHTML.matchAll(CARD)].map((m) => m[1]))].sort();
    const live = follow.querySelector('.deal[data-state="playing"]');
    const finished = [...follow.querySelectorAll('.deal[data-state="scored"]')].map((d) => ({
      game: Number(d.dataset.game), deal: Number(d.dataset.deal),
      hands: [...d.querySelectorAll("tr.hand")].map((h) =>
        [...h.querySelectorAll("[data-card]")].map((c) => c.dataset.card)),
    }));
    const plays = live
      ? [...live.querySelectorAll(".play [data-card]")].map((c) => c.dataset.card) : [];
    const item = {
      table: follow.dataset.table, entries: follow.dataset.entries,
      game: live ? Number(live.dataset.game) : null, deal: live ? Number(live.dataset.deal) : null,
      cards: cards, plays: plays, finished: finished,
    };
    const text = JSON.stringify(item);
    if (text !== last) { window.__snaps.push(item); last = text; }
  }
  new MutationObserver(snap).observe(document.documentElement,
    { subtree: true, childList: true, characterData: true, attributes: true });
  snap();
}
"""

PUBLIC_CARDS = {
    "play": lambda line: [line["card"]],
    "declare": lambda line: list(line["cards"]),
    "draw": lambda line: [line["card"]],
    "call": lambda line: [line["card"]],
    "split": lambda line: list(line["take"]),
}
"""Record lines whose spectator event shows cards, and the cards it shows."""


def deal_of(
    record: list[dict[str, Any]], deal: int
) -> tuple[list[list[str]], list[set[str]], list[str]]:
    """A deal's hands, the cards public after each of its public lines (from none), and
    the cards played, in order."""
    start = next(
        i for i, line in enumerate(record) if line["type"] == "deal" and line["deal"] == deal
    )
    hands = record[start]["hands"]
    shown: set[str] = set()
    steps = [set(shown)]
    played = []
    for line in record[start + 1 :]:
        if line["type"] in ("deal", "score", "redeal", "result"):
            break
        if line["type"] in PUBLIC_CARDS:
            shown |= set(PUBLIC_CARDS[line["type"]](line))
            steps.append(set(shown))
        if line["type"] == "play":
            played.append(line["card"])
    return hands, steps, played


def look(page: Any, folder: Path, name: str) -> None:
    """Save a screenshot of the page, and check that it shows no value gone wrong."""
    screenshot(page, folder, name)
    text = page.locator("main").inner_text()
    for word in ("null", "undefined", "NaN", "[object"):
        assert word not in text, f"{name}: {word!r} on the page"


def check_event_stream(url: str) -> None:
    """``/events`` is an event stream that opens with a snapshot; ``/state`` is that as JSON."""
    with urllib.request.urlopen(url + "events", timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        assert response.readline() == b"retry: 2000\n"
        assert response.readline() == b"event: snapshot\n"
        data = response.readline().decode()
        assert data.startswith("data: ")
        snapshot = json.loads(data[len("data: ") :])
    assert snapshot["page"]["heading"] == "live-cup" and snapshot["page"]["tournament"]
    with urllib.request.urlopen(url + "state", timeout=10) as response:
        assert response.headers["Content-Type"] == "application/json"
        state = json.loads(response.read())
    assert state.keys() == snapshot.keys()


def opened_mid_run(page: Any, url: str) -> None:
    """Once a game has finished: the page, opened with its event stream cut off, shows the
    standings it was served with; the leaders read in rank order with their Elo; the
    standings fit the page; the suits have a legend."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        with urllib.request.urlopen(url + "state", timeout=10) as response:
            state = json.loads(response.read())
        if state["progress"] and state["progress"]["done"] >= 1 and state["standings"]:
            break
        assert time.monotonic() < deadline, "no game finished"
        time.sleep(0.2)
    page.route("**/events", lambda route: route.abort())
    try:
        # The standings are read from the database as it is written: under load a page may
        # be served between two reads that saw none yet, so it is opened again meanwhile.
        while True:
            page.goto(url)
            rows = page.eval_on_selector_all(
                "#standings tbody tr", "rows => rows.map(r => r.dataset.entry)"
            )
            if rows or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert rows, "the standings were not shown from the page's own snapshot"
        assert page.locator("#progress .live-count").count() == 1
        leaders = page.eval_on_selector_all(
            "#progress .leaders strong", "s => s.map(x => x.textContent)"
        )
        assert leaders == rows[: len(leaders)], (leaders, rows)
        said = page.locator("#progress .leaders").text_content() or ""
        assert " Elo (" in said and "% score)" in said, said
        fits = page.evaluate(
            "() => { const b = document.getElementById('standings');"
            " return b.scrollWidth <= b.clientWidth; }"
        )
        assert fits, "the standings overflow their column"
        legend = page.locator(".suits-legend").text_content() or ""
        assert "D denari, C coppe, S spade, B bastoni" in legend
    finally:
        page.unroute("**/events")


def test_the_live_view_follows_a_running_tournament(tmp_path: Path, page: Any) -> None:
    db = tmp_path / "live.db"
    process = subprocess.Popen(
        [str(TAVOLO), "tournament", "run", str(tournament_file(tmp_path)), "--db", str(db),
         "--web", "127.0.0.1:0", "--quiet", "--public-names"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        out = Lines(process.stdout)
        url = out.wait_for("live view: ").split()[-1]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        check_event_stream(url)
        opened_mid_run(page, url)
        page.goto(url)
        page.evaluate(OBSERVER)
        playing = page.locator('.table-tile[data-state="playing"][data-entries*="slow"]').first
        playing.wait_for(timeout=WAIT_MS)
        playing.click()
        page.wait_for_selector('#follow .deal[data-state="playing"] [data-card]', timeout=WAIT_MS)
        look(page, tmp_path, "live-deal-in-progress")
        # A deal of the followed table ends: its hands are shown, from the deal_scored event.
        page.wait_for_selector('#follow .deal[data-state="scored"] tr.hand', timeout=WAIT_MS)
        look(page, tmp_path, "live-deal-scored")
        assert process.wait(180) == 0, out.rest()
        page.wait_for_selector('#status[data-kind="over"]', timeout=WAIT_MS)
        look(page, tmp_path, "live-run-over")
        snaps: list[dict[str, Any]] = page.evaluate("window.__snaps")
        shown = page.eval_on_selector_all(
            "#standings tbody tr",
            """rows => rows.map(r => ({name: r.dataset.entry,
                 games: r.querySelector('.games').textContent,
                 wdl: r.querySelector('.wdl').textContent,
                 elo: r.querySelector('.elo').textContent}))""",
        )
        count = page.locator("#progress .live-count")
        done, total = count.get_attribute("data-done"), count.get_attribute("data-total")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert out.rest()[0] == f"live view: {url}", "the line comes first"

    # Every moment recorded, against the stored records: the cards of the deal in progress
    # in the page are exactly those public by then, and a finished deal's hands are its own.
    with Store.open_for_reading(db) as store:
        match_of = {",".join(m.entries): m.id for m in store.matches()}
        records = {
            (m, n): [json.loads(line) for line in text.splitlines()]
            for m, n, text in store.records()
        }
    mid_deal = 0
    hands_checked = 0
    for snap in snaps:
        match_id = match_of[snap["entries"]]
        for finished in snap["finished"]:
            hands, _, _ = deal_of(records[(match_id, finished["game"])], finished["deal"])
            assert finished["hands"] == hands, (snap, hands)
            hands_checked += 1
        # Between deals (or games, or past a game's last deal, before its game_over comes)
        # the page shows no card outside the finished deals.
        if snap["deal"] is None or not snap["cards"]:
            assert snap["cards"] == [], snap
            continue
        _, steps, played = deal_of(records[(match_id, snap["game"])], snap["deal"])
        assert set(snap["cards"]) in steps, (
            f"game {snap['game']} deal {snap['deal']}: the page shows {snap['cards']}, which "
            f"were never the cards public at one moment (by the deal's end: {sorted(steps[-1])})"
        )
        # Each card played so far, once, in the order played.
        assert snap["plays"] == played[: len(snap["plays"])], (snap["plays"], played)
        mid_deal += 0 < len(snap["cards"]) < len(steps[-1])
    assert mid_deal >= 3, f"the page was seen during a deal only {mid_deal} times"
    assert hands_checked, "no deal's hands were seen"

    # The standings and the progress at the end are the database's.
    table = json.loads(tavolo("tournament", "table", "--db", db, "--format", "json").stdout)
    assert [row["name"] for row in shown] == [e["name"] for e in table["entries"]]
    for row, entry in zip(shown, table["entries"], strict=True):
        assert int(row["games"]) == entry["games"]
        assert row["wdl"] == f"{entry['wins']}-{entry['draws']}-{entry['losses']}"
        assert abs(float(row["elo"]) - entry["elo"]) <= 0.5, (row, entry)
    assert (int(done), int(total)) == (table["games"], table["games"])  # type: ignore[arg-type]


def start_serve(tmp_path: Path) -> tuple[subprocess.Popen[str], str, str, Path]:
    """``tavolo serve`` with its live view on a port of its own: the process, the referee's
    address, its admin token and the folder of its records."""
    token = "live-token-" + os.urandom(4).hex()
    token_file = tmp_path / "token"
    token_file.write_text(token, encoding="utf-8")
    records = tmp_path / "records"
    address = f"127.0.0.1:{free_port()}"
    serve = subprocess.Popen(
        [str(TAVOLO), "serve", "--listen", address, "--records", str(records),
         "--admin-token-file", str(token_file), "--sandbox", "off", "--web", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    return serve, address, token, records


def test_serve_web_shows_the_tables_of_a_referee(tmp_path: Path, page: Any) -> None:
    serve, address, token, records = start_serve(tmp_path)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        assert serve.stdout is not None
        out = Lines(serve.stdout)
        url = out.wait_for("live view: ").split()[-1]
        # A bare port binds loopback (not this machine's other addresses), and answers to
        # loopback names only.
        assert url.startswith("http://127.0.0.1:")
        other = other_address()
        if other is not None:
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection((other, int(url.rsplit(":", 1)[1].rstrip("/"))), 5)
        request = urllib.request.Request(url, headers={"Host": "tavolo.example.org"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 421
        page.goto(url)
        page.wait_for_selector('#status[data-kind="ok"]', timeout=WAIT_MS)
        look(page, tmp_path, "serve-no-tables")

        # A table whose remote seats wait for their bots: listed, with no names.
        created = subprocess.run(
            [str(TAVOLO), "match", "create", "random", "remote", "--seed", "live-serve",
             "--deals", "1", "--referee", address],
            env={**ENV, "TAVOLO_ADMIN_TOKEN": token}, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        match_id = created.stdout.split()[1]
        tickets = [line.split("TAVOLO_TICKET=")[1] for line in created.stdout.splitlines()[1:]]
        tile = page.locator(f'.table-tile[data-id="{match_id}"]')
        tile.wait_for(timeout=WAIT_MS)
        assert tile.get_attribute("data-state") == "waiting"
        assert "names not public" in tile.inner_text()
        tile.click()
        look(page, tmp_path, "serve-table-waiting")

        for ticket in tickets:  # the remote seats' bots, a little slow
            bots.append(subprocess.Popen(
                [sys.executable, str(SCRIPTED), "--mode", "late", "--at", "1", "--times", "1000",
                 "--sleep-ms", "10"],
                env={**ENV, "TAVOLO_REFEREE": address, "TAVOLO_TICKET": ticket},
            ))  # fmt: skip
        page.wait_for_selector(
            f'.table-tile[data-id="{match_id}"][data-state="over"]', timeout=WAIT_MS
        )
        look(page, tmp_path, "serve-table-over")
        for bot in bots:
            assert bot.wait(60) == 0
        # Each finished game's result, as the record has it.
        results = [
            line
            for line in map(json.loads, (records / f"{match_id}.jsonl").read_text().splitlines())
            if line["type"] == "result"
        ]
        shown = page.locator("#follow ol.results li").all_inner_texts()
        assert len(shown) == len(results) == 2
        for text, result in zip(shown, results, strict=True):
            assert text.startswith("-".join(map(str, result["totals"]))), (text, result)
        assert "random" not in page.locator("main").inner_text()  # no entry name anywhere

        serve.send_signal(signal.SIGINT)
        assert serve.wait(30) == 0
        page.wait_for_selector('#status[data-kind="over"]', timeout=WAIT_MS)
        assert "the referee has stopped" in page.locator("#status").inner_text()
        with pytest.raises(urllib.error.URLError):
            urllib.request.urlopen(url, timeout=5)
    finally:
        for process in [*bots, serve]:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_serve_web_shows_briscola_tables(tmp_path: Path, page: Any) -> None:
    """Briscola for two and for four: each deal scored in card points of 120 with its winner
    and the deals won, the hands as dealt, and no draw (each was seen by its drawer alone)."""
    serve, address, token, records = start_serve(tmp_path)
    try:
        assert serve.stdout is not None
        url = Lines(serve.stdout).wait_for("live view: ").split()[-1]
        page.goto(url)
        page.wait_for_selector('#status[data-kind="ok"]', timeout=WAIT_MS)
        for game in ("briscola", "briscola-a-quattro"):
            created = subprocess.run(
                [str(TAVOLO), "match", "create", "random", "random", "--game", game,
                 "--seed", f"live-{game}", "--deals", "2", "--referee", address],
                env={**ENV, "TAVOLO_ADMIN_TOKEN": token}, capture_output=True, text=True,
                timeout=60,
            )  # fmt: skip
            assert created.returncode == 0, created.stderr
            match_id = created.stdout.split()[1]
            tile = page.locator(f'.table-tile[data-id="{match_id}"][data-state="over"]')
            tile.wait_for(timeout=WAIT_MS)
            tile.click()
            page.wait_for_selector(f'#follow[data-table="{match_id}"]', timeout=WAIT_MS)
            look(page, tmp_path, f"serve-{game}")
            lines = [
                json.loads(text)
                for text in (records / f"{match_id}.jsonl").read_text().splitlines()
            ]
            # The follow box shows the last game's deals, as its record has them.
            last = max(i for i, line in enumerate(lines) if line["type"] == "game")
            deals = {x["deal"]: x for x in lines[last:] if x["type"] == "deal"}
            scores = [x for x in lines[last:] if x["type"] == "score"]
            assert len(scores) == 2
            for score in scores:
                scored = f'details[data-state="scored"][data-deal="{score["deal"]}"]'
                box = page.locator(f"#follow {scored}")
                cards = "-".join(map(str, score["card_points"]))
                won = score["points"].index(1) if 1 in score["points"] else None
                winner = "a draw" if won is None else f"side {won} wins the deal"
                totals = "-".join(map(str, score["totals"]))
                assert box.locator("summary").inner_text() == (
                    f"Deal {score['deal']}: cards {cards} of 120, {winner}; deals won {totals}"
                )
                hands = box.locator("tr.hand").evaluate_all(
                    "rows => rows.map(r => [...r.querySelectorAll('[data-card]')]"
                    ".map(c => c.dataset.card))"
                )
                assert hands == deals[score["deal"]]["hands"]
            assert " draws " not in page.locator("#follow").inner_text()
            assert page.locator("#follow .signal").count() == 0
        serve.send_signal(signal.SIGINT)
        assert serve.wait(30) == 0
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()


def test_serve_web_over_tls_with_public_names(tmp_path: Path, page: Any) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    token = "live-token-" + os.urandom(4).hex()
    address = f"127.0.0.1:{free_port()}"
    serve = subprocess.Popen(
        [str(TAVOLO), "serve", "--listen", address, "--tls-cert", str(cert), "--tls-key",
         str(key), "--records", str(tmp_path / "records"), "--sandbox", "off", "--public-names",
         "--web", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**ENV, "TAVOLO_ADMIN_TOKEN": token},
    )  # fmt: skip
    try:
        assert serve.stdout is not None
        url = Lines(serve.stdout).wait_for("live view: ").split()[-1]
        created = subprocess.run(
            [str(TAVOLO), "match", "create", "random", "remote", "--seed", "live-tls",
             "--referee", address, "--tls-ca", str(cert)],
            env={**ENV, "TAVOLO_ADMIN_TOKEN": token}, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        match_id = created.stdout.split()[1]
        page.goto(url)
        tile = page.locator(f'.table-tile[data-id="{match_id}"]')
        tile.wait_for(timeout=WAIT_MS)
        # --public-names: the entries' names, as ListTables gives them.
        assert tile.get_attribute("data-entries") == "random,remote"
        assert "random vs remote" in tile.inner_text()
        # The page may have caught a reconnection of its stream under load; it must settle
        # on "live" by itself.
        page.wait_for_selector('#status[data-kind="ok"]', timeout=WAIT_MS)
        look(page, tmp_path, "serve-tls-public-names")
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(30)


def test_interrupting_a_run_stops_the_live_view_too(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    process = subprocess.Popen(
        [str(TAVOLO), "tournament", "run", str(tournament_file(tmp_path, games=8)), "--db",
         str(db), "--web", ":0", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    try:
        assert process.stdout is not None and process.stderr is not None
        url = Lines(process.stdout).wait_for("live view: ").split()[-1]
        assert url.startswith("http://127.0.0.1:")
        # Once the page shows a table, Ctrl-C.
        deadline = time.monotonic() + 60
        while True:
            with urllib.request.urlopen(url + "state", timeout=10) as response:
                tables = json.loads(response.read())["tables"]
            if tables:
                break
            assert time.monotonic() < deadline, "no table showed up"
            time.sleep(0.2)
        # Without --public-names the referee names no entry, so neither does the page.
        assert all(table["entries"] == [] for table in tables), tables
        process.send_signal(signal.SIGINT)
        assert process.wait(60) == 130
        errors = process.stderr.read().splitlines()
        assert [e for e in errors if e.startswith("error:")] == [
            f"error: interrupted: every finished deal and game is in {db}; "
            "run the same command to resume"
        ], errors
        assert not any("Traceback" in e for e in errors), errors
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=5)


# -- the option ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("8080", WebAddress("127.0.0.1", 8080)),
        (":0", WebAddress("127.0.0.1", 0)),
        ("0.0.0.0:80", WebAddress("0.0.0.0", 80)),
        ("localhost:9000", WebAddress("localhost", 9000)),
        ("[::1]:8000", WebAddress("::1", 8000)),
    ],
)
def test_web_addresses(text: str, address: WebAddress) -> None:
    assert parse_web(text) == address


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("x", "--web: expected HOST:PORT, got 'x'"),
        ("", "--web: expected HOST:PORT, got ''"),
        ("host:", "--web: expected HOST:PORT, got 'host:'"),
        ("host:http", "--web: expected HOST:PORT, got 'host:http'"),
        ("::1:80", "--web: expected HOST:PORT (IPv6 as [ADDRESS]:PORT), got '::1:80'"),
        ("[nope]:80", "--web: expected HOST:PORT, got '[nope]:80'"),
        ("127.0.0.1:65536", "--web: the port must be 0 to 65535, got '127.0.0.1:65536'"),
    ],
)
def test_bad_web_addresses(text: str, error: str) -> None:
    with pytest.raises(LiveViewError) as raised:
        parse_web(text)
    assert str(raised.value) == error


def test_a_bad_web_value_is_one_error_line(tmp_path: Path) -> None:
    path = tournament_file(tmp_path)
    db = tmp_path / "never.db"
    result = tavolo("tournament", "run", path, "--db", db, "--web", "x")
    assert assert_one_error(result) == "error: --web: expected HOST:PORT, got 'x'"
    result = tavolo("serve", "--web", "127.0.0.1:99999")
    line = assert_one_error(result)
    assert line == "error: --web: the port must be 0 to 65535, got '127.0.0.1:99999'"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = tavolo("tournament", "run", path, "--db", db, "--web", f"127.0.0.1:{port}")
        line = assert_one_error(result)
        assert line == f"error: --web: cannot listen on 127.0.0.1:{port}: the address is in use"
        result = tavolo("serve", "--listen", "127.0.0.1:0", "--web", str(port))
        assert assert_one_error(result) == line
    result = tavolo("serve", "--web", "no-such-host.invalid:80")
    assert assert_one_error(result).startswith(
        "error: --web: cannot listen on no-such-host.invalid:80: "
    )
    assert not db.exists(), "a bad --web touches no database"
