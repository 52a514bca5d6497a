"""``tavolo dataset export``: game records as Parquet, a row per decision (docs/research.md)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from referee.records import RecordError
from tournaments.cli.common import fail
from tournaments.cli.options import QuietOption
from tournaments.storage import StorageError

if TYPE_CHECKING:
    from tournaments.dataset_export import Exported

dataset_app = typer.Typer(
    no_args_is_help=True,
    help="Datasets for research: game records as Parquet tables, a row per decision.",
)

RESEARCH_EXTRA = "pip install 'tavolo[research]'"


@dataset_app.command("export")
def export(
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="Game record files (JSON Lines); none with --db.", show_default=False),
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(help="A tournament's SQLite database: every finished game's record."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="A new or empty folder for the dataset."),
    ] = None,
    licence: Annotated[
        str | None,
        typer.Option(
            help="The dataset's licence, e.g. CC-BY-4.0, written in its datasheet (Tavolo "
            "has no licence file to give it one)."
        ),
    ] = None,
    dense: Annotated[
        bool,
        typer.Option(
            help="Write each observation whole, as a fixed-size list of floats (`obs`), "
            "instead of its non-zero entries (`obs_indices`, `obs_values`)."
        ),
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Write the decisions of game records as Parquet, with a datasheet.

    Each record is replayed through the engine and verified as `tavolo verify` does; at
    each seat's action a row holds the seat's observation (the shared tensor encoding),
    its legal actions, the action, its think time and the game's final return for the
    seat. The folder gets decisions.parquet, games.parquet, datasheet.md and
    datasheet.json.
    """
    if (db is None) == (not files):
        fail("give record files or --db DATABASE (one of them)")
    if output is None:
        fail("--output FOLDER is required: a new or empty folder for the dataset")
    if licence is None or not licence.strip():
        fail(
            "--licence is required: name the dataset's licence (e.g. --licence CC-BY-4.0); "
            "Tavolo has no licence file to give it one"
        )
    given = files or []
    for path in given:
        if not path.is_file():
            fail(f"{path}: no such file")
    seen = {p.resolve() for p in given}
    if len(seen) < len(given):
        fail("a record file is given twice")
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        fail(f"{output} is not an empty folder: a dataset goes into a new or empty one")
    try:
        # Here, not at the top: pyarrow and numpy are the research extra's, and load only
        # for the command that needs them.
        from tournaments.dataset_export import export_dataset, records_in
    except ModuleNotFoundError as exc:
        fail(f"tavolo dataset needs {exc.name}, of the research extra: {RESEARCH_EXTRA}")
    command = ["tavolo", "dataset", "export", *map(str, given)]
    if db is not None:
        command += ["--db", str(db)]
    command += ["--output", str(output), "--licence", licence] + (["--dense"] if dense else [])
    made = not output.exists()
    try:
        total = records_in(db) if db is not None else len(given)
        output.mkdir(parents=True, exist_ok=True)
        console = Console(stderr=True)
        with Progress(
            TextColumn("records"), BarColumn(), MofNCompleteColumn(), console=console,
            disable=quiet or not console.is_terminal, transient=True,
        ) as progress:  # fmt: skip
            task = progress.add_task("records", total=total)
            done = export_dataset(
                output, files=given, db=db, licence=licence.strip(),
                command=shlex.join(command), dense=dense,
                progress=lambda n: progress.update(task, completed=n),
            )  # fmt: skip
    except (StorageError, RecordError, OSError) as exc:
        if made and output.is_dir() and not any(output.iterdir()):
            output.rmdir()  # made for this dataset, which is not to be: nothing is left
        if isinstance(exc, StorageError):
            fail(str(exc))
        if isinstance(exc, RecordError):
            fail(str(exc), 1)
        fail(f"cannot write the dataset to {output}: {exc.strerror or exc}", 1)
    _report(done)


def _report(done: Exported) -> None:
    s = done.summary
    rate = s.decisions / done.seconds if done.seconds > 0 else 0.0
    typer.echo(
        f"{done.folder}: {s.decisions:,} decisions of {s.games:,} games from {s.records:,} "
        f"records in {done.seconds:.1f} s ({rate:,.0f} decisions/s); datasheet "
        f"{done.folder / 'datasheet.md'}"
    )
