"""Cutting oversized components: one pass over the edges by probability, the same parts as raising
the threshold level by level (the algorithm before issue #14, kept here as the reference); and
`group_ads` as a whole the same as before (old cut, scipy's fcluster)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.cluster.hierarchy import fcluster, linkage

from jobdedup.pipeline import group
from jobdedup.pipeline.group import GroupReport, group_ads


def _reference_cut_oversized(
    members: np.ndarray, edges: pd.DataFrame, threshold: float, max_size: int
) -> list[np.ndarray]:
    """The old cut: connected components again at every probability level above the threshold."""
    inside = edges[edges["i"].isin(members) & edges["j"].isin(members)]
    levels = np.unique(inside["probability"].to_numpy())
    parts = [members]
    for level in levels[levels > threshold]:
        strong = inside[inside["probability"] >= level]
        local = {doc: k for k, doc in enumerate(members)}
        labels = group._components(
            len(members), strong["i"].map(local).to_numpy(), strong["j"].map(local).to_numpy()
        )
        parts = [members[labels == c] for c in np.unique(labels)]
        if max(len(p) for p in parts) <= max_size:
            break
    return parts


def _reference_member_lists(
    component: np.ndarray,
    accepted: pd.DataFrame,
    link_threshold: float,
    max_exact_size: int,
    report: GroupReport,
) -> tuple[list[np.ndarray], np.ndarray]:
    """The old `_member_lists`, calling the old cut once per oversized component."""
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
        for part in _reference_cut_oversized(
            order[starts[comp] : starts[comp] + sizes[comp]], accepted, link_threshold, max_exact_size
        ):
            labels[part] = next_label
            next_label += 1
            if len(part) >= 3:
                lists.append(np.sort(part))
    return lists, labels


def _reference_average_linkage(probabilities: np.ndarray, link_threshold: float) -> np.ndarray:
    """The old flat clusters: scipy's fcluster (numbered 1..; shifted to 0..)."""
    tree = linkage(1.0 - probabilities, method="average")
    return fcluster(tree, t=1.0 - link_threshold + 1e-12, criterion="distance") - 1


def _random_case(rng: np.random.Generator) -> tuple[int, pd.DataFrame, float, int]:
    """A few components, some over the size bound, with ties of equal probabilities, edges below the
    threshold, repeated edges and self-loops now and then."""
    n = int(rng.integers(2, 45))
    m = int(rng.integers(1, 3 * n))
    i = rng.integers(0, n, m)
    j = rng.integers(0, n, m)
    style = rng.integers(0, 4)
    if style == 0:  # few levels: many ties
        probability = rng.choice([0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99], m)
    elif style == 1:  # two decimals: some ties
        probability = np.round(rng.uniform(0.4, 1.0, m), 2)
    elif style == 2:  # all distinct
        probability = rng.permutation(np.linspace(0.41, 0.999, m))
    else:  # one level: everything tied
        probability = np.full(m, 0.9)
    edges = pd.DataFrame({"i": i, "j": j, "probability": probability})
    if rng.random() < 0.2:
        edges["probability"] = edges["probability"].astype(np.float32)
    threshold = float(rng.choice([0.5, 0.6, 0.7]))
    max_size = int(rng.integers(1, 13))
    return n, edges, threshold, max_size


@pytest.mark.slow
def test_same_parts_as_raising_the_threshold_level_by_level():
    rng = np.random.default_rng(14)
    cut = 0
    for _ in range(500):
        n, edges, threshold, max_size = _random_case(rng)
        component = group._components(n, edges["i"].to_numpy(), edges["j"].to_numpy())
        old_report, new_report = GroupReport(), GroupReport()
        old_lists, old_labels = _reference_member_lists(component, edges, threshold, max_size, old_report)
        new_lists, new_labels = group._member_lists(component, edges, threshold, max_size, new_report)
        np.testing.assert_array_equal(new_labels, old_labels)
        assert len(new_lists) == len(old_lists)
        for new, old in zip(new_lists, old_lists):
            np.testing.assert_array_equal(new, old)
        assert new_report == old_report
        cut += old_report.oversized_components > 0
    assert cut > 150  # the cases exercise the cut


def test_group_ads_unchanged_with_the_new_cut(monkeypatch):
    rng = np.random.default_rng(7)
    cases = [_random_case(rng) for _ in range(150)]

    def run():
        out = []
        for n, edges, threshold, max_size in cases:
            report = GroupReport()
            scores = np.random.default_rng(n).uniform(0, 1, (n, n))
            labels = group_ads(n, edges, lambda a, b, s=scores: s[a, b], threshold, max_size, report)
            out.append((labels, report))
        return out

    new = run()
    monkeypatch.setattr(group, "_member_lists", _reference_member_lists)
    monkeypatch.setattr(group, "_average_linkage", _reference_average_linkage)
    old = run()
    for (new_labels, new_report), (old_labels, old_report) in zip(new, old):
        np.testing.assert_array_equal(new_labels, old_labels)
        assert new_report == old_report


@pytest.mark.timeout(120)
def test_giant_component_is_cut_in_one_pass():
    # 200,000 ads in one component (a random tree plus random links), 1,000,000 distinct probabilities.
    rng = np.random.default_rng(3)
    n, m = 200_000, 1_000_000
    tree_child = np.arange(1, n)
    tree_parent = (rng.random(n - 1) * tree_child).astype(np.int64)
    extra = m - (n - 1)
    i = np.concatenate([tree_parent, rng.integers(0, n, extra)])
    j = np.concatenate([tree_child, rng.integers(0, n, extra)])
    edges = pd.DataFrame({"i": i, "j": j, "probability": rng.permutation(np.linspace(0.5001, 0.9999, m))})
    component = group._components(n, i, j)
    assert component.max() == 0
    report = GroupReport()
    lists, labels = group._member_lists(component, edges, 0.5, 60, report)
    sizes = np.bincount(pd.factorize(labels)[0])
    assert report.oversized_components == 1
    assert sizes.sum() == n and sizes.max() <= 60 and sizes.max() > 30
    assert sum(len(members) for members in lists) == sizes[sizes >= 3].sum()
    # the whole grouping too, every pair of a part scored
    grouped = group_ads(n, edges, lambda a, b: np.full(len(a), 0.9), 0.5, 60, report)
    np.testing.assert_array_equal(grouped, pd.factorize(labels)[0])
