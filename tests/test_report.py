"""``tavolo tournament report``: a real tournament's static site, read in a real browser."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.engine.deals import seed_commitment
from tests.browser import screenshot
from tests.test_cli import assert_one_error, run, tavolo
from tests.test_tournament_run import stored_games, table_json, tournament
from tournaments.web.svg_charts import Interval, elo_error_bars, rating_progress

TWO = """
[[entry]]
name = "heuristic"
bot = "heuristic"

[[entry]]
name = "random"
bot = "random"
"""


def _played(
    tmp_path: Path, *extra: str, entries: str | None = None, games: int = 4, **more: Any
) -> Path:
    """A small round robin, run for real; its database."""
    kwargs: dict[str, Any] = {"games": games, "deals": 2, **more}
    if entries is not None:
        kwargs["entries"] = entries
    file = tournament(tmp_path, extra="", **kwargs)
    db = tmp_path / "t.db"
    # A subprocess: the browser's event loop holds this thread (tests/browser.py).
    result = run("tournament", "run", file, "--db", db, "--quiet", *extra)
    assert result.returncode == 0, result.stderr
    return db


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One tournament of three entries and its report: (database, report folder)."""
    folder = tmp_path_factory.mktemp("report")
    db = _played(folder)
    out = folder / "site"
    result = tavolo("tournament", "report", out, "--db", db)
    assert result.exit_code == 0, result.output
    assert f"{out}: " in result.stdout and "index.html" in result.stdout
    return db, out


def _cells(page: Any, row: Any) -> dict[str, str]:
    names = ["rank", "name", "elo", "interval", "los", "games", "wdl", "score", "ppd", "faults"]
    return {n: row.query_selector(f"td.{n}").inner_text().strip() for n in names}


def test_standings_match_the_table_command(report: tuple[Path, Path], page: Any) -> None:
    db, out = report
    page.goto((out / "index.html").as_uri())
    screenshot(page, out.parent, "standings")
    wanted = table_json(db)
    described = page.inner_text("#description")
    wording = "round-robin, preset tressette, 2 deals a game, 4 games a match, duplicate sets"
    assert described == f"{wording}, 3 entries."
    rows = page.query_selector_all("table#standings tbody tr")
    assert len(rows) == len(wanted["entries"]) == 3
    for row, e in zip(rows, wanted["entries"], strict=True):
        got = _cells(page, row)
        assert got["rank"] == str(e["rank"])
        assert got["name"] == e["name"]
        assert got["elo"] == f"{e['elo']:.0f}"
        assert got["interval"] == f"{e['ci_low'] - e['elo']:+.0f} / {e['ci_high'] - e['elo']:+.0f}"
        los = "–" if e["los_next"] is None else f"{e['los_next'] * 100:.1f}%"
        assert got["los"] == los
        assert got["games"] == str(e["games"])
        assert got["wdl"] == f"{e['wins']}-{e['draws']}-{e['losses']}"
        assert got["score"] == f"{e['score_percent']:.1f}%"
        assert got["ppd"] == f"{e['points_per_deal']:.2f} ± {e['points_per_deal_se']:.2f}"
        assert got["faults"] == f"{e['timeouts']}/{e['illegal']}/{e['crashes']}"
        think = e["think_time"]
        assert think is not None, "a run over gRPC times every answer"
        mean = row.query_selector("td.mean-ms").inner_text()
        assert mean == f"{think['mean_ms']:.1f}"
        assert row.query_selector("td.p95-ms").inner_text() == str(think["p95_ms"])
    # The chart: one error bar per entry, its dot inside its bar, in the table's order.
    bars = page.query_selector_all("svg.elo-chart g.elo-row")
    assert [b.get_attribute("data-entry") for b in bars] == [e["name"] for e in wanted["entries"]]
    for bar in bars:
        lines = bar.query_selector_all("line")
        low, high = float(lines[0].get_attribute("x1")), float(lines[0].get_attribute("x2"))
        dot = float(bar.query_selector("circle").get_attribute("cx"))
        assert low <= dot <= high
    # The JSON beside it is the table command's, byte for byte.
    text = (out / "standings.json").read_text(encoding="utf-8")
    assert json.loads(text) == wanted


