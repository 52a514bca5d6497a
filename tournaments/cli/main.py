"""The ``tavolo`` command line."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import typer

from tournaments.cli.bench import bench_app
from tournaments.cli.conformance import conformance
from tournaments.cli.deal import deal
from tournaments.cli.ladder import ladder
from tournaments.cli.play import play
from tournaments.cli.replay import replay
from tournaments.cli.report import report
from tournaments.cli.seed import seed_app
from tournaments.cli.serve import match_app, serve
from tournaments.cli.tournament import tournament_app
from tournaments.cli.verify import verify
from tournaments.cli.watch import watch

app = typer.Typer(
    name="tavolo",
    no_args_is_help=True,
    add_completion=False,
    help="Referee and tournament harness for Tressette and its family.",
    pretty_exceptions_enable=False,
)


def _version() -> str:
    try:
        return version("tavolo")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"tavolo {_version()}")
        raise typer.Exit()


@app.callback()
def main(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Referee and tournament harness for Tressette and its family."""


app.command()(deal)
app.command()(play)
app.command()(ladder)
app.command()(verify)
app.command()(replay)
app.command()(serve)
app.command()(conformance)
app.command()(watch)
app.add_typer(seed_app, name="seed")
# In its own file (tournaments/cli/report.py), as one of the tournament commands.
tournament_app.command("report")(report)
app.add_typer(match_app, name="match")
app.add_typer(bench_app, name="bench")
app.add_typer(tournament_app, name="tournament")
