"""Preparing a batch in slices: the result depends on the slice size only, not on the workers or\non whether the descriptions are streamed from the file."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from jobdedup.pipeline.config import Config
from jobdedup.pipeline.errors import InputWarning
from jobdedup.pipeline.io import read_ads, read_ads_streamed
from jobdedup.pipeline.prepare import prepare_batch


def _prepared(ads: pd.DataFrame, jobs: int, chunk_size: int, descriptions=None):
    config = dataclasses.replace(Config(), jobs=jobs, chunk_size=chunk_size)
    seen: list[int] = []
    batch = prepare_batch(ads, config, np.zeros(0, dtype=np.uint64), seen.append, descriptions)
    return batch, seen


def _assert_same_batch(alone, parallel) -> None:
    for name in ("full", "core", "numbers"):
        a, b = getattr(alone.inputs, name), getattr(parallel.inputs, name)
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.values, b.values)
    assert np.array_equal(alone.inputs.signatures, parallel.inputs.signatures)
    assert np.array_equal(alone.inputs.core_words, parallel.inputs.core_words)
    pd.testing.assert_frame_equal(alone.inputs.fields, parallel.inputs.fields)
    assert np.array_equal(alone.batch_boilerplate, parallel.batch_boilerplate)
    assert alone.status.tolist() == parallel.status.tolist()


@pytest.mark.slow
def test_worker_processes_give_the_same_batch_as_one_process(test_ads):
    ads = test_ads.iloc[:300]
    alone, slices_alone = _prepared(ads, jobs=1, chunk_size=100)
    parallel, slices_parallel = _prepared(ads, jobs=2, chunk_size=100)
    assert slices_alone == slices_parallel == [100, 100, 100]
    _assert_same_batch(alone, parallel)


@pytest.mark.slow
def test_streamed_descriptions_give_the_same_batch(test_ads, tmp_path):
    ads = test_ads.iloc[:250].reset_index(drop=True)
    # Row groups of 70 do not line up with slices of 100: the reader must re-cut them.
    ads.to_parquet(tmp_path / "ads.parquet", row_group_size=70)
    without_text, descriptions = read_ads_streamed(tmp_path / "ads.parquet", chunk_size=100)
    assert "description" not in without_text.columns
    for jobs in (1, 2):
        in_memory, _ = _prepared(ads, jobs=jobs, chunk_size=100)
        _, descriptions = read_ads_streamed(tmp_path / "ads.parquet", chunk_size=100)
        streamed, slices = _prepared(without_text, jobs=jobs, chunk_size=100, descriptions=descriptions)
        assert slices == [100, 100, 50]
        _assert_same_batch(in_memory, streamed)


def test_streamed_descriptions_are_checked_like_read_ads(tmp_path):
    ads = pd.DataFrame(
        {"ad_id": [f"a{i}" for i in range(7)], "description": ["x" * 30, None, "ok", "y" * 12, "", "z", "w"]}
    )
    ads.to_parquet(tmp_path / "ads.parquet", row_group_size=3)
    with pytest.warns(InputWarning, match="2 ad"):
        whole = read_ads(tmp_path / "ads.parquet", max_description_chars=10)
    with pytest.warns(InputWarning, match="2 ad\\(s\\) have descriptions longer than 10"):  # noqa: PT031 (warns as the slices are read)
        rest, descriptions = read_ads_streamed(
            tmp_path / "ads.parquet", max_description_chars=10, chunk_size=4
        )
        slices = list(descriptions)
    assert [len(s) for s in slices] == [4, 3]
    pd.testing.assert_series_equal(pd.concat(slices), whole["description"], check_names=False)
    pd.testing.assert_frame_equal(rest, whole.drop(columns="description"))


def test_slices_must_match_the_descriptions(test_ads):
    ads = test_ads.iloc[:30]
    short = iter([ads["description"].iloc[:10], ads["description"].iloc[10:20]])
    with pytest.raises(ValueError, match="expected a slice of 10 rows, got none"):
        _prepared(ads.drop(columns="description"), jobs=1, chunk_size=10, descriptions=short)


def test_slices_are_the_rows_of_the_whole_batch_in_order(test_ads):
    ads = test_ads.iloc[:120]
    sliced, _ = _prepared(ads, jobs=1, chunk_size=50)
    whole, _ = _prepared(ads, jobs=1, chunk_size=1_000)
    # Full-text shingles and word counts do not depend on boilerplate, so slicing cannot change them.
    assert np.array_equal(sliced.inputs.full.values, whole.inputs.full.values)
    assert np.array_equal(sliced.inputs.words, whole.inputs.words)
    assert sliced.ads["ad_id"].tolist() == ads["ad_id"].tolist()
