"""What the review page reads: a `dedup` output folder (pairs.parquet, groups.parquet) or an
incremental index (`review.index_source`), beside its ads.

`ReviewData` loads the three tables once and answers the page's questions: the groups list
(filtered and paginated on the server), a group's members and pairs, one pair explained as
`jobdedup explain` does, and the source-overlap figures.

Example:
    >>> # data = ReviewData.load(Path("ads.parquet"), Path("out/batch1"), model)
    >>> # data.group_list(GroupFilter(min_size=2), page=1, per_page=50)["total"]
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from jobdedup.pipeline.errors import JobdedupError

if TYPE_CHECKING:
    from jobdedup.pipeline.engine import Deduplicator
    from jobdedup.pipeline.prepare import PreparedBatch

PAIR_COLUMNS = ("ad_id_a", "ad_id_b", "probability", "is_duplicate")
GROUP_COLUMNS = ("ad_id", "group_id", "group_size")
MEMBER_FIELDS = ("ad_id", "title", "company", "location", "posted_at", "source", "corpus")
MAX_PER_PAGE = 200


@dataclass(frozen=True)
class GroupFilter:
    """The groups list's filters; empty text matches everything."""

    source: str = ""
    corpus: str = ""
    employer: str = ""
    title: str = ""
    min_size: int = 1
    max_size: int | None = None


