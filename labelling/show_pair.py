"""Print pairs of real ads in full for a reader who judges them (plain text, one ad after the other).

    python -m labelling.show_pair --ads ../shared/data/real_ads.parquet --batch out/judging/batch_0.csv --from 0 --count 10
    python -m labelling.show_pair --ads ../shared/data/real_ads.parquet ID_A ID_B

Every field of both ads, then description A in full (HTML turned into text), then description B:
in full, or — when B is mostly A's words in A's order — as A's text with every difference marked
(`[-only in A-]`, `{+only in B+}`), so that a reader sees all of B without reading the shared text
twice. Nothing of the model's view (probability, features) is shown.
"""

from __future__ import annotations

import argparse
import difflib
import textwrap
from pathlib import Path

import pandas as pd

from jobdedup.pipeline.clean import html_to_text
from jobdedup.pipeline.io.contract import ADS_COLUMNS

FIELDS = [column for column in ADS_COLUMNS if column != "description"]
DIFF_MIN_RATIO = 0.6
WIDTH = 110


def _text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        return ""
    return html_to_text(value).strip()


def _wrapped(text: str) -> str:
    lines = []
    for line in text.splitlines():
        lines.extend(textwrap.wrap(line, WIDTH) or [""])
    return "\n".join(lines)


def _diff(a: str, b: str) -> str | None:
    """B written as A with its differences marked, when B is mostly A; else None."""
    words_a, words_b = a.split(), b.split()
    matcher = difflib.SequenceMatcher(None, words_a, words_b, autojunk=False)
    if matcher.ratio() < DIFF_MIN_RATIO:
        return None
    out: list[str] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            span = words_a[a0:a1]
            out.append(
                " ".join(span) if len(span) <= 24 else " ".join(span[:8]) + " … " + " ".join(span[-8:])
            )
            continue
        if a1 > a0:
            out.append("[-" + " ".join(words_a[a0:a1]) + "-]")
        if b1 > b0:
            out.append("{+" + " ".join(words_b[b0:b1]) + "+}")
    return " ".join(out)


def render(ad_a: pd.Series, ad_b: pd.Series) -> str:
    """The pair as plain text: fields, description A, description B (or its difference from A)."""
    out = []
    for name in FIELDS:
        a = "" if pd.isna(ad_a.get(name)) else str(ad_a.get(name))
        b = "" if pd.isna(ad_b.get(name)) else str(ad_b.get(name))
        mark = "=" if a == b else "≠"
        out.append(f"{mark} {name:10s} A: {a}")
        out.append(f"  {'':10s} B: {b}")
    text_a, text_b = _text(ad_a.get("description")), _text(ad_b.get("description"))
    out.append(f"--- description A ({len(text_a):,} characters) ---")
    out.append(_wrapped(text_a) if text_a else "(no description)")
    if text_b and text_a and " ".join(text_a.split()) == " ".join(text_b.split()):
        out.append(f"--- description B ({len(text_b):,} characters): identical to A (whitespace aside) ---")
        return "\n".join(out)
    diff = _diff(text_a, text_b) if text_a and text_b else None
    if diff is not None:
        out.append(
            f"--- description B ({len(text_b):,} characters) as A's text with differences: "
            "[-only in A-] {+only in B+}; long shared runs shortened with … ---"
        )
        out.append(_wrapped(diff))
    else:
        out.append(f"--- description B ({len(text_b):,} characters) ---")
        out.append(_wrapped(text_b) if text_b else "(no description)")
    return "\n".join(out)


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ads", type=Path, required=True)
    parser.add_argument("--batch", type=Path, default=None, help="CSV with pair_id, ad_id_a, ad_id_b")
    parser.add_argument("--from", dest="start", type=int, default=0, help="first row of the batch")
    parser.add_argument("--count", type=int, default=5)
    parser.add_argument("ids", nargs="*", help="or: two ad ids")
    args = parser.parse_args()
    ads = pd.read_parquet(args.ads).set_index("ad_id", drop=False)
    if args.batch is not None:
        batch = pd.read_csv(args.batch, dtype=str).iloc[args.start : args.start + args.count]
        pairs = list(zip(batch["pair_id"], batch["ad_id_a"], batch["ad_id_b"]))
    else:
        pairs = [("pair", args.ids[0], args.ids[1])]
    for pair_id, id_a, id_b in pairs:
        print(f"\n========== {pair_id}: {id_a}  ~  {id_b} ==========")
        print(render(ads.loc[id_a], ads.loc[id_b]))


if __name__ == "__main__":
    main()
