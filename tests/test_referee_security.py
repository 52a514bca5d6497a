"""What a bot (and a spectator) may learn from a real referee, and what it may do.

Several full matches are played at once on one real referee between recording bots
(``tests/bots/scripted.py`` in bot processes started from ``.toml`` manifests, so the
entries have unusual names). Every message each process received is kept, byte for byte,
and checked against the match records:

- a ticket opens one slot: each GameStarted.seat is the slot's seat in the seating, and
  every DecisionRequest is for that seat, with that seat's hand;
- while a deal is open, no message to a seat holds a card that is, at that moment, in
  another seat's hand (or the widow) and not yet played, except cards shown by public
  declarations; the hands are revealed only in DealScored;
- HandDealt holds the receiver's own cards only;
- no bot receives an entry's name, a ticket, or any text a bot wrote.

The matches use ``call_out`` and ``declare_before_first_card`` rules, illegal actions and
a late answer under ``on_fault=random``, so that every event type a bot can receive
occurs, and the test checks that it did.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf.message import Message

from referee.engine.cards import CARD_NAMES, cards_of
from referee.engine.deals import deal_cards
from referee.engine.registry import presets
from referee.engine.rules import Rules
from referee.entries import parse_entry
from referee.families.tressette.actions import parse_action
from referee.match.faults import FaultPolicy
from referee.service.server import Referee
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc
from tests.bots.harness import (
    PUBLIC_EVENTS,
    BotLog,
    Table,
    limits,
    manifest,
    play,
    read_logs,
    run,
    serving,
)

CALABRESELLA_EVENTS = {"bid_made", "card_called", "monte_split", "card_drawn"}
"""Checked by tests/test_calabresella_protocol.py and tests/test_tressette_a_due.py, whose
hands change as their rules say (monte, swaps, draws)."""
KEY_EVENTS = {"key_accepted"}
"""Sent only to a stream opened with an entrant key: tests/test_entrant_keys.py."""
EVENT_TYPES = (
    {f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["event"].fields}
    - CALABRESELLA_EVENTS
    - KEY_EVENTS
)
CARD = re.compile(r"(?<![0-9A-Za-z])([32AKQJ7654][DCSB])(?![0-9A-Za-z])")
SPECTATOR_EVENTS = {
    "declared",
    "card_played",
    "trick_won",
    "deal_scored",
    "game_over",
    "called_out",
    "declarations_ended",
}
"""The public events a table publishes to spectators."""

NAMES = (
    "Quokka·Zebra·7Ω",
    "Nachtigall_∑_42",
    "Wombat~Xylophon~9",
)
"""Entry names no message to a bot may hold."""
DEADLINE_MS = 1000
"""Fifteen bot processes play at once here: a roomier deadline than the fault tests'."""


@dataclass
class Played:
    """A match that was played for these tests, with what each of its bots received."""

    table: Table
    logs: dict[int, BotLog]
    names: tuple[str, ...]
    canaries: tuple[str, ...]


def canary(name: str) -> str:
    return f"canary-text-of-{name}-written-to-stdout-and-stderr"


async def recorded_match(
    referee: Referee,
    folder: Path,
    *,
    rules: Rules,
    seed: str,
    deals: int,
    extra: dict[int, tuple[str | int, ...]] | None = None,
    on_fault: FaultPolicy = FaultPolicy.FORFEIT,
) -> Played:
    """A match of recording bots, one entry per side, with unusual names."""
    names = NAMES[: rules.sides]
    entries = []
    for e, name in enumerate(names):
        args: tuple[str | int, ...] = ("--say", canary(name), "--illegal-rate", "0.1")
        mode = "play"
        if extra and e in extra:
            mode, *rest = extra[e]
            args += tuple(rest)
        entries.append(manifest(folder / "manifests", name, str(mode), folder / "logs", *args))
    table = await play(
        referee,
        tuple(entries),
        folder / "record.jsonl",
        rules=rules,
        seed=seed,
        deals=deals,
        limits=limits(on_fault=on_fault, deadline_ms=DEADLINE_MS),
    )
    assert table.match.names == list(names)
    return Played(table, read_logs(folder / "logs"), names, tuple(canary(n) for n in names))


