"""The referee's own Python work per decision, without gRPC: a request built as messages
and serialised (``protocol.fill_decision``, the path before the wire format) or written as
wire bytes (``protocol.encode_decision``, what the referee sends), the action applied,
and the engine's events turned into what each seat hears (``protocol.heard``).

Run as ``python -m tournaments.benchmarks.request_work [GAMES]``: seeded Tressette games
of three deals, random legal actions, every request compact after the seat's last one,
as the Python SDK asks; it prints microseconds per decision.
"""

from __future__ import annotations

from referee import grpc_transport  # noqa: F401 - first: tavolo_bot (its proto) loads grpc

# isort: split
import random
import sys
import time

from referee.engine.events import Dealt
from referee.engine.registry import new_game, preset
from referee.protocol import Sent, encode_decision, encode_response, fill_decision, heard
from tavolo_bot.proto import referee_pb2 as pb


def run(games: int, *, wire: bool) -> dict[str, float]:
    """Microseconds per decision of each part, over ``games`` games."""
    rules = preset("tressette")
    totals = {"request": 0.0, "apply": 0.0, "events": 0.0}
    decisions = 0
    rng = random.Random(1)
    for g in range(games):
        state = new_game(rules, f"request-work-{g}", deals=3, record=True)
        assert state.events is not None
        sent: list[Sent | None] = [None] * rules.players
        outbox: list[list[pb.Event]] = [[] for _ in range(rules.players)]
        done = 0
        hands: tuple[tuple[str, ...], ...] = ()
        while state.outcome is None:
            seat = state.current_player()
            assert seat is not None
            legal = state.legal_actions()
            events, outbox[seat] = outbox[seat], []
            t0 = time.perf_counter()
            if wire:
                body, sent[seat] = encode_decision(state, seat, legal, g + 1, sent[seat])
                encode_response(
                    events, request_id=decisions + 1, deadline_ms=200, time_bank_ms=1000,
                    attempts_left=3, body=body,
                )  # fmt: skip
            else:
                response = pb.PlayResponse(events=events)
                request = response.request
                request.request_id = decisions + 1
                request.deadline_ms = 200
                request.time_bank_ms = 1000
                request.attempts_left = 3
                sent[seat] = fill_decision(request, state, seat, legal, g + 1, sent[seat])
                response.SerializeToString()
            t1 = time.perf_counter()
            state.apply_action(rng.choice(legal))
            t2 = time.perf_counter()
            for event in state.events[done:]:
                if isinstance(event, Dealt):
                    hands = event.hands
                said = heard(rules.family, event, hands)
                for seat, box in enumerate(outbox):
                    told = said.each[seat] if said.each else said.everyone
                    if told is not None:
                        box.append(told)
            done = len(state.events)
            t3 = time.perf_counter()
            totals["request"] += t1 - t0
            totals["apply"] += t2 - t1
            totals["events"] += t3 - t2
            decisions += 1
    return {k: v / decisions * 1e6 for k, v in totals.items()}


def main(argv: list[str]) -> None:
    games = int(argv[0]) if argv else 60
    for wire in (False, True, False, True):
        parts = run(games, wire=wire)
        figures = ", ".join(f"{k} {v:.1f}" for k, v in parts.items())
        print(f"{'wire bytes' if wire else 'messages  '}: {figures} µs per decision")


if __name__ == "__main__":
    main(sys.argv[1:])
