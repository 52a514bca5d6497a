"""Read a dataset of `tavolo dataset export` with pandas and numpy (docs/research.md)."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from referee.research.dataset import legal_masks, observations
from referee.research.encoding import OBSERVATION_SECTIONS

folder = Path(sys.argv[1])

# Who decided what, how long they thought, and how their games ended.
decisions = pd.read_parquet(
    folder / "decisions.parquet", columns=["entry", "kind", "action", "ms", "returns"]
)
by_entry = decisions.groupby("entry", observed=True).agg(
    decisions=("action", "size"), mean_ms=("ms", "mean"), mean_return=("returns", "mean")
)
print(by_entry.round(3).to_string())

# Behaviour cloning: what the seat to act saw, what it could do, and what it did.
table = pq.read_table(
    folder / "decisions.parquet", columns=["family", "obs_indices", "obs_values", "legal", "action"]
)
[family] = table.column("family").unique().to_pylist()  # a tournament plays one game
x = observations(table)  # float32, a row per decision
legal = legal_masks(table, family)  # bool, a row per decision
y = table.column("action").to_numpy()
assert legal[np.arange(len(y)), y].all(), "every action taken was legal"
hand = next(s for s in OBSERVATION_SECTIONS if s.name == "hand")
held = x[:, hand.start : hand.start + hand.size].sum(axis=1)
print(f"x {x.shape}, legal {legal.shape}, y {y.shape}: {family}, {held.mean():.1f} cards held")
