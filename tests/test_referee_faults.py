"""Faults at a real referee: bad tickets, illegal and late actions, bad traffic, failing bots.

Every test starts a real referee on 127.0.0.1:0 and plays real matches with real bot
processes (``tests/bots/scripted.py`` through ``cmd:`` entries, or in-test clients for
``remote`` entries), records written to files. Each checks that the offending bot was
told clearly (a gRPC status naming the reason, or an ActionRejected / ErrorEvent with
a machine-readable reason), that the record says what happened (``rejected``,
``incident`` or ``forfeit`` lines) and verifies, and, for many, that a second match
played at the same time on the same referee finishes normally and the referee still
answers health checks. The ``stage`` fixture (``Stage``) carries that scaffolding: the
referee, the bystander match beside the scenario, and the closing checks.
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
import grpc.aio
import pytest

from referee.engine.errors import Reason
from referee.engine.rules import Rules
from referee.entries import parse_entry
from referee.match.config import Limits
from referee.match.faults import FaultPolicy
from referee.match.slots import FLOOD_LIMIT, Request, TicketBook
from referee.protocol import Sent
from referee.records import verify_file
from referee.service.bot_streams import MAX_MESSAGE_BYTES
from referee.service.server import Referee
from tavolo_bot.proto import referee_pb2 as pb
from tests.bots.harness import (
    FAST,
    NORMAL_ENDS,
    BotLog,
    Table,
    assert_alive,
    assert_normal,
    limits,
    normal_table,
    of_type,
    play,
    read_logs,
    run,
    scripted,
    serving,
)
from tests.bots.scripted import OVERSIZE_BYTES, Options, run_bot

PLAY_METHOD = "/tavolo.v1.RefereeService/Play"

T = TypeVar("T")


# -- helpers -----------------------------------------------------------------------------


async def with_bystander(referee: Referee, tmp_path: Path, scenario: Any) -> tuple[Any, Table]:
    """Run ``scenario`` and a normal match side by side on the same referee."""
    result, bystander = await asyncio.gather(
        scenario, normal_table(referee, tmp_path / "bystander.jsonl")
    )
    return result, bystander


@dataclass
class Stage:
    """One test's scaffolding: a real referee, matches recorded under ``tmp_path``
    (``record.jsonl``, bot logs in ``logs/``), and the checks that close a scenario."""

    tmp_path: Path

    @property
    def record(self) -> Path:
        return self.tmp_path / "record.jsonl"

    @property
    def log_dir(self) -> Path:
        return self.tmp_path / "logs"

    def run(
        self,
        scenario: Callable[[Referee], Awaitable[T]],
        *,
        bystander: bool = True,
        alive: bool = True,
        then: Callable[[Referee], Awaitable[None]] | None = None,
        timeout: float = 90,
    ) -> T:
        """Start a real referee and ``await scenario(referee)`` on it, in ``run``.

        With ``bystander``, a normal match is played beside the scenario on the same
        referee and must end normally (``assert_normal``); with ``alive``, the referee
        must then still answer health checks (``assert_alive``); ``then`` runs last, on
        the same referee.
        """

        async def staged() -> T:
            async with serving() as referee:
                result: T
                if bystander:
                    result, table = await with_bystander(referee, self.tmp_path, scenario(referee))
                    assert_normal(table)
                else:
                    result = await scenario(referee)
                if alive:
                    await assert_alive(referee)
                if then is not None:
                    await then(referee)
                return result

        return run(staged(), timeout)

    def match(
        self,
        referee: Referee,
        mode: str,
        *args: str | int,
        rules: Rules | None = None,
        match_limits: Limits = FAST,
        seed: str = "faults",
    ) -> Coroutine[Any, Any, Table]:
        """A match of the scripted bot in ``mode`` (entry 0) against built-in random bots."""
        entry = scripted(mode, self.log_dir, *args)
        return play(
            referee,
            (entry, parse_entry("random")),
            self.record,
            rules=rules,
            limits=match_limits,
            seed=seed,
        )

    async def remote(self, referee: Referee) -> tuple[asyncio.Task[Table], dict[str, str]]:
        """Start a match of a ``remote`` entry (slots 0 and 1) against random; wait for
        its tickets, by label."""
        tickets: dict[str, str] = {}
        task = asyncio.ensure_future(
            play(
                referee,
                (parse_entry("remote"), parse_entry("random")),
                self.record,
                on_ticket=lambda label, ticket: tickets.__setitem__(label, ticket),
                limits=limits(connect_timeout=10),
            )
        )
        while len(tickets) < 2:
            await asyncio.sleep(0.01)
        return task, tickets

    def logs(self) -> dict[int, BotLog]:
        """The logs of the scripted bot processes, by slot."""
        return read_logs(self.log_dir)

    def log(self, slot: int) -> BotLog:
        """The log of the scripted bot process that played ``slot``."""
        return self.logs()[slot]


@pytest.fixture
def stage(tmp_path: Path) -> Stage:
    return Stage(tmp_path)


async def one_message(address: str, request: pb.PlayRequest) -> grpc.aio.AioRpcError:
    """Open a Play stream, send one message, and read until the referee ends the stream."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(
            PLAY_METHOD,
            request_serializer=pb.PlayRequest.SerializeToString,
            response_deserializer=pb.PlayResponse.FromString,
        )()
        await call.write(request)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            while await call.read() is not grpc.aio.EOF:
                pass
        return caught.value


