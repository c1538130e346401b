"""Realistic benchmark corpora of 10,000 to 1,000,000 ads, built from the labelled generator's output.

The generator (`labelling.make_labels`, run by `make labels` into `out/labels_full/`) turns the real ads
of `../shared` into ~11,000 ads with reposts and hard negatives. To reach larger sizes, that set is
replicated, each replica r spelling its text fields (description, title, company, contact) with its
own substitution of the letters of each script (Latin, Hebrew, CJK, ...) and of the 10 digits
(`str.translate`, C speed). Within a replica the
duplicate structure is exactly the generator's; across replicas descriptions share no shingle and
titles, employers, e-mails and phone numbers differ, as other vacancies of other employers in a real
crawl do; lengths, HTML, languages and field formats stay those of real ads, and locations are kept,
so every replica meets the same city buckets. What replicas do not model is a real crawl's growing
number of same-title ads per city (those buckets are capped at `max_bucket_size` and become stars).
Earlier versions changed only Latin letters: short titles and company names, every phone number
and all Hebrew, Cyrillic and CJK ads then repeated in all 91 replicas of a million-ad corpus, so
buckets grew with the corpus (16-27 times the candidate pairs of 100,000 ads at 1,000,000).
Version 2 mapped letters across storage widths (an ASCII letter to a Polish one): replica texts
were ~40 % larger in UTF-8 and twice as large as Python strings, which inflated time and memory.

Run: .venv/bin/python -m benchmarks.corpus --size 100000   (writes out/bench/ads_100000_v3.parquet)
"""

from __future__ import annotations

import argparse
import itertools
import string
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "out" / "labels_full"
OUT = ROOT / "out" / "bench"
TEXT_COLUMNS = ["description", "title", "company", "contact"]
CORPUS_VERSION = 3  # 3: substitutions keep each letter's storage width (2: every script, 1: Latin only)


def _letter_groups(ads: pd.DataFrame) -> list[list[str]]:
    """The lower-case (or caseless) letters of the base texts, grouped by script (first word of the
    Unicode name: LATIN, HEBREW, CJK, CYRILLIC...) and by storage width (UTF-8 bytes, and whether
    CPython stores it in one byte), so a substitution keeps every script a script and every text
    its size in bytes and in memory: ASCII letters stay ASCII."""
    seen = set().union(*(set("".join(ads[c].dropna().astype(str))) for c in TEXT_COLUMNS))
    groups: dict[tuple[str, int, bool], list[str]] = {}
    for char in sorted(seen):
        if char.isalpha() and char == char.lower():
            script = unicodedata.name(char, "?").split(" ")[0]
            groups.setdefault((script, len(char.encode()), ord(char) < 0x100), []).append(char)
    return list(groups.values())


def _text_translation(replica: int, letter_groups: list[list[str]]) -> dict[int, int]:
    """A str.translate table for the text fields of replica r: its own substitution of the letters
    within each script (upper case follows lower case, so case folding still agrees) and of the 10
    digits; replica 0 is the generator's text."""
    if replica == 0:
        return {}
    rng = np.random.default_rng(replica)
    table: dict[int, int] = {}
    for letters in [*letter_groups, list(string.digits)]:
        for source, target in zip(letters, rng.permutation(letters), strict=True):
            table[ord(source)] = ord(target)
            upper_source, upper_target = source.upper(), str(target).upper()
            if len(upper_source) == len(upper_target) == 1 and upper_source != source:
                table[ord(upper_source)] = ord(upper_target)
    return table


def base_ads() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The generator's full train + test ads and group labels (needs `make labels`)."""
    if not (LABELLED / "test_labels.parquet").exists():
        raise SystemExit(f"{LABELLED} holds no generated ads: run `make labels` first (it reads ../shared)")
    ads = [pd.read_parquet(LABELLED / f"{split}_ads.parquet") for split in ("train", "test")]
    labels = [pd.read_parquet(LABELLED / f"{split}_labels.parquet") for split in ("train", "test")]
    return pd.concat(ads, ignore_index=True), pd.concat(labels, ignore_index=True)


def build(size: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`size` ads (and their group labels), whole replicas of the base set, cut to size."""
    ads, labels, letter_groups = _shuffled_base(seed)
    parts, label_parts = [], []
    replica, total = 0, 0
    while total < size:
        part, part_labels = replicate(ads.iloc[: size - total], labels, replica, letter_groups)
        parts.append(part)
        label_parts.append(part_labels)
        total += len(part)
        replica += 1
    return pd.concat(parts, ignore_index=True), pd.concat(label_parts, ignore_index=True)


def _shuffled_base(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, list[list[str]]]:
    """The base ads in the order of `seed` (the order of every replica), their labels and letter groups."""
    ads, labels = base_ads()
    letter_groups = _letter_groups(ads)
    ads = ads.iloc[np.random.default_rng(seed).permutation(len(ads))].reset_index(drop=True)
    return ads, labels, letter_groups


def replicate(
    ads: pd.DataFrame, labels: pd.DataFrame, replica: int, letter_groups: list[list[str]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Replica `replica` of base ads `ads` (its text fields respelt, ids and group ids suffixed
    `~replica`) and its group labels."""
    part = ads.copy()
    table = _text_translation(replica, letter_groups)
    for column in TEXT_COLUMNS:
        part[column] = (
            part[column].astype(object).map(lambda v, t=table: v.translate(t) if isinstance(v, str) else v)
        )
    group = part["ad_id"].map(labels.set_index("ad_id")["group_id"])
    part["ad_id"] = part["ad_id"] + f"~{replica}"
    return part, pd.DataFrame({"ad_id": part["ad_id"], "group_id": group + f"~{replica}"})


def fresh_batches(first_replica: int, batch: int, seed: int = 0) -> Iterator[pd.DataFrame]:
    """Endless `batch`-ad slices of replicas `first_replica`, `first_replica + 1`, ... in the order
    `build` gives them: new vacancies to an index of `build`'s first replicas, with the generator's
    reposts among them (a group's ads arrive in one slice or in later ones, as reposts of a crawl do)."""
    ads, labels, letter_groups = _shuffled_base(seed)
    for replica in itertools.count(first_replica):
        part = replicate(ads, labels, replica, letter_groups)[0]
        for start in range(0, len(part), batch):
            yield part.iloc[start : start + batch].reset_index(drop=True)


def corpus_path(size: int) -> Path:
    """Where the corpus of this size is cached."""
    return OUT / f"ads_{size}_v{CORPUS_VERSION}.parquet"


def ensure(size: int) -> Path:
    """Build and cache the corpus of this size unless it exists; return its ads path."""
    path = corpus_path(size)
    if not path.exists():
        ads, labels = build(size)
        path.parent.mkdir(parents=True, exist_ok=True)
        ads.to_parquet(path, index=False, compression="zstd")
        labels.to_parquet(
            path.with_name(path.name.replace("ads_", "labels_", 1)), index=False, compression="zstd"
        )
    return path


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, action="append", required=True, help="number of ads (repeatable)")
    args = parser.parse_args()
    for size in args.size:
        print(ensure(size))


if __name__ == "__main__":
    main()
