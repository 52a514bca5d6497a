"""A scripted bot: plays legal actions, and misbehaves on purpose when told to.

    TAVOLO_REFEREE=host:port TAVOLO_TICKET=... python tests/bots/scripted.py --mode MODE

It speaks the protocol directly with grpcio and the generated ``tavolo_bot.proto`` (not
the SDK's runner), so a test controls every byte it sends. Each process appends everything
it receives and sends, and how its stream ended, to ``<--log-dir>/<pid>.jsonl`` (one JSON
object a line: ``{"t": "recv" | "sent" | "status" | "start", ...}``, messages as base64 of
their bytes). Tests can also run a bot in their own event loop with :func:`run_bot`.

Modes (the misbehaviour happens on slot ``--slot`` only, if given, from the
``--at``-th request that slot receives, ``--times`` times):

- ``play``: legal actions only (random, from ``--seed``, else ``TAVOLO_SEED``);
- ``not-in-hand``, ``no-follow``, ``false-volo``, ``false-striscio``,
  ``busso-following``, ``signal``, ``false-declaration``: one illegal action of that
  kind (at the first request where one can be built), then a legal one;
- ``stale``: answers the previous request again, then the open one;
- ``late``: sleeps ``--sleep-ms`` before answering;
- ``silent``: stays connected and never answers;
- ``exit``: writes ``--say`` to stderr and exits with status 3 instead of answering;
- ``oversize``: sends a message larger than the referee accepts;
- ``hello-again``: sends a second Hello instead of answering;
- ``flood``: sends ``--count`` (40) empty messages right after the Welcome;
- ``flood-stale``: sends ``--count`` (40) answers to a request id that was never asked,
  and nothing else for that request (the flood, not the late answer, must end it);
- ``every-id``: for one decision, tries every action id from 0 to 345 and 2**32 - 1
  that is not legal, one after the other (each refusal brings the request again), then
  a legal one;
- ``reconnect``: drops its stream instead of answering and comes back with its ticket;
- ``never-connect``: sleeps without ever connecting.

``--once PATH`` misbehaves only if PATH does not exist, and creates it then: a bot that
the referee starts again behaves. ``--connect-delay-ms`` waits that long before
connecting, whatever the mode, and
``--illegal-rate`` makes it try, that often, a card it does not hold before a legal
action, when it is not misbehaving otherwise. ``--say`` text is printed to stdout and
stderr at the start and at every request; with ``--declare`` it makes every
declaration it may.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from google.protobuf.json_format import MessageToDict

from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc

PROTOCOL_VERSION = 1
RANKS = "32AKQJ7654"
SUITS = "DCSB"
ILLEGAL_MODES = (
    "not-in-hand",
    "no-follow",
    "false-volo",
    "false-striscio",
    "busso-following",
    "signal",
    "false-declaration",
)
MODES = (
    "play",
    *ILLEGAL_MODES,
    "stale",
    "late",
    "silent",
    "exit",
    "oversize",
    "hello-again",
    "flood",
    "flood-stale",
    "every-id",
    "reconnect",
    "never-connect",
)
OVERSIZE_BYTES = 70 * 1024
"""Above the referee's 64 KiB limit on a message."""

Log = Callable[[dict[str, Any]], None]


def card_id(name: str) -> int:
    """``"3D"`` -> 0, ``"4B"`` -> 39 (suit * 10 + rank)."""
    return SUITS.index(name[1]) * 10 + RANKS.index(name[0])


def _declarations() -> list[frozenset[int]]:
    """The cards of each declaration id: napoli by suit, tre by rank and missing suit, quattro."""
    out = [frozenset(s * 10 + r for r in range(3)) for s in range(4)]
    for r in range(3):
        out.extend(frozenset(t * 10 + r for t in range(4) if t != s) for s in range(4))
    out.extend(frozenset(t * 10 + r for t in range(4)) for r in range(3))
    return out


DECLARATION_CARDS = _declarations()
DECLARE_BASE = 300


@dataclass
class Options:
    """What the bot does; see the module docstring."""

    mode: str = "play"
    slot: int | None = None
    at: int = 1
    times: int = 1
    sleep_ms: int = 0
    seed: str = ""
    illegal_rate: float = 0.0
    say: str = ""
    connect_delay_ms: int = 0
    declare: bool = False
    count: int = 40
    once: Path | None = None


class Reconnect(Exception):
    """Drop the stream and come back with the same ticket."""


