"""Tavolo's top layer: tournaments and the ``tavolo`` command line."""

# The referee package chooses gRPC's transport when it loads; it must load before grpc.
import referee  # noqa: F401
