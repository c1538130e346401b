"""The Python API: a trainable deduplicator over pandas DataFrames.

Example:
    >>> # model = Deduplicator().fit(ads, labels)
    >>> # pairs, groups = model.dedup(new_ads)
    >>> # figures = model.evaluate(test_ads, test_labels)
    >>> # model.save("model.json"); model = Deduplicator.load("model.json")
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
import pyarrow as pa

from jobdedup.features.pairs import MODEL_FEATURES, build_pair_features, monotone_constraints
from jobdedup.models.classifier import PairClassifier
from jobdedup.models.dup_types import assign_dup_types, dup_types_of_pairs, per_type_metrics
from jobdedup.models.metrics import bcubed, estimated_precision, pair_metrics, reduction_ratio
from jobdedup.models.persistence import load_model_file, save_model_file
from jobdedup.models.policy import DecisionPolicy
from jobdedup.models.rules import apply_rules, rule_names
from jobdedup.pipeline.candidates import CandidateReport, batch_candidates
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.decide import decide_groups, employer_links
from jobdedup.pipeline.errors import InputWarning
from jobdedup.pipeline.group import GroupReport
from jobdedup.pipeline.io import ADS_COLUMNS, Labels
from jobdedup.pipeline.prepare import PreparedBatch, prepare_batch
from jobdedup.pipeline.progress import Progress
from jobdedup.pipeline.training import TrainingTable, training_table

MODEL_KIND = "jobdedup.Deduplicator"
_VERSIONED_PACKAGES = ("jobdedup", "lightgbm", "numpy", "pandas", "datasketch", "xxhash", "rapidfuzz")


SCORE_BLOCK = 1_000_000
"""Candidate pairs scored at a time by `Deduplicator.run`: their feature table takes ~300 MB."""


@dataclass(frozen=True)
class ScoredPairs:
    """The score step's results: per pair its probability and the rule that holds (None where
    none), and the feature table of the accepted pairs, in pair order."""

    probability: np.ndarray
    rules: np.ndarray
    accepted_features: pd.DataFrame


@dataclass
class DedupResult:
    """Everything one dedup run produced, for reports and evaluation."""

    pairs: pd.DataFrame
    groups: pd.DataFrame
    candidates: CandidateReport
    grouping: GroupReport
    batch: PreparedBatch = field(repr=False)
    timings: dict[str, float] = field(default_factory=dict)
    """Wall seconds per stage (prepare, candidates, score, group)."""


def _versions() -> dict[str, str]:
    found = {}
    for name in _VERSIONED_PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "unknown"
    return found


def _fingerprint(ads_sets: list[pd.DataFrame], label_sets: list[Labels]) -> str:
    """SHA-256 over the training ads (ids, texts) and labels, to tell which data made a model."""
    digest = hashlib.sha256()
    for ads, labels in zip(ads_sets, label_sets):
        for column in (ads["ad_id"], ads["description"].fillna("")):
            digest.update(pd.util.hash_pandas_object(column.astype(str), index=False).to_numpy().tobytes())
        digest.update(pd.util.hash_pandas_object(labels.pairs.astype(str), index=False).to_numpy().tobytes())
    return digest.hexdigest()


class Deduplicator:
    """Finds duplicate job ads: MinHash LSH + field blocking, pair features, LightGBM, grouping.

    Args:
        config: pipeline parameters (`pipeline.config.Config`).
    """

    versions_: dict[str, Any]
    """Of a loaded model: the package versions it was saved with (its file's `versions`)."""

    def __init__(self, config: Config | None = None, policy: DecisionPolicy | None = None) -> None:
        self.config = config or Config()
        self.policy = policy or DecisionPolicy()

    # ----------------------------------------------------------------- training
    def fit(
        self,
        ads: pd.DataFrame | Sequence[pd.DataFrame],
        labels: Labels | Sequence[Labels],
        weights: Sequence[float] | None = None,
    ) -> Deduplicator:
        """Learn boilerplate and train the pair classifier on candidate and labelled pairs.

        `ads` and `labels` may be lists of equal length (e.g. synthetic groups and hand-checked
        natural pairs): each set is prepared on its own and their pairs are pooled, each set's
        pairs counting with its weight in `weights` (default 1 each).
        """
        ads_sets = [ads] if isinstance(ads, pd.DataFrame) else list(ads)
        label_sets = [labels] if isinstance(labels, Labels) else list(labels)
        weights = [1.0] * len(ads_sets) if weights is None else [float(w) for w in weights]
        if len(ads_sets) != len(label_sets) or len(weights) != len(ads_sets):
            raise ValueError("give one labels set (and one weight, if any) per ads set")
        progress = Progress(self.config.show_progress)
        table = training_table(self.config, ads_sets, label_sets, weights, progress)
        self.fit_table(table, progress)
        self.training_ = {
            "ads": int(sum(len(a) for a in ads_sets)),
            "pairs": len(table.target),
            "positives": int(table.target.sum()),
            "set_weights": weights,
            "fingerprint": _fingerprint(ads_sets, label_sets),
            "validation": self.classifier_.validation_,
        }
        return self

    def fit_table(self, table: TrainingTable, progress: Progress | None = None) -> Deduplicator:
        """Train the pair classifier on a prepared `TrainingTable` (`fit` makes one; the
        ablation benchmark trains one model per left-out corpus on rows of one table)."""
        progress = progress or Progress(False)
        self.boilerplate_ = table.boilerplate
        self.classifier_ = PairClassifier(
            n_estimators=self.config.n_estimators,
            learning_rate=self.config.learning_rate,
            num_leaves=self.config.num_leaves,
            target_precision=self.config.target_precision,
            threshold_beta=self.config.threshold_beta,
            threshold_window=self.config.threshold_window,
            cv_folds=self.config.threshold_folds,
            monotone=monotone_constraints(MODEL_FEATURES),
            seed=self.config.seed,
            jobs=self.config.jobs,
            features=MODEL_FEATURES,
            members=self.config.classifier_members,
        )
        with progress.stage("train", total=len(table.target), unit="pairs"):
            self.classifier_.fit(
                table.features,
                table.target,
                table.groups,
                adjust=lambda probability, features: apply_rules(probability, features, self.policy),
                sample_weight=table.weight,
            )
        return self

    @property
    def threshold_(self) -> float:
        """Decision threshold on the duplicate probability."""
        return self.classifier_.threshold_

    # ---------------------------------------------------------------- inference
    def predict_proba(self, pair_features: pd.DataFrame) -> np.ndarray:
        """(n, 2) probabilities for a table of pair features (`features.pairs.FEATURES`), with the
        decision rules of `models.rules` applied (a pair a rule holds for gets at most 0.01)."""
        raw = self.classifier_.predict_proba(pair_features)[:, 1]
        positive = apply_rules(raw, pair_features, self.policy)
        return np.column_stack([1.0 - positive, positive])

    def _candidates(self, batch: PreparedBatch) -> tuple[pd.DataFrame, CandidateReport]:
        return batch_candidates(batch.inputs, self.config)

    def prepare(self, ads: pd.DataFrame) -> PreparedBatch:
        """Clean and sketch ads with this model's known boilerplate."""
        return prepare_batch(ads, self.config, self.boilerplate_)

    def score(self, batch: PreparedBatch, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Duplicate probability of arbitrary pairs of ads in a prepared batch."""
        if len(left) == 0:
            return np.zeros(0)
        return self.predict_proba(build_pair_features(batch.inputs, left, right, self.config.jobs))[:, 1]

    def run(
        self, ads: pd.DataFrame, keep_text: bool = True, descriptions: Iterable[pd.Series] | None = None
    ) -> DedupResult:
        """Deduplicate a batch and keep every intermediate result.

        With `keep_text=False` the descriptions are dropped from `result.batch.ads` once the batch
        is prepared: a million ads then need ~3 GB less, if the caller holds no other reference
        to `ads` (reports, explanations and the labelling loop need the texts). With
        `descriptions` (`ads` then has no description column; see `pipeline.io.read_ads_streamed`)
        the texts arrive slice by slice as they are prepared and are not kept at all.
        """
        progress = Progress(self.config.show_progress)
        with progress.stage("prepare", total=len(ads), unit="ads") as bar:
            batch = prepare_batch(ads, self.config, self.boilerplate_, bar.update, descriptions)
        if not keep_text and "description" in batch.ads.columns:
            del ads
            batch = dataclasses.replace(batch, ads=batch.ads.drop(columns=["description"]))
            pa.default_memory_pool().release_unused()
        with progress.stage("candidates", unit="pairs") as bar:
            candidates, candidate_report = self._candidates(batch)
            bar.update(len(candidates))
        left = candidates["i"].to_numpy()
        right = candidates["j"].to_numpy()
        with progress.stage("score", total=len(left), unit="pairs") as bar:
            scored = self._score_blocks(batch, left, right, bar.update)
        probability = scored.probability
        accepted = probability >= self.threshold_
        with progress.stage("group", total=int(accepted.sum()), unit="links"):
            labels, grouping = self._group_accepted(batch, left, right, probability, scored.accepted_features)
        ad_ids = batch.ads["ad_id"].astype(str).to_numpy()
        group_ids = _group_ids(ad_ids, labels)
        pairs = pd.DataFrame(
            {
                "ad_id_a": ad_ids[left],
                "ad_id_b": ad_ids[right],
                "probability": probability,
                "is_duplicate": accepted & (labels[left] == labels[right]),
                "via_lsh": candidates["via_lsh"].to_numpy(),
                "via_fields": candidates["via_fields"].to_numpy(),
                "rule": pd.array(scored.rules, dtype="string"),
            }
        )
        # Duplicate type (FULL / SEMANTIC / TEMPORAL / PARTIAL, see models.dup_types) of accepted pairs.
        duplicate = pairs["is_duplicate"].to_numpy()
        dup_type = np.full(len(pairs), None, dtype=object)
        among_accepted = duplicate[accepted]
        dup_type[duplicate] = assign_dup_types(
            scored.accepted_features[among_accepted].reset_index(drop=True)
        )
        pairs["dup_type"] = pd.array(dup_type, dtype="string")
        groups = pd.DataFrame(
            {
                "ad_id": ad_ids,
                "group_id": group_ids,
                "group_size": np.bincount(labels)[labels],
                "status": batch.status.to_numpy(),
            }
        )
        groups = _with_extra_columns(groups, batch.ads)
        return DedupResult(
            pairs=pairs,
            groups=groups,
            candidates=candidate_report,
            grouping=grouping,
            batch=batch,
            timings=dict(progress.timings),
        )

    def _score_blocks(
        self, batch: PreparedBatch, left: np.ndarray, right: np.ndarray, done: Callable[[int], object]
    ) -> ScoredPairs:
        """Probabilities and rules of the pairs (left[k], right[k]), `SCORE_BLOCK` pairs at a time,
        keeping the features of accepted pairs only (what grouping and duplicate types read): a
        feature table of every pair takes 300 bytes a pair, 7 GB for 24 million pairs."""
        probability = np.zeros(len(left))
        rules = np.full(len(left), None, dtype=object)
        accepted: list[pd.DataFrame] = []
        for start in range(0, len(left), SCORE_BLOCK):
            block = slice(start, start + SCORE_BLOCK)
            features = build_pair_features(batch.inputs, left[block], right[block], self.config.jobs)
            probability[block] = self.predict_proba(features)[:, 1]
            rules[block] = rule_names(features, self.policy)
            accepted.append(features[probability[block] >= self.threshold_])
            done(len(features))
        if not accepted:
            accepted.append(build_pair_features(batch.inputs, left, right, self.config.jobs))
        return ScoredPairs(probability, rules, pd.concat(accepted, ignore_index=True))

    def group(
        self,
        batch: PreparedBatch,
        left: np.ndarray,
        right: np.ndarray,
        probability: np.ndarray,
        features: pd.DataFrame,
    ) -> tuple[np.ndarray, GroupReport]:
        """Group label of every ad of `batch` from its scored candidate pairs (`features` row k is
        pair k), under this model's `policy`: accepted pairs, the chaining guard, copy units and
        the employer guard."""
        accepted = probability >= self.threshold_
        return self._group_accepted(batch, left, right, probability, features[accepted])

    def _group_accepted(
        self,
        batch: PreparedBatch,
        left: np.ndarray,
        right: np.ndarray,
        probability: np.ndarray,
        accepted_features: pd.DataFrame,
    ) -> tuple[np.ndarray, GroupReport]:
        """`group` given the features of the accepted pairs only, in order."""
        accepted = probability >= self.threshold_
        edges = pd.DataFrame(
            {"i": left[accepted], "j": right[accepted], "probability": probability[accepted]}
        )
        grouping = GroupReport()
        labels = decide_groups(
            len(batch),
            edges,
            lambda a, b: self.score(batch, a, b),
            self.threshold_,
            batch.inputs.fields,
            self.policy,
            links=employer_links(edges, accepted_features),
            report=grouping,
        )
        return labels, grouping

    def dedup(self, ads: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Find duplicates among `ads`: returns (pairs, groups) as in the data contract."""
        result = self.run(ads)
        return result.pairs, result.groups

    # --------------------------------------------------------------- evaluation
    def evaluate(
        self, ads: pd.DataFrame, labels: Labels, result: DedupResult | None = None
    ) -> dict[str, Any]:
        """End-to-end figures against labels (the `--json` keys of the contract)."""
        result = result or self.run(ads)
        return evaluate_result(result, labels, self.threshold_)

    # -------------------------------------------------------------- persistence
    def save(self, path: str | Path, overwrite: bool = True) -> None:
        """Write the model as one JSON file (LightGBM text model + manifest, no pickle)."""
        manifest = {
            "kind": MODEL_KIND,
            "config": self.config.to_dict(),
            "policy": self.policy.to_dict(),
            "features": list(self.classifier_.feature_names_),
            "threshold": self.threshold_,
            "classifier_params": self.classifier_.get_params(),
            "boilerplate_blocks": [format(int(h), "016x") for h in self.boilerplate_],
            "training": self.training_,
            "versions": _versions(),
        }
        save_model_file(path, manifest, self.classifier_.to_texts(), overwrite=overwrite)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Deduplicator:
        """Read a model saved by `save`; refuses foreign, tampered or incompatible files."""
        from jobdedup.models.persistence import ModelFileError

        manifest, boosters = load_model_file(path)
        if manifest.get("kind") != MODEL_KIND:
            raise ModelFileError(f"{path}: not a jobdedup deduplicator model (kind {manifest.get('kind')!r})")
        if manifest.get("features") != MODEL_FEATURES:
            raise ModelFileError(
                f"{path}: model was trained on other features than this jobdedup computes; retrain it"
            )
        try:
            model = cls(Config.from_dict(manifest["config"]), DecisionPolicy.from_dict(manifest["policy"]))
            model.classifier_ = PairClassifier.from_texts(
                boosters, manifest["threshold"], manifest["classifier_params"]
            )
            model.boilerplate_ = np.array(
                [int(h, 16) for h in manifest["boilerplate_blocks"]], dtype=np.uint64
            )
        except (KeyError, TypeError, ValueError, AttributeError, lgb.basic.LightGBMError) as exc:
            detail = f"missing {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0][:120]
            raise ModelFileError(
                f"{path}: model file is malformed ({detail}); retrain it with `jobdedup train`"
            ) from None
        if model.classifier_.feature_names_ != MODEL_FEATURES or not 0.0 <= model.threshold_ <= 1.0:
            raise ModelFileError(
                f"{path}: model file is inconsistent (booster features or threshold); retrain it"
            )
        model.training_ = manifest.get("training", {})
        model.versions_ = manifest.get("versions", {})
        _warn_on_other_lightgbm(path, model.versions_)
        return model

    def with_config(self, **changes: Any) -> Deduplicator:
        """Same fitted model with run-time settings changed (e.g. `jobs`, `show_progress`)."""
        model = Deduplicator(self.config.replace(**changes), self.policy)
        model.classifier_ = self.classifier_
        model.boilerplate_ = self.boilerplate_
        model.training_ = getattr(self, "training_", {})
        return model

    def with_policy(self, policy: DecisionPolicy) -> Deduplicator:
        """Same fitted model deciding under another `DecisionPolicy` (the ablation's switches)."""
        model = self.with_config()
        model.policy = policy
        return model


def _warn_on_other_lightgbm(path: str | os.PathLike[str], versions: Any) -> None:
    """One warning when the model was saved with another major version of LightGBM (it still loads)."""
    saved = str(versions.get("lightgbm", "")) if isinstance(versions, dict) else ""
    installed = _versions()["lightgbm"]
    saved_major, installed_major = saved.split(".")[0], installed.split(".")[0]
    if saved_major.isdigit() and installed_major.isdigit() and saved_major != installed_major:
        warnings.warn(
            InputWarning(
                f"{path}: model was saved with lightgbm {saved}, this is lightgbm {installed}; "
                "it loads, but retrain it if its results look wrong."
            ),
            stacklevel=3,
        )


def _with_extra_columns(groups: pd.DataFrame, ads: pd.DataFrame) -> pd.DataFrame:
    """Groups plus the input's extra (non-contract) columns, untouched, after the contract columns.

    Rows of `groups` and `ads` are the same ads in the same order. An extra column whose name is
    already an output column is carried as ``input_<name>``.
    """
    extras = [c for c in ads.columns if c not in ADS_COLUMNS]
    if not extras:
        return groups
    carried = ads[extras].reset_index(drop=True)
    renamed = {}
    for name in extras:
        new = name
        while new in groups.columns or (new != name and new in carried.columns):
            new = f"input_{new}"
        if new != name:
            renamed[name] = new
    return pd.concat([groups, carried.rename(columns=renamed)], axis=1)


def _group_ids(ad_ids: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Group id = the smallest ad_id in the group (stable and readable)."""
    frame = pd.DataFrame({"ad_id": ad_ids, "label": labels})
    first = frame.groupby("label")["ad_id"].min()
    return first.reindex(labels).to_numpy()


def evaluate_result(result: DedupResult, labels: Labels, threshold: float) -> dict[str, Any]:
    """Score a dedup result against labels; pairs the candidates missed count as false negatives.

    Decisions are the final ones a user receives: two ads are called duplicates when they end
    up in the same group. PR-AUC uses the classifier's probabilities (0 for pairs never proposed).
    """
    ads = result.batch.ads
    n = len(ads)
    ids = ads["ad_id"].astype(str).to_numpy()
    position = pd.Series(np.arange(n), index=ids)
    group_of = result.groups["group_id"].to_numpy()
    pairs = result.pairs
    pa = position.reindex(pairs["ad_id_a"]).to_numpy()
    pb = position.reindex(pairs["ad_id_b"]).to_numpy()
    scored = pd.Series(pairs["probability"].to_numpy(), index=np.minimum(pa, pb) * n + np.maximum(pa, pb))
    universe = _evaluation_universe(labels, position, group_of, scored)
    codes = universe["code"].to_numpy()
    truth = universe["label"].to_numpy()
    left, right = codes // n, codes % n
    predicted = (group_of[left] == group_of[right]).astype(int)
    scores = scored.reindex(codes).fillna(0.0).to_numpy()
    figures: dict[str, Any] = pair_metrics(truth, predicted, scores)
    positives = truth == 1
    proposed = np.isin(codes, scored.index.to_numpy())
    figures.update(
        {
            "threshold": float(threshold),
            "candidate_recall": float(proposed[positives].mean()) if positives.any() else float("nan"),
            "candidate_pairs": len(pairs),
            "labelled_pairs": len(universe),
            "labelled_duplicates": int(positives.sum()),
            "ads": int(n),
            "groups": int(result.groups["group_id"].nunique()),
            "reduction_ratio": reduction_ratio(len(pairs), n),
        }
    )
    if "sample" in labels.pairs:
        figures.update(sample_estimates(labels.pairs, position, group_of))
    if "dup_type" in labels.pairs and labels.pairs["dup_type"].notna().any():
        figures["per_type"] = _per_type(labels, position, codes, truth, predicted, result)
    if labels.groups is not None:
        truth_groups = labels.groups.set_index("ad_id")["group_id"].astype(str)
        predicted_groups = pd.Series(group_of, index=ids)
        figures.update(bcubed(truth_groups, predicted_groups))
    return figures


def sample_estimates(pairs: pd.DataFrame, position: pd.Series, group_of: np.ndarray) -> dict[str, Any]:
    """Figures from labelled uniform samples (`jobdedup label --sample`): the estimated precision of
    the accepted pairs (those of the `accepted` sample this run still puts in one group) with its
    95 % interval, and the share of duplicates in the `uncertain` sample. `position` maps ad_id to
    row, `group_of` is each row's group."""
    out: dict[str, Any] = {}
    a = position.reindex(pairs["ad_id_a"].astype(str)).to_numpy()
    b = position.reindex(pairs["ad_id_b"].astype(str)).to_numpy()
    known = ~(np.isnan(a) | np.isnan(b))
    together = np.zeros(len(pairs), dtype=bool)
    together[known] = group_of[a[known].astype(int)] == group_of[b[known].astype(int)]
    sample = pairs["sample"].astype(str).to_numpy()
    label = pairs["label"].to_numpy(dtype=int)
    accepted = sample == "accepted"
    if accepted.any():
        estimate = estimated_precision(label[accepted & together])
        out.update(
            {
                "estimated_precision": estimate["precision"],
                "estimated_precision_low": estimate["low"],
                "estimated_precision_high": estimate["high"],
                "precision_sample_size": estimate["sample"],
                "precision_sample_not_accepted_now": int((accepted & ~together).sum()),
            }
        )
    uncertain = sample == "uncertain"
    if uncertain.any():
        out["uncertain_sample_size"] = int(uncertain.sum())
        out["uncertain_sample_duplicate_share"] = float(label[uncertain].mean())
    return out


def _per_type(
    labels: Labels,
    position: pd.Series,
    codes: np.ndarray,
    truth: np.ndarray,
    predicted: np.ndarray,
    result: DedupResult,
) -> dict[str, Any]:
    """Precision / recall per labelled `dup_type` (see `models.dup_types.per_type_metrics`)."""
    n = len(position)
    typed = labels.pairs[labels.pairs["dup_type"].notna()]
    a = position.reindex(typed["ad_id_a"].astype(str)).to_numpy()
    b = position.reindex(typed["ad_id_b"].astype(str)).to_numpy()
    known = ~(np.isnan(a) | np.isnan(b))
    type_codes = (np.minimum(a, b) * n + np.maximum(a, b))[known].astype(np.int64)
    truth_type = pd.Series(typed["dup_type"].astype(object).to_numpy()[known], index=type_codes)
    truth_type = truth_type[~truth_type.index.duplicated()].reindex(codes).to_numpy()
    predicted_type = np.full(len(codes), None, dtype=object)
    hit = predicted == 1
    predicted_type[hit] = dup_types_of_pairs(result.batch.inputs, codes[hit] // n, codes[hit] % n)
    return per_type_metrics(truth, truth_type, predicted, predicted_type)


def _evaluation_universe(
    labels: Labels, position: pd.Series, group_of: np.ndarray, scored: pd.Series
) -> pd.DataFrame:
    """Labelled pairs to score (pair code i*n+j, label). With group labels, every pair among the
    labelled ads counts: positives from the groups, negatives wherever a pair was proposed or
    grouped together."""
    n = len(position)
    a = position.reindex(labels.pairs["ad_id_a"].astype(str)).to_numpy()
    b = position.reindex(labels.pairs["ad_id_b"].astype(str)).to_numpy()
    known = ~(np.isnan(a) | np.isnan(b))
    codes = (np.minimum(a, b) * n + np.maximum(a, b))[known].astype(np.int64)
    frame = pd.DataFrame({"code": codes, "label": labels.pairs["label"].to_numpy()[known].astype(int)})
    if not labels.all_pairs_known:
        return frame.drop_duplicates("code")
    assert labels.groups is not None  # (the groups form: every pair known)
    labelled = np.zeros(n, dtype=bool)
    labelled[position.reindex(labels.groups["ad_id"].astype(str)).dropna().astype(int).to_numpy()] = True
    # Pairs in one predicted group, and pairs the classifier scored, are where negatives can be wrong.
    order = np.argsort(group_of, kind="stable")
    grouped = pd.DataFrame({"doc": order, "group": group_of[order]})
    grouped = grouped[labelled[grouped["doc"].to_numpy()]]
    same_group = grouped.merge(grouped, on="group")
    same_group = same_group[same_group["doc_x"] < same_group["doc_y"]]
    extra = np.concatenate(
        [
            (same_group["doc_x"].to_numpy() * n + same_group["doc_y"].to_numpy()).astype(np.int64),
            scored.index.to_numpy().astype(np.int64),
        ]
    )
    extra = extra[labelled[extra // n] & labelled[extra % n]]
    extra = np.setdiff1d(extra, codes)
    negatives = pd.DataFrame({"code": extra, "label": 0})
    return pd.concat([frame, negatives], ignore_index=True).drop_duplicates("code")
