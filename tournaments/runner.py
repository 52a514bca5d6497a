"""Running a tournament: the schedule, matches in parallel on one referee, resumable storage.

Every finished deal and game is committed as it ends (``tournaments.storage``). A run
that starts on a database with results plays only what is missing: finished games are
never played again, and a game that was cut short is played again from its seeds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import secrets
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from referee.entrant_keys import EntrantKeys, key_digest, new_key
from referee.match.config import MatchConfig, book_reuse
from referee.match.confinement import confinement_of, confinement_warnings
from referee.match.match import Match
from referee.match.results import DealReport, GameReport
from referee.match.table import rotations
from referee.sandbox.bot_process import LogBudget
from referee.service.server import Referee, start_referee
from referee.shard_pool import ShardLost, ShardPool, ShardSpec
from tournaments.concurrency import WINDOW_SECONDS, AdaptiveTables, split_games
from tournaments.config import Format, TournamentConfig
from tournaments.results import match_points, pair_results
from tournaments.schedule import Pairing, gauntlet, round_robin, swiss_round
from tournaments.sprt import SprtState, pentanomial, sprt
from tournaments.storage import MADE_SEED, GameRow, MatchRow, StorageError, Store, ThinkRow


@dataclass(frozen=True)
class RunState:
    """Where a run is, for progress displays."""

    games_done: int
    games_total: int
    deals_done: int
    """Deals finished in this run (all attempts)."""
    sprt: SprtState | None = None


@dataclass(frozen=True)
class MatchJob:
    """A match's games to play elsewhere than the head's referee, and where results go."""

    match_id: int
    """Its database row."""
    config: MatchConfig
    games: tuple[int, ...]
    """Game numbers left to play."""
    workdir: Path
    """The head's folder for its bots' logs."""
    record_deal: Callable[[DealReport], None]
    """Stores one finished deal in its own transaction (a table that reports as it plays)."""
    record_game: Callable[[GameReport], None]
    """Stores one finished game in its own transaction, then counts it for progress, SPRT
    and live standings."""
    record_set: Callable[[Sequence[DealReport], Sequence[GameReport]], None]
    """Stores the deals and games of one duplicate set in one transaction, then counts the
    games as :attr:`record_game` does (a table that reports whole sets)."""
    stopped: Callable[[], bool]
    """True once an SPRT is decided: finish the game being played and start no other."""
    gated: bool = False
    """With an SPRT: a game starts only once the one before is stored and counted, so the
    test stops where it would at the head's own referee."""


class MatchTables(Protocol):
    """Where the matches without remote entries are played: shards, or a cluster."""

    async def play(self, job: MatchJob) -> None:
        """Play ``job.games``. :class:`TablesLost` if the table was lost midway (what it
        reported stays stored: the run plays the rest again); anything else fails the run."""
        ...


class TablesLost(RuntimeError):
    """The process or machine playing a match was lost; its unfinished games are played
    again from their seeds."""


class ShardTables:
    """Matches played on this machine's referee shards (:class:`referee.shard_pool.ShardPool`)."""

    def __init__(self, pool: ShardPool) -> None:
        self.pool = pool

    async def play(self, job: MatchJob) -> None:
        """Play the job on the least loaded shard, storing each deal and game as it ends."""
        try:
            await self.pool.play(
                job.config,
                job.games,
                workdir=job.workdir,
                on_deal=job.record_deal,
                on_game=job.record_game,
                stopped=job.stopped,
                gated=job.gated,
            )
        except ShardLost as exc:
            raise TablesLost(str(exc)) from None


@dataclass(frozen=True)
class _Piece:
    """What one table plays: a match, or a run of its duplicate sets."""

    row: MatchRow
    games: tuple[int, ...] | None = None
    """None: every game the match has left."""
    part: int = 0
    """Which run of sets it is, from 1; 0 for a whole match."""


LEAST_SETS_A_TABLE = 4
"""A match is cut into runs of at least this many duplicate sets: each run starts bot
processes of its own."""

MAX_LOSSES = 3
"""Times one match may lose its table before the run gives up on it."""


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
        modes,
        config.sandbox,
        duplicate=config.duplicate,
        unconfined="built-in",
        built_in=frozenset(e.name for e in config.entries if e.entry.built_in),
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


def spectator_file(db: Path) -> Path:
    """Where a run with remote entrants writes its spectator token: NAME.spectator."""
    return db.with_suffix(".spectator")


