"""Preparing a batch in slices: the result depends on the slice size only, not on the workers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from pipeline.config import Config
from pipeline.prepare import prepare_batch


def _prepared(ads: pd.DataFrame, jobs: int, chunk_size: int):
    config = dataclasses.replace(Config(), jobs=jobs, chunk_size=chunk_size)
    seen: list[int] = []
    batch = prepare_batch(ads, config, np.zeros(0, dtype=np.uint64), on_slice=seen.append)
    return batch, seen


def test_worker_processes_give_the_same_batch_as_one_process(test_ads):
    ads = test_ads.iloc[:300]
    alone, slices_alone = _prepared(ads, jobs=1, chunk_size=100)
    parallel, slices_parallel = _prepared(ads, jobs=2, chunk_size=100)
    assert slices_alone == slices_parallel == [100, 100, 100]
    for name in ("full", "core", "numbers"):
        a, b = getattr(alone.inputs, name), getattr(parallel.inputs, name)
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.values, b.values)
    assert np.array_equal(alone.inputs.signatures, parallel.inputs.signatures)
    assert np.array_equal(alone.inputs.core_words, parallel.inputs.core_words)
    pd.testing.assert_frame_equal(alone.inputs.fields, parallel.inputs.fields)
    assert np.array_equal(alone.batch_boilerplate, parallel.batch_boilerplate)
    assert alone.status.tolist() == parallel.status.tolist()


def test_slices_are_the_rows_of_the_whole_batch_in_order(test_ads):
    ads = test_ads.iloc[:120]
    sliced, _ = _prepared(ads, jobs=1, chunk_size=50)
    whole, _ = _prepared(ads, jobs=1, chunk_size=1_000)
    # Full-text shingles and word counts do not depend on boilerplate, so slicing cannot change them.
    assert np.array_equal(sliced.inputs.full.values, whole.inputs.full.values)
    assert np.array_equal(sliced.inputs.words, whole.inputs.words)
    assert sliced.ads["ad_id"].tolist() == ads["ad_id"].tolist()
