"""The benchmarks behind ``tavolo bench`` (docs/benchmarks.md): speed, not correctness.

A package of their own: nothing that runs a match or a tournament imports it (a test in
tests/test_architecture.py checks), so measuring code never rides along with a referee.

- :mod:`.engine`: random playouts through the rules engine;
- :mod:`.round_trips`: decisions through the real referee, and a bare gRPC echo;
- :mod:`.sandbox`: a bot's start-up in and out of its sandbox, Unix sockets against TCP;
- :mod:`.tournament`: rating fits, and a whole tournament into SQLite.
"""
