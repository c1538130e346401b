"""The Python API end to end on the bundled real-ad sample, with the shipped default model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobdedup.pipeline import engine as engine_module
from jobdedup.pipeline.clean import clean_descriptions
from jobdedup.pipeline.engine import Deduplicator
from jobdedup.pipeline.sketch import shingle_sets, tokenize


def test_groups_list_every_input_ad_once_and_pairs_follow_the_contract(test_ads, test_result):
    groups, pairs = test_result.groups, test_result.pairs
    assert sorted(groups["ad_id"]) == sorted(test_ads["ad_id"])
    assert groups["ad_id"].is_unique
    assert {"ad_id_a", "ad_id_b", "probability", "is_duplicate"} <= set(pairs.columns)
    assert (pairs["ad_id_a"] != pairs["ad_id_b"]).all()
    assert pairs["probability"].between(0, 1).all()
    # An accepted pair is always inside one group.
    group_of = groups.set_index("ad_id")["group_id"]
    accepted = pairs[pairs["is_duplicate"]]
    assert (
        accepted["ad_id_a"].map(group_of).to_numpy() == accepted["ad_id_b"].map(group_of).to_numpy()
    ).all()


@pytest.mark.slow
def test_held_out_quality_beats_the_plain_way(held_out_model, test_ads, test_labels, held_out_result):
    from jobdedup.pipeline.baseline import minhash_threshold_baseline

    figures = held_out_model.evaluate(test_ads, test_labels, result=held_out_result)
    baseline = minhash_threshold_baseline(held_out_result.batch, test_labels, held_out_model.config)
    assert figures["precision"] >= 0.97 and figures["f1"] >= 0.95
    assert figures["f1"] > baseline["f1"] + 0.1
    for key in ("recall", "pr_auc", "candidate_recall", "bcubed_precision", "bcubed_recall"):
        assert 0.0 <= figures[key] <= 1.0


def _shingle_jaccard(texts: list[str]) -> float:
    tokens = tokenize(clean_descriptions(pd.Series(texts)).tolist())
    sets = shingle_sets(tokens.word_hash, tokens.doc_ptr, 5)
    a, b = set(sets.row(0).tolist()), set(sets.row(1).tolist())
    return len(a & b) / len(a | b) if a | b else float("nan")


@pytest.mark.slow
def test_low_overlap_reposts_are_found(test_ads, test_labels, held_out_result):
    """Labelled reposts whose texts share only 30-45 % of their shingles still end up grouped."""
    positives = test_labels.pairs[test_labels.pairs["label"] == 1]
    text = test_ads.set_index("ad_id")["description"].fillna("")
    jaccard = np.array(
        [_shingle_jaccard([text[a], text[b]]) for a, b in zip(positives["ad_id_a"], positives["ad_id_b"])]
    )
    low = positives[(jaccard >= 0.30) & (jaccard <= 0.45)]
    assert len(low) >= 20
    group_of = held_out_result.groups.set_index("ad_id")["group_id"]
    found = (low["ad_id_a"].map(group_of).to_numpy() == low["ad_id_b"].map(group_of).to_numpy()).mean()
    # 60, 63 and 59 of these 69 pairs with the model trained on seeds 1, 2 and 3: the bar is the
    # level of every seed, not one seed's luck.
    assert found >= 0.85


@pytest.mark.slow
def test_template_sharing_different_vacancies_are_not_grouped(test_ads, held_out_result):
    """Hard negatives built from one template (other town, other level) stay apart from their base ad."""
    origin = test_ads.set_index("ad_id")["origin"]
    group_of = held_out_result.groups.set_index("ad_id")["group_id"]
    text = test_ads.set_index("ad_id")["description"].fillna("")
    negatives = [i for i in origin.index if origin[i] in ("negative:other_town", "negative:other_level")]
    assert len(negatives) >= 20
    base_ids = [i.split("#")[0] for i in negatives]
    overlap = np.array([_shingle_jaccard([text[n], text[b]]) for n, b in zip(negatives, base_ids)])
    assert np.nanmedian(overlap) > 0.6  # they really do share the template
    merged = np.array([group_of[n] == group_of[b] for n, b in zip(negatives, base_ids)])
    # 3 of the 50 since the town a listed district lies in counts as a place the text names (#13):
    # the third is a synthetic "other town" negative whose base text says "travel to London /
    # Manchester / Bristol" and whose town became "Ealing, London" (it also turned full time into
    # part time, which no feature reads); at most 2 of 50 before.
    assert merged.sum() <= 3


def test_same_seed_gives_identical_outputs(default_model, test_ads):
    sample = test_ads.iloc[:200]
    first_pairs, first_groups = default_model.dedup(sample)
    second_pairs, second_groups = default_model.dedup(sample)
    pd.testing.assert_frame_equal(first_pairs, second_pairs)
    pd.testing.assert_frame_equal(first_groups, second_groups)


def test_fit_save_load_round_trip(tmp_path, test_ads, test_labels):
    from jobdedup.pipeline.config import Config

    model = Deduplicator(Config(show_progress=False, n_estimators=40)).fit(test_ads, test_labels)
    model.save(tmp_path / "m.json")
    loaded = Deduplicator.load(tmp_path / "m.json").with_config(show_progress=False)
    sample = test_ads.iloc[:150]
    pd.testing.assert_frame_equal(model.dedup(sample)[0], loaded.dedup(sample)[0])
    assert loaded.threshold_ == model.threshold_
    assert np.array_equal(loaded.boilerplate_, model.boilerplate_)


@pytest.mark.slow
def test_hand_checked_natural_pairs_held_out(held_out_model):
    """Hand-judged natural pairs from corpora the model never trained on (measured 2026-11-24:
    precision 0.967, recall 0.674 over 476 duplicates; the bounds sit a few pairs below)."""
    from jobdedup.pipeline.io import read_ads, read_labels
    from tests.conftest import DATA

    ads = read_ads(DATA / "natural_test_ads.parquet")
    labels = read_labels(DATA / "natural_test_pairs.csv", ads=ads)
    figures = held_out_model.evaluate(ads, labels)
    assert figures["labelled_pairs"] == len(labels.pairs) and figures["labelled_duplicates"] >= 50
    assert figures["precision"] >= 0.94 and figures["recall"] >= 0.64


def test_scoring_in_blocks_gives_the_outputs_of_one_block(default_model, test_ads, test_result, monkeypatch):
    """`run` scores its candidate pairs `SCORE_BLOCK` at a time: blocks of a few hundred pairs
    (blocks of 1 to 16 pairs take the few-values paths) give every output of one block."""
    assert len(test_result.pairs) > 600  # (one block at the shipped size)
    for block in (7, 300):
        monkeypatch.setattr(engine_module, "SCORE_BLOCK", block)
        blocked = default_model.run(test_ads)
        pd.testing.assert_frame_equal(blocked.pairs, test_result.pairs)
        pd.testing.assert_frame_equal(blocked.groups, test_result.groups)
