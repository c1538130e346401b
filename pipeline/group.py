"""Stage 6: accepted pairs → groups, without chaining unrelated ads together.

Plain union-find lets A≈B and B≈C put A and C together even when they share nothing. Here every
connected component of three or more ads is completed: the pairs inside it that were never
scored are scored too (`score_pairs`), and the component is re-clustered with average linkage,
cut at `link_threshold` (the decision threshold). A member joins a group only if its mean probability with the
group's members reaches that level, so a chain A–B–C with p(A, C) ≈ 0 splits. Components larger
than `max_exact_size` are first cut by raising the pair threshold until their parts fit (the
same guard as dedupe's clustering), and are reported. The cut takes one pass over the component's
pairs, strongest first, as a single-linkage dendrogram is built (union-find): grouping costs
O(E log E) in the accepted pairs, however large the components chained by them.

Ads that are one posting are clustered as one unit (`grouping_units`): the scrapes of one listing,
and copies of one employer's ad under one title in one city that score as duplicates. Two units
link by their best-matching members, so the one copy per city that names a requisition links the
cities for every copy, as a reader who has read that copy does.

Example:
    >>> edges = pd.DataFrame({"i": [0, 1], "j": [1, 2], "probability": [0.99, 0.99]})
    >>> labels = group_ads(3, edges, lambda i, j: np.zeros(len(i)), 0.5, 60)
    >>> len(set(labels.tolist()))
    2
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numba import njit
from scipy.cluster.hierarchy import linkage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from jobdedup.features.normalize import distinct
from jobdedup.pipeline.union_find import find, flat_clusters, union

PairScorer = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass
class GroupReport:
    """What grouping did: components split by the chaining guard, oversized components cut, groups
    split because they joined different employers (`pipeline.employer_guard`)."""

    components_checked: int = 0
    components_split: int = 0
    oversized_components: int = 0
    extra_pairs_scored: int = 0
    employer_splits: list = field(default_factory=list)


def _components(n: int, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    graph = coo_matrix((np.ones(len(left)), (left, right)), shape=(n, n))
    return connected_components(graph, directed=False)[1]


@njit(cache=True, nogil=True)
def _cut_kernel(
    member_ptr: np.ndarray,
    edge_ptr: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    probability: np.ndarray,
    above: np.ndarray,
    max_size: int,
) -> np.ndarray:
    """Part number of every member of the oversized components (parts numbered component by
    component, each in the order of its smallest member).

    Members of component c are [member_ptr[c], member_ptr[c + 1]) (local indices); its edges are
    [edge_ptr[c], edge_ptr[c + 1]), sorted by descending probability, `above` (p > threshold) a
    prefix of them. Pass 1 joins the edges level by level, strongest first, as a single-linkage
    dendrogram is built, and stops at the first level after which some part would exceed
    `max_size`; pass 2 rebuilds the parts from the levels before it."""
    n_members = member_ptr[-1]
    parent = np.arange(n_members)
    size = np.ones(n_members, dtype=np.int64)
    part = np.empty(n_members, dtype=np.int64)
    part_of_root = np.full(n_members, -1, dtype=np.int64)
    next_part = 0
    for c in range(len(member_ptr) - 1):
        start, end = edge_ptr[c], edge_ptr[c + 1]
        above_end = start
        while above_end < end and above[above_end]:
            above_end += 1
        if above_end == start:
            keep_end = end  # no edge above the threshold: the component stays whole
        else:
            keep_end = -1
            if max_size >= 1:
                k = start
                while k < above_end:
                    level_end = k
                    while level_end < above_end and probability[level_end] == probability[k]:
                        level_end += 1
                    fits = True
                    for e in range(k, level_end):
                        if union(parent, size, left[e], right[e]) > max_size:
                            fits = False
                            break
                    if not fits:
                        break
                    keep_end = level_end
                    k = level_end
            if keep_end < 0:  # even the strongest level alone is too large: its parts
                keep_end = start
                while keep_end < above_end and probability[keep_end] == probability[start]:
                    keep_end += 1
        for m in range(member_ptr[c], member_ptr[c + 1]):
            parent[m] = m
            size[m] = 1
        for e in range(start, keep_end):
            union(parent, size, left[e], right[e])
        for m in range(member_ptr[c], member_ptr[c + 1]):
            root = find(parent, m)
            if part_of_root[root] < 0:
                part_of_root[root] = next_part
                next_part += 1
            part[m] = part_of_root[root]
    return part


def _cut_oversized(
    component: np.ndarray,
    sizes: np.ndarray,
    order: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    probability: np.ndarray,
    threshold: float,
    max_size: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Cut every component over `max_size` ads at the lowest probability level above `threshold`
    at which all its parts fit (only the edges at or above that level kept); at the strongest level
    if none fits; whole if no edge is above `threshold`. The same parts as raising the threshold
    level by level (dedupe's guard), in one pass over the edges sorted by probability: O(E log E).

    Returns the members of the oversized components (by component, ascending within each) and the
    part number of each (parts numbered component by component, in the order of their smallest
    member).
    """
    oversized = sizes > max_size
    members = order[oversized[component[order]]]
    member_ptr = np.zeros(int(oversized.sum()) + 1, dtype=np.int64)
    np.cumsum(sizes[oversized], out=member_ptr[1:])
    local = np.empty(len(component), dtype=np.int64)
    local[members] = np.arange(len(members))
    rank = np.cumsum(oversized) - 1
    inside = np.flatnonzero(oversized[component[left]])
    inside = inside[np.lexsort((-probability[inside], rank[component[left[inside]]]))]
    edge_rank = rank[component[left[inside]]]
    edge_probability = probability[inside]
    edge_ptr = np.zeros(len(member_ptr), dtype=np.int64)
    np.cumsum(np.bincount(edge_rank, minlength=len(member_ptr) - 1), out=edge_ptr[1:])
    part = _cut_kernel(
        member_ptr,
        edge_ptr,
        local[left[inside]],
        local[right[inside]],
        edge_probability.astype(np.float64),
        np.asarray(edge_probability > threshold),
        int(max_size),
    )
    return members, part


