"""The arena's ladder: who meets whom (worked by hand), results of every table shape, one
fit that ignores the order of the games, and meetings played for real in the sandbox,
kept whole, resumed after a stop, with an entrant's older submission retired but rated."""

from __future__ import annotations

import asyncio
import random
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.engine.game_base import Outcome, Termination
from referee.match.results import GameReport
from referee.sandbox.probe import sandbox_problem
from tournaments.arena.api import leaderboard
from tournaments.arena.archives import ArchiveLimits, pack
from tournaments.arena.config import load_arena
from tournaments.arena.ladder import (
    LEADERS,
    LEADERS_EVERY,
    NEW_GAMES,
    REFIT_SECONDS,
    Meeting,
    choose_pair,
    current_elo,
    expected,
    games_and_meetings,
    pair_results,
)
from tournaments.arena.ladder_play import LadderRunner
from tournaments.arena.store import LADDER_LOGS, ArenaStore, Entrant, State
from tournaments.benchmarks.arena_ladder import bench_order, run_scheme
from tournaments.ratings import PairResult, fit_elo

# -- choosing a meeting, worked by hand -----------------------------------------------------


def test_a_new_submission_meets_first_whom_it_learns_most_from() -> None:
    games = Counter({1: 10, 2: 10, 3: 0})
    # 3 is new. Against 1 (1600): p = 1/(1+10^(-100/400)) = 0.6401, p(1-p) = 0.2304;
    # against 2 (1500): p(1-p) = 0.25. Both pairs have spread 1/sqrt(11) + 1/sqrt(1).
    assert round(expected(1600, 1500), 4) == 0.6401
    assert choose_pair([1, 2, 3], games, Counter(), {1: 1600.0, 2: 1500.0}, 1) == (2, 3)
    # Of two new ones, the one with fewer games goes first, against the likeliest even.
    games = Counter({1: 10, 2: 3, 3: 5})
    assert choose_pair([1, 2, 3], games, Counter(), {1: 1500.0, 3: 1900.0}, 1) == (1, 2)


def test_settled_submissions_meet_where_the_ratings_are_least_certain() -> None:
    games = Counter({1: 100, 2: 100, 3: 9, 4: 100})
    elo = {1: 1700.0, 2: 1690.0, 3: 1500.0, 4: 1495.0}
    # (1,2): p(1-p) = 0.2499, spread 2/sqrt(101) = 0.1990 -> 0.0497;
    # (3,4): p(1-p) = 0.2500, spread 1/sqrt(10) + 1/sqrt(101) = 0.4157 -> 0.1039.
    assert choose_pair([1, 2, 3, 4], games, Counter(), elo, 1) == (3, 4)


def test_every_fifth_meeting_the_leaders_meet() -> None:
    games = Counter({s: 100 for s in range(1, 7)})
    elo = {1: 1900.0, 2: 1850.0, 3: 1800.0, 4: 1750.0, 5: 1500.0, 6: 1499.0}
    met = Counter({(1, 2): 3, (2, 3): 1, (3, 4): 2})
    assert choose_pair(list(elo), games, met, elo, LEADERS_EVERY) == (2, 3)
    # Otherwise the most informative pair, here the two close ones at the bottom.
    assert choose_pair(list(elo), games, met, elo, LEADERS_EVERY + 1) == (5, 6)


