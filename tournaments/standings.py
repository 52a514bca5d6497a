"""The standings table and the crosstable of a tournament database, in several formats."""

from __future__ import annotations

import csv
import io
import json
import math
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tabulate import tabulate

from tournaments.config import RatingSettings
from tournaments.ratings import FEW_SETS, PairResult, Ratings, rate
from tournaments.results import Tally, pair_results, tallies
from tournaments.sprt import pentanomial
from tournaments.storage import GameRow, MatchRow, StorageError, Store, ThinkRow

WIDTH = 80
"""Columns the plain table and its notes fit in (the compact table, with entry names of up
to 22 characters)."""


class TableFormat(StrEnum):
    """Output formats of ``tavolo tournament table``."""

    PLAIN = "plain"
    GITHUB = "github"
    CSV = "csv"
    HTML = "html"
    JSON = "json"


@dataclass(frozen=True)
class ThinkStats:
    """An entry's think times over stored games: each answer's time from the referee's
    request to the answer's arrival."""

    decisions: int
    """Answers timed (a refused action is an answer too; a timeout is none)."""
    mean_ms: float | None
    p95_ms: int | None
    """The 95th percentile, by nearest rank."""
    max_ms: int | None
    time_bank_ms: int
    """Each slot's time bank for a match; 0 without one."""
    bank_used: float | None
    """The largest share of its time bank one of its slots had spent in one match, 0 to 1;
    None without a time bank."""


def think_stats(rows: Iterable[ThinkRow]) -> ThinkStats | None:
    """The think times of ``rows`` taken together; None without any row."""
    rows = list(rows)
    if not rows:
        return None
    times = sorted(ms for row in rows for ms in row.ms)
    bank = max(row.bank_ms for row in rows)
    used = max((r.bank_used_ms / r.bank_ms for r in rows if r.bank_ms > 0), default=None)
    if not times:
        return ThinkStats(0, None, None, None, bank, used)
    p95 = times[math.ceil(0.95 * len(times)) - 1]
    return ThinkStats(len(times), sum(times) / len(times), p95, times[-1], bank, used)


@dataclass(frozen=True)
class Row:
    """One entry's line of the standings."""

    rank: int | None
    """None for an entry with no game yet."""
    name: str
    elo: float | None
    ci_low: float | None
    ci_high: float | None
    los_next: float | None
    """Likelihood that this entry is stronger than the next one in the table."""
    tally: Tally
    opponent_elo: float | None
    """Mean Elo of the opponents of its pairwise games."""
    think: ThinkStats | None = None
    """Its think times; None where the database holds none."""


@dataclass(frozen=True)
class Standings:
    """The standings of a tournament and what they were computed from."""

    name: str
    rows: tuple[Row, ...]
    pairs: tuple[tuple[str, str, int, int, int], ...]
    """(a, b, wins of a, draws, wins of b) over pairwise games, a before b by name."""
    settings: RatingSettings
    games: int
    ratings: Ratings | None
    lower_wins: bool = False
    sandbox: tuple[tuple[str, str], ...] = ()
    """(entry, what its bots ran under: bwrap, off, remote; ``a+b`` over several runs)."""


def standings(
    name: str,
    names: Sequence[str],
    games: Sequence[GameRow],
    seats_of_side: Sequence[Sequence[int]],
    settings: RatingSettings,
    *,
    lower_wins: bool = False,
    sandbox: dict[str, str] | None = None,
    think: Iterable[ThinkRow] = (),
) -> Standings:
    """Rate the entries from the finished ``games`` and build the table.

    ``lower_wins``: a game of more than two sides is won by the lower total (ciapanò).
    ``think``: the stored think times, for each entry's statistics.
    """
    timed: dict[str, list[ThinkRow]] = {}
    for t in think:
        timed.setdefault(t.entry, []).append(t)
    results = pair_results(games, seats_of_side, lower_wins=lower_wins)
    counted = tallies(names, games, seats_of_side, lower_wins=lower_wins)
    ratings: Ratings | None = None
    if results:
        ratings = rate(
            results,
            anchor=settings.anchor if any(settings.anchor in (r.a, r.b) for r in results) else None,
            anchor_elo=settings.elo,
            prior_draws=settings.prior_draws,
            samples=settings.bootstrap,
            seed=settings.seed,
        )
    rated = {r.name: r for r in ratings.ratings} if ratings else {}
    order = [r.name for r in ratings.ratings] if ratings else []
    order += [n for n in names if n not in rated]
    rows = []
    for i, entry in enumerate(order):
        r = rated.get(entry)
        nxt = order[i + 1] if i + 1 < len(order) else None
        los = None
        if ratings is not None and r is not None and nxt in rated and settings.bootstrap > 0:
            assert nxt is not None
            los = ratings.los(entry, nxt)
        opponents = [rated[o].elo for o in counted[entry].opponents if o in rated]
        rows.append(
            Row(
                rank=i + 1 if r is not None else None,
                name=entry,
                elo=r.elo if r else None,
                ci_low=r.ci_low if r else None,
                ci_high=r.ci_high if r else None,
                los_next=los,
                tally=counted[entry],
                opponent_elo=sum(opponents) / len(opponents) if opponents else None,
                think=think_stats(timed.get(entry, ())),
            )
        )
    confined = tuple((n, (sandbox or {}).get(n, "unknown")) for n in names)
    return Standings(
        name, tuple(rows), _pairs(results), settings, len(games), ratings, lower_wins, confined
    )


