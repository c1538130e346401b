"""Audit final groups the way a user first checks them: does any group mix employers?

Over all pairs of ads inside one group whose companies are both known, the share that name clearly
different employers (normalised names neither fuzzy-similar nor initials of one another,
`features.employers.same_employer_names`), and per group the number of distinct employers.
Agency-for-client groups count as two employers here: the audit reads names, not evidence.

Example:
    >>> groups = pd.Series(["g1", "g1", "g1", "g2"])
    >>> companies = pd.Series(["acme", "acme ltd", "globex", None])
    >>> audit = employer_mix(groups, companies)
    >>> audit["pairs_both_known"], audit["pairs_different_employers"], audit["max_employers"]
    (3, 2, 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from jobdedup.features.employers import same_employer_names


def _employer_count(names: list[str]) -> int:
    """Distinct employers among distinct names (names joined when they are one employer)."""
    employer = list(range(len(names)))
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            if same_employer_names(names[a], names[b]):
                old, new = employer[b], employer[a]
                employer = [new if e == old else e for e in employer]
    return len(set(employer))


def employer_mix(group_id: pd.Series, companies: pd.Series) -> dict[str, Any]:
    """In-group pairs with both companies known, how many name different employers, and the
    number of employers per group (largest, and how many groups hold more than one / three)."""
    frame = pd.DataFrame({"group": group_id.to_numpy(), "name": companies.to_numpy()}).dropna()
    counts = frame.groupby(["group", "name"]).size()
    sizes = counts.groupby(level="group").sum().to_numpy()
    both_known = int((sizes * (sizes - 1) // 2).sum())
    different = 0
    employers_per_group = []
    for _, per_name in counts.groupby(level="group"):
        if len(per_name) < 2:
            employers_per_group.append(1)
            continue
        names = [name for _, name in per_name.index]
        n = per_name.to_numpy()
        for a in range(len(names)):
            for b in range(a + 1, len(names)):
                if not same_employer_names(names[a], names[b]):
                    different += int(n[a] * n[b])
        employers_per_group.append(_employer_count(names))
    employers = np.asarray(employers_per_group or [0])
    return {
        "pairs_both_known": both_known,
        "pairs_different_employers": different,
        "share_different_employers": different / both_known if both_known else 0.0,
        "max_employers": int(employers.max()),
        "groups_with_several_employers": int((employers > 1).sum()),
        "groups_with_more_than_3_employers": int((employers > 3).sum()),
    }
