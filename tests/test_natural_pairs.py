"""Integrity of the hand-judged natural pairs (data/natural_pairs.csv) and of how they were made from
the readers' raw judgements in data/judgements/ (no access to ../shared needed)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from jobdedup.models.dup_types import DUP_TYPES
from labelling.assemble_judgements import COLUMNS, assemble, contradictions

DATA = Path(__file__).resolve().parents[1] / "data"
STRATA = {
    "group_uniform", "uncertain", "fields_only", "chrome", "template", "req_equal", "req_diff", "multicity",
    "snippet", "retitled", "cross_site",
} | {f"r1:{s}" for s in "abcdefg"}  # fmt: skip


@pytest.fixture(scope="module")
def pairs() -> pd.DataFrame:
    return pd.read_csv(DATA / "natural_pairs.csv", dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def assembled():
    return assemble()


def test_committed_files_are_what_the_raw_judgements_give(assembled, pairs):
    decided, unsure, _ = assembled
    late = pd.read_csv(DATA / "natural_pairs_late.csv", dtype=str, keep_default_na=False)
    assert late["round"].isin([str(n) for n in range(5, 17)]).all() and len(late) >= 500
    committed = pd.concat([pairs, late], ignore_index=True)[COLUMNS]
    pd.testing.assert_frame_equal(decided.reset_index(drop=True).fillna(""), committed)
    committed_unsure = pd.read_csv(DATA / "natural_pairs_unsure.csv", dtype=str, keep_default_na=False)
    assert committed_unsure["ad_id_a"].tolist() == unsure["ad_id_a"].tolist()


def test_no_label_contradicts_two_others(assembled):
    """No pair labelled two vacancies whose ads are each labelled one vacancy with a third ad (the
    check `assemble` stops on), and the check finds such a triangle when one is there."""
    decided, _, _ = assembled
    assert contradictions(decided) == []
    triangle = pd.DataFrame(
        {"ad_id_a": ["x", "y", "x"], "ad_id_b": ["z", "z", "y"], "label": ["1", "1", "0"]}
    )
    assert contradictions(pd.concat([decided, triangle], ignore_index=True)) == [("x", "y", "z")]


def test_labels_types_and_strata(pairs):
    assert set(pairs["label"]) == {"0", "1"}
    duplicates = pairs["label"] == "1"
    assert duplicates.sum() >= 500 and (~duplicates).sum() >= 500
    assert pairs.loc[duplicates, "dup_type"].isin(DUP_TYPES).all()
    assert (pairs.loc[~duplicates, "dup_type"] == "").all()
    assert pairs["stratum"].isin(STRATA).all()
    assert pairs["reason"].str.strip().str.len().gt(10).all()
    assert pairs["round"].isin(["1", "2", "3", "4"]).all()  # round 5: natural_pairs_late.csv
    assert (pairs["round"] == "2").sum() >= 1500 and (pairs["round"] == "3").sum() >= 500


def test_ids_ordered_distinct_and_unique(pairs):
    assert (pairs["ad_id_a"] < pairs["ad_id_b"]).all(), "ad_id_a must be < ad_id_b"
    assert not pairs.duplicated(["ad_id_a", "ad_id_b"]).any(), "a pair is listed twice"


def test_unsure_pairs_are_not_labelled(pairs):
    unsure = pd.read_csv(DATA / "natural_pairs_unsure.csv", dtype=str)
    assert len(unsure) > 0
    both = set(zip(unsure.ad_id_a, unsure.ad_id_b)) & set(zip(pairs.ad_id_a, pairs.ad_id_b))
    assert not both, f"unsure pairs also labelled: {sorted(both)[:3]}"


def test_blind_second_reads_agree(assembled):
    _, _, agreement = assembled
    drawn = {
        2: 1650,
        3: 593,
        4: 660,
        5: 620,
        6: 417,
        7: 110,
        8: 347,
        9: 221,
        10: 424,
        11: 443,
        12: 378,
        13: 342,
    }  # new pairs per round: 10 % of each read twice
    for number, pairs in drawn.items():
        second = agreement[f"round{number}_second_reads"]
        assert second["pairs"] >= 0.1 * pairs - 1
        assert second["kappa_decided"] >= 0.9, number
    assert agreement["round1_reread"]["kappa_decided"] >= 0.9


@pytest.mark.parametrize(
    ("labels", "judgements"),
    [
        ("accepted_sample_labels.csv", "accepted_sample"),  # the shipped model's sample
        ("accepted_sample_labels_model_a9b1a29.csv", "accepted_sample_model_a9b1a29"),  # kept as labels
        ("accepted_sample_labels_earlier_model.csv", "accepted_sample_earlier_model"),  # kept as labels
    ],
)
def test_accepted_sample_labels_are_what_the_readers_wrote(labels: str, judgements: str):
    """data/accepted_sample_labels.csv (the default model's uniform accepted sample) is exactly
    the readers' decided judgements joined to the drawn pairs, each marked `sample=accepted`."""
    from labelling.draw_accepted_sample import assemble as assemble_accepted

    folder = Path(__file__).resolve().parent.parent / "data"
    committed = pd.read_csv(folder / labels, dtype=str, keep_default_na=False)
    rebuilt = assemble_accepted(folder / "judgements" / judgements).reset_index(drop=True)
    pd.testing.assert_frame_equal(committed, rebuilt.fillna(""))
    assert len(committed) >= 200 and set(committed["sample"]) == {"accepted"}
    assert committed["reason"].str.strip().str.len().gt(0).all()


def test_make_model_trains_on_every_labelled_set_and_each_has_its_ads():
    """`make model` names exactly `ALL_LABELLED_SETS` (the later rounds included) with the weights
    every other training gives them (`set_weights`), and each bundled natural set holds the ads of
    all of its pairs."""
    from jobdedup.data import ALL_LABELLED_SETS, NATURAL_PAIR_WEIGHT, NATURAL_SETS, set_weights

    makefile = (DATA.parent / "Makefile").read_text()
    named = re.findall(r"--ads data/(\S+) --labels data/(\S+) --weight (\S+)", makefile)
    assert sorted((a, b) for a, b, _ in named) == sorted(ALL_LABELLED_SETS)
    assert [float(w) for _, _, w in named] == set_weights([(a, b) for a, b, _ in named])
    assert set(set_weights(ALL_LABELLED_SETS)) == {1.0, NATURAL_PAIR_WEIGHT}  # (both kinds are there)
    for ads_file, pairs_file in NATURAL_SETS:
        ads = set(pd.read_parquet(DATA / ads_file, columns=["ad_id"])["ad_id"])
        labelled = pd.read_csv(DATA / pairs_file, dtype=str)
        assert labelled["ad_id_a"].isin(ads).all() and labelled["ad_id_b"].isin(ads).all(), pairs_file