@dataclass(frozen=True)
class StoredFacts:
    """What a tournament database says the tables need (stored by the runner's first run)."""

    name: str
    names: list[str]
    """The entries, in the tournament file's order."""
    seats: list[list[int]]
    """The seats of each side."""
    ratings: RatingSettings
    lower_wins: bool
    sandbox: dict[str, str]
    """What each entry's bots ran under."""


def stored_facts(store: Store) -> StoredFacts:
    """The tables' facts of ``store``; StorageError, one line, for a database without them."""
    try:
        meta = store.meta()
        return StoredFacts(
            meta.get("name", "?"),
            store.fact("entries"),
            store.fact("seats"),
            RatingSettings(**store.fact("ratings")),
            bool(json.loads(meta.get("lower_wins", "false"))),
            json.loads(meta.get("sandbox", "{}")),
        )
    except (StorageError, TypeError, ValueError) as exc:
        raise StorageError(
            f"{store.path}: not a database of this version of tavolo ({exc})"
        ) from None


def stored_standings(
    store: Store,
    facts: StoredFacts,
    settings: RatingSettings | None = None,
    *,
    think_times: bool = True,
) -> Standings:
    """The standings of every game in ``store`` (RatingsError if they cannot be rated);
    without ``think_times``, with none: what two runs of the same games share."""
    return standings(
        facts.name,
        facts.names,
        store.games(),
        facts.seats,
        settings or facts.ratings,
        lower_wins=facts.lower_wins,
        sandbox=facts.sandbox,
        think=store.think_times() if think_times else [],
    )


def _pairs(results: Sequence[PairResult]) -> tuple[tuple[str, str, int, int, int], ...]:
    counts: dict[tuple[str, str], list[int]] = {}
    for r in results:
        a, b, score = (r.a, r.b, r.score_a) if r.a < r.b else (r.b, r.a, 1.0 - r.score_a)
        c = counts.setdefault((a, b), [0, 0, 0])
        c[0 if score == 1.0 else 1 if score == 0.5 else 2] += 1
    return tuple((a, b, *c) for (a, b), c in sorted(counts.items()))  # type: ignore[misc]


HEADERS = [
    "rank", "entry", "Elo", "-/+95%", "LOS next", "games", "W-D-L", "score %",
    "points/deal ± SE", "timeouts/illegal/crashes", "avg opp Elo",
    "mean ms", "p95 ms", "max ms", "bank used",
]  # fmt: skip
"""The wide table's columns (``--wide``; CSV and HTML always)."""
COMPACT = ["rank", "entry", "Elo", "-/+95%", "games", "score %", "faults", "mean ms"]
"""The plain and GitHub tables' columns by default: what fits in 80 columns."""


def _cells(row: Row) -> dict[str, str]:
    t = row.tally
    mean, se = t.points_per_deal
    spread = "-"
    if row.elo is not None and row.ci_low is not None and row.ci_high is not None:
        spread = f"-{row.elo - row.ci_low:.0f}/+{row.ci_high - row.elo:.0f}"
    faults = "/".join(map(str, t.faults))
    return {
        "rank": "-" if row.rank is None else str(row.rank),
        "entry": row.name,
        "Elo": "-" if row.elo is None else f"{row.elo:.0f}",
        "-/+95%": spread,
        "LOS next": "-" if row.los_next is None else f"{100 * row.los_next:.1f}%",
        "games": str(t.games),
        "W-D-L": f"{t.wins}-{t.draws}-{t.losses}",
        "score %": f"{t.score_percent:.1f}",
        "points/deal ± SE": f"{mean:.2f} ± {se:.2f}",
        "timeouts/illegal/crashes": faults,
        "faults": faults,
        "avg opp Elo": "-" if row.opponent_elo is None else f"{row.opponent_elo:.0f}",
        **think_cells(row.think),
    }


