"""Union-find kernels against the scipy functions they stand in for."""

from __future__ import annotations

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from jobdedup.pipeline.union_find import components, flat_clusters


def test_components_are_numbered_as_scipy_numbers_them():
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(1, 40))
        m = int(rng.integers(0, 2 * n))
        left, right = rng.integers(0, n, m), rng.integers(0, n, m)
        graph = coo_matrix((np.ones(m), (left, right)), shape=(n, n))
        np.testing.assert_array_equal(
            components(n, left, right), connected_components(graph, directed=False)[1]
        )


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = {(x, y) for x, y in zip(a.tolist(), b.tolist())}
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def test_flat_clusters_are_fclusters_distance_clusters():
    rng = np.random.default_rng(2)
    for trial in range(600):
        k = int(rng.integers(2, 25))
        distances = rng.uniform(0, 1, k * (k - 1) // 2)
        if trial % 2:
            distances = np.round(distances, 1)  # ties
        # centroid and median linkage have inversions: a merge below one inside it
        method = ["average", "average", "single", "centroid", "median"][trial % 5]
        tree = linkage(distances, method=method)
        cutoffs = [rng.uniform(0, 1), tree[rng.integers(0, k - 1), 2], 0.5 + 1e-12]
        for cutoff in cutoffs:
            ours = flat_clusters(tree, cutoff)
            theirs = fcluster(tree, t=cutoff, criterion="distance")
            assert _same_partition(ours, theirs), (method, cutoff)
            first = np.unique(ours, return_index=True)[1]
            np.testing.assert_array_equal(np.sort(first), first)  # numbered by first observation
