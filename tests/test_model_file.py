"""Model files: JSON + LightGBM text, verified on load, never unpickled."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest

from jobdedup.models.classifier import PairClassifier
from jobdedup.models.persistence import ModelFileError, load_model_file, save_model_file
from jobdedup.models.thresholds import decision_threshold


def _toy_features() -> pd.DataFrame:
    return pd.DataFrame(np.random.default_rng(0).random((400, 3)), columns=["a", "b", "c"])


def _toy_labels() -> np.ndarray:
    x = _toy_features().to_numpy()
    return (x[:, 0] + 0.1 * np.random.default_rng(2).random(400) > 0.6).astype(int)


def _toy_classifier() -> PairClassifier:
    return PairClassifier(n_estimators=30, jobs=1).fit(_toy_features(), _toy_labels(), groups=np.arange(400))


def test_round_trip_gives_identical_predictions(tmp_path):
    clf = _toy_classifier()
    save_model_file(tmp_path / "m.json", {"threshold": clf.threshold_}, clf.to_texts())
    manifest, boosters = load_model_file(tmp_path / "m.json")
    assert len(boosters) == clf.members == 3
    loaded = PairClassifier.from_texts(boosters, manifest["threshold"], clf.get_params())
    features = pd.DataFrame(np.random.default_rng(1).random((50, 3)), columns=["a", "b", "c"])
    assert np.allclose(loaded.predict_proba(features), clf.predict_proba(features))
    assert loaded.threshold_ == clf.threshold_


def test_tampered_file_is_refused(tmp_path):
    save_model_file(tmp_path / "m.json", {"threshold": 0.5}, ["tree"])
    document = json.loads((tmp_path / "m.json").read_text())
    document["manifest"]["threshold"] = 0.01
    (tmp_path / "m.json").write_text(json.dumps(document))
    with pytest.raises(ModelFileError, match="checksum"):
        load_model_file(tmp_path / "m.json")


def test_truncated_and_foreign_versions_are_refused(tmp_path):
    save_model_file(tmp_path / "m.json", {"threshold": 0.5}, ["tree"])
    text = (tmp_path / "m.json").read_text()
    (tmp_path / "cut.json").write_text(text[: len(text) // 2])
    with pytest.raises(ModelFileError, match="not JSON"):
        load_model_file(tmp_path / "cut.json")
    document = json.loads(text)
    document["format_version"] = 99
    (tmp_path / "v99.json").write_text(json.dumps(document))
    with pytest.raises(ModelFileError, match="version 99"):
        load_model_file(tmp_path / "v99.json")


class _Payload:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_pickle_payload_is_refused_and_never_run(tmp_path):
    marker = tmp_path / "pwned"
    (tmp_path / "evil.pkl").write_bytes(pickle.dumps(_Payload(str(marker))))
    with pytest.raises(ModelFileError, match="pickle"):
        load_model_file(tmp_path / "evil.pkl")
    assert not marker.exists()


def test_threshold_reaches_target_precision_with_best_f_beta():
    scores = np.array([0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    labels = np.array([1, 1, 1, 0, 1, 0, 0])
    assert decision_threshold(scores, labels, 0.99) == 0.8
    # 0.6 also reaches 0.75 (precision 0.8, recall 1.0): F1 prefers it, F0.5 keeps 0.8 (precision 1.0, recall 0.75).
    assert decision_threshold(scores, labels, 0.75, beta=1.0) == 0.6
    assert decision_threshold(scores, labels, 0.75) == 0.8
    # Nothing reaches 1.01: the best precision.
    assert decision_threshold(scores, labels, 1.01) == 0.8


def test_threshold_window_picks_the_best_mean_f_beta_around_each_threshold():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 3000)
    scores = np.clip(labels * 0.5 + rng.normal(0.25, 0.2, 3000), 0, 1)
    # Reference, written out: every distinct score a cut; F0.5 averaged over the cuts within 0.1.
    cuts = np.unique(scores)[::-1]
    true_pos = np.array([labels[scores >= cut].sum() for cut in cuts])
    predicted = np.array([(scores >= cut).sum() for cut in cuts])
    precision, recall = true_pos / predicted, true_pos / labels.sum()
    f_half = 1.25 * precision * recall / (0.25 * precision + recall)
    smoothed = [f_half[np.abs(cuts - cut) <= 0.1].mean() for cut in cuts]
    reaching = np.flatnonzero(precision >= 0.9)
    expected = cuts[reaching[np.argmax(np.take(smoothed, reaching))]]
    assert decision_threshold(scores, labels, 0.9, window=0.1) == pytest.approx(expected)
    assert decision_threshold(scores, labels, 0.9) == pytest.approx(
        cuts[reaching[np.argmax(f_half[reaching])]]
    )
    assert decision_threshold(scores, labels, 0.9, window=0.1) != decision_threshold(scores, labels, 0.9)


def test_pairs_of_one_vacancy_train_without_a_validation_split():
    rng = np.random.default_rng(1)
    x = rng.random((6, 2))
    features = pd.DataFrame(x, columns=["a", "b"])
    classifier = PairClassifier(n_estimators=5, jobs=1).fit(
        features, np.array([1, 0, 1, 0, 1, 0]), np.zeros(6)
    )
    assert (classifier.validation_["pairs"], classifier.validation_["positives"]) == (6, 3)
    assert classifier.validation_["folds"] == 0  # one vacancy: no fold to score out of fold
    assert 0.0 <= classifier.threshold_ <= 1.0
    # With enough pairs for the trees to split, the threshold is one of the ensemble's own
    # training scores (the members' mean raw score, not a third of it).
    x = rng.random((200, 2))
    features = pd.DataFrame(x, columns=["a", "b"])
    classifier = PairClassifier(n_estimators=20, jobs=1).fit(
        features, (x[:, 0] > 0.5).astype(int), np.zeros(200)
    )
    assert classifier.threshold_ in set(classifier.predict_proba(features)[:, 1])


def test_members_average_their_raw_scores_and_the_first_is_the_plain_booster():
    features = _toy_features()
    ensemble = _toy_classifier()
    single = PairClassifier(n_estimators=30, jobs=1, members=1).fit(
        features, _toy_labels(), groups=np.arange(400)
    )
    assert len(set(ensemble.member_seeds())) == 3 and single.member_seeds() == ensemble.member_seeds()[:1]
    each = np.array([booster.predict(features.to_numpy(), raw_score=True) for booster in ensemble.boosters_])
    assert not np.allclose(each[0], each[1])  # different seeds, different trees
    assert np.allclose(ensemble.raw_scores(features), each.mean(axis=0))
    assert np.allclose(single.raw_scores(features), each[0])
    assert ensemble.validation_["rounds"] == [booster.current_iteration() for booster in ensemble.boosters_]


def test_boosters_of_other_features_are_refused():
    clf = _toy_classifier()
    other = PairClassifier(n_estimators=5, jobs=1, members=1).fit(
        _toy_features().rename(columns={"c": "d"}), _toy_labels(), groups=np.arange(400)
    )
    with pytest.raises(ValueError, match="disagree"):
        PairClassifier.from_texts([*clf.to_texts(), *other.to_texts()], 0.5, clf.get_params())
