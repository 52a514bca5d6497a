"""The rules engine: pure Python, no I/O, no grpc."""