def test_every_page_is_linked_and_opens_offline(report: tuple[Path, Path], page: Any) -> None:
    _, out = report
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.goto((out / "index.html").as_uri())
    # standings -> entry -> its match -> a game -> a deal of it, by clicking.
    page.click("table#standings tbody tr:first-child td.name a")
    assert "/entries/entry-" in page.url
    screenshot(page, out.parent, "entry")
    page.click("table#matches tbody tr:first-child td:first-child a")
    assert re.search(r"/matches/match-\d+\.html$", page.url)
    screenshot(page, out.parent, "match")
    match_page = page.url
    page.click("table#games tbody tr:first-child td:first-child a")
    assert re.search(r"/games/match-\d+-game-1\.html$", page.url)
    screenshot(page, out.parent, "game")
    page.goto(match_page)
    page.click("table#games tbody tr:first-child td.deal-links a:last-child")
    assert re.search(r"/games/match-\d+-game-1\.html#game=1&deal=2$", page.url)
    for name in ("crosstable", "progress", "fairness", "matches"):
        page.goto((out / f"{name}.html").as_uri())
        screenshot(page, out.parent, name)
        assert page.query_selector("nav.report-nav a.current") is not None
    assert asked and all(url.startswith("file://") for url in asked), asked
    # No page names anything off the folder but SVG's namespace.
    for html in out.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        outside = set(re.findall(r"(?:https?:)?//[\w.-]+", text)) - {"http://www.w3.org"}
        assert not outside, f"{html} links outside: {outside}"
        assert str(out) not in text, f"{html} names the folder it was written in"


def test_crosstable_pentanomials_and_progress(report: tuple[Path, Path], page: Any) -> None:
    db, out = report
    wanted = table_json(db)
    page.goto((out / "crosstable.html").as_uri())
    pairs = page.query_selector_all("table#pairs tbody tr")
    assert len(pairs) == len(wanted["pairs"]) == 3
    for row, pair in zip(pairs, wanted["pairs"], strict=True):
        cells = [c.inner_text() for c in row.query_selector_all("td")]
        counts = [str(pair[k]) for k in ("wins_a", "draws", "wins_b")]
        assert cells[:5] == [pair["a"], pair["b"], *counts]
        penta = [int(x) for x in cells[5].split(",")]
        # Each duplicate pair of games counted once: the pairs add up to half the games.
        assert sum(penta) * 2 == pair["wins_a"] + pair["draws"] + pair["wins_b"]
    assert "No sequential test ran" in page.inner_text("#sprt")
    # After the last round the refit uses every game: it is the standings' own Elo.
    page.goto((out / "progress.html").as_uri())
    last = {
        r.get_attribute("data-entry"): r.query_selector_all("td")[-1].inner_text()
        for r in page.query_selector_all("table#progress tbody tr")
    }
    assert last == {e["name"]: f"{e['elo']:.0f}" for e in wanted["entries"]}
    assert len(page.query_selector_all("svg.progress-chart g.progress-line")) == 3


def test_fairness_panel_and_its_commands(report: tuple[Path, Path], page: Any) -> None:
    _, out = report
    page.goto((out / "fairness.html").as_uri())
    seed_table = page.inner_text("table#seed")
    assert "seed-1" in seed_table and seed_commitment("seed-1") in seed_table
    commands = [c.inner_text() for c in page.query_selector_all("pre.command")]
    assert commands[0] == f"tavolo seed check seed-1 {seed_commitment('seed-1')}"
    checked = run(*commands[0].split()[1:])
    assert checked.returncode == 0, checked.stderr
    assert commands[1] == "tavolo verify records/*.jsonl"
    files = sorted(str(p) for p in (out / "records").glob("*.jsonl"))
    assert len(files) == 3
    verified = run("verify", *files)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.count(": ok,") == 3
    sandboxes = page.inner_text("table#sandboxes")
    assert sandboxes.count("bwrap") == 3 or sandboxes.count("off") == 3
    assert "No deal book" in page.inner_text("#books")