def _average_linkage(probabilities: np.ndarray, link_threshold: float) -> np.ndarray:
    """Cluster labels (0.., in the order of their first member) of k members from their k(k−1)/2
    pair probabilities (np.triu_indices order), by average linkage on 1 − probability, cut at the
    threshold (the clusters of scipy's `fcluster(..., criterion="distance")`)."""
    tree = linkage(1.0 - probabilities, method="average")
    return flat_clusters(tree, 1.0 - link_threshold + 1e-12)


def _unit_linkage(probabilities: np.ndarray, unit: np.ndarray, link_threshold: float) -> np.ndarray:
    """`_average_linkage` of k members, those of one unit (`unit` codes, -1 = none; see
    `grouping_units`) clustered as one: a listing is one vacancy however its title or text
    changed between scrapes, and so are the copies of one posting, so two units link by their
    best-matching members (the largest probability between them) and the units are clustered by
    average linkage. Labels 0.. in the order of their first member.

    Example:
        >>> # a and b: one listing retitled; c matches a's title, not b's (p(b, c) = 0.01)
        >>> _unit_linkage(np.array([0.99, 0.98, 0.01]), np.array([7, 7, -1]), 0.7).tolist()
        [0, 0, 0]
    """
    known = unit[unit >= 0].tolist()
    if len(set(known)) == len(known):  # (no unit of two members here: most components, cheaply)
        return _average_linkage(probabilities, link_threshold)
    k = len(unit)
    unit = np.where(unit >= 0, unit, unit.max(initial=0) + 1 + np.arange(k))
    unit = np.unique(unit, return_inverse=True)[1].reshape(-1)
    n_units = int(unit.max()) + 1
    if n_units == 1:
        return np.zeros(k, dtype=np.int64)
    a, b = np.triu_indices(k, 1)
    best = np.zeros((n_units, n_units))
    np.maximum.at(best, (unit[a], unit[b]), probabilities)
    best = np.maximum(best, best.T)
    unit_a, unit_b = np.triu_indices(n_units, 1)
    clusters = _average_linkage(best[unit_a, unit_b], link_threshold)[unit]
    return pd.factorize(clusters)[0]  # (numbered in the order of their first member)