def columns(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, cut: int | None, rule: bool = False
) -> str:
    """A plain table: columns two spaces apart, its headers over a line of dashes with
    ``rule``.

    ``cut``: the column of entry names, whose longest cells lose their middle to a ``…``
    (the start and the end, where versions differ, stay) so that each line fits in
    :data:`WIDTH` columns.
    """
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    if cut is not None:
        others = sum(widths) - widths[cut] + 2 * (len(headers) - 1)
        room = max(WIDTH - others, len(headers[cut]), 8)
        if widths[cut] > room:
            rows = [[_shorten(c, room) if i == cut else c for i, c in enumerate(r)] for r in rows]
            widths[cut] = room
    lines = [list(headers)]
    if rule:
        lines.append(["-" * w for w in widths])
    lines += [list(r) for r in rows]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )


def _wrap(text: str) -> str:
    """``text`` in lines of :data:`WIDTH` columns at most, entry names never split."""
    return textwrap.fill(
        text, WIDTH, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    )


def _shorten(text: str, room: int) -> str:
    if len(text) <= room:
        return text
    tail = (room - 1) // 2
    return text[: room - 1 - tail] + "…" + text[len(text) - tail :]


def think_cells(think: ThinkStats | None) -> dict[str, str]:
    """The think-time columns: ``-`` where nothing was timed, ``n/a`` for the time bank
    of a tournament without one."""
    if think is None:
        return {"mean ms": "-", "p95 ms": "-", "max ms": "-", "bank used": "-"}
    bank = "n/a" if think.bank_used is None else f"{100 * think.bank_used:.1f}%"
    return {
        "mean ms": "-" if think.mean_ms is None else f"{think.mean_ms:.1f}",
        "p95 ms": "-" if think.p95_ms is None else str(think.p95_ms),
        "max ms": "-" if think.max_ms is None else str(think.max_ms),
        "bank used": bank,
    }


def render(table: Standings, fmt: TableFormat, *, wide: bool = False) -> str:
    """The standings in ``fmt``; JSON holds what anyone needs to recompute the ratings.

    Plain and GitHub tables are compact unless ``wide``; CSV and HTML have every column.
    """
    if fmt is TableFormat.JSON:
        return json.dumps(as_json(table), indent=2)
    wide = wide or fmt in (TableFormat.CSV, TableFormat.HTML)
    headers = HEADERS if wide else COMPACT
    rows = [[cells[h] for h in headers] for cells in map(_cells, table.rows)]
    if fmt is TableFormat.CSV:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(headers)
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")
    if fmt is TableFormat.PLAIN:
        text = columns(headers, rows, cut=None if wide else headers.index("entry"))
    else:
        text = tabulate(rows, headers=headers, tablefmt=fmt.value, disable_numparse=True)
    if fmt is TableFormat.HTML:
        return text
    s = table.settings
    anchor = f"{s.anchor} fixed at {s.elo:g}" if s.anchor else f"pool mean {s.elo:g}"
    notes = [
        f"{table.games} games; Elo by maximum likelihood ({anchor}, {s.prior_draws:g} "
        f"virtual draw(s) a pair); 95% intervals and LOS from {s.bootstrap} bootstrap "
        "resamples of whole duplicate sets; an entry of fewer than "
        f"{FEW_SETS} sets: the wider of that and the normal interval from the fit's curvature",
        "ms: think time per decision, from the referee's request to the answer; bank used: "
        "the most of its time bank one bot spent in a match"
        if wide
        else "faults: timeouts/illegal/crashes; mean ms: per decision; --wide: every column",
    ]
    if table.sandbox:
        notes.append("sandbox: " + ", ".join(f"{n} {mode}" for n, mode in table.sandbox))
    note = "\n".join(_wrap(n) for n in notes)
    return f"{text}\n\n{note}"


