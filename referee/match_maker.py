"""Matches started from outside on a running referee (``tavolo serve``, MatchService)."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import asyncio
import json
import logging
from pathlib import Path
from typing import IO

from referee.engine.deals import SeedError, check_seed
from referee.engine.errors import RulesError
from referee.engine.registry import preset
from referee.entries import BUILT_IN_BOTS, parse_entry
from referee.match.config import Limits, MatchConfig
from referee.match.match import Match
from referee.match.results import MatchResult, result_json
from referee.records import open_record
from referee.sandbox.bwrap import SandboxMode
from referee.service.server import Referee
from tavolo_bot.proto import referee_pb2 as pb

LOG = logging.getLogger("tavolo.organiser")


class LocalMatchMaker:
    """Creates matches for MatchService calls and keeps their status and records."""

    def __init__(
        self,
        referee: Referee,
        admin_token: str,
        records: Path,
        advertise: str | None = None,
        sandbox: SandboxMode = SandboxMode.BWRAP,
        connect_timeout: float = Limits.connect_timeout,
    ) -> None:
        self.referee = referee
        self.connect_timeout = connect_timeout
        """Seconds bots have to connect, for a request that does not say."""
        self.records = records
        self.sandbox = sandbox
        # Records hold every hand as it is dealt: for the referee's user alone.
        records.mkdir(mode=0o700, parents=True, exist_ok=True)
        records.chmod(0o700)
        self.advertise = advertise or referee.address
        """The address remote bots are told to connect to."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._sandbox: dict[str, str] = {}
        self.admin_token = admin_token
        self._status: dict[str, pb.GetMatchResponse] = {}
        self._running: dict[str, Match] = {}
        """Matches not over yet, to tell waiting for bots from playing."""
        referee.matches.attach(self)

    async def create(self, request: pb.CreateMatchRequest) -> pb.CreateMatchResponse:
        """Check the request, start the match in the background, return its tickets."""
        config = self._config(request)
        match = Match(self.referee, config)
        path = self.records / f"{match.match_id}.jsonl"
        record = open_record(path, new=True)  # closed by _run
        match.use_record(record)
        for line in match.warnings:
            LOG.warning("match %s: %s", match.match_id, line)
        modes = dict(zip(match.names, match.sandboxes, strict=True))
        self._sandbox[match.match_id] = json.dumps(modes)
        self._status[match.match_id] = pb.GetMatchResponse(
            match_id=match.match_id, status="running", sandbox_json=self._sandbox[match.match_id]
        )
        self._running[match.match_id] = match
        task = asyncio.ensure_future(self._run(match, record))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return pb.CreateMatchResponse(
            match_id=match.match_id,
            tickets=[pb.SeatTicket(label=label, ticket=t) for label, t in match.remote_tickets()],
            referee=self.advertise,
        )

    def status(self, match_id: str) -> pb.GetMatchResponse | None:
        """Where match ``match_id`` is; None for an id this referee never made.

        A match is ``waiting`` until its first game starts: its bots are connecting (the
        note names the seats not connected yet); then ``running``, then ``done`` or
        ``failed``.
        """
        status = self._status.get(match_id)
        match = self._running.get(match_id)
        if status is None or match is None or match.feed.game != 0:
            return status
        missing = [link.label for row in match.links for link in row if not link.ever_connected]
        note = f"not connected yet: {', '.join(missing)}" if missing else ""
        return pb.GetMatchResponse(
            match_id=match_id, status="waiting", sandbox_json=status.sandbox_json, note=note
        )

    async def _run(self, match: Match, record: IO[str]) -> None:
        status = self._status
        try:
            result = await match.run()
            status[match.match_id] = pb.GetMatchResponse(
                match_id=match.match_id,
                status="done",
                result_json=json.dumps(result_json(result)),
                sandbox_json=self._sandbox[match.match_id],
                note=_faulted_note(result),
            )
        except Exception as exc:
            # A background match has no caller to raise to: its status carries the
            # failure, and the log the traceback.
            LOG.exception("match %s failed", match.match_id)
            status[match.match_id] = pb.GetMatchResponse(
                match_id=match.match_id,
                status="failed",
                error=f"{type(exc).__name__}: {exc}",
                sandbox_json=self._sandbox[match.match_id],
            )
        finally:
            self._running.pop(match.match_id, None)
            record.close()

    def _config(self, request: pb.CreateMatchRequest) -> MatchConfig:
        """The match a request asks for; ValueError names what is wrong."""
        try:
            rules = preset(request.game or "tressette").with_knobs(list(request.rules))
            check_seed(request.seed)
        except (RulesError, SeedError) as exc:
            raise ValueError(str(exc)) from None
        if not request.seed:
            raise ValueError("a match needs a seed")
        if len(request.entries) != rules.sides:
            raise ValueError(
                f"{rules.game} needs {rules.sides} entries, got {len(request.entries)}"
            )
        allowed = {*BUILT_IN_BOTS, "remote"}
        for entry in request.entries:
            if entry not in allowed:
                raise ValueError(
                    f"entry {entry!r}: matches created from outside take only built-in bots "
                    f"({', '.join(BUILT_IN_BOTS)}) or remote entries"
                )
        entries = tuple(parse_entry(e) for e in request.entries)
        connect = request.connect_timeout_ms / 1000 if request.connect_timeout_ms else None
        limits = Limits(
            deadline_ms=request.deadline_ms or 1000,
            connect_timeout=connect or self.connect_timeout,
        )
        return MatchConfig(
            rules,
            request.seed,
            entries,
            request.deals or None,
            request.sets or 1,
            limits,
            sandbox=self.sandbox,
        )


def _faulted_note(result: MatchResult) -> str:
    """A line naming each entry whose every game ended in its own crash (or absent bot),
    with why the last time (without the bot's stderr, which the record keeps); empty if
    there is none."""
    notes = []
    for e, why in result.always_crashed().items():
        head = why.partition("\n")[0].removesuffix("; stderr ends:")
        notes.append(f"every game of {result.stats[e].name!r} ended in its crash ({head})")
    return "; ".join(notes)
