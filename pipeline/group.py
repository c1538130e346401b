"""Stage 6: accepted pairs → groups, without chaining unrelated ads together.

Plain union-find lets A≈B and B≈C put A and C together even when they share nothing. Here every
connected component of three or more ads is completed: the pairs inside it that were never
scored are scored too (`score_pairs`), and the component is re-clustered with average linkage,
cut at `link_threshold` (≥ 0.5). A member joins a group only if its mean probability with the
group's members reaches that level, so a chain A–B–C with p(A, C) ≈ 0 splits. Components larger
than `max_exact_size` are first cut by raising the pair threshold until their parts fit (the
same guard as dedupe's clustering), and are reported.

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
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

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


def _cut_oversized(
    members: np.ndarray, edges: pd.DataFrame, threshold: float, max_size: int
) -> list[np.ndarray]:
    """Split a too-large component by raising the edge threshold until every part fits."""
    inside = edges[edges["i"].isin(members) & edges["j"].isin(members)]
    levels = np.unique(inside["probability"].to_numpy())
    parts = [members]
    for level in levels[levels > threshold]:
        strong = inside[inside["probability"] >= level]
        local = {doc: k for k, doc in enumerate(members)}
        labels = _components(
            len(members), strong["i"].map(local).to_numpy(), strong["j"].map(local).to_numpy()
        )
        parts = [members[labels == c] for c in np.unique(labels)]
        if max(len(p) for p in parts) <= max_size:
            break
    return parts


def _average_linkage(probabilities: np.ndarray, link_threshold: float) -> np.ndarray:
    """Cluster labels of k members from their k(k−1)/2 pair probabilities (np.triu_indices order),
    by average linkage on 1 − probability, cut at the threshold."""
    tree = linkage(1.0 - probabilities, method="average")
    return fcluster(tree, t=1.0 - link_threshold + 1e-12, criterion="distance")


def _member_lists(
    component: np.ndarray,
    accepted: pd.DataFrame,
    link_threshold: float,
    max_exact_size: int,
    report: GroupReport,
) -> tuple[list[np.ndarray], np.ndarray]:
    """Member arrays (ascending ad indices) of every component to check, and labels where the
    oversized components are already cut into parts."""
    labels = component.astype(np.int64)
    sizes = np.bincount(component) if len(component) else np.zeros(0, np.int64)
    order = np.argsort(component, kind="stable")
    starts = np.cumsum(sizes) - sizes
    lists = [
        order[starts[c] : starts[c] + sizes[c]]
        for c in np.flatnonzero((sizes >= 3) & (sizes <= max_exact_size))
    ]
    next_label = len(sizes)
    for comp in np.flatnonzero(sizes > max_exact_size):
        report.oversized_components += 1
        for part in _cut_oversized(
            order[starts[comp] : starts[comp] + sizes[comp]], accepted, link_threshold, max_exact_size
        ):
            labels[part] = next_label
            next_label += 1
            if len(part) >= 3:
                lists.append(np.sort(part))
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
) -> np.ndarray:
    """Group label (0..n_groups-1) for every ad, from accepted pairs `i`, `j`, `probability`.

    `score_pairs(i, j)` must return the duplicate probability of arbitrary pairs of ads. A
    component whose pairs all reach `link_threshold` is one group without clustering (average
    linkage could only merge it whole); the others are clustered.
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
    for g in np.flatnonzero(weak):
        clusters = _average_linkage(probability[pair_ptr[g] : pair_ptr[g + 1]], link_threshold)
        distinct = np.unique(clusters)
        if len(distinct) > 1:
            report.components_split += 1
            for cluster in distinct[1:]:
                labels[lists[g][clusters == cluster]] = next_label
                next_label += 1
    return pd.factorize(labels)[0]
