"""``tavolo tournament report``: a tournament database as a static site that opens from file://.

Pages: the standings, the crosstable, the rating progress by round, the fairness panel,
the list of matches, a page for each entry, each match and each game (with the replay
viewer), the game records to verify, and the standings as JSON. Nothing in it depends on
when or where it was made, so the same games give the same bytes.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import tempfile
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from referee.engine.deals import SeedError, seed_commitment
from tournaments.ratings import FEW_SETS, PairResult, Ratings, RatingsError, rate
from tournaments.record_export import export_records
from tournaments.results import pair_results
from tournaments.sprt import SprtState, pentanomial, sprt
from tournaments.standings import (
    Row,
    Standings,
    StoredFacts,
    ThinkStats,
    as_json,
    head_to_head,
    standings,
    stored_facts,
    think_stats,
)
from tournaments.storage import MADE_SEED, GameRow, MatchRow, Store, ThinkRow
from tournaments.web.pages import ASSETS, asset_names, render
from tournaments.web.replay_page import replay_page
from tournaments.web.svg_charts import Interval, elo_error_bars, rating_progress

GENERATOR = '<meta name="generator" content="tavolo">'
"""Every page has it: a folder whose index.html has it is a report, and may be replaced."""
_WRITTEN = (
    "index.html",
    "crosstable.html",
    "progress.html",
    "fairness.html",
    "matches.html",
    "standings.json",
    "entries",
    "matches",
    "games",
    "records",
    "assets",
)
"""What a report consists of: all that is removed when a report is written over an old one."""


class ReportError(ValueError):
    """The report cannot be written there; one line saying why."""


@dataclass(frozen=True)
class ReportSummary:
    """What :func:`write_report` wrote."""

    folder: Path
    pages: int
    records: int


@dataclass
class _Site:
    """What the pages are made of, read once from the database."""

    facts: StoredFacts
    table: Standings
    matches: list[MatchRow]
    games: list[GameRow]
    think: list[ThinkRow]
    records: dict[tuple[int, int], list[str]]
    """(match, game) -> the record's lines, as written in ``records/``."""
    config: str
    record_files: dict[int, str]
    digests: dict[int, str]
    """Each record file's SHA-256."""
    slugs: dict[str, str]
    sprt_bounds: tuple[float, float] | None = None
    """``--sprt ELO0,ELO1`` of the run, when it had one."""
    made_seed: str | None = None
    reruns: list[dict[str, Any]] = field(default_factory=list)
    """What ``tavolo tournament rerun`` deleted and played again, each time (``meta``)."""
    """The seed the run made, for a tournament file without one."""

    def games_of(self, match_id: int) -> list[GameRow]:
        return self._by_match.get(match_id, [])

    @cached_property
    def _by_match(self) -> dict[int, list[GameRow]]:
        out: dict[int, list[GameRow]] = {}
        for game in self.games:
            out.setdefault(game.match_id, []).append(game)
        return out

    @cached_property
    def results(self) -> list[PairResult]:
        """Every game as pairwise results, for the crosstable, the SPRT and the entries."""
        return pair_results(self.games, self.facts.seats, lower_wins=self.facts.lower_wins)

    @cached_property
    def scores(self) -> dict[tuple[str, str], tuple[float, int]]:
        return head_to_head(self.results)

    def think_of(self, entry: str, match_id: int) -> list[ThinkRow]:
        return self._think.get((match_id, entry), [])

    @cached_property
    def _think(self) -> dict[tuple[int, str], list[ThinkRow]]:
        out: dict[tuple[int, str], list[ThinkRow]] = {}
        for row in self.think:
            out.setdefault((row.match_id, row.entry), []).append(row)
        return out


def check_folder(out: Path) -> None:
    """ReportError unless ``out`` is new, empty, or a report this command wrote."""
    if not out.exists():
        return
    if not out.is_dir():
        raise ReportError(f"{out} is a file: the report goes into a new or empty folder")
    if not any(out.iterdir()):
        return
    index = out / "index.html"
    try:
        ours = index.is_file() and GENERATOR in index.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        ours = False
    if not ours:
        raise ReportError(
            f"{out} is not empty and holds no tavolo report: the report goes into a new or "
            "empty folder, or over an earlier report"
        )


