"""A match between entries at one table: duplicate sets of seeded games over the protocol.

The match starts each local entry's processes (two per entry in a partnership game,
one per seat otherwise), waits for every slot to connect with its ticket, plays the
games, writes the record as it goes, and always kills and reaps its processes.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import asyncio
import contextlib
import hashlib
import json
import random
import secrets
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from referee.engine.events import (
    DealOver,
    Dealt,
    Event,
    Forfeited,
    GameBegun,
    Played,
    Scored,
    TrickTaken,
)
from referee.engine.game_base import AnyGame, Outcome, Termination
from referee.engine.rules import Rules
from referee.entrant_keys import EntrantKeys
from referee.entries import Entry, unique_names
from referee.match.clock import Clock
from referee.match.config import MatchConfig, book_reuse
from referee.match.confinement import confinement_of, confinement_warnings
from referee.match.faults import FAULT_INCIDENTS, apply_fault, at_place
from referee.match.results import DealReport, EntryStats, Faults, GameReport, MatchResult
from referee.match.slots import Request, Slot, SlotState, Wait
from referee.match.table import arrangements, seat_slots
from referee.protocol import Sent, encode_decision, heard
from referee.records import RecordWriter
from referee.sandbox.bot_process import (
    BotProcess,
    LogBudget,
    exit_note,
    finish_despite_cancel,
    start_bot,
)
from referee.sandbox.bwrap import SandboxMode
from referee.service.bot_streams import open_slot_socket
from referee.service.feeds import TableFeed, forget_old_feeds
from referee.service.server import Referee
from tavolo_bot.proto import referee_pb2 as pb

_ROUTINE = frozenset({Played, TrickTaken})
"""Events the match only passes on and writes."""


def bot_seed(seed: str, name: str, slot: int) -> str:
    """A bot process's own seed: reproducible from the match seed, but no way back to it.

    Bots must never learn the deal seed, which would give them every hand.
    """
    material = "\x00".join(("tavolo-bot-seed", seed, name, str(slot))).encode()
    return hashlib.sha256(material).hexdigest()[:32]


def match_started_event(rules: Rules, match_id: str, games: int, deals: int | None) -> pb.Event:
    """``MatchStarted``: what every bot of a match hears first."""
    return pb.Event(
        match_started=pb.MatchStarted(
            match_id=match_id,
            game=rules.game,
            rules_json=json.dumps(rules.to_dict(), separators=(",", ":")),
            games=games,
            deals_per_game=deals or 0,
        )
    )


def game_over_event(game: int, outcome: Outcome, forfeit_seat: int | None) -> pb.Event:
    """``GameOver`` of game ``game``: how it ended, and the seat that forfeited it if one did."""
    return pb.Event(
        game_over=pb.GameOver(
            game=game,
            termination=outcome.termination.value,
            winner=-1 if outcome.winner is None else outcome.winner,
            totals=list(outcome.totals),
            forfeit_seat=-1 if forfeit_seat is None else forfeit_seat,
        )
    )


class Match:
    """One match at one table of a running referee."""

    def __init__(
        self,
        referee: Referee,
        config: MatchConfig,
        *,
        record: IO[str] | None = None,
        workdir: Path | None = None,
        on_deal: Callable[[Match], None] | None = None,
        on_ticket: Callable[[str, str], None] | None = None,
        on_decision: Callable[[float], None] | None = None,
        on_deal_recorded: Callable[[DealReport], None] | None = None,
        on_game_recorded: Callable[[GameReport], None] | None = None,
        keys: EntrantKeys | None = None,
        log_budget: LogBudget | None = None,
        before_game: Callable[[], Awaitable[None]] | None = None,
        on_notice: Callable[[str], None] | None = None,
        place: str = "",
    ) -> None:
        self.referee = referee
        self._on_notice = on_notice
        """Told, in a line, when a slot is lost for good and when it comes back."""
        self._place = place
        """Where this match is, for those lines: ``match 2``, or nothing."""
        self._lost: dict[int, int] = {}
        """Slots whose stream went and did not come back within the grace: the game it
        went in. Their later games forfeit at once, without a grace of their own."""
        self._keys = keys
        """Remote entries it knows are seated from their entrant key's streams."""
        self._before_game = before_game
        """Awaited before every game but the first (a shard waits there for its head to
        say whether an SPRT has stopped the match)."""
        self.config = config
        self.rules = config.rules
        self.match_id = secrets.token_hex(6)
        self.names = unique_names(list(config.entries))
        self.record = RecordWriter(record) if record is not None else None
        self._workdir = workdir
        self._on_deal = on_deal
        self._on_ticket = on_ticket
        self._on_decision = on_decision
        self._on_deal_recorded = on_deal_recorded
        self._on_game_recorded = on_game_recorded
        self._keep_lines = on_deal_recorded is not None or on_game_recorded is not None
        self._stop_requested = False
        self.slots_per_entry = 2 if self.rules.partnerships else 1
        self.links: list[list[Slot]] = [
            [
                referee.book.issue(self.match_id, e * self.slots_per_entry + k, f"{name}#{k + 1}")
                for k in range(self.slots_per_entry)
            ]
            for e, name in enumerate(self.names)
        ]
        self.sandboxes = [
            confinement_of(e, config.sandbox, allow_unconfined=config.allow_unconfined)
            for e in config.entries
        ]
        """Per entry: ``bwrap``, ``off`` or ``remote`` (see :func:`confinement_of`)."""
        self.processes: list[BotProcess] = []
        self._process_of: dict[int, BotProcess] = {}
        """id(link) -> the newest bot process started for it."""
        self._log_budget = log_budget
        """What all its bots' logs may keep together (shared with the caller's other matches)."""
        self.result = MatchResult(
            self.match_id, stats=[EntryStats(n) for n in self.names], sandboxes=self.sandboxes
        )
        self.feed = TableFeed(self.match_id, self.match_id, list(self.names))
        forget_old_feeds(referee.feeds)
        referee.add_feed(self.feed)
        self.deals_done = 0
        self._request_ids = 0
        self._rng = random.Random(f"{config.seed}/referee")
        self.total_games = config.games
        self._arrangements = arrangements(self.rules)
        self._watchers: list[asyncio.Future[None]] = []
        self._root: Path | None = None
        self._launch: dict[int, tuple[Entry, str, dict[str, str]]] = {}
        """id(link) -> how its bot process was started (entry, folder name, environment)."""
        self._restarts: dict[int, int] = {}
        self.clock = Clock(config.limits, (link.slot for row in self.links for link in row))
        self._fresh: dict[tuple[int, int], Slot] = {}
        """(slot, game number) -> the link of the process that plays that game alone, for
        sandboxed entries in duplicate play (the first game played is ``links``')."""
        self._first_game: int | None = None
        self._killed: set[int] = set()
        """id(link) of the processes killed after their one game."""
        self._socket_dir: Path | None = None
        self._servers: list[Any] = []
        self._server_of: dict[int, Any] = {}
        self.warnings = self._warnings()
        """One line each about what this match cannot confine (remote entries in duplicate
        play, unconfined bots), for the caller to show."""

    def _warnings(self) -> list[str]:
        modes = dict(zip(self.names, self.sandboxes, strict=True))
        config = self.config
        named = zip(self.names, config.entries, strict=True)
        built_in = frozenset(name for name, entry in named if entry.built_in)
        out = confinement_warnings(
            modes, config.sandbox, duplicate=config.duplicate, built_in=built_in
        )
        reuse = book_reuse(config.book, config.deals, config.book_groups)
        return [*out, reuse] if reuse else out

    def use_record(self, stream: IO[str]) -> None:
        """Write the match record to ``stream`` as the games are played."""
        self.record = RecordWriter(stream)

    def remote_tickets(self) -> list[tuple[str, str]]:
        """(label, ticket) of every slot of a remote entry, to hand to its bots."""
        return [
            (link.label, link.ticket)
            for entry, row in zip(self.config.entries, self.links, strict=True)
            if entry.remote
            for link in row
        ]

    # -- the whole match -----------------------------------------------------------------

    def stop_after_game(self) -> None:
        """Play no further game once the current one is over and its duplicate set with it
        (a decided SPRT, say)."""
        self._stop_requested = True

    async def run(self, games: Iterable[int] | None = None) -> MatchResult:
        """Play every game, or only the game numbers ``games``; processes are always reaped.

        ``on_ticket(label, ticket)`` hears the ticket of each remote slot,
        ``on_decision(seconds)`` the round trip of each answered request, and
        ``on_deal_recorded`` / ``on_game_recorded`` each deal and game as it ends.
        """
        with contextlib.ExitStack() as stack:
            root = self._workdir
            if root is None:
                root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tavolo-")))
            try:
                await self._open(root)
                await self.play(games)
                await self._finish()
            finally:
                # Whole even when the run is cancelled (Ctrl-C) meanwhile, maybe twice: every
                # process is reaped and every socket closed before the loop ends.
                await finish_despite_cancel(self._stop_processes())
                self.feed.close()
        return self.result

    async def open(self) -> None:
        """Start the match for calls of :meth:`play` in ``workdir``, which it needs: its
        processes, their connections, MatchStarted. :meth:`close` ends it, and only it."""
        if self._workdir is None:
            raise ValueError("Match.open needs the match's workdir")
        await self._open(self._workdir)

    async def close(self, *, played: bool = True) -> MatchResult:
        """End an opened match: MatchOver to every slot if it was ``played`` through (not
        cut short by a failure), then every process is reaped and every socket closed."""
        try:
            if played:
                await self._finish()
        finally:
            await finish_despite_cancel(self._stop_processes())
            self.feed.close()
        return self.result

    def all_alive(self) -> bool:
        """Whether no process of this match has exited (each slot's newest process)."""
        return all(
            link.process_exit is None for link in self._all_links() if id(link) not in self._killed
        )

    async def _open(self, root: Path) -> None:
        self._root = root
        await self._start_processes(root)
        await self._await_connections()
        await self._announce()

    async def play(self, games: Iterable[int] | None = None, *, keep: bool = False) -> None:
        """Play every game, or the game numbers ``games``, on the processes started so far
        and those each game needs.

        A sandboxed entry in duplicate play has a process of its own for each game, killed
        (not told MatchOver) once the game is over, before a game dealt from the same deals
        begins; the next set's processes start while a set's last game is played, never
        while a game of their own deals is.

        With ``keep``, every other process stays for a later call (none hears MatchOver),
        and each slot's time bank is full again: each call is a match of its own to the
        bots' clocks, as a match played apart would be.
        """
        numbers = range(1, self.total_games + 1) if games is None else sorted(set(games))
        plans = [(n, self.config.game_plan(n)) for n in numbers]
        if keep:
            self.clock.refill()
        if self._first_game is None and plans:
            self._first_game = plans[0][0]
        for i, (number, (set_number, seed, rotation)) in enumerate(plans):
            if i and self._before_game is not None:
                await self._before_game()
            # A set cut short pairs nothing: once stopped, the set being played ends.
            if self._stop_requested and (i == 0 or plans[i - 1][1][0] != set_number):
                break
            await self._prepare(number, rotation, wait=True)
            if i + 1 < len(plans) and plans[i + 1][1][0] != set_number:
                # The next set's processes start while this game is played: other deals.
                await self._prepare(plans[i + 1][0], plans[i + 1][1][2], wait=False)
            seats = self.seating(number, rotation)
            await self._play_game(number, set_number, seed, rotation)
            for link in seats:
                if self._fresh_per_game(link.slot // self.slots_per_entry):
                    await self._kill(link)

    async def _start_processes(self, root: Path) -> None:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        for e, entry in enumerate(self.config.entries):
            if entry.remote and self._keys is not None and self._keys.knows(self.names[e]):
                self._keys.want(self.names[e], self.links[e])
            for k, link in enumerate(self.links[e]):
                if entry.remote:
                    if self._on_ticket is not None:
                        self._on_ticket(link.label, link.ticket)
                    continue
                await self._launch_link(link, e, k, None)

    async def _launch_link(self, link: Slot, e: int, k: int, number: int | None) -> None:
        """Give ``link`` a socket of its own and start its process (for game ``number``
        alone, or for the match)."""
        if self._socket_dir is None:
            # Short, so socket paths stay within the 108 bytes of sun_path.
            self._socket_dir = Path(tempfile.mkdtemp(prefix="tavolo-"))
        path = self._socket_dir / f"{len(self._servers)}.sock"
        server = await open_slot_socket(self.referee.book, link, path)
        self._servers.append(server)
        self._server_of[id(link)] = server
        env = {"TAVOLO_SEED": bot_seed(self.config.seed, self.names[e], k)}
        folder = f"{e}-{k}" if number is None else f"{e}-{k}-game-{number}"
        self._launch[id(link)] = (self.config.entries[e], folder, env)
        assert self._root is not None
        await self._spawn(link, self._root / folder)

    async def _spawn(self, link: Slot, folder: Path) -> None:
        entry, _, env = self._launch[id(link)]
        mode = SandboxMode(self.sandboxes[link.slot // self.slots_per_entry])
        process = await start_bot(
            entry,
            link.label,
            folder,
            {**env, "TAVOLO_TICKET": link.ticket},
            sandbox=mode,
            socket=Path(link.socket) if link.socket else None,
            budget=self._log_budget,
        )
        self.processes.append(process)
        self._process_of[id(link)] = process
        self._watchers.append(asyncio.ensure_future(self._watch(process, link)))

    async def _restart_crashed(self, game: _Game) -> None:
        """Start again, before this game, the bot processes that exited after connecting."""
        limits = self.config.limits
        for seat, link in enumerate(game.seats):
            if not (
                limits.restart_crashed
                and link.process_exit is not None
                and link.ever_connected
                and id(link) in self._launch
            ):
                continue
            assert self._root is not None
            why = link.process_exit.split(";")[0]  # "exit status 3", not its stderr
            count = self._restarts[id(link)] = self._restarts.get(id(link), 0) + 1
            _, folder, _ = self._launch[id(link)]
            # A fresh ticket: the dead process's ticket opens nothing, wherever it was read.
            self.referee.book.reissue(link)
            # A new process hears the match start, not what its predecessor missed.
            link.restarted([self._match_started()])
            # Its own folder: the crashed process's logs stay as they were.
            await self._spawn(link, self._root / f"{folder}-restart-{count}")
            game.state.note_incident(
                seat, "restart", f"the bot process was started again (after: {why})"
            )
            # If it does not connect, the game's first request to it applies the fault policy.
            await link.wait_connected(limits.connect_timeout)

    async def _watch(self, process: BotProcess, link: Slot) -> None:
        link.mark_exited(await process.watch())

    async def _await_connections(self) -> None:
        timeout = self.config.limits.connect_timeout
        waits = [link.wait_connected(timeout) for row in self.links for link in row]
        for link, ok in zip(
            [link for row in self.links for link in row], await asyncio.gather(*waits), strict=True
        ):
            if not ok:
                why = link.process_exit or self._absent(link, f"no connection within {timeout:g} s")
                link.note("never_connected", why)

    def _match_started(self) -> pb.Event:
        return match_started_event(self.rules, self.match_id, self.total_games, self.config.deals)

    async def _announce(self) -> None:
        started = self._match_started()
        for row in self.links:
            for link in row:
                link.tell(started)

    def _all_links(self) -> list[Slot]:
        return [link for row in self.links for link in row] + list(self._fresh.values())

    async def _kill(self, link: Slot) -> None:
        """``link``'s process played its game: kill it, close its ticket and its socket."""
        self.referee.book.retire([link])
        self._killed.add(id(link))
        process = self._process_of.get(id(link))
        if process is not None:
            await process.stop(grace=0)
        server = self._server_of.pop(id(link), None)
        if server is not None:
            self._servers.remove(server)
            await server.stop(0)

    async def _release(self, link: Slot) -> None:
        """The match is over for ``link``'s process: MatchOver, and its ticket is closed."""
        if link.closed:
            return
        link.tell(pb.Event(match_over=pb.MatchOver(match_id=self.match_id)))
        await link.flush()
        self.referee.book.retire([link])

    async def _finish(self) -> None:
        self._thaw_all()  # each must read MatchOver and exit
        for link in self._all_links():
            await self._release(link)

    async def _stop_processes(self) -> None:
        if self._keys is not None:
            self._keys.withdraw(self._all_links())
            for link in self._all_links():
                # A match cut short is over all the same: an entrant key's stream hears so
                # before it is seated elsewhere, as it would at the end of the match.
                if not link.closed and link.connected:
                    await self._release(link)
        for link in self._all_links():
            if not link.closed:
                link.finish()
            self.result.incidents.extend((link.label, i.kind, i.detail) for i in link.incidents)
        self._thaw_all()  # a stopped process cannot exit within its grace
        await asyncio.gather(*(p.stop() for p in self.processes))
        await asyncio.gather(*self._watchers)
        for server in self._servers:
            await server.stop(0)
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    # -- one game --------------------------------------------------------------------------

    def seating(self, number: int, rotation: int) -> list[Slot]:
        """The slot at each seat for game ``number``, in arrangement ``rotation`` of
        :func:`arrangements`.

        A sandboxed entry in duplicate play has a process of its own for each game, so
        no process plays, or outlives, a game dealt from the same seed as its own.
        """
        return [
            self._link_for(e, k, number)
            for e, k in seat_slots(self.rules, self._arrangements[rotation])
        ]

    def _fresh_per_game(self, e: int) -> bool:
        # Unconfined and remote bots can remember anyway: one process per slot for them.
        # So do the built-in bots: Tavolo's own code, which deals itself nothing to keep
        # (each game is seeded afresh) and would pay a process start a game for nothing.
        return (
            self.config.duplicate
            and self.sandboxes[e] == SandboxMode.BWRAP
            and not self.config.entries[e].built_in
        )

    def _link_for(self, e: int, k: int, number: int) -> Slot:
        primary = self.links[e][k]
        if number == self._first_game or not self._fresh_per_game(e):
            return primary
        key = (primary.slot, number)
        if key not in self._fresh:
            self._fresh[key] = self.referee.book.issue(self.match_id, primary.slot, primary.label)
        return self._fresh[key]

    async def _prepare(self, number: int, rotation: int, *, wait: bool) -> None:
        """Start the processes of game ``number`` not started yet; with ``wait``, wait for
        them to connect."""
        started = []
        for e, row in enumerate(self.links):
            for k in range(len(row)):
                link = self._link_for(e, k, number)
                if id(link) in self._launch or self.config.entries[e].remote:
                    continue
                link.tell(self._match_started())
                await self._launch_link(link, e, k, number)
                started.append(link)
        if wait:
            timeout = self.config.limits.connect_timeout
            links = [link for link in self.seating(number, rotation) if id(link) in self._launch]
            oks = await asyncio.gather(*(link.wait_connected(timeout) for link in links))
            for link, ok in zip(links, oks, strict=True):
                if not ok and not link.ever_connected and not link.incidents:
                    why = link.process_exit or f"no connection within {timeout:g} s"
                    link.note("never_connected", why)

    async def _play_game(self, game: int, set_number: int, seed: str, rotation: int) -> None:
        seats = self.seating(game, rotation)
        entry_of_seat = [link.slot // self.slots_per_entry for link in seats]
        state = self.config.new_game(game, seed, [self.names[e] for e in entry_of_seat])
        self.feed.game = game
        # Per game, so a match resumed at this game plays its faults' cards as a whole run would.
        self._rng = random.Random(f"{self.config.seed}/referee/game/{game}")
        assert state.events is not None
        header = state.events[0]
        assert isinstance(header, GameBegun)
        # Not part of the game: the verifier takes it as written (docs/records.md).
        state.events[0] = replace(header, sandbox=tuple(self.sandboxes[e] for e in entry_of_seat))
        game_ctx = _Game(game, state, seats)
        await self._restart_crashed(game_ctx)
        for link in seats:
            # Connected and idle: from here each runs only when asked.
            self._freeze(link)
        for seat, link in enumerate(seats):
            link.tell(pb.Event(game_started=pb.GameStarted(game=game, seat=seat)))
        faults_before = [(s.timeouts, s.illegal, s.crashes) for s in self.result.stats]
        if self.record is not None:
            self.record.new_game()
        self._dispatch(game_ctx)
        while state.outcome is None:
            to_act = state.current_player()
            assert to_act is not None
            await self._decide(game_ctx, to_act)
            self._dispatch(game_ctx)
        outcome = state.outcome
        self._dispatch(game_ctx)
        for link in seats:
            # A bot that was never there is at fault even when the other side's forfeit
            # ended the game before it was asked anything: it played no card of it.
            e = link.slot // self.slots_per_entry
            if not link.ever_connected and self.result.stats[e].crashes == faults_before[e][2]:
                self.result.stats[e].crashes += 1
        forfeit_seat = game_ctx.forfeit_seat
        over = game_over_event(game, outcome, forfeit_seat)
        self.feed.publish(over)
        for link in seats:
            link.tell(over)
            await link.flush()
        self.result.tally(self.rules, outcome, entry_of_seat)
        self.result.numbers.append(game)
        crash = None
        if outcome.termination is Termination.CRASH and forfeit_seat is not None:
            crash = (entry_of_seat[forfeit_seat], game_ctx.forfeit_detail)
        self.result.crashed.append(crash)
        if self._on_game_recorded is not None:
            sides = self.result.sides[-1]
            faults = tuple(
                Faults(s.timeouts - t, s.illegal - i, s.crashes - c)
                for s, (t, i, c) in zip(self.result.stats, faults_before, strict=True)
            )
            self._on_game_recorded(
                GameReport(
                    game, set_number, tuple(sides), outcome, forfeit_seat, faults,
                    tuple(game_ctx.lines), tuple(game_ctx.deal_points),
                    *self._think_report(game_ctx, entry_of_seat),
                )
            )  # fmt: skip

    def _think_report(
        self, game: _Game, entry_of_seat: list[int]
    ) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
        """Per entry: its answers' think times in ``game``, and its time bank spent so far."""
        entries = range(len(self.names))
        ms = tuple(
            tuple(t for seat, t in game.answers if entry_of_seat[seat] == e) for e in entries
        )
        slots = self.slots_per_entry
        clock = self.clock
        used = tuple(max(clock.bank_used_ms(e * slots + k) for k in range(slots)) for e in entries)
        return ms, used

    def _dispatch(self, game: _Game) -> None:
        """Tell each seat and the spectators the game's new events; write them."""
        events = game.state.events
        assert events is not None
        family = game.state.rules.family
        for event in events[game.sent :]:
            # Most events are plays and tricks, which the match only passes on.
            routine = type(event) in _ROUTINE
            if not routine:
                game.note(event)
            said = heard(family, event, game.hands)
            if said.everyone is not None:
                self._to_all(game, said.everyone)
            elif said.each:
                for slot, own in zip(game.seats, said.each, strict=False):
                    slot.tell(own)
            if not routine and isinstance(event, DealOver):
                self.deals_done += 1
                if self._on_deal is not None:
                    self._on_deal(self)
        # Each line's text is made once, for the record and the storage callbacks alike.
        state = game.state
        texts = [state.text(i) for i in range(game.sent, len(events))]
        if self._keep_lines:
            self._keep(game, events[game.sent :], texts)
        game.sent = len(events)
        if self.record is not None:
            self.record.write_new(state, texts)

    def _keep(self, game: _Game, new: list[Event], texts: list[str]) -> None:
        for event, text in zip(new, texts, strict=True):
            game.lines.append(text)
            if isinstance(event, Scored):
                if self._on_deal_recorded is not None:
                    deal = tuple(game.lines[game.deal_start :])
                    self._on_deal_recorded(DealReport(game.number, event.deal, deal))
                game.deal_start = len(game.lines)

    def _to_all(self, game: _Game, event: pb.Event) -> None:
        self.feed.publish(event)
        for link in game.seats:
            link.tell(event)

    # -- one decision ------------------------------------------------------------------------

    async def _decide(self, game: _Game, seat: int) -> None:
        """Ask ``seat`` until it answers a legal action, or apply the fault policy; its bot
        runs only meanwhile, unless the match lets bots ponder."""
        link = game.seats[seat]
        self._thaw(link)
        try:
            await self._decide_thawed(game, seat)
        finally:
            self._freeze(link)

    def _freezes(self, link: Slot) -> bool:
        e = link.slot // self.slots_per_entry
        # The built-in bots do nothing off move: stopping them would close no channel.
        return (
            not self.config.limits.ponder
            and self.sandboxes[e] == SandboxMode.BWRAP
            and not self.config.entries[e].built_in
        )

    def _freeze(self, link: Slot) -> None:
        process = self._process_of.get(id(link))
        if process is not None and self._freezes(link):
            process.freeze()

    def _thaw(self, link: Slot) -> None:
        process = self._process_of.get(id(link))
        if process is not None and process.frozen:
            process.thaw()

    def _thaw_all(self) -> None:
        for process in self.processes:
            if process.frozen:
                process.thaw()

    async def _decide_thawed(self, game: _Game, seat: int) -> None:
        link = game.seats[seat]
        self._note_link_incidents(game, seat, link)
        if link.connected and link.slot in self._lost:
            del self._lost[link.slot]
            self._notice(f"{link.label!r} reconnected at {self._at(game)}; it plays again")
        if not link.connected and not await self._reconnected(game, seat, link):
            return
        attempts = self.config.limits.max_attempts
        while True:
            legal = game.state.legal_actions()
            # The turnstile keeps the referee's loop from running late (service/turnstile.py).
            await self.referee.turnstile.enter()
            try:
                request_id, started = await self._send_request(game, seat, legal, attempts)
                decision = await self._answer(game, seat, request_id, started)
            finally:
                self.referee.turnstile.leave()
            if decision is None:
                return  # a timeout or a lost slot: the fault policy has been applied
            if decision.action_id in legal:
                # Outside the turnstile: a wait for the clock, not work of the loop's.
                await self.clock.keep_tempo(started)
                line = len(game.events)
                game.state.apply_action(decision.action_id)
                game.time_answer(seat, line)  # the engine wrote the action's line first
                return
            attempts -= 1
            if await self._refuse(game, seat, request_id, decision, attempts):
                return

    async def _send_request(
        self, game: _Game, seat: int, legal: tuple[int, ...], attempts: int
    ) -> tuple[int, float]:
        """Send ``seat`` its request for one of ``legal``; its id, and when it was sent."""
        state = game.state
        link = game.seats[seat]
        self._request_ids += 1
        request_id = self._request_ids
        events = link.take_told()
        number = game.number

        def fill(since: Sent | None) -> tuple[bytes, Sent]:
            return encode_decision(state, seat, legal, number, since)

        clock = self.clock
        request = Request(request_id, clock.deadline_ms, clock.bank_ms(link.slot), attempts, fill)
        # The clock runs from the write's start: a bot that does not read spends its own time.
        await link.send_request(events, request, within=clock.budget(link.slot))
        # The round trip is timed from the send, as a bare echo stream would be.
        return request_id, link.sent_at

    async def _answer(
        self, game: _Game, seat: int, request_id: int, started: float
    ) -> pb.Decision | None:
        """The answer to ``request_id`` within the deadline and the time bank, waiting out
        a dropped stream; None once a timeout or a lost slot has met the fault policy."""
        link = game.seats[seat]
        while True:
            budget = self.clock.budget(link.slot)
            if link.stalled:
                # The request's own write waited out the clock: the bot never read it.
                how, decision = Wait.TIMEOUT, None
            else:
                left = self.clock.left(link.slot, started)
                how, decision = await link.next_decision(request_id, left)
            game.answer_ms = self._charge(link, how, started)
            self._note_link_incidents(game, seat, link)
            if how is Wait.DECISION:
                return decision
            if how is Wait.TIMEOUT:
                link.close_request()
                self._stat(link).timeouts += 1
                unread = "; the bot did not read its stream" if link.stalled else ""
                await self._fault(
                    game, seat, Termination.TIMEOUT,
                    f"no answer to request {request_id} within {budget * 1000:.0f} ms{unread}",
                )  # fmt: skip
                return None
            if not await self._reconnected(game, seat, link):
                link.close_request()
                return None
            # The slot is back and attach() sent it this request again: the clock
            # restarts and the same request stays open.
            started = time.monotonic()

    def _charge(self, link: Slot, how: Wait, started: float) -> int:
        """Time a wait that began at ``started`` on the clock (:meth:`Clock.charge`)."""
        # An answer is timed when it arrived, not when this task got to it.
        done = link.answered_at if how is Wait.DECISION else time.monotonic()
        elapsed = done - started
        if self._on_decision is not None and how is Wait.DECISION:
            self._on_decision(elapsed)
        return self.clock.charge(link.slot, elapsed)

    async def _refuse(
        self, game: _Game, seat: int, request_id: int, decision: pb.Decision, attempts: int
    ) -> bool:
        """Refuse an illegal action, ``attempts`` left; True once none is left and the
        fault policy has been applied."""
        link = game.seats[seat]
        refusal = game.state.note_rejected(seat, decision.action_id)
        game.time_answer(seat, len(game.events) - 1)
        self._stat(link).illegal += 1
        link.tell(
            pb.Event(
                action_rejected=pb.ActionRejected(
                    request_id=request_id,
                    action_id=decision.action_id,
                    reason=refusal.reason.value,
                    message=refusal.message,
                    attempts_left=attempts,
                )
            )
        )
        if attempts > 0:
            return False
        await link.flush()
        await self._fault(
            game, seat, Termination.ILLEGAL_ACTION,
            f"{self.config.limits.max_attempts} illegal actions for one decision; "
            f"the last: {refusal.message}",
        )  # fmt: skip
        return True

    async def _reconnected(self, game: _Game, seat: int, link: Slot) -> bool:
        """Wait out the grace period for a lost slot; on failure apply the fault policy.

        A slot already lost for good in an earlier game gets no grace of its own: it
        forfeits at once, until it reconnects."""
        gone = self._lost.get(link.slot) if link.process_exit is None else None
        if gone is None and link.state is SlotState.DISCONNECTED:
            game.state.note_incident(
                seat,
                "disconnect",
                at_place("the stream closed; waiting for the ticket", self._where(game, seat)),
            )
            if await link.wait_connected(self.config.limits.grace):
                game.state.note_incident(seat, "reconnect", "the slot came back with its ticket")
                return True
        self._stat(link).crashes += 1
        if gone is not None:
            detail = self._absent(link, f"disconnected in game {gone} and not back since")
        elif not link.ever_connected:
            why = link.process_exit or self._alive_note(
                link, f"no connection within {self.config.limits.connect_timeout:g} s"
            )
            detail = f"never connected: {why}"
        elif link.process_exit is not None:
            detail = f"the bot process ended: {link.process_exit}"
        else:
            detail = self._alive_note(
                link, f"disconnected and not back within {self.config.limits.grace:g} s"
            )
            if self._process_of.get(id(link)) is None:
                # A remote bot: nobody here can restart it. Its later games of the match
                # forfeit at once rather than each waiting out the grace (82 games of a
                # dead bot took 7 minutes).
                self._lost[link.slot] = game.number
                self._notice(
                    f"{link.label!r} disconnected at {self._at(game)}; its games forfeit "
                    "until it reconnects"
                )
        await self._fault(game, seat, Termination.CRASH, detail)
        return False

    def _at(self, game: _Game) -> str:
        return f"{self._place}, game {game.number}" if self._place else f"game {game.number}"

    def _notice(self, line: str) -> None:
        if self._on_notice is not None:
            self._on_notice(line)

    def _alive_note(self, link: Slot, what: str) -> str:
        """``what``, with the log and the end of the stderr of the slot's bot process if the
        referee started one (it may still run, or hang)."""
        process = self._process_of.get(id(link))
        if process is None:
            return self._absent(link, what)
        return exit_note(what, process.stderr_path, process.stderr_tail())

    def _absent(self, link: Slot, what: str) -> str:
        """``what``, with why no stream of its entrant key took the slot, for a keyed entry."""
        name = self.names[link.slot // self.slots_per_entry]
        if self._keys is not None and self._keys.knows(name):
            return f"{what}: {self._keys.absence(name)}"
        return what

    def _where(self, game: _Game, seat: int) -> str:
        """Who and where a fault is: ``entry 'x', seat 2, game 3, deal 1``."""
        entry = self.names[game.seats[seat].slot // self.slots_per_entry]
        deal = max(1, game.state.deal_number)
        return f"entry {entry!r}, seat {seat}, game {game.number}, deal {deal}"

    async def _fault(self, game: _Game, seat: int, termination: Termination, detail: str) -> None:
        # The bot hears what it did; the record also says who and where (and the log).
        apply_fault(
            self.config.limits.on_fault, game.state, seat, game.seats[seat], self._rng,
            termination, detail, self._where(game, seat),
        )  # fmt: skip

    def _note_link_incidents(self, game: _Game, seat: int, link: Slot) -> None:
        """Move what the slot did wrong meanwhile (stale answers, floods) into the record."""
        for incident in link.unnoted_incidents():
            detail = incident.detail
            if incident.kind in FAULT_INCIDENTS:
                detail = at_place(detail, self._where(game, seat))
            game.state.note_incident(seat, incident.kind, detail)

    def _stat(self, link: Slot) -> EntryStats:
        return self.result.stats[link.slot // self.slots_per_entry]


@dataclass
class _Game:
    number: int
    state: AnyGame
    seats: list[Slot]
    sent: int = 0
    hands: Sequence[Sequence[str]] = ()
    forfeit_seat: int | None = None
    forfeit_detail: str = ""
    lines: list[str] = field(default_factory=list)
    """Canonical record lines so far, kept only for the storage callbacks."""
    deal_start: int = 1
    """Where the current deal's lines begin in ``lines`` (after the game's header)."""
    deal_points: list[tuple[int, ...]] = field(default_factory=list)
    """Each finished deal's points per side."""
    answer_ms: int = 0
    """The think time of the answer received last."""
    answers: list[tuple[int, int]] = field(default_factory=list)
    """(seat, think time in ms) of every answer, in order: its action or ``rejected`` line."""

    @property
    def events(self) -> list[Event]:
        events = self.state.events
        assert events is not None  # a match always records
        return events

    def note(self, event: Event) -> None:
        """Keep what the match needs of ``event``: a deal's hands, a score, a forfeit."""
        if isinstance(event, Dealt):
            self.hands = event.hands
        elif isinstance(event, Scored):
            self.deal_points.append(event.points)
        elif isinstance(event, Forfeited):
            self.forfeit_seat = event.seat
            self.forfeit_detail = event.detail

    def time_answer(self, seat: int, line: int) -> None:
        """Give record line ``line``, ``seat``'s answer, the answer's think time."""
        assert getattr(self.events[line], "seat", None) == seat, self.events[line]
        self.state.time_answer(line, self.answer_ms)
        self.answers.append((seat, self.answer_ms))
