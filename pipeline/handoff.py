"""Numpy arrays from worker processes to the parent through files instead of the result pipe.

A result sent back by a worker (joblib's loky backend, multiprocessing's pipe) is read by the
parent 64 KB at a time into a growing buffer and then copied out again by unpickling: for the
~200 MB of shingle sets and signatures of a 50,000-ad slice that is ~300,000 page faults in the
parent, while the worker waits on the pipe. With `park`, the worker writes each array to a file
in a folder the parent made (`handoff_folder`: tmpfs where there is one) and sends only its name;
`unpark` maps the file in the parent, so the array is read once, when it is copied into its
final place (e.g. concatenated with the other slices).

Example:
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     unpark(park(np.arange(3), folder)).tolist()
    [0, 1, 2]
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

T = TypeVar("T")

SHARED_MEMORY = Path("/dev/shm")  # tmpfs on Linux: files in memory, no disk writes


@dataclass(frozen=True)
class FileArray:
    """A C-contiguous array a worker wrote to `path` (raw bytes, as `ndarray.tofile` writes them)."""

    path: str
    dtype: str
    shape: tuple[int, ...]

    def load(self) -> np.ndarray:
        """The array, mapped read-only from its file; the file's name is removed at once (the
        mapping keeps its pages until the array is freed)."""
        try:
            if not int(np.prod(self.shape)):
                return np.empty(self.shape, dtype=self.dtype)
            return np.asarray(np.memmap(self.path, dtype=self.dtype, mode="r", shape=self.shape))
        finally:
            os.unlink(self.path)


def handoff_folder() -> tempfile.TemporaryDirectory:
    """A new temporary folder for parked arrays, in shared memory where the system has it."""
    shared = SHARED_MEMORY.is_dir() and os.access(SHARED_MEMORY, os.W_OK)
    return tempfile.TemporaryDirectory(prefix="jobdedup-", dir=SHARED_MEMORY if shared else None)


def park(value: T, folder: str) -> T:
    """`value` with every numpy array in it (itself, or a field of a dataclass in it, at any
    depth) written to a file in `folder` and replaced by its `FileArray`; arrays of Python objects
    and other values stay as they are."""
    if isinstance(value, np.ndarray) and not value.dtype.hasobject:
        array = np.ascontiguousarray(value)
        fd, path = tempfile.mkstemp(suffix=".bin", dir=folder)
        with os.fdopen(fd, "wb") as out:
            array.tofile(out)
        return FileArray(path=path, dtype=array.dtype.str, shape=array.shape)  # type: ignore[return-value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: park(getattr(value, f.name), folder) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)  # type: ignore[return-value]
    return value


def unpark(value: T) -> T:
    """`value` with every `FileArray` that `park` put in it loaded back (see `FileArray.load`)."""
    if isinstance(value, FileArray):
        return value.load()  # type: ignore[return-value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: unpark(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)  # type: ignore[return-value]
    return value
