"""The attacks a hostile entrant would make, each failing: real bot processes in the real sandbox.

Every attack is made for real by ``tests/bots/hostile.py`` in its bubblewrap sandbox, on
a real referee. The bot reports what it tried on stderr (the log the referee keeps outside
the sandbox), and each test also checks from outside that nothing happened: the other
bots played on, no file appeared, no process outlived the match. Each game is still
played out to its end.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.engine.registry import preset
from referee.entries import Entry, load_manifest, parse_entry
from referee.match.config import Limits, MatchConfig
from referee.match.match import Match
from referee.match.results import MatchResult
from referee.sandbox.bwrap import SandboxMode
from referee.sandbox.cgroups import CGROUP_ROOT, CONTROLLERS, GROUP
from referee.service.server import start_referee
from tests.bots.harness import run
from tests.sandboxing import as_a_normal_user, require_sandbox
from tests.test_cli import tavolo
from tournaments.storage import Store

HOSTILE = Path(__file__).resolve().parent / "bots" / "hostile.py"
THINKER = HOSTILE.with_name("thinker.py")
NORMAL_ENDS = {"deals_played", "target_reached"}
LIMITS = Limits(deadline_ms=5000, connect_timeout=20, grace=1, restart_crashed=False)
# Filling and reclaiming a gigabyte under a cap takes seconds on a loaded machine; the
# hog's own wait is 60 s, and the clock must not end the bot first.
SLOW_LIMITS = dataclasses.replace(LIMITS, deadline_ms=90_000)


@pytest.fixture(autouse=True)
def _sandbox_needed() -> None:
    require_sandbox()


def hostile(folder: Path, attack: str, *args: str, limits: str = "") -> Entry:
    """A manifest in a folder of its own (the sandbox binds that folder) for ``attack``."""
    command = [sys.executable, str(HOSTILE), "--attack", attack, *args]
    return _manifest(folder / f"{attack}.toml", f"hostile-{attack}", command, limits)


def _manifest(path: Path, name: str, command: list[str], limits: str = "") -> Entry:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"name = {json.dumps(name)}\ncommand = {json.dumps(command)}\n"
        + (f"[limits]\n{limits}\n" if limits else ""),
        encoding="utf-8",
    )
    return load_manifest(path, allow=(HOSTILE.parent,))


def _lines(work: Path, tag: str) -> list[dict[str, Any]]:
    """Every ``TAG {json}`` line of the bots' stderr logs under ``work``."""
    return [
        json.loads(line.split(" ", 1)[1])
        for log in sorted(work.rglob("stderr.log"))
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
        if line.startswith(f"{tag} ")
    ]


class Played:
    """A match's result, record and every ATTACK line, per bot process."""

    def __init__(self, result: MatchResult, record: Path, work: Path) -> None:
        self.result = result
        self.record = record
        self.work = work
        self.lines = [json.loads(x) for x in record.read_text(encoding="utf-8").splitlines()]
        self.reports: dict[str, list[dict[str, Any]]] = {}
        for log in sorted(work.rglob("stderr.log")):
            if found := _lines(log.parent, "ATTACK"):
                self.reports[log.parent.name] = found

    def all_reports(self) -> list[dict[str, Any]]:
        return [r for rs in self.reports.values() for r in rs]

    def assert_played_out(self) -> None:
        """Every game ended normally: nobody crashed, timed out or was forfeited."""
        ends = [o.termination.value for o in self.result.outcomes]
        assert ends and set(ends) <= NORMAL_ENDS, (ends, self.result.incidents)
        assert all(s.crashes == s.timeouts == 0 for s in self.result.stats), self.result.stats
        assert self.result.sandboxes[0] == "bwrap"


async def _play(
    entries: tuple[Entry, ...],
    tmp_path: Path,
    *,
    sets: int = 1,
    deals: int = 1,
    during: Any = None,
    limits: Limits = LIMITS,
) -> Played:
    referee = await start_referee("127.0.0.1:0")
    records = tmp_path / "records"
    records.mkdir(mode=0o700, exist_ok=True)
    record = records / "match.jsonl"
    try:
        with record.open("w", encoding="utf-8") as stream:
            config = MatchConfig(
                preset("tressette"), "sandbox", entries, deals, sets, limits,
                sandbox=SandboxMode.BWRAP,
            )  # fmt: skip
            match = Match(referee, config, record=stream, workdir=tmp_path / "work")
            task = asyncio.ensure_future(match.run())
            if during is not None:
                await during(task)
            result = await task
    finally:
        await referee.stop(0.5)
    return Played(result, record, tmp_path / "work")


