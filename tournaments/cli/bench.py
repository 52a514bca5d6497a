"""``tavolo bench``: speed figures (docs/benchmarks.md)."""

from __future__ import annotations

import json
import platform
from typing import Annotated

import typer

from referee.bench import bench_bare_loop, bench_engine
from tournaments.cli.common import GAME_HELP, RULE_HELP, fail, load_rules

bench_app = typer.Typer(no_args_is_help=True, help="Measure speed.")


@bench_app.command()
def engine(
    game: Annotated[str, typer.Option(help=GAME_HELP)] = "tressette",
    seconds: Annotated[float, typer.Option(help="Length of each timed round.")] = 1.0,
    rounds: Annotated[int, typer.Option(help="Timed rounds; the median is reported.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    rule: Annotated[list[str] | None, typer.Option(help=RULE_HELP)] = None,
    baseline: Annotated[
        bool, typer.Option(help="Also time a bare follow-suit loop, to compare machines.")
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
        typer.echo(json.dumps(out))
        return
    for label, figures in (("engine, " + game, result), ("bare loop", bare)):
        if figures is not None:
            spread = ", ".join(f"{r:,.0f}" for r in figures.rounds)
            typer.echo(
                f"{label}: {figures.deals_per_second:,.0f} deals/s (median; rounds: {spread})"
            )
