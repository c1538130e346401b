"""What an index records about itself (format, sketch parameters), and the check that a model fits.

An index takes only models whose sketch parameters (shingle size, bands, rows, seed) give the band
keys it holds; the first add records them.

Example:
    >>> # meta = check_model(store, model.config)  # inside the add's write transaction
"""

from __future__ import annotations

import time
from typing import Any

from jobdedup.pipeline.index.errors import IndexFileError
from jobdedup.pipeline.index.store import IndexStore

FORMAT = "jobdedup.index"
FORMAT_VERSION = 4  # 2: compiled tokeniser (word, block and band hashes changed); 3: field keys by
# phonenumbers (E.164), the Public Suffix List and the lexbor HTML parser (issue #14); 4: the
# employer+title field key on the employer name's first word, and title+city keys of a listed
# district's town (issue #13)
SKETCH_PARAMETERS = ("shingle_size", "lsh_bands", "lsh_rows", "seed")


class IndexMismatchError(IndexFileError):
    """The model's sketch parameters differ from those the index was built with."""


def sketch_parameters(config: Any) -> dict[str, int]:
    """The config values that decide band keys (an index only takes models that agree on them)."""
    return {name: int(getattr(config, name)) for name in SKETCH_PARAMETERS}


def check_model(store: IndexStore, config: Any) -> dict[str, Any]:
    """The index's meta; recorded from `config` on the first add, else checked against it."""
    meta = store.meta()
    wanted = sketch_parameters(config)
    if "format" not in meta:
        meta = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "sketch": wanted,
            "max_bucket_size": int(config.max_bucket_size),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        store.set_meta(meta)
        return meta
    if meta.get("format") != FORMAT:
        raise IndexFileError(f"{store.path}: not a jobdedup index")
    if meta.get("format_version") != FORMAT_VERSION:
        raise IndexFileError(
            f"{store.path}: index format version {meta.get('format_version')}, this jobdedup reads "
            f"{FORMAT_VERSION}; rebuild the index"
        )
    if meta["sketch"] != wanted:
        differ = ", ".join(
            f"{k} {meta['sketch'].get(k)} in the index vs {wanted[k]} in the model"
            for k in SKETCH_PARAMETERS
            if meta["sketch"].get(k) != wanted[k]
        )
        raise IndexMismatchError(
            f"{store.path}: the model's sketch parameters differ from the index's ({differ}); "
            "use a model with the index's parameters (and the same --seed) or build a new index"
        )
    return meta


def check_model_read(store: IndexStore, config: Any) -> dict[str, Any]:
    """`check_model` for a read: an index without meta yet (nothing added) takes any model."""
    if "format" not in store.meta():
        return {"max_bucket_size": int(config.max_bucket_size)}
    return check_model(store, config)