def illegal_action(mode: str, request: pb.DecisionRequest) -> int | None:
    """An action id the rules refuse for the reason ``mode`` names, or None if none fits now."""
    obs = request.observation
    hand = {card_id(c) for c in obs.hand}
    legal = {a.id for a in request.legal_actions}
    plain = sorted(
        a.id
        for a in request.legal_actions
        if a.kind == pb.ACTION_KIND_PLAY and a.signal == pb.SIGNAL_UNSPECIFIED
    )

    def rest(card: int) -> set[int]:
        return {c for c in hand if c // 10 == card // 10 and c != card}

    if mode == "not-in-hand":
        return min(set(range(40)) - hand)
    if mode == "no-follow":
        if obs.phase != pb.PHASE_PLAY or not obs.trick:
            return None
        led = card_id(obs.trick[0].action.card) // 10
        if not any(c // 10 == led for c in hand):
            return None
        other = sorted(c for c in hand if c // 10 != led)
        return other[0] if other else None
    if mode == "false-volo":
        options = [c + 80 for c in plain if rest(c) and c + 80 not in legal]
        return options[0] if options else None
    if mode == "false-striscio":
        options = [c + 120 for c in plain if not rest(c) and c + 120 not in legal]
        return options[0] if options else None
    if mode == "busso-following":
        if obs.phase != pb.PHASE_PLAY or not obs.trick or not plain:
            return None
        return plain[0] + 40
    if mode == "signal":
        # A signal that would be true: only the muto rule refuses it.
        return (plain[0] + (120 if rest(plain[0]) else 80)) if plain else None
    if mode == "false-declaration":
        played = {
            card_id(p.action.card)
            for p in [*obs.trick, *(p for t in obs.tricks for p in t.plays)]
            if p.seat == obs.seat
        }
        dealt = hand | played
        for d, cards in enumerate(DECLARATION_CARDS):
            if not cards <= dealt:
                return DECLARE_BASE + d
        return None
    raise ValueError(f"no illegal action for mode {mode!r}")


def _message(kind: str, message: Any) -> dict[str, Any]:
    return {
        "t": kind,
        "time": time.time(),
        "b64": base64.b64encode(message.SerializeToString()).decode("ascii"),
        "msg": MessageToDict(message),
    }


class ScriptedBot:
    """One ticket's bot: the protocol loop and the scripted misbehaviour."""

    def __init__(self, options: Options, log: Log) -> None:
        self.options = options
        self.log = log
        self.rng = random.Random(options.seed or "scripted")
        self.slot: int | None = None
        self.requests = 0
        self.misbehaved = 0
        self.previous: tuple[int, int] | None = None
        self.status: tuple[str, str] | None = None
        self.untried: list[int] | None = None

    def _mine(self) -> bool:
        return self.options.slot is None or self.slot == self.options.slot

    def _due(self) -> bool:
        due = (
            self._mine()
            and self.requests >= self.options.at
            and (self.misbehaved < self.options.times)
        )
        once = self.options.once
        if due and once is not None:
            if once.exists():
                return False
            once.touch()
        return due

    def _legal(self, request: pb.DecisionRequest) -> pb.PlayRequest:
        action = self.rng.choice([a.id for a in request.legal_actions])
        if self.options.declare:
            declarations = [a.id for a in request.legal_actions if a.kind == pb.ACTION_KIND_DECLARE]
            action = declarations[0] if declarations else action
        self.previous = (request.request_id, action)
        return _decision(request.request_id, action)

    async def respond(self, response: pb.PlayResponse) -> list[pb.PlayRequest]:
        """The messages to send after ``response``."""
        mode = self.options.mode
        out: list[pb.PlayRequest] = []
        for event in response.events:
            if event.HasField("welcome"):
                self.slot = event.welcome.slot
                if mode == "flood" and self._mine() and not self.misbehaved:
                    self.misbehaved += 1
                    out.extend(pb.PlayRequest() for _ in range(self.options.count))
        if not response.HasField("request"):
            return out
        request = response.request
        self.requests += 1
        if self.options.say:
            print(self.options.say, flush=True)
            print(self.options.say, file=sys.stderr, flush=True)
        if not self._due() or mode in ("play", "flood"):
            if self.options.illegal_rate and self.rng.random() < self.options.illegal_rate:
                action = illegal_action("not-in-hand", request)
                assert action is not None
                return [*out, _decision(request.request_id, action)]
            return [*out, self._legal(request)]
        if mode in ILLEGAL_MODES:
            action = illegal_action(mode, request)
            if action is None:
                return [*out, self._legal(request)]
            self.misbehaved += 1
            return [*out, _decision(request.request_id, action)]
        if mode == "stale":
            if self.previous is None:
                return [*out, self._legal(request)]
            self.misbehaved += 1
            return [*out, _decision(*self.previous), self._legal(request)]
        self.misbehaved += 1
        if mode == "late":
            await asyncio.sleep(self.options.sleep_ms / 1000)
            return [*out, self._legal(request)]
        if mode == "silent":
            return out
        if mode == "exit":
            print(self.options.say or "scripted bot: exiting on purpose", file=sys.stderr)
            sys.stderr.flush()
            os._exit(3)
        if mode == "oversize":
            big = pb.Hello(ticket="x" * OVERSIZE_BYTES, protocol_version=PROTOCOL_VERSION)
            return [*out, pb.PlayRequest(hello=big)]
        if mode == "hello-again":
            again = pb.Hello(ticket="again", protocol_version=PROTOCOL_VERSION)
            return [*out, pb.PlayRequest(hello=again)]
        if mode == "flood-stale":
            action = request.legal_actions[0].id
            return [*out, *(_decision(0, action) for _ in range(self.options.count))]
        if mode == "every-id":
            legal = {a.id for a in request.legal_actions}
            if self.untried is None:
                self.untried = [*range(346), 2**32 - 1]
            while self.untried and self.untried[0] in legal:
                self.untried.pop(0)
            if self.untried:
                self.misbehaved -= 1  # the same decision goes on
                return [*out, _decision(request.request_id, self.untried.pop(0))]
            self.untried = None
            return [*out, self._legal(request)]
        if mode == "reconnect":
            raise Reconnect
        raise ValueError(f"unknown mode {mode!r}")

    async def session(self, address: str, ticket: str) -> bool:
        """One stream from Hello to its end; True to reconnect.

        Messages go out through a request iterator, so a message the referee no longer
        reads (it has ended the stream) cannot hide the status it ended the stream with.
        """
        outgoing: asyncio.Queue[pb.PlayRequest | None] = asyncio.Queue()

        async def requests() -> AsyncIterator[pb.PlayRequest]:
            while (message := await outgoing.get()) is not None:
                yield message

        async with grpc.aio.insecure_channel(address) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            call = stub.Play(requests())
            hello = pb.Hello(ticket=ticket, protocol_version=PROTOCOL_VERSION)
            outgoing.put_nowait(pb.PlayRequest(hello=hello))
            try:
                while True:
                    response = await call.read()
                    if response is grpc.aio.EOF:
                        break
                    self.log(_message("recv", response))
                    try:
                        messages = await self.respond(response)
                    except Reconnect:
                        self.log({"t": "drop", "time": time.time()})
                        call.cancel()
                        return True
                    for message in messages:
                        outgoing.put_nowait(message)
                        self.log(_message("sent", message))
            except grpc.aio.AioRpcError:
                pass
            finally:
                outgoing.put_nowait(None)
            code = await call.code()
            details = await call.details()
            self.status = (code.name, details or "")
            self.log({"t": "status", "code": code.name, "details": details or ""})
            return False


def _decision(request_id: int, action_id: int) -> pb.PlayRequest:
    return pb.PlayRequest(decision=pb.Decision(request_id=request_id, action_id=action_id))


async def run_bot(address: str, ticket: str, options: Options, log: Log) -> ScriptedBot:
    """Play ``ticket`` to the end of its stream (reconnecting when scripted to)."""
    bot = ScriptedBot(options, log)
    await asyncio.sleep(options.connect_delay_ms / 1000)
    log({"t": "start", "ticket": ticket, "seed": os.environ.get("TAVOLO_SEED"), "pid": os.getpid()})
    while await bot.session(address, ticket):
        await asyncio.sleep(0.2)
    return bot


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="scripted.py")
    parser.add_argument("--mode", choices=MODES, default="play")
    parser.add_argument("--slot", type=int)
    parser.add_argument("--at", type=int, default=1)
    parser.add_argument("--times", type=int, default=1)
    parser.add_argument("--sleep-ms", type=int, default=0)
    parser.add_argument("--seed", default="")
    parser.add_argument("--illegal-rate", type=float, default=0.0)
    parser.add_argument("--say", default="")
    parser.add_argument("--connect-delay-ms", type=int, default=0)
    parser.add_argument("--declare", action="store_true")
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--log-dir", type=Path)
    parser.add_argument("--once", type=Path)
    args = parser.parse_args(argv)
    if args.mode == "never-connect":
        time.sleep(60)
        return 0
    log_file = None
    if args.log_dir is not None:
        args.log_dir.mkdir(parents=True, exist_ok=True)
        log_file = open(args.log_dir / f"{os.getpid()}.jsonl", "a", encoding="utf-8")  # noqa: SIM115

    def log(item: dict[str, Any]) -> None:
        if log_file is not None:
            log_file.write(json.dumps(item) + "\n")
            log_file.flush()

    options = Options(
        mode=args.mode,
        slot=args.slot,
        at=args.at,
        times=args.times,
        sleep_ms=args.sleep_ms,
        seed=args.seed or os.environ.get("TAVOLO_SEED", ""),
        illegal_rate=args.illegal_rate,
        say=args.say,
        connect_delay_ms=args.connect_delay_ms,
        declare=args.declare,
        count=args.count,
        once=args.once,
    )
    if options.say:
        print(options.say, flush=True)
        print(options.say, file=sys.stderr, flush=True)
    bot = asyncio.run(
        run_bot(os.environ["TAVOLO_REFEREE"], os.environ["TAVOLO_TICKET"], options, log)
    )
    return 0 if bot.status is not None and bot.status[0] == "OK" else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
