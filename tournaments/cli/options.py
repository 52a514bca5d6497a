"""The options several commands share, each defined once, and their shared checks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from referee.engine.registry import presets
from referee.match.config import Limits
from referee.sandbox.bwrap import SandboxMode
from tournaments.cli.common import fail


def at_least(minimum: int) -> Callable[[typer.CallbackParam, int | None], int | None]:
    """An option's callback: a clean exit, ``--NAME must be M or more, got V``, for a value
    below ``minimum`` (None, the option left out, passes)."""

    def check(param: typer.CallbackParam, value: int | None) -> int | None:
        if value is not None and value < minimum:
            fail(f"{param.opts[0]} must be {minimum} or more, got {value}")
        return value

    return check


def _either(names: list[str]) -> str:
    return f"{', '.join(names[:-1])} or {names[-1]}"


GAME_HELP = f"Game preset: {_either(list(presets()))}."
RULE_HELP = "Set a rule knob, as knob=value; repeat for several."
GameOption = Annotated[str, typer.Option(help=GAME_HELP)]
RuleOption = Annotated[list[str] | None, typer.Option(help=RULE_HELP)]

DEALS_HELP = "Deals per game; without it each game goes to the target."
DealsOption = Annotated[int | None, typer.Option(help=DEALS_HELP, callback=at_least(1))]
DEADLINE_HELP = "Time for each decision."
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
QuietOption = Annotated[bool, typer.Option(help="No progress bar.")]

SANDBOX_HELP = (
    "How bot processes are confined: bwrap (a bubblewrap sandbox each, the default) or off. "
    "A manifest may ask for off; this option overrides it."
)
SandboxOption = Annotated[SandboxMode | None, typer.Option(help=SANDBOX_HELP)]

DEFAULT_CONNECT_TIMEOUT = Limits.connect_timeout
CONNECT_HELP = "Seconds each bot has to connect when its match starts."

TlsCertOption = Annotated[
    Path | None,
    typer.Option(help="PEM certificate: serve TLS to remote bots and clients (with --tls-key)."),
]
TlsKeyOption = Annotated[Path | None, typer.Option(help="PEM private key of --tls-cert.")]
TlsCaOption = Annotated[
    Path | None, typer.Option(help="PEM root certificate of a referee that serves TLS.")
]
RefereeOption = Annotated[str, typer.Option(help="The referee, host:port.")]

WebOption = Annotated[
    str | None,
    typer.Option(
        metavar="HOST:PORT",
        help="Serve the live view on HOST:PORT (PORT or :PORT alone binds 127.0.0.1; port 0 "
        "picks a free one): the tables card by card from the public spectator stream "
        "(docs/live-view.md).",
    ),
]

BookOption = Annotated[
    Path | None,
    typer.Option(
        help="A deal book (JSON Lines, each line as `tavolo deal --json` prints it): deal its "
        "lines in order instead of seeded deals."
    ),
]
HandsOption = Annotated[
    str | None,
    typer.Option(
        help="Play one deal from these hands: seats split by ';', cards by ',' "
        "(e.g. '3D,AD,...;...;...;...'). Needs --dealer."
    ),
]

DbOption = Annotated[Path, typer.Option(help="The tournament's SQLite database.")]
ConcurrencyOption = Annotated[
    int | None,
    typer.Option(
        help="Matches at once (default: the file's, or one per core).", callback=at_least(1)
    ),
]
ShardsOption = Annotated[
    int | None,
    typer.Option(
        help="Referee processes playing the matches (default: one per core); 1 plays them all "
        "in this process. Matches with remote entries are always played here (docs/cluster.md).",
        callback=at_least(1),
    ),
]
ClusterOption = Annotated[
    str | None,
    typer.Option(
        metavar="tcp://HOST:PORT|local:N",
        help="Play the duplicate sets on a Dask cluster's workers (docs/cluster.md): "
        "its scheduler's address, or local:N for N workers on this machine. Matches "
        "with remote entries play here.",
    ),
]
ListenOption = Annotated[
    str, typer.Option(help="The referee's address, e.g. 0.0.0.0:50051 for remote bots.")
]
AdvertiseOption = Annotated[
    str | None,
    typer.Option(
        help="host:port remote bots are told to connect to (default: the listen address; "
        "for a wildcard one, this host's name)."
    ),
]
WideOption = Annotated[
    bool,
    typer.Option(
        help="Every column (LOS, W-D-L, points, opponents, think times), not the 80-column table."
    ),
]
PublicNamesOption = Annotated[
    bool,
    typer.Option(
        help="Show entry names to spectators (tavolo watch, the live view), and so to anyone "
        "who reaches the referee's listener, remote bots included; without it each table is "
        "shown with its entries left out."
    ),
]
