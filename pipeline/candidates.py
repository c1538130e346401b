"""Stage 3: candidate pairs from LSH bands and field blocking, by sorting keys (no all-pairs loop).

Every (ad, key) row is sorted by key; ads with an equal key form a bucket and each bucket yields
its pairs. A bucket larger than `max_bucket_size` (an empty or boilerplate-only text, a huge
employer) is *capped*: each member is paired with the bucket's first member only (a star, so
identical re-scrapes still meet) and the bucket is counted in the report.

Example:
    >>> pairs, report = pairs_from_keys(np.array([0, 1, 2, 3]), np.array([5, 5, 5, 8]), 10)
    >>> pairs.tolist()
    [[0, 1], [0, 2], [1, 2]]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from jobdedup.features.normalize import distinct
from jobdedup.features.normalize.unique import frame_of_arrays
from jobdedup.features.shingle_sets import sorted_unique
from jobdedup.pipeline.sketch import EMPTY_SIGNATURE_VALUE

if TYPE_CHECKING:
    from jobdedup.features.pairs import PairInputs
    from jobdedup.pipeline.config import Config

FIELD_KEY_ROWS: tuple[tuple[str, str, str, str | None], ...] = (
    ("employer+title", "employer_word", "title_tokens", None),
    ("company+city", "company", "city", None),
    ("title+city", "title_tokens", "city", None),
    ("title+city", "title_tokens", "town", "city"),
)
"""Field-blocking keys, (kind, first, second, unless): each ad holding both values holds the key
`kind` of them, ads sharing a key are paired (every engine and the index build these rows); a row
is left out where `second` equals the ad's `unless` value (no ad holds a key twice).

- `employer_word` is the first word of the normalised employer name (`employer_word`): one
  employer's divisions and spellings ("Hays Technology" / "Hays Specialist Recruitment", "VIQU IT
  Recruitment" / "VIQU Limited") meet under one title. The classifier and the employer rules
  decide such pairs; the kind holds every pair the whole name would.
- `town` is the town a listed district lies in: an ad filed under "Rusholme, Manchester" also
  holds the title+city key of Manchester, so it meets the ads filed under the town itself
  ("Manchester, Greater Manchester"), as aggregators file one ad under districts."""
FIELD_COMBOS: dict[str, tuple[str, str]] = {
    kind: (first, second) for kind, first, second, unless in FIELD_KEY_ROWS if unless is None
}
"""Each kind's own (first, second) columns."""
FIELD_ITEMS = ("emails", "phones")
"""Item-list fields whose shared items pair ads."""

_BAND_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xD6E8FEB86659FD93, 0xA0761D6478BD642F] * 8,
    dtype=np.uint64,
)


@dataclass
class CandidateReport:
    """What candidate generation did, for the user and the evaluation."""

    lsh_pairs: int = 0
    field_pairs: int = 0
    total_pairs: int = 0
    capped_buckets: int = 0
    ads_in_capped_buckets: int = 0
    largest_bucket: int = 0
    by_key: dict[str, int] = field(default_factory=dict)


def pairs_from_keys(docs: np.ndarray, keys: np.ndarray, max_bucket_size: int) -> tuple[np.ndarray, dict]:
    """All pairs (i < j) of docs sharing a key; buckets over the cap become stars.

    Returns the (m, 2) int64 pair array (unsorted, may repeat across keys) and a small report.
    """
    report = {"capped_buckets": 0, "ads_in_capped_buckets": 0, "largest_bucket": 0}
    if len(docs) < 2:
        return np.zeros((0, 2), dtype=np.int64), report
    docs = np.asarray(docs, dtype=np.int64)
    ascending = bool(np.all(docs[1:] >= docs[:-1]))
    # A stable sort of the keys alone keeps ascending docs in order (hub = smallest doc).
    order = np.argsort(keys, kind="stable") if ascending else np.lexsort((docs, keys))
    docs_sorted = np.asarray(docs, dtype=np.int64)[order]
    keys_sorted = np.asarray(keys)[order]
    boundaries = np.flatnonzero(keys_sorted[1:] != keys_sorted[:-1]) + 1
    starts = np.concatenate([[0], boundaries])
    sizes = np.diff(np.concatenate([starts, [len(docs_sorted)]]))
    report["largest_bucket"] = int(sizes.max())
    chunks: list[np.ndarray] = []
    for size in np.unique(sizes[(sizes >= 2) & (sizes <= max_bucket_size)]):
        bucket_starts = starts[sizes == size]
        left, right = np.triu_indices(int(size), k=1)
        chunks.append(
            np.stack(
                [
                    docs_sorted[(bucket_starts[:, None] + left[None, :]).ravel()],
                    docs_sorted[(bucket_starts[:, None] + right[None, :]).ravel()],
                ],
                axis=1,
            )
        )
    capped = sizes > max_bucket_size
    if capped.any():
        report["capped_buckets"] = int(capped.sum())
        report["ads_in_capped_buckets"] = int(sizes[capped].sum())
        cap_starts, cap_sizes = starts[capped], sizes[capped]
        members = np.repeat(cap_starts, cap_sizes - 1) + _ranks(cap_sizes - 1) + 1
        hubs = np.repeat(cap_starts, cap_sizes - 1)
        chunks.append(np.stack([docs_sorted[hubs], docs_sorted[members]], axis=1))
    if not chunks:
        return np.zeros((0, 2), dtype=np.int64), report
    pairs = np.concatenate(chunks)
    return np.sort(pairs, axis=1), report


