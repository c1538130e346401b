"""Union-find kernels (numba) for grouping: connected components of small graphs without scipy's
sparse-matrix set-up, the cut of oversized components, flat clusters of a linkage tree.

Example:
    >>> components(4, np.array([0, 3]), np.array([2, 2])).tolist()
    [0, 1, 0, 0]
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def find(parent: np.ndarray, x: int) -> int:
    """Root of x's set, compressing the path."""
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        parent[x], x = root, parent[x]
    return root


@njit(cache=True, nogil=True)
def union(parent: np.ndarray, size: np.ndarray, a: int, b: int) -> int:
    """Join the sets of a and b (union by size); the size of the joined set."""
    ra, rb = find(parent, a), find(parent, b)
    if ra == rb:
        return size[ra]
    if size[ra] < size[rb]:
        ra, rb = rb, ra
    parent[rb] = ra
    size[ra] += size[rb]
    return size[ra]


@njit(cache=True, nogil=True)
def _label_sets(parent: np.ndarray) -> np.ndarray:
    """Set number of every element, sets numbered in the order of their smallest element."""
    n = len(parent)
    label = np.empty(n, dtype=np.int64)
    label_of_root = np.full(n, -1, dtype=np.int64)
    next_label = 0
    for v in range(n):
        root = find(parent, v)
        if label_of_root[root] < 0:
            label_of_root[root] = next_label
            next_label += 1
        label[v] = label_of_root[root]
    return label


@njit(cache=True, nogil=True)
def _components(n: int, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    parent = np.arange(n)
    size = np.ones(n, dtype=np.int64)
    for e in range(len(left)):
        union(parent, size, left[e], right[e])
    return _label_sets(parent)


def components(n: int, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Connected component of each of n nodes given edges (left[e], right[e]), numbered in the order
    of their smallest node — the labels `scipy.sparse.csgraph.connected_components` gives an
    undirected graph, without its sparse-matrix set-up (which dominates on small graphs)."""
    return _components(int(n), np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64))


@njit(cache=True, nogil=True)
def _flat_clusters(tree: np.ndarray, cutoff: float) -> np.ndarray:
    n = len(tree) + 1
    parent = np.arange(n)
    size = np.ones(n, dtype=np.int64)
    highest = np.empty(n - 1)  # highest merge distance in each node's subtree
    first = np.empty(2 * n - 1, dtype=np.int64)  # one observation under each node
    first[:n] = np.arange(n)
    for k in range(n - 1):
        a, b = int(tree[k, 0]), int(tree[k, 1])
        top = tree[k, 2]
        if a >= n and highest[a - n] > top:
            top = highest[a - n]
        if b >= n and highest[b - n] > top:
            top = highest[b - n]
        highest[k] = top
        first[n + k] = first[a]
        if top <= cutoff:
            union(parent, size, first[a], first[b])
    return _label_sets(parent)


def flat_clusters(tree: np.ndarray, cutoff: float) -> np.ndarray:
    """Flat clusters of a linkage tree by distance, as `scipy.cluster.hierarchy.fcluster(tree,
    cutoff, criterion="distance")` forms them (a subtree is one cluster when no merge inside it is
    above `cutoff`), numbered 0.. in the order of their first observation (fcluster numbers them
    1.. in tree order), without fcluster's validation of the tree (most of its time on small trees).

    Example:
        >>> tree = np.array([[0, 1, 0.1, 2], [2, 3, 0.9, 3]])
        >>> flat_clusters(tree, 0.5).tolist()
        [0, 0, 1]
    """
    return _flat_clusters(np.asarray(tree, dtype=np.float64), float(cutoff))
