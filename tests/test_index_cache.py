"""`pipeline.index.cache`: the service's in-memory keys answer as the SQLite store does."""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest

from jobdedup.pipeline.index import Index
from jobdedup.pipeline.index.cache import KeyCache, open_cached
from jobdedup.pipeline.index.key_search import PACK_MIN_ENTRIES, PackedKeys


def _mapped_keys(part) -> np.ndarray:
    """The array a cached part's keys are read from (a packed part's offsets)."""
    return part.keys.rest if isinstance(part.keys, PackedKeys) else part.keys


def _plain_keys(part) -> np.ndarray:
    """A cached part's sorted uint64 keys, whether held plain or packed."""
    return part.keys.unpack() if isinstance(part.keys, PackedKeys) else np.asarray(part.keys)


def test_cached_block_sightings_keep_values_equal_to_removed_ids(tmp_path, default_model, test_ads):
    path = tmp_path / "ads.jdx"
    with Index.open(path) as index:
        index.add(test_ads.iloc[:20], default_model)
        gone = index.store.find_ads([test_ads["ad_id"].iloc[0]])["id"].to_numpy()
        index.remove([test_ads["ad_id"].iloc[0]])
        with index.store.write(5):  # a sighting whose value happens to equal the removed ad's id
            index.store.insert_block_sightings(np.asarray([12345], dtype=np.int64), gone)
        with index.store.read():
            stored = index.store.block_sightings(np.asarray([12345]))
    assert stored["value"].tolist() == gone.tolist()  # values are not ads: removals do not apply
    with open_cached(path, KeyCache(), read_only=True) as cached, cached.store.read():
        pd.testing.assert_frame_equal(
            cached.store.block_sightings(np.asarray([12345])), stored, check_dtype=False
        )


def test_kept_boilerplate_and_names_follow_adds_of_another_process(tmp_path, default_model, test_ads):
    """A cached store keeps the index's boilerplate and the name table with its view: a check through
    it equals a check through a plain store, before and after another writer adds ads (new names,
    new boilerplate), and the kept values are those of the new state."""
    path = tmp_path / "ads.jdx"
    model = default_model.with_config(jobs=1, show_progress=False)
    probe = test_ads.iloc[150:170].reset_index(drop=True)
    cache = KeyCache()
    with Index.open(path) as writer, open_cached(path, cache, read_only=True) as cached:
        for first, last in ((0, 60), (60, 150)):
            writer.add(test_ads.iloc[first:last], model)
            for one in [probe.iloc[[k]].reset_index(drop=True) for k in range(5)] + [probe]:
                expected, got = writer.check(one, model), cached.check(one, model)
                for name in ("pairs", "groups", "merges"):
                    pd.testing.assert_frame_equal(getattr(got, name), getattr(expected, name))
            with cached.store.read(), writer.store.read():
                names = cached.store.derived("name_words", lambda: None)
                assert np.array_equal(names.words, writer.store.name_words())
                assert np.array_equal(cached.store.boilerplate(), writer.store.boilerplate())
    # Two views are kept, and only the newest keeps its derived tables (~10 MB at 1,000,000 ads).
    views = [view for view, _ in cache._views.values()]
    assert len(views) == 2 and not views[0].derived and "name_words" in views[1].derived