def test_same_tournament_twice_gives_the_same_report(tmp_path: Path) -> None:
    sites = []
    for run_name in ("first", "second"):
        folder = tmp_path / run_name
        folder.mkdir()
        db = _played(folder, games=2)
        out = folder / "site"
        result = tavolo("tournament", "report", out, "--db", db, "--no-think-times")
        assert result.exit_code == 0, result.output
        sites.append(out)
    first, second = (
        {p.relative_to(s): p.read_bytes() for p in sorted(s.rglob("*")) if p.is_file()}
        for s in sites
    )
    assert first.keys() == second.keys()
    differ = [str(name) for name in first if first[name] != second[name]]
    assert not differ, f"these differ between two runs: {differ}"
    assert not any(b'"ms":' in data for data in first.values())


def test_sprt_state_is_shown(tmp_path: Path, page: Any) -> None:
    db = _played(tmp_path, "--sprt", "0,10", entries=TWO, games=2)
    out = tmp_path / "site"
    assert tavolo("tournament", "report", out, "--db", db).exit_code == 0
    page.goto((out / "crosstable.html").as_uri())
    screenshot(page, tmp_path, "crosstable-sprt")
    text = page.inner_text("#sprt")
    assert "elo0 0, elo1 10" in text
    assert re.search(r"LLR -?\d+\.\d{3}, bounds -2\.944 and 2\.944", text), text


def test_a_three_handed_tournament(tmp_path: Path, page: Any) -> None:
    db = _played(tmp_path, games=6, deals=1, preset="calabresella")
    out = tmp_path / "site"
    assert tavolo("tournament", "report", out, "--db", db).exit_code == 0
    page.goto((out / "index.html").as_uri())
    screenshot(page, tmp_path, "calabresella-standings")
    assert len(page.query_selector_all("table#standings tbody tr")) == 3
    page.goto((out / "crosstable.html").as_uri())
    assert page.query_selector("table#pairs") is None, "pentanomials pair two sides only"
    assert len(page.query_selector_all("table#crosstable tbody tr")) == 3
    games = sorted((out / "games").glob("*.html"))
    assert [g.name for g in games] == sorted(
        f"match-{m}-game-{n}.html" for m, n in stored_games(db)
    )
    page.goto(games[0].as_uri())
    screenshot(page, tmp_path, "calabresella-game")


