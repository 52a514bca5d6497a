"""``tavolo conformance -- CMD [ARGS...]``: check a bot against the protocol before a match."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Annotated

import typer
from tabulate import tabulate

from referee.conformance import GAMES, run_conformance
from referee.entries import EntryError, load_manifest, parse_entry
from referee.match.confinement import confinement_of
from referee.sandbox.bwrap import SandboxMode
from referee.sandbox.probe import sandbox_problem
from tournaments.cli.common import confined, fail
from tournaments.cli.options import SandboxOption


def conformance(
    command: Annotated[
        list[str],
        typer.Argument(
            help="The bot's command line, after --; or the path of its .toml manifest.",
            show_default=False,
        ),
    ],
    game: Annotated[
        list[str] | None, typer.Option(help="Check only these games (repeat); default: all.")
    ] = None,
    connect_timeout: Annotated[float, typer.Option(help="Seconds to connect.")] = 20.0,
    deadline_ms: Annotated[int, typer.Option(help="Time for each decision.")] = 1000,
    near_deadline_ms: Annotated[int, typer.Option(help="The short deadline checked.")] = 200,
    workdir: Annotated[
        Path | None, typer.Option(help="Keep the bot's folder and logs here.")
    ] = None,
    sandbox: SandboxOption = None,
) -> None:
    """Start a bot and check it against scripted scenarios; exit 1 if anything failed.

    The checks: the handshake, every event type, a request holding each kind of action
    in each game, a refused answer and the retry, a near deadline, and a clean exit when
    the match is over.
    """
    games = tuple(game) if game else GAMES
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        fail(f"unknown game {unknown[0]!r}; choose from {', '.join(GAMES)}")
    try:
        if len(command) == 1 and command[0].endswith(".toml"):
            entry = load_manifest(Path(command[0]))
        else:
            entry = parse_entry("cmd:" + shlex.join(command))
    except EntryError as exc:
        fail(str(exc))
    [entry] = confined((entry,), sandbox)
    mode = confinement_of(entry, sandbox or SandboxMode.BWRAP, allow_unconfined=True)
    if mode == SandboxMode.OFF and sandbox is not SandboxMode.OFF and entry.sandbox is None:
        typer.echo(f"warning: the bot runs unconfined: {sandbox_problem()}", err=True)
    report = asyncio.run(
        run_conformance(
            entry,
            sandbox=SandboxMode(mode),
            games=games,
            connect_timeout=connect_timeout,
            deadline_ms=deadline_ms,
            near_deadline_ms=near_deadline_ms,
            workdir=workdir,
        )
    )
    marks = {True: "pass", False: "FAIL", None: "not reached"}
    rows = [[c.name, marks[c.ok], c.detail] for c in report.checks]
    typer.echo(tabulate(rows, headers=["check", "result", "detail"]))
    failed = sum(c.ok is not True for c in report.checks)
    if report.stderr_tail and failed:
        typer.echo("\nthe bot's stderr ends:\n" + report.stderr_tail)
    typer.echo(
        f"\n{len(report.checks) - failed} of {len(report.checks)} checks passed"
        + ("" if failed else ": the bot conforms")
    )
    if failed:
        raise typer.Exit(1)
