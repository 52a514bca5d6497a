"""The Tavolo referee: the rules engine, the gRPC service and the bot processes.

Importing any part of it chooses gRPC's transport for this process; see
:data:`GRPC_EXPERIMENTS`.
"""

import os
import sys
from collections.abc import Mapping

GRPC_EXPERIMENTS = "-event_engine_client,-event_engine_listener"
"""gRPC core's own poller, in the thread that waits for completions, instead of EventEngine.

Set as the environment variable of that name unless it is already set. With EventEngine
(grpcio's default) every message crosses three more worker threads in each process; on
two cores that was a third of a decision's round trip (docs/benchmarks.md). gRPC reads the
variable once, when it loads, so it is set here, before any module of ours imports grpc.
"""

GRPC_EXPERIMENTS_SET_HERE = "GRPC_EXPERIMENTS" not in os.environ
"""Whether this process set the variable (not its user): then bots do not inherit it."""

_SEEN_BY_GRPC = os.environ.get("GRPC_EXPERIMENTS", "") if "grpc" in sys.modules else None
os.environ.setdefault("GRPC_EXPERIMENTS", GRPC_EXPERIMENTS)

TRANSPORT = os.environ["GRPC_EXPERIMENTS"] if _SEEN_BY_GRPC is None else _SEEN_BY_GRPC
"""The ``GRPC_EXPERIMENTS`` this process's gRPC loaded with (empty: gRPC's defaults).

If grpc was imported before this package, it loaded with what the variable held then.
"""


def bot_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment for an unconfined bot process: ours with ``extra``, minus our
    TAVOLO_* values (the admin token among them) and our gRPC choice.

    A bot in another language may run a gRPC core that does not know these experiments
    and says so on stderr; what a user set themselves is passed on. A sandboxed bot gets
    none of ours (``referee.sandbox.inside_env``).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAVOLO_")}
    env.update(extra)
    if GRPC_EXPERIMENTS_SET_HERE and "GRPC_EXPERIMENTS" not in extra:
        env.pop("GRPC_EXPERIMENTS", None)
    return env
