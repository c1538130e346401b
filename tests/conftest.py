"""Shared fixtures: the bundled data (no ../shared needed) and the shipped default model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from jobdedup.pipeline.engine import Deduplicator
from jobdedup.pipeline.io import read_ads, read_labels

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


def run_cli(
    *args: object, stdin: str | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m jobdedup.pipeline.cli ARGS` in its own process, as a user runs it (output captured)."""
    return subprocess.run(
        [sys.executable, "-m", "jobdedup.pipeline.cli", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def test_ads() -> pd.DataFrame:
    """The bundled held-out synthetic ads (real base ads, reposts, hard negatives)."""
    return read_ads(DATA / "test_ads.parquet")


@pytest.fixture(scope="session")
def test_labels(test_ads):
    return read_labels(DATA / "test_labels.parquet", ads=test_ads)


@pytest.fixture(scope="session")
def default_model() -> Deduplicator:
    """The model shipped in models/default (trained by `make model`)."""
    return Deduplicator.load(ROOT / "models" / "default" / "model.json").with_config(show_progress=False)


@pytest.fixture(scope="session")
def held_out_model() -> Deduplicator:
    """A model trained on the bundled training sets only, as `jobdedup demo` trains it.

    The shipped default model is trained on every bundled labelled set, test sets included, so
    quality claims on the test sets are checked with this one.
    """
    from jobdedup.pipeline.config import Config

    ads = [read_ads(DATA / "train_ads.parquet"), read_ads(DATA / "natural_train_ads.parquet")]
    labels = [
        read_labels(DATA / "train_labels.parquet", ads=ads[0]),
        read_labels(DATA / "natural_train_pairs.csv", ads=ads[1]),
    ]
    return Deduplicator(Config(show_progress=False)).fit(ads, labels)


@pytest.fixture(scope="session")
def held_out_result(held_out_model, test_ads):
    """One dedup run of the held-out model over the bundled held-out ads."""
    return held_out_model.run(test_ads)


@pytest.fixture(scope="session")
def test_result(default_model, test_ads):
    """One dedup run of the default model over the bundled held-out ads."""
    return default_model.run(test_ads)
