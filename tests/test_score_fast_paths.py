"""The score step's cheaper forms for a few pairs (issue #15: a single ad checked against the index)
give exactly what the pandas forms they replaced gave (kept here as references): the pair feature
table, its columns as floats for the trees and the rules, the probabilities, salary band clashes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobdedup.features import mentions as mentions_module
from jobdedup.features import pairs as pairs_module
from jobdedup.features import titles as titles_module
from jobdedup.features.fields import normalize_fields
from jobdedup.features.normalize import FEW_VALUES
from jobdedup.features.pairs import FEATURES, MODEL_FEATURES, PairInputs, build_pair_features, float_columns
from jobdedup.features.salaries import TOLERANCE, salary_bands, salary_bands_disjoint
from jobdedup.features.shingle_sets import ShingleSets
from jobdedup.features.titles import TitleWords, title_words
from jobdedup.models import classifier as classifier_module
from jobdedup.models import rules as rules_module
from jobdedup.models.policy import DecisionPolicy
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.index.inputs import take_rows
from jobdedup.pipeline.io import read_ads
from jobdedup.pipeline.prepare import prepare_batch
from jobdedup.pipeline.sketch import permutations
from tests.conftest import DATA
from tests.test_prepare_fast_paths import _FIELD_EDGE_ADS, _ODD_ADS


@pytest.fixture(scope="module")
def natural() -> tuple[PairInputs, np.ndarray, np.ndarray]:
    """The prepared natural training ads and their labelled pairs (left, right)."""
    ads = read_ads(DATA / "natural_train_ads.parquet")
    pairs = pd.read_csv(DATA / "natural_train_pairs.csv", dtype=str)
    inputs = prepare_batch(ads, Config(jobs=1, show_progress=False), np.zeros(0, np.uint64)).inputs
    position = pd.Series(np.arange(len(ads)), index=ads["ad_id"])
    return inputs, position[pairs["ad_id_a"]].to_numpy(), position[pairs["ad_id_b"]].to_numpy()


def _pair_chunks(n: int) -> list[slice]:
    """Consecutive slices of 1, 2, ..., `FEW_VALUES`, 1, 2, ... pairs (a service's checks)."""
    chunks, start, size = [], 0, 1
    while start < n:
        chunks.append(slice(start, start + size))
        start, size = start + size, size % FEW_VALUES + 1
    return chunks


# Titles and places of filler only, of words the place names, repeated, blank or missing.
_TITLE_EDGE_ADS = pd.DataFrame(
    {
        "title": ["Support Worker Amersham", "Support Worker High Wycombe", "m/w/d remote job", "", "  ",
                  "Nurse Nurse Leeds", "Senior Nurse", None, "Care Assistant - Greater London", "北京 工程师"],
        "location": ["Amersham, Bucks", "High Wycombe", "Remote", "Leeds", None, "Leeds, West Yorkshire",
                     "North Leeds", "Leeds", "Greater London", "北京"],
    }
)  # fmt: skip


@pytest.fixture(scope="module")
def field_chunks(bundled_ads: pd.DataFrame) -> list[pd.DataFrame]:
    """Normalised fields of bundled and odd ads in chunks of 1, 2, ..., `FEW_VALUES` ads."""
    ads = pd.concat([_TITLE_EDGE_ADS, _FIELD_EDGE_ADS, _ODD_ADS, bundled_ads.iloc[:1500]], ignore_index=True)
    fields = normalize_fields(ads)
    return [fields.iloc[rows].reset_index(drop=True) for rows in _pair_chunks(len(fields))]


@pytest.fixture(scope="module")
def bundled_ads() -> pd.DataFrame:
    return pd.concat(
        [pd.read_parquet(DATA / f"{name}.parquet") for name in ("train_ads", "natural_train_ads")]
    )


def _pairs_within(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of `n` ads, and each ad with itself."""
    left, right = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return left.ravel(), right.ravel()


def _assert_same_sets(fast: ShingleSets, reference: ShingleSets) -> None:
    for name in ("indptr", "values"):
        a, b = getattr(fast, name), getattr(reference, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name


def test_title_words_of_1_to_16_ads_are_those_of_the_column_path(
    field_chunks, monkeypatch: pytest.MonkeyPatch
):
    """A few ads' title word sets made row by row equal those the numpy path makes."""
    fast = [title_words(fields["title"], fields["location"]) for fields in field_chunks]
    monkeypatch.setattr(titles_module, "FEW_VALUES", 0)
    for fields, few in zip(field_chunks, fast):
        reference: TitleWords = title_words(fields["title"], fields["location"])
        assert np.array_equal(few.present, reference.present) and few.present.dtype == bool
        for name in ("words", "specific", "own_place"):
            _assert_same_sets(getattr(few, name), getattr(reference, name))
    assert sum(len(few.own_place.values) for few in fast) > 20
    assert sum((~few.present).sum() for few in fast) > 5


def test_location_conflicts_of_1_to_16_ads_are_those_of_the_column_path(
    field_chunks, monkeypatch: pytest.MonkeyPatch
):
    """A few ads' location conflicts found pair by pair in Python equal those of the columns' codes
    and word sets, for every pair within each chunk."""
    pairs = [_pairs_within(len(fields)) for fields in field_chunks]
    fast = [pairs_module._location_conflict(fields, *pair) for fields, pair in zip(field_chunks, pairs)]
    monkeypatch.setattr(pairs_module, "FEW_VALUES", 0)
    for fields, pair, few in zip(field_chunks, pairs, fast):
        reference = pairs_module._location_conflict(fields, *pair)
        assert few.dtype == reference.dtype and np.array_equal(few, reference, equal_nan=True)
    found = np.concatenate(fast)
    assert (found == 1).sum() > 100 and (found == 0).sum() > 100 and np.isnan(found).sum() > 100


def _reference_features(inputs: PairInputs, left: np.ndarray, right: np.ndarray) -> pd.DataFrame:
    """`build_pair_features` as a frame of a dict of the feature columns."""
    out = pairs_module._text_features(inputs, left, right, 1)
    fields, field_left, field_right = pairs_module._fields_of_pairs(inputs.fields, left, right)
    out.update(pairs_module._field_features(fields, field_left, field_right, out, 1))
    return pd.DataFrame({name: out[name] for name in FEATURES})


def _reference_columns(features: pd.DataFrame, names: list[str]) -> np.ndarray:
    return features[names].to_numpy(dtype=np.float64)


def _assert_same_array(fast: np.ndarray, reference: np.ndarray) -> None:
    """Equal values (NaN where NaN), dtype, shape and memory layout."""
    assert fast.dtype == reference.dtype and fast.shape == reference.shape
    assert np.array_equal(fast, reference, equal_nan=True)
    assert (fast.flags.c_contiguous, fast.flags.f_contiguous) == (
        reference.flags.c_contiguous,
        reference.flags.f_contiguous,
    )


@pytest.mark.slow
def test_pair_features_of_1_to_16_pairs_are_the_frame_of_their_columns(natural):
    """The table built from one stacked array equals the one pandas built from a dict of the
    columns: values (NaN included), float64 columns, names and index; for no pairs too."""
    inputs, left, right = natural
    chunks = [slice(0, 0), *_pair_chunks(len(left)), slice(0, len(left))]
    for rows in chunks:
        fast = build_pair_features(inputs, left[rows], right[rows])
        pd.testing.assert_frame_equal(
            fast, _reference_features(inputs, left[rows], right[rows]), check_exact=True
        )
        assert list(fast.columns) == FEATURES and (fast.dtypes == np.float64).all()
    whole = build_pair_features(inputs, left, right)
    assert whole.isna().any().sum() > 10 and (whole.notna().sum() > 0).all()


def test_features_among_1_to_16_ads_are_those_of_the_column_paths(natural, monkeypatch: pytest.MonkeyPatch):
    """Pairs among a few ads (a single ad checked against the index ads it reads back) take the
    plain-Python paths, with every ad's fields kept (not only those of the ads the pairs name):
    the table the column paths give the same pairs among the same ads."""
    inputs, _, _ = natural
    rng = np.random.default_rng(7)
    cases = []
    for size in [*range(1, FEW_VALUES + 1)] * 6:
        ads = rng.choice(len(inputs.words), size, replace=False)
        left = np.zeros(int(rng.integers(1, size + 1)), dtype=np.int64)  # (the checked ad: the first)
        right = rng.integers(0, size, len(left))
        cases.append((take_rows(inputs, ads), left, right))
    fast = [build_pair_features(*case) for case in cases]
    for module in (pairs_module, titles_module, mentions_module):
        monkeypatch.setattr(module, "FEW_VALUES", 0)
    for case, features in zip(cases, fast):
        pd.testing.assert_frame_equal(features, build_pair_features(*case), check_exact=True)
    found = pd.concat(fast)
    assert (found["location_conflict"] == 1).sum() > 10 and (found["title_specific_only_max"] > 0).sum() > 10
    assert (found["title_words_unnamed"] > 0).sum() > 10 and found["title_words_unnamed"].isna().sum() > 10


def _odd_tables(features: pd.DataFrame) -> list[pd.DataFrame]:
    """Feature tables not as `build_pair_features` makes them: other dtypes, other orders, several
    blocks, repeated names."""
    ints = features.fillna(0).astype({"title_equal": np.int64, "same_listing": bool})
    nullable = features.astype({"date_gap_days": "Float64"})
    nullable.loc[0, "date_gap_days"] = pd.NA
    objects = features.astype({"place_equal": object})
    objects.loc[0, "place_equal"] = None
    blocks = pd.concat([features.iloc[:, :10], features.iloc[:, 10:]], axis=1)
    blocks["extra"] = 1.0
    repeated = pd.concat([features, features[["title_ratio"]]], axis=1)
    return [ints, nullable, objects, features[FEATURES[::-1]], blocks, repeated, features.iloc[:0]]


def test_float_columns_are_those_of_the_selection(natural):
    """`float_columns` stacked as rows is `features[names].to_numpy(dtype=np.float64)`, layout
    included, for the tables scoring makes and for any other (their path is pandas' own)."""
    inputs, left, right = natural
    tables = [build_pair_features(inputs, left[rows], right[rows]) for rows in _pair_chunks(60)]
    tables += _odd_tables(tables[3])
    for features in tables:
        for names in (
            MODEL_FEATURES,
            ["date_gap_days", "place_equal", "title_equal"],
            list(rules_module._RULE_FEATURES),
        ):
            if features.columns.is_unique:  # (else a name's column is a table: the trees' input fails)
                _assert_same_array(
                    np.stack(float_columns(features, names)).T, _reference_columns(features, names)
                )
            for column, values in zip(names, float_columns(features, names)):
                assert np.array_equal(values, features[column].to_numpy(dtype=np.float64), equal_nan=True)
    with pytest.raises(KeyError):
        float_columns(tables[0], ["title_ratio", "no_such_feature"])


def _reference_rule_names(
    features: pd.DataFrame, policy: DecisionPolicy = rules_module.DEFAULT_POLICY
) -> np.ndarray:
    """`rules.rule_names` reading each feature as a column of the table."""
    if not len(features):
        return np.zeros(0, dtype=object)
    value = lambda name: features[name].to_numpy(dtype=float)
    conflict, requisition = value("employer_conflict"), value("requisition_match")
    held = [
        value("same_listing") == 1,
        (requisition == 1) & (conflict != 1) & (value("title_level_differs") != 1),
        (value("title_specific_only_max") >= 1) & (value("title_words_unnamed") >= 1),
        value("salary_bands_disjoint") == 1,
        (value("log_words_min") >= np.log1p(policy.substantive_words))
        & (value("containment_core_max") < policy.nothing_shared)
        & (value("email_match") != 1)
        & (value("phone_match") != 1),
    ]
    names = (
        "same_listing",
        "same_requisition",
        "title_word_unnamed",
        "different_salary_bands",
        "no_shared_text",
    )
    return np.select(held, names, default=None).astype(object)


@pytest.mark.slow
def test_probabilities_of_1_to_16_pairs_are_those_of_the_column_selection(
    natural, default_model, monkeypatch: pytest.MonkeyPatch
):
    """The trees' input and the rules' columns as views of the table's one array give the same
    rules and probabilities, to the bit, as pandas' selection and single columns gave."""
    inputs, left, right = natural
    tables = [build_pair_features(inputs, left[rows], right[rows]) for rows in _pair_chunks(len(left))]
    tables.append(build_pair_features(inputs, left, right))
    fast = [default_model.predict_proba(features) for features in tables]
    rules = [rules_module.rule_names(features) for features in tables]
    monkeypatch.setattr(classifier_module.PairClassifier, "_model_values",
                        lambda self, features: _reference_columns(features, self.feature_names_))  # fmt: skip
    monkeypatch.setattr(rules_module, "rule_names", _reference_rule_names)
    for features, probability, names in zip(tables, fast, rules):
        assert np.array_equal(probability, default_model.predict_proba(features))
        assert names.tolist() == _reference_rule_names(features).tolist()
    assert len({name for names in rules for name in names.tolist()}) > 3


def _reference_disjoint(bands: pd.Series, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """`salary_bands_disjoint` with the bands split by pandas."""
    out = np.full(len(left), np.nan)
    named = np.flatnonzero(bands.notna().to_numpy())
    if not len(left) or not len(named):
        return out
    parts = bands.iloc[named].astype(str).str.split(" ", expand=True)
    currency = np.full(len(bands), -1)
    low, high = np.full(len(bands), np.nan), np.full(len(bands), np.nan)
    currency[named] = pd.factorize(parts[0])[0]
    low[named], high[named] = parts[1].to_numpy(dtype=float), parts[2].to_numpy(dtype=float)
    known = (currency[left] >= 0) & (currency[left] == currency[right])
    apart = (high[left] < low[right] * (1 - TOLERANCE)) | (high[right] < low[left] * (1 - TOLERANCE))
    out[known] = apart[known].astype(float)
    return out


_EDGE_BANDS = [
    "GBP 60000 75000", "GBP 76000 90000", "GBP 74000 76000", "EUR 60000 75000", "USD 120000 120000",
    None, float("nan"), pd.NA, "GBP 10000 1000000", "EUR 80000 80000", "GBP 60000 75000",
]  # fmt: skip


@pytest.mark.parametrize("dtype", [object, "string"])
def test_salary_band_clashes_are_those_of_pandas_split(dtype: object):
    """Bands parsed in plain Python give each pair what pandas' split gave: the bundled ads' bands
    among a few ads and among all, and bands of other currencies, equal, touching and missing."""
    texts = pd.concat(
        [pd.read_parquet(DATA / f"{name}.parquet")["description"] for name in ("train_ads", "test_ads")]
    )
    bundled = salary_bands(texts.reset_index(drop=True))
    bundled = bundled[bundled.notna()].tolist()
    rng = np.random.default_rng(4)
    for values in (_EDGE_BANDS, bundled[:16], bundled, [None, None], ["GBP 60000 75000"]):
        bands = pd.Series(values, dtype=object if dtype is object else None).astype(dtype)
        for size in (0, 1, 3, 16, 500):
            left, right = rng.integers(0, len(bands), size), rng.integers(0, len(bands), size)
            found = salary_bands_disjoint(bands, left, right)
            assert np.array_equal(found, _reference_disjoint(bands, left, right), equal_nan=True)
    assert len(bundled) > 50


def test_permutations_are_made_once_and_are_datasketchs():
    a, b = permutations(128, 1)
    assert permutations(128, 1)[0] is a
    fresh = permutations.__wrapped__(128, 1)
    assert np.array_equal(a, fresh[0]) and np.array_equal(b, fresh[1]) and a.dtype == np.uint32
