"""A bot that says Hello and then never reads its stream (nor answers)."""

import asyncio
import os

import grpc

from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as pb_grpc

OPTIONS = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 1024)]


async def main() -> None:
    target, ticket = os.environ["TAVOLO_REFEREE"], os.environ["TAVOLO_TICKET"]
    async with grpc.aio.insecure_channel(target, options=OPTIONS) as channel:
        call = pb_grpc.RefereeServiceStub(channel).Play()
        await call.write(pb.PlayRequest(hello=pb.Hello(ticket=ticket, protocol_version=1)))
        await asyncio.sleep(3600)


asyncio.run(main())