def write_spectator_token(path: Path) -> str:
    """A fresh spectator token, written to ``path`` (mode 0600) for ``tavolo watch``."""
    token = secrets.token_urlsafe(24)
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as f:
        f.write(token + "\n")
    return token


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


def settle_seed(store: Store, config: TournamentConfig) -> tuple[TournamentConfig, str | None]:
    """``config`` with its deal seed, and the seed if the run made it (or made it before
    in this database): a file without ``seed`` gets 128 random bits, kept in the database
    so that a resumed run deals as the first did."""
    if config.seed_given:
        return config, None
    made = store.meta().get(MADE_SEED)
    seed = json.loads(made) if made is not None else secrets.token_hex(16)
    if made is None:
        store.set_fact(MADE_SEED, seed)
    return dataclasses.replace(config, seed=seed), seed


def match_seed(config: TournamentConfig, round_: int, entries: Sequence[str]) -> str:
    """The deal seed of the match of ``entries`` in round ``round_``: its own, or with
    ``same_deals_per_round`` the round's (every table of the round deals the same cards).

    Entry names hold no ``/`` (tournaments.config), so no two matches share a seed."""
    if config.same_deals_per_round:
        return f"{config.seed}/round-{round_}"
    return f"{config.seed}/round-{round_}/" + "/".join(entries)


def match_config(
    config: TournamentConfig, entries: Sequence[str], seed: str, games: int
) -> MatchConfig:
    """What a match of ``config`` between ``entries`` is played from."""
    named = {e.name: dataclasses.replace(e.entry, name=e.name) for e in config.entries}
    return MatchConfig(
        config.rules,
        seed,
        tuple(named[name] for name in entries),
        deals=config.deals,
        sets=games // rotations(config.rules),
        limits=config.limits,
        duplicate=config.duplicate,
        sandbox=config.sandbox,
        book=config.book,
    )


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


class RunListener(Protocol):
    """What a run tells as it goes, one method an event (:class:`SilentListener` hears
    every event and does nothing: subclass it for the events you want)."""

    def referee(self, referee: Referee) -> None:
        """The referee listens (called on its event loop)."""
        ...

    def keys(self, made: dict[str, str], address: str) -> None:
        """The remote entrants' keys made now (entry -> key), and the address bots connect to."""
        ...

    def ticket(self, label: str, ticket: str, address: str) -> None:
        """A remote seat's ticket for its match, and the address its bot connects to."""
        ...

    def progress(self, state: RunState) -> None:
        """Where the run is: after each deal and game, and once at its start."""
        ...

    def game(self, game: GameRow, lines: Sequence[str]) -> None:
        """A game is stored, with its record lines."""
        ...

    def warning(self, line: str) -> None:
        """A table or a shard was lost: its matches go on elsewhere."""
        ...

    def notice(self, line: str) -> None:
        """A remote entrant's bot is lost for the rest of a match, or it came back."""
        ...


class SilentListener:
    """A :class:`RunListener` that does nothing."""

    def referee(self, referee: Referee) -> None:
        pass

    def keys(self, made: dict[str, str], address: str) -> None:
        pass

    def ticket(self, label: str, ticket: str, address: str) -> None:
        pass

    def progress(self, state: RunState) -> None:
        pass

    def game(self, game: GameRow, lines: Sequence[str]) -> None:
        pass

    def warning(self, line: str) -> None:
        pass

    def notice(self, line: str) -> None:
        pass


@dataclass(frozen=True)
class RunSettings:
    """How a run plays its tournament, beside what the tournament file says."""

    concurrency: int | None = None
    """Tables at once; None: the file's, else :class:`AdaptiveTables` chooses as it goes."""
    shards: int = 1
    """Referee processes for the matches without remote entries: 1 is the head's own
    referee alone; more start that many shards (unless the run is given tables)."""
    listen: str = "127.0.0.1:0"
    """The referee's address."""
    tls: tuple[bytes, bytes] | None = None
    """(key, certificate): the listener remote bots connect to serves TLS."""
    public_names: bool = False
    """Spectators (ListTables) see the entries' names."""
    workdir: Path | None = None
    """The bots' folders and logs; None: :func:`logs_folder` of the database."""
    sprt_bounds: tuple[float, float] | None = None
    """(elo0, elo1): stop once the SPRT between the two entries decides."""
    replay: frozenset[tuple[int, int]] | None = None
    """With it, the run plays only these games (match id, number) and schedules nothing."""

    def __post_init__(self) -> None:
        if self.shards < 1:
            raise ValueError(f"shards must be at least 1, not {self.shards}")


