"""A ticket opens its own slot on its own socket, and only while its process lives.

Real gRPC: the referee's TCP listener and the per-slot Unix sockets of a real TicketBook.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import grpc.aio

from referee.match.slots import TicketBook
from referee.service.bot_streams import open_slot_socket
from referee.service.server import start_referee
from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc
from tests.bots.harness import run


async def _hello(address: str, ticket: str) -> tuple[grpc.StatusCode, str]:
    """What the referee answers a Hello with ``ticket`` on ``address``."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = pb_grpc.RefereeServiceStub(channel).Play()
        await call.write(pb.PlayRequest(hello=pb.Hello(ticket=ticket, protocol_version=1)))
        try:
            response = await call.read()
        except grpc.aio.AioRpcError as exc:
            return exc.code(), exc.details() or ""
        assert isinstance(response, pb.PlayResponse)
        call.cancel()
        return grpc.StatusCode.OK, response.events[0].WhichOneof("event") or ""


def test_a_ticket_works_only_on_its_own_socket_while_its_process_lives(tmp_path: Path) -> None:
    async def scenario() -> None:
        referee = await start_referee("127.0.0.1:0")
        book: TicketBook = referee.book
        a = book.issue("m", 0, "a#1")
        b = book.issue("m", 1, "b#1")
        remote = book.issue("m", 2, "remote#1")
        servers = [
            await open_slot_socket(book, a, tmp_path / "a.sock"),
            await open_slot_socket(book, b, tmp_path / "b.sock"),
        ]
        a_socket = f"unix:{tmp_path / 'a.sock'}"
        try:
            # Another slot's ticket (read from /proc, say) on this socket: refused, noted.
            code, details = await _hello(a_socket, b.ticket)
            assert (code, details.split(":")[0]) == (
                grpc.StatusCode.PERMISSION_DENIED,
                "wrong_socket",
            )
            assert [i.kind for i in a.incidents] == ["foreign_ticket"]
            # A local slot's ticket over TCP: refused; a remote slot's: welcomed.
            code, details = await _hello(referee.address, a.ticket)
            assert details.startswith("wrong_socket"), details
            assert await _hello(referee.address, remote.ticket) == (grpc.StatusCode.OK, "welcome")
            # A remote ticket on a slot's socket: refused too.
            code, details = await _hello(a_socket, remote.ticket)
            assert details.startswith("wrong_socket"), details
            # Its own ticket on its own socket: welcomed.
            assert await _hello(a_socket, a.ticket) == (grpc.StatusCode.OK, "welcome")
            # Its process died: the ticket opens nothing any more.
            a.mark_exited("exit status 1")
            code, details = await _hello(a_socket, a.ticket)
            assert details.startswith("process_gone"), details
            # A restarted bot gets a fresh ticket; the old one is unknown.
            old = a.ticket
            book.reissue(a)
            a.restarted([])
            assert a.ticket != old
            code, details = await _hello(a_socket, old)
            assert (code, details.split(":")[0]) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "unknown_ticket",
            )
            assert await _hello(a_socket, a.ticket) == (grpc.StatusCode.OK, "welcome")
        finally:
            for server in servers:
                await server.stop(0)
            await referee.stop(0)

    run(scenario())
