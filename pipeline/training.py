"""Stage 5 (training): the table of labelled pairs a classifier learns from.

Each labelled set of ads is prepared on its own (its boilerplate learnt from itself), its candidate
pairs generated as at run time, and its training pairs (labelled pairs and the candidates whose
label the labels imply) turned into pair features; the sets' tables are pooled, each set's pairs
weighted as told. `Deduplicator.fit` trains on one such table; `benchmarks.ablation` trains one
model per left-out corpus on the rows of one table (`TrainingTable.without_corpus`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from jobdedup.features.pairs import build_pair_features
from jobdedup.pipeline.boilerplate import merge_block_sets
from jobdedup.pipeline.candidates import batch_candidates
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.io import Labels
from jobdedup.pipeline.prepare import prepare_batch
from jobdedup.pipeline.progress import Progress


@dataclass(frozen=True)
class TrainingTable:
    """Pooled training pairs of several labelled sets.

    Attributes:
        features: pair features (`features.pairs.FEATURES`), one row per pair.
        target: 1 for one vacancy, 0 for two.
        weight: each pair's training weight (its set's).
        groups: vacancy group of each pair (folds never split a vacancy).
        corpora: per pair, the corpora of its two ads ("a|b"; "a" where both are of one corpus).
        boilerplate: the boilerplate blocks learnt from all the sets.
    """

    features: pd.DataFrame
    target: np.ndarray
    weight: np.ndarray
    groups: np.ndarray
    corpora: np.ndarray
    boilerplate: np.ndarray

    def without_corpus(self, corpus: str) -> TrainingTable:
        """The pairs that hold no ad of `corpus` (boilerplate kept as learnt from every set)."""
        keep = np.array([corpus not in names.split("|") for names in self.corpora], dtype=bool)
        return TrainingTable(
            self.features[keep].reset_index(drop=True),
            self.target[keep],
            self.weight[keep],
            pd.factorize(self.groups[keep])[0],
            self.corpora[keep],
            self.boilerplate,
        )


def ad_corpora(ads: pd.DataFrame) -> np.ndarray:
    """Each ad's corpus: its `corpus` column, else the part of its `ad_id` before the first colon."""
    if "corpus" in ads.columns:
        return ads["corpus"].astype(str).to_numpy()
    return ads["ad_id"].astype(str).str.split(":").str[0].to_numpy()


