"""``tavolo bench``: speed figures (docs/benchmarks.md)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import platform
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from tabulate import tabulate

from referee.engine.deals import SeedError, check_seed
from referee.entries import EntryError
from referee.players import UnknownPlayerError
from referee.sandbox.bwrap import SandboxError, SandboxMode, bwrap_version
from referee.sandbox.probe import sandbox_problem
from tournaments.benchmarks.arena_ladder import bench_order, median_or_none
from tournaments.benchmarks.arena_live import bench_live
from tournaments.benchmarks.arena_real_order import bench_real_order, shares
from tournaments.benchmarks.bots import (
    DEFAULT_GAMES,
    P99_TARGET_MS,
    SCENARIOS,
    SIGNALS,
    TIMEOUT_GAMES,
    Difference,
    Figures,
    bench_bots,
    difference,
    scenario,
    total_games,
)
from tournaments.benchmarks.bots import DEFAULT_SEED as BOTS_SEED
from tournaments.benchmarks.engine import bench_bare_loop, bench_clone, bench_engine
from tournaments.benchmarks.hello_flood import bench_hello_flood
from tournaments.benchmarks.hello_flood import describe as describe_flood
from tournaments.benchmarks.referee_against import bench_against
from tournaments.benchmarks.round_trips import (
    ECHO_TRIPS,
    BenchError,
    LatencyRun,
    RefereeBench,
    bench_referee,
    percentile,
)
from tournaments.benchmarks.sandbox import bench_freezing, bench_startup, bench_transports
from tournaments.benchmarks.shards import (
    GENERATORS,
    STREAM_TABLES,
    THROUGHPUT_TABLES,
    LoadSettings,
    bench_shards,
    default_generator,
    serve_tree_has_shards,
)
from tournaments.benchmarks.tournament import (
    ClusterBench,
    InProcessBench,
    TournamentBench,
    bench_cluster,
    bench_in_process,
    bench_ratings,
    bench_tournament,
)
from tournaments.cli.common import fail, load_rules
from tournaments.cli.dataset import RESEARCH_EXTRA
from tournaments.cli.options import (
    DEADLINE_HELP,
    DEALS_HELP,
    GameOption,
    JsonOption,
    RuleOption,
    SandboxOption,
    at_least,
)
from tournaments.cluster_task import ClusterError
from tournaments.config import ConfigError, TournamentConfig, load_config
from tournaments.runner import confinements

bench_app = typer.Typer(no_args_is_help=True, help="Measure speed.")


@bench_app.command()
def engine(
    game: GameOption = "tressette",
    seconds: Annotated[float, typer.Option(help="Length of each timed round.")] = 1.0,
    rounds: Annotated[int, typer.Option(help="Timed rounds; the median is reported.")] = 5,
    as_json: JsonOption = False,
    rule: RuleOption = None,
    baseline: Annotated[
        bool, typer.Option(help="Also time a bare follow-suit loop, to compare machines.")
    ] = False,
    clone: Annotated[
        bool, typer.Option(help="Also time game.clone() mid-deal, what search bots call.")
    ] = False,
) -> None:
    """Random legal playouts of seeded deals through the engine API, on one core.

    Each deal is dealt from the seed, every declaration is offered and every signal is
    checked, exactly as in a real game.
    """
    rules = load_rules(game, rule)
    if seconds <= 0 or rounds < 1:
        fail("--seconds must be positive and --rounds at least 1")
    result = bench_engine(rules, seconds=seconds, rounds=rounds)
    bare = bench_bare_loop(seconds=seconds, rounds=rounds) if baseline else None
    cloned = bench_clone(rules) if clone else None
    if as_json:
        out: dict[str, object] = {
            "benchmark": "engine",
            "game": game,
            "deals_per_second": round(result.deals_per_second, 1),
            "rounds": [round(r, 1) for r in result.rounds],
            "deals": result.deals,
            "python": platform.python_version(),
        }
        if bare is not None:
            out["bare_loop_deals_per_second"] = round(bare.deals_per_second, 1)
        if cloned is not None:
            out["clone_us"] = round(cloned.game_clone_us, 1)
            out["cloned_playout_us"] = round(cloned.playout_us, 1)
        typer.echo(json.dumps(out))
        return
    for label, figures in (("engine, " + game, result), ("bare loop", bare)):
        if figures is not None:
            spread = ", ".join(f"{r:,.0f}" for r in figures.rounds)
            typer.echo(
                f"{label}: {figures.deals_per_second:,.0f} deals/s (median; rounds: {spread})"
            )
    if cloned is not None:
        typer.echo(
            f"clone of a game mid-deal: {cloned.game_clone_us:.1f} µs (median); a random "
            f"playout of the clone's deal: {cloned.playout_us:.1f} µs"
        )


P50_TARGET = 1.5
"""Referee p50 at one table over the echo p50 at one stream: at most this."""
RATE_TARGET = 5000.0
"""Decisions per second at the largest table count (64 by default): at least this."""


@bench_app.command()
def referee(
    tables: Annotated[
        str, typer.Option(help="Table counts to run, comma-separated; matches play at once.")
    ] = "1,64",
    deals: Annotated[
        int | None,
        typer.Option(
            help="Deals per game of every match (two games a match). "
            "Default: about 12,000 decisions per run.",
            callback=at_least(1),
        ),
    ] = None,
    seconds: Annotated[
        float, typer.Option(help="Give up on a run (echo or referee) after this long.")
    ] = 120.0,
    echo_trips: Annotated[
        int, typer.Option(help="Round trips of each echo run, over all its streams.")
    ] = ECHO_TRIPS,
    rounds: Annotated[
        int,
        typer.Option(
            help="Rounds of the bare echoes and the referee at the fewest tables, one after "
            "the other; the medians are reported. With --against: pairs of loads."
        ),
    ] = 3,
    as_json: JsonOption = False,
    shards: Annotated[
        int | None,
        typer.Option(
            help="Instead: decisions/s of real `tavolo serve` processes with 1 shard and with "
            "N, then 1,000 streams on N shards at 200 ms (docs/benchmarks.md, Shards)."
        ),
    ] = None,
    shard_tables: Annotated[
        int, typer.Option(help="With --shards or --against: tables of the decisions/s runs.")
    ] = THROUGHPUT_TABLES,
    stream_tables: Annotated[
        int, typer.Option(help="With --shards: tables of the many-streams run (4 streams each).")
    ] = STREAM_TABLES,
    generator: Annotated[
        str | None,
        typer.Option(
            metavar="go|python",
            help="With --shards or --against: the load generator (default: go where the go "
            "toolchain is, else python).",
        ),
    ] = None,
    against: Annotated[
        Path | None,
        typer.Option(
            metavar="TREE",
            help="Instead: this checkout's referee against the checkout TREE's, in --rounds "
            "alternating pairs of one load on one shard (--shard-tables tables, --deals "
            "deals a game, default 4).",
        ),
    ] = None,
) -> None:
    """Decision round trips through a real referee, against a bare gRPC echo.

    For each table count T: a referee on a local port plays T Tressette matches of two
    remote entries at once, and four random-bot processes each play one slot of every
    table. The referee times each request to its answer. The echo baselines time a
    small message and its echo on bare grpc.aio streams the same way: one stream of one
    client process, then T groups of four client processes taking turns. Every run uses
    the gRPC transport the referee chooses (GRPC_EXPERIMENTS); the bare echo runs once
    more on gRPC's defaults, for comparison. The bare echoes and the referee at the
    fewest tables run in rounds, one after the other, and each ratio is the median of the
    rounds' ratios, so that the machine's drift over a minute cancels.
    """
    counts = _table_counts(tables)
    if seconds <= 0 or echo_trips < 1 or rounds < 1:
        fail("--seconds must be positive, and --echo-trips and --rounds at least 1")
    if against is not None:
        if shards is not None:
            fail("--against and --shards are two benchmarks: give one")
        _referee_against(against, rounds, shard_tables, deals, seconds, as_json, generator)
        return
    if shards is not None:
        _referee_shards(shards, shard_tables, stream_tables, deals, seconds, as_json, generator)
        return
    if generator is not None:
        fail("--generator goes with --shards or --against: the other runs' bots are random-bot "
             "processes")  # fmt: skip
    try:
        result = bench_referee(
            counts, deals=deals, echo_trips=echo_trips, timeout=seconds, rounds=rounds
        )
    except BenchError as exc:
        fail(str(exc), code=1)
    if as_json:
        typer.echo(json.dumps(_referee_json(result)))
    else:
        _referee_text(result)


def _referee_shards(
    shards: int,
    tables: int,
    stream_tables: int,
    deals: int | None,
    seconds: float,
    as_json: bool,
    generator: str | None,
) -> None:
    if shards < 1 or tables < 1 or stream_tables < 1:
        fail("--shards, --shard-tables and --stream-tables must be 1 or more")
    try:
        result = bench_shards(
            shards,
            tables=tables,
            stream_tables=stream_tables,
            deals=deals,
            seconds=seconds,
            generator=generator,
        )
    except BenchError as exc:
        fail(str(exc), code=1)
    typer.echo(json.dumps(result.as_json()) if as_json else result.text())


def _referee_against(
    tree: Path,
    rounds: int,
    tables: int,
    deals: int | None,
    seconds: float,
    as_json: bool,
    generator: str | None,
) -> None:
    if tables < 1:
        fail("--shard-tables must be 1 or more")
    generator = generator or default_generator()
    if generator not in GENERATORS:
        fail(f"--generator {generator}: choose one of {', '.join(GENERATORS)}")
    try:
        serve_tree_has_shards(tree)
    except BenchError as exc:
        fail(f"--against {exc}")
    settings = LoadSettings(tables, deals or 4, compact=True, seconds=seconds, generator=generator)
    try:
        result = bench_against(tree, rounds, settings)
    except BenchError as exc:
        fail(str(exc), code=1)
    typer.echo(json.dumps(result.as_json()) if as_json else result.text())


def _table_counts(tables: str) -> list[int]:
    """``--tables``: whole numbers from 1, comma-separated."""
    try:
        counts = [int(t) for t in tables.split(",") if t.strip()]
    except ValueError:
        fail(f"--tables must be whole numbers separated by commas, got {tables!r}")
    if not counts or min(counts) < 1:
        fail(f"--tables must be whole numbers from 1, got {tables!r}")
    return counts


@dataclasses.dataclass(frozen=True)
class _Ratios:
    """The referee's p50 over the echoes', round by round and their medians."""

    on_echo: list[float]
    over_echo: float
    on_defaults: list[float]
    over_defaults: float | None

    @classmethod
    def of(cls, result: RefereeBench) -> _Ratios:
        on_echo = [r.referee / r.echo for r in result.rounds]
        on_defaults = [
            r.referee / r.echo_grpc_defaults for r in result.rounds if r.echo_grpc_defaults
        ]
        over_defaults = (
            statistics.median(on_defaults) if result.echo_grpc_defaults is not None else None
        )
        return cls(on_echo, statistics.median(on_echo), on_defaults, over_defaults)


def _referee_json(result: RefereeBench) -> dict[str, object]:
    fewest = min(result.runs, key=lambda r: r.tables)
    most = max(result.runs, key=lambda r: r.tables)
    echo, defaults = result.echo, result.echo_grpc_defaults
    ratios = _Ratios.of(result)
    out: dict[str, object] = {
        "benchmark": "referee",
        "game": "tressette",
        "tables": fewest.tables,
        "p50_us": _us(fewest.p50_us),
        "p99_us": _us(fewest.p99_us),
        "decisions_per_second": round(most.decisions_per_second, 1),
        "decisions_per_second_tables": most.tables,
        "echo_p50_us": _us(echo.p50_us),
        "echo_p99_us": _us(echo.p99_us),
        "echo_after_write_p50_us": _us(echo.after_write_p50_us or 0.0),
        "p50_over_echo": round(ratios.over_echo, 2),
        "referee_cpu_us_per_decision": _us(most.referee_cpu_us_per_decision),
        "bot_cpu_us_per_decision": _us(most.bot_cpu_us_per_decision),
        "transport": {"GRPC_EXPERIMENTS": result.transport},
        "runs": [
            {**_figures(run), **_cpu_figures(run), "deals": run.deals, "faults": run.faults}
            for run in result.runs
        ],
        "echo": [
            {
                **_figures(run),
                "after_write_p50_us": _us(run.after_write_p50_us or 0.0),
                "after_write_p99_us": _us(run.after_write_p99_us or 0.0),
            }
            for run in (echo, *result.echo_tables)
        ],
        "python": platform.python_version(),
    }
    if defaults is not None and ratios.over_defaults is not None:
        out["echo_grpc_defaults_p50_us"] = _us(defaults.p50_us)
        out["p50_over_echo_grpc_defaults"] = round(ratios.over_defaults, 2)
        out["echo_grpc_defaults"] = _figures(defaults)
    out["rounds"] = [
        {
            "p50_us": _us(r.referee),
            "echo_p50_us": _us(r.echo),
            "echo_grpc_defaults_p50_us": (
                None if r.echo_grpc_defaults is None else _us(r.echo_grpc_defaults)
            ),
        }
        for r in result.rounds
    ]
    return out


def _referee_text(result: RefereeBench) -> None:
    fewest = min(result.runs, key=lambda r: r.tables)
    most = max(result.runs, key=lambda r: r.tables)
    defaults = result.echo_grpc_defaults
    ratios = _Ratios.of(result)
    rows = [
        [
            what,
            run.tables,
            run.processes,
            run.deals or "",
            f"{run.decisions:,}",
            f"{run.p50_us:,.0f}",
            f"{run.p99_us:,.0f}",
            f"{run.decisions_per_second:,.0f}",
            f"{run.referee_cpu_us_per_decision:,.0f}" if what == "referee" else "",
            f"{run.bot_cpu_us_per_decision:,.0f}" if what == "referee" else "",
        ]
        for what, runs in (
            ("echo", (result.echo,)),
            ("echo, gRPC defaults", () if defaults is None else (defaults,)),
            ("echo", result.echo_tables),
            ("referee", result.runs),
        )
        for run in runs
    ]
    headers = [
        "run", "tables", "processes", "deals", "round trips", "p50 µs", "p99 µs", "per second",
        "referee CPU µs/decision", "bots CPU µs/decision",
    ]  # fmt: skip
    typer.echo(tabulate(rows, headers=headers, colalign=("left", *["right"] * 9)))
    typer.echo(f"\ngRPC transport: GRPC_EXPERIMENTS={result.transport!r}")
    typer.echo(
        f"referee p50 at {fewest.tables} table(s), {fewest.p50_us:,.0f} µs, over the bare "
        f"echo p50 (target <= {P50_TARGET:g}), the median of {len(result.rounds)} round(s):"
    )

    def each(values: list[float]) -> str:
        return ", ".join(f"{x:.2f}" for x in values)

    if ratios.over_defaults is not None:
        typer.echo(
            f"  on gRPC's defaults: {ratios.over_defaults:.2f} (rounds: {each(ratios.on_defaults)})"
        )
    typer.echo(f"  on the same transport: {ratios.over_echo:.2f} (rounds: {each(ratios.on_echo)})")
    typer.echo(
        f"{most.tables} table(s): referee CPU {most.referee_cpu_us_per_decision:,.0f} µs and "
        f"bots CPU {most.bot_cpu_us_per_decision:,.0f} µs per decision"
    )
    typer.echo(
        f"{most.tables} table(s): {most.decisions_per_second:,.0f} decisions/s "
        f"(target >= {RATE_TARGET:,.0f} at 64 tables)"
    )
    faults = sum(run.faults for run in result.runs)
    if faults:
        typer.echo(f"warning: {faults} game(s) ended by a timeout, illegal action or lost bot")


def _us(value: float) -> float:
    return round(value, 1)


def _cpu_figures(run: LatencyRun) -> dict[str, object]:
    """A referee run's CPU time over its play phase, in all and per answered decision."""
    return {
        "referee_cpu_seconds": round(run.referee_cpu_seconds, 4),
        "referee_cpu_us_per_decision": _us(run.referee_cpu_us_per_decision),
        "bot_cpu_seconds": round(run.bot_cpu_seconds, 4),
        "bot_cpu_us_per_decision": _us(run.bot_cpu_us_per_decision),
    }


