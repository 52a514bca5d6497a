"""``tavolo watch``: list a referee's tables, or follow one as a spectator (public events only)."""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - it chooses gRPC's transport: first

# isort: split
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import grpc
import typer
from google.protobuf.json_format import MessageToJson
from tabulate import tabulate

from referee.families.tressette.actions import SIGNAL_NAMES
from referee.service.spectators import SPECTATOR_TOKEN_KEY
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc
from tournaments.cli.common import fail, referee_channel
from tournaments.cli.options import RefereeOption, TlsCaOption


def _signal_words(signal: int) -> str:
    # The protocol's Signal values are the engine's signal indexes (referee/protocol.py).
    if not 0 <= signal < len(SIGNAL_NAMES):
        return f"signal {signal}"
    return SIGNAL_NAMES[signal].replace("-", " ")


def _dash(values: Iterable[int]) -> str:
    """Scores as people write them, "7-4"; with a negative one, "-2 / +4 / -2"."""
    numbers = list(values)
    if all(v >= 0 for v in numbers):
        return "-".join(str(v) for v in numbers)
    return " / ".join(f"{v:+d}" for v in numbers)


def event_lines(event: pb.Event) -> list[str]:
    """A spectator event as text: one line, and the revealed hands after a scored deal.

    The events and their fields per family: docs/records.md, "What the views read".
    """
    which = event.WhichOneof("event")
    if which == "card_played":
        e = event.card_played
        signal = _signal_words(e.signal)
        return [f"seat {e.seat} plays {e.card}" + (f" {signal}" if signal else "")]
    if which == "trick_won":
        return [f"trick {event.trick_won.trick} to seat {event.trick_won.winner}"]
    if which == "declared":
        d = event.declared
        return [f"seat {d.seat} declares {d.declaration} ({' '.join(d.cards)}): {d.points} points"]
    if which == "declarations_ended":
        return [f"seat {event.declarations_ended.seat} has nothing more to declare"]
    if which == "called_out":
        out = event.called_out
        verdict = "right" if out.correct else "wrong"
        return [f"seat {out.seat} calls out with {out.claimed} points claimed: {verdict}"]
    if which == "card_drawn":
        return [f"seat {event.card_drawn.seat} draws {event.card_drawn.card}"]
    if which == "bid_made":
        return [f"seat {event.bid_made.seat} bids {event.bid_made.bid}"]
    if which == "card_called":
        c = event.card_called
        where = "in the monte" if c.holder < 0 else f"held by seat {c.holder}"
        return [f"seat {c.seat} calls {c.card} ({where})"]
    if which == "monte_split":
        m = event.monte_split
        return [f"seat {m.seat} takes {' '.join(m.take) or 'nothing'} from the monte"]
    if which == "deal_scored":
        return _scored(event.deal_scored)
    if which == "game_over":
        g = event.game_over
        who = "a draw" if g.winner < 0 else f"side {g.winner} wins"
        forfeit = f", seat {g.forfeit_seat} forfeited" if g.forfeit_seat >= 0 else ""
        return [f"game {g.game} over ({g.termination}{forfeit}): {who}, totals {_dash(g.totals)}"]
    return [f"{which} (not an event spectators get)"]


def _scored(s: pb.DealScored) -> list[str]:
    if s.contract:
        made = "made it" if s.success else "failed"
        cappotto = ", cappotto" if s.cappotto >= 0 else ""
        head = (
            f"deal {s.deal} scored: {s.contract} by seat {s.soloist}, {made}{cappotto}; "
            f"payouts {_dash(s.points)}, totals {_dash(s.totals)}"
        )
    elif s.soloist < 0:  # a Calabresella auction where everyone passed
        head = f"deal {s.deal}: everyone passed, the same dealer deals again"
    elif not s.thirds:  # Briscola counts whole card points, and a deal won scores 1
        won = next((f"side {k} wins the deal" for k, p in enumerate(s.points) if p), "a draw")
        head = (
            f"deal {s.deal} scored: cards {_dash(s.card_points)} of 120, {won}; "
            f"deals won {_dash(s.totals)}"
        )
    else:
        cappotto = f", cappotto by side {s.cappotto}" if s.cappotto >= 0 else ""
        head = (
            f"deal {s.deal} scored: points {_dash(s.points)} (cards {_dash(s.card_points)}, "
            f"declarations {_dash(s.declarations)}, last trick seat {s.last_trick}{cappotto}), "
            f"totals {_dash(s.totals)}"
        )
    lines = [head]
    lines += [f"  seat {i}: {' '.join(h.cards)}" for i, h in enumerate(s.hands)]
    if s.set_aside:
        lines.append(f"  set aside: {' '.join(s.set_aside)}")
    return lines


def watch(
    table: Annotated[
        str | None,
        typer.Argument(help="The table to follow (its id from the list); none lists the tables."),
    ] = None,
    referee: RefereeOption = "127.0.0.1:50051",
    tls_ca: TlsCaOption = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            help="The spectator token a tournament with remote entrants writes (NAME.spectator)."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One WatchResponse per line, as protobuf JSON.")
    ] = False,
) -> None:
    """List the tables a referee is playing, or follow one as a spectator.

    A spectator gets public events only: cards played with their signals, tricks,
    declarations, bids, and each deal's score with every hand once the deal is over. A
    finished table replays from the start; the command ends when the match does.
    """
    metadata: list[tuple[str, str]] = []
    if token_file is not None:
        try:
            metadata.append((SPECTATOR_TOKEN_KEY, token_file.read_text(encoding="utf-8").strip()))
        except OSError as exc:
            fail(f"--token-file {token_file}: cannot read: {exc.strerror}")
    with referee_channel(referee, tls_ca) as channel:
        stub = pb_grpc.SpectatorServiceStub(channel)  # type: ignore[no-untyped-call]
        try:
            if table is None:
                listed = stub.ListTables(pb.ListTablesRequest(), timeout=10, metadata=metadata)
                _list(listed, as_json)
                return
            for response in stub.Watch(pb.WatchRequest(table_id=table), metadata=metadata):
                if as_json:
                    typer.echo(_json(response))
                else:
                    for line in event_lines(response.event):
                        typer.echo(line)
        except grpc.RpcError as exc:
            code, details = exc.code(), exc.details()
            if code == grpc.StatusCode.NOT_FOUND:
                fail(f"{referee}: {details} (tavolo watch --referee {referee} lists the tables)", 1)
            fail(f"{referee}: {code.name}: {details}", 1)
        except KeyboardInterrupt:
            raise typer.Exit(130) from None


def _json(message: pb.WatchResponse | pb.ListTablesResponse) -> str:
    # The form docs/protocol.md shows: .proto field names, and fields at their defaults.
    return MessageToJson(
        message,
        indent=None,
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
    )


def _list(response: pb.ListTablesResponse, as_json: bool) -> None:
    if as_json:
        typer.echo(_json(response))
        return
    if not response.tables:
        typer.echo("no tables are being played")
        return
    rows = [
        [t.table_id, t.game or "-", ", ".join(t.entries) or "(names not public)"]
        for t in response.tables
    ]
    typer.echo(tabulate(rows, headers=["table", "game", "entries"]))
