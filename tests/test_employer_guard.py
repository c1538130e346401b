"""The employer guard sorts members, pairs and links by group once and finds components with
union-find: the same splits as looking them up over all ads and pairs for every group with scipy's
components (the guard before issue #14, kept here as the reference)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from jobdedup.pipeline import employer_guard as guard
from jobdedup.pipeline.employer_guard import EmployerSplit, split_mixed_employers


def _reference_split_mixed_employers(
    labels: np.ndarray, companies: pd.Series, accepted: pd.DataFrame, links: pd.DataFrame
) -> tuple[np.ndarray, list[EmployerSplit]]:
    """The guard before issue #14: members, pairs and links looked up over all ads and pairs for
    every group of several names."""
    labels = np.asarray(labels, dtype=np.int64).copy()
    names = companies.astype(object).where(companies.notna(), None).to_numpy()
    known = pd.notna(names)
    frame = pd.DataFrame({"label": labels[known], "name": names[known]}).drop_duplicates()
    mixed = frame.groupby("label")["name"].nunique()
    splits: list[EmployerSplit] = []
    next_label = int(labels.max()) + 1 if len(labels) else 0
    i_all = accepted["i"].to_numpy(dtype=np.int64)
    j_all = accepted["j"].to_numpy(dtype=np.int64)
    p_all = accepted["probability"].to_numpy(dtype=float)
    for label in mixed.index[mixed.to_numpy() > 1]:
        members = np.flatnonzero(labels == label)
        inside = np.isin(i_all, members) & np.isin(j_all, members) & (labels[i_all] == label)
        local = pd.Series(np.arange(len(members)), index=members)
        i, j, weight = local[i_all[inside]].to_numpy(), local[j_all[inside]].to_numpy(), p_all[inside]
        group_links = links[links["i"].isin(members) & links["j"].isin(members)]
        distinct = sorted(set(frame.loc[frame["label"] == label, "name"]))
        link_names = [(names[a], names[b]) for a, b in zip(group_links["i"], group_links["j"])]
        employer_of = guard._employers_of(distinct, link_names)
        if len(set(employer_of.values())) < 2:
            continue
        employer = np.array([employer_of[n] if n is not None else -1 for n in names[members]], dtype=np.int64)
        employer = guard._assign_unknown(employer, i, j, weight)
        keep = employer[i] == employer[j]
        part = guard._components(len(members), list(zip(i[keep], j[keep])))
        parts = pd.factorize((employer + 1) * len(members) + part)[0]
        for k in range(1, parts.max() + 1):
            labels[members[parts == k]] = next_label
            next_label += 1
        splits.append(EmployerSplit(len(members), tuple(distinct), int(parts.max()) + 1))
    return pd.factorize(labels)[0], splits


NAMES = ["nimbus", "nimbus it", "amd", "advanced micro devices", "capgemini", "randstad", "merkur", None]


def _scipy_components(n: int, pairs: list[tuple[int, int]]) -> np.ndarray:
    """The old components of the guard's small graphs: scipy's connected_components."""
    rows = np.array([p[0] for p in pairs], dtype=np.int64)
    cols = np.array([p[1] for p in pairs], dtype=np.int64)
    graph = coo_matrix((np.ones(len(pairs)), (rows, cols)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


@pytest.mark.slow
def test_same_splits_as_looking_up_every_group_over_all_pairs(monkeypatch):
    rng = np.random.default_rng(14)
    split = 0
    for _ in range(100):
        n = int(rng.integers(1, 50))
        labels = rng.integers(0, max(1, n // 4), n)
        companies = pd.Series(rng.choice(np.array(NAMES, dtype=object), n), dtype=object)
        if rng.random() < 0.3:
            companies = companies.astype("string")
        m = int(rng.integers(0, 3 * n))
        i, j = rng.integers(0, n, m), rng.integers(0, n, m)
        same = rng.random(m) < 0.8  # most pairs inside a group
        j = np.where(same, [rng.choice(np.flatnonzero(labels == labels[a])) for a in i], j).astype(np.int64)
        accepted = pd.DataFrame({"i": i, "j": j, "probability": np.round(rng.uniform(0.3, 1.0, m), 2)})
        named = companies.notna().to_numpy()
        linked = (rng.random(m) < 0.3) & named[i] & named[j]  # links join two known names
        links = accepted.loc[linked, ["i", "j"]].reset_index(drop=True)
        new_labels, new_splits = split_mixed_employers(labels, companies, accepted, links)
        with monkeypatch.context() as patch:
            patch.setattr(guard, "_components", _scipy_components)
            old_labels, old_splits = _reference_split_mixed_employers(labels, companies, accepted, links)
        np.testing.assert_array_equal(new_labels, old_labels)
        assert new_splits == old_splits
        split += len(old_splits) > 0
    assert split > 30  # the cases exercise the split
