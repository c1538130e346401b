"""Arrays handed from a worker to the parent through files come back equal, and leave no file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jobdedup.features.shingle_sets import ShingleSets
from jobdedup.pipeline.handoff import FileArray, FileFrame, handoff_folder, park, unpark


@dataclass(frozen=True)
class _Result:
    sets: ShingleSets
    signatures: np.ndarray
    empty: np.ndarray
    labels: np.ndarray
    note: str


def test_park_and_unpark_give_back_every_array_and_remove_the_files():
    result = _Result(
        sets=ShingleSets.from_lists([[3, 1], [], [7]]),
        signatures=np.arange(12, dtype=np.uint32).reshape(3, 4)[:, ::2],  # not contiguous
        empty=np.zeros((0, 5), dtype=np.uint64),
        labels=np.array(["a", None], dtype=object),
        note="kept",
    )
    with handoff_folder() as folder:
        parked = park(result, folder)
        assert isinstance(parked.sets.values, FileArray) and isinstance(parked.signatures, FileArray)
        assert parked.labels is result.labels and parked.note == "kept"  # objects are not written
        back = unpark(parked)
        assert not list(Path(folder).iterdir())
    assert np.array_equal(back.sets.indptr, result.sets.indptr)
    assert np.array_equal(back.sets.values, result.sets.values)
    assert back.signatures.dtype == np.uint32 and np.array_equal(back.signatures, result.signatures)
    assert back.empty.shape == (0, 5) and back.empty.dtype == np.uint64
    assert not back.signatures.flags.writeable  # a read-only map: callers copy (concatenate)
    with pytest.raises(ValueError):
        back.signatures[0, 0] = 1


def test_a_table_of_arrow_texts_comes_back_with_its_dtypes_and_index():
    texts = pd.Series(["Pflegekraft (m/w/d)", None, "", "x" * 70_000], dtype="string")
    frame = pd.DataFrame({"description": texts, "title": texts.iloc[::-1].to_numpy()}).set_axis(
        pd.RangeIndex(50_000, 50_004)
    )
    with handoff_folder() as folder:
        parked = park(frame, folder)
        assert isinstance(parked, FileFrame)
        back = unpark(parked)
        assert not list(Path(folder).iterdir())
    pd.testing.assert_frame_equal(back, frame, check_exact=True)
    assert back.dtypes.tolist() == frame.dtypes.tolist()


def test_a_table_with_other_columns_is_left_to_pickle():
    frame = pd.DataFrame({"text": pd.Series(["a"], dtype="string"), "refs": [("R1",)]})
    with handoff_folder() as folder:
        assert park(frame, folder) is frame
