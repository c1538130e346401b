"""Decoded key parts as files beside the index, memory-mapped by every process that serves it.

A `KeyCache` with a directory writes each key part it decodes as two `.npy` files (sorted keys,
ads) named by a hash of the part's blob, and maps them read-only. Processes over one index file
(the service's check workers, its writer) then share one copy through the page cache, decode each
part once, and hold resident only the pages their look-ups touch. A part's files are written
under a temporary name and renamed, so a reader sees whole files or none; files no view refers to
are removed once older than `STALE_SECONDS` (a process still using one keeps its mapping).

Example:
    >>> # directory = key_directory(Path("ads.jdx"))  # ads.jdx-keys/
    >>> # save_part(directory, name, keys, ads); keys, ads = map_part(directory, name)
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import numpy as np

STALE_SECONDS = 600.0  # a part no view of this process uses is removed after this long
SUFFIXES = (".keys.npy", ".ads.npy")


def key_directory(index_path: Path) -> Path:
    """The folder of decoded key parts of the index at `index_path` (`ads.jdx-keys`)."""
    return index_path.with_name(index_path.name + "-keys")


def save_part(directory: Path, name: str, keys: np.ndarray, ads: np.ndarray) -> None:
    """Write a part's arrays as `name`'s files (ads first: whole keys files imply whole ads files).
    A failed write (a full disk) leaves nothing: the part is then held in memory."""
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
        for suffix, values in zip(reversed(SUFFIXES), (ads, keys)):
            temporary = directory / f".{name}{suffix}.{os.getpid()}.tmp"
            try:
                with temporary.open("wb") as handle:
                    np.save(handle, np.ascontiguousarray(values))
                os.replace(temporary, directory / (name + suffix))
            finally:
                temporary.unlink(missing_ok=True)


def map_part(directory: Path, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The (keys, ads) of `name`'s files, memory-mapped read-only; None if they are not there."""
    try:
        keys = np.load(directory / (name + SUFFIXES[0]), mmap_mode="r")
        ads = np.load(directory / (name + SUFFIXES[1]), mmap_mode="r")
    except (OSError, ValueError):
        return None
    return keys, ads


def drop_stale_parts(directory: Path, used: set[str]) -> None:
    """Remove the files of parts not in `used` that are older than `STALE_SECONDS` (other
    processes may still map them: their mappings stay valid)."""
    limit = time.time() - STALE_SECONDS
    with contextlib.suppress(OSError):
        for path in directory.iterdir():
            part = path.name.lstrip(".").split(".")[0]  # (".name…tmp": a write in progress or broken off)
            with contextlib.suppress(OSError):
                if part and part not in used and path.stat().st_mtime < limit:
                    path.unlink()
