"""Draw uniform samples of a model's final groups for readers to read whole, and assemble their
verdicts into the file `benchmarks.quality` counts (`data/group_audit_labels.csv`).

    python -m labelling.draw_group_sample draw --ads ../shared/data/real_ads.parquet --groups out/real/groups.parquet --out out/group_judging
    python -m labelling.draw_group_sample assemble --judging out/group_judging --out data/group_audit_labels.csv

`draw` takes two samples of `dedup`'s `groups.parquet`: `--size` groups drawn uniformly from the
groups of 2+ ads (seed `--seed`) and `--size-large` from those of 3+ ads (seed `--seed-large`).
A group already in the first sample is dropped from the second, and `--skip` leaves out the
groups of an earlier audit file (to read more of them later, numbered from `--start`). Each group is written to
`group_NN.md` with every ad's fields and its description up to `--chars` characters; for a
group of over 8 ads only the first 8 are written in full and the rest by their fields. The
groups and their member ad_ids go to `groups.csv`. Readers write `verdicts_*.csv` with the columns
`group, verdict, odd_ads, employers_mixed, error_class, reason`; the verdicts are those of
`models.group_audit.GROUP_VERDICTS`. `assemble` joins the verdicts to the groups'
`sample` and `ad_ids`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from jobdedup.models.group_audit import check_verdicts

SHOWN_IN_FULL = 8
PAGE_FIELDS = ("title", "company", "location", "posted_at", "url", "source")
LISTED_BY_FIELDS = 22
AUDIT_COLUMNS = ["sample", "ad_ids", "verdict", "odd_ads", "employers_mixed", "error_class", "reason"]


def draw(
    groups: pd.DataFrame,
    size: int,
    seed: int,
    size_large: int,
    seed_large: int,
    skip: frozenset[str] = frozenset(),
    start: int = 0,
) -> pd.DataFrame:
    """The sampled groups: `group` (numbered from `start`), `gid`, `sample` (uniform /
    three_or_more) and `ad_ids` (the members, sorted, joined by ";"). Groups whose `ad_ids` are
    in `skip` (read before) are not drawn."""
    members = groups.groupby("group_id")["ad_id"].apply(lambda ids: ";".join(sorted(ids.astype(str))))
    sizes = groups.groupby("group_id").size()[~members.isin(skip)]
    multi = sizes[sizes >= 2].index.to_numpy()
    uniform = np.random.default_rng(seed).choice(multi, size=min(size, len(multi)), replace=False)
    large = sizes[sizes >= 3].index.to_numpy()
    drawn = np.random.default_rng(seed_large).choice(large, size=min(size_large, len(large)), replace=False)
    drawn = drawn[~np.isin(drawn, uniform)]
    chosen = np.concatenate([uniform, drawn])
    return pd.DataFrame(
        {
            "group": [f"{k:02d}" for k in range(start, start + len(chosen))],
            "gid": chosen,
            "sample": ["uniform"] * len(uniform) + ["three_or_more"] * len(drawn),
            "ad_ids": members.reindex(chosen).to_numpy(),
        }
    )


def group_page(number: str, gid: str, ad_ids: list[str], ads: pd.DataFrame, chars: int) -> str:
    """One group as the readers see it: its ads' fields and descriptions (`ads` indexed by ad_id)."""
    lines = [f"# Group {number} ({gid}): {len(ad_ids)} ads", ""]
    for ad in ad_ids[:SHOWN_IN_FULL]:
        row = ads.loc[ad]
        text = str(row["description"]) if pd.notna(row["description"]) else "(no description)"
        lines += [f"## {ad}", *(f"- {name}: {row[name]}" for name in PAGE_FIELDS), ""]
        lines += [text[:chars] + (f"\n[... cut, {len(text)} chars in all]" if len(text) > chars else ""), ""]
    rest = ad_ids[SHOWN_IN_FULL : SHOWN_IN_FULL + LISTED_BY_FIELDS]
    if rest:
        listed = "; ".join(
            f"{ads.loc[ad, 'title']} | {ads.loc[ad, 'company']} | {ads.loc[ad, 'location']}" for ad in rest
        )
        lines.append(f"(and {len(ad_ids) - SHOWN_IN_FULL} more ads not shown: {listed})")
    return "\n".join(lines) + "\n"


def assemble(judging: Path) -> pd.DataFrame:
    """The readers' verdicts of `judging/groups.csv` as `AUDIT_COLUMNS`."""
    groups = pd.read_csv(judging / "groups.csv", dtype=str)
    verdicts = pd.concat(
        [pd.read_csv(f, dtype=str, keep_default_na=False) for f in sorted(judging.glob("verdicts_*.csv"))],
        ignore_index=True,
    )
    if verdicts["group"].duplicated().any() or set(verdicts["group"]) != set(groups["group"]):
        raise ValueError("verdicts_*.csv: a group read twice, not read, or not in groups.csv")
    check_verdicts(verdicts["verdict"], "verdicts_*.csv")
    read = verdicts[["group", *AUDIT_COLUMNS[2:]]]
    judged = groups.merge(read, on="group", validate="one_to_one")
    return judged[AUDIT_COLUMNS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    drawing = commands.add_parser("draw", help="draw the samples and write one page per group")
    drawing.add_argument("--ads", type=Path, required=True, help="the ads the groups were made of")
    drawing.add_argument("--groups", type=Path, required=True, help="groups.parquet of a dedup run")
    drawing.add_argument("--size", type=int, default=80, help="groups drawn from those of 2+ ads")
    drawing.add_argument("--seed", type=int, default=20261204)
    drawing.add_argument("--size-large", type=int, default=20, help="groups drawn from those of 3+ ads")
    drawing.add_argument("--seed-large", type=int, default=4122026)
    drawing.add_argument("--chars", type=int, default=3500, help="characters of a description shown")
    drawing.add_argument(
        "--skip", type=Path, default=None, help="a group audit file: its groups are not drawn"
    )
    drawing.add_argument("--start", type=int, default=0, help="number of the first group drawn")
    drawing.add_argument("--out", type=Path, required=True, help="folder for the pages and groups.csv")
    assembling = commands.add_parser("assemble", help="join the readers' verdicts into one file")
    assembling.add_argument("--judging", type=Path, required=True, help="the folder `draw` wrote to")
    assembling.add_argument("--out", type=Path, required=True, help="CSV to write")
    args = parser.parse_args()
    if args.command == "assemble":
        audited = assemble(args.judging)
        audited.to_csv(args.out, index=False)
        print(f"{len(audited)} groups read ({audited['verdict'].value_counts().to_dict()}) -> {args.out}")
        return
    from jobdedup.pipeline.io import read_ads

    skip = frozenset(pd.read_csv(args.skip, dtype=str)["ad_ids"]) if args.skip else frozenset()
    groups = pd.read_parquet(args.groups)
    sample = draw(groups, args.size, args.seed, args.size_large, args.seed_large, skip=skip, start=args.start)
    ads = read_ads(args.ads).set_index("ad_id")
    args.out.mkdir(parents=True, exist_ok=True)
    sample.to_csv(args.out / "groups.csv", index=False)
    for row in sample.itertuples():
        page = group_page(row.group, row.gid, row.ad_ids.split(";"), ads, args.chars)
        (args.out / f"group_{row.group}.md").write_text(page, encoding="utf-8")
    print(f"{len(sample)} groups ({(sample['sample'] == 'uniform').sum()} of 2+ ads) under {args.out}")


if __name__ == "__main__":
    main()