def as_json(table: Standings) -> dict[str, Any]:
    """The standings as JSON-ready data."""
    entries = []
    for row in table.rows:
        t = row.tally
        mean, se = t.points_per_deal
        entries.append(
            {
                "rank": row.rank,
                "name": row.name,
                "elo": row.elo,
                "ci_low": row.ci_low,
                "ci_high": row.ci_high,
                "los_next": row.los_next,
                "games": t.games,
                "wins": t.wins,
                "draws": t.draws,
                "losses": t.losses,
                "score_percent": t.score_percent,
                "points_per_deal": mean,
                "points_per_deal_se": se,
                "timeouts": t.faults.timeouts,
                "illegal": t.faults.illegal,
                "crashes": t.faults.crashes,
                "opponent_elo": row.opponent_elo,
                "sandbox": dict(table.sandbox).get(row.name),
                "think_time": None if row.think is None else think_json(row.think),
            }
        )
    s = table.settings
    return {
        "tournament": table.name,
        "games": table.games,
        "ratings": {
            "model": "bradley-terry-elo",
            "anchor": s.anchor,
            "anchor_elo": s.elo,
            "prior_draws": s.prior_draws,
            "bootstrap": s.bootstrap,
            "bootstrap_seed": s.seed,
            "level": 0.95,
        },
        "entries": entries,
        "pairs": [
            {"a": a, "b": b, "wins_a": wa, "draws": d, "wins_b": wb}
            for a, b, wa, d, wb in table.pairs
        ],
    }


def think_json(think: ThinkStats) -> dict[str, Any]:
    """Think-time statistics as JSON-ready data (``bank_used`` a share from 0 to 1, or null
    without a time bank)."""
    return {
        "decisions": think.decisions,
        "mean_ms": think.mean_ms,
        "p95_ms": think.p95_ms,
        "max_ms": think.max_ms,
        "time_bank_ms": think.time_bank_ms,
        "bank_used": think.bank_used,
    }


THINK_HEADERS = ["match", "entry", "games", "mean ms", "p95 ms", "max ms", "bank used", "timeouts"]


def think_by_match(
    matches: Sequence[MatchRow], games: Sequence[GameRow], think: Sequence[ThinkRow]
) -> str:
    """Each entry's think times and timeouts in each match with a finished game."""
    timed: dict[tuple[int, str], list[ThinkRow]] = {}
    for t in think:
        timed.setdefault((t.match_id, t.entry), []).append(t)
    played: dict[int, list[GameRow]] = {}
    for game in games:
        played.setdefault(game.match_id, []).append(game)
    rows = []
    for match in matches:
        done = played.get(match.id, [])
        if not done:
            continue
        for entry in dict.fromkeys(match.entries):
            cells = think_cells(think_stats(timed.get((match.id, entry), ())))
            timeouts = sum(g.faults[entry].timeouts for g in done if entry in g.faults)
            rows.append(
                [str(match.id), entry, str(len(done)), *list(cells.values()), str(timeouts)]
            )
    title = (
        "think times per match (ms per decision, from the referee's request to the answer; "
        "bank used: the most of its time bank one bot spent in the match):"
    )
    table = columns(THINK_HEADERS, rows, cut=THINK_HEADERS.index("entry"), rule=True)
    return _wrap(title) + "\n" + table


def head_to_head(results: Iterable[PairResult]) -> dict[tuple[str, str], tuple[float, int]]:
    """(x, y) -> x's score against y and the games it is out of, both ways round."""
    score: dict[tuple[str, str], tuple[float, int]] = {}
    for r in results:
        for x, y, s in ((r.a, r.b, r.score_a), (r.b, r.a, 1.0 - r.score_a)):
            got, games = score.get((x, y), (0.0, 0))
            score[(x, y)] = (got + s, games + 1)
    return score


def crosstable(
    table: Standings, games: Sequence[GameRow], seats_of_side: Sequence[Sequence[int]]
) -> str:
    """Each row entry's score against each column entry (score/games), and pentanomials."""
    names = [r.name for r in table.rows]
    results = pair_results(games, seats_of_side, lower_wins=table.lower_wins)
    score = head_to_head(results)
    rows = []
    for i, x in enumerate(names, 1):
        line: list[str] = [f"{i}. {x}"]
        for y in names:
            got = score.get((x, y))
            line.append("" if x == y else "-" if got is None else f"{got[0]:g}/{got[1]:g}")
        rows.append(line)
    headers = ["", *(str(i) for i in range(1, len(names) + 1))]
    text = tabulate(rows, headers=headers, disable_numparse=True)
    if len(seats_of_side) == 2:
        lines = ["", "pentanomial over duplicate pairs (a's pair score 0, 0.5, 1, 1.5, 2):"]
        for a, b, *_ in table.pairs:
            penta = pentanomial(results, a, b)
            if any(penta):
                lines.append(f"  {a} vs {b}: {list(penta)}")
        text += "\n".join(lines) if len(lines) > 2 else ""
    return text
