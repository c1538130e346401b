"""Model files without pickle: one JSON document holding a manifest and LightGBM's text models.

Loading never executes anything from the file: it is parsed as JSON, its format version and
SHA-256 checksum are checked, and the boosters are rebuilt from LightGBM's own text format.

Layout::

    {"format": "jobdedup-model", "format_version": 4, "checksum": "<sha256>",
     "manifest": {...config, decision policy, features, versions, training fingerprint...},
     "boosters": ["<LightGBM model text>", ...]}

Example:
    >>> # save_model_file("model.json", {"features": ["a"]}, [booster_text])
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

FORMAT_NAME = "jobdedup-model"
FORMAT_VERSION = 4
"""2: word hashes of the compiled tokeniser; 3: an ensemble of boosters; 4: the decision policy."""


class ModelFileError(ValueError):
    """A model file that cannot be trusted or used; the message says which and why."""


def _checksum(manifest: dict[str, Any], boosters: list[str]) -> str:
    canonical = json.dumps([manifest, boosters], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def save_model_file(
    path: str | Path, manifest: dict[str, Any], boosters: list[str], overwrite: bool = True
) -> None:
    """Write the model atomically (temp file + rename); refuse to overwrite unless allowed."""
    path = Path(path)
    if path.exists() and not overwrite:
        raise ModelFileError(f"{path}: exists; pass overwrite=True (CLI: --force) to replace it")
    document = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "checksum": _checksum(manifest, boosters),
        "manifest": manifest,
        "boosters": boosters,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(document, stream, sort_keys=True)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp_name, 0o666 & ~umask)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def load_model_file(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[str]]:
    """Read and verify a model file; returns (manifest, booster texts) or raises ModelFileError."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(
            f"{path}: model file not found; train one with `jobdedup train` or leave --model out"
        )
    raw = path.read_bytes()
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ModelFileError(
            f"{path}: not a jobdedup model (not JSON; pickle/joblib files are refused and never loaded); "
            "pass a model file saved by `jobdedup train`"
        ) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise ModelFileError(
            f"{path}: not a jobdedup model file (missing format marker '{FORMAT_NAME}'); "
            "pass a model file saved by `jobdedup train`"
        )
    version = document.get("format_version")
    if version != FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: model format version {version!r}, this jobdedup reads version {FORMAT_VERSION}; "
            "retrain it with this version: `jobdedup train --ads ADS --labels LABELS --model FILE`"
        )
    manifest, boosters = document.get("manifest"), document.get("boosters")
    if (
        not isinstance(manifest, dict)
        or not isinstance(boosters, list)
        or not boosters
        or not all(isinstance(text, str) for text in boosters)
    ):
        raise ModelFileError(
            f"{path}: model file is truncated or malformed (manifest or boosters missing); retrain it"
        )
    if document.get("checksum") != _checksum(manifest, boosters):
        raise ModelFileError(f"{path}: checksum mismatch, the model file was modified or damaged; retrain it")
    return manifest, boosters
