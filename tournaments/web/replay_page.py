"""The replay viewer's page: a record's lines, embedded as they are, and replay.js to read them.

The page does not interpret the record: ``assets/replay.js`` parses each line itself
(docs/records.md), so the viewer is always in step with the format, and a record it cannot
read gets a message in the page naming the line (docs/replay-viewer.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from tournaments.web.pages import render, script_json

STYLES = ("tavolo.css", "replay.css")
SCRIPTS = ("replay.js",)
ASSETS = (*STYLES, *SCRIPTS)
"""The asset files a replay page needs, for a report to copy into its assets folder."""


def replay_page(
    lines: Sequence[str],
    *,
    title: str,
    crumbs: Sequence[tuple[str, str | None]],
    assets: str | None,
    source: str,
) -> str:
    """A whole HTML page replaying the record ``lines`` (a game or a match: one or more
    games, each from its `game` line; text lines without their newline).

    ``assets``: the relative URL of the folder holding the assets (replay.js, replay.css,
    tavolo.css), or None to inline them so the page stands alone; ``source``: the name
    shown for where the lines came from. The same arguments always give the same text.
    """
    return render(
        "replay.html.j2",
        title=title,
        crumbs=list(crumbs),
        styles=list(STYLES),
        scripts=list(SCRIPTS),
        assets=assets,
        source=source,
        record_json=script_json(list(lines)),
    )
