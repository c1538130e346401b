"""jobdedup's pipeline: I/O, cleaning, sketching, candidates, grouping, orchestration and CLI.

Example:
    >>> from jobdedup.pipeline import Deduplicator, read_ads, read_labels  # doctest: +SKIP
    >>> model = Deduplicator().fit(read_ads("ads.csv"), read_labels("labels.csv"))  # doctest: +SKIP
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Config": "jobdedup.pipeline.config",
    "Deduplicator": "jobdedup.pipeline.engine",
    "InputError": "jobdedup.pipeline.errors",
    "JobdedupError": "jobdedup.pipeline.errors",
    "Labels": "jobdedup.pipeline.io",
    "read_ads": "jobdedup.pipeline.io",
    "read_labels": "jobdedup.pipeline.io",
    "write_table": "jobdedup.pipeline.io",
}
"""Imported when first asked for, so that a module of the package (the service's supervisor, which
needs no pandas or LightGBM) does not load the engine."""


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Config",
    "Deduplicator",
    "InputError",
    "JobdedupError",
    "Labels",
    "read_ads",
    "read_labels",
    "write_table",
]
