"""Large arrays and tables between processes through files instead of the pipe.

A value sent through a pipe (joblib's loky backend, multiprocessing) is pickled into a buffer,
read by the other side 64 KB at a time into a growing buffer and copied out again by unpickling:
for the ~200 MB of shingle sets and signatures of a 50,000-ad slice that is ~300,000 page faults in
the receiving process, while the sender waits on the pipe. With `park`, the sender writes each
numpy array (raw) and each table of Arrow text columns (Arrow IPC: a slice's texts, ~160 MB) to a
file in a folder the parent made (`handoff_folder`: tmpfs where there is one) and sends only its
name; `unpark` maps the file in the receiver, so the data is read once, where it is used.

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
import pandas as pd
import pyarrow as pa

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


@dataclass(frozen=True)
class FileFrame:
    """A DataFrame of Arrow-backed text columns written to `path` (Arrow IPC, with its index)."""

    path: str

    def load(self) -> pd.DataFrame:
        """The table, its texts mapped from the file (no copy); the file's name is removed at once."""
        try:
            return pa.ipc.open_file(pa.memory_map(self.path)).read_all().to_pandas()
        finally:
            os.unlink(self.path)


def _is_arrow_text(frame: pd.DataFrame) -> bool:
    """Whether every column holds Arrow-backed text (which Arrow IPC gives back with its dtype)."""
    return all(isinstance(t, pd.StringDtype) and t.storage == "pyarrow" for t in frame.dtypes)


def handoff_folder() -> tempfile.TemporaryDirectory[str]:
    """A new temporary folder for parked arrays, in shared memory where the system has it."""
    shared = SHARED_MEMORY.is_dir() and os.access(SHARED_MEMORY, os.W_OK)
    return tempfile.TemporaryDirectory(prefix="jobdedup-", dir=SHARED_MEMORY if shared else None)


def park(value: T, folder: str) -> T:
    """`value` with every numpy array and table of Arrow text columns in it (itself, or a field of
    a dataclass in it, at any depth) written to a file in `folder` and replaced by its `FileArray`
    or `FileFrame`; arrays of Python objects, other tables and other values stay as they are."""
    if isinstance(value, np.ndarray) and not value.dtype.hasobject:
        array = np.ascontiguousarray(value)
        fd, path = tempfile.mkstemp(suffix=".bin", dir=folder)
        with os.fdopen(fd, "wb") as out:
            array.tofile(out)
        return FileArray(path=path, dtype=array.dtype.str, shape=array.shape)  # type: ignore[return-value]
    if isinstance(value, pd.DataFrame) and _is_arrow_text(value):
        table = pa.Table.from_pandas(value, preserve_index=None)
        fd, path = tempfile.mkstemp(suffix=".arrow", dir=folder)
        with os.fdopen(fd, "wb") as out, pa.ipc.new_file(out, table.schema) as writer:
            writer.write_table(table)
        return FileFrame(path=path)  # type: ignore[return-value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: park(getattr(value, f.name), folder) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)
    return value


def unpark(value: T) -> T:
    """`value` with every `FileArray` and `FileFrame` that `park` put in it loaded back."""
    if isinstance(value, FileArray | FileFrame):
        return value.load()  # type: ignore[return-value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: unpark(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changes)
    return value