@pytest.mark.slow
def test_key_parts_mapped_from_files_answer_as_decoded_ones(tmp_path, default_model, test_ads):
    """Two caches over one folder of decoded parts (two service processes) look up what a cache
    holding its parts in memory does, after adds and a merge of runs too; a broken file is written
    again; files no view uses are removed once stale."""
    from jobdedup.pipeline.index import key_files
    from jobdedup.pipeline.index.key_files import key_directory

    path = tmp_path / "ads.jdx"
    model = default_model.with_config(jobs=1, show_progress=False)
    folder = key_directory(path)
    first, second, memory = KeyCache(folder), KeyCache(folder), KeyCache()
    packed = KeyCache(folder, pack_min_entries=0)  # (every part's keys packed, as large parts are)
    probe = test_ads.iloc[180:200].reset_index(drop=True)
    with Index.open(path) as writer:
        for start in range(0, 180, 30):
            writer.add(test_ads.iloc[start : start + 30], model)
            expected = None
            for cache in (memory, packed, first, second):
                with open_cached(path, cache, read_only=True) as cached:
                    with cached.store.read():
                        view = cached.store._view
                        keys = np.sort(np.concatenate([_plain_keys(p) for p in view.parts[0]]))[::7]
                        found = cached.store.lookup(
                            keys.view(np.int64), np.zeros(len(keys)), np.ones(len(keys), bool)
                        )
                    result = cached.check(probe, model)
                if expected is None:
                    expected = (found, result)
                    continue
                pd.testing.assert_frame_equal(found, expected[0])
                pd.testing.assert_frame_equal(result.pairs, expected[1].pairs)
            mapped = [p for parts in view.parts.values() for p in parts]
            assert all(p.file and isinstance(p.keys, np.memmap) for p in mapped)
            with open_cached(path, packed, read_only=True) as cached, cached.store.read():
                packed_parts = [p for parts in cached.store._view.parts.values() for p in parts]
            assert any(isinstance(p.keys, PackedKeys) for p in packed_parts)
            assert all(p.file and isinstance(_mapped_keys(p), np.memmap) for p in packed_parts)
    names = {p.file for p in mapped} | {p.file for p in packed_parts}
    assert {f.name.split(".")[0] for f in folder.iterdir()} >= names
    # The ad_id lists that the checks read back are mapped from files too, one copy for both caches.
    id_files = {f.name.split(".")[0] for f in folder.iterdir() if f.name.startswith("ids")}
    assert id_files and first._id_files == second._id_files == id_files and not memory._id_files
    # A truncated file is decoded and written again.
    broken = folder / (min(names) + ".keys.npy")
    broken.write_bytes(broken.read_bytes()[:100])
    with open_cached(path, KeyCache(folder), read_only=True) as cached, cached.store.read():
        part = next(
            p for ps in cached.store._view.parts.values() for p in ps if p.file == broken.name.split(".")[0]
        )
        assert len(part.keys) == len(np.load(broken, mmap_mode="r"))
    # Files of parts no view uses go once stale; others stay.
    (folder / "0123abcd.keys.npy").write_bytes(b"old")
    key_files.drop_stale_parts(folder, names)
    assert (folder / "0123abcd.keys.npy").exists()
    import os

    os.utime(folder / "0123abcd.keys.npy", (0, 0))
    key_files.drop_stale_parts(folder, names)
    assert not (folder / "0123abcd.keys.npy").exists()
    assert {f.name.split(".")[0] for f in folder.iterdir()} >= names


def test_cached_store_connections_keep_a_small_page_cache(tmp_path):
    """Keys come from the cache: a service connection keeps 4 MB of SQLite pages, not 256 MB."""
    from jobdedup.pipeline.index.cache import PAGE_CACHE_KB

    with open_cached(tmp_path / "ads.jdx", KeyCache()) as cached, Index.open(tmp_path / "ads.jdx") as plain:
        assert cached.store.db.execute("PRAGMA cache_size").fetchone()[0] == -PAGE_CACHE_KB
        assert plain.store.db.execute("PRAGMA cache_size").fetchone()[0] == -262144


@pytest.mark.parametrize("pack_min_entries", [PACK_MIN_ENTRIES, 0])
def test_cached_runs_answer_as_the_stored_runs(tmp_path, default_model, test_ads, pack_min_entries):
    """The cached view's look-up (the key ranges of all parts searched at once) finds in every key
    space what the store's own look-up of its runs finds: keys held, keys no part holds, keys
    below and above every part, none; with its keys plain or packed (`PackedKeys`)."""
    from jobdedup.pipeline.index.key_runs import SPACE_AD_IDS, SPACE_BLOCKS, SPACE_KEYS, KeyRuns

    path = tmp_path / "ads.jdx"
    model = default_model.with_config(jobs=1, show_progress=False)
    with Index.open(path) as writer:
        for start in range(0, 90, 30):  # (three runs: four would be merged into one)
            writer.add(test_ads.iloc[start : start + 30], model)
    rng = np.random.default_rng(3)
    cache = KeyCache(pack_min_entries=pack_min_entries)
    with open_cached(path, cache, read_only=True) as cached, cached.store.read():
        view = cached.store._view
        for space in (SPACE_KEYS, SPACE_AD_IDS, SPACE_BLOCKS):
            assert len(view.parts[space]) > 1
            if space != SPACE_AD_IDS:  # (band, field and block keys span 36-48 bits; ad_id hashes 64)
                assert all(
                    isinstance(p.keys, PackedKeys) == (pack_min_entries == 0) for p in view.parts[space]
                )
            held = np.concatenate([_plain_keys(p) for p in view.parts[space]])
            ends = np.array([0, held.min() - 1, held.max() + 1, 2**64 - 1], dtype=np.uint64)
            others = np.r_[held[::3], rng.integers(0, 2**63, 50, dtype=np.uint64), ends]
            for keys in (held[:0], held[:1], held[::5], others):
                keys = np.unique(keys.astype(np.uint64))
                found = cached.store._runs_lookup(space, keys)
                stored = KeyRuns._runs_lookup(cached.store, space, keys)
                order, stored_order = np.lexsort(found[::-1]), np.lexsort(stored[::-1])
                for a, b in zip(found, stored):
                    assert a.dtype == b.dtype == np.int64
                assert np.array_equal(found[0][order], stored[0][stored_order])
                assert np.array_equal(found[1][order], stored[1][stored_order])
            assert len(cached.store._runs_lookup(space, np.unique(held))[0]) >= len(np.unique(held))
            # ad ids and sighting values (16-bit title and employer hashes) held in 4 bytes, not 8
            assert all(p.ads.dtype.itemsize == 4 for p in view.parts[space])