def grouping_units(fields: pd.DataFrame, accepted: pd.DataFrame, copy_probability: float) -> np.ndarray:
    """Per ad, its unit in grouping (-1 = none): the ads that are one posting, joined through the
    scrapes of one listing (`fields["listing"]`, see `features.listings`) and through accepted
    pairs of at least `copy_probability` whose ads have one normalised employer, title and city.

    Example:
        >>> fields = pd.DataFrame({"company": ["aecom"] * 3, "title": ["analyst"] * 3,
        ...                        "city": ["leeds", "leeds", "york"], "listing": [None] * 3})
        >>> pairs = pd.DataFrame({"i": [0, 0], "j": [1, 2], "probability": [0.95, 0.99]})
        >>> grouping_units(fields, pairs, 0.9).tolist()
        [0, 0, -1]
    """
    left = accepted["i"].to_numpy(dtype=np.int64)
    right = accepted["j"].to_numpy(dtype=np.int64)
    copies = accepted["probability"].to_numpy() >= copy_probability
    for column in ("company", "title", "city"):
        codes = distinct(fields[column])[0]
        copies &= (codes[left] == codes[right]) & (codes[left] >= 0)
    listing = distinct(fields["listing"])[0]
    listed = np.flatnonzero(listing >= 0)
    _, first, inverse = np.unique(listing[listed], return_index=True, return_inverse=True)
    component = _components(
        len(fields),
        np.concatenate([left[copies], listed]),
        np.concatenate([right[copies], listed[first][inverse.reshape(-1)]]),
    )
    sizes = np.bincount(component)
    return np.where(sizes[component] >= 2, component, -1)


def _member_lists(
    component: np.ndarray,
    accepted: pd.DataFrame,
    link_threshold: float,
    max_exact_size: int,
    report: GroupReport,
) -> tuple[list[np.ndarray], np.ndarray]:
    """Member arrays (ascending ad indices) of every component to check, and labels where the
    oversized components are already cut into parts. O(n + E log E) for n ads and E pairs."""
    labels = component.astype(np.int64)
    sizes = np.bincount(component) if len(component) else np.zeros(0, np.int64)
    order = np.argsort(component, kind="stable")
    starts = np.cumsum(sizes) - sizes
    lists = [
        order[starts[c] : starts[c] + sizes[c]]
        for c in np.flatnonzero((sizes >= 3) & (sizes <= max_exact_size))
    ]
    oversized = int((sizes > max_exact_size).sum())
    if oversized:
        report.oversized_components += oversized
        members, part = _cut_oversized(
            component,
            sizes,
            order,
            accepted["i"].to_numpy(dtype=np.int64),
            accepted["j"].to_numpy(dtype=np.int64),
            accepted["probability"].to_numpy(),
            link_threshold,
            max_exact_size,
        )
        labels[members] = len(sizes) + part
        part_sizes = np.bincount(part)
        by_part = members[np.argsort(part, kind="stable")]
        part_starts = np.cumsum(part_sizes) - part_sizes
        checked = np.flatnonzero(part_sizes >= 3)
        lists += [by_part[part_starts[p] : part_starts[p] + part_sizes[p]] for p in checked]
    return lists, labels


