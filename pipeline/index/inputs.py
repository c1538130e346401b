"""Row operations on a batch's `PairInputs`: new and old ads side by side, some rows prepared again.

Example:
    >>> # inputs = concat_inputs(batch.inputs, old_batch.inputs); first = take_rows(inputs, np.array([0]))
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from jobdedup.features.pairs import PairInputs
from jobdedup.features.shingle_sets import ShingleSets


def concat_inputs(first: PairInputs, second: PairInputs) -> PairInputs:
    """Rows of `first` then rows of `second`, as one `PairInputs`."""
    joined: dict[str, Any] = {}
    for part in dataclasses.fields(PairInputs):
        a, b = getattr(first, part.name), getattr(second, part.name)
        if isinstance(a, pd.DataFrame):
            joined[part.name] = pd.concat([a, b], ignore_index=True)
        elif isinstance(a, ShingleSets):
            joined[part.name] = ShingleSets.concatenate([a, b])
        else:
            joined[part.name] = np.concatenate([a, b])
    return PairInputs(**joined)


def take_rows(inputs: PairInputs, rows: np.ndarray) -> PairInputs:
    """The rows `rows` of `inputs`, in that order."""
    taken: dict[str, Any] = {}
    for part in dataclasses.fields(PairInputs):
        value = getattr(inputs, part.name)
        if isinstance(value, pd.DataFrame):
            taken[part.name] = value.iloc[rows].reset_index(drop=True)
        elif isinstance(value, ShingleSets):
            taken[part.name] = value.subset(rows)
        else:
            taken[part.name] = value[rows]
    return PairInputs(**taken)


def replace_rows(inputs: PairInputs, rows: np.ndarray, replacement: PairInputs) -> PairInputs:
    """`inputs` with its rows `rows` (sorted) replaced by the rows of `replacement`, in order."""
    order = np.arange(len(inputs.words))
    order[rows] = len(order) + np.arange(len(rows))
    return take_rows(concat_inputs(inputs, replacement), order)
