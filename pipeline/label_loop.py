"""A terminal labelling loop (`jobdedup label`): active learning as in dedupe's console labeller,
and uniform samples for measuring precision on a user's own crawl.

The model scores every candidate pair of ADS; the pairs it is least sure about (probability
nearest its threshold) that LABELS does not hold yet are shown one by one, side by side, with the
words the two ads do not share highlighted (ANSI colours, only when stdout is a terminal). With
`--sample accepted` it shows instead a uniform random sample of the pairs the model accepts (every
pair of ads in one final group), with `--sample uncertain` one of the candidate pairs it scored
between 0.1 and 0.9; answers then carry a `sample` column, from which `jobdedup evaluate`
estimates the precision of the accepted pairs with a 95 % interval. Answers:
`y` same vacancy, `n` different, `u` unsure (skipped, not written), `b` back (the previous pair
again; its written answer is taken out of LABELS until answered anew), `q` quit. Every `y` / `n`
is appended to LABELS (pairs form: `ad_id_a`, `ad_id_b`, `label`) and flushed to disk at once,
so Ctrl-C loses nothing. With `--retrain MODEL_OUT` the loop offers at the end to train a new
model on the bundled training data pooled with ADS + LABELS.

Example:
    >>> # jobdedup label --ads new_ads.csv --labels my_labels.csv --retrain my_model.json
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from jobdedup.pipeline.errors import JobdedupError
from jobdedup.pipeline.io import csv_delimiter

if TYPE_CHECKING:
    from jobdedup.pipeline.engine import Deduplicator

HEADER = ["ad_id_a", "ad_id_b", "label"]
SAMPLES = ("accepted", "uncertain")
UNCERTAIN_BAND = (0.1, 0.9)
"""Probabilities of the candidate pairs `--sample uncertain` draws from."""
SHOWN_FIELDS = ("title", "company", "location", "posted_at", "source")
PROMPT = "Same vacancy? (y)es / (n)o / (u)nsure / (b)ack / (q)uit > "
_RESET, _DIFF, _FIELD_DIFF, _DIM, _BOLD = "\x1b[0m", "\x1b[33m", "\x1b[31m", "\x1b[2m", "\x1b[1m"


# ---------------------------------------------------------------------------------- labels file
class LabelsFile:
    """A pairs-form labels CSV that is appended to and flushed after every answer.

    A new file is comma-separated; an existing one keeps its separator (`;` or tab when its header
    line says so, as `read_labels` reads it).
    """

    def __init__(self, path: str | os.PathLike[str], extra: tuple[str, ...] = ()) -> None:
        self.path = Path(path)
        self.header = [*HEADER, *extra]
        self.known: set[frozenset[str]] = set()
        self.delimiter = ","
        if self.path.exists() and self.path.stat().st_size > 0:
            rows = self.read_rows()
            if not rows or any(column not in rows[0] for column in HEADER):
                raise JobdedupError(
                    f"{self.path}: not a pairs labels file (needs the columns {', '.join(HEADER)}); "
                    "give a new file name or a labels file in pairs form"
                )
            missing = [column for column in extra if column not in rows[0]]
            if missing:
                raise JobdedupError(
                    f"{self.path}: has no {', '.join(missing)} column; write a sample's labels to a new file"
                )
            self.header = rows[0]
            a, b = self.header.index("ad_id_a"), self.header.index("ad_id_b")
            self.known = {frozenset((row[a], row[b])) for row in rows[1:] if len(row) > max(a, b)}
            with self.path.open("rb") as handle:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) not in (b"\n", b"\r"):
                    self._write_raw("\n")
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write_raw(",".join(self.header) + "\n", mode="w")

    def read_rows(self) -> list[list[str]]:
        """Every row of the file, the header first (its delimiter detected and remembered)."""
        data = self.path.read_bytes()
        self.delimiter = csv_delimiter(data)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise JobdedupError(
                f"{self.path}: not UTF-8 text (byte {error.start}); save it as UTF-8 or give a new file name"
            ) from None
        return list(csv.reader(io.StringIO(text, newline=""), delimiter=self.delimiter))

    def _write_raw(self, text: str, mode: str = "a") -> None:
        with self.path.open(mode, encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())

    def _row(self, id_a: str, id_b: str, label: int, extra: dict[str, str]) -> list[str]:
        values = {"ad_id_a": id_a, "ad_id_b": id_b, "label": str(label), **extra}
        return [values.get(column, "") for column in self.header]

    def append(self, id_a: str, id_b: str, label: int, **extra: str) -> None:
        """Write one answer (and its extra columns, e.g. `sample`) and flush it to disk."""
        with self.path.open("a", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, delimiter=self.delimiter, lineterminator="\n")
            writer.writerow(self._row(id_a, id_b, label, extra))
            handle.flush()
            os.fsync(handle.fileno())
        self.known.add(frozenset((id_a, id_b)))

    def remove_last(self, id_a: str, id_b: str) -> None:
        """Take the last row for this pair out of the file (atomically: temp file, then rename)."""
        rows = self.read_rows()
        a, b = self.header.index("ad_id_a"), self.header.index("ad_id_b")
        for k in range(len(rows) - 1, 0, -1):
            if len(rows[k]) > max(a, b) and frozenset((rows[k][a], rows[k][b])) == frozenset((id_a, id_b)):
                del rows[k]
                break
        temporary = self.path.with_name(self.path.name + ".tmp")
        with temporary.open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle, delimiter=self.delimiter, lineterminator="\n").writerows(rows)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)
        self.known.discard(frozenset((id_a, id_b)))


# ---------------------------------------------------------------------------------- choosing pairs
def _not_known(pairs: pd.DataFrame, known: set[frozenset[str]]) -> np.ndarray:
    """Row mask of the pairs LABELS does not hold yet (an array: indexing a frame with an empty
    *list* would select no columns instead of no rows)."""
    ids = zip(pairs["ad_id_a"].astype(str), pairs["ad_id_b"].astype(str))
    return np.fromiter((frozenset(pair) not in known for pair in ids), dtype=bool, count=len(pairs))


def uncertain_pairs(pairs: pd.DataFrame, threshold: float, known: set[frozenset[str]]) -> pd.DataFrame:
    """Candidate pairs not labelled yet, the most uncertain (probability nearest the threshold) first.

    Example:
        >>> frame = pd.DataFrame({"ad_id_a": ["a", "b"], "ad_id_b": ["c", "c"], "probability": [0.9, 0.45]})
        >>> uncertain_pairs(frame, 0.5, set())["ad_id_a"].tolist()
        ['b', 'a']
    """
    fresh = pairs[_not_known(pairs, known)].copy()
    fresh["uncertainty"] = (fresh["probability"] - threshold).abs()
    return fresh.sort_values(["uncertainty", "ad_id_a", "ad_id_b"], kind="stable").reset_index(drop=True)


def sample_accepted(groups: pd.DataFrame, size: int, seed: int, known: set[frozenset[str]]) -> pd.DataFrame:
    """A uniform random sample (without replacement) of the pairs of ads that share a final group,
    leaving out pairs LABELS already holds: `ad_id_a`, `ad_id_b`. Big groups weigh by their pairs.

    Example:
        >>> groups = pd.DataFrame({"ad_id": ["a", "b", "c", "d"], "group_id": ["a", "a", "a", "d"]})
        >>> len(sample_accepted(groups, 10, seed=1, known=set()))
        3
    """
    members = groups.sort_values(["group_id", "ad_id"], kind="stable")
    ids = members["ad_id"].astype(str).to_numpy()
    sizes = members.groupby("group_id", sort=False).size().to_numpy()
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pairs_per_group = sizes * (sizes - 1) // 2
    total = int(pairs_per_group.sum())
    rng = np.random.default_rng(seed)
    # Draw more than needed so that pairs already labelled can be skipped, then keep `size`.
    drawn = (
        np.sort(rng.choice(total, min(total, size + len(known)), replace=False))
        if total
        else np.zeros(0, int)
    )
    drawn = rng.permutation(drawn)
    ends = np.cumsum(pairs_per_group)
    group = np.searchsorted(ends, drawn, side="right")
    within = drawn - (ends[group] - pairs_per_group[group])
    # Pair number k of a group of n (triangular order: (0,1), (0,2), (1,2), (0,3), ...).
    second = np.floor((1 + np.sqrt(1 + 8 * within)) / 2).astype(np.int64)
    first = within - second * (second - 1) // 2
    a, b = ids[starts[group] + first], ids[starts[group] + second]
    frame = pd.DataFrame({"ad_id_a": np.minimum(a, b), "ad_id_b": np.maximum(a, b)})
    return frame[_not_known(frame, known)].head(size).reset_index(drop=True)


def sample_uncertain(pairs: pd.DataFrame, size: int, seed: int, known: set[frozenset[str]]) -> pd.DataFrame:
    """A uniform random sample of the candidate pairs scored inside `UNCERTAIN_BAND` not labelled yet."""
    low, high = UNCERTAIN_BAND
    band = pairs[pairs["probability"].between(low, high)]
    band = band[_not_known(band, known)]
    return band.sample(n=min(size, len(band)), random_state=seed)[
        ["ad_id_a", "ad_id_b", "probability"]
    ].reset_index(drop=True)


def with_probabilities(sample: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The sample with each pair's probability where it was scored (NaN: grouped through other ads)."""
    scored = (
        pairs.assign(
            key=[frozenset(p) for p in zip(pairs["ad_id_a"].astype(str), pairs["ad_id_b"].astype(str))]
        )
        .drop_duplicates("key")
        .set_index("key")["probability"]
    )
    keys = [frozenset(p) for p in zip(sample["ad_id_a"], sample["ad_id_b"])]
    return sample.assign(probability=scored.reindex(keys).to_numpy())


