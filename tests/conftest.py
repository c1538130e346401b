"""Shared fixtures: the bundled data (no ../shared needed) and the shipped default model."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipeline.engine import Deduplicator
from pipeline.io import read_ads, read_labels

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


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
def test_result(default_model, test_ads):
    """One dedup run of the default model over the bundled held-out ads."""
    return default_model.run(test_ads)