def _read_output(out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """pairs.parquet and groups.parquet of a `dedup` folder, or a one-line error naming the fix."""
    fix = f"give --out the folder `jobdedup dedup --ads ADS --out {out}` wrote"
    if not out.is_dir():
        raise JobdedupError(f"{out}: not a folder; {fix}")
    tables = []
    for name, columns in (("pairs.parquet", PAIR_COLUMNS), ("groups.parquet", GROUP_COLUMNS)):
        path = out / name
        if not path.is_file():
            raise JobdedupError(f"{out}: no {name}, so not a dedup output; {fix}")
        try:
            table = pd.read_parquet(path)
        except (OSError, ValueError) as failure:  # (pyarrow.ArrowInvalid is a ValueError)
            raise JobdedupError(f"{path}: not a readable Parquet file ({failure}); {fix}") from None
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise JobdedupError(f"{path}: lacks the column(s) {', '.join(missing)}; {fix}")
        tables.append(table)
    return tables[0], tables[1]


def _text(series: pd.Series) -> pd.Series:
    return series.astype("string").fillna("")


class ReviewData:
    """The ads, pairs and groups of one `dedup` run, indexed for the review page.

    Args:
        ads: the ads file's table (`pipeline.io.read_ads`).
        pairs: pairs.parquet.
        groups: groups.parquet (one row per ad).
        model: the model that explains pairs (the one `dedup` ran with).
    """

    def __init__(
        self, ads: pd.DataFrame, pairs: pd.DataFrame, groups: pd.DataFrame, model: Deduplicator
    ) -> None:
        self.model = model
        self.ads = ads.reset_index(drop=True)
        ids = self.ads["ad_id"].astype(str)
        self.row = pd.Series(np.arange(len(ids)), index=ids.to_numpy())
        groups = groups.assign(ad_id=groups["ad_id"].astype(str), group_id=groups["group_id"].astype(str))
        unknown = ~groups["ad_id"].isin(self.row.index)
        if unknown.any() or len(groups) != len(self.ads):
            example = groups["ad_id"][unknown].iloc[0] if unknown.any() else "-"
            raise JobdedupError(
                f"groups.parquet and the ads file do not match ({len(groups)} rows beside {len(self.ads)} ads, "
                f"{int(unknown.sum())} unknown ad_ids, e.g. {example}); give the --ads the dedup run read"
            )
        self.groups = groups.reset_index(drop=True)
        self.group_of = pd.Series(self.groups["group_id"].to_numpy(), index=self.groups["ad_id"].to_numpy())
        self.pairs = pairs.assign(ad_id_a=pairs["ad_id_a"].astype(str), ad_id_b=pairs["ad_id_b"].astype(str))
        group_a = self.group_of.reindex(self.pairs["ad_id_a"]).to_numpy()
        group_b = self.group_of.reindex(self.pairs["ad_id_b"]).to_numpy()
        inside = pd.Series(np.where(group_a == group_b, group_a, None))
        self.pairs_of_group = {
            str(g): rows for g, rows in inside.dropna().groupby(inside.dropna()).groups.items()
        }
        self.summary = self._summarise()
        self._batch: PreparedBatch | None = None
        self._batch_lock = threading.Lock()

    @classmethod
    def load(cls, ads_path: Path, out: Path, model: Deduplicator) -> ReviewData:
        """Read a `dedup` output folder and its ads file (checked against each other)."""
        from jobdedup.pipeline.io import read_ads

        pairs, groups = _read_output(out)
        return cls(read_ads(ads_path, model.config.max_description_chars), pairs, groups, model)

    @classmethod
    def load_index(cls, ads_path: Path, index_path: Path, model: Deduplicator) -> ReviewData:
        """Read an index's groups (read-only) and the texts of its ads from the ads file; the pairs
        are every in-group pair, scored now with the index's boilerplate (`review.index_source`)."""
        from jobdedup.pipeline.io import read_ads
        from jobdedup.pipeline.prepare import prepare_batch
        from jobdedup.pipeline.review.index_source import in_group_pairs, indexed_ads, read_index

        groups, boilerplate = read_index(index_path, model)
        ads = indexed_ads(
            read_ads(ads_path, model.config.max_description_chars), groups, ads_path, index_path
        )
        batch = prepare_batch(ads, model.config, (model.boilerplate_, boilerplate))
        data = cls(ads, in_group_pairs(batch, groups, model), groups, model)
        data._batch = batch  # (the pair view explains with the ads as they were scored)
        return data

    # ------------------------------------------------------------------------------ groups
    def _summarise(self) -> pd.DataFrame:
        """One row per group: size, the first member's title and employer, its sources and corpora."""
        members = self.groups[["ad_id", "group_id", "group_size"]].copy()
        rows = self.row.reindex(members["ad_id"]).to_numpy()
        for name in ("title", "company", "source", "corpus"):
            column = self.ads[name] if name in self.ads.columns else pd.Series([""] * len(self.ads))
            members[name] = _text(column).to_numpy()[rows]
        members = members.sort_values(["group_id", "ad_id"], kind="stable")
        first = members.drop_duplicates("group_id").set_index("group_id")

        def joined(name: str) -> pd.Series:
            values = members[["group_id", name]].drop_duplicates()
            values = values[values[name] != ""].sort_values(["group_id", name])
            return values.groupby("group_id")[name].agg(" · ".join)

        summary = pd.DataFrame(
            {
                "size": members.groupby("group_id").size(),
                "title": first["title"],
                "employer": first["company"],
                "sources": joined("source"),
                "corpora": joined("corpus"),
            }
        ).fillna({"sources": "", "corpora": ""})
        summary.index.name = "group_id"
        summary = summary.reset_index().sort_values(["size", "group_id"], ascending=[False, True])
        summary["title_key"] = summary["title"].str.casefold()
        summary["employer_key"] = summary["employer"].str.casefold()
        return summary.reset_index(drop=True)

    def group_list(self, where: GroupFilter, page: int = 1, per_page: int = 50) -> dict[str, Any]:
        """One page of the groups matching `where`, largest first, and how many match in all."""
        table = self.summary
        keep = (table["size"] >= where.min_size).to_numpy().copy()  # (pandas 3: a read-only view)
        if where.max_size is not None:
            keep &= (table["size"] <= where.max_size).to_numpy()
        for column, wanted in (("sources", where.source), ("corpora", where.corpus)):
            if wanted:
                keep &= table[column].str.split(" · ").map(lambda names, w=wanted: w in names).to_numpy()
        if where.employer:
            keep &= table["employer_key"].str.contains(where.employer.casefold(), regex=False).to_numpy()
        for word in where.title.casefold().split():
            keep &= table["title_key"].str.contains(word, regex=False).to_numpy()
        chosen = table[keep]
        per_page = max(1, min(per_page, MAX_PER_PAGE))
        page = max(1, page)
        shown = chosen.iloc[(page - 1) * per_page : page * per_page]
        columns = ["group_id", "size", "title", "employer", "sources", "corpora"]
        return {
            "total": len(chosen),
            "page": page,
            "per_page": per_page,
            "groups": shown[columns].to_dict(orient="records"),
        }

    def choices(self) -> dict[str, list[str]]:
        """The sources and corpora the filters offer."""
        out = {}
        for name in ("source", "corpus"):
            column = self.ads[name] if name in self.ads.columns else pd.Series([], dtype="string")
            out[name] = sorted(v for v in _text(column).unique() if v)
        return out

    def group(self, group_id: str) -> dict[str, Any] | None:
        """A group's members (fields, with those differing from the first member named) and its
        candidate pairs (probability, decision, rule, duplicate type); None for an unknown group."""
        members = self.groups[self.groups["group_id"] == group_id]
        if members.empty:
            return None
        ads = self.ads.iloc[self.row.reindex(members["ad_id"]).to_numpy()]
        fields = [f for f in MEMBER_FIELDS if f in ads.columns]
        records = [{f: _plain(ad[f]) for f in fields} for _, ad in ads.iterrows()]
        for record in records:
            record["differs"] = [f for f in fields[1:] if _fold(record[f]) != _fold(records[0][f])]
        rows = self.pairs_of_group.get(group_id, [])
        pairs = self.pairs.iloc[list(rows)].sort_values("probability", ascending=False)
        shown = [
            c for c in ("ad_id_a", "ad_id_b", "probability", "is_duplicate", "rule", "dup_type") if c in pairs
        ]
        return {
            "group_id": group_id,
            "size": len(members),
            "members": records,
            "pairs": [
                {c: _plain(v) for c, v in row.items()} for row in pairs[shown].to_dict(orient="records")
            ],
        }

    # ------------------------------------------------------------------------------ pairs
    def batch(self) -> PreparedBatch:
        """The ads prepared by the model as `dedup` prepared them (once; explanations need it)."""
        with self._batch_lock:
            if self._batch is None:
                self._batch = self.model.prepare(self.ads)
            return self._batch

    def pair(self, id_a: str, id_b: str) -> dict[str, Any]:
        """`jobdedup explain`'s view of a pair, with both texts' blocks in their order, each marked
        shared or not and boilerplate or not, and where the pair sits in the dedup output."""
        from jobdedup.pipeline.explain import explain_pair

        for ad_id in (id_a, id_b):
            if ad_id not in self.row.index:
                raise JobdedupError(f"ad_id {ad_id!r} is not in the ads file; give two ad_ids from it")
        explanation = explain_pair(self.model, self.ads, id_a, id_b, batch=self.batch())
        explanation["texts"] = _ordered_blocks(
            self.ads["description"].iloc[self.row[id_a]],
            self.ads["description"].iloc[self.row[id_b]],
            explanation["blocks"],
        )
        group_a, group_b = self.group_of.get(id_a), self.group_of.get(id_b)
        explanation["same_group"] = bool(group_a == group_b)
        explanation["groups"] = [group_a, group_b]
        return explanation

    # ------------------------------------------------------------------------------ sources
    def overlap(self) -> dict[str, Any]:
        """How many groups (vacancies) each pair of sources shares, and each source's duplicate rate
        (the share of its ads in a group of two or more)."""
        if "source" not in self.ads.columns:
            return {"sources": [], "matrix": [], "rates": []}
        members = pd.DataFrame(
            {
                "group_id": self.group_of.reindex(self.ads["ad_id"].astype(str)).to_numpy(),
                "source": _text(self.ads["source"]).replace("", "(none)").to_numpy(),
            }
        )
        size = self.groups.set_index("ad_id")["group_size"].reindex(self.ads["ad_id"].astype(str)).to_numpy()
        members["duplicated"] = size > 1
        sources = sorted(members["source"].unique())
        table = members.drop_duplicates(["group_id", "source"])
        table = table[table["duplicated"]]
        incidence = pd.crosstab(table["group_id"], table["source"]).reindex(columns=sources, fill_value=0)
        matrix = incidence.T @ incidence
        rates = members.groupby("source")["duplicated"].agg(["size", "sum"])
        return {
            "sources": sources,
            "matrix": matrix.to_numpy(dtype=int).tolist(),
            "rates": [
                {"source": s, "ads": int(rates.loc[s, "size"]), "duplicated": int(rates.loc[s, "sum"]),
                 "rate": float(rates.loc[s, "sum"] / rates.loc[s, "size"])}
                for s in sources
            ],
        }  # fmt: skip


def _ordered_blocks(text_a: Any, text_b: Any, blocks: dict[str, list]) -> list[list[dict[str, Any]]]:
    """Each text's cleaned blocks in reading order, marked `shared` and `boilerplate` as
    `explain.compare_blocks` found them."""
    from jobdedup.pipeline.clean import clean_description, split_blocks
    from jobdedup.pipeline.explain import _block_key

    shared = {_block_key(b["text"]) for b in blocks["shared"]}
    boilerplate = {b["text"] for kind in blocks.values() for b in kind if b["boilerplate"]}
    return [
        [
            {"text": block, "shared": _block_key(block) in shared, "boilerplate": block in boilerplate}
            for block in split_blocks(clean_description(text))
        ]
        for text in (text_a, text_b)
    ]


def _plain(value: Any) -> Any:
    if value is None or (np.ndim(value) == 0 and pd.isna(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def _fold(value: Any) -> str:
    return "" if value is None else " ".join(str(value).split()).casefold()


__all__ = ["GroupFilter", "ReviewData"]
