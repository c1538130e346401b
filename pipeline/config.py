"""The one configuration object every stage reads.

Example:
    >>> cfg = Config(shingle_size=5)
    >>> cfg.num_perm == cfg.lsh_bands * cfg.lsh_rows
    True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Config:
    """Parameters of the whole pipeline; stored in every saved model.

    Attributes:
        shingle_size: words per shingle.
        lsh_bands: LSH bands; `num_perm` is `lsh_bands * lsh_rows` (no permutation goes unused).
        lsh_rows: MinHash rows per band.
        seed: seed of the MinHash permutations, the classifier and every sampling step.
        max_description_chars: descriptions longer than this are cut (with a warning).
        boilerplate_min_titles: a text block seen in ads with at least this many distinct titles
            is corpus boilerplate (company blurb, equal-opportunity text, footer).
        boilerplate_min_employers: a text block seen in ads of at least this many distinct
            employers is page chrome or a shared footer (navigation, share buttons, "similar
            jobs" widgets listing other ads, cookie text), whatever the titles.
        max_bucket_size: LSH buckets or field blocks with more ads than this are capped
            (only neighbours in sorted order are paired) and reported.
        target_precision: the decision threshold reaches this precision on validation pairs.
        threshold_beta: among the thresholds reaching `target_precision`, the one with the best
            F-beta on validation pairs is chosen (0.5: precision counts four times as much as
            recall; a large value picks the lowest such threshold, the most recall).
        threshold_window: each threshold reaching `target_precision` is judged by the mean
            F-beta of the thresholds within this distance of it, not its own (0: its own).
        threshold_folds: folds (by vacancy) whose out-of-fold scores pick the threshold.
        n_estimators: most LightGBM boosting rounds per booster (early stopping picks fewer).
        classifier_members: boosters trained with different seeds whose scores are averaged (one
            booster's threshold moved with the seed more than most feature changes move it).
        learning_rate: LightGBM learning rate.
        num_leaves: LightGBM leaves per tree.
        jobs: worker processes/threads for preparing, features and LightGBM.
        chunk_size: ads per slice when a batch is prepared in parallel (also the scope of
            per-batch boilerplate statistics for batches larger than this).
        show_progress: draw progress bars on stderr.
    """

    shingle_size: int = 5
    lsh_bands: int = 42
    lsh_rows: int = 3
    seed: int = 1
    max_description_chars: int = 100_000
    boilerplate_min_titles: int = 3
    boilerplate_min_employers: int = 3
    max_bucket_size: int = 200
    target_precision: float = 0.97
    threshold_beta: float = 0.5
    threshold_window: float = 0.1
    threshold_folds: int = 5
    n_estimators: int = 100
    classifier_members: int = 3
    learning_rate: float = 0.1
    num_leaves: int = 31
    jobs: int = 2
    chunk_size: int = 50_000
    show_progress: bool = True

    @property
    def num_perm(self) -> int:
        """Number of MinHash permutations (bands × rows)."""
        return self.lsh_bands * self.lsh_rows

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON manifests."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Config:
        """Build from a dict, ignoring keys this version does not know."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})

    def replace(self, **changes: Any) -> Config:
        """Copy with some fields changed."""
        return Config.from_dict({**self.to_dict(), **changes})
