"""Tournaments on a Dask cluster: real LocalClusters and ``dask`` worker processes, real bot
processes, real SQLite. A LocalCluster takes several seconds to start: the tournaments are
small (a set is two games of two deals).

What a cluster run must give is the local run's table, byte for byte, think times left
out (``--no-think-times``: no two runs share them), and the same record of every game.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests import test_entrant_keys as keys
from tests.network import free_port
from tests.sandboxing import require_sandbox
from tests.test_cli import assert_one_error, console_script, tavolo
from tests.test_tournament_run import (
    ENTRIES,
    game_records,
    results_only,
    stored_games,
    table_without_think_times,
    tournament,
)
from tournaments.cluster import ClusterTables
from tournaments.cluster_task import BotCheck, check_bots, code_digest, play_set
from tournaments.config import load_config
from tournaments.runner import (
    RunSettings,
    TournamentRun,
    confinements,
    match_config,
    note_confinements,
    open_store,
)
from tournaments.storage import Store


def table_json(db: Path) -> dict[str, Any]:
    result = tavolo("tournament", "table", "--db", db, "--format", "json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def stored_deals(db: Path) -> list[tuple[int, int, int, int]]:
    with sqlite3.connect(db) as c:
        return [tuple(r) for r in c.execute("SELECT match_id, game, attempt, deal FROM deals")]  # type: ignore[misc]


def run_console(
    *args: str | Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small round robin (3 matches of 2 duplicate sets) run locally: (file, database)."""
    folder = tmp_path_factory.mktemp("local")
    path = tournament(folder, games=4, deals=2)
    db = folder / "local.db"
    result = tavolo("tournament", "run", path, "--db", db, "--quiet", "--shards", "1")
    assert result.exit_code == 0, result.output
    return path, db


def assert_same_results(db: Path, local: Path) -> None:
    """The cluster's database holds the local run's games, once each, and gives its table."""
    games = stored_games(db)
    assert len(games) == len(set(games)) == 12
    deals = stored_deals(db)
    assert len(deals) == len(set(deals)) == 24, "a deal was stored twice"
    assert game_records(db) == game_records(local)
    assert table_without_think_times(db) == table_without_think_times(local)
    assert results_only(table_json(db)) == results_only(table_json(local))


