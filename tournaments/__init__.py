"""Tavolo's top layer: tournaments and the ``tavolo`` command line."""
