"""The submission file of Eurostat's 2023 online-job-ad deduplication challenge.

`duplicates.csv`: one line `id1,id2,type` per duplicate pair, no header, `id1 < id2` (numerically
when every id is an integer, as in the challenge data, else in string order). Every pair of ads
that ends in one group is listed, also pairs inside a group that were never candidates; types
come from `models.dup_types`.

Example:
    >>> # write_eurostat(model.run(ads), "out/duplicates.csv")
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pandas as pd

from jobdedup.models.dup_types import dup_types_of_pairs
from jobdedup.pipeline.engine import DedupResult


def group_pairs(groups: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Row positions (i < j) of every pair of ads sharing a `group_id`."""
    frame = pd.DataFrame({"row": np.arange(len(groups)), "group": groups["group_id"].to_numpy()})
    frame = frame[frame["group"].duplicated(keep=False)]
    if frame.empty:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    both = frame.merge(frame, on="group")
    both = both[both["row_x"] < both["row_y"]]
    return both["row_x"].to_numpy(np.int64), both["row_y"].to_numpy(np.int64)


def eurostat_pairs(result: DedupResult) -> pd.DataFrame:
    """`id1`, `id2`, `type` for every duplicate pair of a dedup run (`id1 < id2`), sorted."""
    left, right = group_pairs(result.groups)
    ids = result.groups["ad_id"].astype(str).to_numpy()
    types = dup_types_of_pairs(result.batch.inputs, left, right)
    a, b = ids[left], ids[right]
    numeric = len(ids) > 0 and all(s.isdigit() for s in ids)
    if numeric:
        swap = np.array([int(x) > int(y) for x, y in zip(a, b)], dtype=bool)
    else:
        swap = a > b
    id1, id2 = np.where(swap, b, a), np.where(swap, a, b)
    frame = pd.DataFrame({"id1": id1, "id2": id2, "type": types})
    if numeric:
        order = np.lexsort((frame["id2"].astype(int).to_numpy(), frame["id1"].astype(int).to_numpy()))
        return frame.iloc[order].reset_index(drop=True)
    return frame.sort_values(["id1", "id2"], kind="stable").reset_index(drop=True)


def write_eurostat(result: DedupResult, path: str | os.PathLike[str]) -> int:
    """Write the challenge's `duplicates.csv` (no header); returns the number of pairs."""
    frame = eurostat_pairs(result)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerows(frame.itertuples(index=False, name=None))
    return len(frame)
