"""The plain way, for comparison: MinHash LSH on the full text and a Jaccard-estimate threshold.

No boilerplate removal, no field blocking, no classifier, plain union-find. The threshold is the
best one *for the evaluated labels themselves* (an optimistic baseline).

Example:
    >>> # figures = minhash_threshold_baseline(batch, labels, Config())
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from jobdedup.pipeline.candidates import CandidateReport, lsh_candidates
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.engine import DedupResult, _group_ids, evaluate_result
from jobdedup.pipeline.group import GroupReport
from jobdedup.pipeline.io import Labels
from jobdedup.pipeline.prepare import PreparedBatch
from jobdedup.pipeline.sketch import minhash_signatures

THRESHOLDS = np.round(np.arange(0.05, 1.0, 0.05), 2)


def minhash_threshold_baseline(batch: PreparedBatch, labels: Labels, config: Config) -> dict[str, Any]:
    """Figures of the plain way at its best threshold (key `threshold`)."""
    signatures = minhash_signatures(batch.inputs.full, config.num_perm, config.seed)
    pairs, _ = lsh_candidates(signatures, config.lsh_bands, config.lsh_rows, config.max_bucket_size)
    pairs = np.unique(pairs[pairs[:, 0] != pairs[:, 1]], axis=0)
    left, right = pairs[:, 0], pairs[:, 1]
    estimate = (signatures[left] == signatures[right]).mean(axis=1) if len(pairs) else np.zeros(0)
    ad_ids = batch.ads["ad_id"].astype(str).to_numpy()
    best: dict[str, Any] | None = None
    for threshold in THRESHOLDS:
        keep = estimate >= threshold
        graph = coo_matrix((np.ones(keep.sum()), (left[keep], right[keep])), shape=(len(batch), len(batch)))
        components = connected_components(graph, directed=False)[1]
        result = DedupResult(
            pairs=pd.DataFrame(
                {
                    "ad_id_a": ad_ids[left],
                    "ad_id_b": ad_ids[right],
                    "probability": estimate,
                    "is_duplicate": keep,
                }
            ),
            groups=pd.DataFrame({"ad_id": ad_ids, "group_id": _group_ids(ad_ids, components)}),
            candidates=CandidateReport(total_pairs=len(pairs)),
            grouping=GroupReport(),
            batch=batch,
        )
        figures = evaluate_result(result, labels, float(threshold))
        if best is None or figures["f1"] > best["f1"]:
            best = figures
    assert best is not None
    return best
