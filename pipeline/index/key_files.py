"""Decoded key parts as files beside the index, memory-mapped by every process that serves it.

A `KeyCache` with a directory writes each key part it decodes as two `.npy` files (sorted keys,
ads) named by a hash of the part's blob, and maps them read-only. Processes over one index file
(the service's check workers, its writer) then share one copy through the page cache, decode each
part once, and hold resident only the pages their look-ups touch. A part's files are written
under a temporary name and linked into place unless another process was first, so a reader sees
whole files or none and every process maps the same file; files no view refers to
are removed once older than `STALE_SECONDS` (a process still using one keeps its mapping).

Example:
    >>> # directory = key_directory(Path("ads.jdx"))  # ads.jdx-keys/
    >>> # (keys, ads), mapped = shared_arrays(directory, name, SUFFIXES, lambda: decode(blob))
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

STALE_SECONDS = 120.0
"""A part's files no view of this process uses are removed once this old. Removing them is always
safe (a process mapping them keeps its mapping; one that needs them later decodes the part from
the index again and writes it anew), but costs such a process the decode and a second copy of the
pages: the age leaves time to every process of the service, each of which follows a commit within
its next request. At 600 s the key folder of the 1,000,000-ad benchmark held 40 % more than its live
parts after its four minutes of adds (752 MB against 533)."""
SUFFIXES = (".keys.npy", ".ads.npy")  # a key part's files
PACKED_SUFFIXES = (".starts.npy", ".rest.npy", ".ads.npy")  # a packed part's (`PackedKeys`)
ID_SUFFIXES = (".offsets.npy", ".chars.npy")  # an ad_id list's files (UTF-8 bytes and their offsets)


def key_directory(index_path: Path) -> Path:
    """The folder of decoded key parts of the index at `index_path` (`ads.jdx-keys`)."""
    return index_path.with_name(index_path.name + "-keys")


def save_arrays(
    directory: Path,
    name: str,
    arrays: tuple[np.ndarray, ...],
    suffixes: tuple[str, ...],
    replace: bool = False,
) -> None:
    """Write `arrays` as `name`'s files, one per suffix, the first last (a whole first file implies
    whole others). A failed write (a full disk) leaves nothing: the arrays are then held in memory.

    A file another process published meanwhile is kept (`replace`: overwritten, for a broken one):
    the service's workers and writer decode the same parts at once when they start, and a file
    replaced under a process that had mapped it left that process holding its own copy of the
    part's pages (PSS +200-450 MB per worker at 1,000,000 ads)."""
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
        for suffix, values in zip(reversed(suffixes), reversed(arrays)):
            temporary = directory / f".{name}{suffix}.{os.getpid()}.tmp"
            try:
                with temporary.open("wb") as handle:
                    np.save(handle, np.ascontiguousarray(values))
                if replace:
                    os.replace(temporary, directory / (name + suffix))
                else:
                    with contextlib.suppress(FileExistsError):
                        os.link(temporary, directory / (name + suffix))  # (atomic; never over a file)
            finally:
                temporary.unlink(missing_ok=True)


def map_arrays(directory: Path, name: str, suffixes: tuple[str, ...]) -> tuple[np.ndarray, ...] | None:
    """`name`'s arrays, memory-mapped read-only from its files; None if one is missing or broken."""
    try:
        return tuple(np.load(directory / (name + suffix), mmap_mode="r") for suffix in suffixes)
    except (OSError, ValueError):
        return None


def shared_arrays(
    directory: Path, name: str, suffixes: tuple[str, ...], make: Callable[[], tuple[np.ndarray, ...]]
) -> tuple[tuple[np.ndarray, ...], bool]:
    """`name`'s arrays and whether they are mapped from `directory`'s files: the files are written
    from `make()` first if absent (again if broken); `make()`'s arrays in memory if they cannot be."""
    found = map_arrays(directory, name, suffixes)
    if found is not None:
        return found, True
    made = make()
    for replace in (False, True):
        save_arrays(directory, name, made, suffixes, replace=replace)
        found = map_arrays(directory, name, suffixes)
        if found is not None:
            return found, True
    return made, False


def drop_stale_parts(directory: Path, used: set[str]) -> None:
    """Remove the files of parts not in `used` that are older than `STALE_SECONDS` (other
    processes may still map them: their mappings stay valid)."""
    limit = time.time() - STALE_SECONDS
    with contextlib.suppress(OSError):
        for path in directory.iterdir():
            part = path.name.lstrip(".").split(".")[0]  # (".name…tmp": a write in progress or broken off)
            with contextlib.suppress(OSError):
                found = path.stat()
                if part and part not in used and found.st_mtime < limit and not stat.S_ISDIR(found.st_mode):
                    path.unlink()  # (a folder is not a part: the service's `serving/` board)
