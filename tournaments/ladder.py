"""The ladder: entries against the built-in rungs in duplicate matches, rated on one scale.

A *meeting* is one match between a participant and a rung: in a game of two sides the two
face each other; with three or four players each alone the rung takes every other seat
(copies of it, each its own process), so the participant meets nothing but that rung. Every
meeting deals the same seeded duplicate sets, and the matches are played one after another
on one referee by :class:`referee.match.match.Match`, the runner of ``tavolo play`` and of the
tournaments.

Elo comes from :func:`tournaments.ratings.rate`, the fit of the tournament tables; its
bootstrap resamples duplicate sets by set number across meetings, because every meeting
plays the same deals in set ``n``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.engine.rules import Rules
from referee.entrant_keys import EntrantKeys
from referee.entries import BUILT_IN_BOTS, Entry, parse_entry
from referee.match.config import Limits, MatchConfig
from referee.match.match import Match
from referee.match.results import Faults, GameReport, MatchResult
from referee.records import open_record
from referee.sandbox.bwrap import SandboxMode
from referee.service.server import Referee, start_referee
from tournaments.ratings import PairResult, Ratings, rate
from tournaments.results import always_faulted, pair_results
from tournaments.storage import GameRow

DEFAULT_RUNGS = ("random", "heuristic", "pimc")
"""The ladder's rungs, weakest first: built-in bots every entrant measures against."""
DEFAULT_SEED = "tavolo-ladder-1"
"""The seed of every ladder unless ``--seed`` says otherwise: the same deals for everyone."""
DEFAULT_SETS = 10
"""Duplicate sets per meeting."""
ANCHOR_ELO = 0.0
"""The Elo the first rung is held at."""
Z95 = 1.959963984540054
"""The standard normal's 97.5% quantile: a two-sided 95% interval."""


