"""The arena: a competition that lives for weeks (docs/arena.md).

Entrants and their tokens, submissions unpacked from strangers' archives and kept by
content, the arena's file, its store and its HTTP API.
"""
