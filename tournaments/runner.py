"""Running a tournament: the schedule, matches in parallel on one referee, resumable storage.

Every finished deal and game is committed as it ends (``tournaments.storage``). A run
that starts on a database with results plays only what is missing: finished games are
never played again, and a game that was cut short is played again from its seeds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.bot_process import LogBudget
from referee.entrant_keys import EntrantKeys, key_digest, new_key
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
from tournaments.storage import GameRow, MatchRow, StorageError, Store, ThinkRow


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


def open_store(
    path: Path, config: TournamentConfig, *, force: bool = False, accept: Collection[str] = ()
) -> Store:
    """The database of ``config``'s tournament at ``path``, open for a run (see Store);
    entries in ``accept`` may run other programs than their stored games were played with."""
    return Store.open_for_run(
        path,
        fingerprint=config.fingerprint(),
        name=config.name,
        config_text=config.text,
        facts=table_facts(config),
        programs=config.programs(),
        accept=accept,
        file=str(config.path.resolve()),
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


DEFAULT_LOGS_MB = 1024
"""What the bots' logs of a tournament may take together, by default (``--logs-mb``)."""


def logs_folder(db: Path) -> Path:
    """Where a tournament keeps its bots' logs by default: beside its database, as NAME.logs."""
    return db.with_suffix(".logs")


def open_logs(folder: Path, total_mb: int) -> LogBudget:
    """Make the logs folder (its user's alone: bots' logs may hold anything) and the budget
    left in it: ``total_mb`` less what earlier runs' logs take."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    used = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    return LogBudget(total_mb, used)


def keys_file(db: Path) -> Path:
    """Where a tournament's entrant keys are written: beside its database, as NAME.keys."""
    return db.with_suffix(".keys")


def remote_names(config: TournamentConfig) -> list[str]:
    """The entries that play from elsewhere, each with an entrant key."""
    return [e.name for e in config.entries if e.entry.remote]


def issue_keys(store: Store, names: Sequence[str], *, again: bool = False) -> dict[str, str]:
    """Make a key for each of ``names`` that has none (with ``again``: a new key for each,
    the old one opening nothing); stored as digests, written to the keys file (0600).

    Returns the new keys, entry -> key: the only time they are known in full.
    """
    known = store.entrant_keys()
    made = {n: new_key() for n in names if again or n not in known}
    if not made:
        return {}
    path = keys_file(store.path)
    lines = _key_lines(path)
    lines.update(made)
    text = "".join(f"{name} {key}\n" for name, key in sorted(lines.items()))
    header = (
        "# Entrant keys: give each entrant the key of its line, for its bot's TAVOLO_KEY.\n"
        "# Anyone holding a key plays as that entrant: keep this file private.\n"
    )
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)  # it may have existed with wider rights
        with open(fd, "w", encoding="utf-8") as out:
            out.write(header + text)
    except OSError as exc:
        raise StorageError(f"{path}: cannot write the entrant keys: {exc.strerror}") from None
    for name, key in made.items():
        store.set_entrant_key(name, key_digest(key))
    return made


