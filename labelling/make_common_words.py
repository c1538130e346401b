"""Write `features/common_words.txt`: words that do not identify an employer.

    python -m labelling.make_common_words --ads ../shared/data/real_ads.parquet

A word that the texts of many different employers use ("data", "share", "energy", "london",
"microsoft" as a skill) says nothing about which employer an ad names, so it never counts as a
word of an employer's name (`pipeline.evidence`). Kept: every word (the tokeniser's \\w+ words,
case-folded) found in the descriptions of at least `--min-employers` distinct normalised companies
of the real corpus. The file holds words only, no ad text.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

import pandas as pd

from jobdedup.features.normalize import normalize_company
from jobdedup.pipeline.clean import strip_markup
from labelling import REPO

OUT = REPO / "features" / "common_words.txt"
_WORD = re.compile(r"\w+")


def common_words(ads: pd.DataFrame, min_employers: int) -> list[str]:
    """Words found in the texts of at least `min_employers` distinct companies, sorted."""
    employers: dict[str, set[str]] = defaultdict(set)
    for text, company in zip(ads["description"], normalize_company(ads["company"])):
        if isinstance(text, str) and text.strip() and isinstance(company, str):
            for word in set(_WORD.findall(strip_markup(text).casefold())):
                employers[word].add(company)
    return sorted(word for word, seen in employers.items() if len(seen) >= min_employers)


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ads", type=Path, required=True)
    parser.add_argument("--min-employers", type=int, default=30)
    args = parser.parse_args()
    words = common_words(pd.read_parquet(args.ads), args.min_employers)
    OUT.write_text("\n".join(words) + "\n", encoding="utf-8")
    print(f"{len(words)} words -> {OUT}")


if __name__ == "__main__":
    main()
