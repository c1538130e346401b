"""The review page's answers: appended to a labels CSV in the format `jobdedup label` writes.

Columns `ad_id_a`, `ad_id_b`, `label`, then `sample` (`accepted` for the uniform sample of accepted
pairs, empty otherwise), `dup_type` (the reader's type of a duplicate, optional) and `reason`
(free text). Every answer is written, flushed and fsynced before the page hears back; a lock (a
thread lock and `flock` on `LABELS.lock`) keeps two tabs or two processes from interleaving. An
answer to a pair already answered replaces the earlier row (`LabelsFile.remove_last`), so the
file never holds two labels for one pair. `u` (unsure) writes nothing, as in `jobdedup label`.

Example:
    >>> # store = LabelStore(Path("my_labels.csv"))
    >>> # store.answer("a1", "a2", 1, sample="accepted", dup_type="FULL", reason="same text")
"""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from jobdedup.models.dup_types import DUP_TYPES
from jobdedup.pipeline.errors import JobdedupError
from jobdedup.pipeline.label_loop import HEADER, LabelsFile

EXTRA = ("sample", "dup_type", "reason")
SAMPLE_VALUES = ("", "accepted")
MAX_REASON = 2000


class LabelStore:
    """A labels CSV the review page appends to, safely from several threads and processes.

    Args:
        path: the CSV (created with the header `ad_id_a,ad_id_b,label,sample,dup_type,reason` if absent;
            an existing file must be in pairs form; columns it lacks are not written).
    """

    def __init__(self, path: Path) -> None:
        if path.suffix.lower() != ".csv":
            raise JobdedupError(f"{path}: the review page writes labels as CSV; give a .csv file")
        self.path = path
        self._thread_lock = threading.Lock()
        with self._locked():
            existing = path.exists() and path.stat().st_size > 0
            self.file = LabelsFile(path) if existing else LabelsFile(path, extra=EXTRA)
        self.missing = [column for column in EXTRA if column not in self.file.header]

    @contextmanager
    def _locked(self) -> Iterator[None]:
        lock_path = self.path.with_name(self.path.name + ".lock")
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with self._thread_lock, lock_path.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def answer(
        self, id_a: str, id_b: str, label: int, sample: str = "", dup_type: str = "", reason: str = ""
    ) -> None:
        """Write one answer (replacing an earlier one for the pair), flushed and fsynced."""
        if label not in (0, 1):
            raise JobdedupError(f"label must be 0 or 1, got {label!r}")
        if not id_a or not id_b or id_a == id_b:
            raise JobdedupError("an answer needs two different ad_ids")
        if sample not in SAMPLE_VALUES:
            raise JobdedupError(f"sample must be one of {SAMPLE_VALUES}, got {sample!r}")
        dup_type = dup_type.strip().upper()
        if dup_type and (dup_type not in DUP_TYPES or label == 0):
            raise JobdedupError(f"dup_type must be empty or, for label 1, one of {', '.join(DUP_TYPES)}")
        reason = " ".join(reason.split())[:MAX_REASON]
        low, high = sorted((id_a, id_b))
        with self._locked():
            if frozenset((low, high)) in self._known():
                self.file.remove_last(low, high)
            self.file.append(low, high, label, sample=sample, dup_type=dup_type, reason=reason)

    def _known(self) -> set[frozenset[str]]:
        """The pairs in the file now (another process may have written since this one read it)."""
        table = self.table()
        return {frozenset(pair) for pair in zip(table["ad_id_a"], table["ad_id_b"])}

    def table(self) -> pd.DataFrame:
        """The file's rows as text (`ad_id_a`, `ad_id_b`, `label` and the extra columns it has)."""
        rows = self.file.read_rows()
        header = rows[0] if rows else list(HEADER)
        body = [row + [""] * (len(header) - len(row)) for row in rows[1:] if row]
        return pd.DataFrame([row[: len(header)] for row in body], columns=header, dtype="string").fillna("")

    def answers(self) -> dict[str, dict[str, str]]:
        """Every answer by pair key `"ad_id_a|ad_id_b"` (ids sorted): label, sample, dup_type, reason."""
        out = {}
        for row in self.table().to_dict(orient="records"):
            low, high = sorted((row["ad_id_a"], row["ad_id_b"]))
            out[f"{low}|{high}"] = {k: row.get(k, "") for k in ("label", *EXTRA)}
        return out


__all__ = ["EXTRA", "LabelStore"]
