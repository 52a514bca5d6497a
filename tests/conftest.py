"""Loaded before any test module: the tests run on the transport the referee chooses."""

# The referee chooses gRPC's transport (referee/grpc_transport.py); gRPC reads it once, when
# it loads, so it is chosen here, before any test module imports grpc.
from referee import grpc_transport  # noqa: F401

# The browser fixtures (tests/browser.py): a headless chromium for the web pages' tests.
pytest_plugins = ["tests.browser"]
