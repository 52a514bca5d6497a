"""Search over hidden cards for bots: sampled worlds and perfect-information Monte Carlo.

Pure like the engine it drives (no I/O, no grpc): it reads one seat's engine observation
and plays sampled deals through the engine's own rules and clone API.
"""
