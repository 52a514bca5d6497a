"""The ``tavolo`` command line."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

import typer
import typer.core

from tournaments.cli.arena import arena_app
from tournaments.cli.bench import bench_app
from tournaments.cli.conformance import conformance
from tournaments.cli.dataset import dataset_app
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


def _help_as_click_shows_it() -> None:
    """typer 0.29 prints ``<bool>`` beside every flag, as if it took a value, and a required
    argument as ``{entries}...``: a flag is shown bare and an argument as ``ENTRIES...``,
    as click shows them (tests/test_cli_help.py holds this)."""
    shown = typer.core.TyperOption.display_type_rich

    def flag_type(self: typer.core.TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    def usage_name(self: typer.core.TyperArgument) -> str:
        name = self.metavar or (self.name or "").upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    setattr(typer.core.TyperOption, "display_type_rich", flag_type)  # noqa: B010
    setattr(typer.core.TyperArgument, "_usage_display_name", usage_name)  # noqa: B010


_help_as_click_shows_it()

app = typer.Typer(
    name="tavolo",
    no_args_is_help=True,
    add_completion=False,
    help="Referee and tournament harness for Tressette and its family.",
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
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
app.add_typer(arena_app, name="arena")
app.add_typer(dataset_app, name="dataset")