def play(entries: tuple[Entry, ...], tmp_path: Path, **kw: Any) -> Played:
    return run(_play(entries, tmp_path, **kw), timeout=240)


def test_killing_the_opponents_wins_nothing(tmp_path: Path) -> None:
    """SIGKILL to every process it can see or guess: it sees only itself."""
    played = play((hostile(tmp_path / "bot", "kill"), parse_entry("random")), tmp_path)
    played.assert_played_out()
    reports = played.all_reports()
    assert len(reports) == 4  # two processes (one per arrangement) of each seat, a game each
    for r in reports:
        assert r["killed"] == [] and r["reachable"] == [], r
    # The attacker lost on the cards, not on forfeits: the random bot played every game.
    assert played.result.stats[1].games == 2


def test_no_bot_reads_another_environment(tmp_path: Path, monkeypatch: Any) -> None:
    """No other process's environment, no other ticket, none of the referee's variables."""
    monkeypatch.setenv("TAVOLO_ADMIN_TOKEN", "the-organiser-secret")
    monkeypatch.setenv("SECRET_OF_THE_REFEREE", "x")
    played = play((hostile(tmp_path / "bot", "environ"), parse_entry("random")), tmp_path)
    played.assert_played_out()
    for r in played.all_reports():
        assert r["foreign_tickets"] == [], r
        assert r["pids"] == [1, 2], r  # bwrap's init and the bot itself
    for log in played.work.rglob("std*.log"):
        assert "the-organiser-secret" not in log.read_text(errors="replace")


def test_a_bot_has_no_network(tmp_path: Path) -> None:
    """The referee's TCP port and a partner's listening port are both out of reach."""

    async def scenario() -> Played:
        referee = await start_referee("127.0.0.1:0")
        try:
            # A real TCP listener on the host: the referee of another match.
            entry = hostile(tmp_path / "bot", "tcp", "--target", referee.address)
            return await _play((entry, parse_entry("random")), tmp_path)
        finally:
            await referee.stop(0)

    played = run(scenario(), timeout=240)
    played.assert_played_out()
    reports = played.all_reports()
    assert reports
    for r in reports:
        assert set(r["results"].values()) == {"ECONNREFUSED"}, r
    # Each side's first seat could listen in its own network namespace; nobody reached it.
    assert any(r["listening"] is True for r in reports)
    assert any("partner" in r["results"] for r in reports)


def test_partners_share_no_file_and_the_host_gets_none(tmp_path: Path) -> None:
    drops = [f"/tmp/tavolo-drop-{secrets.token_hex(4)}", str(tmp_path / "host-drop")]
    entry = hostile(tmp_path / "bot", "files", *(a for d in drops for a in ("--target", d)))
    played = play((entry, parse_entry("random")), tmp_path)
    played.assert_played_out()
    reports = played.all_reports()
    assert len(reports) == 4
    for r in reports:
        assert r["partner_found"] == {}, r
        # What it wrote went into its own /tmp (the host paths under /tmp included)...
        assert "/tmp/tavolo-collude" in r["written"]
    # ...and none of it reached the host.
    for drop in [*drops, "/tmp/tavolo-collude"]:
        assert not Path(drop).exists(), drop
    assert sorted(p.name for p in (played.work / "0-0").iterdir()) == ["stderr.log", "stdout.log"]


def test_partners_cannot_meet_on_an_abstract_socket(tmp_path: Path) -> None:
    played = play((hostile(tmp_path / "bot", "abstract"), parse_entry("random")), tmp_path)
    played.assert_played_out()
    reports = played.all_reports()
    assert len(reports) == 4
    for r in reports:
        # Both partners bind the same name: each in a namespace of its own...
        assert r["bind_shared"] == "bound", r
        # ...and neither reaches the other's.
        assert r["partner"] == "ECONNREFUSED", r


