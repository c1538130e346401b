"""Stage 6b: a final group holds one employer.

Pair decisions already refuse two clearly different employers (`models.rules`), but a group can
still join them through a chain: ads without a company between them, or an agency ad linked to two
of its clients. This guard looks at each group's normalised company names:

1. names that are one employer written two ways (token-set ratio ≥ 0.9, or one the initials of the
   other; `features.employers`) form one *employer*;
2. employers linked by accepted pairs with evidence (an agency ad naming its client, a shared
   contact or requisition number, an agency copy of the client's text) join when every two of them
   are linked directly (two agencies carrying one client's requisition); an agency linked to two
   clients that are not linked to each other joins neither (it is no link between its clients);
3. when more than one employer is left, the group is split: each ad with a company goes with its
   employer, each ad without one with the employer its accepted pairs weigh most towards (through
   other ads without a company if need be), and each part keeps only what its own accepted pairs
   connect.

Example:
    >>> companies = pd.Series(["nimbus", None, "capgemini"])
    >>> edges = pd.DataFrame({"i": [0, 1], "j": [1, 2], "probability": [0.99, 0.97]})
    >>> labels, splits = split_mixed_employers(np.zeros(3, dtype=np.int64), companies, edges, edges.iloc[:0])
    >>> labels.tolist(), splits[0].employers
    ([0, 0, 1], ('capgemini', 'nimbus'))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from features.employers import same_employer_names


@dataclass(frozen=True)
class EmployerSplit:
    """One group the guard split: its size, the employers it joined, the parts it became."""

    size: int
    employers: tuple[str, ...]
    parts: int


def _employers_of(names: list[str], links: list[tuple[str, str]]) -> dict[str, int]:
    """Employer number of each distinct name: spelling variants together, then employers whose
    evidence links join every two of them directly."""
    n = len(names)
    same = [(a, b) for a in range(n) for b in range(a + 1, n) if same_employer_names(names[a], names[b])]
    employer = _components(n, same)
    index = {name: k for k, name in enumerate(names)}
    units = int(employer.max()) + 1
    linked = {(min(ea, eb), max(ea, eb)) for ea, eb in ((employer[index[a]], employer[index[b]]) for a, b in links)}
    linked = {pair for pair in linked if pair[0] != pair[1]}
    component = _components(units, sorted(linked))
    merged = np.arange(units)
    for c in np.unique(component):
        unit_list = np.flatnonzero(component == c)
        k = len(unit_list)
        if k > 1 and sum(1 for pair in linked if component[pair[0]] == c) == k * (k - 1) // 2:
            merged[unit_list] = unit_list[0]
    return {name: int(merged[employer[k]]) for k, name in enumerate(names)}


def _components(n: int, pairs: list[tuple[int, int]]) -> np.ndarray:
    rows = np.array([p[0] for p in pairs], dtype=np.int64)
    cols = np.array([p[1] for p in pairs], dtype=np.int64)
    graph = coo_matrix((np.ones(len(pairs)), (rows, cols)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def _assign_unknown(employer: np.ndarray, i: np.ndarray, j: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Employer of each member without a company (-1): the one its accepted pairs weigh most towards,
    spreading outwards from members with a company; -1 where no pair leads to one."""
    employer = employer.copy()
    while True:
        unknown = employer < 0
        ends = np.concatenate([i, j])
        others = np.concatenate([j, i])
        weights = np.concatenate([weight, weight])
        usable = unknown[ends] & ~unknown[others]
        if not usable.any():
            return employer
        votes = pd.DataFrame({"member": ends[usable], "employer": employer[others[usable]], "w": weights[usable]})
        best = votes.groupby(["member", "employer"])["w"].sum().reset_index()
        best = best.sort_values(["member", "w", "employer"], ascending=[True, False, True])
        best = best.drop_duplicates("member")
        employer[best["member"].to_numpy()] = best["employer"].to_numpy()


def split_mixed_employers(
    labels: np.ndarray, companies: pd.Series, accepted: pd.DataFrame, links: pd.DataFrame
) -> tuple[np.ndarray, list[EmployerSplit]]:
    """Group labels with every group of several employers split (see the module), and what was split.

    Args:
        labels: group label per ad.
        companies: normalised company name per ad (NA where unknown).
        accepted: accepted pairs `i`, `j`, `probability`.
        links: accepted pairs `i`, `j` whose two company names differ but are linked by evidence.
    """
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
        employer_of = _employers_of(distinct, link_names)
        if len(set(employer_of.values())) < 2:
            continue
        employer = np.array([employer_of[n] if n is not None else -1 for n in names[members]], dtype=np.int64)
        employer = _assign_unknown(employer, i, j, weight)
        keep = employer[i] == employer[j]
        part = _components(len(members), list(zip(i[keep], j[keep])))
        parts = pd.factorize((employer + 1) * len(members) + part)[0]
        for k in range(1, parts.max() + 1):
            labels[members[parts == k]] = next_label
            next_label += 1
        splits.append(EmployerSplit(len(members), tuple(distinct), int(parts.max()) + 1))
    return pd.factorize(labels)[0], splits
