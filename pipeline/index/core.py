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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from jobdedup.features.pairs import PairInputs, build_pair_features
from jobdedup.features.shingle_sets import ShingleSets, sorted_union, sorted_unique
from jobdedup.pipeline.boilerplate import merge_block_sets
from jobdedup.pipeline.candidates import generate_candidates
from jobdedup.pipeline.employer_guard import split_mixed_employers
from jobdedup.pipeline.group import GroupReport, group_ads
from jobdedup.pipeline.index.blocks import block_sightings, learn_boilerplate
from jobdedup.pipeline.index.quick_check import check_index_pairs, check_reconcile
from jobdedup.pipeline.index.rows import RECENT, RowPacker, field_keys, lsh_keys
from jobdedup.pipeline.index.store import IndexFileError, IndexStore, open_store
from jobdedup.pipeline.io import validate_ads
from jobdedup.pipeline.prepare import name_vocabulary, prepare_batch
from jobdedup.pipeline.progress import Progress

FORMAT = "jobdedup.index"
FORMAT_VERSION = 3  # 2: compiled tokeniser (word, block and band hashes changed); 3: field keys by
# phonenumbers (E.164), the Public Suffix List and the lexbor HTML parser (issue #14)
SKETCH_PARAMETERS = ("shingle_size", "lsh_bands", "lsh_rows", "seed")
STATUS_ALREADY_INDEXED = "already_indexed"
# Test hook: seconds to sleep inside the write transaction, after the writes and before COMMIT.
SLEEP_HOOK = "JOBDEDUP_INDEX_SLEEP_BEFORE_COMMIT"


class IndexMismatchError(IndexFileError):
    """The model's sketch parameters differ from those the index was built with."""


@dataclass
class AddResult:
    """What `Index.add` did. Unpacks as `pairs, groups, merges`.

    Attributes:
        pairs: candidate pairs with a new ad (`ad_id_a` new, `ad_id_b` new or from the index),
            `probability`, `is_duplicate`, `via_lsh`, `via_fields`, `b_in_index`.
        groups: every input ad: `ad_id`, `group_id`, `group_size` (after the add, old members
            counted), `status` (`already_indexed` for skipped ads), `existing_group`.
        merges: old groups joined by this batch: `group_id` (kept, older), `merged_group_id`, `ads_moved`.
        skipped: ad_ids that were already in the index (nothing done for them).
        report: counts and timings.
    """

    pairs: pd.DataFrame
    groups: pd.DataFrame
    merges: pd.DataFrame
    skipped: list[str] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)

    def __iter__(self):
        return iter((self.pairs, self.groups, self.merges))


def _empty_pairs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "ad_id_a": pd.Series(dtype=object),
            "ad_id_b": pd.Series(dtype=object),
            "probability": pd.Series(dtype=float),
            "is_duplicate": pd.Series(dtype=bool),
            "via_lsh": pd.Series(dtype=bool),
            "via_fields": pd.Series(dtype=bool),
            "b_in_index": pd.Series(dtype=bool),
        }
    )


def _empty_merges() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "group_id": pd.Series(dtype=object),
            "merged_group_id": pd.Series(dtype=object),
            "ads_moved": pd.Series(dtype=np.int64),
        }
    )


def concat_inputs(first: PairInputs, second: PairInputs) -> PairInputs:
    """Rows of `first` then rows of `second`, as one `PairInputs`."""
    joined: dict[str, Any] = {}
    for part in dataclasses.fields(PairInputs):
        a, b = getattr(first, part.name), getattr(second, part.name)
        if isinstance(a, pd.DataFrame):
            joined[part.name] = pd.concat([a, b], ignore_index=True)
        elif isinstance(a, ShingleSets):
            joined[part.name] = ShingleSets.concatenate([a, b])
        else:
            joined[part.name] = np.concatenate([a, b])
    return PairInputs(**joined)