def test_ptrace_reaches_nobody(tmp_path: Path) -> None:
    played = play((hostile(tmp_path / "bot", "ptrace"), parse_entry("random")), tmp_path)
    played.assert_played_out()
    for r in played.all_reports():
        assert r["attached"] == [] and r["guessed"] == [], r


def test_the_records_are_out_of_reach(tmp_path: Path) -> None:
    records = tmp_path / "records"
    entry = hostile(
        tmp_path / "bot",
        "records",
        "--target",
        str(records),
        "--target",
        str(records / "match.jsonl"),
    )
    played = play((entry, parse_entry("random")), tmp_path)
    played.assert_played_out()
    for r in played.all_reports():
        assert set(r["results"].values()) == {"ENOENT"}, r
        assert not any(r["exists"].values()), r
    # On the host, the record exists and is the referee user's alone.
    assert played.record.exists()


def test_a_fork_bomb_is_capped_and_the_other_table_finishes(tmp_path: Path) -> None:
    """10,000 forks stop at the process cap; the tournament's other tables play normally."""
    bomber = hostile(tmp_path / "bot", "fork-bomb", limits="processes = 24")
    manifest = tmp_path / "bot" / "fork-bomb.toml"
    assert bomber.processes == 24
    path = tmp_path / "t.toml"
    path.write_text(
        'name = "bomb"\nseed = "bomb-1"\nconcurrency = 2\n'
        f'allow_paths = ["{HOSTILE.parent}"]  # the organiser lets the manifest name it\n'
        '[game]\npreset = "tressette"\ndeals = 2\n[match]\ngames = 2\ndeadline_ms = 5000\n'
        f'[[entry]]\nname = "bomber"\nbot = "{manifest}"\n'
        '[[entry]]\nname = "random-a"\nbot = "random"\n'
        '[[entry]]\nname = "random-b"\nbot = "random"\n',
        encoding="utf-8",
    )
    db = tmp_path / "t.db"
    work = tmp_path / "work"
    result = tavolo("tournament", "run", path, "--db", db, "--workdir", work, "--quiet")
    assert result.exit_code == 0, result.output
    reports = _lines(work, "ATTACK")
    assert reports
    for r in reports:
        # The cap counts the bot's own process and threads, and bwrap's init.
        assert 5 <= r["forked"] < 24, r
        assert r["error"] == "Resource temporarily unavailable", r
    with Store.open_for_reading(db) as store:
        games = store.games()
        assert len(games) == 6
        others = [g for g in games if "bomber" not in g.sides]
        assert len(others) == 2
        assert all(g.termination == "deals_played" and not g.faults for g in others)
        assert all(g.termination == "deals_played" for g in games)


root_only = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="a sandbox's CPU share and memory cap are cgroups, which only a root referee "
    "makes (docs/security.md, 'What stays outside')",
)