def _figures(run: LatencyRun) -> dict[str, object]:
    return {
        "tables": run.tables,
        "p50_us": _us(run.p50_us),
        "p99_us": _us(run.p99_us),
        "decisions_per_second": round(run.decisions_per_second, 1),
        "processes": run.processes,
        "decisions": run.decisions,
        "seconds": round(run.seconds, 3),
    }


@bench_app.command()
def ratings(
    entries: Annotated[int, typer.Option(help="Entries in the synthetic round robin.")] = 16,
    games: Annotated[int, typer.Option(help="Games, in duplicate pairs.")] = 2000,
    samples: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 1000,
    as_json: JsonOption = False,
) -> None:
    """One Elo fit and a bootstrap over synthetic results of known strengths."""
    if entries < 2 or games < 2 or samples < 0:
        fail("--entries and --games must be 2 or more, --samples 0 or more")
    figures = bench_ratings(entries, games, samples)
    out = {
        "benchmark": "ratings",
        "entries": entries,
        "games": games,
        "samples": samples,
        "fit_ms": round(figures.fit_seconds * 1000, 2),
        "rate_seconds": round(figures.rate_seconds, 3),
    }
    if as_json:
        typer.echo(json.dumps(out))
        return
    typer.echo(
        f"{entries} entries, {games} games: one fit {out['fit_ms']} ms; "
        f"with {samples} bootstrap resamples {out['rate_seconds']} s"
    )


