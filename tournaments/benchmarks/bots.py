"""How strong and how quick a bot is: named scenarios of duplicate sets over real gRPC.

Each scenario is a match of the bot under test against one built-in opponent (with three or
four players each alone, the opponent takes every other seat), played by
:func:`tournaments.ladder.play_matches`. The figures come from the games' reports, which are
read from their records: wins, the points of each finished deal, and the ``ms`` of every
answer. Targets (issue 17) are shown beside the figures, never asserted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.engine.registry import preset
from referee.engine.rules import Rules
from referee.entries import Entry, parse_entry
from referee.match.config import Limits, MatchConfig
from referee.match.results import GameReport
from referee.match.table import rotations
from referee.sandbox.bwrap import SandboxMode
from tournaments.ladder import Z95, match_entries, play_matches, wilson

DEFAULT_SEED = "tavolo-bench-bots-1"
DEFAULT_GAMES = 100
"""Games per scenario, rounded up to whole duplicate sets."""
P99_TARGET_MS = 500
"""The bot's p99 think time at its default settings: at most this."""
TIMEOUT_GAMES = 1000
"""No timeout in at least this many games."""


@dataclass(frozen=True)
class Scenario:
    """One named match of the benchmark."""

    name: str
    game: str
    """The preset."""
    knobs: tuple[str, ...]
    """``knob=value`` changes to the preset."""
    opponent: str
    """A built-in bot."""
    win_target: float | None = None
    """The game win rate the issue asks of ``pimc``; None: figures only."""

    def rules(self) -> Rules:
        return preset(self.game).with_knobs(list(self.knobs))


SCENARIOS = (
    Scenario("defaults-vs-heuristic", "tressette", (), "heuristic", 0.65),
    Scenario("study-vs-heuristic", "tressette-study", (), "heuristic", 0.65),
    Scenario("study-vs-random", "tressette-study", (), "random", 0.95),
    Scenario("signals-any", "tressette", ("signals=any",), "heuristic"),
    Scenario("signals-muto", "tressette", ("signals=muto",), "heuristic"),
    Scenario("a-tre-vs-heuristic", "tressette-a-tre", (), "heuristic"),
    Scenario("a-due-vs-heuristic", "tressette-a-due", (), "heuristic"),
    Scenario("ciapano-vs-heuristic", "ciapano", (), "heuristic"),
    Scenario("calabresella-vs-heuristic", "calabresella", (), "heuristic"),
)
SIGNALS = ("signals-any", "signals-muto")
"""The pair whose margins are compared: the first's must be larger by more than the interval."""


def scenario(name: str) -> Scenario:
    """The scenario ``name``; ValueError naming the choices."""
    for s in SCENARIOS:
        if s.name == name:
            return s
    raise ValueError(
        f"unknown scenario {name!r}; choose from {', '.join(s.name for s in SCENARIOS)}"
    )


@dataclass(frozen=True)
class Margin:
    """A mean per deal with its 95% interval, from per-set sums (sets are independent)."""

    mean: float | None
    low: float | None
    high: float | None
    """None with fewer than two duplicate sets: no spread to measure."""


@dataclass(frozen=True)
class Figures:
    """What one scenario measured of the bot under test."""

    scenario: Scenario
    rules: Rules
    games: int
    wins: int
    draws: int
    deals: int
    margin: Margin
    """Its side's points minus the mean of the other sides', per finished deal (negated
    where the lower total wins, as in ciapanò): more is better."""
    set_margins: dict[int, tuple[float, int]]
    """Duplicate set -> (summed margin, deals): what intervals and comparisons use."""
    think_ms: tuple[int, ...]
    """Every answer's think time, in ms, in the order played."""
    timeouts: int
    illegal: int
    crashes: int
    forfeits: int
    """Games its side lost by a forfeit of one of its seats."""
    record: Path | None = None
    shared_with: str | None = None
    """The scenario whose games these are, when both have the same rules and opponent."""

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def win_interval(self) -> tuple[float, float]:
        return wilson(self.wins, self.games)

    def percentile(self, q: float) -> int | None:
        """The ``q`` quantile (0 to 1) of the think times, by nearest rank."""
        times = sorted(self.think_ms)
        if not times:
            return None
        return times[max(0, math.ceil(q * len(times)) - 1)]


@dataclass(frozen=True)
class Difference:
    """One scenario's margin minus another's over the same duplicate sets, with its 95%
    interval (paired by set: the same seed deals both the same cards)."""

    first: str
    second: str
    value: float | None
    low: float | None
    high: float | None

    @property
    def exceeds(self) -> bool:
        """The difference is positive by more than its interval: its low end is above 0."""
        return self.low is not None and self.low > 0


def ratio_interval(per_set: dict[int, tuple[float, int]]) -> Margin:
    """Σ margins / Σ deals over the sets, with the cluster (ratio-estimator) standard error
    ``sqrt(n/(n-1) · Σ (M_s - m·D_s)²) / Σ D_s``."""
    n = len(per_set)
    deals = sum(d for _, d in per_set.values())
    if deals == 0:
        return Margin(None, None, None)
    mean = sum(m for m, _ in per_set.values()) / deals
    if n < 2:
        return Margin(mean, None, None)
    spread = sum((m - mean * d) ** 2 for m, d in per_set.values())
    se = math.sqrt(n / (n - 1) * spread) / deals
    return Margin(mean, mean - Z95 * se, mean + Z95 * se)


