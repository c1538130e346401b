"""The employer guard sorts members, pairs and links by group once and finds components with
union-find: the same splits as looking them up over all ads and pairs for every group with scipy's
components (the guard before issue #14, kept here as the reference)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from jobdedup.features.employers import same_employer_names
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


def _reference_employers_of(names: list[str], links: list[tuple[str, str]]) -> dict[str, int]:
    """`_employers_of` before it ran in plain Python (issue #52): numpy and scipy's components."""
    n = len(names)
    same = [(a, b) for a in range(n) for b in range(a + 1, n) if same_employer_names(names[a], names[b])]
    employer = _scipy_components(n, same)
    if employer.max(initial=0) == 0:
        return dict.fromkeys(names, 0)
    index = {name: k for k, name in enumerate(names)}
    units = int(employer.max()) + 1
    linked = {
        (min(ea, eb), max(ea, eb)) for ea, eb in ((employer[index[a]], employer[index[b]]) for a, b in links)
    }
    linked = {pair for pair in linked if pair[0] != pair[1]}
    component = _scipy_components(units, sorted(linked))
    merged = np.arange(units)
    for c in np.unique(component):
        unit_list = np.flatnonzero(component == c)
        k = len(unit_list)
        if k > 1 and sum(1 for pair in linked if component[pair[0]] == c) == k * (k - 1) // 2:
            merged[unit_list] = unit_list[0]
    return {name: int(merged[employer[k]]) for k, name in enumerate(names)}


_MORE_NAMES = [
    "nimbus", "nimbus it", "amd", "advanced micro devices", "capgemini", "capgemini uk", "randstad",
    "randstad nederland", "merkur", "hays", "robert half", "rh", "teksystems", "apex systems", "acme",
]  # fmt: skip


def test_employers_of_names_are_those_of_numpy_and_scipy():
    rng = np.random.default_rng(52)
    joined = 0
    for _ in range(400):
        names = sorted(set(rng.choice(_MORE_NAMES, int(rng.integers(1, 9)))))
        links = [tuple(rng.choice(names, 2)) for _ in range(int(rng.integers(0, 6)))]
        expected = _reference_employers_of(names, links)
        assert guard._employers_of(names, links) == expected
        joined += len(set(expected.values())) < len(names) and len(set(expected.values())) > 1
    assert joined > 20  # cases where some names join and others stay apart


def test_small_components_are_scipys():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 12))
        pairs = [(int(a), int(b)) for a, b in rng.integers(0, n, (int(rng.integers(0, 2 * n)), 2))]
        assert guard._small_components(n, pairs) == _scipy_components(n, pairs).tolist()
