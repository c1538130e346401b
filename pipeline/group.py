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
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

PairScorer = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass
class GroupReport:
    """What grouping did: components split by the chaining guard, oversized components cut."""

    components_checked: int = 0
    components_split: int = 0
    oversized_components: int = 0
    extra_pairs_scored: int = 0


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


def _average_linkage(
    members: np.ndarray, scores: dict[tuple[int, int], float], link_threshold: float
) -> np.ndarray:
    """Cluster labels of `members` by average linkage on 1 − probability, cut at the threshold."""
    k = len(members)
    left, right = np.triu_indices(k, 1)
    probabilities = np.array([scores[(members[a], members[b])] for a, b in zip(left, right)])
    tree = linkage(1.0 - probabilities, method="average")
    return fcluster(tree, t=1.0 - link_threshold + 1e-12, criterion="distance")


def group_ads(
    n_ads: int,
    accepted: pd.DataFrame,
    score_pairs: PairScorer,
    link_threshold: float,
    max_exact_size: int,
    report: GroupReport | None = None,
) -> np.ndarray:
    """Group label (0..n_groups-1) for every ad, from accepted pairs `i`, `j`, `probability`.

    `score_pairs(i, j)` must return the duplicate probability of arbitrary pairs of ads.
    """
    report = report if report is not None else GroupReport()
    left = accepted["i"].to_numpy(dtype=np.int64)
    right = accepted["j"].to_numpy(dtype=np.int64)
    component = _components(n_ads, left, right)
    sizes = np.bincount(component)
    big_components = np.flatnonzero(sizes >= 3)
    member_lists: list[np.ndarray] = []
    for comp in big_components:
        members = np.flatnonzero(component == comp)
        if len(members) > max_exact_size:
            report.oversized_components += 1
            member_lists.extend(p for p in _cut_oversized(members, accepted, link_threshold, max_exact_size))
        else:
            member_lists.append(members)
    scores = {(int(a), int(b)): float(p) for a, b, p in zip(left, right, accepted["probability"])}
    missing_left, missing_right = [], []
    for members in member_lists:
        if len(members) < 3:
            continue
        a, b = np.triu_indices(len(members), 1)
        for x, y in zip(members[a], members[b]):
            if (int(x), int(y)) not in scores:
                missing_left.append(int(x))
                missing_right.append(int(y))
    if missing_left:
        extra = score_pairs(np.asarray(missing_left), np.asarray(missing_right))
        scores.update({(x, y): float(p) for x, y, p in zip(missing_left, missing_right, extra)})
        report.extra_pairs_scored += len(missing_left)
    labels = component.astype(np.int64)
    next_label = int(labels.max()) + 1 if n_ads else 0
    for members in member_lists:
        if len(members) < 3:
            labels[members] = next_label
            next_label += 1
            continue
        report.components_checked += 1
        clusters = _average_linkage(members, scores, link_threshold)
        if len(np.unique(clusters)) > 1:
            report.components_split += 1
        for cluster in np.unique(clusters):
            labels[members[clusters == cluster]] = next_label
            next_label += 1
    return pd.factorize(labels)[0]
