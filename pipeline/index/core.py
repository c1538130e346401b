"""The incremental index: score each new batch against everything seen before, keep group ids stable.

`Index.add(ads, model)`:
1. skip ads already in the index (by `ad_id`; reported), prepare the rest with the model's
   boilerplate plus the boilerplate learnt from earlier batches; count the batch's blocks with the
   index's stored sightings of them (`pipeline.index.blocks`), so boilerplate is a statistic of
   everything indexed, and prepare again the ads holding a block that count makes boilerplate;
2. candidates within the batch (`generate_candidates`, as `dedup` does) and against the index: the
   batch's LSH band keys and field-blocking keys are joined with the index's key table in one query
   (buckets over `max_bucket_size` are capped to a star around a hub, as in batch mode);
3. the index ads that turn up, and the other members of their groups, are read back (compressed
   rows) and prepared again, so pair features are exactly those batch mode computes;
4. pairs are scored; `group_ads` runs over the new ads plus the old groups they touch, every old
   group passed in whole (its inner pairs scored), so the average-linkage anti-chaining guard sees
   the whole group a new ad wants to join; the employer guard then sees the accepted pairs, the
   old groups' accepted inner pairs among them, and their evidence links, as in `dedup`;
5. reconciliation: old ads never leave their group; a new ad joins the old group its cluster holds;
   a cluster holding two old groups merges them under the older id (reported in `merges`); other
   new ads form new groups named after their smallest `ad_id`;
6. everything is written in one transaction (the store's write lock is held from step 1, so no
   other writer can change what the batch was matched against).

Example:
    >>> # index = Index.open("ads.jdx")
    >>> # pairs, groups, merges = index.add(new_ads, Deduplicator.load("model.json"))
    >>> # index.stats()["ads"]
"""

from __future__ import annotations

import dataclasses
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Self

import numpy as np
import pandas as pd

from jobdedup.features.pairs import build_pair_features
from jobdedup.features.shingle_sets import sorted_unique
from jobdedup.pipeline.candidates import generate_candidates
from jobdedup.pipeline.evidence_kernels import WordTable
from jobdedup.pipeline.group import GroupReport
from jobdedup.pipeline.index.blocks import block_sightings, learn_boilerplate
from jobdedup.pipeline.index.grouping import group_batch
from jobdedup.pipeline.index.inputs import concat_inputs, replace_rows, take_rows
from jobdedup.pipeline.index.meta import check_model, check_model_read
from jobdedup.pipeline.index.pairs import cross_pairs
from jobdedup.pipeline.index.quick_check import check_index_pairs, check_reconcile
from jobdedup.pipeline.index.reconcile import final_gids, new_group_names, reconcile
from jobdedup.pipeline.index.results import (
    AddResult,
    empty_merges,
    empty_pairs,
    output_tables,
    skipped_groups,
    would_add,
)
from jobdedup.pipeline.index.rows import field_keys, lsh_keys
from jobdedup.pipeline.index.store import IndexStore, open_store
from jobdedup.pipeline.index.stored_rows import (
    read_groups,
    read_rows,
    root_references,
    row_packer,
    similar_references,
)
from jobdedup.pipeline.io import validate_ads
from jobdedup.pipeline.prepare import name_words, prepare_again, prepare_batch
from jobdedup.pipeline.progress import Progress

# Test hook: seconds to sleep inside the write transaction, after the writes and before COMMIT.
SLEEP_HOOK = "JOBDEDUP_INDEX_SLEEP_BEFORE_COMMIT"


