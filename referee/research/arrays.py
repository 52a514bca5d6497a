"""The encoding (:mod:`.encoding`) as numpy arrays: the observation and information-state
tensors, and the legal-action mask, as the environments hand them out."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from referee.engine.game_base import AnyGame
from referee.research.encoding import (
    INFORMATION_STATE_SIZE,
    OBSERVATION_SIZE,
    Entries,
    SettledCache,
    information_state_entries,
    legal_ids,
    num_actions,
    observation_entries,
)

Floats = npt.NDArray[np.float32]
Mask = npt.NDArray[np.int8]


def scatter(entries: Entries, size: int) -> Floats:
    """A float32 vector of ``size`` with ``entries`` set and 0 elsewhere."""
    out = np.zeros(size, dtype=np.float32)
    if entries:
        out[np.fromiter(entries.keys(), np.intp, len(entries))] = np.fromiter(
            entries.values(), np.float32, len(entries)
        )
    return out


def observation_tensor(state: AnyGame, seat: int, cache: SettledCache | None = None) -> Floats:
    """What ``seat`` knows now (:data:`~.encoding.OBSERVATION_SECTIONS`)."""
    return scatter(observation_entries(state, seat, cache), OBSERVATION_SIZE)


def information_state_tensor(
    state: AnyGame, seat: int, cache: SettledCache | None = None
) -> Floats:
    """What ``seat`` has seen of the deal, in order (:data:`~.encoding.HISTORY_SECTIONS`)."""
    return scatter(information_state_entries(state, seat, cache), INFORMATION_STATE_SIZE)


def action_mask(state: AnyGame, seat: int) -> Mask:
    """1 at each action ``seat`` may take now (none unless it is to act)."""
    out = np.zeros(num_actions(state.rules.game), dtype=np.int8)
    legal = legal_ids(state, seat)
    if legal:
        out[np.fromiter(legal, np.intp, len(legal))] = 1
    return out
