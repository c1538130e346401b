"""The groups read whole (data/group_audit_labels.csv) and how the quality report counts them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jobdedup.models.group_audit import GROUP_VERDICTS, read_groups
from labelling.draw_group_sample import assemble, draw, group_page

DATA = Path(__file__).resolve().parents[1] / "data"
DEFINITION_RULE = "definition's "
"""How the reason of a verdict the definition decided against its reader begins."""


@pytest.fixture(scope="module")
def audited() -> pd.DataFrame:
    return pd.read_csv(DATA / "group_audit_labels.csv", dtype=str, keep_default_na=False)


def test_group_verdicts_are_what_the_readers_wrote(audited):
    """`draw_group_sample assemble` of the readers' files, round after round, gives the committed file, except
    three groups the definition decides, which say so in their reason: two fields-only groups that were
    `unsure`, and Acosta's one requisition number under two towns, read as `mixed`."""
    rounds = sorted((DATA / "judgements").glob("group_audit*"))
    assembled = pd.concat([assemble(folder) for folder in rounds], ignore_index=True).fillna("")
    assert len(rounds) == 4 and len(assembled) == len(audited) == 200
    ruled = audited["reason"].str.startswith(DEFINITION_RULE).to_numpy()
    kept = ~ruled
    columns = ["sample", "ad_ids", "verdict", "odd_ads", "employers_mixed", "error_class", "reason"]
    assert assembled.loc[kept, columns].equals(audited.loc[kept, columns])
    assert assembled.loc[ruled, ["sample", "ad_ids", "employers_mixed"]].equals(
        audited.loc[ruled, ["sample", "ad_ids", "employers_mixed"]]
    )
    assert assembled.loc[ruled, "verdict"].tolist() == ["unsure", "unsure", "mixed"]
    assert set(audited.loc[ruled, "verdict"]) == {"one_vacancy"}
    fields_only, requisition = audited.loc[ruled, "reason"].str.split("(").str[0].str.strip().unique()
    assert (fields_only, requisition) == ("definition's fields-only rule", "definition's requisition rule")
    # what the reader wrote stays after the rule's note
    assert audited.loc[ruled, "reason"].iloc[-1].endswith(assembled.loc[ruled, "reason"].iloc[-1])


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
    assert (found["uniform"]["read"], found["uniform"]["still_formed"], found["uniform"]["grown"]) == (
        3,
        1,
        1,
    )
    assert found["uniform"]["mixed"] == 0 and found["uniform"]["share"] == 1.0
    assert found["three_or_more"]["still_formed"] == 1
    missing = read_groups(audited.iloc[:1], pd.Series({"a": 1}))
    assert (missing["uniform"]["still_formed"], missing["uniform"]["grown"]) == (0, 0)


def test_read_groups_names_an_unknown_verdict():
    audited = pd.DataFrame({"sample": ["uniform"], "ad_ids": ["a;b"], "verdict": ["duplicate"]})
    with pytest.raises(ValueError, match="unknown verdict 'duplicate'"):
        read_groups(audited, pd.Series({"a": 1, "b": 1}))


def test_draw_takes_two_uniform_samples_without_repeating_a_group():
    groups = pd.DataFrame(
        {
            "ad_id": [f"ad{k}" for k in range(20)],
            "group_id": ["g1"] * 2
            + ["g2"] * 3
            + ["g3"] * 4
            + ["g4"] * 2
            + ["g5"] * 3
            + [f"s{k}" for k in range(6)],
        }
    )
    sample = draw(groups, size=3, seed=1, size_large=3, seed_large=2)
    assert not sample["gid"].duplicated().any()
    assert set(sample["gid"]) <= {"g1", "g2", "g3", "g4", "g5"}  # singletons are never drawn
    assert (sample["sample"] == "uniform").sum() == 3
    large = sample.loc[sample["sample"] == "three_or_more", "ad_ids"].str.split(";")
    assert (large.str.len() >= 3).all()
    assert sample["group"].tolist() == [f"{k:02d}" for k in range(len(sample))]
    assert draw(groups, 3, 1, 3, 2).equals(sample)  # the same seeds, the same groups
    later = draw(groups, 0, 1, 5, 3, skip=frozenset(sample["ad_ids"]), start=10)
    assert set(later["gid"]) == {"g1", "g2", "g3", "g4", "g5"} - set(sample["gid"]) - {"g1", "g4"}
    assert later["group"].tolist() == [f"{k}" for k in range(10, 10 + len(later))]


def test_group_page_shows_every_ad_and_cuts_long_texts():
    ads = pd.DataFrame(
        {
            "ad_id": ["a", "b"],
            "title": ["Staff Nurse", "Staff Nurse"],
            "company": ["White Recruitment", None],
            "location": ["Birmingham", "Wednesbury"],
            "posted_at": [None, None],
            "url": [None, None],
            "source": ["adzuna", "adzuna"],
            "description": ["x" * 50, None],
        }
    ).set_index("ad_id")
    page = group_page("07", "g7", ["a", "b"], ads, chars=20)
    assert page.startswith("# Group 07 (g7): 2 ads")
    assert "## a" in page and "## b" in page and "- location: Wednesbury" in page
    assert "x" * 20 + "\n[... cut, 50 chars in all]" in page and "x" * 21 not in page
    assert "(no description)" in page
