"""``tavolo replay``: one record file as a page that replays it (docs/replay-viewer.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from referee.records import RecordError, verify_file
from tournaments.cli.common import fail


def replay(
    file: Annotated[Path, typer.Argument(help="A game record (JSON Lines): one game or a match.")],
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="The page to write; default: FILE with .html."),
    ] = None,
) -> None:
    """Write one self-contained HTML page that replays a record, card by card.

    The record is verified first, as `tavolo verify` does; a record that fails is not
    shown. The page needs no network and no other file: open it in any browser.
    """
    # Here, not at the top: jinja2 and the pages load only for the command that needs them.
    from tournaments.web.replay_page import replay_page

    if not file.is_file():
        fail(f"{file}: no such file")  # a mistake in the command: exit 2, as everywhere
    try:
        done = verify_file(file)
    except RecordError as exc:
        fail(str(exc), 1)
    out = output if output is not None else file.with_suffix(".html")
    if out.resolve() == file.resolve():
        fail(f"{out}: is the record itself; give another -o", 1)
    try:
        lines = file.read_bytes().decode("utf-8").split("\n")[:-1]
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{file}: cannot read: {exc}", 1)
    header = json.loads(lines[0])
    games = len(done.outcomes)
    what = f"{header['game']}, {games} game{'s' if games > 1 else ''}"
    page = replay_page(
        lines,
        title=f"Replay of {file.name} ({what})",
        crumbs=[(file.name, None)],
        assets=None,
        source=file.name,
    )
    try:
        out.write_text(page, encoding="utf-8", newline="\n")
    except OSError as exc:
        fail(f"{out}: cannot write: {exc.strerror}", 1)
    typer.echo(f"replay of {file} ({done.lines} lines, {what}): {out}")
