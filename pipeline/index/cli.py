"""`jobdedup index add | stats | remove | groups`: the command line of the incremental index."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from jobdedup.pipeline.errors import JobdedupError


def add_index_parser(
    commands: argparse._SubParsersAction, common: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Register the `index` command group on the main parser's subcommands."""
    index = commands.add_parser(
        "index",
        help="incremental index: add each new batch, scored against every ad seen before",
        description="A persistent index (one SQLite file) of every ad added so far. `add` matches a new batch "
        "within itself and against the index, groups it (group ids already given out stay stable; two old "
        "groups joined by a new ad are merged under the older id and reported) and adds it in one transaction.",
    )
    actions = index.add_subparsers(dest="index_command", required=True, metavar="ACTION")

    add = actions.add_parser(
        "add",
        help="match a batch against the index and add it",
        description="Writes OUT/pairs.parquet (candidate pairs with a new ad: ad_id_a, ad_id_b, probability, "
        "is_duplicate, via_lsh, via_fields, b_in_index), OUT/groups.parquet (every input ad: ad_id, group_id, "
        "group_size, status, existing_group) and OUT/merges.parquet (group_id kept, merged_group_id, ads_moved). "
        "Ads whose ad_id is already in the index are skipped (status already_indexed); adding a batch twice "
        "changes nothing. The index is created if absent and refuses a model with other sketch parameters.",
    )
    add.add_argument("--index", type=Path, required=True, help="index file (created if absent)")
    add.add_argument("--ads", type=Path, required=True, help="new ads (.csv, .jsonl or .parquet)")
    add.add_argument("--model", type=Path, default=None, help="model file (default: the bundled model)")
    add.add_argument("--out", type=Path, default=None, help="output folder (default: write no files)")
    _wait(add)
    common(add)

    stats = actions.add_parser(
        "stats",
        help="ads, groups, size on disk and the largest groups",
        description="Prints what the index holds; reads the last committed state, even while a writer works.",
    )
    stats.add_argument("--index", type=Path, required=True, help="index file")
    stats.add_argument(
        "--top", type=int, default=10, help="how many of the largest groups to list (default 10)"
    )
    stats.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    common(stats)

    remove = actions.add_parser(
        "remove",
        help="remove ads (e.g. expired ones) from the index",
        description="IDS is a table with an ad_id column (.csv, .jsonl, .parquet) or a text file with one ad_id "
        "per line. The other members of their groups keep their group ids.",
    )
    remove.add_argument("--index", type=Path, required=True, help="index file")
    remove.add_argument("--ids", type=Path, required=True, help="ads to remove")
    _wait(remove)
    common(remove)

    groups = actions.add_parser(
        "groups",
        help="write every indexed ad with its group",
        description="Writes OUT (.parquet, .csv or .jsonl): ad_id, group_id, group_size for every ad in the index.",
    )
    groups.add_argument("--index", type=Path, required=True, help="index file")
    groups.add_argument("--out", type=Path, required=True, help="output table")
    common(groups)


def _wait(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for another process writing to the index (default 60)",
    )


def cmd_index(args: argparse.Namespace) -> int:
    """Run `jobdedup index ACTION`."""
    return {"add": _add, "stats": _stats, "remove": _remove, "groups": _groups}[args.index_command](args)


def _add(args: argparse.Namespace) -> int:
    from jobdedup.pipeline.index.core import Index
    from jobdedup.pipeline.io import read_ads, write_table
    from jobdedup.pipeline.model_files import model_from_args

    model = model_from_args(args)
    ads = read_ads(args.ads, model.config.max_description_chars)
    with Index.open(args.index, timeout=args.wait) as index:
        result = index.add(ads, model)
    info = result.report
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        write_table(result.pairs, args.out / "pairs.parquet")
        write_table(result.groups, args.out / "groups.parquet")
        write_table(result.merges, args.out / "merges.parquet")
        where = f"; wrote pairs.parquet, groups.parquet and merges.parquet to {args.out}"
    else:
        where = "; no --out given, no files written"
    if info.get("new_ads", 0) == 0:
        print(f"nothing to add: all {len(result.skipped)} ads are already in {args.index}{where}")
        return 0
    print(
        f"added {info['new_ads']} ads to {args.index} ({len(result.skipped)} already there, skipped); "
        f"{info['within_pairs']} pairs within the batch, {info['index_pairs']} against the index; "
        f"{info['duplicate_pairs']} duplicate pairs, {info['joined_existing_groups']} ads joined existing groups, "
        f"{info['merges']} groups merged{where}"
    )
    return 0


def _stats(args: argparse.Namespace) -> int:
    from jobdedup.pipeline.index.core import Index

    with Index.open(args.index, read_only=True) as index:
        figures = index.stats(top=args.top)
    size = figures["size_bytes"]
    print(f"index            {args.index}")
    print(f"ads              {figures['ads']}")
    print(f"groups           {figures['groups']} ({figures['ads_with_duplicates']} ads have a duplicate)")
    print(f"batches          {figures['batches']} ({figures['merges']} group merges)")
    print(
        f"size on disk     {size / 1e6:.1f} MB"
        + (f" ({figures['bytes_per_ad']} bytes per ad)" if figures["bytes_per_ad"] else "")
    )
    print(f"sketch           {figures['sketch']}")
    if figures["largest_groups"]:
        print("largest groups")
        for group in figures["largest_groups"]:
            print(f"  {group['size']:>6}  {group['group_id']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True, default=str) + "\n")
    return 0


def _read_ids(path: Path) -> list[str]:
    if not path.exists():
        raise JobdedupError(f"{path}: no such file; give a table with an ad_id column or one ad_id per line")
    if path.suffix.lower() in (".txt", ".ids", ""):
        return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    from jobdedup.pipeline.io import read_table

    table = read_table(path)
    if "ad_id" not in table.columns:
        raise JobdedupError(f"{path}: no ad_id column (columns: {', '.join(map(str, table.columns[:10]))})")
    return table["ad_id"].dropna().astype(str).tolist()


def _remove(args: argparse.Namespace) -> int:
    from jobdedup.pipeline.index.core import Index

    ids = _read_ids(args.ids)
    with Index.open(args.index, timeout=args.wait) as index:
        outcome = index.remove(ids)
    print(
        f"removed {outcome['removed']} ads from {args.index} ({outcome['not_found']} not in the index); "
        f"{outcome['groups_emptied']} groups emptied"
    )
    return 0


def _groups(args: argparse.Namespace) -> int:
    from jobdedup.pipeline.index.core import Index
    from jobdedup.pipeline.io import write_table

    with Index.open(args.index, read_only=True) as index:
        table = index.groups()
    write_table(table, args.out)
    print(
        f"wrote {len(table)} ads in {table['group_id'].nunique() if len(table) else 0} groups to {args.out}",
        file=sys.stdout,
    )
    return 0


__all__ = ["add_index_parser", "cmd_index"]
