"""Tavolo for researchers: one tensor encoding of every family's observations, the action
table, and environments in the APIs research tools speak (docs/research.md).

The encoding (:mod:`.encoding`) needs nothing beyond the engine; the environments need the
``research`` extra (numpy, PettingZoo, Gymnasium, OpenSpiel: :mod:`.openspiel_game`).
"""
