"""Running a tournament: the schedule, matches in parallel on one referee, resumable storage.

Every finished deal and game is committed as it ends (``tournaments.storage``). A run
that starts on a database with results plays only what is missing: finished games are
never played again, and a game that was cut short is played again from its seeds.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.match import (
    DealReport,
    GameReport,
    Match,
    MatchConfig,
    book_reuse,
    confinement_of,
    confinement_warnings,
    rotations,
)
from referee.service import Referee, start_referee
from tournaments.config import Format, TournamentConfig
from tournaments.results import match_points, pair_results
from tournaments.schedule import Pairing, gauntlet, round_robin, swiss_round
from tournaments.sprt import SprtState, pentanomial, sprt
from tournaments.storage import GameRow, MatchRow, StorageError, Store


@dataclass(frozen=True)
class RunState:
    """Where a run is, for progress displays."""

    games_done: int
    games_total: int
    deals_done: int
    """Deals finished in this run (all attempts)."""
    sprt: SprtState | None = None


@dataclass(frozen=True)
class RunSummary:
    """How a run ended."""

    games_played: int
    """Games finished by this run."""
    games_total: int
    sprt: SprtState | None = None


def table_facts(config: TournamentConfig) -> dict[str, Any]:
    """What the tables need, stored in the database so they need no tournament file."""
    return {
        "entries": [e.name for e in config.entries],
        "seats": [list(config.rules.seats_of(s)) for s in range(config.rules.sides)],
        "ratings": dataclasses.asdict(config.ratings),
        "lower_wins": config.rules.lower_wins,
    }


def open_store(path: Path, config: TournamentConfig, *, force: bool = False) -> Store:
    """The database of ``config``'s tournament at ``path``, open for a run (see Store)."""
    return Store.open_for_run(
        path,
        fingerprint=config.fingerprint(),
        name=config.name,
        config_text=config.text,
        facts=table_facts(config),
        force=force,
    )


def confinements(config: TournamentConfig) -> dict[str, str]:
    """What each entry's bots will run under: ``bwrap``, ``off`` or ``remote``.

    SandboxError, one line, if a ``cmd:`` or manifest entry needs a sandbox that cannot
    be made here (built-in bots then run unconfined).
    """
    return {
        e.name: confinement_of(
            dataclasses.replace(e.entry, name=e.name), config.sandbox, allow_unconfined=False
        )
        for e in config.entries
    }


def tournament_warnings(config: TournamentConfig, modes: dict[str, str]) -> list[str]:
    """What the sandbox cannot promise in this tournament: remote entries of duplicate play,
    and built-in entries unconfined because no sandbox can be made here; and a deal book too
    short for the deals asked of it."""
    out = confinement_warnings(
        modes, config.sandbox, duplicate=config.duplicate, unconfined="built-in"
    )
    reuse = book_reuse(config.book, config.deals, config.sets if config.duplicate else config.games)
    return [*out, reuse] if reuse else out


def note_confinements(store: Store, modes: dict[str, str]) -> None:
    """Store what each entry ran under in this run, beside what earlier runs used."""
    try:
        known: dict[str, str] = store.fact("sandbox")
    except StorageError:
        known = {}
    merged = {}
    for name, mode in modes.items():
        before = [m for m in known.get(name, "").split("+") if m]
        merged[name] = "+".join(before + ([mode] if mode not in before else []))
    store.set_fact("sandbox", merged)


def match_seed(seed: str, round_: int) -> str:
    """The deal seed of every match of round ``round_``: a round's tables play the same deals."""
    return f"{seed}/round-{round_}"


def planned_pairings(config: TournamentConfig) -> list[Pairing]:
    """The whole schedule of a format that does not depend on results (not Swiss)."""
    names = [e.name for e in config.entries]
    sides = config.rules.sides
    if config.format is Format.GAUNTLET:
        assert config.candidate is not None
        field = [n for n in names if n != config.candidate]
        return gauntlet(config.candidate, field, sides=sides)
    if config.format in (Format.ROUND_ROBIN, Format.DOUBLE_ROUND_ROBIN):
        return round_robin(names, sides=sides, double=config.format is Format.DOUBLE_ROUND_ROBIN)
    raise ValueError(f"{config.format.value} pairs round by round")


