"""The compiled key search against the numpy searches it replaced."""

from __future__ import annotations

import numpy as np
import pytest

from jobdedup.pipeline.index.key_search import (
    PackedKeys,
    _matching_entries,
    matching_entries,
    pack_keys,
    packed_shift,
)


def _reference(part: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`searchsorted` both ends of each wanted key, expanded (what the key store did before)."""
    start = np.searchsorted(part, wanted, side="left")
    count = np.searchsorted(part, wanted, side="right") - start
    return np.repeat(np.arange(len(wanted)), count), np.concatenate(
        [np.arange(s, s + c) for s, c in zip(start, count)] + [np.zeros(0, np.int64)]
    )


@pytest.mark.parametrize("seed", range(12))
def test_matches_are_those_of_searchsorted(seed: int) -> None:
    """Random parts (repeated keys, 64-bit values near both ends) and query sets dense and sparse,
    inside, before and after the part: every match found, in order, nothing else."""
    rng = np.random.default_rng(seed)
    pool = np.concatenate(
        [rng.integers(0, 2**63, 400, dtype=np.uint64) * np.uint64(2), np.array([0, 2**64 - 1], np.uint64)]
    )
    if seed % 2:
        pool = pool >> np.uint64(28)
    part = np.sort(rng.choice(pool, size=int(rng.integers(0, 3000)), replace=True))
    wanted = np.unique(rng.choice(pool, size=int(rng.integers(0, 300)), replace=True))
    if seed % 3 == 0:  # a key held by thousands of ads: its entries span several fences
        part = np.sort(np.concatenate([part, np.repeat(rng.choice(wanted if len(wanted) else pool), 2000)]))
    expected_rows, expected_entries = _reference(part, wanted)
    found = [matching_entries(part, wanted)]
    found += [
        _matching_entries(part, np.ascontiguousarray(part[::step]), wanted, step) for step in (1, 2, 3, 7)
    ]
    shift = packed_shift(int(part[0]), int(part[-1])) if len(part) else None
    if shift is not None:  # (the odd seeds' keys span 36 bits, as the index's band keys do)
        found.append(
            matching_entries(PackedKeys(int(part[0]), shift, *pack_keys(part, int(part[0]), shift)), wanted)
        )
    for rows, entries in found:  # (the shipped fence step, small ones: many fences per search; packed)
        assert rows.tolist() == expected_rows.tolist() and entries.tolist() == expected_entries.tolist()


@pytest.mark.parametrize("seed", range(4))
def test_packed_keys_unpack_to_the_keys_and_are_found_as_they_are(seed: int) -> None:
    """Parts as the index holds them (a million keys over 36 bits; block-sighting keys over 48),
    one bucket crowded, keys repeated and at the range's ends, packed: they unpack to themselves,
    take 2 or 4 bytes a key, and every look-up (held keys, their neighbours, keys outside the
    part) finds what it finds in the plain keys."""
    rng = np.random.default_rng(seed)
    for bits, width in ((36, 2), (48, 4)):
        low = int(rng.integers(0, 2 ** (bits - 6)))
        high = low + 2 ** (bits - 5)
        base = rng.integers(low, high, 200_000, dtype=np.uint64)
        crowded = np.uint64(low + 2 ** (bits - 6)) + rng.integers(0, 50, 3000, dtype=np.uint64)
        part = np.sort(
            np.concatenate([base, crowded, np.repeat(base[:10], 40), np.array([low, high], np.uint64)])
        )
        first, last = int(part[0]), int(part[-1])
        shift = packed_shift(first, last)
        assert shift is not None
        packed = PackedKeys(first, shift, *pack_keys(part, first, shift))
        assert len(packed) == len(part) and packed.unpack().tolist() == part.tolist()
        assert packed.rest.itemsize == width
        near = np.r_[part - np.uint64(1), part + np.uint64(1), part, np.array([0, 2**64 - 1], np.uint64)]
        wanted = np.unique(np.r_[near, rng.integers(0, 2**bits, 500, dtype=np.uint64)])
        expected = matching_entries(part, wanted)
        found = matching_entries(packed, wanted)
        assert found[0].tolist() == expected[0].tolist() and found[1].tolist() == expected[1].tolist()
    assert packed_shift(0, 2**63) is None  # (offsets over 48 bits: the part stays plain)


def test_keys_that_differ_only_below_float_precision_are_told_apart() -> None:
    part = np.array([2**63, 2**63 + 1, 2**63 + 1], dtype=np.uint64)
    rows, entries = matching_entries(part, np.array([2**63 + 1], dtype=np.uint64))
    assert rows.tolist() == [0, 0] and entries.tolist() == [1, 2]
    with pytest.raises(TypeError):
        matching_entries(part, np.array([1], dtype=np.int64))


def test_fences_of_a_mapped_part_are_read_from_its_file(tmp_path) -> None:
    """A memory-mapped part's fences (read with `os.pread`, not through the mapping) are every
    `FENCE_STEP`-th key, as of the same keys in memory."""
    from jobdedup.pipeline.index.key_files import SUFFIXES, map_arrays, save_arrays
    from jobdedup.pipeline.index.key_search import FENCE_STEP, fences

    keys = np.sort(np.random.default_rng(3).integers(0, 2**64, 3 * FENCE_STEP + 5, dtype=np.uint64))
    save_arrays(tmp_path, "part", (keys, np.arange(len(keys))), SUFFIXES)
    mapped, _ = map_arrays(tmp_path, "part", SUFFIXES)
    assert isinstance(mapped, np.memmap)
    assert fences(mapped).tolist() == fences(keys).tolist() == keys[::FENCE_STEP].tolist()
