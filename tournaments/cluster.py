"""Tournaments on a Dask cluster (docs/cluster.md): each duplicate set is a task, played on
a worker by a referee of its own with its bots sandboxed there; the head stores each set's
deals and games in one transaction as its result arrives.

``--cluster tcp://HOST:PORT`` (or ``tls://``) joins a running scheduler; ``local:N`` starts
a LocalCluster of N worker processes on this machine. Dask is imported when a cluster is
entered, not with this module.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import re
import ssl
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from tournaments.cluster_task import (
    BotCheck,
    ClusterError,
    SetOutcome,
    checked_once,
    code_digest,
    forget_match,
    play_set,
)
from tournaments.config import TournamentConfig
from tournaments.runner import DEFAULT_LOGS_MB, MatchJob

__all__ = ["CONNECT_TIMEOUT", "ClusterConnection", "ClusterError", "ClusterTables", "parse_cluster"]

CONNECT_TIMEOUT = 10.0
"""Seconds a scheduler has to answer before ``--cluster`` gives up."""

WATCH_SECONDS = 1.0
"""How often the head looks for workers that left."""

_ADDRESS = re.compile(r"^(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})$")


def parse_cluster(text: str) -> str | int:
    """``--cluster`` read: a scheduler's address, or the number of workers of a LocalCluster.

    ClusterError, one line, for anything else.
    """
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if not count.isdigit() or int(count) < 1:
            raise ClusterError(
                f"--cluster {text}: local:N needs N, the number of workers, 1 or more"
            )
        return int(count)
    found = _ADDRESS.match(text)
    if found is None or not 1 <= int(found.group(3)) <= 65535:
        raise ClusterError(
            f"--cluster {text!r}: give a scheduler's address, tcp://HOST:PORT (tls://HOST:PORT "
            "with Dask's TLS settings), or local:N for N workers on this machine"
        )
    return text


class ClusterConnection:
    """A Dask client on ``--cluster``: a running scheduler joined, or a LocalCluster started
    with mutual TLS; its workers checked and watched. What a tournament's tables
    (:class:`ClusterTables`) and the arena's ladder play on."""

    def __init__(
        self,
        cluster: str,
        *,
        timeout: float = CONNECT_TIMEOUT,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.target = parse_cluster(cluster)
        self.cluster_text = cluster
        self.timeout = timeout
        self.on_warning = on_warning
        self._watch: asyncio.Future[None] | None = None
        self.client: Any = None
        self._local: Any = None

    async def open(self) -> None:
        """Connect, or start the LocalCluster; ClusterError, one line, if it cannot."""
        # Dask ships no types: what it makes is Any here.
        distributed: Any = importlib.import_module("distributed")
        # Its client logs each failed reconnection with a traceback; what a run must know
        # of it reaches the run as ClusterError, one line.
        logging.getLogger("distributed.client").setLevel(logging.CRITICAL)
        if isinstance(self.target, int):
            # Whoever reaches a scheduler runs code on its workers, as the referee's user:
            # loopback is not enough (any user of this machine reaches it). Mutual TLS with
            # a CA made for this run alone, held in memory: only this head and its workers
            # have a certificate it signed.
            security = distributed.Security.temporary()
            try:
                self._local = await distributed.LocalCluster(
                    n_workers=self.target,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    protocol="tls://",
                    security=security,
                    dashboard_address=None,
                    asynchronous=True,
                    silence_logs=logging.ERROR,
                )
            except (OSError, RuntimeError) as exc:
                raise ClusterError(f"--cluster {self.cluster_text}: {exc}") from None
            address: Any = self._local
        else:
            address = self.target
            security = self._security(distributed)
        client = distributed.Client(
            address, asynchronous=True, timeout=self.timeout, set_as_default=False,
            security=security,
        )  # fmt: skip
        try:
            await client
        except (OSError, TimeoutError) as exc:
            await client.close()
            await self._close_local()
            hint = ""
            if _tls_failure(exc):
                # The refusal may come as an alert ("unknown ca") or, as the scheduler
                # hangs up first, as a bare EOF: either way the certificates are why.
                hint = (
                    "the TLS handshake failed: check that the scheduler's CA signed this "
                    "head's certificate, and this head's CA file the scheduler's; "
                )
            raise ClusterError(f"--cluster {self.cluster_text}: {hint}{exc}") from None
        self.client = client

    async def start(self, checks: tuple[BotCheck, ...], code: str) -> None:
        """:meth:`open`, :meth:`check_workers` and :meth:`watch`, closed again if one fails."""
        await self.open()
        try:
            await self.check_workers(checks, code)
        except BaseException:
            await self.close()
            raise
        self.watch()

    def watch(self) -> None:
        """Start saying when a worker leaves (through ``on_warning``)."""
        self._watch = asyncio.ensure_future(self._watch_workers())

    def _security(self, distributed: Any) -> Any:
        """Dask's TLS settings for the scheduler's address, checked before connecting:
        ClusterError, one line naming the setting, where Dask would fail with a traceback
        or an error that names no file."""
        security = distributed.Security()  # from Dask's configuration and DASK_* variables
        where = f"--cluster {self.cluster_text}"
        files = (("ca-file", security.tls_ca_file), ("client.cert", security.tls_client_cert),
                 ("client.key", security.tls_client_key))  # fmt: skip
        for key, value in files:
            # A setting holds a file's path, or (Dask allows it) the PEM text itself.
            if value and "-----BEGIN" not in value and not Path(value).is_file():
                raise ClusterError(
                    f"{where}: Dask's TLS setting distributed.comm.tls.{key} names {value}, "
                    "which is not a file"
                )
        try:
            args = security.get_connection_args("client")
        except (OSError, ssl.SSLError, ValueError) as exc:
            raise ClusterError(f"{where}: Dask's TLS settings: {exc}") from None
        tls = self.cluster_text.startswith("tls://")
        if tls and args.get("ssl_context") is None:
            raise ClusterError(
                f"{where}: a tls:// scheduler needs Dask's TLS settings for this head: "
                "DASK_DISTRIBUTED__COMM__TLS__CA_FILE, DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT "
                "and DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY (docs/cluster.md)"
            )
        if not tls and security.require_encryption:
            raise ClusterError(
                f"{where}: Dask's configuration requires encryption "
                "(distributed.comm.require-encryption): give the scheduler's tls:// address"
            )
        return security

    async def leave(self, *, failed: bool) -> None:
        """Stop watching and close; ClusterError if the watch broke and nothing else did
        (``failed``: something did, and is on its way up)."""
        if self._watch is not None:
            watch, self._watch = self._watch, None
            watch.cancel()
            (broken,) = await asyncio.gather(watch, return_exceptions=True)
            if isinstance(broken, Exception) and not failed:
                await self.close()
                raise ClusterError(f"--cluster {self.cluster_text}: {broken}")
        await self.close()

    async def close(self) -> None:
        """Close the client, and the LocalCluster if this made one."""
        if self.client is not None:
            client, self.client = self.client, None
            await client.close()
        await self._close_local()

    async def _close_local(self) -> None:
        if self._local is not None:
            local, self._local = self._local, None
            await local.close()

    async def workers(self) -> dict[str, int]:
        """Each worker's address and its threads (sets it plays at once)."""
        assert self.client is not None
        threads: dict[str, int] = await self.client.nthreads()
        return threads

    async def check_workers(self, checks: tuple[BotCheck, ...], code: str) -> None:
        """ClusterError, naming the worker and the path, unless every worker has every
        file of ``checks``, the same as the head's, runnable, and tavolo ``code``."""
        assert self.client is not None
        if not await self.workers():
            raise ClusterError(f"--cluster {self.cluster_text}: the scheduler has no worker")
        # Through the worker's cache, so its first set does not check again.
        found = await self.client.run(checked_once, checks, code, on_error="return")
        for worker, problems in sorted(found.items()):
            if isinstance(problems, BaseException):
                raise ClusterError(f"worker {worker}: cannot check the bots: {problems}")
            if problems:
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                raise ClusterError(f"worker {worker}: {problems[0]}{more}")

    async def _watch_workers(self) -> None:
        """Say when a worker leaves: Dask plays the sets it had again on the others."""
        known = set(await self.workers())
        while True:
            await asyncio.sleep(WATCH_SECONDS)
            now = set(await self.workers())
            for worker in sorted(known - now):
                if self.on_warning is not None:
                    self.on_warning(
                        f"worker {worker} left the cluster ({len(now)} left): the sets it was "
                        "playing are played again from their seeds"
                    )
            known = now


class OnCluster:
    """An async context manager over :attr:`connection`: entering starts it (checking every
    worker for :attr:`checks` and this tavolo), leaving closes it."""

    connection: ClusterConnection
    checks: tuple[BotCheck, ...] = ()
    """The bots every worker must have, before anything is played."""
    code: str = ""

    async def __aenter__(self) -> Self:
        await self.connection.start(self.checks, self.code)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.connection.leave(failed=kind is not None)


class ClusterTables(OnCluster):
    """Tables on a Dask cluster for the matches of one run (``TournamentRun(tables=...)``).

    An async context manager: entering connects (or starts the LocalCluster) and checks
    every worker's bots; leaving closes what it opened.
    """

    def __init__(
        self,
        cluster: str,
        config: TournamentConfig,
        modes: Mapping[str, str],
        *,
        logs_mb: int = DEFAULT_LOGS_MB,
        timeout: float = CONNECT_TIMEOUT,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        """``cluster`` as ``--cluster`` takes it; ``modes``: what each entry runs under on
        the head (:func:`tournaments.runner.confinements`), which every worker must match;
        ``on_warning`` hears a line for each worker that leaves the cluster."""
        self.connection = ClusterConnection(cluster, timeout=timeout, on_warning=on_warning)
        self.cluster_text = cluster
        self.config = config
        self.modes = dict(modes)
        self.logs_mb = logs_mb
        self.on_warning = on_warning
        self.checks = tuple(
            BotCheck(e.name, e.entry, tuple(e.programs), self.modes[e.name])
            for e in config.entries
            if not e.entry.remote
        )
        self.code = code_digest()
        self._fingerprint = config.fingerprint()[:12]
        self._tries: dict[tuple[int, int], int] = {}
        """(match, set) -> the tasks submitted for it by this run: each try gets a key."""
        self.played_on: dict[tuple[int, int], str] = {}
        """(match, set) -> the worker whose result of it was stored."""
        self._busy = 0
        """Sets submitted and not yet back."""
        self._waiting: list[asyncio.Future[None]] = []
        """Sets waiting for a thread, first come first served."""
        self._freed = asyncio.Event()

    # -- the cluster -----------------------------------------------------------------------

    @property
    def client(self) -> Any:
        """The Dask client, while entered."""
        return self.connection.client

    async def workers(self) -> dict[str, int]:
        """Each worker's address and its threads (sets it plays at once)."""
        return await self.connection.workers()

    async def check_workers(self) -> None:
        """ClusterError, naming the worker and the path, unless every worker has every
        local entry's program files, the same as the head's, runnable, and this tavolo."""
        await self.connection.check_workers(self.checks, self.code)

    # -- playing ---------------------------------------------------------------------------

    async def play(self, job: MatchJob) -> None:
        """Play ``job``'s games, a duplicate set per task, and store each set as it ends;
        at most as many sets at once, over all matches, as the workers have threads (one
        at a time for the match if ``job.gated``)."""
        try:
            await self._play_sets(job)
        finally:
            await self._forget(job)

    async def _play_sets(self, job: MatchJob) -> None:
        sets: dict[int, list[int]] = {}
        for number in job.games:
            sets.setdefault(job.config.game_plan(number)[0], []).append(number)
        if job.gated:
            # An SPRT is counting: one set at a time, each stored and counted before the
            # next starts, so the test stops after the set a local run stops after.
            for set_number, games in sets.items():
                await self._play_set(job, set_number, games)
            return
        tasks = [asyncio.ensure_future(self._play_set(job, s, g)) for s, g in sets.items()]
        try:
            for task in asyncio.as_completed(tasks):
                await task  # the first set that fails fails the match (and the run)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _forget(self, job: MatchJob) -> None:
        """Every worker closes what it kept of the match (its bots) for the next set."""
        if self.client is None:
            return
        found = await self.client.run(forget_match, str(job.workdir), on_error="return")
        for worker, closed in sorted(found.items()):
            if isinstance(closed, BaseException) and self.on_warning is not None:
                self.on_warning(
                    f"worker {worker}: could not close match {job.match_id}'s bots: {closed}"
                )

    async def _play_set(self, job: MatchJob, set_number: int, games: list[int]) -> None:
        await self._take_slot()
        try:
            if job.stopped():
                return
            outcome = await self._run_task(job, set_number, games)
        finally:
            self._free_slot()
        job.record_set(outcome.deals, outcome.games)
        self.played_on[job.match_id, set_number] = outcome.worker

    async def _run_task(self, job: MatchJob, set_number: int, games: list[int]) -> SetOutcome:
        from distributed import KilledWorker
        from distributed.client import FutureCancelledError

        assert self.client is not None
        tries = self._tries[job.match_id, set_number] = (
            self._tries.get((job.match_id, set_number), 0) + 1
        )
        # The same key for the same try of the same set: Dask plays a key once, and a
        # worker lost midway has it played again elsewhere under that key.
        key = f"tavolo-{self._fingerprint}-match-{job.match_id}-set-{set_number}-try-{tries}"
        future = self.client.submit(
            play_set,
            job.config,
            tuple(games),
            self.checks,
            self.code,
            str(job.workdir / f"set-{set_number}"),
            (str(job.workdir.parent), self.logs_mb),
            key=key,
            pure=False,
        )
        try:
            outcome: SetOutcome = await future
        except KilledWorker as exc:
            raise ClusterError(
                f"match {job.match_id} set {set_number}: {exc.allowed_failures + 1} workers "
                f"died playing it, the last {exc.last_worker.address}; see their logs"
            ) from None
        except FutureCancelledError as exc:
            raise ClusterError(
                f"--cluster {self.cluster_text}: match {job.match_id} set {set_number} was "
                f"cancelled ({exc.reason}): every finished set is stored; run the same "
                "command again to resume"
            ) from None
        finally:
            if not future.done():
                await self.client.cancel([future])
            future.release()
        played = [g.number for g in outcome.games]
        if played != games:
            raise ClusterError(
                f"worker {outcome.worker}: match {job.match_id} set {set_number} came back "
                f"with games {played}, not {games}"
            )
        return outcome

    async def _take_slot(self) -> None:
        """Wait until fewer sets run than the workers have threads, in turn; take one."""
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        try:
            while True:
                if self._waiting[0] is turn:
                    limit = max(1, sum((await self.workers()).values()))
                    if self._busy < limit:
                        self._busy += 1
                        return
                self._freed.clear()
                await self._freed.wait()
        finally:
            self._waiting.remove(turn)
            self._freed.set()  # the next in line looks again

    def _free_slot(self) -> None:
        self._busy -= 1
        self._freed.set()


def _tls_failure(exc: BaseException) -> bool:
    """Whether ``exc``, or an error it was raised from, is a TLS error, or says it is one:
    Dask sometimes passes on only the TLS error's text (``in <TLS (closed) …>: SSLError: …``).
    """
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError) or re.search(r"\bSSL\w*Error\b|\[SSL", str(seen)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