def test_bad_folders_and_databases(tmp_path: Path, report: tuple[Path, Path]) -> None:
    db, site = report
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert_one_error(tavolo("tournament", "report", busy, "--db", db), str(busy), "not empty")
    assert (busy / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    file = tmp_path / "file"
    file.write_text("x", encoding="utf-8")
    assert_one_error(tavolo("tournament", "report", file, "--db", db), "is a file")
    missing = tmp_path / "none.db"
    assert_one_error(tavolo("tournament", "report", tmp_path / "o", "--db", missing), "none.db")
    # Over an earlier report: replaced, and what else the folder holds stays.
    again = tmp_path / "again"
    assert tavolo("tournament", "report", again, "--db", db).exit_code == 0
    (again / "README.txt").write_text("published by us\n", encoding="utf-8")
    (again / "games" / "stale.html").write_text("old", encoding="utf-8")
    assert tavolo("tournament", "report", again, "--db", db).exit_code == 0
    assert not (again / "games" / "stale.html").exists()
    assert (again / "README.txt").exists()
    assert (again / "index.html").read_bytes() == (site / "index.html").read_bytes()


# -- the charts ------------------------------------------------------------------------------

_elo = st.floats(min_value=-3000, max_value=5000, allow_nan=False)


@given(st.lists(st.tuples(_elo, _elo, _elo), min_size=1, max_size=12))
def test_error_bars_are_well_formed_svg(values: list[tuple[float, float, float]]) -> None:
    rows = [Interval(f"e<{i}>&", *sorted(v)[1:2], min(v), max(v)) for i, v in enumerate(values)]
    text = elo_error_bars(rows)
    assert text == elo_error_bars(rows)
    svg = ET.fromstring(text)
    groups = [g for g in svg if g.tag.endswith("g")]
    assert [g.get("data-entry") for g in groups] == [r.name for r in rows]
    for g in groups:
        line = next(c for c in g if c.tag.endswith("line"))
        dot = next(c for c in g if c.tag.endswith("circle"))
        assert float(line.get("x1", "")) <= float(dot.get("cx", "")) <= float(line.get("x2", ""))
        assert "-0 " not in ET.tostring(g, encoding="unicode")


@given(
    st.integers(min_value=1, max_value=30).flatmap(
        lambda n: st.tuples(
            st.just(list(range(1, n + 1))),
            st.lists(st.lists(st.one_of(st.none(), _elo), min_size=n, max_size=n), max_size=6),
        )
    )
)
def test_progress_chart_is_well_formed_svg(
    data: tuple[list[int], list[list[float | None]]],
) -> None:
    rounds, values = data
    series = [(f"entry {i}", v) for i, v in enumerate(values)]
    text = rating_progress(rounds, series)
    if not any(x is not None for v in values for x in v):
        assert text == ""
        return
    svg = ET.fromstring(text)
    lines = [g for g in svg if g.tag.endswith("g")]
    assert len(lines) == len(series)
    for g, (_, v) in zip(lines, series, strict=True):
        dots = [c for c in g if c.tag.endswith("circle")]
        assert len(dots) == sum(x is not None for x in v)


def test_fairness_names_the_deal_book(tmp_path: Path) -> None:
    import hashlib

    from tests.test_deal_book import seeded_lines

    book = tmp_path / "deals.jsonl"
    book.write_bytes(seeded_lines("tressette", "book-seed", 4))
    file = tournament(tmp_path, games=2, deals=1, entries=TWO)
    text = file.read_text(encoding="utf-8").replace(
        "[game]\n", f'[game]\nbook = "{book.name}"\n', 1
    )
    file.write_text(text, encoding="utf-8")
    db = tmp_path / "t.db"
    done = run("tournament", "run", file, "--db", db, "--quiet")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "site"
    assert tavolo("tournament", "report", out, "--db", db).exit_code == 0
    fairness = (out / "fairness.html").read_text(encoding="utf-8")
    digest = hashlib.sha256(book.read_bytes()).hexdigest()
    assert f"<code>{digest}</code></td><td>2</td>" in fairness, "the book, and its 2 games"
    records = sorted(str(p) for p in (out / "records").glob("*.jsonl"))
    checked = run("verify", "--book", book, *records)
    assert checked.returncode == 0, checked.stderr


def test_a_report_before_any_game(tmp_path: Path) -> None:
    from tournaments.config import load_config
    from tournaments.runner import open_store

    db = tmp_path / "t.db"
    open_store(db, load_config(tournament(tmp_path))).close()  # as a run leaves it at once
    out = tmp_path / "site"
    result = tavolo("tournament", "report", out, "--db", db)
    assert result.exit_code == 0, result.output
    assert "8 pages and 0 game records" in result.stdout
    index = (out / "index.html").read_text(encoding="utf-8")
    assert index.count('<td class="rank">–</td>') == 3
    assert "<svg" not in index
    assert json.loads((out / "standings.json").read_text(encoding="utf-8"))["games"] == 0
