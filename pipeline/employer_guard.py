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

from jobdedup.features.employers import same_employer_names
from jobdedup.pipeline.union_find import components


@dataclass(frozen=True)
class EmployerSplit:
    """One group the guard split: its size, the employers it joined, the parts it became."""

    size: int
    employers: tuple[str, ...]
    parts: int


def _employers_of(names: list[str], links: list[tuple[str, str]]) -> dict[str, int]:
    """Employer number of each distinct name: spelling variants together, then employers whose
    evidence links join every two of them directly. (In plain Python: a group names a few
    employers, where numpy arrays and a compiled union-find cost ~60 µs a group.)"""
    n = len(names)
    same = [(a, b) for a in range(n) for b in range(a + 1, n) if same_employer_names(names[a], names[b])]
    employer = _small_components(n, same)
    if max(employer, default=0) == 0:  # one employer written one or several ways
        return dict.fromkeys(names, 0)
    index = {name: k for k, name in enumerate(names)}
    units = max(employer) + 1
    linked = {
        (min(ea, eb), max(ea, eb)) for ea, eb in ((employer[index[a]], employer[index[b]]) for a, b in links)
    }
    linked = {pair for pair in linked if pair[0] != pair[1]}
    component = _small_components(units, sorted(linked))
    merged = list(range(units))
    for c in sorted(set(component)):
        unit_list = [unit for unit in range(units) if component[unit] == c]
        k = len(unit_list)
        if k > 1 and sum(1 for pair in linked if component[pair[0]] == c) == k * (k - 1) // 2:
            for unit in unit_list:
                merged[unit] = unit_list[0]
    return {name: merged[employer[k]] for k, name in enumerate(names)}


def _small_components(n: int, pairs: list[tuple[int, int]]) -> list[int]:
    """`_components` of a graph of a few nodes, in plain Python."""
    parent = list(range(n))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    numbers: dict[int, int] = {}
    return [numbers.setdefault(root(v), len(numbers)) for v in range(n)]


def _components(n: int, pairs: list[tuple[int, int]]) -> np.ndarray:
    """Connected components numbered in the order of their smallest node (as scipy numbers them)."""
    rows = np.array([p[0] for p in pairs], dtype=np.int64)
    cols = np.array([p[1] for p in pairs], dtype=np.int64)
    return components(n, rows, cols)


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
        votes = pd.DataFrame(
            {"member": ends[usable], "employer": employer[others[usable]], "w": weights[usable]}
        )
        best = votes.groupby(["member", "employer"])["w"].sum().reset_index()
        best = best.sort_values(["member", "w", "employer"], ascending=[True, False, True])
        best = best.drop_duplicates("member")
        employer[best["member"].to_numpy()] = best["employer"].to_numpy()


def _by_label(labels: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of `labels` whose label is in `wanted` (sorted), grouped label by label in their
    original order, and ptr: the positions of wanted[k] are [ptr[k], ptr[k + 1])."""
    slot = np.searchsorted(wanted, labels)
    slot[slot == len(wanted)] = 0
    hit = np.flatnonzero(wanted[slot] == labels) if len(wanted) else np.zeros(0, dtype=np.int64)
    hit = hit[np.argsort(slot[hit], kind="stable")]
    ptr = np.zeros(len(wanted) + 1, dtype=np.int64)
    np.cumsum(np.bincount(slot[hit], minlength=len(wanted)), out=ptr[1:])
    return hit, ptr


def split_mixed_employers(
    labels: np.ndarray, companies: pd.Series, accepted: pd.DataFrame, links: pd.DataFrame
) -> tuple[np.ndarray, list[EmployerSplit]]:
    """Group labels with every group of several employers split (see the module), and what was split.

    Members, pairs and links are sorted by group once, so the cost is linear in ads and pairs plus
    the work inside each group of several names.

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
    mixed_labels = mixed.index.to_numpy(dtype=np.int64)[mixed.to_numpy() > 1]
    if len(mixed_labels) == 0:
        return pd.factorize(labels)[0], splits
    i_all = accepted["i"].to_numpy(dtype=np.int64)
    j_all = accepted["j"].to_numpy(dtype=np.int64)
    p_all = accepted["probability"].to_numpy(dtype=float)
    link_i = links["i"].to_numpy(dtype=np.int64)
    link_j = links["j"].to_numpy(dtype=np.int64)
    # Members, inner pairs and inner links of each mixed group, in their original order.
    member_at, member_ptr = _by_label(labels, mixed_labels)
    pair_label = np.where(labels[i_all] == labels[j_all], labels[i_all], -1)
    pair_at, pair_ptr = _by_label(pair_label, mixed_labels)
    link_label = np.where(labels[link_i] == labels[link_j], labels[link_i], -1)
    link_at, link_ptr = _by_label(link_label, mixed_labels)
    local = np.zeros(len(labels), dtype=np.int64)
    for g in range(len(mixed_labels)):
        members = member_at[member_ptr[g] : member_ptr[g + 1]]
        group_links = link_at[link_ptr[g] : link_ptr[g + 1]]
        member_names = names[members]
        distinct = sorted(set(member_names[known[members]]))
        link_names = [(names[a], names[b]) for a, b in zip(link_i[group_links], link_j[group_links])]
        employer_of = _employers_of(distinct, link_names)
        if len(set(employer_of.values())) < 2:
            continue
        local[members] = np.arange(len(members))
        inside = pair_at[pair_ptr[g] : pair_ptr[g + 1]]
        i, j, weight = local[i_all[inside]], local[j_all[inside]], p_all[inside]
        employer = np.array([employer_of[n] if n is not None else -1 for n in member_names], dtype=np.int64)
        employer = _assign_unknown(employer, i, j, weight)
        keep = employer[i] == employer[j]
        part = _components(len(members), list(zip(i[keep], j[keep])))
        parts = pd.factorize((employer + 1) * len(members) + part)[0]
        moved = parts > 0
        labels[members[moved]] = next_label + parts[moved] - 1
        next_label += int(parts.max())
        splits.append(EmployerSplit(len(members), tuple(distinct), int(parts.max()) + 1))
    return pd.factorize(labels)[0], splits