def total_games(config: TournamentConfig) -> int:
    """Games of the whole tournament, if no SPRT stops it early."""
    if config.format is Format.SWISS:
        assert config.rounds is not None
        return config.rounds * (len(config.entries) // 2) * config.games
    return len(planned_pairings(config)) * config.games


class TournamentRun:
    """One run of a tournament on its database."""

    def __init__(
        self,
        config: TournamentConfig,
        store: Store,
        *,
        concurrency: int | None = None,
        listen: str = "127.0.0.1:0",
        workdir: Path | None = None,
        sprt_bounds: tuple[float, float] | None = None,
        on_progress: Callable[[RunState], None] | None = None,
        on_ticket: Callable[[str, str, str], None] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.concurrency = concurrency or config.concurrency or os.cpu_count() or 1
        self.listen = listen
        self.workdir = workdir
        self.sprt_bounds = sprt_bounds
        self.on_progress = on_progress
        self.on_ticket = on_ticket
        self.names = [e.name for e in config.entries]
        self._entries = {e.name: dataclasses.replace(e.entry, name=e.name) for e in config.entries}
        self._seats = [config.rules.seats_of(s) for s in range(config.rules.sides)]
        self._games_total = total_games(config)
        self._games_played = 0
        self._deals_done = 0
        self._running: set[Match] = set()
        self._sprt: SprtState | None = None
        if sprt_bounds is not None and len(self.names) != 2:
            raise ValueError(f"--sprt compares two entries; this tournament has {len(self.names)}")

    async def run(self) -> RunSummary:
        """Play everything not played yet."""
        referee = await start_referee(self.listen)
        try:
            with contextlib.ExitStack() as stack:
                root = self.workdir
                if root is None:
                    root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tavolo-")))
                self._root = root
                self._check_sprt()
                self._report()
                if self.config.format is Format.SWISS:
                    await self._swiss(referee)
                else:
                    rows = [self._add(p) for p in planned_pairings(self.config)]
                    await self._play_all(referee, rows)
        finally:
            await referee.stop()
        return RunSummary(self._games_played, self._games_total, self._sprt)

    # -- scheduling ------------------------------------------------------------------------

    def _add(self, pairing: Pairing) -> MatchRow:
        return self.store.add_match(
            pairing.round,
            pairing.entries,
            match_seed(self.config.seed, pairing.round),
            self.config.games,
        )

    async def _swiss(self, referee: Referee) -> None:
        assert self.config.rounds is not None
        for round_ in range(1, self.config.rounds + 1):
            rows = [m for m in self.store.matches() if m.round == round_]
            if not rows:
                scores, met, byes = self._swiss_standing()
                pairing = swiss_round(self.names, round_, scores, met, byes)
                if pairing.bye is not None:
                    self.store.add_bye(round_, pairing.bye)
                rows = [self._add(p) for p in pairing.pairings]
            await self._play_all(referee, rows)
            if self._decided():
                return

    def _swiss_standing(
        self,
    ) -> tuple[dict[str, float], dict[frozenset[str], int], dict[str, int]]:
        scores = {n: 0.0 for n in self.names}
        met: dict[frozenset[str], int] = {}
        byes: dict[str, int] = {}
        for row in self.store.matches():
            pair = frozenset(row.entries)
            met[pair] = met.get(pair, 0) + 1
            for name, points in match_points(self.store.games(row.id)).items():
                scores[name] += points
        for entry in self.store.byes().values():
            byes[entry] = byes.get(entry, 0) + 1
            scores[entry] += 1.0
        return scores, met, byes

    # -- playing ---------------------------------------------------------------------------

    async def _play_all(self, referee: Referee, rows: Sequence[MatchRow]) -> None:
        gate = asyncio.Semaphore(self.concurrency)

        async def one(row: MatchRow) -> None:
            async with gate:
                if not self._decided():
                    await self._play_match(referee, row)

        tasks = [asyncio.ensure_future(one(r)) for r in rows]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _play_match(self, referee: Referee, row: MatchRow) -> None:
        done = self.store.finished_numbers(row.id)
        todo = [n for n in range(1, row.games + 1) if n not in done]
        if row.stopped or not todo:
            return
        attempts = {n: self.store.next_attempt(row.id, n) for n in todo}
        config = MatchConfig(
            self.config.rules,
            row.seed,
            tuple(self._entries[name] for name in row.entries),
            deals=self.config.deals,
            sets=row.games // rotations(self.config.rules),
            limits=self.config.limits,
            duplicate=self.config.duplicate,
            sandbox=self.config.sandbox,
            book=self.config.book,
        )

        def on_deal(report: DealReport) -> None:
            self.store.add_deal(
                row.id, report.game, attempts[report.game], report.deal, report.lines
            )
            self._deals_done += 1
            self._report()

        def on_game(report: GameReport) -> None:
            names = row.entries
            game = GameRow(
                match_id=row.id,
                number=report.number,
                set_number=report.set_number,
                sides=tuple(names[e] for e in report.sides),
                winner=report.outcome.winner,
                totals=report.outcome.totals,
                termination=report.outcome.termination.value,
                forfeit_seat=report.forfeit_seat,
                deals=report.outcome.deals,
                faults={names[e]: f for e, f in enumerate(report.faults) if any(f)},
                deal_points=report.deal_points,
            )
            self.store.add_game(row.id, game, report.lines)
            self._games_played += 1
            self._check_sprt()
            self._report()

        def on_ticket(label: str, ticket: str) -> None:
            if self.on_ticket is not None:
                self.on_ticket(label, ticket, referee.address)

        match = Match(
            referee,
            config,
            workdir=self._root / f"match-{row.id}",
            on_deal_recorded=on_deal,
            on_game_recorded=on_game,
            on_ticket=on_ticket,
        )
        self._running.add(match)
        try:
            if self._decided():
                return
            await match.run(todo)
        finally:
            self._running.discard(match)
        if self._decided() and len(self.store.finished_numbers(row.id)) < row.games:
            assert self._sprt is not None
            self.store.stop_match(row.id, f"SPRT accepted {self._sprt.decision}")

    # -- SPRT ------------------------------------------------------------------------------

    def _check_sprt(self) -> None:
        if self.sprt_bounds is None:
            return
        a, b = self.names
        penta = pentanomial(pair_results(self.store.games(), self._seats), a, b)
        self._sprt = sprt(penta, *self.sprt_bounds)
        if self._sprt.decision is not None:
            for match in self._running:
                match.stop_after_game()

    def _decided(self) -> bool:
        return self._sprt is not None and self._sprt.decision is not None

    def _report(self) -> None:
        if self.on_progress is None:
            return
        done = self.store.game_count()
        self.on_progress(RunState(done, self._games_total, self._deals_done, self._sprt))
