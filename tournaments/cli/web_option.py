"""``--web HOST:PORT`` of ``tavolo tournament run`` and ``tavolo serve``: the live view.

The web stack (starlette, uvicorn) is imported only when ``--web`` is given, so that every
other command starts as fast as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tournaments.cli.common import fail

if TYPE_CHECKING:
    from tournaments.web.live_view import LiveView


def open_live_view(web: str, *, db: Path | None = None, total_games: int = 0) -> LiveView:
    """The live view bound on ``--web``'s address (not serving yet); a bad value or a busy
    port is one error line."""
    from tournaments.web.live_view import LiveView, LiveViewError, parse_web

    try:
        return LiveView(parse_web(web), db=db, total_games=total_games)
    except LiveViewError as exc:
        fail(str(exc))


def start_live_view(view: LiveView, heading: str, subtitle: str, *, public_names: bool) -> None:
    """Serve the page, then say where: one line, ``live view: http://HOST:PORT/``."""
    from tournaments.web.live_view import LiveViewError

    try:
        view.start(heading, subtitle, public_names=public_names)
    except LiveViewError as exc:
        view.stop()
        fail(str(exc))
    except KeyboardInterrupt:
        view.stop("interrupted")
        fail("interrupted before anything was played", 130)
    typer.echo(f"live view: {view.url}")