async def all_matches(referee: Referee, tmp_path: Path) -> list[Played]:
    """The matches of the leak tests, played at the same time on one referee."""
    late = DEADLINE_MS + 200
    return list(
        await asyncio.gather(
            recorded_match(
                referee, tmp_path / "call-out", rules=Rules(call_out=True), seed="sec-c", deals=2
            ),
            recorded_match(
                referee,
                tmp_path / "declare-first",
                rules=Rules(declare_before_first_card=True),
                seed="sec-d",
                deals=2,
                extra={0: ("play", "--declare")},
            ),
            recorded_match(
                referee,
                tmp_path / "on-fault-random",
                rules=Rules(),
                seed="sec-r",
                deals=2,
                extra={
                    0: ("late", "--slot", 0, "--at", 2, "--sleep-ms", late),
                    1: ("play", "--declare"),
                },
                on_fault=FaultPolicy.RANDOM,
            ),
            recorded_match(
                referee,
                tmp_path / "a-tre",
                rules=presets()["tressette-a-tre"],
                seed="sec-t",
                deals=1,
            ),
        )
    )


@pytest.fixture(scope="module")
def matches(tmp_path_factory: pytest.TempPathFactory) -> list[Played]:
    folder = tmp_path_factory.mktemp("security")

    async def scenario() -> list[Played]:
        async with serving() as referee:
            return await all_matches(referee, folder)

    return run(scenario())


# -- walking messages ----------------------------------------------------------------------


