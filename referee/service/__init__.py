"""The referee's gRPC service: bot streams, the relay, spectators, organisers, and the
server that holds them."""