@root_only
def test_busy_loops_slow_only_their_own_sandbox(tmp_path: Path) -> None:
    """Forty busy loops per hostile process: the opponents still think at full speed.

    Each loop tries to lead a session of its own, which every sandbox refuses; were it
    allowed, the kernel's autogroup (one group per session) would not hold them together,
    and the sandbox's cpu cgroup does all the same. Without the cgroup, the
    thinker's thread got 0.01 to 0.06 of a core, median 0.02; with it, one share of 3 to 5
    busy sandboxes on 2 cores, median 0.38 (2026-12-02, this machine).
    """
    before = _sandbox_cgroups()
    assert before is not None, "no cgroup hierarchy for the sandboxes here"
    setsid, shares = _hogs_against_a_thinker(tmp_path)
    assert setsid == {"EPERM"}
    assert shares[len(shares) // 2] > 0.2, shares
    # The loops ended with their sandboxes, and so did the sandboxes' cgroups.
    assert _sandbox_cgroups() == before


def _autogroup() -> bool:
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return False


@pytest.mark.skipif(not _autogroup(), reason="the kernel's autogroup is off here")
def test_a_normal_users_sandbox_cannot_leave_its_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A referee that is not root makes no cgroups; its sandboxes refuse setsid instead, so
    the kernel's autogroup schedules each, one session, as one group, and the same forty
    loops per process still leave the thinker its share. (Without the filter the loops'
    sessions took all but 0.02 of a core, as without the cgroup above.)"""
    before = _sandbox_cgroups()
    with as_a_normal_user(monkeypatch):
        setsid, shares = _hogs_against_a_thinker(tmp_path)
    assert setsid == {"EPERM"}
    assert shares[len(shares) // 2] > 0.2, shares
    assert _sandbox_cgroups() == before  # none made


def _hogs_against_a_thinker(tmp_path: Path) -> tuple[set[str], list[float]]:
    """A match of a hostile entry running forty busy loops per process (each trying a
    session of its own) against a thinking bot: what setsid said, and the thinker's shares
    of a core, one per decision, sorted. No loop outlives the match."""
    marker = f"tavolo-spin-{secrets.token_hex(4)}"
    hog = hostile(tmp_path / "bot", "cpu-hog", "--count", "40", "--marker", marker)
    thinker = _manifest(
        tmp_path / "thinker" / "thinker.toml", "thinker", [sys.executable, str(THINKER)]
    )
    # With ponder on, the hogs run while the thinker thinks: the layer under test is the
    # CPU share (cgroup, or autogroup), not freezing, which would stop them anyway.
    pondering = dataclasses.replace(LIMITS, ponder=True)
    played = play((hog, thinker), tmp_path, limits=pondering)
    played.assert_played_out()
    reports = played.all_reports()
    assert {r["loops"] for r in reports if r["attack"] == "cpu-hog"} == {40}
    shares = sorted(t["share"] for t in _lines(played.work, "THINK"))
    assert len(shares) >= 40  # 2 games, 20 cards each (and declarations), 150 ms a decision
    assert _spinning(marker) == []
    return {r["result"] for r in reports if r["attack"] == "setsid"}, shares


def _sandbox_cgroups() -> set[Path] | None:
    """The cgroup folders of this process's sandboxes now (named after its pid: another
    referee on the machine makes and removes its own meanwhile), in v1 hierarchies or v2;
    None if neither is here."""
    parents = [CGROUP_ROOT / c / GROUP for c in CONTROLLERS if (CGROUP_ROOT / c).is_dir()]
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        parents.append(CGROUP_ROOT / GROUP)
    if not parents:
        return None
    return {p for parent in parents for p in parent.glob(f"{os.getpid()}-*") if p.is_dir()}


def _spinning(marker: str) -> list[str]:
    """This test's busy loops still alive: pid, state and cgroups of each (the command
    line carries ``marker``, so no other program on the machine is counted)."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                status = Path(f"/proc/{pid}/status").read_text().splitlines()
                cgroups = Path(f"/proc/{pid}/cgroup").read_text().split()
                found.append(f"{pid} {[s for s in status if s.startswith('State')]} {cgroups}")
        except OSError:
            continue
    return found


@root_only
def test_a_sandbox_cannot_take_more_memory_than_its_cap(tmp_path: Path) -> None:
    """Six processes of 300 MB each, under a cap of 1,040 MB (memory_mb 1024 + disk_mb 16):
    the kernel kills those past it, inside the sandbox, and the match plays on."""
    limits = "memory_mb = 1024\ndisk_mb = 16"
    entry = hostile(tmp_path / "bot", "memory-hog", "--count", "6", limits=limits)
    played = play((entry, parse_entry("random")), tmp_path, limits=SLOW_LIMITS)
    played.assert_played_out()
    reports = played.all_reports()
    assert len(reports) == 4
    for r in reports:
        # Each per-process rlimit (1,024 MB of address space) lets every child fill 300 MB.
        assert r["alive"] + r["killed"] == 6 and r["other"] == [], r
        # At most three fit. Six filling at once can all be killed before the first kill's
        # memory is given back, so none alive is a result the cap can give too.
        assert r["alive"] <= 3 and r["killed"] >= 3 and r["filled"] >= r["alive"], r


@root_only
def test_a_bot_killed_for_its_memory_is_told_so(tmp_path: Path) -> None:
    limits = "memory_mb = 1024\ndisk_mb = 16"
    entry = hostile(tmp_path / "bot", "memory-hog", "--count", "6", "--then-exit", limits=limits)
    played = play((entry, parse_entry("random")), tmp_path, limits=SLOW_LIMITS)
    forfeits = [line for line in played.lines if line["type"] == "forfeit"]
    assert len(forfeits) == 2 and {f["reason"] for f in forfeits} == {"crash"}, forfeits
    for forfeit in forfeits:
        # The process exited on its own, after the kernel killed its children for the cap.
        said = "exit status 3; its sandbox reached its memory cap (1040 MB: memory_mb + disk_mb)"
        assert said in forfeit["detail"], forfeit