def write_report(store: Store, out: Path, *, think_times: bool = True) -> ReportSummary:
    """Write the report of ``store``'s tournament into ``out`` (see :func:`check_folder`).

    Without ``think_times`` the standings leave out think times and the records their
    ``ms`` fields: then two runs of the same tournament give the same bytes, file for file.
    ReportError, StorageError or RatingsError if the report cannot be made; OSError if
    writing fails.
    """
    check_folder(out)
    facts = stored_facts(store)
    meta = store.meta()
    think = store.think_times() if think_times else []
    games = store.games()
    table = standings(
        facts.name,
        facts.names,
        games,
        facts.seats,
        facts.ratings,
        lower_wins=facts.lower_wins,
        sandbox=facts.sandbox,
        think=think,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    # Written beside OUT and moved in only once complete: a report that fails half way
    # leaves OUT as it was, and a retry finds nothing of it in the way.
    partial = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        summary = _write_site(store, partial, facts, meta, table, games, think, think_times)
        out.mkdir(exist_ok=True)
        for name in _WRITTEN:
            path = out / name
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
            if (partial / name).exists():
                (partial / name).rename(path)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return ReportSummary(out, summary.pages, summary.records)


def _write_site(
    store: Store,
    out: Path,
    facts: StoredFacts,
    meta: dict[str, str],
    table: Standings,
    games: list[GameRow],
    think: list[ThinkRow],
    think_times: bool,
) -> ReportSummary:
    """Every file of the report into the empty folder ``out``."""
    exported = export_records(
        store, out / "records", database=store.path.name, think_times=think_times
    )
    site = _Site(
        facts,
        table,
        store.matches(),
        games,
        think,
        {key: _record_lines(store, key, text) for key, text in exported.texts.items()},
        meta.get("config", ""),
        exported.files,
        exported.digests,
        _slugs(facts.names),
    )
    if MADE_SEED in meta:
        site.made_seed = json.loads(meta[MADE_SEED])
    if "reruns" in meta:
        site.reruns = json.loads(meta["reruns"])
    if "sprt" in meta:
        elo0, elo1 = json.loads(meta["sprt"])
        site.sprt_bounds = (float(elo0), float(elo1))
    (out / "assets").mkdir()
    for name in asset_names():
        shutil.copyfile(ASSETS / name, out / "assets" / name)
    pages = _pages(site)
    for relative, text in pages.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    standings_json = json.dumps(as_json(table), indent=1, ensure_ascii=False)
    (out / "standings.json").write_text(standings_json + "\n", encoding="utf-8")
    return ReportSummary(out, len(pages), exported.records)


def _record_lines(store: Store, key: tuple[int, int], text: str) -> list[str]:
    """A stored record's lines; ReportError naming the game and the line where one is not
    a JSON object (a database changed by hand)."""
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        try:
            parsed = json.loads(line)
        except json.JSONDecodeError as exc:
            parsed, why = None, exc.msg
        else:
            why = "not a JSON object"
        if not isinstance(parsed, dict):
            raise ReportError(
                f"{store.path}: the record of match {key[0]} game {key[1]}, line {number}, "
                f"is damaged ({why})"
            )
    return lines


def _slugs(names: Sequence[str]) -> dict[str, str]:
    """A file name for each entry's page: its position and a readable part of its name."""
    out = {}
    for i, name in enumerate(names, 1):
        readable = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:40]
        out[name] = f"entry-{i}-{readable}.html" if readable else f"entry-{i}.html"
    return out


def _pages(site: _Site) -> dict[str, str]:
    pages = {
        "index.html": _standings_page(site),
        "crosstable.html": _crosstable_page(site),
        "progress.html": _progress_page(site),
        "fairness.html": _fairness_page(site),
        "matches.html": _matches_page(site),
    }
    for name in site.facts.names:
        pages[f"entries/{site.slugs[name]}"] = _entry_page(site, name)
    for match in site.matches:
        pages[f"matches/match-{match.id}.html"] = _match_page(site, match)
        for game in site.games_of(match.id):
            page = f"games/match-{match.id}-game-{game.number}.html"
            pages[page] = _game_page(site, match, game)
    return pages


def _common(
    site: _Site, root: str, here: str, crumbs: list[tuple[str, str | None]]
) -> dict[str, Any]:
    """What every report page passes to the templates; ``root`` leads back to OUT/."""
    return {
        "title": f"{crumbs[-1][0]} · {site.facts.name}" if len(crumbs) > 1 else site.facts.name,
        "tournament": site.facts.name,
        "crumbs": crumbs,
        "assets": f"{root}assets",
        "styles": ["tavolo.css", "report.css"],
        "scripts": [],
        "root": root,
        "here": here,
        "slugs": site.slugs,
    }