def test_twelve_submissions_all_play_the_leaders_meet_and_a_late_one_is_rated_at_once() -> None:
    """The complaints of issue 29 at a field users run: nobody starves, the leaders keep
    meeting, and a submission that arrives late gets its first games straight away."""
    rng = random.Random(12)
    strength = {s: 1500.0 + 60 * (12 - s) for s in range(1, 13)}  # 1 the strongest
    results: list[PairResult] = []
    active = list(range(1, 12))  # 12 arrives after 200 meetings

    def meet(number: int) -> tuple[int, int]:
        games, met = games_and_meetings(results)
        pair = choose_pair(active, games, met, current_elo(results), number)
        assert pair is not None
        a, b = pair
        p = expected(strength[a], strength[b])
        results.extend(
            PairResult(f"{number}:{k}", str(a), str(b), float(rng.random() < p)) for k in (1, 2)
        )
        return pair

    pairs = [meet(n) for n in range(1, 201)]
    games, _ = games_and_meetings(results)
    assert min(games[s] for s in active) >= 16, games  # every one of the 11 plays
    ranked = sorted(active, key=lambda s: -current_elo(results)[s])
    top = [p for p in pairs[100:] if p[0] in ranked[:LEADERS] and p[1] in ranked[:LEADERS]]
    assert len(top) >= 100 // LEADERS_EVERY, "the leaders keep meeting"
    active.append(12)
    late = [meet(n) for n in range(201, 201 + NEW_GAMES // 2)]
    # Each of its first meetings is the late one's, until it has its first games.
    assert all(12 in pair for pair in late)
    assert games_and_meetings(results)[0][12] == NEW_GAMES


def test_no_meeting_without_two_submissions() -> None:
    assert choose_pair([4], Counter(), Counter(), {}, 1) is None


# -- results ------------------------------------------------------------------------------


def report(sides: tuple[int, ...], places: tuple[int, ...], number: int = 1) -> GameReport:
    outcome = Outcome(Termination.TARGET_REACHED, (0,) * len(sides), 1, places)
    return GameReport(number, 1, sides, outcome, None, (), ())


def test_results_of_two_sides_and_of_three() -> None:
    meeting = Meeting(7, 11, 12, "s")
    assert pair_results(meeting, report((0, 1), (1, 0))) == [PairResult("7:1", "11", "12", 0.0)]
    assert pair_results(meeting, report((1, 0), (1, 0))) == [PairResult("7:1", "11", "12", 1.0)]
    # Calabresella: 11 alone against two seats of 12; 12 against itself makes no pair.
    # Places (0, 1, 1): 11 (side 1) is behind side 0 and level with side 2.
    three = pair_results(meeting, report((1, 0, 1), (0, 1, 1)))
    assert three == [PairResult("7:1", "11", "12", 0.0), PairResult("7:1", "11", "12", 0.5)]
    assert [r.score_a for r in pair_results(meeting, report((1, 0, 1), (1, 0, 2)))] == [1.0, 1.0]
    assert pair_results(meeting, report((0, 1), (0, 0)))[0].score_a == 0.5


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6))
def test_the_fit_does_not_depend_on_the_order_of_the_games(seed: int) -> None:
    rng = random.Random(seed)
    results = [
        PairResult(f"{m}:1", str(a), str(b), rng.choice((0.0, 0.5, 1.0)))
        for m, (a, b) in enumerate([(1, 2), (2, 3), (3, 4), (1, 4), (1, 3), (2, 4)] * 3)
    ]
    shuffled = results[:]
    rng.shuffle(shuffled)
    one, other = fit_elo(results), fit_elo(shuffled)
    assert all(abs(one[k] - other[k]) < 1e-6 for k in one)
    games, met = games_and_meetings(shuffled)
    assert games == Counter({1: 9, 2: 9, 3: 9, 4: 9}) and met[(1, 2)] == 3


# -- meetings for real -----------------------------------------------------------------------

pytestmark_sandbox = pytest.mark.skipif(
    sandbox_problem() is not None, reason=str(sandbox_problem())
)

ARENA = """\
name = "ladder"
[game]
preset = "tressette"
deals = 1
[match]
deadline_ms = 2000
[submissions]
active = 1
"""


def ready(store: ArenaStore, entrant: Entrant, folder: Path, module: str) -> int:
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "bot"\ncommand = ["{sys.executable}", "-m", "tavolo_bot.bots.{module}"]\n'
    )
    submission, _ = store.submit(entrant, pack(folder), limits=ArchiveLimits(), per_day=9)
    # Validation is tests/test_arena_builds.py's: here it is taken as passed.
    store.set_state(submission.id, State.READY)
    return submission.id