def replace_rows(inputs: PairInputs, rows: np.ndarray, replacement: PairInputs) -> PairInputs:
    """`inputs` with its rows `rows` (sorted) replaced by the rows of `replacement`, in order."""
    order = np.arange(len(inputs.words))
    order[rows] = len(order) + np.arange(len(rows))
    joined = concat_inputs(inputs, replacement)
    taken: dict[str, Any] = {}
    for part in dataclasses.fields(PairInputs):
        value = getattr(joined, part.name)
        if isinstance(value, pd.DataFrame):
            taken[part.name] = value.iloc[order].reset_index(drop=True)
        elif isinstance(value, ShingleSets):
            taken[part.name] = value.subset(order)
        else:
            taken[part.name] = value[order]
    return PairInputs(**taken)


def sketch_parameters(config: Any) -> dict[str, int]:
    """The config values that decide band keys (an index only takes models that agree on them)."""
    return {name: int(getattr(config, name)) for name in SKETCH_PARAMETERS}


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
    def _check_model(self, config: Any) -> dict[str, Any]:
        meta = self.store.meta()
        wanted = sketch_parameters(config)
        if "format" not in meta:
            meta = {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "sketch": wanted,
                "max_bucket_size": int(config.max_bucket_size),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            self.store.set_meta(meta)
            return meta
        if meta.get("format") != FORMAT:
            raise IndexFileError(f"{self.store.path}: not a jobdedup index")
        if meta.get("format_version") != FORMAT_VERSION:
            raise IndexFileError(
                f"{self.store.path}: index format version {meta.get('format_version')}, this jobdedup reads "
                f"{FORMAT_VERSION}; rebuild the index"
            )
        if meta["sketch"] != wanted:
            differ = ", ".join(
                f"{k} {meta['sketch'].get(k)} in the index vs {wanted[k]} in the model"
                for k in SKETCH_PARAMETERS
                if meta["sketch"].get(k) != wanted[k]
            )
            raise IndexMismatchError(
                f"{self.store.path}: the model's sketch parameters differ from the index's ({differ}); "
                "use a model with the index's parameters (and the same --seed) or build a new index"
            )
        return meta

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
        from jobdedup.pipeline.engine import MIN_LINK_THRESHOLD, employer_links

        cfg = model.config
        ads = validate_ads(ads, source="ads", max_description_chars=cfg.max_description_chars)
        progress = Progress(cfg.show_progress)
        timings: dict[str, float] = {}
        clock = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[name] = round(now - clock, 3)
            clock = now

        with self.store.write(self.timeout) if write else self.store.read():
            meta = self._check_model(cfg) if write else self._check_model_read(cfg)
            cap = int(meta.get("max_bucket_size", cfg.max_bucket_size))
            ad_ids = ads["ad_id"].astype(str).tolist()
            known = self.store.find_ads(ad_ids)
            skipped_mask = ads["ad_id"].astype(str).isin(set(known["ad_id"])).to_numpy()
            new_ads = ads[~skipped_mask].reset_index(drop=True)
            skipped = ads.loc[skipped_mask, "ad_id"].astype(str).tolist()
            lap("check")
            if new_ads.empty:
                groups = self._skipped_groups(known, skipped)
                return AddResult(
                    _empty_pairs(), groups, _empty_merges(), skipped, {"new_ads": 0, "skipped": len(skipped)}
                )
            # Compressing the new rows needs nothing from matching: it runs in a thread (zstd
            # releases the GIL) while the batch is prepared, matched, scored and grouped.
            if write:
                writer = self._packer(threads=1)  # one thread: the other core is busy matching
                writer.preload()
                packing = ThreadPoolExecutor(max_workers=1)
                roots = packing.submit(writer.pack_roots, new_ads, True, cfg.seed)
                packing.shutdown(wait=False)
            boilerplate = merge_block_sets(model.boilerplate_, self.store.boilerplate())
            # Texts are searched for the names of every indexed ad too (evidence of agency copies).
            new_names = name_vocabulary(new_ads)
            names = sorted_union(self.store.name_words(), new_names)
            with progress.stage("prepare", total=len(new_ads), unit="ads"):
                batch = prepare_batch(new_ads, cfg, boilerplate, names=names, keep_blocks=True)
            n = len(batch)
            lap("prepare")
            # Boilerplate counted over the index and the batch together: ads holding a block that
            # only the stored sightings make boilerplate are prepared again without it.
            seen = block_sightings(batch)
            learnt, affected, new_sightings = learn_boilerplate(
                batch, seen, self.store.block_sightings(seen["key"].to_numpy()), cfg
            )
            if len(affected):
                again = prepare_batch(
                    new_ads.iloc[affected], cfg, merge_block_sets(boilerplate, learnt), names=names
                )
                batch = dataclasses.replace(batch, inputs=replace_rows(batch.inputs, affected, again.inputs))
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
                cross, new_big_keys, store_keys = _cross_pairs(query, hits, cap)
            else:  # (a check stores no keys: only its pairs, without DataFrames)
                cross = check_index_pairs(self.store, (lsh_doc, lsh_key), (field_doc, field_key), cap)
            lap("lookup")

            # ---- read back the candidate index ads and the rest of their groups; prepare them
            candidate_ids = sorted_unique(cross["ad"].to_numpy())
            members = self.store.group_members(
                self.store.gids(candidate_ids)["gid"].to_numpy() if len(candidate_ids) else np.zeros(0)
            )
            old_ids = sorted_unique(np.concatenate([candidate_ids, members["id"].to_numpy()]))
            packer = self._packer()
            old, old_ads, old_raw = self._read_rows(packer, old_ids)
            old_ads.insert(0, "ad_id", old["ad_id"].to_numpy())
            lap("read_back")
            if len(old_ads):
                old_batch = prepare_batch(old_ads, cfg, merge_block_sets(boilerplate, learnt), names=names)
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

            def score(a: np.ndarray, b: np.ndarray) -> np.ndarray:
                if len(a) == 0:
                    return np.zeros(0)
                return model.predict_proba(build_pair_features(inputs, a, b))[:, 1]

            with progress.stage("score", total=len(left), unit="pairs"):
                features = build_pair_features(inputs, left, right)
                probability = model.predict_proba(features)[:, 1] if len(left) else np.zeros(0)
            accepted = probability >= model.threshold_
            lap("score")

            # ---- group: new ads + whole old groups they touch, anti-chaining guard included
            touched = sorted_unique(old_gid[right[accepted & (right >= n)] - n])
            in_touched = np.isin(old_gid, touched)
            inner_left, inner_right = _inner_pairs(old_gid, in_touched)
            inner_left, inner_right = inner_left + n, inner_right + n
            inner_features = build_pair_features(inputs, inner_left, inner_right) if len(inner_left) else None
            inner_probability = (
                model.predict_proba(inner_features)[:, 1] if inner_features is not None else np.zeros(0)
            )
            edges = pd.DataFrame(
                {
                    "i": np.concatenate([left[accepted], inner_left]),
                    "j": np.concatenate([right[accepted], inner_right]),
                    "probability": np.concatenate([probability[accepted], inner_probability]),
                }
            )
            report = GroupReport()
            labels = group_ads(
                len(inputs.words),
                edges,
                score,
                max(model.threshold_, MIN_LINK_THRESHOLD),
                cfg.max_group_size_exact,
                report,
            )
            # The employer guard sees what it sees in `dedup`: the accepted pairs (an old group's
            # inner pairs only where accepted) and the evidence links among them, old ones included.
            inner_accepted = inner_probability >= model.threshold_
            guard_edges = pd.concat(
                [edges.iloc[: int(accepted.sum())], edges.iloc[int(accepted.sum()) :][inner_accepted]],
                ignore_index=True,
            )
            guard_features = features[accepted]
            if inner_features is not None:
                guard_features = pd.concat([guard_features, inner_features[inner_accepted]], ignore_index=True)
            labels, report.employer_splits = split_mixed_employers(
                labels, inputs.fields["company"], guard_edges, employer_links(guard_edges, guard_features)
            )
            lap("group")

            # ---- reconcile with the stable old group ids
            batch_no = self.store.next_batch()
            first_id = self.store.next_id()
            new_id = np.arange(first_id, first_id + n, dtype=np.int64)
            new_ad_ids = new_ads["ad_id"].astype(str).to_numpy()
            if write:
                new_gid, merges, group_size, existing = self._reconcile(
                    labels, n, new_id, new_ad_ids, old_gid, in_touched, old["id"].to_numpy()
                )
            else:
                new_gid, merges, group_size, existing = check_reconcile(
                    labels, n, new_id, new_ad_ids, old_gid, in_touched, self.store.group_names
                )

            if not write:
                lap("reconcile")
                return self._would_add(
                    batch.status.to_numpy(), new_id, new_ad_ids, new_gid, merges, group_size, existing,
                    old, old_gid, left, right, probability, accepted, features, via_lsh, via_fields,
                    known, skipped, ad_ids,
                    {"within_pairs": len(within), "index_pairs": len(cross), "timings": timings},
                )  # fmt: skip

            # ---- write (still inside the one transaction)
            final_gid_of_old = _final_gids(old_gid, merges)
            packed = roots.result()
            reference_id, references = _references(
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
            similar_id, similar = _similar_references(
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
            names = self._new_group_names(founders, new_id, new_ad_ids)
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
            self.store.insert_groups(pd.DataFrame({"gid": founders, "name": names}))
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
            groups, merge_table = self._output_tables(
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
                "extra_pairs_scored": int(report.extra_pairs_scored + len(inner_left)),
                "timings": timings,
                "model": getattr(model, "training_", {}).get("fingerprint", "unknown"),
                "added": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            self.store.log_batch(batch_no, info)
            _sleep_hook()
        return AddResult(pairs, groups, merge_table, skipped, info)

    def _check_model_read(self, config: Any) -> dict[str, Any]:
        """`_check_model` for a read: an index without meta yet (nothing added) takes any model."""
        if "format" not in self.store.meta():
            return {"max_bucket_size": int(config.max_bucket_size)}
        return self._check_model(config)

    def _would_add(
        self,
        status: np.ndarray,
        new_id: np.ndarray,
        new_ad_ids: np.ndarray,
        new_gid: np.ndarray,
        merges: pd.DataFrame,
        group_size: np.ndarray,
        existing: np.ndarray,
        old: pd.DataFrame,
        old_gid: np.ndarray,
        left: np.ndarray,
        right: np.ndarray,
        probability: np.ndarray,
        accepted: np.ndarray,
        features: pd.DataFrame,
        via_lsh: np.ndarray,
        via_fields: np.ndarray,
        known: pd.DataFrame,
        skipped: list[str],
        ad_ids: list[str],
        info: dict[str, Any],
    ) -> AddResult:
        """`check`'s outputs: `add`'s, built without writing (new groups named as `add` would name them)."""
        from jobdedup.models.dup_types import assign_dup_types

        n = len(new_id)
        final_gid_of_old = _final_gids(old_gid, merges)
        founders = sorted_unique(new_gid[np.isin(new_gid, new_id)])
        old_gids = sorted_unique(np.concatenate([new_gid[~np.isin(new_gid, new_id)], merges["into_gid"].to_numpy()]))
        gid_names = pd.concat(
            [
                self.store.group_names(old_gids) if len(old_gids) else pd.Series(dtype=object),
                pd.Series(self._new_group_names(founders, new_id, new_ad_ids), index=founders, dtype=object),
            ]
        )
        final_gid = np.concatenate([new_gid, final_gid_of_old])
        all_ad_ids = np.concatenate([new_ad_ids, old["ad_id"].astype(str).to_numpy()])
        is_duplicate = accepted & (final_gid[left] == final_gid[right])
        dup_type = np.full(len(left), None, dtype=object)
        dup_type[is_duplicate] = assign_dup_types(features[is_duplicate].reset_index(drop=True))
        pairs = pd.DataFrame(
            {
                "ad_id_a": all_ad_ids[left],
                "ad_id_b": all_ad_ids[right],
                "probability": probability,
                "is_duplicate": is_duplicate,
                "via_lsh": via_lsh,
                "via_fields": via_fields,
                "b_in_index": right >= n,
                "dup_type": pd.array(dup_type, dtype="string"),
            }
        )
        groups, merge_table = self._output_tables(
            pd.DataFrame(
                {
                    "ad_id": new_ad_ids,
                    "group_id": gid_names.reindex(new_gid).to_numpy(),
                    "group_size": group_size,
                    "status": status,
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
            **info,
            "index_ads_read": len(old),
            "duplicate_pairs": int(is_duplicate.sum()),
            "joined_existing_groups": int(existing.sum()),
            "merges": len(merges),
        }
        return AddResult(pairs, groups, merge_table, skipped, info)

    def _packer(self, threads: int = 2) -> RowPacker:
        recent, next_id = self.store.recent_dictionaries(RECENT)
        return RowPacker(self.store.dictionary, recent, next_id, threads=threads)

    def _read_rows(
        self, packer: RowPacker, ids: np.ndarray
    ) -> tuple[pd.DataFrame, pd.DataFrame, list[bytes]]:
        """Stored rows of `ids` (id, ad_id, gid, ref, row), their columns and raw bytes.

        A row stored against another (`ref`) needs that one decoded first: the first row of its
        group (read anyway when whole groups are read) or a similar ad's, read here if missing.
        """
        rows = self.store.rows(ids)
        refs = rows["ref"].to_numpy()
        missing = np.setdiff1d(refs[refs >= 0], rows["id"].to_numpy())
        every = pd.concat([rows, self.store.rows(missing)], ignore_index=True) if len(missing) else rows
        at = pd.Index(every["id"].to_numpy()).get_indexer(every["ref"].to_numpy())
        references = [None if r < 0 else r for r in at.tolist()]
        columns, raw = packer.unpack(every["row"].tolist(), references)
        n = len(rows)
        return rows, columns.iloc[:n].reset_index(drop=True), raw[:n]

    def _output_tables(
        self,
        groups: pd.DataFrame,
        known: pd.DataFrame,
        skipped: list[str],
        ad_ids: list[str],
        merges: pd.DataFrame,
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The groups table of a batch (skipped ads added, every ad in input order) and its merge
        table, as `add` and `check` return them."""
        if skipped:
            groups = pd.concat([groups, self._skipped_groups(known, skipped)], ignore_index=True)
            order = pd.Series(np.arange(len(ad_ids)), index=ad_ids)
            groups = groups.iloc[np.argsort(order.reindex(groups["ad_id"]).to_numpy(), kind="stable")]
            groups = groups.reset_index(drop=True)
        merge_table = pd.DataFrame(
            {
                "group_id": merges["into_name"].to_numpy(dtype=object),
                "merged_group_id": merges["name"].to_numpy(dtype=object),
                "ads_moved": merges["ads_moved"].to_numpy(dtype=np.int64),
            }
        )
        return groups, merge_table

    def _skipped_groups(self, known: pd.DataFrame, skipped: list[str]) -> pd.DataFrame:
        rows = known.set_index("ad_id").reindex(skipped)
        gids = rows["gid"].to_numpy(dtype=np.int64)
        names = self.store.group_names(gids)
        sizes = self.store.group_sizes(gids)
        return pd.DataFrame(
            {
                "ad_id": skipped,
                "group_id": names.reindex(gids).to_numpy(),
                "group_size": sizes.reindex(gids).to_numpy(dtype=np.int64),
                "status": STATUS_ALREADY_INDEXED,
                "existing_group": True,
            }
        )

    def _reconcile(
        self,
        labels: np.ndarray,
        n: int,
        new_id: np.ndarray,
        new_ad_ids: np.ndarray,
        old_gid: np.ndarray,
        in_touched: np.ndarray,
        old_id: np.ndarray,
    ) -> tuple[np.ndarray, pd.DataFrame, np.ndarray, np.ndarray]:
        """New ads' gids, the merges, new ads' final group sizes and whether they joined an old group."""
        old_labels = labels[n:]
        touched_labels = old_labels[in_touched]
        touched_gids = old_gid[in_touched]
        # An old group stays whole: it belongs to the cluster holding most of its members (ties: the
        # cluster with new ads, then the smaller label). Old groups sharing a cluster are merged.
        new_labels = labels[:n]
        with_new = np.isin(touched_labels, new_labels)
        votes = pd.DataFrame({"gid": touched_gids, "label": touched_labels, "with_new": with_new})
        votes = votes.groupby(["gid", "label"], as_index=False).agg(
            n=("with_new", "size"), with_new=("with_new", "first")
        )
        votes = votes.sort_values(["gid", "n", "with_new", "label"], ascending=[True, False, False, True])
        main = votes.drop_duplicates("gid")
        touched_gids, touched_labels = main["gid"].to_numpy(), main["label"].to_numpy()
        gid_codes, gid_values = pd.factorize(touched_gids)
        label_codes, label_values = pd.factorize(touched_labels)
        k = len(gid_values)
        survivor = {}
        if k:
            graph = coo_matrix(
                (np.ones(len(gid_codes)), (gid_codes, k + label_codes)), shape=(k + len(label_values),) * 2
            )
            component = connected_components(graph, directed=False)[1][:k]
            oldest = pd.Series(gid_values).groupby(component).transform("min").to_numpy()
            survivor = dict(zip(gid_values.tolist(), oldest.tolist()))
        cluster_gid = pd.Series(touched_gids, index=touched_labels).groupby(level=0).min()
        cluster_gid = cluster_gid.map(lambda g: survivor[g])
        new_labels = labels[:n]
        joined = cluster_gid.reindex(new_labels).to_numpy()
        existing = ~np.isnan(joined)
        new_gid = np.empty(n, dtype=np.int64)
        new_gid[existing] = joined[existing].astype(np.int64)
        # New groups: the founding ad is the member with the smallest ad_id.
        fresh = np.flatnonzero(~existing)
        if len(fresh):
            frame = pd.DataFrame(
                {"label": new_labels[fresh], "ad_id": new_ad_ids[fresh], "id": new_id[fresh]}
            )
            founder = frame.sort_values(["label", "ad_id"]).groupby("label")["id"].first()
            new_gid[fresh] = founder.reindex(frame["label"]).to_numpy()
        # Merges and sizes.
        old_sizes = pd.Series(old_gid[in_touched]).value_counts()
        absorbed = [(g, s) for g, s in survivor.items() if g != s]
        names = self.store.group_names(np.asarray([x for pair in absorbed for x in pair], dtype=np.int64))
        merges = pd.DataFrame(
            {
                "gid": [g for g, _ in absorbed],
                "into_gid": [s for _, s in absorbed],
                "name": [names.get(g) for g, _ in absorbed],
                "into_name": [names.get(s) for _, s in absorbed],
                "ads_moved": [int(old_sizes.get(g, 0)) for g, _ in absorbed],
            },
            columns=["gid", "into_gid", "name", "into_name", "ads_moved"],
        ).astype({"gid": np.int64, "into_gid": np.int64, "ads_moved": np.int64})
        final_old = pd.Series(old_gid[in_touched]).map(lambda g: survivor.get(g, g))
        total = pd.concat([final_old, pd.Series(new_gid)]).value_counts()
        group_size = total.reindex(new_gid).to_numpy(dtype=np.int64)
        return new_gid, merges, group_size, existing

    def _new_group_names(self, founders: np.ndarray, new_id: np.ndarray, new_ad_ids: np.ndarray) -> list[str]:
        """A new group is named after its founding ad; a name still held by an old group gets a suffix."""
        position = pd.Series(np.arange(len(new_id)), index=new_id)
        names = new_ad_ids[position.reindex(founders).to_numpy()].tolist()
        taken = self.store.names_taken(names)
        return [f"{name}#{gid}" if name in taken else name for name, gid in zip(names, founders.tolist())]

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
                packer = self._packer()
                rows, _, raw = self._read_rows(packer, dependents["id"].to_numpy())
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


def _cross_pairs(
    query: pd.DataFrame, hits: pd.DataFrame, cap: int
) -> tuple[pd.DataFrame, pd.DataFrame, tuple[np.ndarray, np.ndarray]]:
    """Batch-vs-index pairs from key hits, with batch mode's bucket cap.

    A key whose index bucket plus the batch's ads exceed `cap` becomes a *big* key: new ads pair
    only with its hub (the bucket's oldest ad) and their own keys are not stored for it.
    Returns the pairs (`doc`, `ad`, `via_lsh`, `via_fields`), the newly big keys (`key`, `hub`,
    `hub_is_new`) and the (doc, key) rows to store.
    """
    small = hits[~hits["big"]]
    # (value_counts over distinct rows: the same counts as groupby-nunique, several times faster)
    index_count = small[["key", "ad"]].drop_duplicates()["key"].value_counts()
    batch_count = query["key"].value_counts()  # query holds each (key, doc) once
    total = batch_count.add(index_count, fill_value=0)
    already_big = set(hits.loc[hits["big"], "key"].tolist())
    becoming = total[(total > cap)].index.difference(pd.Index(list(already_big), dtype=np.int64))
    becoming_set = set(becoming.tolist())
    keep = ~small["key"].isin(becoming_set)
    star_hubs = small[~keep].groupby("key")["ad"].min()
    star = query[query["key"].isin(set(star_hubs.index.tolist()))].copy()
    star["ad"] = star_hubs.reindex(star["key"]).to_numpy()
    parts = [
        small.loc[keep, ["doc", "ad", "lsh"]],
        hits.loc[hits["big"], ["doc", "ad", "lsh"]],
        star[["doc", "ad", "lsh"]],
    ]
    every = pd.concat(parts, ignore_index=True)
    every["fields"] = ~every["lsh"]
    cross = (
        every.groupby(["doc", "ad"], sort=True)
        .agg(via_lsh=("lsh", "any"), via_fields=("fields", "any"))
        .reset_index()
    )
    # Newly big keys: the hub is the oldest index ad holding the key, or the batch's first ad with it.
    first_doc = query[query["key"].isin(becoming_set)].groupby("key")["doc"].min()
    big = pd.DataFrame({"key": np.asarray(sorted(becoming_set), dtype=np.int64)})
    hub_old = star_hubs.reindex(big["key"]).to_numpy()
    big["hub_is_new"] = np.isnan(hub_old)
    big["hub"] = np.where(
        big["hub_is_new"], first_doc.reindex(big["key"]).to_numpy(), np.nan_to_num(hub_old)
    ).astype(np.int64)
    stored = query[~query["key"].isin(already_big | becoming_set)]
    # A newly big key whose hub is a batch ad keeps that one ad's key row.
    hub_rows = query.merge(
        big.loc[big["hub_is_new"], ["key", "hub"]], left_on=["key", "doc"], right_on=["key", "hub"]
    )
    stored = pd.concat([stored, hub_rows[["key", "doc", "lsh"]]], ignore_index=True)
    return cross, big, (stored["doc"].to_numpy(dtype=np.int64), stored["key"].to_numpy(dtype=np.int64))


def _inner_pairs(gids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All pairs (positions into `gids`) of members of the same group, among positions where `mask`."""
    positions = np.flatnonzero(mask)
    order = positions[np.argsort(gids[positions], kind="stable")]
    sorted_gids = gids[order]
    starts = np.flatnonzero(np.r_[True, sorted_gids[1:] != sorted_gids[:-1]])
    sizes = np.diff(np.r_[starts, len(order)])
    lefts, rights = [], []
    for size in sorted_unique(sizes[sizes >= 2]):
        block_starts = starts[sizes == size]
        a, b = np.triu_indices(int(size), 1)
        lefts.append(order[(block_starts[:, None] + a[None, :]).ravel()])
        rights.append(order[(block_starts[:, None] + b[None, :]).ravel()])
    if not lefts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(lefts).astype(np.int64), np.concatenate(rights).astype(np.int64)


def _references(
    new_id: np.ndarray,
    new_gid: np.ndarray,
    new_raw: list[bytes],
    old_id: np.ndarray,
    old_final_gid: np.ndarray,
    old_ref: np.ndarray,
    old_raw: list[bytes],
) -> tuple[np.ndarray, list[bytes | None]]:
    """Per new ad, the root row of its group to store it against: (its id or -1, its raw row or None).

    The root of an old group is its oldest member stored on its own (every member of a group a new
    ad joins was read back); in a new group it is the founding ad, itself stored on its own.
    """
    roots = (
        pd.Series(np.arange(len(old_id)), index=old_id)[old_ref < 0]
        .groupby(old_final_gid[old_ref < 0])
        .first()
    )
    first = int(new_id[0]) if len(new_id) else 0
    reference_id = np.full(len(new_id), -1, dtype=np.int64)
    references: list[bytes | None] = [None] * len(new_id)
    old_position = roots.reindex(new_gid).to_numpy()
    for i, (gid, position) in enumerate(zip(new_gid.tolist(), old_position.tolist())):
        if not np.isnan(position):
            reference_id[i], references[i] = old_id[int(position)], old_raw[int(position)]
        elif gid != new_id[i] and gid >= first:
            reference_id[i], references[i] = gid, new_raw[gid - first]
    return reference_id, references


def _similar_references(
    n: int,
    left: np.ndarray,
    right: np.ndarray,
    probability: np.ndarray,
    used: np.ndarray,
    new_id: np.ndarray,
    targets: set[int],
    new_raw: list[bytes],
    old_id: np.ndarray,
    old_ref: np.ndarray,
    old_raw: list[bytes],
) -> tuple[np.ndarray, list[bytes | None]]:
    """Per new ad stored on its own, its most probable scored partner stored on its own (or -1/None).

    A partner must stay a root: an old ad with no reference, or an earlier new ad that neither uses
    a reference nor gets one here. New ads already referred to by their group (`targets`) keep
    their own storage, so every reference stays one step deep.
    """
    pairs = pd.DataFrame(
        {
            "i": np.concatenate([left, right[right < n]]),
            "j": np.concatenate([right, left[right < n]]),
            "p": np.concatenate([probability, probability[right < n]]),
        }
    )
    pairs = pairs[(pairs["i"] < n) & ((pairs["j"] >= n) | (pairs["j"] < pairs["i"]))]
    pairs = pairs[
        ~used[pairs["i"].to_numpy()] & ~pd.Series(new_id).isin(targets).to_numpy()[pairs["i"].to_numpy()]
    ]
    old_root = np.r_[old_ref < 0, False]  # (a sentinel, for new partners and no old ads)
    j = pairs["j"].to_numpy()
    pairs = pairs[(j < n) | old_root[np.where(j >= n, j - n, len(old_ref))]]
    pairs = pairs.sort_values(["i", "p"], ascending=[True, False])
    reference_id = np.full(n, -1, dtype=np.int64)
    references: list[bytes | None] = [None] * n
    delta = used.copy()
    for i, partner in zip(pairs["i"].tolist(), pairs["j"].tolist()):
        if references[i] is not None or (partner < n and delta[partner]):
            continue
        if partner < n:
            reference_id[i], references[i] = new_id[partner], new_raw[partner]
        else:
            reference_id[i], references[i] = old_id[partner - n], old_raw[partner - n]
        delta[i] = True
    return reference_id, references


def _final_gids(old_gid: np.ndarray, merges: pd.DataFrame) -> np.ndarray:
    if not len(merges):
        return old_gid
    mapping = dict(zip(merges["gid"].tolist(), merges["into_gid"].tolist()))
    return np.asarray([mapping.get(g, g) for g in old_gid.tolist()], dtype=np.int64)


def _sleep_hook() -> None:
    """For the crash tests: announce and sleep inside the open transaction (after all writes)."""
    seconds = os.environ.get(SLEEP_HOOK)
    if seconds:
        import sys

        print("index: writes done, commit pending", file=sys.stderr, flush=True)
        time.sleep(float(seconds))