def hello(ticket: str) -> pb.PlayRequest:
    return pb.PlayRequest(hello=pb.Hello(ticket=ticket, protocol_version=1))


def rejections(log: BotLog) -> list[pb.ActionRejected]:
    return log.events("action_rejected")


def errors(log: BotLog) -> list[pb.ErrorEvent]:
    return log.events("error")


async def until(predicate: Any, timeout: float = 10) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, "timed out waiting"
        await asyncio.sleep(0.01)


# -- tickets -------------------------------------------------------------------------------


def test_unknown_ticket_is_unauthenticated(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        await asyncio.sleep(0.2)  # while the other table plays
        error = await one_message(referee.address, hello("no-such-ticket"))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "unknown_ticket" in (error.details() or "")
        # The ticket names no seat of any table, so no record can mention it; the table
        # that was playing meanwhile saw nothing (stage.run checks the bystander).

    stage.run(scenario)


def test_used_ticket_is_refused_once_its_match_is_over(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        task, tickets = await stage.remote(referee)
        logs = [BotLog(), BotLog()]
        await asyncio.gather(
            *(
                run_bot(referee.address, tickets[f"remote#{k + 1}"], Options(), logs[k].add)
                for k in range(2)
            )
        )
        table = await task
        assert_normal(table)
        for log in logs:
            assert log.statuses == [("OK", "")]
            assert log.events("match_over")
        error = await one_message(referee.address, hello(tickets["remote#1"]))
        assert error.code() == grpc.StatusCode.ALREADY_EXISTS
        assert "ticket_used" in (error.details() or "")
        # The record was finished with the match; the refusal changed nothing in it.
        table.verify()

    stage.run(scenario, bystander=False)


def test_second_connection_for_a_seat_is_refused_and_the_first_plays_on(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        task, tickets = await stage.remote(referee)
        logs = [BotLog(), BotLog()]
        first = asyncio.ensure_future(
            run_bot(referee.address, tickets["remote#1"], Options(), logs[0].add)
        )
        await until(lambda: logs[0].slot is not None)
        error = await one_message(referee.address, hello(tickets["remote#1"]))
        second = run_bot(referee.address, tickets["remote#2"], Options(), logs[1].add)
        await asyncio.gather(first, second)
        table = await task
        assert error.code() == grpc.StatusCode.ALREADY_EXISTS
        assert "seat_taken" in (error.details() or "")
        # The first connection was not disturbed: it played its seat to MatchOver.
        assert logs[0].statuses == [("OK", "")]
        assert logs[0].events("match_over")
        assert not rejections(logs[0]) and not errors(logs[0])
        assert [o.termination.value for o in table.result.outcomes] == ["deals_played"] * 2
        game1 = table.games()[0]
        assert of_type(game1, "incident", seat=table.seat_of(0, 1), kind="second_connection")
        assert not of_type(table.lines(), "forfeit")
        table.verify()

    stage.run(scenario)


# -- actions ---------------------------------------------------------------------------------


def test_answer_to_a_stale_request_is_rejected_and_recorded(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        table = await stage.match(referee, "stale", "--slot", 0)
        log = stage.log(0)
        stale = [r for r in rejections(log) if r.reason == "stale_request"]
        assert len(stale) == 1
        answered = log.decisions()
        # The bot answered request n, then sent that same answer again for request n+1.
        repeats = [
            d
            for i, d in enumerate(answered)
            if any(e.request_id == d.request_id for e in answered[:i])
        ]
        assert [(d.request_id, d.action_id) for d in repeats] == [
            (stale[0].request_id, stale[0].action_id)
        ]
        assert stale[0].message
        seat = table.seat_of(0, 1)
        incidents = of_type(table.games()[0], "incident", seat=seat, kind="stale_request")
        assert len(incidents) == 1
        assert str(stale[0].request_id) in incidents[0]["detail"]
        # A stale answer costs no attempt and ends nothing.
        assert not of_type(table.lines(), "rejected")
        assert [o.termination.value for o in table.result.outcomes] == ["deals_played"] * 2
        table.verify()

    stage.run(scenario)


ILLEGAL = [
    pytest.param("not-in-hand", Rules(), "card_not_in_hand", id="card-not-in-hand"),
    pytest.param("no-follow", Rules(), "must_follow_suit", id="not-following-suit"),
    pytest.param("false-volo", Rules(), "false_signal", id="false-volo"),
    pytest.param("false-striscio", Rules(), "false_signal", id="false-striscio"),
    pytest.param("busso-following", Rules(), "busso_not_leading", id="busso-not-leading"),
    pytest.param("signal", Rules(signals="muto"), "signal_not_allowed", id="signal-under-muto"),
    pytest.param("false-declaration", Rules(), "false_declaration", id="declaration-not-held"),
]


@pytest.mark.parametrize(("mode", "rules", "reason"), ILLEGAL)
def test_illegal_action_is_rejected_and_recorded(
    stage: Stage, mode: str, rules: Rules, reason: str
) -> None:
    async def scenario(referee: Referee) -> None:
        table = await stage.match(referee, mode, "--slot", 0, rules=rules)
        log = stage.log(0)
        [rejected] = rejections(log)
        assert rejected.reason == reason
        assert rejected.message
        assert rejected.attempts_left == FAST.max_attempts - 1
        bad = [d for d in log.decisions() if d.request_id == rejected.request_id]
        assert [d.action_id for d in bad] == [rejected.action_id]
        legal = next(r for r in log.requests() if r.request_id == rejected.request_id)
        assert rejected.action_id not in {a.id for a in legal.legal_actions}
        game = table.games()[0]
        seat = table.seat_of(0, 1)
        lines = of_type(game, "rejected")
        assert [isinstance(line.pop("ms"), int) for line in lines] == [True]  # its think time
        assert lines == [
            {
                "type": "rejected",
                "seat": seat,
                "action_id": rejected.action_id,
                "reason": reason,
            }
        ]
        # The seat then played a legal action and both games ended normally.
        after = game[game.index(lines[0]) + 1]
        assert after["seat"] == seat and after["type"] in ("play", "declare")
        assert [o.termination.value for o in table.result.outcomes] == ["deals_played"] * 2
        assert log.statuses == [("OK", "")]
        table.verify()

    stage.run(scenario)


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(declare_before_first_card=True), Rules(call_out=True, signals="leader")],
    ids=["default", "declare-first", "call-out-leader-signals"],
)
def test_every_action_id_is_refused_with_a_reason_and_nothing_breaks(
    stage: Stage, rules: Rules
) -> None:
    async def scenario(referee: Referee) -> None:
        table = await stage.match(
            referee,
            "every-id",
            "--slot",
            0,
            "--times",
            3,
            rules=rules,
            match_limits=limits(max_attempts=400),
        )
        log = stage.log(0)
        told = rejections(log)
        assert len(told) > 3 * 250
        assert {r.reason for r in told} <= {reason.value for reason in Reason}
        assert all(r.message for r in told)
        lines = of_type(table.lines(), "rejected")
        assert [(line["action_id"], line["reason"]) for line in lines] == [
            (r.action_id, r.reason) for r in told
        ]
        assert {o.termination.value for o in table.result.outcomes} <= NORMAL_ENDS
        assert log.statuses == [("OK", "")]
        table.verify()

    stage.run(scenario, bystander=False)


def test_action_after_its_deadline_forfeits_and_the_late_answer_is_stale(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        sleep = FAST.deadline_ms + 100
        table = await stage.match(referee, "late", "--slot", 0, "--sleep-ms", sleep)
        log = stage.log(0)
        first = log.requests()[0]
        assert first.deadline_ms == FAST.deadline_ms
        [error] = errors(log)
        assert error.reason == "timeout"
        assert str(first.request_id) in error.message
        # The answer came after the deadline: it was refused as stale.
        assert log.decisions()[0].request_id == first.request_id
        stale = [r for r in rejections(log) if r.reason == "stale_request"]
        assert [r.request_id for r in stale] == [first.request_id]
        game1, game2 = table.games()
        [forfeit] = of_type(game1, "forfeit")
        assert forfeit["seat"] == table.seat_of(0, 1)
        assert forfeit["reason"] == "timeout"
        assert not of_type(game2, "forfeit")
        assert game1[-1]["termination"] == "timeout"
        assert of_type(
            table.lines(),
            "incident",
            kind="stale_request",
            detail=f"request {first.request_id} is not open",
        )
        # The match went on: game 2 was played to its end.
        assert [o.termination.value for o in table.result.outcomes] == [
            "timeout",
            "deals_played",
        ]
        assert table.result.stats[0].timeouts == 1
        table.verify()

    stage.run(scenario)


# -- malformed traffic -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "code", "reason"),
    [
        pytest.param(
            pb.PlayRequest(decision=pb.Decision(request_id=1, action_id=0)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "no_hello",
            id="decision-before-hello",
        ),
        pytest.param(
            pb.PlayRequest(), grpc.StatusCode.INVALID_ARGUMENT, "no_hello", id="empty-message"
        ),
        pytest.param(
            pb.PlayRequest(hello=pb.Hello(ticket="x", protocol_version=99)),
            grpc.StatusCode.FAILED_PRECONDITION,
            "protocol_version",
            id="wrong-protocol-version",
        ),
    ],
)
def test_a_stream_must_open_with_a_good_hello(
    stage: Stage, first: pb.PlayRequest, code: grpc.StatusCode, reason: str
) -> None:
    async def scenario(referee: Referee) -> None:
        error = await one_message(referee.address, first)
        assert error.code() == code
        assert (error.details() or "").startswith(reason + ":")

    stage.run(scenario, bystander=False)


def test_a_second_hello_from_a_seated_bot_ends_its_stream(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        table = await stage.match(referee, "hello-again", "--slot", 0)
        log = stage.log(0)
        [(code, details)] = log.statuses
        assert code == "INVALID_ARGUMENT"
        assert details.startswith("repeated_hello:")
        game1 = table.games()[0]
        seat = table.seat_of(0, 1)
        [forfeit] = of_type(game1, "forfeit")
        assert (forfeit["seat"], forfeit["reason"]) == (seat, "crash")
        table.verify()

    stage.run(scenario, bystander=False)


def test_oversize_hello_is_resource_exhausted(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        await asyncio.sleep(0.2)
        assert OVERSIZE_BYTES > MAX_MESSAGE_BYTES
        error = await one_message(referee.address, hello("t" * OVERSIZE_BYTES))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "larger than max" in (error.details() or "")

    stage.run(scenario)


def test_oversize_message_from_a_seated_bot_ends_its_stream(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        table = await stage.match(referee, "oversize", "--slot", 0)
        log = stage.log(0)
        [(code, details)] = log.statuses
        assert code == "RESOURCE_EXHAUSTED"
        assert "larger than max" in details
        game1 = table.games()[0]
        seat = table.seat_of(0, 1)
        assert of_type(game1, "incident", seat=seat, kind="disconnect")
        [forfeit] = of_type(game1, "forfeit")
        assert (forfeit["seat"], forfeit["reason"]) == (seat, "crash")
        table.verify()

    stage.run(scenario)


def test_garbage_bytes_get_an_error_status_and_the_referee_stays_up(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        await asyncio.sleep(0.2)
        async with grpc.aio.insecure_channel(referee.address) as channel:
            call = channel.stream_stream(
                PLAY_METHOD,
                request_serializer=lambda b: b,
                response_deserializer=lambda b: b,
            )()
            await call.write(b"\xff\x00garbage")
            with pytest.raises(grpc.aio.AioRpcError):
                while await call.read() is not grpc.aio.EOF:
                    pass
            code, details = await call.code(), await call.details()
        assert code not in (grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE)
        assert details

    async def further_match(referee: Referee) -> None:
        # And it still plays a further match (after the bystander and the health check).
        assert_normal(await normal_table(referee, stage.tmp_path / "after.jsonl", seed="after"))

    stage.run(scenario, then=further_match)


def flood_match(stage: Stage, referee: Referee) -> Coroutine[Any, Any, Table]:
    """The flooding bot (entry 0) against bots that connect a second late.

    The flood (right after the Welcome) is over long before the first deal, so the
    flooder's seat is already gone when it is first asked to act.
    """
    return play(
        referee,
        (
            scripted("flood", stage.log_dir, "--slot", 0, "--count", FLOOD_LIMIT + 1),
            scripted("play", stage.tmp_path / "others", "--connect-delay-ms", 1000),
        ),
        stage.record,
    )


def test_flood_is_cut_off_with_resource_exhausted(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        table = await flood_match(stage, referee)
        log = stage.log(0)
        # Exactly one message too many: the bot writes nothing after the cut, so the
        # status it reads is the referee's (gRPC clients that go on writing into an
        # aborted stream may see INTERNAL "Internal error from Core" instead).
        assert len(log.sent) == FLOOD_LIMIT + 1
        [(code, details)] = log.statuses
        assert code == "RESOURCE_EXHAUSTED"
        assert details.startswith("flood:")
        label = table.match.links[0][0].label
        assert (label, "flood", f"more than {FLOOD_LIMIT} unasked messages") in (
            table.result.incidents
        )
        [forfeit] = of_type(table.games()[0], "forfeit")
        assert (forfeit["seat"], forfeit["reason"]) == (table.seat_of(0, 1), "crash")
        table.verify()

    stage.run(scenario)


def test_flood_is_in_the_record(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        table = await flood_match(stage, referee)
        seat = table.seat_of(0, 1)
        assert of_type(table.games()[0], "incident", seat=seat, kind="flood")

    stage.run(scenario, bystander=False, alive=False)


def test_flood_of_stale_answers_during_a_request_is_cut_off(stage: Stage) -> None:
    """Regression: answers to wrong request ids while a request was open were never counted
    as unasked, so 100 of them gave 100 stale_request rejections and incident lines."""

    async def scenario(referee: Referee) -> None:
        table = await stage.match(referee, "flood-stale", "--slot", 0, "--count", FLOOD_LIMIT + 1)
        log = stage.log(0)
        assert len(log.decisions()) == FLOOD_LIMIT + 1
        [(code, details)] = log.statuses
        assert code == "RESOURCE_EXHAUSTED"
        assert details.startswith("flood:")
        game1 = table.games()[0]
        seat = table.seat_of(0, 1)
        assert len(of_type(game1, "incident", kind="stale_request")) <= FLOOD_LIMIT
        assert of_type(game1, "incident", seat=seat, kind="flood")
        [forfeit] = of_type(game1, "forfeit")
        assert (forfeit["seat"], forfeit["reason"]) == (seat, "crash")
        table.verify()

    stage.run(scenario)


# -- bots that fail ----------------------------------------------------------------------------


def test_bot_that_never_connects_forfeits_with_crash(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        # The window is waited out in full for the absent entry, but the other entry's
        # sandboxed bot must start within it: 1.5 s was too short under a loaded machine.
        table = await stage.match(
            referee, "never-connect", match_limits=limits(connect_timeout=4.0)
        )
        assert [o.termination.value for o in table.result.outcomes] == ["crash", "crash"]
        for number, game in enumerate(table.games(), 1):
            [forfeit] = of_type(game, "forfeit")
            assert forfeit["reason"] == "crash"
            assert forfeit["detail"].startswith("never connected")
            assert forfeit["seat"] in (table.seat_of(0, number), table.seat_of(1, number))
            # Nobody acted for the absent entry's seats.
            absent = {table.seat_of(0, number), table.seat_of(1, number)}
            assert not [line for line in of_type(game, "play") if line["seat"] in absent]
        kinds = {(label, kind) for label, kind, _ in table.result.incidents}
        labels = [link.label for link in table.match.links[0]]
        assert kinds == {(label, "never_connected") for label in labels}
        assert table.result.stats[0].crashes == 2
        table.verify()

    stage.run(scenario)


def test_bot_that_goes_silent_forfeits_with_timeout(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        table = await stage.match(referee, "silent", "--times", 99)
        logs = stage.logs()
        assert [o.termination.value for o in table.result.outcomes] == ["timeout", "timeout"]
        told = [e for log in logs.values() for e in errors(log)]
        assert [e.reason for e in told] == ["timeout", "timeout"]
        assert not [d for log in logs.values() for d in log.decisions()]
        for game in table.games():
            [forfeit] = of_type(game, "forfeit")
            assert forfeit["reason"] == "timeout"
            assert f"within {FAST.deadline_ms} ms" in forfeit["detail"]
        table.verify()

    stage.run(scenario)


def test_bot_process_exiting_mid_deal_forfeits_with_its_exit_status(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        canary = "scripted-bot-last-words-4711"
        table = await stage.match(referee, "exit", "--slot", 0, "--at", 3, "--say", canary)
        game1 = table.games()[0]
        seat = table.seat_of(0, 1)
        [forfeit] = of_type(game1, "forfeit")
        assert (forfeit["seat"], forfeit["reason"]) == (seat, "crash")
        assert "exit status 3" in forfeit["detail"]
        assert canary in forfeit["detail"]  # the tail of its stderr
        # Mid-deal: the seat had acted twice in the deal before it exited.
        acted = [line for line in game1 if line.get("seat") == seat]
        assert [line["type"] in ("play", "declare") for line in acted[:2]] == [True, True]
        assert of_type(game1, "deal") and not of_type(game1, "score")
        assert table.result.outcomes[0].termination.value == "crash"
        table.verify()

    stage.run(scenario)


def test_forfeit_ends_the_game_but_the_match_goes_on(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        attempts = FAST.max_attempts
        table = await stage.match(referee, "not-in-hand", "--slot", 0, "--times", attempts)
        game1, game2 = table.games()
        assert of_type(game1, "forfeit", seat=table.seat_of(0, 1), reason="illegal_action")
        assert game1[-1]["type"] == "result"
        assert game1[-1]["termination"] == "illegal_action"
        assert not of_type(game2, "forfeit")
        assert game2[-1]["termination"] == "deals_played"
        assert len(of_type(game2, "play")) == 40
        assert [o.termination.value for o in table.result.outcomes] == [
            "illegal_action",
            "deals_played",
        ]
        log = stage.log(0)
        assert log.events("game_over")[0].forfeit_seat == table.seat_of(0, 1)
        assert log.events("game_over")[1].forfeit_seat == -1
        assert log.statuses == [("OK", "")]
        table.verify()

    stage.run(scenario)


def test_on_fault_random_plays_for_the_seat_and_records_an_incident(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        sleep = FAST.deadline_ms + 100
        table = await stage.match(
            referee,
            "late",
            "--slot",
            0,
            "--sleep-ms",
            sleep,
            match_limits=limits(on_fault=FaultPolicy.RANDOM),
        )
        log = stage.log(0)
        [error] = errors(log)
        assert error.reason == "timeout"
        game1 = table.games()[0]
        seat = table.seat_of(0, 1)
        [incident] = of_type(game1, "incident", kind="timeout")
        assert incident["seat"] == seat
        assert "the referee played at random" in incident["detail"]
        after = game1[game1.index(incident) + 1]
        assert after["seat"] == seat and after["type"] in ("play", "declare")
        assert not of_type(table.lines(), "forfeit")
        assert [o.termination.value for o in table.result.outcomes] == ["deals_played"] * 2
        table.verify()

    stage.run(scenario, bystander=False)


def reconnect_match(stage: Stage, referee: Referee, times: int) -> Coroutine[Any, Any, Table]:
    return stage.match(
        referee,
        "reconnect",
        "--slot",
        0,
        "--at",
        3,
        "--times",
        times,
        match_limits=limits(grace=3.0),
    )


def test_dropped_connection_that_reconnects_within_grace_carries_on(stage: Stage) -> None:
    """Also a regression test: the referee used to re-send the pending request and then ask
    a new one, so a bot answering what it was sent got a stale_request."""

    async def scenario(referee: Referee) -> None:
        table = await reconnect_match(stage, referee, 1)
        log = stage.log(0)
        assert log.drops == 1
        assert len(log.events("welcome")) == 2
        game1 = table.games()[0]
        seat = table.seat_of(0, 1)
        kinds = [line["kind"] for line in of_type(game1, "incident", seat=seat)]
        assert kinds == ["disconnect", "reconnect"]
        assert not of_type(table.lines(), "forfeit")
        assert [o.termination.value for o in table.result.outcomes] == ["deals_played"] * 2
        assert not rejections(log)
        table.verify()

    stage.run(scenario, bystander=False)


class OneWriteAtATime:
    """Stands in for a grpc.aio server stream: a write takes a while, and a second write
    started before the first is done is what gRPC refuses with
    GRPC_CALL_ERROR_TOO_MANY_OPERATIONS."""

    def __init__(self) -> None:
        self.busy = False
        self.overlaps = 0
        self.written: list[pb.PlayResponse | bytes] = []

    async def write(self, response: pb.PlayResponse | bytes) -> None:
        if self.busy:
            self.overlaps += 1
        self.busy = True
        await asyncio.sleep(0.05)
        self.busy = False
        self.written.append(response)


def test_a_slot_never_writes_twice_at_once_on_reconnection() -> None:
    """Regression: attach (Welcome, then the pending request) and the table's next request
    once overlapped on the new stream; the ExecuteBatchError escaped Slot._write and
    Match.run raised, in about half the real reconnection runs."""

    async def scenario() -> int:
        link = TicketBook().issue("m", 0, "bot#1")
        # As after a drop: a request was pending when the stream went away.
        link.pending = pb.PlayResponse(request=pb.DecisionRequest(request_id=1)).SerializeToString()
        stream = OneWriteAtATime()

        def fill(since: Sent | None) -> tuple[bytes, Sent]:
            return b"", Sent(1, 1, 0, 0, 0, 0)

        async def table() -> None:
            assert await link.wait_connected(5)
            await link.send_request([], Request(2, 1000, 0, 3, fill))

        await asyncio.gather(table(), link.attach(stream))
        return stream.overlaps

    assert run(scenario()) == 0


# -- the retry rule ----------------------------------------------------------------------------


def test_illegal_then_legal_action_within_one_decision(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        table = await stage.match(referee, "not-in-hand", "--slot", 0)
        log = stage.log(0)
        first, retry = log.requests()[:2]
        assert first.attempts_left == FAST.max_attempts
        [rejected] = rejections(log)
        assert rejected.request_id == first.request_id
        assert rejected.attempts_left == retry.attempts_left == FAST.max_attempts - 1
        # The retry is the same decision: same seat, same hand, same legal actions.
        assert retry.request_id != first.request_id
        assert retry.observation == first.observation
        assert list(retry.legal_actions) == list(first.legal_actions)
        [bad, good] = log.decisions()[:2]
        assert good.request_id == retry.request_id
        assert good.action_id in {a.id for a in retry.legal_actions}
        game1 = table.games()[0]
        seat = table.seat_of(0, 1)
        [line] = of_type(game1, "rejected")
        assert isinstance(line.pop("ms"), int)  # its think time
        assert line == {
            "type": "rejected",
            "seat": seat,
            "action_id": bad.action_id,
            "reason": "card_not_in_hand",
        }
        after = game1[game1.index(line) + 1]
        assert after["seat"] == seat and after["type"] in ("play", "declare")
        assert table.result.stats[0].illegal == 1
        assert [o.termination.value for o in table.result.outcomes] == ["deals_played"] * 2
        table.verify()

    stage.run(scenario, bystander=False, alive=False)


def test_max_attempts_illegal_actions_forfeit_with_illegal_action(stage: Stage) -> None:
    async def scenario(referee: Referee) -> None:
        table = await stage.match(referee, "not-in-hand", "--slot", 0, "--times", 99)
        log = stage.log(0)
        attempts = FAST.max_attempts
        requests = log.requests()[:attempts]
        assert [r.attempts_left for r in requests] == list(range(attempts, 0, -1))
        told = rejections(log)[:attempts]
        assert [r.reason for r in told] == ["card_not_in_hand"] * attempts
        assert [r.attempts_left for r in told] == list(range(attempts - 1, -1, -1))
        assert errors(log)[0].reason == "illegal_action"
        game1 = table.games()[0]
        seat = table.seat_of(0, 1)
        assert len(of_type(game1, "rejected", seat=seat, reason="card_not_in_hand")) == attempts
        [forfeit] = of_type(game1, "forfeit")
        assert (forfeit["seat"], forfeit["reason"]) == (seat, "illegal_action")
        assert f"{attempts} illegal actions" in forfeit["detail"]
        assert game1[-1]["termination"] == "illegal_action"
        table.verify()

    stage.run(scenario)


# -- the real ``tavolo play`` path ---------------------------------------------------------------


def test_tavolo_play_with_a_faulty_bot_writes_a_record_that_verifies(tmp_path: Path) -> None:
    record = tmp_path / "cli.jsonl"
    entry = scripted("not-in-hand", tmp_path / "logs", "--slot", 0, "--times", 99)
    bot = "cmd:" + shlex.join(entry.command)
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("tavolo")),
            "play",
            bot,
            "random",
            "--seed",
            "cli-faults",
            "--deals",
            "1",
            "--deadline-ms",
            "300",
            "--grace",
            "0.5",
            "--connect-timeout",
            "5",
            "--record",
            str(record),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # It forfeits every game, so the command fails after the table (every result is kept).
    assert done.returncode == 1, done.stderr
    assert "faulted in all 2 games it played; the last: illegal_action: " in done.stderr
    assert "illegal_action" in done.stdout
    lines = [line for line in record.read_text(encoding="utf-8").splitlines() if line]
    assert any('"type":"forfeit"' in line and "illegal_action" in line for line in lines)
    verify_file(record)