def _all_pairs(lists: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair (a < b) inside each list, list by list in np.triu_indices order; and pair_ptr,
    so the pairs of list g are [pair_ptr[g], pair_ptr[g + 1]). Vectorised per list size."""
    sizes = np.array([len(m) for m in lists], dtype=np.int64)
    pair_counts = sizes * (sizes - 1) // 2
    pair_ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(pair_counts, out=pair_ptr[1:])
    a = np.empty(int(pair_ptr[-1]), dtype=np.int64)
    b = np.empty_like(a)
    for size in np.unique(sizes):
        chosen = np.flatnonzero(sizes == size)
        members = np.stack([lists[g] for g in chosen])
        tri_a, tri_b = np.triu_indices(int(size), 1)
        slots = (pair_ptr[chosen][:, None] + np.arange(len(tri_a))[None, :]).ravel()
        a[slots] = members[:, tri_a].ravel()
        b[slots] = members[:, tri_b].ravel()
    return a, b, pair_ptr


def _pair_probabilities(
    a: np.ndarray,
    b: np.ndarray,
    accepted: pd.DataFrame,
    score_pairs: PairScorer,
    n_ads: int,
    report: GroupReport,
) -> np.ndarray:
    """Probability of each pair (a[p], b[p]): the accepted one where known, else scored now."""
    left = accepted["i"].to_numpy(dtype=np.int64)
    right = accepted["j"].to_numpy(dtype=np.int64)
    known_keys = np.minimum(left, right) * n_ads + np.maximum(left, right)
    order = np.argsort(known_keys, kind="stable")
    known_keys = known_keys[order]
    known_probability = accepted["probability"].to_numpy(dtype=float)[order]
    keys = a * n_ads + b
    at = np.minimum(np.searchsorted(known_keys, keys), max(len(known_keys) - 1, 0))
    found = (known_keys[at] == keys) if len(known_keys) else np.zeros(len(keys), dtype=bool)
    probability = np.where(found, known_probability[at] if len(known_keys) else 0.0, np.nan)
    missing = ~found
    if missing.any():
        probability[missing] = score_pairs(a[missing], b[missing])
        report.extra_pairs_scored += int(missing.sum())
    return probability


def group_ads(
    n_ads: int,
    accepted: pd.DataFrame,
    score_pairs: PairScorer,
    link_threshold: float,
    max_exact_size: int,
    report: GroupReport | None = None,
    units: np.ndarray | None = None,
) -> np.ndarray:
    """Group label (0..n_groups-1) for every ad, from accepted pairs `i`, `j`, `probability`.

    `score_pairs(i, j)` must return the duplicate probability of arbitrary pairs of ads. A
    component whose pairs all reach its link level is one group without clustering (average
    linkage could only merge it whole); the others are clustered, the members of one of `units`
    (per ad, -1 = none; `grouping_units`) as one (`_unit_linkage`), cut at `link_threshold`
    for every component alike: how many ads of one employer sit in one town is no evidence.
    """
    report = report if report is not None else GroupReport()
    left = accepted["i"].to_numpy(dtype=np.int64)
    right = accepted["j"].to_numpy(dtype=np.int64)
    component = _components(n_ads, left, right)
    lists, labels = _member_lists(component, accepted, link_threshold, max_exact_size, report)
    report.components_checked += len(lists)
    a, b, pair_ptr = _all_pairs(lists)
    probability = _pair_probabilities(a, b, accepted, score_pairs, n_ads, report)
    owner = np.repeat(np.arange(len(lists)), np.diff(pair_ptr))
    weak = np.bincount(owner[probability < link_threshold], minlength=len(lists)) > 0
    next_label = int(labels.max()) + 1 if n_ads else 0
    unit = units if units is not None else np.full(n_ads, -1)
    for g in np.flatnonzero(weak):
        clusters = _unit_linkage(probability[pair_ptr[g] : pair_ptr[g + 1]], unit[lists[g]], link_threshold)
        extra = int(clusters.max())
        if extra:
            report.components_split += 1
            moved = clusters > 0
            labels[lists[g][moved]] = next_label + clusters[moved] - 1
            next_label += extra
    return pd.factorize(labels)[0]