@bench_app.command()
def tournament(
    file: Annotated[Path, typer.Argument(help="A tournament file.")] = Path(
        "tournaments/examples/quick.toml"
    ),
    concurrency: Annotated[
        int | None, typer.Option(help="Tables at once (default: chosen as it runs).")
    ] = None,
    sandbox: Annotated[
        SandboxMode | None,
        typer.Option(
            help="Override the file's sandbox: bwrap plays each arrangement of a duplicate "
            "set with processes of its own, off one process per seat for the match."
        ),
    ] = None,
    shards: Annotated[
        int | None,
        typer.Option(help="Referee processes (default: one per core).", callback=at_least(1)),
    ] = None,
    in_process: Annotated[
        bool,
        typer.Option(
            help="Also play the same matches in this process without gRPC, and report the "
            "harness's overhead per game as a ratio to that."
        ),
    ] = True,
    cluster: Annotated[
        list[str] | None,
        typer.Option(
            metavar="local:N|tcp://HOST:PORT",
            help="Also run it on this Dask cluster and report its throughput; repeat for "
            "several (--cluster local:1 --cluster local:2).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """A whole tournament over gRPC into a fresh temporary database, timed, against the
    same games played in this process."""
    try:
        config = load_config(file)
    except ConfigError as exc:
        fail(str(exc))
    if sandbox is not None:
        config = dataclasses.replace(config, sandbox=sandbox)
    try:
        modes = set(confinements(config).values())
    except SandboxError as exc:
        fail(str(exc))
    base = None
    if in_process:
        try:
            base = bench_in_process(config)
        except (ValueError, UnknownPlayerError) as exc:
            fail(f"{file}: {exc} (or use --no-in-process)")
    used_shards = shards or os.cpu_count() or 1
    figures = bench_tournament(config, concurrency, shards=used_shards)
    out: dict[str, object] = {
        "benchmark": "tournament",
        "file": str(file),
        "sandbox": "+".join(sorted(modes)),
        "shards": used_shards,
        "bot_processes": figures.processes,
        "games": figures.games,
        "deals": figures.deals,
        "seconds": round(figures.seconds, 3),
        "cpu_seconds": round(figures.cpu_seconds, 3),
        "machine_cpu_seconds": round(figures.machine_cpu_seconds, 2),
        "games_per_second": round(figures.games_per_second, 2),
        "deals_per_second": round(figures.deals / figures.seconds, 1),
    }
    if base is not None:
        out |= _overheads(figures, base)
    on_clusters = [_cluster_bench(config, c, concurrency) for c in cluster or []]
    if on_clusters:
        out["clusters"] = [_cluster_json(c) for c in on_clusters]
    if as_json:
        typer.echo(json.dumps(out))
        return
    typer.echo(
        f"{file}: {figures.games} games, {figures.deals} deals in {figures.seconds:.1f} s "
        f"({out['games_per_second']} games/s, {out['deals_per_second']} deals/s), "
        f"every deal and game committed to SQLite; sandbox {out['sandbox']}, "
        f"{used_shards} shard(s), {figures.processes} bot processes, "
        f"{figures.cpu_seconds:.1f} CPU seconds in all"
    )
    if base is not None:
        typer.echo(
            f"in this process without gRPC: {base.games} games in {base.seconds:.1f} s "
            f"({base.cpu_seconds:.1f} CPU seconds); harness overhead per game "
            f"{out['overhead_per_game']}x in wall time (target <= {OVERHEAD_TARGET:g}x), "
            f"{out['cpu_overhead_per_game']}x in CPU time"
        )
    for c in on_clusters:
        typer.echo(
            f"on --cluster {c.cluster} ({c.workers} workers, {c.threads} sets at once): "
            f"{c.games} games in {c.seconds:.1f} s, {c.games_per_second:.2f} games/s "
            f"(after {c.start_seconds:.1f} s to start and check the workers)"
        )


def _cluster_bench(config: TournamentConfig, cluster: str, concurrency: int | None) -> ClusterBench:
    """The run on ``cluster``; one line and exit 2 if it cannot be made."""
    try:
        return bench_cluster(config, cluster, concurrency)
    except ClusterError as exc:
        fail(str(exc))


def _cluster_json(c: ClusterBench) -> dict[str, object]:
    """A cluster run's figures: throughput counts the run, not the cluster's start."""
    return {
        "cluster": c.cluster,
        "workers": c.workers,
        "threads": c.threads,
        "start_seconds": round(c.start_seconds, 2),
        "games": c.games,
        "deals": c.deals,
        "seconds": round(c.seconds, 2),
        "games_per_second": round(c.games_per_second, 2),
    }


OVERHEAD_TARGET = 10.0
"""Issue 16: a game over the harness costs at most this many times a game in-process."""


def _overheads(figures: TournamentBench, base: InProcessBench) -> dict[str, object]:
    """What a game costs over the harness, as ratios to a game played in-process."""
    if base.games != figures.games or base.deals != figures.deals:
        # Built-in bots play the same games in both: anything else is a bug to see.
        fail(
            f"the in-process run played {base.games} games and {base.deals} deals, the "
            f"harness {figures.games} and {figures.deals}: they must be the same games"
        )
    per_game = base.seconds / base.games
    cpu_per_game = base.cpu_seconds / base.games
    return {
        "in_process_seconds": round(base.seconds, 3),
        "in_process_cpu_seconds": round(base.cpu_seconds, 3),
        "overhead_per_game": round(figures.seconds / figures.games / per_game, 1),
        "cpu_overhead_per_game": round(figures.cpu_seconds / figures.games / cpu_per_game, 1),
    }


@bench_app.command()
def arena(
    submissions: Annotated[int, typer.Option(help="Submissions of known strength.")] = 20,
    gap: Annotated[float, typer.Option(help="Elo between neighbours in the true order.")] = 40.0,
    meetings: Annotated[int, typer.Option(help="Meetings (duplicate sets) in each run.")] = 1500,
    checkpoint: Annotated[int, typer.Option(help="Meetings between looks at the order.")] = 25,
    runs: Annotated[int, typer.Option(help="Runs of each scheme.")] = 5,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Games the arena's ladder needs to rank submissions of known strength in the right
    order, against round robin at the same number of games (synthetic results)."""
    if min(submissions, meetings, checkpoint, runs) < 1 or submissions < 2 or gap <= 0:
        fail("--submissions must be 2 or more, --gap above 0, and the rest 1 or more")
    found = bench_order(submissions, gap, meetings, checkpoint, runs)
    _order_out(
        found, json_out,
        {"benchmark": "arena-order", "submissions": submissions, "gap": gap,
         "meetings": meetings, "checkpoint": checkpoint},
        f"{submissions} submissions {gap:g} Elo apart; {meetings} meetings of 2 games; "
        f"the order looked at every {checkpoint} meetings",
    )  # fmt: skip


def _order_out(
    found: dict[str, list[int | None]], json_out: bool, facts: dict[str, object], title: str
) -> None:
    """Print the games to the right order of each run and scheme, and their medians."""
    medians = {scheme: median_or_none(values) for scheme, values in found.items()}
    if json_out:
        typer.echo(json.dumps({**facts, "runs": found, "median": medians}))
        return
    rows = [
        [scheme, " ".join("-" if v is None else str(v) for v in values),
         "never" if medians[scheme] is None else f"{medians[scheme]:g}"]
        for scheme, values in found.items()
    ]  # fmt: skip
    typer.echo(title)
    typer.echo(tabulate(rows, headers=["scheme", "games to the right order, per run", "median"]))


@bench_app.command("arena-order")
def arena_order(
    submissions: Annotated[
        int, typer.Option(help="Submissions of known strength (random shares 0 to 1).")
    ] = 5,
    meetings: Annotated[int, typer.Option(help="Meetings (duplicate sets) in each run.")] = 150,
    checkpoint: Annotated[int, typer.Option(help="Meetings between looks at the order.")] = 10,
    runs: Annotated[int, typer.Option(help="Runs of each scheme.")] = 1,
    deals: Annotated[int, typer.Option(help="Deals a game.")] = 1,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Games the arena's ladder needs to rank real bots of known strength (the heuristic
    with a growing share of random moves) in the right order, against round robin."""
    if submissions < 2 or min(meetings, checkpoint, runs, deals) < 1:
        fail("--submissions must be 2 or more, and the rest 1 or more")
    problem = sandbox_problem()
    if problem is not None:
        fail(f"the arena plays in the sandbox, which cannot start here: {problem}")
    found = bench_real_order(submissions, meetings, checkpoint, runs, deals)
    _order_out(
        found, json_out,
        {"benchmark": "arena-order-real", "submissions": submissions,
         "shares": shares(submissions), "meetings": meetings, "checkpoint": checkpoint,
         "deals": deals},
        f"{submissions} real submissions, random shares {shares(submissions)}; {meetings} "
        f"meetings of 2 games of {deals} deals; the order looked at every {checkpoint} meetings",
    )  # fmt: skip


@bench_app.command("arena-live")
def arena_live(
    submissions: Annotated[int, typer.Option(help="Ready submissions on the ladder.")] = 20,
    minutes: Annotated[float, typer.Option(help="The window the games are counted in.")] = 10.0,
    uploads: Annotated[
        int, typer.Option(help="Submissions then uploaded, one at a time, each rated first.")
    ] = 3,
    parallel: Annotated[int, typer.Option(help="The arena's --parallel (meetings at once).")] = max(
        1, (os.cpu_count() or 2) // 2
    ),
    deals: Annotated[
        int | None, typer.Option(help="Deals a game (default: to the preset's target).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """A real ``tavolo arena serve``: its ladder's sustained games per hour with
    --submissions playing, then the time from an upload to its first rating."""
    if submissions < 2 or minutes <= 0 or uploads < 0 or parallel < 1 or (deals or 1) < 1:
        fail("--submissions must be 2 or more, --minutes above 0, --parallel and --deals "
             "1 or more, --uploads 0 or more")  # fmt: skip
    problem = sandbox_problem()
    if problem is not None:
        fail(f"the arena plays in the sandbox, which cannot start here: {problem}")
    try:
        found = bench_live(submissions, minutes, uploads, parallel, deals)
    except BenchError as exc:
        fail(str(exc), 1)
    if json_out:
        typer.echo(json.dumps({
            "benchmark": "arena-live", "submissions": found.submissions,
            "parallel": found.parallel, "deals": found.deals, "seconds": round(found.seconds, 1),
            "games": found.games, "meetings": found.meetings,
            "games_per_hour": round(found.games_per_hour),
            "upload_to_rating_s": [round(w, 1) for w in found.upload_to_rating],
        }))  # fmt: skip
        return
    typer.echo(
        f"{found.submissions} ready submissions (random and heuristic), --parallel "
        f"{found.parallel}, {'games to the target' if deals is None else f'{deals} deals a game'}"
    )
    rows = [
        ["ladder games per hour", f"{found.games_per_hour:,.0f}",
         f"{found.games} games in {found.seconds:.0f} s"],
        ["upload to first rating, median s", f"{found.median_upload_to_rating:.1f}",
         " ".join(f"{w:.1f}" for w in found.upload_to_rating) or "-"],
    ]  # fmt: skip
    typer.echo(tabulate(rows, headers=["figure", "value", "detail"]))


@bench_app.command()
def research(
    game: GameOption = "tressette",
    seconds: Annotated[float, typer.Option(help="Length of each timed round.")] = 2.0,
    rounds: Annotated[int, typer.Option(help="Timed rounds; the median is reported.")] = 3,
    as_json: JsonOption = False,
) -> None:
    """Environment steps a second with masks and tensors, on one core: Tavolo's PettingZoo,
    Gymnasium and OpenSpiel environments of GAME beside RLCard's own card games
    (pip install rlcard), in one run, and a PettingZoo environment with no game in it (the
    loop's ceiling); and tavolo dataset export's rows a second (docs/research.md)."""
    if seconds <= 0 or rounds < 1:
        fail("--seconds must be positive and --rounds at least 1")
    load_rules(game, None)
    try:
        from tournaments.benchmarks.research import GOAL, bench_research
    except ImportError as exc:
        fail(f"tavolo bench research needs the research extra ({exc.name} is missing): "
             "pip install -e '.[research]'")  # fmt: skip
    result = bench_research(game, seconds, rounds)
    ratio, wrapped, ceiling = result.ratio(0), result.ratio(1), result.ceiling()
    if as_json:
        typer.echo(json.dumps({
            "benchmark": "research", "game": game, "core": result.core,
            "steps_per_second": {
                r.name: round(r.steps_per_second) for r in (*result.tavolo, *result.rlcard)
            },
            "export_rows_per_second": round(result.export.steps_per_second),
            "ratio": None if ratio is None else round(ratio, 2),
            "ratio_wrapped": None if wrapped is None else round(wrapped, 2),
            "ceiling": None if ceiling is None else round(ceiling, 2),
            "goal": GOAL, "missing": result.missing,
            "python": platform.python_version(),
        }))  # fmt: skip
        return
    typer.echo(f"one core (cpu {result.core}); steps a second, median of {rounds} rounds:")
    for r in (*result.tavolo, *result.rlcard, result.export):
        typer.echo(f"  {r.name:<42} {r.steps_per_second:>10,.0f}")
    for line in result.missing:
        typer.echo(f"  not timed: {line}")
    if ratio is not None and wrapped is not None and ceiling is not None:
        typer.echo(
            f"Tavolo's PettingZoo {game} over RLCard's fastest: {ratio:.2f}x raw, "
            f"{wrapped:.2f}x wrapped (goal {GOAL:g}x: {_met(ratio >= GOAL)}); "
            f"an environment with no game in it: {ceiling:.2f}x, the most any PettingZoo "
            "environment makes in this loop"
        )


@bench_app.command("hello-flood")
def hello_flood(
    streams: Annotated[int, typer.Option(help="Hello-less streams on the one connection.")] = 5000,
    as_json: JsonOption = False,
) -> None:
    """Streams that never say Hello on one connection: the referee's memory, what it refused."""
    if streams < 1:
        fail("--streams must be 1 or more")
    found = asyncio.run(bench_hello_flood(streams))
    if as_json:
        typer.echo(json.dumps({"benchmark": "hello-flood", **dataclasses.asdict(found)}))
        return
    typer.echo(describe_flood())
    rows = [[found.streams, found.held, json.dumps(found.refused),
             round(found.rss_before_mb), round(found.rss_peak_mb)]]  # fmt: skip
    typer.echo(tabulate(rows, headers=["streams", "held", "ended", "RSS before MB", "RSS peak MB"]))


@bench_app.command("sandbox")
def sandbox_costs(
    runs: Annotated[int, typer.Option(help="Starts of each command in each mode.")] = 20,
    deals: Annotated[int, typer.Option(help="Deals a game of the one-table runs.")] = 20,
    as_json: JsonOption = False,
) -> None:
    """The sandbox's start-up cost per process, and decisions over Unix sockets against TCP."""
    if runs < 1 or deals < 1:
        fail("--runs and --deals must be 1 or more")
    problem = sandbox_problem()
    if problem is not None:
        fail(f"cannot measure the sandbox: {problem}")
    startups = asyncio.run(bench_startup(runs, [SandboxMode.OFF, SandboxMode.BWRAP]))
    tables = bench_transports(deals, SandboxMode.BWRAP)
    tables += bench_transports(deals, SandboxMode.OFF)[:1]
    freezing = bench_freezing(deals)
    freeze_rows = [
        ["pondering" if f.ponder else "stopped off move", f.decisions, round(f.seconds, 2),
         round(f.ms_a_decision, 3)]
        for f in freezing
    ]  # fmt: skip
    cost = freezing[0].ms_a_decision - freezing[1].ms_a_decision
    startup_rows = [
        [s.command, s.sandbox, round(s.median * 1000, 1), round(percentile(s.times, 90) * 1000, 1)]
        for s in startups
    ]
    table_rows = [
        [t.transport, t.sandbox, t.decisions, round(t.p50_us, 1), round(t.p99_us, 1)]
        for t in tables
    ]
    if as_json:
        out = {
            "benchmark": "sandbox",
            "bwrap": bwrap_version(),
            "startup_ms": [dict(zip(("command", "sandbox", "median", "p90"), r, strict=True))
                           for r in startup_rows],
            "round_trip_us": [
                dict(zip(("transport", "sandbox", "decisions", "p50", "p99"), r, strict=True))
                for r in table_rows
            ],
            "freezing": [
                dict(zip(("bots", "decisions", "seconds", "ms_a_decision"), r, strict=True))
                for r in freeze_rows
            ],
            "freezing_ms_a_decision": round(cost, 3),
        }  # fmt: skip
        typer.echo(json.dumps(out))
        return
    typer.echo(tabulate(startup_rows, headers=["start-up", "sandbox", "median ms", "p90 ms"]))
    typer.echo("")
    rows = table_rows
    typer.echo(tabulate(rows, headers=["one table", "sandbox", "decisions", "p50 µs", "p99 µs"]))
    typer.echo("")
    headers = ["one sandboxed table", "decisions", "seconds", "ms a decision"]
    typer.echo(tabulate(freeze_rows, headers=headers))
    typer.echo(f"stopping and starting the bots: {cost:.3f} ms a decision")


@bench_app.command()
def dataset(
    game: GameOption = "tressette",
    games: Annotated[
        int, typer.Option(help="Record files, a game each to the target.", callback=at_least(1))
    ] = 100,
    rounds: Annotated[
        int, typer.Option(help="Timed exports; the median is reported.", callback=at_least(1))
    ] = 3,
    dense: Annotated[bool, typer.Option(help="Write each observation whole (--dense).")] = False,
    rule: RuleOption = None,
    as_json: JsonOption = False,
) -> None:
    """Decisions a second of `tavolo dataset export` over record files of games of random
    legal actions: each record read, verified, encoded and written as Parquet."""
    rules = load_rules(game, rule)
    try:
        # pyarrow and numpy are the research extra's: loaded for this command alone.
        from tournaments.benchmarks.dataset import bench_dataset
    except ModuleNotFoundError as exc:
        fail(f"tavolo bench dataset needs {exc.name}, of the research extra: {RESEARCH_EXTRA}")
    figures = bench_dataset(rules, games=games, rounds=rounds, dense=dense)
    out = {
        "benchmark": "dataset",
        "game": game,
        "layout": "dense" if dense else "sparse",
        "games": figures.games,
        "decisions": figures.decisions,
        "decisions_per_second": round(figures.decisions_per_second, 1),
        "rounds": [round(r, 1) for r in figures.rates],
        "bytes_per_decision": round(figures.bytes_per_decision, 1),
        "python": platform.python_version(),
    }
    if as_json:
        typer.echo(json.dumps(out))
        return
    spread = ", ".join(f"{r:,.0f}" for r in figures.rates)
    typer.echo(
        f"dataset export, {game}: {figures.decisions:,} decisions of {figures.games} games, "
        f"{figures.decisions_per_second:,.0f} decisions/s (median; rounds: {spread}); "
        f"decisions.parquet {figures.bytes_per_decision:.1f} bytes a decision ({out['layout']})"
    )


@bench_app.command()
def bots(
    bot: Annotated[
        str, typer.Option(help="The bot under test: an entry as `tavolo play` takes it.")
    ] = "pimc",
    scenarios: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario",
            help="A scenario to play (repeat, or comma-separate, for several; default all): "
            + ", ".join(s.name for s in SCENARIOS)
            + ".",
        ),
    ] = None,
    games: Annotated[
        int, typer.Option(help="Games per scenario, rounded up to whole duplicate sets.")
    ] = DEFAULT_GAMES,
    deals: Annotated[int | None, typer.Option(help=DEALS_HELP)] = None,
    seed: Annotated[str, typer.Option(help="Seed text: every scenario deals from it.")] = BOTS_SEED,
    deadline_ms: Annotated[int, typer.Option(help=DEADLINE_HELP)] = 1000,
    sandbox: SandboxOption = None,
    records: Annotated[
        Path | None,
        typer.Option(help="Write each match's record here, as NN.jsonl (the output names it)."),
    ] = None,
    workdir: Annotated[
        Path | None, typer.Option(help="Keep each bot's folder and logs here.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Strength and speed of a bot: duplicate sets over gRPC with real bot processes, per
    scenario, with the targets of docs/bots.md beside the figures (never asserted)."""
    names = [n.strip() for item in scenarios or [] for n in item.split(",") if n.strip()]
    try:
        chosen = [scenario(n) for n in dict.fromkeys(names)] if names else list(SCENARIOS)
    except ValueError as exc:
        fail(str(exc))
    if games < 1 or deadline_ms < 1 or (deals is not None and deals < 1):
        fail("--games, --deadline-ms and --deals must be 1 or more")
    try:
        check_seed(seed)
    except SeedError as exc:
        fail(str(exc))
    folder = workdir or Path(tempfile.mkdtemp(prefix="tavolo-bench-bots-"))
    try:
        figures = bench_bots(
            bot, chosen, games=games, seed=seed, deals=deals, deadline_ms=deadline_ms,
            sandbox=sandbox, workdir=folder, records=records,
            on_warning=lambda line: typer.echo(f"warning: {line}", err=True),
        )  # fmt: skip
    except EntryError as exc:
        fail(f"--bot: {exc}")
    finally:
        if workdir is None:
            shutil.rmtree(folder, ignore_errors=True)
    by_name = {f.scenario.name: f for f in figures}
    signals = (
        difference(by_name[SIGNALS[0]], by_name[SIGNALS[1]])
        if all(n in by_name for n in SIGNALS)
        else None
    )
    played = total_games(figures)
    timeouts = sum(f.timeouts for f in figures if f.shared_with is None)
    if as_json:
        out = {
            "benchmark": "bots",
            "bot": bot,
            "seed": seed,
            "deadline_ms": deadline_ms,
            "deals_per_game": deals,
            "scenarios": [_bots_json(f) for f in figures],
            "signals": None if signals is None else _difference_json(signals),
            "games": played,
            "timeouts": timeouts,
            "no_timeouts_target": {"games": TIMEOUT_GAMES, "met": _no_timeouts(played, timeouts)},
        }
        typer.echo(json.dumps(out))
        return
    _bots_text(bot, figures, signals, played, timeouts)


def _no_timeouts(games: int, timeouts: int) -> bool:
    return timeouts == 0 and games >= TIMEOUT_GAMES


def _met(ok: bool) -> str:
    return "met" if ok else "not met"


def _bots_json(f: Figures) -> dict[str, object]:
    low, high = f.win_interval
    p99 = f.percentile(0.99)

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    return {
        "scenario": f.scenario.name,
        "game": f.scenario.game,
        "knobs": list(f.scenario.knobs),
        "opponent": f.scenario.opponent,
        "games": f.games,
        "wins": f.wins,
        "draws": f.draws,
        "win_rate": r(f.win_rate),
        "win_low": r(low),
        "win_high": r(high),
        "win_target": f.scenario.win_target,
        "win_target_met": None
        if f.scenario.win_target is None
        else f.win_rate >= f.scenario.win_target,
        "deals": f.deals,
        "margin_per_deal": r(f.margin.mean),
        "margin_low": r(f.margin.low),
        "margin_high": r(f.margin.high),
        "decisions": len(f.think_ms),
        "p50_ms": f.percentile(0.5),
        "p99_ms": p99,
        "p99_target_met": p99 is not None and p99 <= P99_TARGET_MS,
        "timeouts": f.timeouts,
        "illegal": f.illegal,
        "crashes": f.crashes,
        "forfeits": f.forfeits,
        "record": None if f.record is None else str(f.record),
        "same_games_as": f.shared_with,
    }


def _difference_json(d: Difference) -> dict[str, object]:
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    return {
        "first": d.first, "second": d.second, "difference": r(d.value),
        "low": r(d.low), "high": r(d.high), "exceeds_interval": d.exceeds,
    }  # fmt: skip


def _bots_text(
    bot: str, figures: list[Figures], signals: Difference | None, played: int, timeouts: int
) -> None:
    def num(x: float | None, fmt: str = "+.2f") -> str:
        if x is None:
            return "—"
        # + 0.0 turns a rounded -0.0 into 0.0: "+0.00", not "-0.00".
        return format(x if isinstance(x, int) else round(x, 2) + 0.0, fmt)

    rows = []
    for f in figures:
        low, high = f.win_interval
        target = f.scenario.win_target
        win_target = "" if target is None else f">= {target:.2f}: {_met(f.win_rate >= target)}"
        m = f.margin
        p99 = f.percentile(0.99)
        rows.append(
            [
                f.scenario.name + (f" (= {f.shared_with})" if f.shared_with else ""),
                f.scenario.opponent,
                f.games,
                f"{f.wins}/{f.games} {f.win_rate:.3f} [{low:.3f}, {high:.3f}]",
                win_target,
                f"{num(m.mean)} [{num(m.low)}, {num(m.high)}]",
                f"{num(f.percentile(0.5), 'd')}/{num(p99, 'd')}",
                _met(p99 is not None and p99 <= P99_TARGET_MS),
                f"{f.timeouts}/{f.forfeits}",
            ]
        )
    headers = [
        "scenario", "vs", "games", "wins, rate [95%]", "target", "margin/deal [95%]",
        "p50/p99 ms", f"p99 <= {P99_TARGET_MS} ms", "timeouts/forfeits",
    ]  # fmt: skip
    typer.echo(f"bot under test: {bot}")
    typer.echo(tabulate(rows, headers=headers, disable_numparse=True))
    typer.echo("")
    if signals is not None:
        verdict = _met(signals.exceeds)
        typer.echo(
            f"margin/deal {signals.first} minus {signals.second}: {num(signals.value)} "
            f"[{num(signals.low)}, {num(signals.high)}]; target: larger under signals=any by "
            f"more than the interval: {verdict}"
        )
    typer.echo(
        f"timeouts: {timeouts} in {played} games; target: none in {TIMEOUT_GAMES:,} games: "
        f"{_met(_no_timeouts(played, timeouts))}"
        + (f" ({played} games played)" if played < TIMEOUT_GAMES else "")
    )