def _comms(marker: str) -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and Path(f"/proc/{pid}/comm").read_text().strip() == marker:
                out.append(int(pid))
        except OSError:
            continue
    return out


def test_a_double_forked_grandchild_does_not_outlive_the_match(tmp_path: Path) -> None:
    marker = f"orphan-{secrets.token_hex(3)}"
    seen: list[int] = []

    async def watch(task: asyncio.Future[MatchResult]) -> None:
        while not task.done():
            seen.extend(_comms(marker))
            await asyncio.sleep(0.05)

    entry = hostile(tmp_path / "bot", "double-fork", "--marker", marker)
    played = run(_play((entry, parse_entry("random")), tmp_path, during=watch), timeout=240)
    played.assert_played_out()
    assert played.all_reports()
    assert seen, "the grandchild never ran: the test would prove nothing"
    assert _comms(marker) == []


def test_the_disk_cap_counts_the_whole_folder(tmp_path: Path) -> None:
    entry = hostile(tmp_path / "bot", "disk", limits="disk_mb = 8")
    played = play((entry, parse_entry("random")), tmp_path)
    played.assert_played_out()
    reports = played.all_reports()
    assert reports
    for r in reports:
        # Many 1 MB files in the work folder, /tmp and /dev/shm: 8 MB in all.
        assert 5 <= r["megabytes"] <= 8, r
        assert r["error"] == "ENOSPC", r
    for folder in (played.work / "0-0", played.work / "0-1"):
        assert sorted(p.name for p in folder.iterdir()) == ["stderr.log", "stdout.log"]


def test_a_duplicate_set_cannot_be_remembered(tmp_path: Path) -> None:
    """A bot writes each hand to its folder: every process plays one game, and finds none."""
    played = play((hostile(tmp_path / "bot", "remember"), parse_entry("random")), tmp_path, sets=2)
    played.assert_played_out()
    seeds = {line["seed"] for line in played.lines if line["type"] == "game"}
    assert len(seeds) == 2
    games = sorted(r["game"] for reports in played.reports.values() for r in reports)
    # Two processes (the entry's two seats) for each of the four games.
    assert games == [1, 1, 2, 2, 3, 3, 4, 4], played.reports
    for process, reports in played.reports.items():
        assert len(reports) == 1 and reports[0]["found"] == [], (process, reports)


def test_no_process_outlives_its_game_into_another_of_the_same_deals(tmp_path: Path) -> None:
    """Each process says it still runs every 20 ms: none of a set's first game is heard
    once the second game (the same deals, the sides swapped) deals its first hand."""
    played = play((hostile(tmp_path / "bot", "linger"), parse_entry("random")), tmp_path, sets=2)
    played.assert_played_out()
    reports = played.all_reports()
    beats: dict[int, list[float]] = {}
    for r in reports:
        if r["attack"] == "heartbeat":
            beats.setdefault(r["game"], []).append(r["t"])
    dealt = {}
    for r in reports:
        if r["attack"] == "dealt":
            dealt[r["game"]] = min(dealt.get(r["game"], r["t"]), r["t"])
    assert sorted(beats) == sorted(dealt) == [1, 2, 3, 4], (sorted(beats), dealt)
    for first, second in ((1, 2), (3, 4)):
        assert max(beats[first]) < dealt[second], (first, max(beats[first]), dealt[second])
    # A process that outlived its game would be heard here: the last game's are, until
    # the match ends and kills them too.
    assert max(beats[4]) > dealt[4]


def test_records_and_their_folders_are_private(tmp_path: Path) -> None:
    record = tmp_path / "out" / "match.jsonl"
    record.parent.mkdir()
    record.write_text("old", encoding="utf-8")
    record.chmod(0o644)
    result = tavolo(
        "play", "random", "random", "--seed", "s", "--deals", "1", "--record", record, "--quiet"
    )
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
