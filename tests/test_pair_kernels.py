"""The score step's faster pair kernels give what the code they replaced gives (issue #52): set
intersections of sorted rows, string similarities and employers' initials checked once per
distinct pair of values, the agreement of two rows (MinHash signatures), and the words one ad
leaves unnamed."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz
from rapidfuzz.process import cpdist

from jobdedup.features.employers import _acronym_pairs, _is_acronym, _may_be_acronyms
from jobdedup.features.kernels import equal_counts, intersection_counts
from jobdedup.features.mentions import words_other_ad_leaves_unnamed
from jobdedup.features.pairs import _string_similarity
from jobdedup.features.shingle_sets import ShingleSets, intersection_sizes, sets_of_rows, sorted_member

_sets = st.lists(st.sets(st.integers(0, 60), max_size=40), min_size=1, max_size=30)


@settings(max_examples=80, deadline=None)
@given(sets=_sets, pair_seed=st.integers(0, 2**32 - 1), threads=st.sampled_from([1, 2]))
def test_intersections_are_those_of_python_sets(sets: list[set[int]], pair_seed: int, threads: int):
    rng = np.random.default_rng(pair_seed)
    indptr = np.concatenate([[0], np.cumsum([len(s) for s in sets])])
    values = np.concatenate([np.array(sorted(s), dtype=np.uint32) for s in sets] + [np.zeros(0, np.uint32)])
    # Enough pairs to take the parallel path as well as the serial one.
    left = rng.integers(0, len(sets), 3_000)
    right = rng.integers(0, len(sets), 3_000)
    counts = intersection_counts(indptr, values, indptr, values, left, right, threads)
    assert counts.tolist() == [len(sets[a] & sets[b]) for a, b in zip(left, right)]


_strings = st.one_of(
    st.none(),
    st.sampled_from(
        ["", " ", "Data Engineer", "data engineer", "Engineer, Data", "שירות לקוחות", "数据 工程师"]
    ),
    st.text(max_size=12),
    st.text(alphabet="ab ", min_size=200, max_size=400),
)


def _every_pair_scored(values: list[str | None], left: np.ndarray, right: np.ndarray, scorer) -> np.ndarray:
    """The replaced form: rapidfuzz over every pair (its float32 scores / 100), NaN where a side is
    missing."""
    both = np.array(
        [values[a] is not None and values[b] is not None for a, b in zip(left, right)], dtype=bool
    )
    out = np.full(len(left), np.nan)
    strings = np.array(values, dtype=object)
    if both.any():
        out[both] = (
            np.asarray(cpdist(strings[left[both]], strings[right[both]], scorer=scorer), dtype=float) / 100.0
        )
    return out


@settings(max_examples=60, deadline=None)
@given(values=st.lists(_strings, min_size=1, max_size=40), pair_seed=st.integers(0, 2**32 - 1))
def test_string_similarity_is_rapidfuzz_pair_by_pair(values: list[str | None], pair_seed: int):
    rng = np.random.default_rng(pair_seed)
    left = rng.integers(0, len(values), 200)
    right = rng.integers(0, len(values), 200)
    for scorer in (fuzz.ratio, fuzz.token_set_ratio):
        got = _string_similarity(pd.Series(values, dtype=object), left, right, scorer, threads=2)
        np.testing.assert_array_equal(got, _every_pair_scored(values, left, right, scorer))
        # (and rapidfuzz's own scorer pair by pair, to float32 precision)
        plain = [np.nan if values[a] is None or values[b] is None else scorer(values[a], values[b]) / 100.0
                 for a, b in zip(left, right)]  # fmt: skip
        np.testing.assert_allclose(got, np.array(plain, dtype=float), rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), width=st.sampled_from([1, 3, 128]), threads=st.sampled_from([1, 2]))
def test_equal_counts_are_numpys_row_comparisons(seed: int, width: int, threads: int):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 3, (50, width)).astype(np.uint32)  # (few values: many agree)
    left, right = rng.integers(0, 50, 3_000), rng.integers(0, 50, 3_000)
    expected = (rows[left] == rows[right]).sum(axis=1)
    assert equal_counts(rows, left, right, threads).tolist() == expected.tolist()


def _row_numbers(sets: ShingleSets) -> np.ndarray:
    return np.repeat(np.arange(len(sets), dtype=np.int64), sets.sizes)


def union_rows(first: ShingleSets, second: ShingleSets) -> ShingleSets:
    """Row i = first's row i ∪ second's row i (the replaced form's row operation)."""
    rows = np.concatenate([_row_numbers(first), _row_numbers(second)])
    return sets_of_rows(rows, np.concatenate([first.values, second.values]), len(first))


def difference_rows(first: ShingleSets, second: ShingleSets) -> ShingleSets:
    """Row i = first's row i without second's row i (the replaced form's row operation)."""

    def row_codes(sets: ShingleSets) -> np.ndarray:
        return (_row_numbers(sets).astype(np.uint64) << np.uint64(32)) | sets.values.astype(np.uint64)

    keep = ~sorted_member(row_codes(first), row_codes(second))
    return sets_of_rows(_row_numbers(first)[keep], first.values[keep], len(first))


def _unnamed_by_row_operations(words, own_places, mentions, left, right) -> np.ndarray:
    """The replaced form of `words_other_ad_leaves_unnamed`: the sets' row operations."""
    places = union_rows(*own_places)
    own = difference_rows(words, places)
    named = union_rows(own, mentions)
    left_unnamed = own.sizes[left] - intersection_sizes(own, left, right, other=named)
    right_unnamed = own.sizes[right] - intersection_sizes(own, right, left, other=named)
    out = np.maximum(left_unnamed, right_unnamed).astype(float)
    out[(own.sizes[left] == 0) | (own.sizes[right] == 0)] = np.nan
    return out


_small_sets = st.lists(st.sets(st.integers(0, 12), max_size=6), min_size=30, max_size=30)


@settings(max_examples=60, deadline=None)
@given(
    words=_small_sets, places=_small_sets, areas=_small_sets, mentions=_small_sets,
    pair_seed=st.integers(0, 2**32 - 1), pairs=st.sampled_from([20, 3_000]),
)  # fmt: skip
def test_words_left_unnamed_are_those_of_the_row_operations(words, places, areas, mentions, pair_seed, pairs):
    rng = np.random.default_rng(pair_seed)
    left, right = rng.integers(0, 30, pairs), rng.integers(0, 30, pairs)
    sets = [ShingleSets.from_lists([sorted(s) for s in rows]) for rows in (words, places, areas, mentions)]
    got = words_other_ad_leaves_unnamed(sets[0], (sets[1], sets[2]), sets[3], left, right)
    expected = _unnamed_by_row_operations(sets[0], (sets[1], sets[2]), sets[3], left, right)
    np.testing.assert_array_equal(got, expected)


def _acronyms_by_frames(companies: pd.Series, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The replaced form of `_acronym_pairs`' many-pairs path: distinct pairs by `drop_duplicates`,
    looked up by a MultiIndex."""
    names = companies.astype(object).to_numpy()
    frame = pd.DataFrame({"a": names[left], "b": names[right]})
    distinct = frame.drop_duplicates()
    a, b = distinct["a"].to_numpy(), distinct["b"].to_numpy()
    verdict = _may_be_acronyms(a, b)
    verdict[verdict] = [_is_acronym(str(x), str(y)) for x, y in zip(a[verdict], b[verdict])]
    found = pd.Series(verdict, index=pd.MultiIndex.from_frame(distinct), dtype=bool)
    return found.reindex(pd.MultiIndex.from_frame(frame)).to_numpy(dtype=bool)


_NAMES = st.sampled_from(
    ["amd", "advanced micro devices", "nhs", "national health service", "nice", "ab",
     "national institute for health and care excellence", "sap", "salt and pepper steakhouse",
     "a", "x y", "hays", "hays specialist recruitment", "nhs trust"]
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.one_of(_NAMES, st.text(alphabet="abn s", max_size=12)), min_size=2, max_size=30),
       pair_seed=st.integers(0, 2**32 - 1))  # fmt: skip
def test_acronym_pairs_are_those_of_the_frames(names: list[str], pair_seed: int):
    rng = np.random.default_rng(pair_seed)
    left, right = rng.integers(0, len(names), 500), rng.integers(0, len(names), 500)
    companies = pd.Series(names, dtype="string[pyarrow]")
    expected = _acronyms_by_frames(companies, left, right)
    assert _acronym_pairs(companies, left, right).tolist() == expected.tolist()