@pytestmark_sandbox
def test_meetings_are_played_kept_resumed_and_rated(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(ARENA, encoding="utf-8")
    config = load_arena(tmp_path / "arena.toml")
    store = ArenaStore(tmp_path / "arena.db")
    alice, _ = store.invite("alice")
    bob, _ = store.invite("bob")
    carol, _ = store.invite("carol")
    first = ready(store, alice, tmp_path / "a1", "random")
    b = ready(store, bob, tmp_path / "b", "heuristic")
    c = ready(store, carol, tmp_path / "c", "random")
    runner = LadderRunner(store, config)

    assert store.ladder.fitted()[1] is None  # no game yet: nothing to rate
    played = [asyncio.run(runner.play_next()) for _ in range(3)]
    assert all(m is not None for m in played)
    # The first games are fitted at once, whatever the time since the empty fit.
    assert store.ladder.fitted()[1] is not None
    results = store.ladder.results()
    # A duplicate set of four-seat Tressette is two games, one result each.
    assert len(results) == 6 and store.ladder.meetings_done() == 3
    games, _ = games_and_meetings(results)
    assert set(games) == {first, b, c}
    # Each submission's rating over time: the point fit after each meeting it was in.
    elo_now = fit_elo(results)
    for number in (first, b, c):
        history = store.ladder.rating_history(number)
        assert [m for m, _ in history] == sorted(m for m, _ in history)
        assert history[-1] == (3, pytest.approx(elo_now[str(number)]))
    # The bots' stderr of each meeting is kept for its entrant, by meeting.
    assert any(name.startswith("ladder-") for name in store.logs_of(b))

    # Alice submits again: with one active submission each, her first one retires.
    second = ready(store, alice, tmp_path / "a2", "heuristic")
    asyncio.run(runner.play_next())
    assert store.submission(first).state is State.RETIRED
    board = leaderboard(store)
    rated = {row["submission"]: row for row in board["submissions"]}
    assert set(rated) == {first, b, c, second}  # the retired one stays rated
    assert rated[first]["state"] == "retired" and rated[first]["games"] == games[first]
    assert all(r["low"] <= r["elo"] <= r["high"] for r in rated.values())
    assert [e["entrant"] for e in board["entrants"]] == sorted(
        {"alice", "bob", "carol"},
        key=lambda n: next(r["rank"] for r in board["submissions"]
                           if r["entrant"] == n and r["state"] == "ready"),
    )  # fmt: skip

    # The bootstrap is not run again until a meeting is kept: the same fit is shared.
    fit = store.ladder.fitted()[1]
    assert fit is not None and store.ladder.fitted()[1] is fit

    # A meeting cut short by a stop is played again from its seed, and kept once.
    cut = store.ladder.start(b, c, "cut-short", "2026-12-05T00:00:00+00:00")
    before = len(store.ladder.results())
    assert asyncio.run(LadderRunner(store, config).resume()) == 1
    assert store.ladder.unfinished() == [] and len(store.ladder.results()) == before + 2
    assert cut.id in {int(r.set_key.partition(":")[0]) for r in store.ladder.results()}
    # Not fitted again within refit_seconds of the last fit, whatever was kept since...
    assert store.ladder.refit_seconds == REFIT_SECONDS > 0
    assert store.ladder.fitted()[1] is fit
    # ...but at once when a submission has played its first games.
    dave, _ = store.invite("dave")
    d = ready(store, dave, tmp_path / "d", "random")
    asyncio.run(runner.play_next())  # the new one meets first
    newer = store.ladder.fitted()[1]
    assert newer is not None and newer is not fit
    assert {r.name for r in newer.ratings} == {r.name for r in fit.ratings} | {str(d)}
    # And fitted again, with the new games, once that time is past.
    asyncio.run(runner.play_next())
    assert store.ladder.fitted()[1] is newer
    store.ladder.refit_seconds = 0
    again = store.ladder.fitted()[1]
    assert again is not newer and again is not None


def test_the_order_benchmark_finds_a_clear_order_for_both_schemes() -> None:
    # Three submissions 400 Elo apart (10:1 odds between neighbours): both get there.
    found = bench_order(n=3, gap=400.0, meetings=60, checkpoint=5, runs=2)
    assert set(found) == {"ladder", "round-robin"}
    for values in found.values():
        assert len(values) == 2 and all(v is not None and v % 10 == 0 for v in values)
    # A checkpoint beyond the run's end never looks: no figure.
    assert run_scheme("round-robin", 3, 400.0, 4, 5, 0).games_to_order is None


CRASHER = """\
import sys
print("CRASHER-WAS-HERE <b>not markup</b>", file=sys.stderr, flush=True)
sys.exit(3)
"""


@pytestmark_sandbox
def test_faults_and_stderr_of_a_ladder_meeting_are_kept(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(ARENA, "utf-8")
    config = load_arena(tmp_path / "arena.toml")
    store = ArenaStore(tmp_path / "arena.db")
    alice, _ = store.invite("alice")
    bob, _ = store.invite("bob")
    good = ready(store, alice, tmp_path / "a", "random")
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "bot.toml").write_text(f'name = "bot"\ncommand = ["{sys.executable}", "bot.py"]\n')
    (folder / "bot.py").write_text(CRASHER)
    crasher, _ = store.submit(bob, pack(folder), limits=ArchiveLimits(), per_day=9)
    store.set_state(crasher.id, State.READY)
    meeting = asyncio.run(LadderRunner(store, config).play_next())
    assert meeting is not None and store.ladder.meetings_done() == 1
    faults = store.ladder.faults(10)
    assert faults and {f.submission for f in faults} == {crasher.id}
    assert all(f.meeting == meeting.id and f.faults.crashes >= 1 for f in faults)
    logs = store.logs_of(crasher.id)
    assert "CRASHER-WAS-HERE" in logs[f"ladder-{meeting.id:06d}"]
    assert not any("CRASHER" in text for text in store.logs_of(good).values())
    # Only the last LADDER_LOGS meetings' stderr is kept.
    for number in range(2, LADDER_LOGS + 4):
        store.keep_ladder_stderr(crasher.id, number, f"meeting {number}")
    kept = sorted(n for n in store.logs_of(crasher.id) if n.startswith("ladder-"))
    assert len(kept) == LADDER_LOGS and kept[-1] == f"ladder-{LADDER_LOGS + 3:06d}"
    store.close()


@pytestmark_sandbox
def test_meetings_at_once_never_share_a_submission_and_a_cut_run_resumes(tmp_path: Path) -> None:
    (tmp_path / "arena.toml").write_text(ARENA.replace("active = 1", "active = 2"), "utf-8")
    config = load_arena(tmp_path / "arena.toml")
    store = ArenaStore(tmp_path / "arena.db")
    alice, _ = store.invite("alice")
    bob, _ = store.invite("bob")
    ids = [
        ready(store, who, tmp_path / f"{who.name}{k}", module)
        for who in (alice, bob)
        for k, module in enumerate(("random", "heuristic"))
    ]
    runner = LadderRunner(store, config, parallel=2)
    first, second = runner.start_next(), runner.start_next()
    assert first is not None and second is not None
    assert {first.a, first.b, second.a, second.b} == set(ids)  # two meetings, four players
    assert runner.start_next() is None  # nobody is free
    # Those two were started and never played, as if the arena had stopped: resumed.
    assert asyncio.run(LadderRunner(store, config).resume()) == 2
    assert store.ladder.meetings_done() == 2 and len(store.ladder.results()) == 4

    async def some_meetings() -> int:
        played: list[Meeting] = []
        busy = LadderRunner(store, config, parallel=2, on_meeting=played.append)
        task = asyncio.ensure_future(busy.run())
        while len(played) < 2:
            await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return len(played)

    assert asyncio.run(some_meetings()) >= 2
    # Whatever the cancel cut short is played again, and kept once.
    asyncio.run(LadderRunner(store, config).resume())
    assert store.ladder.unfinished() == []
