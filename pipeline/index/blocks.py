"""Boilerplate counted over everything indexed, not batch by batch.

`dedup` marks a block as boilerplate when the batch shows it in ads with at least
`boilerplate_min_titles` distinct titles or `boilerplate_min_employers` distinct employers
(`pipeline.boilerplate`). An index sees its corpus a batch at a time: a company footer posted under
one title a day is boilerplate to one `dedup` over the month and never to a daily batch, so the
index kept template text in the core of early ads and grouped ads `dedup` keeps apart.

The index therefore keeps the *sightings* of every block still in some ad's core text: one entry
per distinct (block, title, employer) it was seen with. A batch's boilerplate is counted over its
own sightings and the stored ones together, exactly as `find_boilerplate_blocks` counts a batch;
once a block reaches either count it is boilerplate (stored with the learnt blocks) and its
sightings are no longer needed, so a block holds at most (min_titles − 1) × (min_employers − 1)
of them. Ads of the batch holding a block learnt this way are prepared again without it, so
every new ad's core text is what `dedup` over all indexed ads plus the batch would give it.

A sighting is stored in the index's key runs as a 48-bit block key with a 32-bit value: 16-bit
hashes of the normalised title (`title_tokens`) and employer (`company`), missing ones being one
value as in `pipeline.prepare`. (Two titles of one block share a 16-bit hash with probability
1/65,536: the block then counts one title too few.)

Example:
    >>> # seen = block_sightings(prepare_batch(ads, config, known, keep_blocks=True))
    >>> # learnt, affected = learn_boilerplate(batch, seen, store.block_sightings(seen["key"]), config)
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from xxhash import xxh3_64_intdigest

from jobdedup.features.normalize.unique import frame_of_arrays
from jobdedup.features.shingle_sets import first_occurrences, sorted_member, sorted_unique
from jobdedup.pipeline.boilerplate import find_boilerplate_blocks, merge_block_sets
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.index.tables import sightings_table
from jobdedup.pipeline.prepare import PreparedBatch

SIGHTING_KEY_BITS = 48
_NO_VALUE = "\x00none"  # every missing title or employer (one value, as `pipeline.prepare` codes them)


def value_hashes(values: pd.Series) -> np.ndarray:
    """64-bit hash (xxh3) of each normalised value; every missing value is one value."""
    # (numpy, not astype/where: ~0.1 ms each on one ad)
    texts = values.to_numpy(dtype=object)
    named = (_NO_VALUE if missing else str(v) for v, missing in zip(texts, pd.isna(texts)))
    return np.fromiter((xxh3_64_intdigest(t.encode()) for t in named), np.uint64, len(texts))


def sighting_keys(blocks: np.ndarray) -> np.ndarray:
    """The stored key of block hashes: their top `SIGHTING_KEY_BITS` bits (int64)."""
    return (np.asarray(blocks, dtype=np.uint64) >> np.uint64(64 - SIGHTING_KEY_BITS)).astype(np.int64)


_SEEN_COLUMNS = pd.Index(["doc", "block", "key", "value"])


def block_sightings(batch: PreparedBatch) -> pd.DataFrame:
    """Every distinct (`doc`, `block`) left in a core text of `batch` (prepared with `keep_blocks`),
    with its `key` and `value` (title hash << 16 | employer hash) as stored."""
    if batch.core_blocks is None:
        raise ValueError("block_sightings needs a batch prepared with keep_blocks=True")
    doc, block = (batch.core_blocks[c].to_numpy() for c in ("doc", "block"))
    title = value_hashes(batch.inputs.fields["title_tokens"]) & np.uint64(0xFFFF)
    employer = value_hashes(batch.inputs.fields["company"]) & np.uint64(0xFFFF)
    value = ((title << np.uint64(16)) | employer).astype(np.int64)
    # (from its blocks: a frame of a dict costs ~70 µs for a single ad's blocks)
    return frame_of_arrays(
        _SEEN_COLUMNS, [doc, block, sighting_keys(block), value[doc]], pd.RangeIndex(len(doc))
    )


def learn_boilerplate(
    batch: PreparedBatch, seen: pd.DataFrame, stored: pd.DataFrame, config: Config
) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """What a batch learns, counting its blocks' sightings with the index's.

    Args:
        batch: the new ads, prepared with the known boilerplate and `keep_blocks`.
        seen: `block_sightings(batch)`.
        stored: the index's sightings of those blocks' keys (`key`, `value`).
        config: `boilerplate_min_titles`, `boilerplate_min_employers`.

    Returns:
        learnt: block hashes that are boilerplate from now on (the batch's own and those the
            stored sightings complete), sorted;
        affected: the batch rows whose core text holds one of them (to prepare again);
        new: the sightings (`key`, `value`) to store: those of blocks still in core texts that show
            the block with a title or an employer the index has not seen it with.
    """
    stored_key, stored_value = (stored[c].to_numpy(dtype=np.int64) for c in ("key", "value"))
    seen_key, seen_value = (seen[c].to_numpy(dtype=np.int64) for c in ("key", "value"))
    value = np.concatenate([stored_value, seen_value])
    # (numpy, not DataFrames: a single-ad check would pay pandas' fixed cost per call; repeated
    # sightings do not change the distinct titles and employers counted)
    reached = find_boilerplate_blocks(
        np.concatenate([stored_key, seen_key]).astype(np.uint64),
        np.arange(len(value)),
        value >> 16,
        config.boilerplate_min_titles,
        value & 0xFFFF,
        config.boilerplate_min_employers,
    ).astype(np.int64)
    now_boilerplate = sorted_member(seen_key, reached)
    seen_block = seen["block"].to_numpy()
    learnt = merge_block_sets(batch.batch_boilerplate, seen_block[now_boilerplate])
    # (a block of another slice's boilerplate left in this slice's core texts: large batches only)
    now_boilerplate |= sorted_member(seen_block, learnt)
    affected = sorted_unique(seen["doc"].to_numpy()[now_boilerplate])
    # A sighting is worth storing when it shows its block with a title or an employer the index
    # has not seen it with (keys have 48 bits, so key and 16-bit hash make one int64).
    key, value = seen_key[~now_boilerplate], seen_value[~now_boilerplate]
    first = first_occurrences(key, value)
    key, value = key[first], value[first]
    if len(stored) and len(key):
        sixteen, low = np.uint64(16), np.uint64(0xFFFF)
        key_u, value_u = key.astype(np.uint64), value.astype(np.uint64)
        old_key, old_value = stored_key.astype(np.uint64), stored_value.astype(np.uint64)
        title_known = sorted_member(
            (key_u << sixteen) | (value_u >> sixteen),
            sorted_unique((old_key << sixteen) | (old_value >> sixteen)),
        )
        employer_known = sorted_member(
            (key_u << sixteen) | (value_u & low), sorted_unique((old_key << sixteen) | (old_value & low))
        )
        key, value = key[~(title_known & employer_known)], value[~(title_known & employer_known)]
    return learnt, affected, sightings_table(key, value)