# ---------------------------------------------------------------------------------- display
def _value(ad: pd.Series, name: str) -> str:
    value = ad.get(name)
    return "" if value is None or pd.isna(value) else " ".join(str(value).split())


def _wrap(words: list[str], marks: list[bool], width: int, color: bool) -> list[tuple[str, int]]:
    """Lines of (text with optional ANSI codes, visible length); unmarked words are highlighted."""
    lines: list[tuple[str, int]] = []
    text, length = "", 0
    for word, shared in zip(words, marks):
        word = word if len(word) <= width else word[: width - 1] + "…"
        extra = len(word) + (1 if length else 0)
        if length and length + extra > width:
            lines.append((text, length))
            text, length, extra = "", 0, len(word)
        shown = word if (shared or not color) else f"{_DIFF}{word}{_RESET}"
        text += (" " if length else "") + shown
        length += extra
    if length or not lines:
        lines.append((text, length))
    return lines


def render_pair(
    ad_a: pd.Series, ad_b: pd.Series, probability: float, width: int, color: bool, max_lines: int
) -> str:
    """Two ads side by side: fields (≠ where they differ), then descriptions, differences highlighted."""
    from jobdedup.pipeline.report import _words, shared_word_mask

    column = max(20, (width - 3) // 2)
    out = [
        (
            f"{_BOLD if color else ''}{_value(ad_a, 'ad_id')}  ~  {_value(ad_b, 'ad_id')}"
            f"{_RESET if color else ''}   "
            + (
                f"(probability {probability:.3f})"
                if not np.isnan(probability)
                else "(grouped through other ads)"
            )
        )
    ]
    for name in SHOWN_FIELDS:
        a, b = _value(ad_a, name), _value(ad_b, name)
        if not a and not b:
            continue
        differs = a.casefold() != b.casefold()
        label = f"{'≠' if differs else ' '}{name}: "
        left = (label + a)[:column].ljust(column)
        right = (label + b)[:column]
        if differs and color:
            left, right = f"{_FIELD_DIFF}{left}{_RESET}", f"{_FIELD_DIFF}{right}{_RESET}"
        out.append(f"{left} | {right}")
    words_a, keys_a = _words(_value(ad_a, "description"))
    words_b, keys_b = _words(_value(ad_b, "description"))
    marks_a = shared_word_mask(keys_a, keys_b)
    marks_b = shared_word_mask(keys_b, keys_a)
    lines_a = _wrap(words_a, marks_a, column, color)
    lines_b = _wrap(words_b, marks_b, column, color)
    share_a = float(np.mean(marks_a)) if marks_a else 0.0
    share_b = float(np.mean(marks_b)) if marks_b else 0.0
    out.append("-" * column + "-+-" + "-" * column)
    for k in range(min(max(len(lines_a), len(lines_b)), max_lines)):
        text_a, len_a = lines_a[k] if k < len(lines_a) else ("", 0)
        text_b, _ = lines_b[k] if k < len(lines_b) else ("", 0)
        out.append(text_a + " " * (column - len_a) + " | " + text_b)
    hidden_a, hidden_b = max(0, len(lines_a) - max_lines), max(0, len(lines_b) - max_lines)
    if hidden_a or hidden_b:
        out.append(f"… {hidden_a} more lines | … {hidden_b} more lines")
    out.append(
        f"shared 5-word runs cover {share_a:.0%} of A's words and {share_b:.0%} of B's"
        + (" (words not shared are highlighted)" if color else "")
    )
    return "\n".join(out)


# ---------------------------------------------------------------------------------- the loop
@dataclass
class Session:
    """What one labelling session did."""

    yes: int = 0
    no: int = 0
    unsure: int = 0
    shown: int = 0
    remaining: int = 0
    quit: bool = False


def run_loop(
    model: Deduplicator,
    ads: pd.DataFrame,
    labels_path: str | os.PathLike[str],
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    color: bool | None = None,
    limit: int | None = None,
    max_lines: int = 15,
    sample: str | None = None,
    size: int = 200,
    seed: int = 1,
) -> Session:
    """Show pairs and record answers until the pairs run out, `limit` answers, or quit.

    Without `sample`, the candidate pairs nearest the threshold come first (active learning); with
    `sample` ("accepted" or "uncertain"), a uniform random sample of `size` such pairs is shown and
    each answer is written with its `sample` column.
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if color is None:
        color = bool(getattr(stdout, "isatty", lambda: False)())
    width = shutil.get_terminal_size((100, 24)).columns
    labels = LabelsFile(labels_path, extra=("sample",) if sample else ())
    written_extra = {"sample": sample} if sample else {}
    result = model.run(ads)
    if sample == "accepted":
        queue = with_probabilities(sample_accepted(result.groups, size, seed, labels.known), result.pairs)
        intro = (
            f"a uniform sample of {len(queue)} accepted pairs (ads in one final group) not labelled yet; "
            "label each, then `jobdedup evaluate` estimates the precision of the accepted pairs."
        )
    elif sample == "uncertain":
        queue = sample_uncertain(result.pairs, size, seed, labels.known)
        intro = f"a uniform sample of {len(queue)} candidate pairs scored between {UNCERTAIN_BAND[0]} and {UNCERTAIN_BAND[1]}."
    else:
        queue = uncertain_pairs(result.pairs, model.threshold_, labels.known)
        intro = f"{len(queue)} candidate pairs not labelled yet; the most uncertain first (threshold {model.threshold_:.3f})."
    rows = pd.Series(np.arange(len(result.batch)), index=result.batch.ads["ad_id"].astype(str).to_numpy())
    session = Session()
    history: list[tuple[int, int | None]] = []  # (queue position, label written or None if unsure)
    position = 0

    def say(text: str = "", end: str = "\n") -> None:
        stdout.write(text + end)
        stdout.flush()

    if sample and queue.empty:
        say(
            f"no {sample} pairs to sample in {len(ads)} ads that {labels.path} does not hold already; nothing to label."
        )
        return session
    say(f"{intro} Answers go to {labels.path}.")
    while position < len(queue):
        if limit is not None and session.yes + session.no >= limit:
            break
        pair = queue.iloc[position]
        id_a, id_b = str(pair["ad_id_a"]), str(pair["ad_id_b"])
        ad_a = result.batch.ads.iloc[int(rows[id_a])]
        ad_b = result.batch.ads.iloc[int(rows[id_b])]
        say()
        say(
            f"[{position + 1}/{len(queue)}] "
            + render_pair(ad_a, ad_b, float(pair["probability"]), width, color, max_lines)
        )
        session.shown += 1
        while True:
            say(PROMPT, end="")
            line = stdin.readline()
            if line == "":  # end of input: stop like quit
                answer = "q"
                say()
                break
            answer = line.strip().lower()[:1]
            if answer in ("y", "n", "u", "b", "q"):
                break
            say("please answer y, n, u, b or q")
        if answer == "q":
            session.quit = True
            break
        if answer == "b":
            if not history:
                say("nothing to go back to")
                continue
            position, written = history.pop()
            previous = queue.iloc[position]
            if written is not None:
                labels.remove_last(str(previous["ad_id_a"]), str(previous["ad_id_b"]))
                session.yes -= written == 1
                session.no -= written == 0
            else:
                session.unsure -= 1
            say("back to the previous pair; its answer will be replaced")
            continue
        if answer == "u":
            session.unsure += 1
            history.append((position, None))
        else:
            label = 1 if answer == "y" else 0
            labels.append(id_a, id_b, label, **written_extra)
            session.yes += label == 1
            session.no += label == 0
            history.append((position, label))
        position += 1
    session.remaining = max(0, len(queue) - position)
    say(
        f"\nthis session: {session.yes} same, {session.no} different, {session.unsure} unsure; "
        f"{len(labels.known)} labelled pairs in {labels.path}"
    )
    return session


def retrain(
    model: Deduplicator, ads: pd.DataFrame, labels_path: Path, model_out: Path, with_bundled: bool = True
) -> Deduplicator:
    """Train a new model on ADS + LABELS (pooled with the bundled training sets, weighed as
    `jobdedup.data.set_weights` says) and save it."""
    from jobdedup.data import TRAINING_SETS, read_sets
    from jobdedup.pipeline.engine import Deduplicator
    from jobdedup.pipeline.io import read_labels

    ads_sets = [ads]
    label_sets = [read_labels(labels_path, ads=ads)]
    weights = [1.0]  # (the user's own labels, on the crawl the model is for, count in full)
    if with_bundled:
        bundled_ads, bundled_labels, bundled_weights = read_sets(TRAINING_SETS)
        ads_sets += bundled_ads
        label_sets += bundled_labels
        weights += bundled_weights
    new_model = Deduplicator(model.config).fit(ads_sets, label_sets, weights=weights)
    new_model.save(model_out)
    return new_model


# ---------------------------------------------------------------------------------- command line
def add_label_parser(commands: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register `jobdedup label` on the CLI's sub-parsers."""
    label = commands.add_parser(
        "label",
        help="label the most uncertain candidate pairs in the terminal (active learning)",
        description="Shows the candidate pairs of ADS the model is least sure about, side by side, and "
        "appends each answer (y same vacancy / n different) to LABELS at once; u skips (unsure, not "
        "written), b goes back and replaces the last answer, q quits. With --retrain, offers at the end "
        "to train a new model on the bundled training data pooled with ADS + LABELS.",
    )
    label.add_argument("--ads", type=Path, required=True, help="ads file (.csv, .jsonl or .parquet)")
    label.add_argument("--model", type=Path, default=None, help="model file (default: the bundled model)")
    label.add_argument(
        "--labels", type=Path, required=True, help="pairs labels CSV to append to (created if absent)"
    )
    label.add_argument("--limit", type=int, default=None, help="stop after this many y/n answers")
    label.add_argument(
        "--sample",
        choices=SAMPLES,
        default=None,
        help="show a uniform random sample instead of the most uncertain pairs: 'accepted' = pairs of ads "
        "in one final group (to estimate precision with `jobdedup evaluate`), 'uncertain' = candidate "
        "pairs scored between 0.1 and 0.9; answers get a `sample` column",
    )
    label.add_argument("--size", type=int, default=200, help="pairs in the sample (default 200)")
    label.add_argument("--lines", type=int, default=15, help="description lines shown per ad (default 15)")
    label.add_argument(
        "--retrain", type=Path, default=None, metavar="MODEL_OUT", help="offer to retrain and save here"
    )
    label.add_argument(
        "--labels-only",
        action="store_true",
        help="retrain on ADS + LABELS alone, without pooling the bundled training data",
    )
    label.add_argument("--force", action="store_true", help="let --retrain overwrite an existing file")
    common(label)


def cmd_label(args: argparse.Namespace) -> int:
    """Run `jobdedup label`."""
    from jobdedup.pipeline.io import read_ads
    from jobdedup.pipeline.model_files import model_from_args

    if args.retrain and args.retrain.exists() and not args.force:
        raise JobdedupError(f"{args.retrain}: exists; pass --force to let --retrain overwrite it")
    if args.labels.suffix.lower() != ".csv":
        raise JobdedupError(f"{args.labels}: the labelling loop writes CSV; give a .csv file")
    model = model_from_args(args)
    ads = read_ads(args.ads, model.config.max_description_chars)
    run_loop(
        model,
        ads,
        args.labels,
        limit=args.limit,
        max_lines=args.lines,
        sample=args.sample,
        size=args.size,
        seed=model.config.seed,
    )
    if args.retrain:
        print(f"Retrain with {args.labels} and save to {args.retrain}? [y/N] ", end="", flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer.startswith("y"):
            new_model = retrain(model, ads, args.labels, args.retrain, with_bundled=not args.labels_only)
            print(f"retrained: threshold {new_model.threshold_:.4f}; saved {args.retrain}")
        else:
            print("not retrained")
    return 0
