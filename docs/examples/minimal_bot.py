"""A complete Tavolo bot on the bare protocol: grpcio and the generated stubs, no SDK."""

import os
import queue
import sys

import grpc

from tavolo_bot.proto import referee_pb2 as pb
from tavolo_bot.proto import referee_pb2_grpc as rpc


def choose(request: pb.DecisionRequest) -> int:
    """Declare what is offered, else the first card played without a signal."""
    for kinds in ([pb.ACTION_KIND_DECLARE], [pb.ACTION_KIND_PLAY]):
        for action in request.legal_actions:
            if action.kind in kinds and action.signal == pb.SIGNAL_UNSPECIFIED:
                return action.id
    return request.legal_actions[0].id  # the legal list is all a bot needs


def main() -> int:
    outbox: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()
    hello = pb.Hello(ticket=os.environ["TAVOLO_TICKET"], protocol_version=1)
    outbox.put(pb.PlayRequest(hello=hello))
    stub = rpc.RefereeServiceStub(grpc.insecure_channel(os.environ["TAVOLO_REFEREE"]))
    try:
        for response in stub.Play(iter(outbox.get, None)):
            for event in response.events:
                if event.HasField("action_rejected"):
                    print("refused:", event.action_rejected.message, file=sys.stderr)
            if response.HasField("request"):
                r = response.request
                answer = pb.Decision(request_id=r.request_id, action_id=choose(r))
                outbox.put(pb.PlayRequest(decision=answer))
    except grpc.RpcError as error:
        print(f"the referee ended the stream: {error.code().name}: {error.details()}")
        return 1
    finally:
        outbox.put(None)  # ends the request stream
    return 0  # the stream ended OK: the match is over


if __name__ == "__main__":
    sys.exit(main())
