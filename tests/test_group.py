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


def test_scrapes_of_one_retitled_listing_link_as_one_unit():
    """Stacks' "Backend Engineer" listing on Indeed was scraped again as "Product Engineer
    (Backend-biased)"; Glassdoor's copy under each title matches the scrape of its own title only
    (the title rules refuse the crossed pairs). A listing is one vacancy: the four ads are one
    group. Without the listing keys, average linkage splits the sites (mean link 0.5)."""
    # 0, 1: the Indeed listing under its two titles; 2, 3: Glassdoor's listing under the same two.
    rows = [(0, 1, 0.99), (2, 3, 0.99), (0, 2, 0.986), (1, 3, 0.988)]

    def crossed(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # 0-3 and 1-2: capped by a title rule
        return np.full(len(a), 0.01)

    listings = pd.Series(["indeed/3c8e", "indeed/3c8e", "glassdoor/639", "glassdoor/639"])
    report = GroupReport()
    assert len(set(group_ads(4, _edges(rows), crossed, 0.7, 60, report, listings=listings).tolist())) == 1
    assert report.extra_pairs_scored == 2
    assert len(set(group_ads(4, _edges(rows), crossed, 0.7, 60).tolist())) == 2


def test_a_listing_unit_still_splits_from_what_matches_none_of_its_scrapes():
    """Units do not chain: ad 2 links to the listing's first scrape only weakly (0.75, accepted) and
    ad 3 to ad 2 strongly; the listing and ad 3 share nothing, so the mean link to {2, 3} is low."""
    rows = [(0, 1, 0.99), (1, 2, 0.75), (2, 3, 0.99)]
    listings = pd.Series(["site/1", "site/1", None, None])
    labels = group_ads(4, _edges(rows), lambda a, b: np.full(len(a), 0.02), 0.7, 60, listings=listings)
    assert labels[0] == labels[1] and labels[3] != labels[0]
