"""Assemble the hand-judged natural pairs from the readers' raw judgements.

    python -m labelling.assemble_judgements

Reads `data/judgements/` (see data/NATURAL_PAIRS.md):

- `round1.csv` — the first 448 pairs as first judged (2026-11-22; label 1 / 0 / unsure);
- `reread_pairs.csv`, `reread_reader_<k>.csv` — those pairs read again, blind, against
  DUPLICATE_DEFINITION.md (2026-11-24): these decisions replace round 1's (the definition wins);
- `round2_pairs.csv`, `round2_assignments.csv`, `round2_reader_<k>.csv` — 1,650 new pairs
  (2026-11-24), 10 % of them read twice, blind, by two readers;
- `round<N>_*` for the later `ROUNDS` (3-13, 2026-11-25 to 2026-12-01) — new pairs in the same
  three files, 10 % of each round read twice, blind, brought in by `labelling.import_round`; which
  corpora and model each round was drawn with is in data/NATURAL_PAIRS.md;
- `adjudications.csv` — decisions on pairs whose two reads disagree, on pairs that a later
  convention settled, and on labels that contradict each other (a~c and b~c one vacancy, a~b two;
  `assemble` stops while any is left), each with its reason.

Writes `data/natural_pairs.csv` (decided pairs: ad_id_a, ad_id_b, label, dup_type, stratum,
corpus, round, reason), `data/natural_pairs_late.csv` (the decided pairs of `LATE_ROUNDS`, same
columns: they train the shipped model and are scored by leave-one-corpus-out, but stay out of the
demo's train / test split) and `data/natural_pairs_unsure.csv` (pairs read but not decided: never
trained or scored on), and prints the agreement figures (Cohen's kappa).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from sklearn.metrics import cohen_kappa_score

from labelling import DATA

JUDGEMENTS = DATA / "judgements"
ROUNDS = tuple(sorted(int(path.name[5:].split("_")[0]) for path in JUDGEMENTS.glob("round*_pairs.csv")))
"""Rounds of new pairs (2 on): each round<N>_pairs.csv, round<N>_assignments.csv and
round<N>_reader_<k>.csv in `JUDGEMENTS`, as `labelling.import_round` writes them."""
FIRST_LATE_ROUND = 5
LATE_ROUNDS = tuple(str(number) for number in ROUNDS if number >= FIRST_LATE_ROUND)
"""Rounds read after the demo's train / test split was fixed: `natural_pairs_late.csv`, which `make
model` trains on beside the split (see data/NATURAL_PAIRS.md)."""
COLUMNS = ["ad_id_a", "ad_id_b", "label", "dup_type", "stratum", "corpus", "round", "reason"]


def _readers(prefix: str, folder: Path = JUDGEMENTS) -> pd.DataFrame:
    """Every reader's rows of one round (`<prefix>_reader_<k>.csv` in `folder`), with `reader` = k."""
    parts = [
        pd.read_csv(path, dtype=str, keep_default_na=False).assign(reader=int(path.stem.rsplit("_", 1)[1]))
        for path in sorted(folder.glob(f"{prefix}_reader_*.csv"))
    ]
    return pd.concat(parts, ignore_index=True)


def agreement(first: pd.Series, second: pd.Series) -> dict[str, float]:
    """Cohen's kappa of two reads: over pairs both decided, and with `unsure` as a third answer."""
    decided = (first != "unsure") & (second != "unsure")
    return {
        "pairs": len(first),
        "both_decided": int(decided.sum()),
        "agree_decided": float((first[decided] == second[decided]).mean()),
        "kappa_decided": float(cohen_kappa_score(first[decided], second[decided])),
        "kappa_three_answers": float(cohen_kappa_score(first, second)),
    }


def split_reads(reads: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One round's first reads and blind second reads (`reads`: pair_id, read, label, ...), each
    indexed by pair_id; a ValueError names a pair read a second time but never a first.

    Example:
        >>> reads = pd.DataFrame({"pair_id": ["p1", "p1"], "read": ["1", "2"], "label": ["1", "0"]})
        >>> first, second = split_reads(reads)
        >>> list(disagreements(first, second))
        ['p1']
    """
    read = reads["read"].astype(str)
    first = reads[read == "1"].set_index("pair_id")
    second = reads[read == "2"].set_index("pair_id")
    orphans = second.index.difference(first.index)
    if len(orphans):
        raise ValueError(
            f"pair {orphans[0]} has a second read but no first read ({len(orphans)} such pair(s)):"
            " the first read's reader must finish before the round is imported"
        )
    return first, second


def disagreements(first: pd.DataFrame, second: pd.DataFrame) -> pd.Index:
    """The pairs whose blind second read's label differs from the first read's."""
    return second.index[first.loc[second.index, "label"] != second["label"]]


def new_round(number: int) -> tuple[pd.DataFrame, dict[str, float]]:
    """First reads of one round's new pairs, and the agreement of the blind second reads with them."""
    prefix = f"round{number}"
    pairs = pd.read_csv(JUDGEMENTS / f"{prefix}_pairs.csv", dtype=str)
    reads = _readers(prefix).merge(
        pd.read_csv(JUDGEMENTS / f"{prefix}_assignments.csv", dtype={"pair_id": str}),
        on=["pair_id", "reader"],
    )
    first, second = split_reads(reads)
    figures = agreement(first.loc[second.index, "label"], second["label"])
    disagree = disagreements(first, second)
    decided = pairs.merge(first[["label", "dup_type", "reason"]], left_on="pair_id", right_index=True)
    decided["round"] = str(number)
    decided.attrs["disagree"] = list(disagree)
    return decided, figures


def reread_round1() -> tuple[pd.DataFrame, dict[str, float]]:
    """Round 1's pairs as read again under the definition, and their agreement with round 1."""
    first = pd.read_csv(JUDGEMENTS / "round1.csv", dtype=str, keep_default_na=False)
    pairs = pd.read_csv(JUDGEMENTS / "reread_pairs.csv", dtype=str)
    again = pairs.merge(_readers("reread")[["pair_id", "label", "dup_type", "reason"]], on="pair_id")
    both = again.merge(first[["ad_id_a", "ad_id_b", "label", "stratum", "corpus"]], on=["ad_id_a", "ad_id_b"])
    figures = agreement(both["label_y"], both["label_x"])
    decided = both.rename(columns={"label_x": "label"}).drop(columns=["label_y"])
    decided["stratum"] = "r1:" + decided["stratum"]
    decided["round"] = "1"
    return decided, figures


def _round_number(column: pd.Series) -> pd.Series:
    """Sort key: rounds by number ("10" after "9"), other columns as they are."""
    return column.astype(int) if column.name == "round" else column


def assemble() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict[str, float]]]:
    """Decided pairs, unsure pairs and agreement figures."""
    old, old_agreement = reread_round1()
    rounds, figures = [old], {}
    for number in ROUNDS:
        decided_round, figures[f"round{number}_second_reads"] = new_round(number)
        rounds.append(decided_round)
    figures["round1_reread"] = old_agreement
    judged = pd.concat(rounds, ignore_index=True)
    adjudicated = pd.read_csv(JUDGEMENTS / "adjudications.csv", dtype=str, keep_default_na=False)
    disagree = {pair for part in rounds[1:] for pair in part.attrs["disagree"]}
    unresolved = disagree - set(adjudicated["pair_id"])
    if unresolved:
        raise SystemExit(f"two reads disagree and no adjudication is given: {sorted(unresolved)}")
    judged = judged.set_index("pair_id")
    for column in ("label", "dup_type", "reason"):
        judged.loc[adjudicated["pair_id"], column] = adjudicated[column].to_numpy()
    judged = judged.reset_index()
    judged["dup_type"] = judged["dup_type"].where(judged["label"] == "1", "")
    low = judged[["ad_id_a", "ad_id_b"]].min(axis=1)
    high = judged[["ad_id_a", "ad_id_b"]].max(axis=1)
    judged["ad_id_a"], judged["ad_id_b"] = low, high
    judged = judged.drop_duplicates(["ad_id_a", "ad_id_b"], keep="last")
    judged = judged.sort_values(["round", "ad_id_a", "ad_id_b"], key=_round_number)
    decided = judged[judged["label"].isin(["0", "1"])]
    unsure = judged[judged["label"] == "unsure"]
    contradicting = contradictions(decided)
    if contradicting:
        raise SystemExit(
            f"{len(contradicting)} pair(s) labelled 0 whose two ads are each labelled 1 with a third ad "
            f"(e.g. {contradicting[0]}): adjudicate them in adjudications.csv"
        )
    return decided[COLUMNS], unsure[COLUMNS], figures


def contradictions(decided: pd.DataFrame) -> list[tuple[str, str, str]]:
    """Labels one vacancy cannot all be true to: (a, b, c) where a~c and b~c are labelled 1 and a~b 0.

    Example:
        >>> pairs = pd.DataFrame({"ad_id_a": ["a", "b", "a"], "ad_id_b": ["c", "c", "b"], "label": ["1", "1", "0"]})
        >>> contradictions(pairs)
        [('a', 'b', 'c')]
    """
    same: dict[str, set[str]] = {}
    positives = decided[decided["label"] == "1"]
    for a, b in zip(positives["ad_id_a"], positives["ad_id_b"]):
        same.setdefault(a, set()).add(b)
        same.setdefault(b, set()).add(a)
    negatives = decided[decided["label"] == "0"]
    return [
        (a, b, third)
        for a, b in zip(negatives["ad_id_a"], negatives["ad_id_b"])
        for third in sorted(same.get(a, set()) & same.get(b, set()))
    ]


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=DATA)
    args = parser.parse_args()
    decided, unsure, figures = assemble()
    late = decided["round"].isin(LATE_ROUNDS)
    decided[~late].to_csv(args.out / "natural_pairs.csv", index=False)
    decided[late].to_csv(args.out / "natural_pairs_late.csv", index=False)
    unsure.drop(columns=["dup_type"]).to_csv(args.out / "natural_pairs_unsure.csv", index=False)
    for name, values in figures.items():
        print(name, {k: round(v, 4) if isinstance(v, float) else v for k, v in values.items()})
    positives = decided[decided["label"] == "1"]
    print(
        f"{len(decided)} decided pairs ({len(positives)} duplicates: "
        f"{positives['dup_type'].value_counts().to_dict()}), {len(unsure)} unsure"
    )


if __name__ == "__main__":
    main()