class TournamentRun:
    """One run of a tournament on its database."""

    def __init__(
        self,
        config: TournamentConfig,
        store: Store,
        settings: RunSettings = RunSettings(),
        *,
        listener: RunListener | None = None,
        tables: MatchTables | None = None,
        log_budget: LogBudget | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.settings = settings
        self.listener: RunListener = listener or SilentListener()
        self.concurrency = settings.concurrency or config.concurrency
        """Tables at once, as asked; None: :class:`AdaptiveTables` chooses as it goes."""
        self._adaptive = None if self.concurrency else AdaptiveTables.for_this_machine()
        self.log_budget = log_budget
        """What the bots' logs may keep together; None: :data:`DEFAULT_LOGS_MB` in their
        folder."""
        self.tables = tables
        """Where matches without remote entries are played; None: the head's referee, or
        the shards the run starts."""
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
        if settings.sprt_bounds is not None and len(self.names) != 2:
            raise ValueError(f"--sprt compares two entries; this tournament has {len(self.names)}")

    async def run(self) -> RunSummary:
        """Play everything not played yet."""
        # A table's deals come again in its duplicate set's other game (and, with
        # same_deals_per_round, at every table of the round): a remote entrant who could
        # watch would see deals before playing them.
        token = None
        if remote_names(self.config):
            token = write_spectator_token(spectator_file(self.store.path))
        referee = await start_referee(
            self.settings.listen,
            tls=self.settings.tls,
            public_names=self.settings.public_names,
            spectator_token=token,
        )
        try:
            self.listener.referee(referee)
            self._open_keys(referee)
            root = self.settings.workdir or logs_folder(self.store.path)
            self._root = root
            self._budget = self.log_budget or open_logs(root, DEFAULT_LOGS_MB)
            self._check_sprt()
            self._report()
            if self.tables is None and self.settings.shards > 1:
                pool = ShardPool(
                    referee,
                    [ShardSpec()] * self.settings.shards,
                    log_budget=self._budget,
                    on_shard_died=self._shard_died,
                )
                await pool.start()
                self.tables = ShardTables(pool)
            if self.settings.replay is not None:
                ids = sorted({match_id for match_id, _ in self.settings.replay})
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
            if isinstance(self.tables, ShardTables):
                await self.tables.pool.stop()
                self.tables = None
            await referee.stop()
        return RunSummary(self._games_played, self._games_total, self._sprt)

    def _shard_died(self, shard: int, why: str) -> None:
        self.listener.warning(f"{why}: starting it again")

    # -- entrant keys ----------------------------------------------------------------------

    def _open_keys(self, referee: Referee) -> None:
        """Take the remote entries' keys on the referee's listener (made now if missing)."""
        names = remote_names(self.config)
        if not names:
            return
        given = {e.name: e.key_sha256 for e in self.config.entries if e.key_sha256 is not None}
        for name, digest in given.items():
            # The entrant's key from elsewhere (an arena's final): stored as the file says.
            if self.store.key_owner(digest) != (name, False):
                self.store.set_entrant_key(name, digest)
        made = issue_keys(self.store, [n for n in names if n not in given])
        keys = EntrantKeys(
            self.store.key_owner, streams_per_table=2 if self.config.rules.partnerships else 1
        )
        for name in names:
            keys.add(name, None)
        referee.book.keys = self._keys = keys
        self.listener.keys(made, referee.address)

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
        replay = self.settings.replay
        if replay is not None:  # a rerun plays these games, a stopped match's too
            over = all(n in finished for m, n in replay if m == row.id)
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

    def _next(self, pending: list[_Piece]) -> _Piece | None:
        """The match to start next: the first whose keyed entrants are waiting for a table;
        else the first whose keyed entrants are absent rather than busy at another table
        (its connection window then runs); else None, until something changes."""
        for piece in pending:
            if self._ready(piece.row):
                return piece
        keys = self._keys
        for piece in pending:
            names = piece.row.entries
            if keys is None or not any(self._playing.get(n) for n in names if keys.knows(n)):
                return piece
        return None

    def _tables(self) -> int:
        """Tables at once now."""
        return self.concurrency or (self._adaptive.limit if self._adaptive else 1)

    def _pieces(self, rows: Sequence[MatchRow]) -> list[_Piece]:
        """What to play, in order: whole matches at an asked concurrency; else each match
        without remote entries cut into runs of whole sets, so that there are tables enough
        to keep the cores busy even with few matches (the games and seeds are the same)."""
        if self._adaptive is None or not rows:
            return [_Piece(row) for row in rows]
        per_match = -(-2 * self._adaptive.cores // len(rows))
        rotation = rotations(self.config.rules) if self.config.duplicate else 1
        out = []
        for row in rows:
            if any(self._entries[n].remote for n in row.entries):
                out.append(_Piece(row))
                continue
            runs = split_games(row.games, rotation, per_match, LEAST_SETS_A_TABLE)
            if len(runs) == 1:
                out.append(_Piece(row))
            else:
                out.extend(_Piece(row, tuple(r), k) for k, r in enumerate(runs, 1))
        return out

    # -- scheduling ------------------------------------------------------------------------

    def _add(self, pairing: Pairing) -> MatchRow:
        return self.store.add_match(
            pairing.round,
            pairing.entries,
            match_seed(self.config, pairing.round, pairing.entries),
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
        pending = self._pieces(rows)
        running: dict[asyncio.Future[None], _Piece] = {}
        changed = asyncio.Event()
        if self._keys is not None:
            self._keys.on_change = changed.set
        try:
            while pending or running:
                if self._adaptive is not None:
                    self._adaptive.adjust(waiting=bool(pending))
                while pending and len(running) < self._tables() and not self._decided():
                    piece = self._next(pending)
                    if piece is None:
                        break
                    pending.remove(piece)
                    for name in piece.row.entries:
                        self._playing[name] = self._playing.get(name, 0) + 1
                    play = self._play_match(referee, piece.row, piece.games, piece.part)
                    running[asyncio.ensure_future(play)] = piece
                if self._decided():
                    pending.clear()
                if not running:
                    if pending:  # nothing runs, so no keyed entrant is busy: cannot happen
                        raise RuntimeError("no match can start, and none is running")
                    break
                changed.clear()
                wake: asyncio.Future[Any] = asyncio.ensure_future(changed.wait())
                waiting: set[asyncio.Future[Any]] = {*running, wake}
                # Adapting the table count needs a look at the machine now and then.
                every = None if self._adaptive is None else WINDOW_SECONDS
                done, _ = await asyncio.wait(
                    waiting, timeout=every, return_when=asyncio.FIRST_COMPLETED
                )
                wake.cancel()
                for ended in [t for t in running if t in done]:
                    row = running.pop(ended).row
                    for name in row.entries:
                        self._playing[name] -= 1
                    ended.result()  # a failed match stops the run
                    self._count_left()
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    async def _play_match(
        self, referee: Referee, row: MatchRow, games: tuple[int, ...] | None = None, part: int = 0
    ) -> None:
        """Play what is left of ``row`` (of its ``games`` alone, if given)."""
        losses = 0
        while True:
            done = self.store.finished_numbers(row.id)
            todo = [n for n in games or range(1, row.games + 1) if n not in done]
            replay = self.settings.replay
            if replay is not None:
                # Only what rerun deleted, even in a match that an SPRT stopped after it.
                todo = [n for n in todo if (row.id, n) in replay]
            if (row.stopped and replay is None) or not todo:
                return
            if self._decided():
                break
            try:
                await self._play_games(referee, row, todo, part)
                left = set(todo) - self.store.finished_numbers(row.id)
                if left and not self._decided():
                    # Only an SPRT stops a table early: anything else is a bug to show.
                    raise RuntimeError(
                        f"match {row.id}: its table ended with games {sorted(left)} unplayed"
                    )
                break
            except TablesLost as exc:
                losses += 1
                if losses >= MAX_LOSSES:
                    raise TablesLost(
                        f"match {row.id}: its table was lost {losses} times; last: {exc}"
                    ) from None
                self.listener.warning(f"match {row.id}: {exc}; its unfinished games play again")
        if self._decided() and len(self.store.finished_numbers(row.id)) < row.games:
            assert self._sprt is not None
            self.store.stop_match(row.id, f"SPRT accepted {self._sprt.decision}")

    async def _play_games(
        self, referee: Referee, row: MatchRow, todo: list[int], part: int
    ) -> None:
        attempts = {n: self.store.next_attempt(row.id, n) for n in todo}
        config = match_config(self.config, row.entries, row.seed, row.games)

        def on_deal(report: DealReport) -> None:
            self.store.add_deal(
                row.id, report.game, attempts[report.game], report.deal, report.lines
            )
            self._deals_done += 1
            self._report()

        def on_game(report: GameReport) -> None:
            rows = self._game_rows(row, report)
            self.store.add_game(row.id, *rows)
            self._counted(*rows)

        def on_set(deals: Sequence[DealReport], games: Sequence[GameReport]) -> None:
            stored = [self._game_rows(row, game) for game in games]
            with self.store.batch():
                for deal in deals:
                    self.store.add_deal(
                        row.id, deal.game, attempts[deal.game], deal.deal, deal.lines
                    )
                for rows in stored:
                    self.store.add_game(row.id, *rows)
            self._deals_done += len(deals)
            for rows in stored:
                self._counted(*rows)
            if not games:
                self._report()

        remote = any(self._entries[name].remote for name in row.entries)
        if self.tables is not None and not remote:
            job = MatchJob(
                row.id,
                config,
                tuple(todo),
                self._match_folder(row.id, part),
                on_deal,
                on_game,
                on_set,
                self._decided,
                gated=self.settings.sprt_bounds is not None,
            )
            await self.tables.play(job)
            return

        def on_ticket(label: str, ticket: str) -> None:
            self.listener.ticket(label, ticket, referee.address)

        match = Match(
            referee,
            config,
            workdir=self._match_folder(row.id, part),
            log_budget=self._budget,
            on_deal_recorded=on_deal,
            on_game_recorded=on_game,
            on_ticket=on_ticket,
            keys=self._keys,
            on_notice=self.listener.notice,
            place=f"match {row.id}",
        )
        self._running.add(match)
        try:
            if self._decided():
                return
            await match.run(todo)
        finally:
            self._running.discard(match)

    def _game_rows(
        self, row: MatchRow, report: GameReport
    ) -> tuple[GameRow, Sequence[str], list[ThinkRow]]:
        """What storage keeps of a finished game: its row, record and think times."""
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
            places=report.outcome.places,
        )
        bank = self.config.limits.time_bank_ms
        spent = zip(report.think_ms, report.bank_used_ms, strict=True)
        think = [ThinkRow(names[e], ms, bank, used) for e, (ms, used) in enumerate(spent)]
        return game, report.lines, think

    def _counted(self, game: GameRow, lines: Sequence[str], _: Sequence[ThinkRow]) -> None:
        """A game is stored: tell the listeners, the SPRT and the progress display."""
        self.listener.game(game, lines)
        self._games_played += 1
        self._check_sprt()
        self._report()

    def _match_folder(self, match_id: int, part: int = 0) -> Path:
        """A folder of its own for this run's processes of a match (of part ``part`` of it,
        from 1, when it is played at several tables): a resumed match's earlier logs, which
        its stored fault lines name, stay as they were."""
        name = f"match-{match_id}" + (f"-part-{part}" if part else "")
        folder = self._root / name
        run = 1
        while True:
            try:
                # Made now: the match's other tables, starting meanwhile, take the next name.
                folder.mkdir(mode=0o700, parents=True)
                return folder
            except FileExistsError:
                run += 1
                folder = self._root / f"{name}-run-{run}"

    # -- SPRT ------------------------------------------------------------------------------

    def _check_sprt(self) -> None:
        # A decision is final, as an SPRT's is: the sets that its tables finish afterwards
        # are stored, and may bring the ratio back inside the bounds, but stop nothing.
        bounds = self.settings.sprt_bounds
        if bounds is None or self._decided():
            return
        a, b = self.names
        penta = pentanomial(pair_results(self.store.games(), self._seats), a, b)
        self._sprt = sprt(penta, *bounds)
        if self._sprt.decision is not None:
            for match in self._running:
                match.stop_after_game()

    def _decided(self) -> bool:
        return self._sprt is not None and self._sprt.decision is not None

    def _report(self) -> None:
        done = self.store.game_count()
        self.listener.progress(RunState(done, self._games_total, self._deals_done, self._sprt))