class Index:
    """A persistent, incremental duplicate index (see the module docstring).

    Args:
        store: the storage backend (`pipeline.index.store.IndexStore`).
        timeout: seconds a writer waits for another writer before giving up.
    """

    def __init__(self, store: IndexStore, timeout: float = 60.0) -> None:
        self.store = store
        self.timeout = timeout

    @classmethod
    def open(
        cls, path: str | Path, *, timeout: float = 60.0, read_only: bool = False, backend: str = "sqlite"
    ) -> Index:
        """Open the index at `path`, creating an empty one unless `read_only`."""
        return cls(open_store(path, backend=backend, read_only=read_only), timeout=timeout)

    def close(self) -> None:
        """Release the file (a checkpoint folds the write-ahead log back into it)."""
        self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ add
    def add(self, ads: pd.DataFrame, model: Any) -> AddResult:
        """Match `ads` within themselves and against the index, group them, and add them.

        Args:
            ads: new ads (contract columns; validated here).
            model: a fitted `pipeline.engine.Deduplicator`.

        Returns:
            `AddResult` (unpacks as `pairs, groups, merges`).
        """
        return self._match(ads, model, write=True)

    def check(self, ads: pd.DataFrame, model: Any) -> AddResult:
        """What `add` would do with `ads`, without writing anything (a read: never waits for a writer).

        The code path of `add` up to its writes (its index pairs and reconciliation in the numpy
        forms of `pipeline.index.quick_check`, equal to add's), so the pairs, groups, merges and
        statuses are those `add` gives on the same ads against the same index state; `pairs` also has
        `dup_type` for duplicate pairs, and `groups.group_id` of an ad that would found a new
        group is the name the group would get.

        Example:
            >>> # with Index.open("ads.jdx", read_only=True) as index:
            >>> #     pairs, groups, merges = index.check(new_ads, model)
        """
        return self._match(ads, model, write=False)

    def _match(self, ads: pd.DataFrame, model: Any, write: bool) -> AddResult:
        """`add` (write=True) or `check` (write=False): the same matching, writes only for `add`."""
        cfg = model.config
        progress = Progress(cfg.show_progress)
        timings: dict[str, float] = {}  # seconds per step (0.1 ms: a single-ad check's steps take a few)
        clock = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[name] = round(now - clock, 4)
            clock = now

        ads = validate_ads(ads, source="ads", max_description_chars=cfg.max_description_chars)
        lap("validate")

        with self.store.write(self.timeout) if write else self.store.read():
            meta = check_model(self.store, cfg) if write else check_model_read(self.store, cfg)
            cap = int(meta.get("max_bucket_size", cfg.max_bucket_size))
            ad_ids = ads["ad_id"].tolist()  # (validated: text, never missing; `astype(str)` costs ~50 µs)
            known = self.store.find_ads(ad_ids)
            if len(known):
                skipped_mask = ads["ad_id"].astype(str).isin(set(known["ad_id"])).to_numpy()
                new_ads = ads[~skipped_mask].reset_index(drop=True)
                skipped = ads.loc[skipped_mask, "ad_id"].astype(str).tolist()
            else:  # (every ad new, as most checks: no filtering, ~0.3 ms of pandas for one ad)
                new_ads, skipped = ads.reset_index(drop=True), []
            lap("check")
            if new_ads.empty:
                groups = skipped_groups(self.store, known, skipped)
                return AddResult(
                    empty_pairs(), groups, empty_merges(), skipped, {"new_ads": 0, "skipped": len(skipped)}
                )
            # Compressing the new rows needs nothing from matching: it runs in a thread (zstd
            # releases the GIL) while the batch is prepared, matched, scored and grouped.
            if write:
                writer = row_packer(self.store, threads=1)  # one thread: the other core is busy matching
                writer.preload()
                packing = ThreadPoolExecutor(max_workers=1)
                roots = packing.submit(writer.pack_roots, new_ads, True, cfg.seed)
                packing.shutdown(wait=False)
            # The model's and the index's boilerplate as two sets (their union would copy ~1.4
            # million blocks at 1,000,000 ads, 11 MB in each service process), and the index's
            # names with their hash table, kept with a cached store's view of the index (a check
            # would fill an 8 MB table).
            boilerplate = (model.boilerplate_, self.store.boilerplate())
            # Texts are searched for the names of every indexed ad too (evidence of agency copies).
            new_names, own_words = name_words(new_ads)
            names = (self.store.derived("name_words", lambda: WordTable(self.store.name_words())), new_names)
            with progress.stage("prepare", total=len(new_ads), unit="ads"):
                batch = prepare_batch(
                    new_ads, cfg, boilerplate, names=names, keep_blocks=True, own_words=own_words
                )
            n = len(batch)
            lap("prepare")
            # Boilerplate counted over the index and the batch together: ads holding a block that
            # only the stored sightings make boilerplate are prepared again without it.
            seen = block_sightings(batch)
            learnt, affected, new_sightings = learn_boilerplate(
                batch, seen, self.store.block_sightings(seen["key"].to_numpy()), cfg
            )
            if len(affected):
                again = prepare_again(
                    new_ads["description"].iloc[affected],
                    take_rows(batch.inputs, affected),
                    cfg,
                    (*boilerplate, learnt),
                    names,
                )
                batch = dataclasses.replace(batch, inputs=replace_rows(batch.inputs, affected, again))
            lap("learn_boilerplate")

            # ---- candidates: within the batch, and against the index (one join)
            within, _ = generate_candidates(
                batch.inputs.signatures, batch.inputs.fields, cfg.lsh_bands, cfg.lsh_rows, cfg.max_bucket_size
            )
            lsh_doc, lsh_key = lsh_keys(batch.inputs.signatures, cfg.lsh_bands, cfg.lsh_rows)
            field_doc, field_key = field_keys(batch.inputs.fields)
            if write:
                query = pd.DataFrame(
                    {
                        "key": np.concatenate([lsh_key, field_key]).view(np.int64),
                        "doc": np.concatenate([lsh_doc, field_doc]),
                        "lsh": np.r_[np.ones(len(lsh_key), bool), np.zeros(len(field_key), bool)],
                    }
                ).drop_duplicates(["key", "doc"])
                hits = self.store.lookup(
                    query["key"].to_numpy(), query["doc"].to_numpy(), query["lsh"].to_numpy()
                )
                cross, new_big_keys, store_keys = cross_pairs(query, hits, cap)
            else:  # (a check stores no keys: only its pairs, without DataFrames)
                cross = check_index_pairs(self.store, (lsh_doc, lsh_key), (field_doc, field_key), cap)
            lap("lookup")

            # ---- read back the candidate index ads and the rest of their groups; prepare them
            old, old_ads, old_raw = read_groups(self.store, sorted_unique(cross["ad"].to_numpy()))
            lap("read_back")
            if len(old_ads):
                old_batch = prepare_batch(old_ads, cfg, (*boilerplate, learnt), names=names)
                inputs = concat_inputs(batch.inputs, old_batch.inputs)
            else:
                inputs = batch.inputs
            lap("prepare_old")
            old_pos = pd.Series(np.arange(len(old)) + n, index=old["id"].to_numpy())
            old_gid = old["gid"].to_numpy(dtype=np.int64)

            # ---- score candidate pairs
            left = np.concatenate([within["i"].to_numpy(), cross["doc"].to_numpy()]).astype(np.int64)
            right = np.concatenate(
                [within["j"].to_numpy(), old_pos.reindex(cross["ad"].to_numpy()).to_numpy()]
            ).astype(np.int64)
            via_lsh = np.concatenate([within["via_lsh"].to_numpy(), cross["via_lsh"].to_numpy()])
            via_fields = np.concatenate([within["via_fields"].to_numpy(), cross["via_fields"].to_numpy()])

            with progress.stage("score", total=len(left), unit="pairs"):
                # (Most single-ad checks have no candidate pair: no features to build, no model call.)
                features = build_pair_features(inputs, left, right) if len(left) else None
                probability = model.predict_proba(features)[:, 1] if features is not None else np.zeros(0)
            accepted = probability >= model.threshold_
            lap("score")

            # ---- group: new ads + whole old groups they touch, anti-chaining guard included
            touched = sorted_unique(old_gid[right[accepted & (right >= n)] - n])
            in_touched = np.isin(old_gid, touched)
            report = GroupReport()
            if accepted.any():
                labels, inner_scored = group_batch(
                    model, inputs, (left, right, probability, features), accepted, old_gid, in_touched, report
                )
            else:  # no edge: every ad is a group of its own (what grouping and the guard give then)
                labels, inner_scored = np.arange(len(inputs.words), dtype=np.int64), 0
            lap("group")

            # ---- reconcile with the stable old group ids
            batch_no = self.store.next_batch()
            first_id = self.store.next_id()
            new_id = np.arange(first_id, first_id + n, dtype=np.int64)
            new_ad_ids = new_ads["ad_id"].to_numpy(dtype=object)
            if write:
                new_gid, merges, group_size, existing = reconcile(
                    self.store, labels, n, new_id, new_ad_ids, old_gid, in_touched, old["id"].to_numpy()
                )
            else:
                new_gid, merges, group_size, existing = check_reconcile(
                    labels, n, new_id, new_ad_ids, old_gid, in_touched, self.store.group_names
                )

            if not write:
                lap("reconcile")
                result = would_add(
                    self.store,
                    batch.status.to_numpy(), new_id, new_ad_ids, new_gid, merges, group_size, existing,
                    old, old_gid, left, right, probability, accepted, features, via_lsh, via_fields,
                    known, skipped, ad_ids,
                    {"within_pairs": len(within), "index_pairs": len(cross), "timings": timings},
                )  # fmt: skip
                lap("outputs")
                return result

            # ---- write (still inside the one transaction)
            final_gid_of_old = final_gids(old_gid, merges)
            packed = roots.result()
            reference_id, references = root_references(
                new_id,
                new_gid,
                packed.raw,
                old["id"].to_numpy(),
                final_gid_of_old,
                old["ref"].to_numpy(),
                old_raw,
            )
            writer.pack_references(packed, references)
            # Ads still stored on their own: against their most similar scored partner (another
            # posting of the employer, a near miss) where that is smaller.
            used = packed.uses_reference.copy()
            targets = set(reference_id[used].tolist())
            similar_id, similar = similar_references(
                n,
                left,
                right,
                probability,
                used,
                new_id,
                targets,
                packed.raw,
                old["id"].to_numpy(),
                old["ref"].to_numpy(),
                old_raw,
            )
            writer.pack_references(packed, similar)
            reference_id = np.where(used, reference_id, similar_id)
            lap("pack_rows")
            # Not part of the total: overlapped with the stages above.
            timings["rows_packed_in_background"] = round(packed.seconds, 3)
            timings["of_which_dictionary_training"] = round(packed.training_seconds, 3)
            for dict_id, data, ratio in packed.dictionaries:
                self.store.add_dictionary(dict_id, data, ratio)
            founders = new_gid[np.isin(new_gid, new_id)]
            founders = sorted_unique(founders)
            group_names = new_group_names(self.store, founders, new_id, new_ad_ids)
            self.store.insert_ads(
                pd.DataFrame(
                    {
                        "id": new_id,
                        "ad_id": new_ad_ids,
                        "gid": new_gid,
                        "ref": np.where(packed.uses_reference, reference_id, -1),
                        "row": packed.rows,
                    }
                )
            )
            self.store.insert_groups(pd.DataFrame({"gid": founders, "name": group_names}))
            if len(merges):
                self.store.merge_groups(merges, batch_no)
            key_doc, key_value = store_keys
            self.store.insert_keys(key_value, new_id[key_doc])
            if len(new_big_keys):
                hubs = new_big_keys["hub"].to_numpy()
                hubs = np.where(
                    new_big_keys["hub_is_new"].to_numpy(), new_id[np.maximum(hubs, 0) % max(n, 1)], hubs
                )
                self.store.insert_big_keys(new_big_keys["key"].to_numpy(), hubs)
            self.store.insert_boilerplate(batch_no, learnt)
            self.store.insert_block_sightings(
                new_sightings["key"].to_numpy(), new_sightings["value"].to_numpy()
            )
            self.store.insert_name_words(batch_no, new_names)
            lap("write")

            # ---- outputs
            gid_names = self.store.group_names(
                sorted_unique(np.concatenate([new_gid, merges["into_gid"].to_numpy()]))
            )
            final_gid = np.concatenate([new_gid, final_gid_of_old])
            all_ad_ids = np.concatenate([new_ad_ids, old["ad_id"].astype(str).to_numpy()])
            pairs = pd.DataFrame(
                {
                    "ad_id_a": all_ad_ids[left],
                    "ad_id_b": all_ad_ids[right],
                    "probability": probability,
                    "is_duplicate": accepted & (final_gid[left] == final_gid[right]),
                    "via_lsh": via_lsh,
                    "via_fields": via_fields,
                    "b_in_index": right >= n,
                }
            )
            groups, merge_table = output_tables(
                self.store,
                pd.DataFrame(
                    {
                        "ad_id": new_ad_ids,
                        "group_id": gid_names.reindex(new_gid).to_numpy(),
                        "group_size": group_size,
                        "status": batch.status.to_numpy(),
                        "existing_group": existing,
                    }
                ),
                known,
                skipped,
                ad_ids,
                merges,
            )
            info = {
                "new_ads": int(n),
                "skipped": len(skipped),
                "within_pairs": len(within),
                "index_pairs": len(cross),
                "index_ads_read": len(old),
                "rows_stored_against_reference": int(packed.uses_reference.sum()),
                "boilerplate_blocks_learnt": len(learnt),
                "ads_prepared_again": len(affected),
                "block_sightings_stored": len(new_sightings),
                "dictionaries_trained": len(packed.dictionaries),
                "duplicate_pairs": int(pairs["is_duplicate"].sum()),
                "joined_existing_groups": int(existing.sum()),
                "merges": len(merges),
                "extra_pairs_scored": int(report.extra_pairs_scored + inner_scored),
                "timings": timings,
                "model": getattr(model, "training_", {}).get("fingerprint", "unknown"),
                "added": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            self.store.log_batch(batch_no, info)
            _sleep_hook()
        return AddResult(pairs, groups, merge_table, skipped, info)

    # ------------------------------------------------------------------ other jobs
    def remove(self, ad_ids: list[str] | pd.Series) -> dict[str, Any]:
        """Remove ads (e.g. expired ones). Group ids of the remaining members do not change.

        Returns counts: `removed`, `not_found` (ids not in the index), `groups_emptied`, `keys_removed`.
        """
        wanted = pd.unique(pd.Series(list(ad_ids), dtype=object).astype(str))
        with self.store.write(self.timeout):
            found = self.store.find_ads(list(wanted))
            gone = found["id"].to_numpy()
            # Rows stored against a leaving row are stored on their own first.
            dependents = self.store.dependents(gone) if len(gone) else pd.DataFrame({"id": []})
            if len(dependents):
                packer = row_packer(self.store)
                rows, _, raw = read_rows(self.store, packer, dependents["id"].to_numpy())
                packed = packer.pack(None, train=False, raw=raw)
                self.store.update_rows(rows["id"].to_numpy(), packed.rows, [None] * len(rows))
            outcome = self.store.remove_ads(gone) if len(found) else {"keys_removed": 0, "groups_emptied": 0}
            _sleep_hook()
        return {"removed": len(found), "not_found": int(len(wanted) - len(found)), **outcome}

    def stats(self, top: int = 10) -> dict[str, Any]:
        """Ads, groups, size on disk and the largest groups."""
        with self.store.read():
            figures = self.store.stats(top)
            meta = self.store.meta()
        size = self.store.size_bytes()
        figures.update(
            {
                "size_bytes": size,
                "bytes_per_ad": round(size / figures["ads"]) if figures["ads"] else None,
                "sketch": meta.get("sketch"),
                "created": meta.get("created"),
            }
        )
        return figures

    def groups(self) -> pd.DataFrame:
        """Every ad in the index with its `group_id` and `group_size`."""
        with self.store.read():
            return self.store.all_groups()


def _sleep_hook() -> None:
    """For the crash tests: announce and sleep inside the open transaction (after all writes)."""
    seconds = os.environ.get(SLEEP_HOOK)
    if seconds:
        import sys

        print("index: writes done, commit pending", file=sys.stderr, flush=True)
        time.sleep(float(seconds))
