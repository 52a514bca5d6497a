"""The standings table and the crosstable of a tournament database, in several formats."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tabulate import tabulate

from tournaments.config import RatingSettings
from tournaments.ratings import PairResult, Ratings, rate
from tournaments.results import Tally, pair_results, tallies
from tournaments.sprt import pentanomial
from tournaments.storage import GameRow


class TableFormat(StrEnum):
    """Output formats of ``tavolo tournament table``."""

    PLAIN = "plain"
    GITHUB = "github"
    CSV = "csv"
    HTML = "html"
    JSON = "json"


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
) -> Standings:
    """Rate the entries from the finished ``games`` and build the table.

    ``lower_wins``: a game of more than two sides is won by the lower total (ciapanò).
    """
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
            )
        )
    confined = tuple((n, (sandbox or {}).get(n, "unknown")) for n in names)
    return Standings(
        name, tuple(rows), _pairs(results), settings, len(games), ratings, lower_wins, confined
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
]  # fmt: skip


def _cells(row: Row) -> list[str]:
    t = row.tally
    mean, se = t.points_per_deal
    spread = "-"
    if row.elo is not None and row.ci_low is not None and row.ci_high is not None:
        spread = f"-{row.elo - row.ci_low:.0f}/+{row.ci_high - row.elo:.0f}"
    return [
        "-" if row.rank is None else str(row.rank),
        row.name,
        "-" if row.elo is None else f"{row.elo:.0f}",
        spread,
        "-" if row.los_next is None else f"{100 * row.los_next:.1f}%",
        str(t.games),
        f"{t.wins}-{t.draws}-{t.losses}",
        f"{t.score_percent:.1f}",
        f"{mean:.2f} ± {se:.2f}",
        "/".join(map(str, t.faults)),
        "-" if row.opponent_elo is None else f"{row.opponent_elo:.0f}",
    ]


def render(table: Standings, fmt: TableFormat) -> str:
    """The standings in ``fmt``; JSON holds what anyone needs to recompute the ratings."""
    if fmt is TableFormat.JSON:
        return json.dumps(as_json(table), indent=2)
    rows = [_cells(r) for r in table.rows]
    if fmt is TableFormat.CSV:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(HEADERS)
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")
    text = tabulate(rows, headers=HEADERS, tablefmt=fmt.value, disable_numparse=True)
    if fmt is TableFormat.HTML:
        return text
    s = table.settings
    anchor = f"{s.anchor} fixed at {s.elo:g}" if s.anchor else f"pool mean {s.elo:g}"
    note = (
        f"{table.games} games; Elo by maximum likelihood ({anchor}, {s.prior_draws:g} "
        f"virtual draw(s) a pair); 95% intervals and LOS from {s.bootstrap} bootstrap "
        "resamples of whole duplicate sets"
    )
    if table.sandbox:
        note += "\nsandbox: " + ", ".join(f"{n} {mode}" for n, mode in table.sandbox)
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


def crosstable(
    table: Standings, games: Sequence[GameRow], seats_of_side: Sequence[Sequence[int]]
) -> str:
    """Each row entry's score against each column entry (score/games), and pentanomials."""
    names = [r.name for r in table.rows]
    results = pair_results(games, seats_of_side, lower_wins=table.lower_wins)
    score: dict[tuple[str, str], list[float]] = {}
    for r in results:
        for x, y, s in ((r.a, r.b, r.score_a), (r.b, r.a, 1.0 - r.score_a)):
            cell = score.setdefault((x, y), [0.0, 0])
            cell[0] += s
            cell[1] += 1
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