def _ranks(lengths: np.ndarray) -> np.ndarray:
    """0..n-1 for each n in lengths, concatenated."""
    total = int(lengths.sum())
    return np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def band_keys(signatures: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """(n_docs, bands) uint64 keys: each band's rows hashed together with the band number."""
    n_docs = signatures.shape[0]
    banded = signatures[:, : bands * rows].reshape(n_docs, bands, rows)
    keys = np.zeros((n_docs, bands), dtype=np.uint64)
    for r in range(rows):
        keys += banded[:, :, r] * _BAND_MULTIPLIERS[r]
    keys ^= np.arange(bands, dtype=np.uint64)[None, :] * np.uint64(0x2545F4914F6CDD1D)
    return keys


def lsh_candidates(
    signatures: np.ndarray, bands: int, rows: int, max_bucket_size: int
) -> tuple[np.ndarray, dict]:
    """Unique pairs of docs agreeing on at least one LSH band; docs without shingles are skipped.

    Bands are grouped one at a time (a million keys sort in cache; keys of different bands never
    meet), and the pairs deduplicated as they come.
    """
    usable = np.flatnonzero(signatures[:, 0] != EMPTY_SIGNATURE_VALUE)
    keys = band_keys(signatures[usable], bands, rows)
    report = {"capped_buckets": 0, "ads_in_capped_buckets": 0, "largest_bucket": 0}
    n = max(len(signatures), 1)
    found = [np.zeros(0, dtype=np.int64)]
    for band in range(bands):
        pairs, band_report = pairs_from_keys(usable, keys[:, band], max_bucket_size)
        found.append(sorted_unique(_pair_codes(pairs, n)))
        if len(found) > 8:  # a true pair turns up in many bands: merge now and then
            found = [sorted_unique(np.concatenate(found))]
        report["capped_buckets"] += band_report["capped_buckets"]
        report["ads_in_capped_buckets"] += band_report["ads_in_capped_buckets"]
        report["largest_bucket"] = max(report["largest_bucket"], band_report["largest_bucket"])
    codes = sorted_unique(np.concatenate(found))
    return np.stack([codes // n, codes % n], axis=1), report


def employer_word(company: object) -> str | None:
    """The first word of a normalised employer name; None where there is no name.

    Example:
        >>> employer_word("hays specialist recruitment"), employer_word(None)
        ('hays', None)
    """
    return company.split(" ", 1)[0] if isinstance(company, str) and company else None


def blocking_columns(fields: pd.DataFrame) -> dict[str, pd.Series]:
    """The columns `FIELD_KEY_ROWS` combine: normalised fields and the employer's first word."""
    codes, companies = distinct(fields["company"])
    words = np.array([*(employer_word(c) for c in companies), None], dtype=object)
    columns = {name: fields[name] for name in ("company", "title_tokens", "city", "town")}
    columns["employer_word"] = pd.Series(words[codes], index=fields.index, dtype=object)
    return columns


def field_block_keys(fields: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Blocking keys per kind: doc indices and integer keys of ads sharing a field value.

    `fields` has one row per ad (positional) with the normalised columns `company`, `title_tokens`,
    `city`, `town`, `emails`, `phones` (see `features.fields.normalize_fields`).
    """
    columns = blocking_columns(fields)
    docs: dict[str, list[np.ndarray]] = {kind: [] for kind in FIELD_COMBOS}
    keys: dict[str, list[pd.Series]] = {kind: [] for kind in FIELD_COMBOS}
    for kind, first, second, unless in FIELD_KEY_ROWS:
        held = columns[first].notna() & columns[second].notna()
        if unless is not None:
            held &= ~(columns[second] == columns[unless]).fillna(False).astype(bool)
        docs[kind].append(np.flatnonzero(held.to_numpy()))
        keys[kind].append(columns[first][held].astype(str) + "\x1f" + columns[second][held].astype(str))
    kinds: dict[str, tuple[np.ndarray, np.ndarray]] = {
        kind: (
            np.concatenate(docs[kind]),
            pd.factorize(pd.concat(keys[kind], ignore_index=True))[0].astype(np.int64),
        )
        for kind in FIELD_COMBOS
    }
    for name in FIELD_ITEMS:
        exploded = fields[name].reset_index(drop=True).explode().dropna()
        item_docs = exploded.index.to_numpy(dtype=np.int64)
        kinds[name] = (item_docs, pd.factorize(exploded.astype(str))[0].astype(np.int64))
    return kinds


def batch_candidates(inputs: PairInputs, config: Config) -> tuple[pd.DataFrame, CandidateReport]:
    """`generate_candidates` of a prepared batch's inputs with the configured LSH and bucket cap."""
    return generate_candidates(
        inputs.signatures, inputs.fields, config.lsh_bands, config.lsh_rows, config.max_bucket_size
    )


def generate_candidates(
    signatures: np.ndarray, fields: pd.DataFrame, bands: int, rows: int, max_bucket_size: int
) -> tuple[pd.DataFrame, CandidateReport]:
    """Union of LSH and field-blocking pairs: DataFrame `i`, `j` (i < j), `via_lsh`, `via_fields`."""
    report = CandidateReport()
    if len(fields) < 2:  # one ad (a single check): no pair, and no need for the dozens of steps below
        report.by_key = {name: 0 for name in (*FIELD_COMBOS, *FIELD_ITEMS, "lsh")}
        empty = np.zeros(0, dtype=np.int64)
        return _pair_table(empty, empty, empty.astype(bool), empty.astype(bool)), report
    lsh, lsh_report = lsh_candidates(signatures, bands, rows, max_bucket_size)
    report.capped_buckets += lsh_report["capped_buckets"]
    report.ads_in_capped_buckets += lsh_report["ads_in_capped_buckets"]
    report.largest_bucket = lsh_report["largest_bucket"]
    field_chunks = [np.zeros((0, 2), dtype=np.int64)]
    for name, (docs, keys) in field_block_keys(fields).items():
        pairs, kind_report = pairs_from_keys(docs, keys, max_bucket_size)
        field_chunks.append(pairs)
        report.by_key[name] = len(sorted_unique(_pair_codes(pairs, len(fields))))
        report.capped_buckets += kind_report["capped_buckets"]
        report.ads_in_capped_buckets += kind_report["ads_in_capped_buckets"]
    n = max(len(fields), 1)
    lsh_codes = sorted_unique(_pair_codes(lsh, n))
    field_codes = sorted_unique(_pair_codes(np.concatenate(field_chunks), n))
    all_codes = sorted_unique(np.concatenate([lsh_codes, field_codes]))
    pairs = _pair_table(
        all_codes // n,
        all_codes % n,
        np.isin(all_codes, lsh_codes, assume_unique=True),
        np.isin(all_codes, field_codes, assume_unique=True),
    )
    report.lsh_pairs = len(lsh_codes)
    report.field_pairs = len(field_codes)
    report.total_pairs = len(all_codes)
    report.by_key["lsh"] = len(lsh_codes)
    return pairs, report


_PAIR_COLUMNS = pd.Index(["i", "j", "via_lsh", "via_fields"])


def _pair_table(i: np.ndarray, j: np.ndarray, via_lsh: np.ndarray, via_fields: np.ndarray) -> pd.DataFrame:
    """The candidate pairs' table (from its blocks: a frame of a dict costs ~70 µs for a few pairs)."""
    return frame_of_arrays(_PAIR_COLUMNS, [i, j, via_lsh, via_fields], pd.RangeIndex(len(i)))


def _pair_codes(pairs: np.ndarray, n: int) -> np.ndarray:
    """One int64 per pair (i * n + j), self-pairs removed."""
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return pairs[:, 0].astype(np.int64) * n + pairs[:, 1].astype(np.int64)


def lsh_probability(jaccard: np.ndarray | float, bands: int, rows: int) -> np.ndarray:
    """Probability that a pair with this Jaccard similarity shares at least one band (the S-curve)."""
    return 1.0 - (1.0 - np.asarray(jaccard, dtype=float) ** rows) ** bands
