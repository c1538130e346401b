"""Stage 5: a LightGBM classifier of candidate pairs, with a threshold for a target precision.

The scikit-learn contract: `__init__` stores parameters, `fit` returns self, learned state ends
in `_`. The threshold is chosen on out-of-fold scores, the folds cut *by vacancy group*, so that
every pair it is chosen on was scored by trees that never saw its vacancy.

The classifier is a small ensemble: `members` boosters, each with its own seed (bagging, feature
sampling and fold split), whose raw scores are averaged. One booster's scores, and with them the
threshold, moved with the seed more than most feature changes move them (demo threshold 0.56 to
0.71 over three seeds); three averaged steady them. With the default rounds (`Config`) the three
hold as many trees as one booster did, so scoring costs the same.

Example:
    >>> clf = PairClassifier(n_estimators=10)
    >>> clf.target_precision
    0.97
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
from sklearn.model_selection import GroupKFold

from jobdedup.features.pairs import float_columns
from jobdedup.models.thresholds import DEFAULT_BETA, decision_threshold

SMALL_PREDICT = 5_000  # fewer pairs than this are scored on one thread (see `raw_scores`)
MEMBER_SEED_STEP = 1_000  # member k trains with seed + k * this: ensembles of nearby seeds share no booster


class PairClassifier:
    """Gradient-boosted trees over pair features; NaN means "unknown" and is handled natively."""

    def __init__(
        self,
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        num_leaves: int = 31,
        target_precision: float = 0.97,
        threshold_beta: float = DEFAULT_BETA,
        threshold_window: float = 0.0,
        cv_folds: int = 5,
        monotone: list[int] | None = None,
        seed: int = 1,
        jobs: int = 2,
        features: list[str] | None = None,
        members: int = 3,
    ) -> None:
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.target_precision = target_precision
        self.threshold_beta = threshold_beta
        self.threshold_window = threshold_window
        self.cv_folds = cv_folds
        self.monotone = monotone
        self.seed = seed
        self.jobs = jobs
        self.features = features
        self.members = members

    def member_seeds(self) -> list[int]:
        """The seed of each booster: `seed` for the first, so one member is the plain booster."""
        return [self.seed + MEMBER_SEED_STEP * member for member in range(max(1, self.members))]

    def _params(self, seed: int) -> dict[str, Any]:
        params: dict[str, Any] = {
            "objective": "binary",
            "learning_rate": self.learning_rate,
            "num_leaves": self.num_leaves,
            "min_data_in_leaf": 20,
            "feature_fraction": 0.9,
            "bagging_fraction": 0.9,
            "bagging_freq": 1,
            "lambda_l2": 1.0,
            "seed": seed,
            "deterministic": True,
            "force_row_wise": True,
            "num_threads": self.jobs,
            "verbose": -1,
        }
        if self.monotone is not None:
            params["monotone_constraints"] = self.monotone
            params["monotone_constraints_method"] = "advanced"
        return params

    def fit(
        self,
        features: pd.DataFrame,
        labels: np.ndarray,
        groups: np.ndarray,
        adjust: Callable[[np.ndarray, pd.DataFrame], np.ndarray] | None = None,
        sample_weight: np.ndarray | None = None,
    ) -> PairClassifier:
        """Train on pair features and choose the threshold on out-of-fold scores.

        The pairs are cut into `cv_folds` folds by vacancy (`groups`: one vacancy's pairs stay in
        one fold); each fold is scored by trees trained on the others (with early stopping on it),
        so every pair gets a score from trees that never saw its vacancy, and the threshold is, among
        those whose out-of-fold precision reaches `target_precision`, the one with the best F-beta
        (`threshold_beta`, averaged over `threshold_window`; `models.thresholds.decision_threshold`)
        — over all labelled pairs, not one small validation split whose few high-scoring negatives
        would swing it. Each member
        does this with its own seed and fold split; the threshold is chosen on their averaged
        out-of-fold scores. Each member's final trees are trained on every pair for the median
        number of rounds its folds stopped at.

        `adjust(scores, features)` turns scores into the probabilities the caller will decide on
        (e.g. with decision rules applied) before the threshold is chosen; it sees every column of
        `features`, the trees only the `features` given at construction (all columns by default).
        With `sample_weight`, each pair counts with its weight in training and in the threshold.
        """
        labels = np.asarray(labels, dtype=int)
        if len(np.unique(labels)) < 2:
            raise ValueError("training needs both duplicate and non-duplicate pairs among the candidates")
        self.feature_names_ = list(self.features or features.columns)
        every_column, features = features, features[self.feature_names_]
        weight = np.ones(len(labels)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        groups = np.asarray(groups)
        raw_out_of_fold = np.zeros(len(labels))
        everything = np.arange(len(labels))
        self.boosters_, member_rounds, fold_counts = [], [], []
        for seed in self.member_seeds():
            raw, rounds = self._out_of_fold(features, labels, weight, groups, seed)
            raw_out_of_fold += raw
            median_rounds = int(np.median(rounds)) if rounds else None
            self.boosters_.append(
                self._train(features, labels, weight, seed, everything, None, median_rounds)
            )
            member_rounds.append(int(self.boosters_[-1].current_iteration()))
            fold_counts.append(len(rounds))
        mean_raw = raw_out_of_fold / len(self.boosters_)
        scored = ~np.isnan(mean_raw)
        if not scored.any():  # one vacancy only: no fold to validate on, so the training scores
            mean_raw = self.raw_scores(features)
            scored = np.ones(len(labels), dtype=bool)
        scores = _sigmoid(mean_raw[scored])
        if adjust is not None:
            scores = adjust(scores, every_column.iloc[np.flatnonzero(scored)])
        self.threshold_ = decision_threshold(
            scores,
            labels[scored],
            self.target_precision,
            weight[scored],
            self.threshold_beta,
            self.threshold_window,
        )
        self.validation_ = {
            "pairs": int(scored.sum()),
            "positives": int(labels[scored].sum()),
            "folds": min(fold_counts),
            "rounds": member_rounds,
        }
        return self

    def _out_of_fold(
        self, features: pd.DataFrame, labels: np.ndarray, weight: np.ndarray, groups: np.ndarray, seed: int
    ) -> tuple[np.ndarray, list[int]]:
        """Raw out-of-fold scores of one member (NaN where no fold scored a pair) and its folds' rounds."""
        folds = min(self.cv_folds, len(pd.unique(groups)))
        raw = np.full(len(labels), np.nan)
        rounds: list[int] = []
        if folds < 2:
            return raw, rounds
        splitter = GroupKFold(n_splits=folds, shuffle=True, random_state=seed)
        for train_idx, valid_idx in splitter.split(features, labels, groups):
            if len(np.unique(labels[train_idx])) < 2:
                continue
            booster = self._train(features, labels, weight, seed, train_idx, valid_idx)
            raw[valid_idx] = booster.predict(
                features.iloc[valid_idx], num_iteration=booster.best_iteration, raw_score=True
            )
            rounds.append(booster.best_iteration or self.n_estimators)
        return raw, rounds

    def _train(
        self,
        features: pd.DataFrame,
        labels: np.ndarray,
        weight: np.ndarray,
        seed: int,
        train_idx: np.ndarray,
        valid_idx: np.ndarray | None,
        rounds: int | None = None,
    ) -> lgb.Booster:
        """Trees on the `train_idx` pairs: early-stopped on `valid_idx`, or `rounds` rounds."""
        train_set = lgb.Dataset(
            features.iloc[train_idx], labels[train_idx], weight=weight[train_idx], free_raw_data=True
        )
        if valid_idx is None:
            return lgb.train(self._params(seed), train_set, num_boost_round=rounds or self.n_estimators)
        valid_set = lgb.Dataset(
            features.iloc[valid_idx], labels[valid_idx], weight=weight[valid_idx], reference=train_set
        )
        return lgb.train(
            self._params(seed),
            train_set,
            num_boost_round=self.n_estimators,
            valid_sets=[valid_set],
            callbacks=[lgb.early_stopping(40, verbose=False)],
        )

    def _model_values(self, features: pd.DataFrame) -> np.ndarray:
        """The trees' columns of `features` as one float array, what every member predicts from."""
        # (stacked as rows, like the block of a selection of the columns: its array's layout)
        return np.stack(float_columns(features, self.feature_names_)).T

    def raw_scores(self, features: pd.DataFrame) -> np.ndarray:
        """Raw score (log-odds) of each pair: the mean of the members' raw scores."""
        # A few pairs (a single ad checked): one thread. Waking LightGBM's OpenMP threads took 40 ms
        # for 3 pairs on a loaded 2-core machine, 2.7 ms on one thread; same probabilities. The
        # frame becomes one float array first: LightGBM converts a DataFrame anew on every call.
        options: dict[str, Any] = {"num_threads": 1} if len(features) < SMALL_PREDICT else {}
        values = self._model_values(features)
        total = np.zeros(len(features))
        for booster in self.boosters_:
            total += booster.predict(values, raw_score=True, **options)
        return total / len(self.boosters_)

    def predict_proba(self, features: pd.DataFrame) -> np.ndarray:
        """(n, 2) array: probability of "different" and of "duplicate" for each pair."""
        if len(features) == 0:
            return np.zeros((0, 2))
        positive = _sigmoid(self.raw_scores(features))
        return np.column_stack([1.0 - positive, positive])

    def predict(self, features: pd.DataFrame) -> np.ndarray:
        """1 where the duplicate probability reaches the chosen threshold."""
        return (self.predict_proba(features)[:, 1] >= self.threshold_).astype(int)

    def contributions(self, features: pd.DataFrame) -> pd.DataFrame:
        """Per-feature contributions to the raw score (LightGBM `pred_contrib`), plus `bias`.

        The raw score is the members' mean, so its contributions are the members' mean too.
        """
        values = self._model_values(features)
        raw = np.mean([booster.predict(values, pred_contrib=True) for booster in self.boosters_], axis=0)
        return pd.DataFrame(raw, columns=[*self.feature_names_, "bias"], index=features.index)

    def feature_importance(self) -> pd.Series:
        """Total gain per feature over all members, largest first."""
        gains = np.sum(
            [booster.feature_importance(importance_type="gain") for booster in self.boosters_], axis=0
        )
        return pd.Series(gains, index=self.feature_names_).sort_values(ascending=False)

    def to_texts(self) -> list[str]:
        """LightGBM's own text model of each member (no pickle)."""
        return [booster.model_to_string() for booster in self.boosters_]

    @classmethod
    def from_texts(cls, booster_texts: list[str], threshold: float, params: dict[str, Any]) -> PairClassifier:
        """Rebuild a fitted classifier from `to_texts()` output and its saved parameters."""
        if not booster_texts:
            raise ValueError("no booster in the model")
        clf = cls(**params)
        clf.boosters_ = [lgb.Booster(model_str=text) for text in booster_texts]
        clf.feature_names_ = list(clf.boosters_[0].feature_name())
        if any(list(booster.feature_name()) != clf.feature_names_ for booster in clf.boosters_):
            raise ValueError("the boosters disagree on their features")
        clf.threshold_ = float(threshold)
        return clf

    def get_params(self) -> dict[str, Any]:
        """Constructor parameters (scikit-learn style)."""
        return {
            "n_estimators": self.n_estimators,
            "learning_rate": self.learning_rate,
            "num_leaves": self.num_leaves,
            "target_precision": self.target_precision,
            "threshold_beta": self.threshold_beta,
            "threshold_window": self.threshold_window,
            "cv_folds": self.cv_folds,
            "monotone": self.monotone,
            "seed": self.seed,
            "jobs": self.jobs,
            "members": self.members,
        }


def _sigmoid(raw: np.ndarray) -> np.ndarray:
    """LightGBM's binary-objective link: log-odds to probability."""
    return 1.0 / (1.0 + np.exp(-raw))
