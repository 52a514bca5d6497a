"""Loaded before any test module: the tests run on the transport the referee chooses."""

# The referee package chooses gRPC's transport when it loads; it must load before grpc.
import referee  # noqa: F401

# The browser fixtures (tests/browser.py): a headless chromium for the web pages' tests.
pytest_plugins = ["tests.browser"]
