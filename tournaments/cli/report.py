"""``tavolo tournament report``: the tournament as a static site (tournaments/web)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tournaments.cli.common import fail
from tournaments.cli.options import DbOption
from tournaments.ratings import RatingsError
from tournaments.storage import StorageError, Store


def report(
    out: Annotated[
        Path, typer.Argument(help="A new or empty folder, or an earlier report to replace.")
    ],
    db: DbOption,
    think_times: Annotated[
        bool,
        typer.Option(
            help="Show think times, and keep them in the records. Without them two runs of "
            "the same tournament give the same report, byte for byte."
        ),
    ] = True,
) -> None:
    """Write a static site of the tournament: standings, crosstable, rating progress,
    fairness, and a page for every entry, match and game, with a replay of each game.

    It opens from file:// with no server and no network; publish the folder as it is.
    """
    # Here, not at the top: jinja2 and the pages load only for the command that needs them.
    from tournaments.web.report_site import ReportError, check_folder, write_report

    try:
        check_folder(out)
        store = Store.open_for_reading(db)
    except (ReportError, StorageError) as exc:
        fail(str(exc))
    with store:
        try:
            done = write_report(store, out, think_times=think_times)
        except (ReportError, StorageError) as exc:
            fail(str(exc))
        except RatingsError as exc:
            fail(f"cannot rate the entries: {exc}")
        except OSError as exc:
            fail(f"cannot write the report to {out}: {exc.strerror or exc}", 1)
    typer.echo(
        f"{out}: {done.pages} pages and {done.records} game records; open "
        f"{(out / 'index.html').resolve().as_uri()}"
    )