def test_part_values_are_held_in_the_narrowest_type_that_keeps_them():
    from jobdedup.pipeline.index.cache import narrow_values

    for values, dtype in (
        ([0, 2**31 - 1], np.int32),
        ([0, 2**31, 2**32 - 1], np.uint32),
        ([0, 2**32], np.int64),
        ([-1, 5], np.int64),
        ([], np.int64),
    ):
        narrowed = narrow_values(np.asarray(values, dtype=np.int64))
        assert narrowed.dtype == dtype
        assert narrowed.astype(np.int64).tolist() == values


def test_a_part_file_is_published_once_and_never_replaced_under_a_reader(tmp_path):
    """Two processes decoding one part at once (a service's workers starting) map one file: the
    second save keeps the first's file, whose inode a reader has mapped; a broken file is replaced
    only when asked."""
    from jobdedup.pipeline.index.key_files import SUFFIXES, map_arrays, save_arrays

    keys, ads = np.arange(10, dtype=np.uint64), np.arange(10, dtype=np.int32)
    save_arrays(tmp_path, "part", (keys, ads), SUFFIXES)
    first = (tmp_path / "part.keys.npy").stat().st_ino
    mapped = map_arrays(tmp_path, "part", SUFFIXES)
    save_arrays(tmp_path, "part", (keys, ads), SUFFIXES)
    assert (tmp_path / "part.keys.npy").stat().st_ino == first
    assert mapped is not None and mapped[0].tolist() == keys.tolist()
    save_arrays(tmp_path, "part", (keys, ads), SUFFIXES, replace=True)
    assert (tmp_path / "part.keys.npy").stat().st_ino != first
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_derived_table_asked_for_by_two_threads_at_once_is_built_once(tmp_path, default_model, test_ads):
    """The service's refresh thread and a check both asking for a new view's derived table: the
    second waits for the first's build and gets the same object (built twice at once, the two
    builds shared the interpreter lock and the check waited for both)."""
    path = tmp_path / "ads.jdx"
    with Index.open(path) as index:
        index.add(test_ads.iloc[:20], default_model)
    cache = KeyCache()
    with open_cached(path, cache) as first, open_cached(path, cache) as second:
        view = first.store.view()
        assert second.store.view() is view
    builds: list[int] = []
    started = threading.Event()

    def slow_build() -> object:
        builds.append(threading.get_ident())
        started.set()
        time.sleep(0.2)
        return object()

    found: list[object] = []
    threads = [threading.Thread(target=lambda: found.append(view.derive("table", slow_build)))]
    threads[0].start()
    started.wait(5)
    threads.append(threading.Thread(target=lambda: found.append(view.derive("table", slow_build))))
    threads[1].start()
    for thread in threads:
        thread.join(5)
    assert len(builds) == 1 and len(found) == 2 and found[0] is found[1]
    assert view.derive("table", slow_build) is found[0] and len(builds) == 1
    assert view.derive("other", lambda: 7) == 7  # (another name: its own build)


def test_a_pinned_store_reads_its_state_until_pinned_again_and_keeps_its_view_whole(
    tmp_path, default_model, test_ads
):
    """`pin` holds one committed state open: another writer's commit changes nothing a pinned
    store reads (ads, keys, generation) until the next `pin`; the pinned view keeps its derived
    tables while newer views are built, and lets them go when unpinned."""
    path = tmp_path / "ads.jdx"
    model = default_model.with_config(jobs=1, show_progress=False)
    probe = test_ads.iloc[[70]].reset_index(drop=True)
    cache = KeyCache()
    with Index.open(path) as writer, open_cached(path, cache) as pinned, open_cached(path, cache) as other:
        writer.add(test_ads.iloc[:40], model)
        before = pinned.store.pin()
        before_check = pinned.check(probe, model)
        writer.add(test_ads.iloc[40:80], model)  # holds the probe's own ad: it is now indexed
        assert other.store.view().generation > before  # (an unpinned store sees the commit, new view built)
        assert pinned.store.view().generation == before and pinned.stats()["ads"] == 40
        again = pinned.check(probe, model)
        pd.testing.assert_frame_equal(again.pairs, before_check.pairs)
        held = pinned.store.view()
        assert "name_words" in held.derived  # (kept: a pinned view is not an older view let go)
        assert pinned.store.pin() > before and pinned.stats()["ads"] == 80
        assert pinned.check(probe, model).groups["status"].tolist() == ["already_indexed"]
        assert before_check.groups["status"].tolist() != ["already_indexed"]
        assert not held.derived  # the last pin of the older state gone: its tables too
        pinned.store.unpin()
        assert pinned.store.pinned_generation is None
        with pinned.store.write(5):  # (a write unpins first: it needs a transaction of its own)
            pass
