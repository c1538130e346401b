"""What every command shares: the default model, loading a model with run-time settings, and
writing the two contract output files. Sits beside the engine, below the command line.

Example:
    >>> # model = load_model(None, show_progress=False)   # the shipped default model
    >>> # write_outputs(pairs, groups, Path("out/batch1"))
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from jobdedup.pipeline.engine import Deduplicator
from jobdedup.pipeline.io import write_table

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "default" / "model.json"


def load_model(path: str | Path | None = None, **runtime: Any) -> Deduplicator:
    """The model at `path` (the shipped default model when None) with run-time settings changed
    (`jobs`, `seed`, `show_progress`, `max_description_chars`; None values are ignored)."""
    model = Deduplicator.load(path or DEFAULT_MODEL)
    changes = {name: value for name, value in runtime.items() if value is not None}
    return model.with_config(**changes) if changes else model


def model_from_args(args: Any) -> Deduplicator:
    """`load_model` with the settings of a parsed command line (`--model`, `--quiet`, `--jobs`,
    `--seed`, `--max-description-chars`; absent ones keep the model's)."""
    return load_model(
        getattr(args, "model", None),
        show_progress=not getattr(args, "quiet", False),
        jobs=getattr(args, "jobs", None),
        seed=getattr(args, "seed", None),
        max_description_chars=getattr(args, "max_description_chars", None),
    )


def write_outputs(pairs: pd.DataFrame, groups: pd.DataFrame, out: Path) -> None:
    """`out/pairs.parquet` and `out/groups.parquet` (the folder is created)."""
    out.mkdir(parents=True, exist_ok=True)
    write_table(pairs, out / "pairs.parquet")
    write_table(groups, out / "groups.parquet")
