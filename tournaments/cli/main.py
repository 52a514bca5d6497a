"""The ``tavolo`` command line."""

from __future__ import annotations

import typer

from tournaments.cli.bench import bench_app
from tournaments.cli.conformance import conformance
from tournaments.cli.deal import deal
from tournaments.cli.play import play
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
app.command()(deal)
app.command()(play)
app.command()(verify)
app.command()(serve)
app.command()(conformance)
app.command()(watch)
app.add_typer(seed_app, name="seed")
app.add_typer(match_app, name="match")
app.add_typer(bench_app, name="bench")
app.add_typer(tournament_app, name="tournament")
