"""Stages 1–2 for a batch: clean, normalise fields, find boilerplate, shingle and sketch.

Example:
    >>> # batch = prepare_batch(ads, Config(), known_boilerplate=np.zeros(0, np.uint64))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from features.fields import normalize_fields
from features.pairs import PairInputs
from features.shingle_sets import ShingleSets
from pipeline.boilerplate import core_word_mask, find_boilerplate_blocks, merge_block_sets
from pipeline.config import Config
from pipeline.sketch import keep_words, minhash_signatures, shingle_sets, tokenize

STATUS_OK = "ok"
STATUS_FIELDS_ONLY = "no_text:fields_only"
STATUS_NOT_COMPARABLE = "no_text_no_fields:not_compared"


@dataclass(frozen=True)
class PreparedBatch:
    """A batch of ads ready for candidate generation and pair features (row i = ad i).

    Attributes:
        ads: the input ads with a fresh RangeIndex.
        inputs: everything pair features need.
        batch_boilerplate: block hashes this batch alone marks as boilerplate.
        status: per ad, `ok`, or why it can only match on fields / cannot be compared.
    """

    ads: pd.DataFrame
    inputs: PairInputs
    batch_boilerplate: np.ndarray
    status: pd.Series

    def __len__(self) -> int:
        return len(self.ads)


def _status(words: np.ndarray, fields: pd.DataFrame) -> pd.Series:
    has_fields = (
        fields["title"].notna()
        | fields["company"].notna()
        | fields["emails"].notna()
        | fields["phones"].notna()
    ).to_numpy()
    status = np.where(words > 0, STATUS_OK, np.where(has_fields, STATUS_FIELDS_ONLY, STATUS_NOT_COMPARABLE))
    return pd.Series(status, index=fields.index, dtype=object)


def prepare_batch(ads: pd.DataFrame, config: Config, known_boilerplate: np.ndarray) -> PreparedBatch:
    """Clean and sketch a batch; boilerplate = `known_boilerplate` ∪ what this batch shows."""
    ads = ads.reset_index(drop=True)
    tokens = tokenize(ads["description"].astype(object).where(ads["description"].notna(), "").tolist())
    fields = normalize_fields(ads)
    title_codes = pd.factorize(fields["title_tokens"].fillna("\x00none"))[0]
    batch_boilerplate = find_boilerplate_blocks(
        tokens.block_hash, tokens.block_doc, title_codes, config.boilerplate_min_titles
    )
    boilerplate = merge_block_sets(known_boilerplate, batch_boilerplate)
    keep = core_word_mask(tokens, boilerplate)
    k = config.shingle_size
    full = shingle_sets(tokens.word_hash, tokens.doc_ptr, k)
    core_hash, core_ptr = keep_words(tokens, keep)
    core = shingle_sets(core_hash, core_ptr, k)
    number_hash, number_ptr = keep_words(tokens, tokens.word_is_number)
    numbers = shingle_sets(number_hash, number_ptr, 1)
    # Ads whose whole text is boilerplate are sketched on their full text, so re-scrapes still meet.
    sketched = _core_or_full(core, full)
    signatures = minhash_signatures(sketched, config.num_perm, config.seed)
    inputs = PairInputs(
        fields=fields.reset_index(drop=True),
        full=full,
        core=sketched,
        numbers=numbers,
        signatures=signatures,
        words=tokens.words_per_doc,
        core_words=np.diff(core_ptr),
    )
    return PreparedBatch(
        ads=ads,
        inputs=inputs,
        batch_boilerplate=batch_boilerplate,
        status=_status(tokens.words_per_doc, fields),
    )


def _core_or_full(core: ShingleSets, full: ShingleSets) -> ShingleSets:
    """Per ad: the core shingles, or the full ones where the core is empty."""
    use_full = core.sizes == 0
    sizes = np.where(use_full, full.sizes, core.sizes)
    indptr = np.zeros(len(core) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    values = np.empty(int(indptr[-1]), dtype=np.uint64)
    from_full = np.repeat(use_full, sizes)
    values[from_full] = full.subset(np.flatnonzero(use_full)).values
    values[~from_full] = core.subset(np.flatnonzero(~use_full)).values
    return ShingleSets(indptr=indptr, values=values)