def _key_lines(path: Path) -> dict[str, str]:
    """Entry -> key, as the keys file holds them now (none if it is missing)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StorageError(f"{path}: cannot read the entrant keys: {exc.strerror}") from None
    out = {}
    for line in text.splitlines():
        name, _, key = line.partition(" ")
        if name and not name.startswith("#") and key:
            out[name] = key.strip()
    return out


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
        tls: tuple[bytes, bytes] | None = None,
        workdir: Path | None = None,
        sprt_bounds: tuple[float, float] | None = None,
        on_progress: Callable[[RunState], None] | None = None,
        on_ticket: Callable[[str, str, str], None] | None = None,
        on_keys: Callable[[dict[str, str], str], None] | None = None,
        replay: Collection[tuple[int, int]] | None = None,
        log_budget: LogBudget | None = None,
        on_game: Callable[[GameRow, Sequence[str]], None] | None = None,
        public_names: bool = False,
        on_referee: Callable[[Referee], None] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.replay = None if replay is None else set(replay)
        """With it, the run plays only these games (match id, number) and schedules nothing."""
        self.concurrency = concurrency or config.concurrency or os.cpu_count() or 1
        self.listen = listen
        self.tls = tls
        """(key, certificate): the listener remote bots connect to serves TLS."""
        self.workdir = workdir
        """The bots' folders and logs; None: :func:`logs_folder` of the database."""
        self.log_budget = log_budget
        """What they may keep together; None: :data:`DEFAULT_LOGS_MB` in the folder."""
        self.on_game = on_game
        """Hears each game once stored, with its record lines."""
        self.public_names = public_names
        """Spectators (ListTables) see the entries' names."""
        self.on_referee = on_referee
        """Hears the referee once it listens (on its event loop)."""
        self.sprt_bounds = sprt_bounds
        self.on_progress = on_progress
        self.on_ticket = on_ticket
        self.on_keys = on_keys
        """Hears the keys made now (entry -> key) and the address bots connect to."""
        self._keys: EntrantKeys | None = None
        self._rows: list[MatchRow] = []
        """Every match of the run scheduled so far, to count what each entrant has left."""
        self._playing: dict[str, int] = {}
        """Entry -> its matches being played now."""
        self._over_ids: set[int] = set()
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
        # Every table of a round deals the same cards: a remote entrant who could watch a
        # table ahead of its own would see its deals before playing them.
        referee = await start_referee(
            self.listen,
            tls=self.tls,
            public_names=self.public_names,
            local_spectators=bool(remote_names(self.config)),
        )
        try:
            if self.on_referee is not None:
                self.on_referee(referee)
            self._open_keys(referee)
            root = self.workdir or logs_folder(self.store.path)
            self._root = root
            self._budget = self.log_budget or open_logs(root, DEFAULT_LOGS_MB)
            self._check_sprt()
            self._report()
            if self.replay is not None:
                ids = sorted({match_id for match_id, _ in self.replay})
                await self._play_all(referee, [self.store.match(i) for i in ids])
            elif self.config.format is Format.SWISS:
                await self._swiss(referee)
            else:
                rows = [self._add(p) for p in planned_pairings(self.config)]
                await self._play_all(referee, rows)
        finally:
            if self._keys is not None:
                self._keys.close()  # waiting key streams end with status OK
                await asyncio.sleep(0)
            await referee.stop()
        return RunSummary(self._games_played, self._games_total, self._sprt)

    # -- entrant keys ----------------------------------------------------------------------

    def _open_keys(self, referee: Referee) -> None:
        """Take the remote entries' keys on the referee's listener (made now if missing)."""
        names = remote_names(self.config)
        if not names:
            return
        made = issue_keys(self.store, names)
        keys = EntrantKeys(
            self.store.key_owner, streams_per_table=2 if self.config.rules.partnerships else 1
        )
        for name in names:
            keys.add(name, None)
        referee.book.keys = self._keys = keys
        if self.on_keys is not None:
            self.on_keys(made, referee.address)

    def _count_left(self) -> None:
        """Tell each keyed entrant how many of its matches are not over (Swiss: unknown
        until the last round is paired)."""
        if self._keys is None:
            return
        last_round = self.config.format is not Format.SWISS or any(
            r.round == self.config.rounds for r in self._rows
        )
        for name in remote_names(self.config):
            left = sum(1 for r in self._rows if name in r.entries and not self._over(r))
            self._keys.set_matches_left(name, left if last_round or left else None)

    def _over(self, row: MatchRow) -> bool:
        if self._decided() or row.id in self._over_ids:
            return True
        finished = self.store.finished_numbers(row.id)
        if self.replay is not None:  # a rerun plays these games, a stopped match's too
            over = all(n in finished for m, n in self.replay if m == row.id)
        else:
            over = self.store.match(row.id).stopped is not None or len(finished) >= row.games
        if over:
            self._over_ids.add(row.id)
        return over

    def _ready(self, row: MatchRow) -> bool:
        """Whether every keyed entrant of ``row`` has streams waiting for a table."""
        keys = self._keys
        return keys is None or all(
            keys.idle(n) >= keys.streams_per_table for n in row.entries if keys.knows(n)
        )

    def _next(self, pending: list[MatchRow]) -> MatchRow | None:
        """The match to start next: the first whose keyed entrants are waiting for a table;
        else the first whose keyed entrants are absent rather than busy at another table
        (its connection window then runs); else None, until something changes."""
        for row in pending:
            if self._ready(row):
                return row
        keys = self._keys
        for row in pending:
            if keys is None or not any(self._playing.get(n) for n in row.entries if keys.knows(n)):
                return row
        return None

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
        """Play ``rows``, ``concurrency`` at a time; with entrant keys, matches whose remote
        entrants are waiting go first, and an entrant busy at its tables is not kept
        waiting for another (docs/organising.md)."""
        self._rows.extend(rows)
        self._count_left()
        pending = list(rows)
        running: dict[asyncio.Future[None], MatchRow] = {}
        changed = asyncio.Event()
        if self._keys is not None:
            self._keys.on_change = changed.set
        try:
            while pending or running:
                while pending and len(running) < self.concurrency and not self._decided():
                    row = self._next(pending)
                    if row is None:
                        break
                    pending.remove(row)
                    for name in row.entries:
                        self._playing[name] = self._playing.get(name, 0) + 1
                    running[asyncio.ensure_future(self._play_match(referee, row))] = row
                if self._decided():
                    pending.clear()
                if not running:
                    if pending:  # nothing runs, so no keyed entrant is busy: cannot happen
                        raise RuntimeError("no match can start, and none is running")
                    break
                changed.clear()
                wake: asyncio.Future[Any] = asyncio.ensure_future(changed.wait())
                waiting: set[asyncio.Future[Any]] = {*running, wake}
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                wake.cancel()
                for task in [t for t in running if t in done]:
                    row = running.pop(task)
                    for name in row.entries:
                        self._playing[name] -= 1
                    task.result()  # a failed match stops the run
                    self._count_left()
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    async def _play_match(self, referee: Referee, row: MatchRow) -> None:
        done = self.store.finished_numbers(row.id)
        todo = [n for n in range(1, row.games + 1) if n not in done]
        if self.replay is not None:
            # Only what rerun deleted, even in a match that an SPRT stopped after it.
            todo = [n for n in todo if (row.id, n) in self.replay]
        if (row.stopped and self.replay is None) or not todo:
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
            bank = self.config.limits.time_bank_ms
            spent = zip(report.think_ms, report.bank_used_ms, strict=True)
            think = [ThinkRow(names[e], ms, bank, used) for e, (ms, used) in enumerate(spent)]
            self.store.add_game(row.id, game, report.lines, think)
            if self.on_game is not None:
                self.on_game(game, report.lines)
            self._games_played += 1
            self._check_sprt()
            self._report()

        def on_ticket(label: str, ticket: str) -> None:
            if self.on_ticket is not None:
                self.on_ticket(label, ticket, referee.address)

        match = Match(
            referee,
            config,
            workdir=self._match_folder(row.id),
            log_budget=self._budget,
            on_deal_recorded=on_deal,
            on_game_recorded=on_game,
            on_ticket=on_ticket,
            keys=self._keys,
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

    def _match_folder(self, match_id: int) -> Path:
        """A folder of its own for this run's processes of a match: a resumed match's earlier
        logs, which its stored fault lines name, stay as they were."""
        folder = self._root / f"match-{match_id}"
        run = 1
        while folder.exists():
            run += 1
            folder = self._root / f"match-{match_id}-run-{run}"
        return folder

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
