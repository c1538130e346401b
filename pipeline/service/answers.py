"""The service's JSON answers: a check's decisions and duplicates, an ad's or a group's members.

Example:
    >>> # check_response(index.check(ads, model), 0.5)["ads"][0]["decision"]  # "new", "duplicate", ...
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows: numpy scalars to Python, NaN/NA to None (column lists, not a frame's
    `astype`/`where`/`to_dict`, which cost a single-ad check ~1.5 ms)."""
    columns = [[_plain(value) for value in frame[name].tolist()] for name in frame.columns]
    return [dict(zip(frame.columns, row)) for row in zip(*columns)]


def _plain(value: Any) -> Any:
    """One value of `_records`: None for a missing one, Python scalars for numpy's."""
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def check_response(result: Any, threshold: float) -> dict[str, Any]:
    """The `/v1/check` answer from `Index.check`'s result: per ad its decision and duplicates."""
    pairs = result.pairs
    duplicates: dict[str, list[dict[str, Any]]] = {}
    if len(pairs):
        found = np.flatnonzero(pairs["is_duplicate"].to_numpy(dtype=bool))
        columns = ("ad_id_a", "ad_id_b", "probability", "dup_type", "b_in_index")
        for a, b, p, kind, in_index in zip(*(pairs[name].to_numpy()[found].tolist() for name in columns)):
            entry = {"probability": round(float(p), 6), "dup_type": None if pd.isna(kind) else str(kind)}
            duplicates.setdefault(a, []).append({"ad_id": b, "in_index": bool(in_index), **entry})
            if not in_index:
                duplicates.setdefault(b, []).append({"ad_id": a, "in_index": False, **entry})
    answers = []
    for row in records(result.groups):
        ad_id = row["ad_id"]
        found_for = sorted(duplicates.get(ad_id, []), key=lambda d: -d["probability"])
        if row["status"] == "already_indexed":
            decision = "already_indexed"
        else:
            decision = "duplicate" if row["group_size"] > 1 else "new"
        answers.append({**row, "decision": decision, "duplicates": found_for})
    return {"ads": answers, "merges": records(result.merges), "threshold": threshold}


def group_of_ad(index: Any, ad_id: str) -> dict[str, Any] | None:
    """{ad_id, group_id, group_size, members} of an indexed ad, or None."""
    store = index.store
    with store.read():
        found = store.find_ads([ad_id])
        if not len(found):
            return None
        gid = int(found["gid"].iloc[0])
        return _group(store, gid) | {"ad_id": ad_id}


def group_by_name(index: Any, group_id: str) -> dict[str, Any] | None:
    """{group_id, group_size, members} of a group, or None (also for a group merged into another)."""
    store = index.store
    with store.read():
        row = store.db.execute("SELECT gid FROM groups WHERE name = ?", (group_id,)).fetchone()
        if row is None:
            founder = store.find_ads([group_id])
            founder = founder[founder["id"] == founder["gid"]]
            if not len(founder):
                return None
            gid = int(founder["gid"].iloc[0])
        else:
            gid = int(row[0])
        found = _group(store, gid)
        return found if found["group_size"] else None


def _group(store: Any, gid: int) -> dict[str, Any]:
    members = store.group_members(np.asarray([gid], dtype=np.int64))["id"].to_numpy()
    name = store.group_names(np.asarray([gid], dtype=np.int64)).get(gid)
    return {
        "group_id": name,
        "group_size": len(members),
        "members": sorted(store._ad_ids(np.sort(members)).tolist()),
    }


__all__ = ["check_response", "group_by_name", "group_of_ad", "records"]
