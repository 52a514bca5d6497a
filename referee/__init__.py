"""The Tavolo referee: the rules engine, the gRPC service and the bot processes.

Importing the package, or any part of the engine, changes nothing in the process: the
modules that load grpc choose its transport first (:mod:`referee.grpc_transport`).
"""
