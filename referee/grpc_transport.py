"""gRPC's transport for the referee: the one module of the referee that chooses it.

Import it before anything loads grpc (the modules that use grpc do so first, in an import
block of its own). gRPC reads ``GRPC_EXPERIMENTS`` once, when it loads, so the choice is
made here, and only here: the rules engine and the rest of the package change nothing in
the process when imported. The bot SDK makes the same choice in ``tavolo_bot``.
"""

import os
import sys

GRPC_EXPERIMENTS = "-event_engine_client,-event_engine_listener"
"""gRPC core's own poller, in the thread that waits for completions, instead of EventEngine.

Set as the environment variable of that name unless it is already set. With EventEngine
(grpcio's default) every message crosses three more worker threads in each process; on
two cores that was a third of a decision's round trip (docs/benchmarks.md).
"""

GRPC_EXPERIMENTS_SET_HERE = "GRPC_EXPERIMENTS" not in os.environ
"""Whether this process set the variable (not its user): then bots do not inherit it."""

_SEEN_BY_GRPC = os.environ.get("GRPC_EXPERIMENTS", "") if "grpc" in sys.modules else None
os.environ.setdefault("GRPC_EXPERIMENTS", GRPC_EXPERIMENTS)

TRANSPORT = os.environ["GRPC_EXPERIMENTS"] if _SEEN_BY_GRPC is None else _SEEN_BY_GRPC
"""The ``GRPC_EXPERIMENTS`` this process's gRPC loaded with (empty: gRPC's defaults).

If grpc was imported before this module, it loaded with what the variable held then.
"""