def pair_corpora(corpus: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Per pair, its ads' corpus ("a"), or both corpora ("a|b") when they differ.

    Example:
        >>> pair_corpora(np.array(["x", "x", "y"]), np.array([0, 0]), np.array([1, 2])).tolist()
        ['x', 'x|y']
    """
    corpus = corpus.astype(str)
    both = np.char.add(np.char.add(corpus[left], "|"), corpus[right])
    return np.where(corpus[left] == corpus[right], corpus[left], both)


def training_table(
    config: Config,
    ads_sets: Sequence[pd.DataFrame],
    label_sets: Sequence[Labels],
    weights: Sequence[float],
    progress: Progress,
) -> TrainingTable:
    """The pooled training pairs of every (ads, labels) set (see the module docstring)."""
    no_boilerplate = np.zeros(0, dtype=np.uint64)
    features, target, weight, groups, corpora, boilerplate = [], [], [], [], [], []
    for number, (ads, labels) in enumerate(zip(ads_sets, label_sets)):
        with progress.stage("prepare", total=len(ads), unit="ads"):
            batch = prepare_batch(ads, config, no_boilerplate)
        boilerplate.append(batch.batch_boilerplate)
        with progress.stage("candidates", unit="pairs") as bar:
            candidates, _ = batch_candidates(batch.inputs, config)
            bar.update(len(candidates))
        left, right, set_target, set_groups = _training_pairs(batch.ads, candidates, labels)
        with progress.stage("features", total=len(left), unit="pairs"):
            features.append(build_pair_features(batch.inputs, left, right))
        corpora.append(pair_corpora(ad_corpora(batch.ads), left, right))
        target.append(set_target)
        weight.append(np.full(len(set_target), weights[number]))
        groups.append(np.char.add(f"{number}:", set_groups.astype(str)))
    return TrainingTable(
        pd.concat(features, ignore_index=True),
        np.concatenate(target),
        np.concatenate(weight),
        pd.factorize(np.concatenate(groups))[0],
        np.concatenate(corpora).astype(object),
        merge_block_sets(*boilerplate),
    )


def _vacancy_of(ads: pd.DataFrame, labels: Labels) -> pd.Series:
    """A vacancy key per ad: its label group, or its connected component of labelled duplicates."""
    ids = ads["ad_id"].astype(str)
    if labels.groups is not None:
        groups = labels.groups.set_index("ad_id")["group_id"].astype(str)
        return ids.map(groups).fillna("\x00" + ids)
    positives = labels.pairs[labels.pairs["label"] == 1]
    position = pd.Series(np.arange(len(ids)), index=ids.to_numpy())
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    a = position.reindex(positives["ad_id_a"]).to_numpy()
    b = position.reindex(positives["ad_id_b"]).to_numpy()
    ok = ~(np.isnan(a) | np.isnan(b))
    graph = coo_matrix(
        (np.ones(ok.sum()), (a[ok].astype(int), b[ok].astype(int))), shape=(len(ids), len(ids))
    )
    return pd.Series(connected_components(graph, directed=False)[1].astype(str), index=ads.index)


def _training_pairs(
    ads: pd.DataFrame, candidates: pd.DataFrame, labels: Labels
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Training pairs = labelled pairs ∪ candidates whose label is known; with their vacancy groups."""
    n = len(ads)
    position = pd.Series(np.arange(n), index=ads["ad_id"].astype(str).to_numpy())
    vacancy = _vacancy_of(ads, labels).to_numpy()
    a = position.reindex(labels.pairs["ad_id_a"].astype(str)).to_numpy()
    b = position.reindex(labels.pairs["ad_id_b"].astype(str)).to_numpy()
    known = ~(np.isnan(a) | np.isnan(b))
    lab_left = np.minimum(a[known], b[known]).astype(np.int64)
    lab_right = np.maximum(a[known], b[known]).astype(np.int64)
    lab_target = labels.pairs["label"].to_numpy()[known].astype(int)
    cand_left = candidates["i"].to_numpy()
    cand_right = candidates["j"].to_numpy()
    if labels.all_pairs_known:
        assert labels.groups is not None  # (the groups form: every pair known)
        labelled_ads = np.zeros(n, dtype=bool)
        labelled_ads[position.reindex(labels.groups["ad_id"].astype(str)).dropna().astype(int).to_numpy()] = (
            True
        )
        usable = labelled_ads[cand_left] & labelled_ads[cand_right]
        cand_left, cand_right = cand_left[usable], cand_right[usable]
        cand_target = (vacancy[cand_left] == vacancy[cand_right]).astype(int)
    else:
        codes = pd.Series(lab_target, index=lab_left * n + lab_right)
        cand_codes = cand_left * n + cand_right
        in_labels = np.isin(cand_codes, codes.index.to_numpy())
        cand_left, cand_right = cand_left[in_labels], cand_right[in_labels]
        cand_target = codes.reindex(cand_codes[in_labels]).to_numpy().astype(int)
    # Explicitly labelled pairs first, so that they win over labels implied by groups.
    left = np.concatenate([lab_left, cand_left])
    right = np.concatenate([lab_right, cand_right])
    target = np.concatenate([lab_target, cand_target])
    _, first = np.unique(left * n + right, return_index=True)
    first = np.sort(first)
    left, right, target = left[first], right[first], target[first]
    return left, right, target, pd.factorize(vacancy[left])[0]