def difference(a: Figures, b: Figures) -> Difference:
    """``a``'s margin minus ``b``'s over the same duplicate sets."""
    d = paired_difference(a.set_margins, b.set_margins)
    return Difference(a.scenario.name, b.scenario.name, d.mean, d.low, d.high)


def paired_difference(a: dict[int, tuple[float, int]], b: dict[int, tuple[float, int]]) -> Margin:
    """The margin of sets ``a`` minus that of sets ``b`` with its 95% interval, by the delta
    method over the sets both have: ``z_s = (M_s - m·D_s)/ΣD`` of ``a`` less that of ``b``,
    ``se = sqrt(n/(n-1) · Σ z_s²)``. No interval unless both have the same two or more sets."""
    ma, mb = ratio_interval(a).mean, ratio_interval(b).mean
    if ma is None or mb is None:
        return Margin(None, None, None)
    value = ma - mb
    if len(a) < 2 or set(a) != set(b):
        return Margin(value, None, None)
    da = sum(d for _, d in a.values())
    db = sum(d for _, d in b.values())
    z = [(a[s][0] - ma * a[s][1]) / da - (b[s][0] - mb * b[s][1]) / db for s in sorted(a)]
    n = len(z)
    se = math.sqrt(n / (n - 1) * sum(x * x for x in z))
    return Margin(value, value - Z95 * se, value + Z95 * se)


@dataclass
class _Count:
    games: int = 0
    wins: int = 0
    draws: int = 0
    deals: int = 0
    per_set: dict[int, tuple[float, int]] = field(default_factory=dict)
    think: list[int] = field(default_factory=list)
    timeouts: int = 0
    illegal: int = 0
    crashes: int = 0
    forfeits: int = 0


def count_game(rules: Rules, count: _Count, report: GameReport) -> None:
    """Add one game of a scenario's match (entry 0 is the bot under test)."""
    side = report.sides.index(0)
    outcome = report.outcome
    count.games += 1
    count.wins += outcome.winner == side
    count.draws += outcome.winner is None
    sign = -1.0 if rules.lower_wins else 1.0
    margin = 0.0
    for points in report.deal_points:
        others = [p for s, p in enumerate(points) if s != side]
        margin += sign * (points[side] - sum(others) / len(others))
    total, deals = count.per_set.get(report.set_number, (0.0, 0))
    count.per_set[report.set_number] = (total + margin, deals + len(report.deal_points))
    count.deals += len(report.deal_points)
    count.think.extend(report.think_ms[0])
    faults = report.faults[0]
    count.timeouts += faults.timeouts
    count.illegal += faults.illegal
    count.crashes += faults.crashes
    if report.forfeit_seat is not None and report.forfeit_seat in rules.seats_of(side):
        count.forfeits += 1


def sets_for(rules: Rules, games: int) -> int:
    """Duplicate sets that play at least ``games`` games."""
    return max(1, math.ceil(games / rotations(rules)))


def bench_bots(
    bot: str,
    chosen: Sequence[Scenario],
    *,
    games: int,
    seed: str,
    deals: int | None,
    deadline_ms: int,
    sandbox: SandboxMode | None,
    workdir: Path,
    records: Path | None = None,
    on_game: Callable[[], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> list[Figures]:
    """Play every scenario of ``chosen`` (those with the same rules and opponent once) with
    ``bot`` (an entry as ``tavolo play`` takes it) and measure it.

    EntryError if ``bot`` or an opponent is no entry.
    """
    under_test = parse_entry(bot)
    played: list[tuple[Rules, str]] = []
    first_of: dict[int, str] = {}
    which: dict[str, int] = {}
    for s in chosen:
        key = (s.rules(), s.opponent)
        if key not in played:
            played.append(key)
            first_of[len(played) - 1] = s.name
        which[s.name] = played.index(key)
    configs = [
        _config(rules, seed, under_test, parse_entry(opponent), games, deals, deadline_ms, sandbox)
        for rules, opponent in played
    ]
    counts = [_Count() for _ in configs]

    def heard(k: int, report: GameReport) -> None:
        count_game(played[k][0], counts[k], report)
        if on_game is not None:
            on_game()

    asyncio.run(
        play_matches(configs, workdir, records=records, on_game=heard, on_warning=on_warning)
    )
    out = []
    for s in chosen:
        k = which[s.name]
        c = counts[k]
        out.append(
            Figures(
                s, played[k][0], c.games, c.wins, c.draws, c.deals, ratio_interval(c.per_set),
                dict(c.per_set), tuple(c.think), c.timeouts, c.illegal, c.crashes, c.forfeits,
                None if records is None else records / f"{k + 1:02d}.jsonl",
                None if first_of[k] == s.name else first_of[k],
            )
        )  # fmt: skip
    return out


def total_games(rules_games: Sequence[Figures]) -> int:
    """Games played, each shared match counted once."""
    return sum(f.games for f in rules_games if f.shared_with is None)


def _config(
    rules: Rules,
    seed: str,
    bot: Entry,
    opponent: Entry,
    games: int,
    deals: int | None,
    deadline_ms: int,
    sandbox: SandboxMode | None,
) -> MatchConfig:
    entries = match_entries(rules, bot, opponent)
    if sandbox is not None:
        # --sandbox overrides what a manifest asks, as in tavolo play.
        entries = tuple(dataclasses.replace(e, sandbox=None) for e in entries)
    return MatchConfig(
        rules,
        seed,
        entries,
        deals,
        sets_for(rules, games),
        Limits(deadline_ms=deadline_ms),
        sandbox=sandbox or SandboxMode.BWRAP,
        allow_unconfined=True,
    )
