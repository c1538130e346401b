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
from jobdedup.models.metrics import estimated_precision

GROUP_VERDICTS = ("one_vacancy", "mixed", "unsure")
"""What a reader found a group to be (`data/group_audit_labels.csv`): every ad one vacancy, at least
one ad another vacancy or employer, or too little shown to decide."""


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


def check_verdicts(verdicts: pd.Series, source: str) -> None:
    """Stop with one line naming `source` when a verdict is not one of `GROUP_VERDICTS`."""
    unknown = set(verdicts) - set(GROUP_VERDICTS)
    if unknown:
        raise ValueError(f"{source}: unknown verdict {min(unknown)!r} (use one of {GROUP_VERDICTS})")


def read_groups(audited: pd.DataFrame, group_of: pd.Series) -> dict[str, dict[str, Any]]:
    """Per sample of groups read by hand (`audited`: `sample`, `ad_ids` joined by ";", `verdict`),
    how many of them this run still forms exactly (`group_of`: group per ad_id), the readers'
    verdicts on those, and the share of one-vacancy groups among the decided ones with its 95 %
    interval (`metrics.estimated_precision`). A group this run splits or grows is not counted;
    `grown` says how many it grew (all members in one group with ads no reader saw), the rest of
    `read` less `still_formed` it split.

    Example:
        >>> audited = pd.DataFrame({"sample": ["uniform"] * 3, "ad_ids": ["a;b", "c;d", "e;f"],
        ...     "verdict": ["one_vacancy", "mixed", "unsure"]})
        >>> group_of = pd.Series({"a": 1, "b": 1, "c": 2, "d": 3, "e": 4, "f": 4})
        >>> found = read_groups(audited, group_of)["uniform"]
        >>> found["read"], found["still_formed"], found["one_vacancy"], found["unsure"], found["share"]
        (3, 2, 1, 1, 1.0)
    """
    check_verdicts(audited["verdict"], "group audit")
    members = audited["ad_ids"].str.split(";").explode()
    group = members.map(group_of)
    sizes = group_of.value_counts()
    per_row = pd.DataFrame({"group": group, "size": group.map(sizes)}).groupby(level=0)
    together = (
        (per_row["group"].nunique() == 1)  # one group of this run holds the members,
        & per_row["group"].count().eq(per_row.size())  # every member is one of its ads,
    )
    holds_more = per_row["size"].first().gt(per_row.size())  # that group also holds ads no reader saw
    audited = audited.assign(
        formed=(together & ~holds_more).reindex(audited.index, fill_value=False),
        grown=(together & holds_more).reindex(audited.index, fill_value=False),
    )
    out = {}
    for sample, rows in audited.groupby("sample", sort=False):  # (in the file's order)
        kept = rows.loc[rows["formed"], "verdict"]
        counts = {verdict: int((kept == verdict).sum()) for verdict in GROUP_VERDICTS}
        decided = kept[kept != "unsure"].eq("one_vacancy").to_numpy(dtype=int)
        estimate = estimated_precision(decided)
        out[str(sample)] = {
            "read": len(rows),
            "still_formed": int(rows["formed"].sum()),
            "grown": int(rows["grown"].sum()),
            **counts,
            "share": estimate["precision"],
            "low": estimate["low"],
            "high": estimate["high"],
        }
    return out
