"""A single-ad check's tables built from their blocks (`frame_of_arrays`) and its prepared fields
built in one frame (`few_fields`) are exactly the tables pandas' constructors, column assignment
and `insert` made (kept here as references), on 1 to 16 rows of the bundled ads and edge cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from jobdedup.features import fields as fields_module
from jobdedup.features.normalize import FEW_VALUES, string_array
from jobdedup.features.normalize.unique import assigned_objects, frame_of_arrays
from jobdedup.pipeline import prepare as prepare_module
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.index.rows import _ROW_INDEX, _object_table
from jobdedup.pipeline.index.stored_rows import _with_ad_ids
from jobdedup.pipeline.prepare import prepare_batch
from tests.conftest import DATA
from tests.test_prepare_fast_paths import _FIELD_EDGE_ADS, _ODD_ADS, _assert_same_fields, _chunks


@pytest.fixture(scope="module")
def bundled_ads() -> pd.DataFrame:
    files = ["train_ads", "natural_train_ads"]
    return pd.concat([pd.read_parquet(DATA / f"{name}.parquet") for name in files], ignore_index=True)


def _assert_same_tables(fast: pd.DataFrame, reference: pd.DataFrame) -> None:
    """Equal tables, the same missing values in object columns and the same Arrow type under text."""
    pd.testing.assert_frame_equal(fast, reference, check_exact=True)
    assert fast.columns.dtype == reference.columns.dtype
    for name in reference.columns:
        a, b = fast[name], reference[name]
        if b.dtype == object:
            assert list(map(type, a)) == list(map(type, b)), name
        elif isinstance(b.dtype, pd.StringDtype):
            assert pa.array(a.array).type == pa.array(b.array).type, name


def _objects(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    """An object array of `n` strings, strings and None, Nones, tuples and None, or ints."""
    values = np.empty(n, dtype=object)
    for i in range(n):
        missing = kind != "strings" and rng.random() < 0.4
        if kind == "none" or missing:
            values[i] = None
        elif kind == "tuples":
            values[i] = tuple(f"r{j}" for j in range(int(rng.integers(1, 3))))
        elif kind == "ints":
            values[i] = int(rng.integers(0, 9))
        else:
            values[i] = f"v{rng.integers(0, 5)}"
    return values


@pytest.mark.parametrize("n", range(FEW_VALUES + 1))
def test_assigned_objects_are_the_column_assignment_makes(n: int):
    rng = np.random.default_rng(n)
    for kind in ("strings", "some", "none", "tuples"):
        values = _objects(rng, n, kind)
        frame = pd.DataFrame(index=pd.RangeIndex(n))
        frame["x"] = values
        found = assigned_objects(values)
        reference, found = frame["x"], pd.Series(found, index=pd.RangeIndex(n), dtype=found.dtype, name="x")
        pd.testing.assert_series_equal(found, reference, check_exact=True)
        assert list(map(type, found)) == list(map(type, reference)), kind


@pytest.mark.parametrize("n", range(FEW_VALUES + 1))
def test_frames_of_arrays_are_the_frames_of_their_dicts(n: int):
    """Tables of every kind of column a check builds (numbers, flags, texts as strings or as
    objects, items, dates, Arrow strings), in random orders and numbers of columns."""
    rng = np.random.default_rng(100 + n)
    for _ in range(20):
        kinds = rng.choice(["int", "uint", "float", "bool", "str", "some", "tuples", "ints", "arrow", "date"],
                           int(rng.integers(1, 10)))  # fmt: skip
        arrays, references = [], {}
        for at, kind in enumerate(kinds):
            name = f"c{at}"
            if kind in ("str", "some", "tuples", "ints"):
                values = _objects(rng, n, "strings" if kind == "str" else kind)
                arrays.append(assigned_objects(values) if kind in ("str", "some") else values)
                # (pandas makes "str" of strings and keeps the rest; a Series of dtype object keeps all)
                references[name] = values if kind in ("str", "some") else pd.Series(values, dtype=object)
            elif kind == "arrow":
                arrays.append(string_array(_objects(rng, n, "some").tolist()))
                references[name] = arrays[-1]
            elif kind == "date":
                arrays.append(pd.to_datetime(rng.integers(0, 10**9, n), unit="s").array)
                references[name] = arrays[-1]
            else:
                dtype = {"int": np.int64, "uint": np.uint64, "float": np.float64, "bool": bool}[kind]
                arrays.append(rng.integers(0, 3, n).astype(dtype))
                references[name] = arrays[-1]
        found = frame_of_arrays(pd.Index(list(references)), arrays, pd.RangeIndex(n))
        _assert_same_tables(found, pd.DataFrame(references, index=pd.RangeIndex(n)))


def _column_path_fields(chunk: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> pd.DataFrame:
    """The prepared fields of `chunk` as the column path makes them (columns assigned one by one)."""
    with monkeypatch.context() as patch:
        patch.setattr(prepare_module, "FEW_VALUES", 0)
        patch.setattr(fields_module, "FEW_VALUES", 0)
        return prepare_batch(chunk, _CONFIG, np.zeros(0, np.uint64)).inputs.fields


_CONFIG = Config(jobs=1, show_progress=False)


@pytest.mark.slow
@pytest.mark.parametrize("read_back", [False, True])
def test_prepared_fields_of_1_to_16_ads_are_those_of_the_column_path(
    bundled_ads: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, read_back: bool
):
    """A few ads' fields, requisition numbers and salary bands made as one frame (`few_fields`)
    are the frame the column path assigns them to: as validated and as read back from an index."""
    ads = pd.concat(
        [_FIELD_EDGE_ADS, _ODD_ADS.drop(columns="ad_id"), bundled_ads.iloc[:700]], ignore_index=True
    )
    ads["description"] = ads["description"].astype(object)
    if read_back:
        ads = ads.astype(object).where(ads.notna(), None)
    chunks = _chunks(ads)
    fast = [prepare_batch(chunk, _CONFIG, np.zeros(0, np.uint64)).inputs.fields for chunk in chunks]
    for few, chunk in zip(fast, chunks):
        reference = _column_path_fields(chunk, monkeypatch)
        _assert_same_fields(few, reference)
        _assert_same_tables(few, reference)
    found = pd.concat(fast)
    assert found["refs"].notna().sum() > 5 and found["salary_band"].notna().sum() > 5
    assert {str(f["salary_band"].dtype) for f in fast} == {"object", "str"}


def test_stored_columns_with_ad_ids_are_those_insert_makes(bundled_ads: pd.DataFrame):
    """`read_groups`' old ads (`ad_id` first, then the unpacked object columns) for 0 to 16 rows."""
    ads = pd.concat([_FIELD_EDGE_ADS, bundled_ads.iloc[:300]], ignore_index=True)
    ads = ads.astype(object).where(ads.notna(), None)
    ads["ad_id"] = [f"ad{i}" for i in range(len(ads))]
    for chunk in [ads.iloc[:0], *_chunks(ads)]:
        columns = _object_table(chunk[list(_ROW_INDEX)].values.tolist(), _ROW_INDEX)
        ad_ids = chunk["ad_id"].to_numpy(dtype=object)
        reference = columns.copy()
        reference.insert(0, "ad_id", ad_ids)
        _assert_same_tables(_with_ad_ids(columns, ad_ids), reference)