class LadderError(ValueError):
    """A ladder that cannot be played: an unknown rung, a bad entry, nothing to play."""


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` out of ``trials`` (95% by default).

    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)`` with ``p = successes/trials``;
    (0, 1) for no trials.
    """
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be 0 to {trials}, got {successes}")
    if trials == 0:
        return 0.0, 1.0
    n = trials
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    # Exact ends where the interval touches them: the formula gives them up to rounding.
    low = 0.0 if successes == 0 else (centre - spread) / scale
    high = 1.0 if successes == trials else (centre + spread) / scale
    return low, high


def check_rungs(names: Sequence[str], built_in: Collection[str] = BUILT_IN_BOTS) -> tuple[str, ...]:
    """The rungs, checked: ``built_in`` bots, each once; LadderError naming the first that
    is not (a default rung missing from this tavolo says so)."""
    if not names:
        raise LadderError("--rungs names no rung; give built-in bots, e.g. random,heuristic")
    seen: list[str] = []
    for name in names:
        if name in seen:
            raise LadderError(f"rung {name!r} is given twice in --rungs")
        if name not in built_in:
            built = ", ".join(built_in)
            if name in DEFAULT_RUNGS:
                rest = ",".join(r for r in names if r in built_in)
                hint = f": --rungs {rest}" if rest else " with --rungs"
                raise LadderError(
                    f"rung {name!r} is not built into this tavolo (its built-in bots: {built}); "
                    f"leave it out{hint}"
                )
            raise LadderError(f"rung {name!r} is not a built-in bot; rungs are one of {built}")
        seen.append(name)
    return tuple(seen)


@dataclass(frozen=True)
class Participant:
    """An entry or a rung of the ladder."""

    name: str
    """Unique in the ladder; the name in every table and record."""
    bot: str
    """As given: a built-in name, ``cmd:...`` or a manifest path."""
    entry: Entry
    rung: bool


@dataclass(frozen=True)
class Meeting:
    """One match of the ladder: ``single`` against ``rung``, which takes every other side."""

    single: str
    rung: str


def participants(entries: Sequence[str], rungs: Sequence[str]) -> list[Participant]:
    """The rungs and the entries, with unique names; an entry that is a rung's own name is
    that rung. LadderError for an entry that cannot be read, remote, or given twice."""
    out = [Participant(r, r, parse_entry(r), True) for r in rungs]
    taken = {r for r in rungs}
    given: set[str] = set()
    for text in entries:
        if text in given:
            raise LadderError(f"entry {text!r} is given twice")
        given.add(text)
        if text in rungs:
            continue
        try:
            entry = parse_entry(text)
        except ValueError as exc:
            raise LadderError(str(exc)) from None
        if entry.remote:
            raise LadderError("the ladder starts its entries itself: remote is not an entry here")
        name, k = entry.name, 1
        while name in taken:
            k += 1
            name = f"{entry.name}-{k}"
        taken.add(name)
        out.append(Participant(name, text, dataclasses.replace(entry, name=name), False))
    return out


def meetings(
    players: Sequence[Participant], entries: Sequence[str], *, rung_matches: bool
) -> list[Meeting]:
    """Each entry against each rung (an entry that is a rung: against the others), then,
    with ``rung_matches``, each rung against each later rung (the later one takes the other
    sides). LadderError if that is nothing."""
    rungs = [p.name for p in players if p.rung]
    out: list[Meeting] = []
    pairs: set[frozenset[str]] = set()

    def add(single: str, rung: str) -> None:
        if single != rung and frozenset((single, rung)) not in pairs:
            pairs.add(frozenset((single, rung)))
            out.append(Meeting(single, rung))

    for p in players:
        if not p.rung or p.name in entries:
            for r in rungs:
                add(p.name, r)
    if rung_matches:
        for i, a in enumerate(rungs):
            for b in rungs[i + 1 :]:
                add(a, b)
    if not out:
        raise LadderError(
            "nothing to play: give an entry, or two rungs and leave --rung-matches on"
        )
    return out


@dataclass(frozen=True)
class LadderGame:
    """A finished game of a ladder (or a bench) match."""

    meeting: int
    """Which match, from 0."""
    names: tuple[str, ...]
    """The participant at each side of the game (a rung's copies under the rung's name)."""
    report: GameReport


def match_entries(rules: Rules, single: Entry, rung: Entry) -> tuple[Entry, ...]:
    """The entries of a meeting's match: ``single``, then ``rung`` on every other side."""
    return (single, *([rung] * (rules.sides - 1)))


async def play_matches(
    configs: Sequence[MatchConfig],
    workdir: Path,
    *,
    records: Path | None = None,
    on_game: Callable[[int, GameReport], None] | None = None,
    on_deal: Callable[[], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    referee: Referee | None = None,
    keys: EntrantKeys | None = None,
) -> list[MatchResult]:
    """Play ``configs`` one after another on one referee over gRPC, each in a folder of its
    own under ``workdir`` (with ``records``: its record in ``records/NN.jsonl``, from 01).

    ``on_game(k, report)`` hears every game of match ``k`` (from 0) as it ends. One match at
    a time, so the bots' think times are not spent waiting for another match's bots.
    ``referee``: a running referee to play on (left running), else one started for them;
    ``keys``: its entrant keys, which seat the remote entries known to them.
    """
    own = referee is None
    if referee is None:
        referee = await start_referee()
    out: list[MatchResult] = []
    try:
        for k, config in enumerate(configs):
            with contextlib.ExitStack() as stack:
                stream = None
                if records is not None:
                    records.mkdir(parents=True, exist_ok=True)
                    stream = stack.enter_context(open_record(records / f"{k + 1:02d}.jsonl"))

                def heard(report: GameReport, k: int = k) -> None:
                    if on_game is not None:
                        on_game(k, report)

                match = Match(
                    referee,
                    config,
                    record=stream,
                    workdir=workdir / f"match-{k + 1:02d}",
                    on_deal=(lambda _: on_deal()) if on_deal is not None else None,
                    on_game_recorded=heard,
                    keys=keys,
                )
                for line in match.warnings:
                    if on_warning is not None:
                        on_warning(line)
                out.append(await match.run())
    finally:
        if own:
            await referee.stop()
    return out


def ladder_configs(
    rules: Rules,
    seed: str,
    players: Sequence[Participant],
    plan: Sequence[Meeting],
    *,
    sets: int,
    deals: int | None,
    limits: Limits,
    sandbox: SandboxMode | None,
) -> list[MatchConfig]:
    """The match of each meeting: the same seed, hence the same deals, for all of them."""
    named = {p.name: p.entry for p in players}
    out = []
    for m in plan:
        entries = match_entries(rules, named[m.single], named[m.rung])
        if sandbox is not None:
            # --sandbox overrides what a manifest asks, as in tavolo play.
            entries = tuple(dataclasses.replace(e, sandbox=None) for e in entries)
        out.append(
            MatchConfig(
                rules,
                seed,
                entries,
                deals,
                sets,
                limits,
                sandbox=sandbox or SandboxMode.BWRAP,
                allow_unconfined=True,
            )
        )
    return out


def ladder_game(plan: Sequence[Meeting], meeting: int, report: GameReport) -> LadderGame:
    """A game of meeting ``meeting`` under its participants' names (entry 0 is the single)."""
    m = plan[meeting]
    return LadderGame(meeting, tuple(m.single if e == 0 else m.rung for e in report.sides), report)


def game_row(game: LadderGame) -> GameRow:
    """The game as the tournament tables store it: what their pairwise results read."""
    r = game.report
    faults: dict[str, Faults] = {}
    for e, f in enumerate(r.faults):
        name = game.names[r.sides.index(e)]
        before = faults.get(name, Faults())
        faults[name] = Faults(*(a + b for a, b in zip(before, f, strict=True)))
    return GameRow(
        match_id=game.meeting,
        number=r.number,
        set_number=r.set_number,
        sides=game.names,
        winner=r.outcome.winner,
        totals=r.outcome.totals,
        termination=r.outcome.termination.value,
        forfeit_seat=r.forfeit_seat,
        deals=r.outcome.deals,
        faults={n: f for n, f in faults.items() if any(f)},
        deal_points=r.deal_points,
        places=r.outcome.places,
    )


def ladder_results(rules: Rules, games: Sequence[LadderGame]) -> list[PairResult]:
    """Pairwise results of every game, keyed by duplicate set number; a rung's copies do
    not play each other."""
    seats = [rules.seats_of(s) for s in range(rules.sides)]
    rows = [game_row(g) for g in games]
    out = []
    for r in pair_results(rows, seats, lower_wins=rules.lower_wins):
        if r.a != r.b:
            # pair_results keys by match and set; every meeting deals set n alike.
            out.append(dataclasses.replace(r, set_key=r.set_key.partition(":")[2]))
    return out


@dataclass(frozen=True)
class WinRate:
    """One participant's games against one rung, where it sat alone against it."""

    games: int
    wins: int
    draws: int

    @property
    def rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """Wilson 95% interval of the win rate."""
        return wilson(self.wins, self.games)


@dataclass(frozen=True)
class LadderRow:
    """A participant's line of the ladder."""

    name: str
    bot: str
    rung: bool
    elo: float
    elo_low: float
    elo_high: float
    games: int
    faults: Faults
    vs: dict[str, WinRate]
    """Rung -> its game win rate against it (games it sat alone at a table of that rung; in
    a game of two sides, every game of their meeting)."""


@dataclass(frozen=True)
class Ladder:
    """The ladder's figures."""

    rules: Rules
    seed: str
    sets: int
    deals: int | None
    rungs: tuple[str, ...]
    anchor: str
    rows: tuple[LadderRow, ...]
    """Best Elo first."""
    games: int
    ratings: Ratings


def ladder_table(
    rules: Rules,
    seed: str,
    players: Sequence[Participant],
    plan: Sequence[Meeting],
    games: Sequence[LadderGame],
    *,
    sets: int,
    deals: int | None,
    samples: int = 1000,
) -> Ladder:
    """Rate the participants (the first rung held at :data:`ANCHOR_ELO`) and count each
    one's win rate against each rung. RatingsError if the games cannot be rated."""
    rungs = tuple(p.name for p in players if p.rung)
    anchor = rungs[0]
    ratings = rate(
        ladder_results(rules, games), anchor=anchor, anchor_elo=ANCHOR_ELO, samples=samples
    )
    counts: dict[tuple[str, str], list[int]] = {}
    played: dict[str, int] = {}
    faults: dict[str, Faults] = {}
    for g in games:
        m = plan[g.meeting]
        row = game_row(g)
        for name in set(g.names):
            played[name] = played.get(name, 0) + 1
            f = row.faults.get(name, Faults())
            before = faults.get(name, Faults())
            faults[name] = Faults(*(a + b for a, b in zip(before, f, strict=True)))
        singles = [(m.single, m.rung)]
        if rules.sides == 2:
            singles.append((m.rung, m.single))
        winner = g.report.outcome.winner
        for who, against in singles:
            if against not in rungs:
                continue
            side = g.names.index(who)
            cell = counts.setdefault((who, against), [0, 0, 0])
            cell[0] += 1
            cell[1] += winner == side
            cell[2] += winner is None
    by_name = {p.name: p for p in players}
    rows = []
    for r in ratings.ratings:
        p = by_name[r.name]
        vs = {rung: WinRate(*counts[(p.name, rung)]) for rung in rungs if (p.name, rung) in counts}
        rows.append(
            LadderRow(
                p.name, p.bot, p.rung, r.elo, r.ci_low, r.ci_high,
                played.get(p.name, 0), faults.get(p.name, Faults()), vs,
            )
        )  # fmt: skip
    return Ladder(rules, seed, sets, deals, rungs, anchor, tuple(rows), len(games), ratings)


def faulted_everywhere(rules: Rules, games: Sequence[LadderGame]) -> dict[str, LadderGame]:
    """Participants that faulted in every game they played, with the last such game."""
    seats = [rules.seats_of(s) for s in range(rules.sides)]
    rows = [game_row(g) for g in games]
    found = always_faulted(rows, seats)
    by_key = {(g.meeting, g.report.number): g for g in games}
    return {name: by_key[(match, number)] for name, (_, match, number) in found.items()}