# -- standings ------------------------------------------------------------------------------


def _fmt(value: float | None, digits: int = 0, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _row_cells(row: Row, table: Standings) -> dict[str, Any]:
    t = row.tally
    mean, se = t.points_per_deal
    think = row.think
    return {
        "rank": "–" if row.rank is None else str(row.rank),
        "name": row.name,
        "elo": _fmt(row.elo),
        "interval": "–"
        if row.elo is None or row.ci_low is None or row.ci_high is None
        else f"{row.ci_low - row.elo:+.0f} / {row.ci_high - row.elo:+.0f}",
        "los": "–" if row.los_next is None else f"{row.los_next * 100:.1f}%",
        "games": str(t.games),
        "wdl": f"{t.wins}-{t.draws}-{t.losses}",
        "score": f"{t.score_percent:.1f}%",
        "ppd": f"{mean:.2f}",
        "ppd_se": f"{se:.2f}",
        "faults": f"{t.faults.timeouts}/{t.faults.illegal}/{t.faults.crashes}",
        "opponent_elo": _fmt(row.opponent_elo),
        "sandbox": dict(table.sandbox).get(row.name, "unknown"),
        "think": None if think is None else _think_cells(think),
    }


def _think_cells(think: ThinkStats) -> dict[str, str]:
    return {
        "decisions": str(think.decisions),
        "mean": _fmt(think.mean_ms, 1),
        "p95": "–" if think.p95_ms is None else str(think.p95_ms),
        "max": "–" if think.max_ms is None else str(think.max_ms),
        "bank": "–" if think.bank_used is None else f"{think.bank_used * 100:.0f}%",
    }


def _standings_page(site: _Site) -> str:
    table = site.table
    rows = [_row_cells(r, table) for r in table.rows]
    chart = elo_error_bars(
        [
            Interval(r.name, r.elo, r.ci_low, r.ci_high)
            for r in table.rows
            if r.elo is not None and r.ci_low is not None and r.ci_high is not None
        ]
    )
    s = table.settings
    return render(
        "report_standings.html.j2",
        description=_description(site),
        **_common(site, "", "standings", [("Standings", None)]),
        rows=rows,
        chart=chart,
        games=table.games,
        deals=sum(g.deals for g in site.games),
        matches=len(site.matches),
        with_think=any(r.think is not None for r in table.rows),
        anchor=s.anchor,
        anchor_elo=f"{s.elo:g}",
        prior_draws=f"{s.prior_draws:g}",
        bootstrap=s.bootstrap,
        few_sets=FEW_SETS,
    )


def _description(site: _Site) -> str:
    """What was played, from the tournament file: ``round-robin, preset tressette, …``."""
    try:
        file = tomllib.loads(site.config)
    except tomllib.TOMLDecodeError:
        return ""
    game = file.get("game", {})
    match = file.get("match", {})
    parts = [str(file.get("format", "round-robin"))]
    if isinstance(game, dict) and isinstance(game.get("preset"), str):
        parts.append(f"preset {game['preset']}")
    if isinstance(game, dict) and isinstance(game.get("deals"), int):
        parts.append(f"{game['deals']} deals a game")
    if isinstance(match, dict) and isinstance(match.get("games"), int):
        parts.append(f"{match['games']} games a match")
    if not isinstance(match, dict) or match.get("duplicate", True) is True:  # the default
        parts.append("duplicate sets")
    parts.append(f"{len(site.facts.names)} entries")
    return ", ".join(parts)


# -- crosstable -----------------------------------------------------------------------------


def _crosstable_page(site: _Site) -> str:
    names = [r.name for r in site.table.rows]
    score = site.scores
    grid = []
    for x in names:
        cells = []
        for y in names:
            got = score.get((x, y))
            if x == y:
                cells.append({"text": "", "kind": "self"})
            elif got is None:
                cells.append({"text": "–", "kind": "none"})
            else:
                share = got[0] / got[1]
                kind = "ahead" if share > 0.5 else "behind" if share < 0.5 else "even"
                cells.append({"text": f"{got[0]:g}/{got[1]:g}", "kind": kind})
        grid.append({"name": x, "cells": cells})
    pentas = []
    if len(site.facts.seats) == 2:
        for a, b, wa, d, wb in site.table.pairs:
            penta = pentanomial(site.results, a, b)
            pentas.append(
                {"a": a, "b": b, "wins_a": wa, "draws": d, "wins_b": wb, "penta": list(penta)}
            )
    return render(
        "report_crosstable.html.j2",
        **_common(site, "", "crosstable", [("Standings", "index.html"), ("Crosstable", None)]),
        names=names,
        grid=grid,
        pentas=pentas,
        sprt=_sprt_view(site),
    )


def _sprt_view(site: _Site) -> dict[str, Any] | None:
    """The sequential test's state, if the run had ``--sprt`` (its bounds are stored)."""
    if site.sprt_bounds is None:
        return None
    elo0, elo1 = site.sprt_bounds
    a, b = site.facts.names[:2]
    penta = pentanomial(site.results, a, b)
    state: SprtState = sprt(penta, elo0, elo1)
    return {
        "a": a,
        "b": b,
        "elo0": f"{elo0:g}",
        "elo1": f"{elo1:g}",
        "llr": f"{state.llr:.3f}",
        "lower": f"{state.lower:.3f}",
        "upper": f"{state.upper:.3f}",
        "decision": state.decision,
        "penta": list(penta),
    }


# -- progress -------------------------------------------------------------------------------


def progress_series(
    site: _Site,
) -> tuple[list[int], list[tuple[str, list[float | None]]], list[str]]:
    """Each entry's Elo refitted after each round (maximum likelihood, no bootstrap), and
    a line for each round whose games so far cannot be fitted, saying why: its entries
    are then left unrated for that round (in the first rounds of a round robin, disjoint
    pairs do not yet connect the field)."""
    round_of = {m.id: m.round for m in site.matches}
    rounds = sorted({round_of[g.match_id] for g in site.games})
    s = site.facts.ratings
    fits: list[dict[str, float]] = []
    unrated: list[str] = []
    for r in rounds:
        upto = [g for g in site.games if round_of[g.match_id] <= r]
        results = pair_results(upto, site.facts.seats, lower_wins=site.facts.lower_wins)
        if not results:
            fits.append({})
            continue
        present = {n for p in results for n in (p.a, p.b)}
        try:
            ratings: Ratings = rate(
                results,
                anchor=s.anchor if s.anchor in present else None,
                anchor_elo=s.elo,
                prior_draws=s.prior_draws,
                samples=0,
            )
        except RatingsError as exc:
            fits.append({})
            unrated.append(f"after round {r}: {exc}")
            continue
        fits.append({x.name: x.elo for x in ratings.ratings})
    order = [row.name for row in site.table.rows]
    return rounds, [(name, [fit.get(name) for fit in fits]) for name in order], unrated


def _progress_page(site: _Site) -> str:
    rounds, series, unrated = progress_series(site)
    rows = [{"name": name, "values": [_fmt(v) for v in values]} for name, values in series]
    return render(
        "report_progress.html.j2",
        **_common(site, "", "progress", [("Standings", "index.html"), ("Rating progress", None)]),
        chart=rating_progress(rounds, series),
        rounds=rounds,
        unrated=unrated,
        rows=rows,
    )


# -- fairness -------------------------------------------------------------------------------


def _fairness_page(site: _Site) -> str:
    seed: str | None = None
    try:
        value = tomllib.loads(site.config).get("seed")
        seed = value if isinstance(value, str) else None
    except tomllib.TOMLDecodeError:
        seed = None
    seed = seed or site.made_seed
    commitment = None
    if seed is not None:
        try:
            commitment = seed_commitment(seed)
        except SeedError:
            commitment = None
    books: dict[str, int] = {}
    rules: Any = None
    for lines in site.records.values():
        if not lines:
            continue
        head = json.loads(lines[0])
        if rules is None:
            rules = head.get("rules")
        for line in lines:
            if '"type":"game"' in line:
                book = json.loads(line).get("book")
                if isinstance(book, dict) and isinstance(book.get("sha256"), str):
                    books[book["sha256"]] = books.get(book["sha256"], 0) + 1
    files = [
        {"name": name, "sha256": site.digests[match_id], "match": match_id}
        for match_id, name in sorted(site.record_files.items())
    ]
    sandbox = [{"name": n, "mode": site.facts.sandbox.get(n, "unknown")} for n in site.facts.names]
    return render(
        "report_fairness.html.j2",
        **_common(site, "", "fairness", [("Standings", "index.html"), ("Fairness", None)]),
        seed=seed,
        commitment=commitment,
        books=sorted(books.items()),
        sandbox=sandbox,
        files=files,
        matches=site.matches,
        reruns=[_rerun_row(r) for r in site.reruns],
        config=site.config,
        rules=[]
        if not isinstance(rules, dict)
        else [(k, json.dumps(v, ensure_ascii=False)) for k, v in rules.items()],
        seed_check=None
        if seed is None or commitment is None
        else f"tavolo seed check {shlex.quote(seed)} {commitment}",
    )


def _rerun_row(rerun: dict[str, Any]) -> dict[str, Any]:
    """One rerun as the fairness page lists it."""
    at = datetime.fromtimestamp(float(rerun.get("at", 0)), tz=UTC)
    return {
        "at": at.strftime("%Y-%m-%d %H:%M UTC"),
        "entries": ", ".join(rerun.get("entries") or []) or "every entry",
        "faults": ", ".join(rerun.get("faults") or []),
        "games": [
            f"match {g['match']} game {g['game']} ({g['termination']})" for g in rerun["games"]
        ],
    }


# -- matches, entries, games ----------------------------------------------------------------


def _match_summary(site: _Site, match: MatchRow) -> dict[str, Any]:
    played = site.games_of(match.id)
    wins: dict[str, float] = dict.fromkeys(match.entries, 0.0)
    for g in played:
        for side, name in enumerate(g.sides):
            if g.winner is None:
                wins[name] = wins.get(name, 0.0) + 0.5
            elif g.winner == side:
                wins[name] = wins.get(name, 0.0) + 1.0
    return {
        "id": match.id,
        "round": match.round,
        "entries": list(match.entries),
        "seed": match.seed,
        "played": len(played),
        "planned": match.games,
        "score": " – ".join(f"{wins.get(n, 0.0):g}" for n in match.entries),
        "stopped": match.stopped,
        "href": f"matches/match-{match.id}.html",
    }


def _matches_page(site: _Site) -> str:
    return render(
        "report_matches.html.j2",
        **_common(site, "", "matches", [("Standings", "index.html"), ("Matches", None)]),
        matches=[_match_summary(site, m) for m in site.matches],
    )


def _game_cells(game: GameRow, match: MatchRow) -> dict[str, Any]:
    winner = "a draw" if game.winner is None else game.sides[game.winner]
    faults = "; ".join(
        f"{name} {f.timeouts}/{f.illegal}/{f.crashes}" for name, f in game.faults.items() if any(f)
    )
    page = f"../games/match-{match.id}-game-{game.number}.html"
    return {
        "number": game.number,
        "set": game.set_number,
        "sides": list(game.sides),
        "winner": winner,
        "totals": " – ".join(str(t) for t in game.totals),
        "termination": game.termination.replace("_", " "),
        "deals": game.deals,
        "faults": faults,
        "href": page,
        "deal_links": [(d, f"{page}#game=1&deal={d}") for d in range(1, game.deals + 1)],
    }


def _entry_page(site: _Site, name: str) -> str:
    row = next(r for r in site.table.rows if r.name == name)
    mine = [m for m in site.matches if name in m.entries]
    against = [
        {"name": other, "score": f"{got:g}", "games": games, "share": f"{got / games * 100:.1f}%"}
        for (x, other), (got, games) in sorted(site.scores.items())
        if x == name
    ]
    return render(
        "report_entry.html.j2",
        against=against,
        **_common(site, "../", "entry", [("Standings", "../index.html"), (name, None)]),
        row=_row_cells(row, site.table),
        name=name,
        matches=[_match_summary(site, m) for m in mine],
    )


def _match_page(site: _Site, match: MatchRow) -> str:
    played = site.games_of(match.id)
    think = []
    for entry in dict.fromkeys(match.entries):
        stats = think_stats(site.think_of(entry, match.id))
        if stats is not None:
            think.append({"entry": entry, **_think_cells(stats)})
    summary = _match_summary(site, match)
    return render(
        "report_match.html.j2",
        **_common(
            site, "../", "match", [("Standings", "../index.html"), (f"Match {match.id}", None)]
        ),
        match=summary,
        games=[_game_cells(g, match) for g in played],
        think=think,
        record=site.record_files.get(match.id),
    )


def _game_page(site: _Site, match: MatchRow, game: GameRow) -> str:
    lines = site.records[(match.id, game.number)]
    crumbs: list[tuple[str, str | None]] = [
        ("Standings", "../index.html"),
        (f"Match {match.id}", f"../matches/match-{match.id}.html"),
        (f"Game {game.number}", None),
    ]
    return replay_page(
        lines,
        title=f"Match {match.id}, game {game.number} · {site.facts.name}",
        crumbs=crumbs,
        assets="../assets",
        source=f"records/{site.record_files[match.id]}",
    )
