"""The seed text of each episode of an environment, from what ``reset`` is given."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any


class EpisodeSeeds:
    """``reset(seed=42)`` plays the seed text ``"42"`` (what ``tavolo`` deals from it), and
    ``options={"seed": text}`` any text; a reset without one after a seeded one plays the
    seed's next episode (``"42/1"``, ``"42/2"``, ...), so a seeded run repeats whole. Never
    seeded, each episode gets 128 random bits."""

    def __init__(self) -> None:
        self._base: str | None = None
        self._episodes = 0

    def next(self, seed: int | None, options: Mapping[str, Any] | None) -> str:
        """The seed text of the episode ``reset(seed, options)`` starts."""
        text = (options or {}).get("seed")
        if text is not None or seed is not None:
            self._base = str(text if text is not None else seed)
            self._episodes = 0
            return self._base
        if self._base is not None:
            self._episodes += 1
            return f"{self._base}/{self._episodes}"
        return secrets.token_hex(16)
