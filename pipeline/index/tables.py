"""Integer tables the index's steps hand each other, built from their one block
(`features.normalize.unique.frame_of_arrays`).

A frame of a dict of columns costs ~50 µs for the few rows of a single-ad check, and its first
column read as much again (pandas works out where each column lives); a frame of one block of
one dtype costs about a quarter of that.

Example:
    >>> int64_table(pd.Index(["id", "gid"]), np.array([[1, 2], [1, 1]])).to_dict("list")
    {'id': [1, 2], 'gid': [1, 1]}
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobdedup.features.normalize.unique import frame_of_arrays


def int64_table(columns: pd.Index, values: np.ndarray) -> pd.DataFrame:
    """The int64 table of `columns` whose column i holds `values[i]` (a (columns, rows) array): the
    table a dict of the columns makes, each column's values side by side in memory as there."""
    values = np.asarray(values, dtype=np.int64)
    return frame_of_arrays(columns, list(values), pd.RangeIndex(values.shape[1]))


_SIGHTING_COLUMNS = pd.Index(["key", "value"])


def sightings_table(key: np.ndarray, value: np.ndarray) -> pd.DataFrame:
    """Block sightings (`key`, `value`; see `pipeline.index.blocks`) as an int64 table."""
    return int64_table(_SIGHTING_COLUMNS, np.stack([key, value]))