def test_a_local_cluster_of_two_workers_gives_the_local_table(
    local_run: tuple[Path, Path], tmp_path: Path
) -> None:
    path, local = local_run
    db = tmp_path / "cluster.db"
    done = run_console("tournament", "run", path, "--db", db, "--cluster", "local:2", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "12 games played now, 12 of 12 stored" in done.stdout
    assert "Traceback" not in done.stderr
    assert_same_results(db, local)
    # The bots kept their logs under the head's logs folder (one machine here), in the
    # folder of the first set their worker played of the match.
    logs = tmp_path / "cluster.logs"
    for match in range(1, 4):
        assert {p.name for p in (logs / f"match-{match}").iterdir()} <= {"set-1", "set-2"}


def test_a_worker_keeps_a_match_from_one_set_to_the_next(
    local_run: tuple[Path, Path], tmp_path: Path
) -> None:
    require_sandbox()  # sandboxed built-in bots: one process per slot for the match
    path, local = local_run
    db = tmp_path / "kept.db"
    done = run_console("tournament", "run", path, "--db", db, "--cluster", "local:1", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_same_results(db, local)
    logs = tmp_path / "kept.logs"
    # Both sets of each match were played by the processes started for the first: built-in
    # bots keep one per slot (entry-slot) for the match, not one a set.
    processes = {"0-0", "0-1", "1-0", "1-1"}
    for match in range(1, 4):
        assert [p.name for p in (logs / f"match-{match}").iterdir()] == ["set-1"]
        assert {p.name for p in (logs / f"match-{match}" / "set-1").iterdir()} == processes


async def _kill_a_busy_worker(tables: ClusterTables, store: Store) -> tuple[str, str]:
    """Once a set is stored, SIGKILL a worker in the middle of another; the worker and the
    set's key."""
    client = tables.client
    while store.game_count() < 2:
        await asyncio.sleep(0.05)
    while True:
        before = {w: keys[0] for w, keys in (await client.processing()).items() if keys}
        await asyncio.sleep(0.3)  # its bots are started and playing
        now = {w: keys[0] for w, keys in (await client.processing()).items() if keys}
        same = [(w, key) for w, key in now.items() if before.get(w) == key]
        if same:
            break
    worker, key = same[0]
    pids = await client.run(os.getpid, workers=[worker])
    os.kill(pids[worker], signal.SIGKILL)
    return worker, str(key)


def test_a_worker_killed_mid_set_has_its_set_played_again(
    local_run: tuple[Path, Path], tmp_path: Path
) -> None:
    path, local = local_run
    config = load_config(path)
    db = tmp_path / "killed.db"
    modes = confinements(config)

    async def main(store: Store) -> tuple[str, str, dict[tuple[int, int], str]]:
        async with ClusterTables("local:2", config, modes) as tables:
            run = TournamentRun(config, store, RunSettings(concurrency=8), tables=tables)
            killer = asyncio.ensure_future(_kill_a_busy_worker(tables, store))
            await run.run()
            assert killer.done(), "the run ended before a worker could be killed"
            return (*killer.result(), tables.played_on)

    with open_store(db, config) as store:
        note_confinements(store, modes)
        killed, key, played_on = asyncio.run(main(store))
    # The killed worker's set was played again, from its seeds, by the worker left.
    match, set_number = key.split("-match-")[1].split("-try-")[0].split("-set-")
    assert played_on[int(match), int(set_number)] not in ("", killed)
    assert len(played_on) == 6
    assert_same_results(db, local)


def _kept_and_children() -> tuple[int, list[str]]:
    """On a worker: its kept matches, and the names of its child processes."""
    from tournaments import cluster_task

    me, children = os.getpid(), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, rest = stat.read_text().rsplit(")", 1)
        except OSError:
            continue  # exited meanwhile
        if int(rest.split()[1]) == me:
            children.append(name.split("(", 1)[1])
    return sum(len(kept) for kept in cluster_task._kept.values()), children


def test_each_match_ends_with_its_bots_closed_on_every_worker(
    local_run: tuple[Path, Path], tmp_path: Path
) -> None:
    path, local = local_run
    config = load_config(path)
    modes = confinements(config)

    async def main(store: Store) -> dict[str, tuple[int, list[str]]]:
        async with ClusterTables("local:2", config, modes) as tables:
            await TournamentRun(config, store, RunSettings(concurrency=8), tables=tables).run()
            found: dict[str, tuple[int, list[str]]] = await tables.client.run(_kept_and_children)
            return found

    db = tmp_path / "closed.db"
    with open_store(db, config) as store:
        note_confinements(store, modes)
        found = asyncio.run(main(store))
    assert len(found) == 2
    assert all(kept == 0 and children == [] for kept, children in found.values()), found
    assert_same_results(db, local)


def kept_matches_check(folder: str) -> None:
    """``play_set`` in this process, as a worker's thread runs it (no Dask needed), with a
    cap of one idle kept match and 5 s of idleness; an AssertionError if it keeps wrong."""
    from tournaments import cluster_task

    tmp_path = Path(folder)
    config = load_config(tournament(tmp_path, games=4, deals=1))
    checks = tuple(BotCheck(e.name, e.entry, tuple(e.programs), "off") for e in config.entries)
    cluster_task.KEEP_IDLE = 1
    # Long enough that a loaded machine's pause between two sets does not close the match.
    cluster_task.IDLE_SECONDS = 5
    logs = (str(tmp_path / "logs"), 10)

    def play(match: int, entries: tuple[str, str], set_number: int) -> Path:
        games = [2 * set_number - 1, 2 * set_number]
        match_config_ = match_config(config, entries, f"seed/{match}", 4)
        folder = tmp_path / "logs" / f"match-{match}" / f"set-{set_number}"
        outcome = play_set(match_config_, games, checks, code_digest(), str(folder), logs)
        assert [g.number for g in outcome.games] == games
        return Path(outcome.folder)

    def kept() -> list[str]:
        return sorted(Path(k).name for k in cluster_task._kept)

    one, two = ("heuristic", "random-a"), ("random-a", "random-b")
    first = play(1, one, 1)
    assert play(1, one, 2) == first, "the second set was not played on the kept match"
    assert kept() == ["match-1"]
    play(2, two, 1)  # the cap is 1 idle match: match 1's closes
    assert kept() == ["match-2"]
    deadline = time.monotonic() + 30
    while kept() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kept() == [], "an idle kept match was not closed"


def test_a_worker_closes_kept_matches_beyond_its_cap_and_when_idle(tmp_path: Path) -> None:
    # In a process of its own: a worker's referee thread lives as long as its process.
    code = (
        f"from tests.test_cluster import kept_matches_check; kept_matches_check({str(tmp_path)!r})"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr


def test_the_head_killed_then_resumed(local_run: tuple[Path, Path], tmp_path: Path) -> None:
    path, local = local_run
    db = tmp_path / "head.db"
    argv = [console_script(), "tournament", "run", str(path), "--db", str(db), "--quiet"]
    # A session of its own: the head and its LocalCluster's workers die together, as a
    # head machine would.
    head = subprocess.Popen(
        [*argv, "--cluster", "local:2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        stored: list[tuple[int, int]] = []
        while time.monotonic() < deadline and head.poll() is None and len(stored) < 2:
            try:
                stored = stored_games(db) if db.exists() else []
            except sqlite3.OperationalError:
                stored = []
            time.sleep(0.05)
        assert head.poll() is None, "the run ended before it could be killed"
        os.killpg(head.pid, signal.SIGKILL)
        head.wait()
    finally:
        if head.poll() is None:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
    killed_at = len(stored_games(db))
    assert 2 <= killed_at < 12
    assert killed_at % 2 == 0, "a set is stored whole or not at all"

    resumed = run_console(*argv[1:], "--cluster", "local:2")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"resumed: {killed_at} games were already stored" in resumed.stdout
    assert_same_results(db, local)


def _start(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)


def _wait_for_workers(address: str, count: int, security: Any = None) -> None:
    from distributed import Client

    with Client(address, timeout=60, set_as_default=False, security=security) as client:
        client.wait_for_workers(count, timeout=120)


def test_a_bot_missing_on_a_worker_is_named_in_one_line(tmp_path: Path) -> None:
    require_sandbox()  # the worker is started in a mount namespace without the bot
    bots = tmp_path / "bots"
    bots.mkdir()
    bot = bots / "alpha.sh"
    bot.write_text(f"#!/bin/sh\nexec {sys.executable} -m tavolo_bot.bots.random\n")
    bot.chmod(0o755)
    # In [match]: the worker is in a namespace already, where no sandbox of its own is made.
    entries = (
        f'sandbox = "off"\n\n[[entry]]\nname = "alpha"\nbot = "cmd:{bot}"\n\n'
        '[[entry]]\nname = "random"\nbot = "random"\n'
    )
    path = tournament(tmp_path, games=2, deals=1, entries=entries)
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = str(Path(sys.executable).parent / "dask")
    scheduler = _start(
        [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]
    )
    # A real worker whose machine lacks the bot: the bots' folder is empty where it runs.
    worker = _start(
        ["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(bots), "--", dask, "worker", address,
         "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1", "--no-dashboard"]
    )  # fmt: skip
    try:
        _wait_for_workers(address, 1)
        done = run_console(
            "tournament", "run", path, "--db", tmp_path / "t.db", "--cluster", address
        )
    finally:
        for process in (worker, scheduler):
            process.terminate()
            process.wait(30)
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert errors[0].startswith("error: worker tcp://127.0.0.1:"), errors[0]
    assert errors[0].endswith(f": {bot}: missing (entry 'alpha')"), errors[0]
    assert stored_games(tmp_path / "t.db") == []


def test_check_bots_names_a_changed_file_and_a_program_that_cannot_run(tmp_path: Path) -> None:
    bot = tmp_path / "beta.sh"
    bot.write_text("#!/bin/sh\nexec /no/such/python -m tavolo_bot.bots.random\n")
    bot.chmod(0o755)
    entries = f'[[entry]]\nname = "beta"\nbot = "cmd:{bot}"\n' + ENTRIES
    config = load_config(tournament(tmp_path, entries=entries))
    spec = config.entries[0]
    check = BotCheck(spec.name, spec.entry, spec.programs, "off")
    assert check_bots([check], code_digest()) == []

    bot.write_text("#!/bin/sh\nexec /no/such/python -m tavolo_bot.bots.heuristic\n")
    (problem,) = check_bots([check], code_digest())
    assert problem.startswith(f"{bot}: not the head's file (SHA-256 "), problem

    bot.write_text("#!/no/such/sh\n")
    bot.chmod(0o644)
    check = BotCheck(spec.name, spec.entry, (), "off")
    assert check_bots([check], code_digest()) == [
        f"{bot}: not executable (entry 'beta')",
        f"{bot}: its interpreter /no/such/sh is missing (entry 'beta')",
    ]
    assert check_bots([check], "0.0.1/0") == [
        f"tavolo here is {code_digest()} (version/engine digest), the head's is 0.0.1/0: "
        "install the same tavolo"
    ]


@pytest.mark.parametrize(
    ("given", "needle"),
    [
        ("local:0", "--cluster local:0: local:N needs N, the number of workers, 1 or more"),
        ("10.0.0.5:8786", "--cluster '10.0.0.5:8786': give a scheduler's address, tcp://"),
        ("tcp://host:99999", "--cluster 'tcp://host:99999': give a scheduler's address"),
    ],
)
def test_a_bad_cluster_address_is_one_error(tmp_path: Path, given: str, needle: str) -> None:
    path = tournament(tmp_path)
    result = tavolo("tournament", "run", path, "--db", tmp_path / "t.db", "--cluster", given)
    assert_one_error(result, needle)
    assert not (tmp_path / "t.db").exists(), "nothing is touched before the address is read"


def test_an_unreachable_scheduler_is_one_error(tmp_path: Path) -> None:
    path = tournament(tmp_path)
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    done = run_console("tournament", "run", path, "--db", tmp_path / "t.db", "--cluster", address)
    assert done.returncode != 0
    assert done.stderr.splitlines() == [
        f"error: --cluster {address}: Timed out trying to connect to {address} after 10 s"
    ]


def test_the_cli_loads_dask_only_for_a_cluster_run() -> None:
    code = (
        "import sys, tournaments.cli.main, tournaments.cluster; "
        "print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_an_sprt_on_a_cluster_stops_where_a_local_run_stops(tmp_path: Path) -> None:
    two = ENTRIES.split('[[entry]]\nname = "random-b"')[0]
    path = tournament(tmp_path, games=200, deals=1, entries=two)
    local, cluster = tmp_path / "local.db", tmp_path / "cluster.db"
    # One table: its sets in order, each stored and counted before the next, as a cluster
    # plays a match under an SPRT.
    result = tavolo(
        "tournament", "run", path, "--db", local, "--quiet", "--sprt", "0,100",
        "--concurrency", "1", "--shards", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    done = run_console(
        "tournament", "run", path, "--db", cluster, "--quiet", "--sprt", "0,100",
        "--cluster", "local:2",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "H1 accepted" in done.stdout
    played = stored_games(cluster)
    assert len(played) < 200
    assert sorted(played) == sorted(stored_games(local))
    assert table_without_think_times(cluster) == table_without_think_times(local)


def test_bench_tournament_reports_each_clusters_throughput(tmp_path: Path) -> None:
    path = tournament(tmp_path, games=2)
    result = tavolo(
        "bench", "tournament", path, "--json", "--no-in-process", "--shards", "1",
        "--cluster", "local:1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    (cluster,) = figures["clusters"]
    assert cluster["cluster"] == "local:1"
    assert cluster["workers"] == cluster["threads"] == 1
    assert cluster["games"] == figures["games"] == 6
    assert cluster["deals"] == figures["deals"] == 6
    assert cluster["start_seconds"] > 0 and cluster["seconds"] > 0
    rate = 6 / cluster["seconds"]  # the seconds as printed, rounded
    assert abs(cluster["games_per_second"] - rate) <= 0.01 + rate * 0.01
    assert not list(tmp_path.glob("*.db")), "the benchmark keeps no database"


# -- TLS: the scheduler runs pickled code, so an organiser may require certificates --------


def _certificates(folder: Path, ca: str, *names: str) -> None:
    """A CA ``ca`` and, signed by it, a certificate and key per name, for 127.0.0.1."""

    if shutil.which("openssl") is None:
        pytest.fail("openssl is not on PATH: the TLS cluster's certificates need it")

    def openssl(*args: str | Path) -> None:
        subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)

    key = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl("req", "-x509", *key, "-keyout", folder / f"{ca}.key", "-out", folder / f"{ca}.pem",
            "-days", "2", "-subj", f"/CN={ca}")  # fmt: skip
    (folder / "san").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name in names:
        openssl("req", *key, "-keyout", folder / f"{name}.key", "-out", folder / f"{name}.csr",
                "-subj", f"/CN={name}")  # fmt: skip
        openssl("x509", "-req", "-in", folder / f"{name}.csr", "-CA", folder / f"{ca}.pem",
                "-CAkey", folder / f"{ca}.key", "-CAcreateserial", "-out", folder / f"{name}.pem",
                "-days", "2", "-extfile", folder / "san")  # fmt: skip


def _tls_env(ca: Path, cert: Path, key: Path) -> dict[str, str]:
    """The head's Dask TLS settings, as docs/cluster.md gives them."""
    return {
        **os.environ,
        "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(ca),
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(cert),
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(key),
        "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
    }


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A real ``dask scheduler`` and ``dask worker`` that speak only TLS with certificates
    of one CA: (address, the folder of the certificates)."""
    certs = tmp_path_factory.mktemp("certs")
    _certificates(certs, "ca", "scheduler", "worker", "head")
    _certificates(certs, "rogue-ca", "rogue")
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    dask = str(Path(sys.executable).parent / "dask")

    def tls(name: str) -> list[str]:
        return ["--tls-ca-file", str(certs / "ca.pem"), "--tls-cert", str(certs / f"{name}.pem"),
                "--tls-key", str(certs / f"{name}.key")]  # fmt: skip

    scheduler = _start(
        [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--protocol", "tls",
         "--no-dashboard", *tls("scheduler")]
    )  # fmt: skip
    worker = _start(
        [dask, "worker", address, "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1",
         "--no-dashboard", *tls("worker")]
    )  # fmt: skip
    try:
        from distributed import Security

        security = Security(
            tls_ca_file=str(certs / "ca.pem"), tls_client_cert=str(certs / "head.pem"),
            tls_client_key=str(certs / "head.key"), require_encryption=True,
        )  # fmt: skip
        _wait_for_workers(address, 1, security)
        yield address, certs
    finally:
        for process in (worker, scheduler):
            process.terminate()
            process.wait(30)


def test_a_tls_cluster_with_certificates_gives_the_local_table(
    tls_cluster: tuple[str, Path], local_run: tuple[Path, Path], tmp_path: Path
) -> None:
    address, certs = tls_cluster
    path, local = local_run
    db = tmp_path / "tls.db"
    env = _tls_env(certs / "ca.pem", certs / "head.pem", certs / "head.key")
    done = run_console("tournament", "run", path, "--db", db, "--cluster", address, "--quiet",
                       env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "12 games played now, 12 of 12 stored" in done.stdout
    assert_same_results(db, local)


def test_a_head_whose_certificate_the_cluster_does_not_trust_is_refused_in_one_line(
    tls_cluster: tuple[str, Path], tmp_path: Path
) -> None:
    address, certs = tls_cluster
    path = tournament(tmp_path)
    db = tmp_path / "t.db"
    env = _tls_env(certs / "ca.pem", certs / "rogue.pem", certs / "rogue.key")
    done = run_console("tournament", "run", path, "--db", db, "--cluster", address, env=env)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"error: --cluster {address}: the TLS handshake failed: "), line
    # The scheduler's alert, or its hang-up when it closes before the alert is read.
    assert "unknown ca" in line or "SSLEOFError" in line, line
    assert stored_games(db) == []


@pytest.mark.parametrize(
    ("cluster", "settings", "needle"),
    [
        ("tls://127.0.0.1:1", {}, "a tls:// scheduler needs Dask's TLS settings for this head"),
        ("tls://127.0.0.1:1", {"TLS__CA_FILE": "/no/such/ca.pem"},
         "distributed.comm.tls.ca-file names /no/such/ca.pem, which is not a file"),
        ("tls://127.0.0.1:1", dict.fromkeys(("TLS__CA_FILE", "TLS__CLIENT__CERT",
                                              "TLS__CLIENT__KEY"), "{folder}/bad.pem"),
         "Dask's TLS settings: "),
        ("tcp://127.0.0.1:1", {"REQUIRE_ENCRYPTION": "True"},
         "requires encryption (distributed.comm.require-encryption): give the scheduler's tls://"),
    ],
)  # fmt: skip
def test_dask_tls_settings_that_cannot_work_are_one_error_before_any_connection(
    tmp_path: Path, cluster: str, settings: dict[str, str], needle: str
) -> None:
    (tmp_path / "bad.pem").write_text("not a certificate\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_DISTRIBUTED__COMM__")}
    for key, value in settings.items():
        env[f"DASK_DISTRIBUTED__COMM__{key}"] = value.format(folder=tmp_path)
    path = tournament(tmp_path)
    done = run_console("tournament", "run", path, "--db", tmp_path / "t.db", "--cluster",
                       cluster, timeout=60, env=env)  # fmt: skip
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"error: --cluster {cluster}: ") and needle in line, line


# -- remote entries: their matches play at the head, the others on the workers ------------


def _with_a_remote_entrant(folder: Path, *extra: str) -> Path:
    """``alice``, remote, plays her two matches with an entrant key; the third match (two
    built-in bots) needs no key. The run's database."""
    folder.mkdir()
    db = folder / "keys.db"
    runner = keys.Runner(keys.tournament(folder), db, *extra)
    key, address = keys.keys_of(runner)
    code, err = keys.ended(keys.bot(address, key))
    assert runner.finish() == 0, runner.text()
    assert code == 0, err
    assert "6 games played now, 6 of 6 stored" in runner.text()
    return db


def test_a_cluster_run_with_a_remote_entrant_gives_the_local_table(tmp_path: Path) -> None:
    local = _with_a_remote_entrant(tmp_path / "local", "--shards", "1")
    cluster = _with_a_remote_entrant(tmp_path / "cluster", "--cluster", "local:1")
    assert len(stored_games(cluster)) == 6
    assert game_records(cluster) == game_records(local)
    assert table_without_think_times(cluster) == table_without_think_times(local)
    # Where each match played, from its bots' logs: a worker keeps them in a folder per set
    # (set-1: the match's one set), the head's tables by slot. Match 1 (heuristic-0 against
    # random-1) was a task; matches 2 and 3 have alice, whose key streams reach the head.
    logs = tmp_path / "cluster" / "keys.logs"
    assert [p.name for p in (logs / "match-1").iterdir()] == ["set-1"]
    for match in (2, 3):
        names = {p.name for p in (logs / f"match-{match}").iterdir()}
        assert names and not any(name.startswith("set-") for name in names), names


def test_a_tls_failure_is_known_by_its_error_or_by_the_text_dask_passes_on() -> None:
    from tournaments.cluster import _tls_failure

    # As CI saw it: Dask passed on only the TLS error's text, chained to nothing.
    said = (
        "in <TLS (closed)  local=tls://127.0.0.1:36748 remote=tls://127.0.0.1:37637>: "
        "SSLError: [SSL: TLSV1_ALERT_UNKNOWN_CA] tlsv1 alert unknown ca (_ssl.c:2580)"
    )
    assert _tls_failure(OSError(said))
    try:
        try:
            raise ssl.SSLEOFError(8, "EOF occurred in violation of protocol")
        except ssl.SSLError as tls:
            raise OSError("in <TLS (closed)>: Stream is closed") from tls
    except OSError as wrapped:
        assert _tls_failure(wrapped)
    assert not _tls_failure(OSError("Timed out trying to connect to tcp://127.0.0.1:1"))
    assert not _tls_failure(TimeoutError("the scheduler did not answer"))


def test_a_local_cluster_lets_no_other_client_in(tmp_path: Path) -> None:
    """Whoever reaches a scheduler runs code on its workers, as the referee's user. Before,
    ``local:N`` listened on loopback without authentication, and any user of the machine
    ran ``id`` through it; now it speaks mutual TLS with a CA made for the run alone."""
    import distributed

    config = load_config(tournament(tmp_path))
    modes = confinements(config)

    async def stranger(address: str, security: Any) -> str:
        try:
            client = await distributed.Client(
                address, asynchronous=True, timeout="3s", security=security
            )
        except (OSError, TimeoutError) as exc:
            return type(exc).__name__
        try:
            return str(await client.run(os.getuid))  # what the attack did
        finally:
            await client.close()

    async def main() -> tuple[str, str, str, str]:
        async with ClusterTables("local:1", config, modes) as tables:
            address = tables.client.scheduler.address
            plain = await stranger(address.replace("tls://", "tcp://", 1), None)
            own_ca = await stranger(address, distributed.Security.temporary())
            return address, plain, own_ca, str(await tables.client.run(os.getuid))

    address, plain, own_ca, ours = asyncio.run(main())
    assert address.startswith("tls://127.0.0.1:"), address
    # Each stranger got an error (CommClosedError, an OSError, or a timeout), not a uid.
    assert not plain.startswith("{") and not own_ca.startswith("{"), (plain, own_ca)
    assert ours.startswith("{")  # the run's own client runs code there: {worker: uid}
