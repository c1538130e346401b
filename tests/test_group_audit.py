"""The groups read whole (data/group_audit_labels.csv) and how the quality report counts them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jobdedup.models.group_audit import GROUP_VERDICTS, read_groups

DATA = Path(__file__).resolve().parents[1] / "data"
FIELDS_ONLY_RULE = "definition's fields-only rule"


@pytest.fixture(scope="module")
def audited() -> pd.DataFrame:
    return pd.read_csv(DATA / "group_audit_labels.csv", dtype=str, keep_default_na=False)


def test_group_verdicts_are_what_the_readers_wrote(audited):
    """Every verdict is the reader's, except the fields-only groups the definition decides, which
    say so in their reason and were `unsure`."""
    raw = pd.concat(
        [
            pd.read_csv(path, dtype=str)
            for path in sorted((DATA / "judgements/group_audit").glob("verdicts_*.csv"))
        ],
        ignore_index=True,
    )
    assert len(raw) == len(audited) == 100
    changed = raw["verdict"].to_numpy() != audited["verdict"].to_numpy()
    ruled = audited["reason"].str.startswith(FIELDS_ONLY_RULE).to_numpy()
    assert (changed == ruled).all()
    assert set(raw.loc[changed, "verdict"]) == {"unsure"}
    assert set(audited.loc[changed, "verdict"]) == {"one_vacancy"}


def test_group_audit_rows_are_well_formed(audited):
    assert set(audited["verdict"]) <= set(GROUP_VERDICTS)
    assert set(audited["sample"]) == {"uniform", "three_or_more"}
    members = audited["ad_ids"].str.split(";")
    assert (members.str.len() >= 2).all()
    assert not members.explode().duplicated().any()  # a group is read once, an ad in one group
    big = audited["sample"] == "three_or_more"
    assert (members[big].str.len() >= 3).all()
    for row, ads in zip(audited.itertuples(), members, strict=True):
        odd = [ad for ad in row.odd_ads.split(";") if ad]
        assert bool(odd) == (row.verdict == "mixed"), row.ad_ids
        assert set(odd) <= set(ads), row.ad_ids
        assert row.reason.strip(), row.ad_ids


def test_read_groups_counts_only_groups_this_run_forms_exactly():
    audited = pd.DataFrame(
        {
            "sample": ["uniform", "uniform", "uniform", "three_or_more"],
            "ad_ids": ["a;b", "c;d", "e;f", "g;h;i"],
            "verdict": ["one_vacancy", "mixed", "one_vacancy", "one_vacancy"],
        }
    )
    # c, d split apart; e, f now grown by x; g, h, i still one group; an ad unknown to the run is lost
    group_of = pd.Series({"a": 1, "b": 1, "c": 2, "d": 3, "e": 4, "f": 4, "x": 4, "g": 5, "h": 5, "i": 5})
    found = read_groups(audited, group_of)
    assert (found["uniform"]["read"], found["uniform"]["still_formed"]) == (3, 1)
    assert found["uniform"]["mixed"] == 0 and found["uniform"]["share"] == 1.0
    assert found["three_or_more"]["still_formed"] == 1
    missing = read_groups(audited.iloc[:1], pd.Series({"a": 1}))
    assert missing["uniform"]["still_formed"] == 0


def test_read_groups_names_an_unknown_verdict():
    audited = pd.DataFrame({"sample": ["uniform"], "ad_ids": ["a;b"], "verdict": ["duplicate"]})
    with pytest.raises(ValueError, match="unknown verdict 'duplicate'"):
        read_groups(audited, pd.Series({"a": 1, "b": 1}))