def strings(message: Message, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string field in a message, with its path (``deal_scored.hands.cards``)."""
    for descriptor, value in message.ListFields():
        where = f"{path}.{descriptor.name}" if path else descriptor.name
        values = value if descriptor.is_repeated else [value]
        for item in values:
            if descriptor.type == descriptor.TYPE_MESSAGE:
                yield from strings(item, where)
            elif descriptor.type == descriptor.TYPE_STRING:
                yield where, item


def cards_in(message: Message, skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(path, card) for every card named anywhere in a message's text."""
    return [
        (where, card)
        for where, text in strings(message)
        if not where.startswith(skip)
        for card in CARD.findall(text)
    ]


def card_of(action_id: int) -> str | None:
    return CARD_NAMES[action_id % 40] if 0 <= action_id < 280 else None


@dataclass
class SeatView:
    """What the checker knows of one slot's deal while reading its messages in order."""

    game: int = 0
    seat: int = -1
    deal: int = 0
    own: frozenset[str] = frozenset()
    hidden: frozenset[str] = frozenset()
    played: frozenset[str] = frozenset()
    declared: frozenset[str] = frozenset()
    named: frozenset[str] = frozenset()
    """Cards the bot itself named in its decisions this deal (echoed in refusals)."""

    @property
    def secret(self) -> frozenset[str]:
        """Cards this seat may not see now."""
        return self.hidden - self.played - self.declared


def deal_lines(table: Table) -> dict[tuple[int, int], dict[str, Any]]:
    return {
        (number, line["deal"]): line
        for number, game in enumerate(table.games(), 1)
        for line in game
        if line["type"] == "deal"
    }


def check_slot(played: Played, slot: int, log: BotLog) -> None:
    """Walk one slot's messages in order; fail at the first thing it should not have seen."""
    table = played.table
    deals = deal_lines(table)
    view = SeatView()
    for kind, message in log.order:
        if kind == "sent":
            if message.HasField("decision"):
                card = card_of(message.decision.action_id)
                if card is not None:
                    view.named = view.named | {card}
            continue
        for event in message.events:
            which = event.WhichOneof("event")
            body = getattr(event, which)
            skip: tuple[str, ...] = ()
            exempt: frozenset[str] = frozenset()
            if which == "welcome":
                assert body.slot == slot
            elif which == "game_started":
                view = SeatView(game=body.game, seat=body.seat)
                assert body.seat == table.seat_of(slot, body.game), "seat is not the seating's"
            elif which == "hand_dealt":
                line = deals[(view.game, body.deal)]
                assert list(body.cards) == line["hands"][view.seat], "HandDealt: not own hand"
                assert body.dealer == line["dealer"]
                others = [c for s, h in enumerate(line["hands"]) if s != view.seat for c in h]
                view = SeatView(
                    game=view.game,
                    seat=view.seat,
                    deal=body.deal,
                    own=frozenset(body.cards),
                    hidden=frozenset(others + line.get("widow", [])),
                )
                skip = ("cards",)
            elif which == "card_played":
                view.played = view.played | {body.card}
            elif which == "declared":
                view.declared = view.declared | set(body.cards)
            elif which == "deal_scored":
                line = deals[(view.game, body.deal)]
                assert [list(h.cards) for h in body.hands] == line["hands"]
                skip = ("hands",)
            elif which in ("action_rejected", "error"):
                exempt = view.named
                if which == "action_rejected" and card_of(body.action_id):
                    exempt = exempt | {card_of(body.action_id)}
            leaks = [
                (where, card)
                for where, card in cards_in(body, skip)
                if card in view.secret and card not in exempt
            ]
            assert not leaks, f"slot {slot} got hidden cards in {which}: {leaks}"
        if message.HasField("request"):
            request = message.request
            obs = request.observation
            assert obs.seat == view.seat, "a request for another seat"
            assert (obs.game, obs.deal) == (view.game, view.deal)
            assert set(obs.hand) == view.own - view.played, "observation hand is not own"
            for play in [*obs.trick, *(p for t in obs.tricks for p in t.plays)]:
                assert play.action.card in view.played
            for declared in obs.declarations:
                assert set(declared.cards) <= view.declared
            for action in request.legal_actions:
                assert not action.card or action.card in view.own - view.played
            leaks = [(w, c) for w, c in cards_in(request) if c in view.secret]
            assert not leaks, f"slot {slot} got hidden cards in a request: {leaks}"


def record_actions(game: list[dict[str, Any]], seat: int) -> list[int]:
    """The action ids the record says ``seat`` took, but those the referee played for it."""
    out = []
    for i, line in enumerate(game):
        if line.get("seat") != seat:
            continue
        before = game[i - 1]
        if before["type"] == "incident" and "the referee played at random" in before["detail"]:
            continue
        if line["type"] == "play":
            signal = line["signal"]
            out.append(parse_action(line["card"] + (f" {signal}" if signal else "")))
        elif line["type"] == "declare":
            out.append(parse_action("declare " + line["declaration"]))
        elif line["type"] in ("end-declarations", "call-out"):
            out.append(parse_action(line["type"]))
    return out


def accepted_decisions(log: BotLog, game: int) -> list[int]:
    """The actions a slot decided in one game that the referee took: legal and in time."""
    current = 0
    legal: dict[int, set[int]] = {}
    decided: list[tuple[int, int]] = []
    stale: set[int] = set()
    for kind, message in log.order:
        if kind == "sent":
            if message.HasField("decision") and current == game:
                decided.append((message.decision.request_id, message.decision.action_id))
            continue
        for event in message.events:
            if event.HasField("game_started"):
                current = event.game_started.game
            elif event.action_rejected.reason == "stale_request":
                stale.add(event.action_rejected.request_id)
        if message.HasField("request"):
            request = message.request
            legal[request.request_id] = {a.id for a in request.legal_actions}
    return [a for r, a in decided if a in legal.get(r, set()) and r not in stale]


# -- the tests -------------------------------------------------------------------------------


def test_every_match_was_recorded_and_verifies(matches: list[Played]) -> None:
    for played in matches:
        played.table.verify()
        slots = played.table.match.rules.players
        assert sorted(played.logs) == list(range(slots))
        for log in played.logs.values():
            assert log.statuses == [("OK", "")]
            assert log.events("match_over")


def test_every_event_type_and_observation_part_was_received(matches: list[Played]) -> None:
    seen = {e.WhichOneof("event") for p in matches for log in p.logs.values() for e in log.events()}
    assert seen == EVENT_TYPES
    requests = [r for p in matches for log in p.logs.values() for r in log.requests()]
    observations = [r.observation for r in requests]
    assert any(o.trick for o in observations)
    assert any(o.tricks for o in observations)
    assert any(o.declarations for o in observations)
    assert any(o.phase == pb.PHASE_DECLARE for o in observations)
    assert {a.kind for r in requests for a in r.legal_actions} == {
        pb.ACTION_KIND_PLAY,
        pb.ACTION_KIND_DECLARE,
        pb.ACTION_KIND_END_DECLARATIONS,
        pb.ACTION_KIND_CALL_OUT,
    }


def test_a_ticket_authorises_its_own_seat_only(matches: list[Played]) -> None:
    for played in matches:
        table = played.table
        games = table.games()
        for slot, log in played.logs.items():
            started = log.events("game_started")
            assert [g.game for g in started] == list(range(1, len(games) + 1))
            for game in started:
                assert game.seat == table.seat_of(slot, game.game)
            seat_by_game = {g.game: g.seat for g in started}
            for request in log.requests():
                assert request.observation.seat == seat_by_game[request.observation.game]
        # Every action the record gives a seat is one the slot seated there decided.
        for number, game in enumerate(games, 1):
            seats = [link.slot for link in table.match.seating(number, number - 1)]
            for seat, slot in enumerate(seats):
                assert sorted(record_actions(game, seat)) == sorted(
                    accepted_decisions(played.logs[slot], number)
                )


def test_no_bot_sees_a_hidden_card(matches: list[Played]) -> None:
    for played in matches:
        for slot, log in played.logs.items():
            check_slot(played, slot, log)


def test_no_bot_receives_names_tickets_or_text_of_bots(matches: list[Played]) -> None:
    for played in matches:
        tickets = [log.ticket for log in played.logs.values()]
        labels = [link.label for row in played.table.match.links for link in row]
        assert all(tickets)
        secrets = [*played.names, *played.canaries, *tickets, *labels]
        # The bots did write their text: it is in their logs, never in any message.
        work = played.table.record.with_suffix(".work")
        written = "".join(p.read_text(encoding="utf-8") for p in work.rglob("std*.log"))
        assert all(c in written for c in played.canaries)
        for slot, log in played.logs.items():
            for raw in log.raw_received:
                for secret in secrets:
                    assert secret.encode("utf-8") not in raw, f"slot {slot} got {secret!r}"


def test_game_started_does_not_let_a_bot_compute_the_hands(matches: list[Played]) -> None:
    """Regression: GameStarted carried the deal seed, which gives every hand away."""
    assert "seed" not in pb.GameStarted.DESCRIPTOR.fields_by_name
    for played in matches:
        seeds = {
            json.loads(line)["seed"]
            for line in played.table.record.read_text(encoding="utf-8").splitlines()
            if line.startswith('{"type":"game"')
        }
        for log in played.logs.values():
            for raw in log.raw_received:
                for seed in seeds:
                    assert seed.encode("utf-8") not in raw, "a bot received the deal seed"


def test_bot_environment_does_not_reveal_the_deals(matches: list[Played]) -> None:
    """Regression: TAVOLO_SEED was f"{seed}/{name}/{k}", the deal seed in plain sight."""
    for played in matches:
        rules = played.table.match.rules
        line = deal_lines(played.table)[(1, 1)]
        for log in played.logs.values():
            assert log.env_seed
            assert played.table.match.config.seed not in log.env_seed
            guess_seed = log.env_seed.rsplit("/", 2)[0]
            guess = deal_cards(rules.game, guess_seed, 1, line["dealer"], rules.players)
            assert [[CARD_NAMES[c] for c in cards_of(h)] for h in guess.hands] != line["hands"]


# -- spectators ------------------------------------------------------------------------------


async def watch(referee: Referee, match_id: str) -> list[pb.WatchResponse]:
    """Find the table in ListTables and watch it to its end."""
    async with grpc.aio.insecure_channel(referee.address) as channel:
        stub = pb_grpc.SpectatorServiceStub(channel)
        for _ in range(500):
            tables = await stub.ListTables(pb.ListTablesRequest())
            if any(t.table_id == match_id for t in tables.tables):
                break
            await asyncio.sleep(0.01)
        else:
            pytest.fail(f"table {match_id} never listed")
        [info] = [t for t in tables.tables if t.table_id == match_id]
        assert info.match_id == match_id
        return [r async for r in stub.Watch(pb.WatchRequest(table_id=match_id))]


def test_spectators_see_public_events_only(tmp_path: Path) -> None:
    async def scenario() -> tuple[Played, list[pb.WatchResponse]]:
        async with serving() as referee:
            found: list[str] = []
            watching: list[asyncio.Task[list[pb.WatchResponse]]] = []

            def on_match(match: Any) -> None:
                found.append(match.match_id)
                watching.append(asyncio.ensure_future(watch(referee, match.match_id)))

            names = NAMES[:2]
            entries = tuple(
                manifest(
                    tmp_path / "manifests",
                    n,
                    "play",
                    tmp_path / "logs",
                    "--declare",
                    "--say",
                    canary(n),
                )
                for n in names
            )
            table = await play(
                referee,
                entries,
                tmp_path / "record.jsonl",
                rules=Rules(call_out=False),
                seed="spectate",
                deals=2,
                on_match=on_match,
            )
            watched = await watching[0]
            played = Played(table, read_logs(tmp_path / "logs"), names, ())
            return played, watched

    played, watched = run(scenario())
    table = played.table
    table.verify()
    # The public lines of the record, each with the cards still secret just after it.
    public_lines: list[tuple[dict[str, Any], frozenset[str], list[list[str]]]] = []
    hands: list[list[str]] = []
    secret: set[str] = set()
    for line in table.lines():
        if line["type"] == "deal":
            hands = line["hands"]
            secret = {c for hand in hands for c in hand} | set(line.get("widow", []))
        elif line["type"] == "play":
            secret.discard(line["card"])
        elif line["type"] == "declare":
            secret -= set(line["cards"])
        if line["type"] in ("play", "trick", "declare", "score", "result"):
            public_lines.append((line, frozenset(secret), hands))
    mapping = {
        "card_played": "play",
        "trick_won": "trick",
        "declared": "declare",
        "deal_scored": "score",
        "game_over": "result",
    }
    # Everything public in the record reached the spectator, in order, and nothing else.
    kinds = [r.event.WhichOneof("event") for r in watched]
    assert set(kinds) <= SPECTATOR_EVENTS, kinds
    assert [mapping[k] for k in kinds] == [line["type"] for line, _, _ in public_lines]
    assert kinds.count("deal_scored") == 4
    assert "declared" in kinds
    for response, (line, hidden, dealt) in zip(watched, public_lines, strict=True):
        assert {d.name for d, _ in response.ListFields()} == {"table_id", "event"}
        assert response.table_id == table.match.match_id
        which = response.event.WhichOneof("event")
        body = getattr(response.event, which)
        raw = response.SerializeToString()
        assert not [n for n in played.names if n.encode("utf-8") in raw]
        skip: tuple[str, ...] = ()
        if which == "deal_scored":
            assert [list(h.cards) for h in body.hands] == dealt
            skip = ("hands",)
        elif which == "card_played":
            assert body.card == line["card"]
        leaks = [c for _, c in cards_in(body, skip) if c in hidden]
        assert not leaks, f"spectator saw hidden cards in {which}: {leaks}"


def test_spectators_of_calabresella_see_the_auction_and_no_hidden_card(tmp_path: Path) -> None:
    async def scenario() -> tuple[Table, list[pb.WatchResponse]]:
        async with serving() as referee:
            watching: list[asyncio.Task[list[pb.WatchResponse]]] = []

            def on_match(match: Any) -> None:
                watching.append(asyncio.ensure_future(watch(referee, match.match_id)))

            table = await play(
                referee,
                tuple(parse_entry(name) for name in ("heuristic", "random", "random")),
                tmp_path / "calabresella.jsonl",
                rules=presets()["calabresella"],
                seed="spectate-calabresella",
                deals=2,
                limits=limits(deadline_ms=DEADLINE_MS),
                on_match=on_match,
            )
            return table, await watching[0]

    table, watched = run(scenario())
    table.verify()
    # Every public line of the record, in order, and nothing else: no gives, no discards.
    kinds = [r.event.WhichOneof("event") for r in watched]
    public = PUBLIC_EVENTS
    assert kinds == [public[line["type"]] for line in table.lines() if line["type"] in public]
    assert {"bid_made", "monte_split", "deal_scored"} <= set(kinds)
    # A split happens only in scegliete, where the rules show the monte face up.
    contract = ""
    for line in table.lines():
        if line["type"] == "contract":
            contract = line["contract"]
        elif line["type"] == "split":
            assert contract == "scegliete"
    # While a deal is open a spectator learns the cards played, the card called and a
    # scegliete monte, no more.
    shown: set[str] = set()
    for response in watched:
        which = response.event.WhichOneof("event")
        body = getattr(response.event, which)
        if which in ("deal_scored", "game_over"):
            shown = set()
            continue
        if which in ("card_played", "card_called"):
            shown.add(body.card)
        elif which == "monte_split":
            shown.update(body.take)
        leaks = [card for _, card in cards_in(body) if card not in shown]
        assert not leaks, f"spectator saw cards before the deal ended in {which}: {leaks}"
