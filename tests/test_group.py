"""Grouping: union-find with the chaining guard."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobdedup.pipeline.group import GroupReport, group_ads


def _edges(rows):
    return pd.DataFrame(rows, columns=["i", "j", "probability"])


def test_chain_through_a_middle_ad_is_split():
    # 0~1 and 1~2 strongly, but 0 and 2 share nothing.
    report = GroupReport()
    labels = group_ads(
        3, _edges([(0, 1, 0.99), (1, 2, 0.98)]), lambda a, b: np.zeros(len(a)), 0.6, 60, report
    )
    assert labels[0] != labels[2]
    assert report.components_split == 1 and report.extra_pairs_scored == 1


def test_true_group_with_all_pairs_similar_stays_together():
    labels = group_ads(4, _edges([(0, 1, 0.99), (1, 2, 0.97)]), lambda a, b: np.full(len(a), 0.95), 0.6, 60)
    assert labels[0] == labels[1] == labels[2] and labels[3] != labels[0]


def test_every_ad_gets_a_label_and_singletons_are_alone():
    labels = group_ads(5, _edges([(0, 1, 0.9)]), lambda a, b: np.zeros(len(a)), 0.5, 60)
    assert len(labels) == 5 and len(set(labels.tolist())) == 4


def test_oversized_component_is_cut_by_raising_the_threshold():
    # A star of 30 weak links around ad 0 plus a strong clique of three.
    rows = [(0, k, 0.6) for k in range(1, 31)] + [(1, 2, 0.99), (1, 3, 0.99), (2, 3, 0.99)]
    report = GroupReport()
    labels = group_ads(31, _edges(rows), lambda a, b: np.zeros(len(a)), 0.5, 10, report)
    assert report.oversized_components == 1
    assert labels[1] == labels[2] == labels[3]
    assert np.bincount(labels).max() <= 10
