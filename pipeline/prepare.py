"""Stages 1–2 for a batch: clean, normalise fields, find boilerplate, shingle and sketch.

Example:
    >>> # batch = prepare_batch(ads, Config(), known_boilerplate=np.zeros(0, np.uint64))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from joblib.externals.loky import get_reusable_executor

from jobdedup.features.fields import FIELD_SOURCE_COLUMNS, few_fields, normalize_fields
from jobdedup.features.kernels import kept_per_doc
from jobdedup.features.normalize import FEW_VALUES, distinct
from jobdedup.features.normalize.unique import frame_of_arrays
from jobdedup.features.pairs import PairInputs
from jobdedup.features.requisitions import requisition_numbers
from jobdedup.features.salaries import salary_bands
from jobdedup.features.shingle_sets import ShingleSets, first_occurrences
from jobdedup.pipeline.boilerplate import (
    core_word_mask,
    find_boilerplate_blocks,
    in_block_sets,
    merge_block_sets,
)
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.evidence import (
    area_words,
    employer_words,
    may_name_requisition,
    mention_sets,
    place_flexible_words,
    place_words,
    title_words,
    vocabulary,
    words_normalising_adds,
)
from jobdedup.pipeline.evidence_kernels import Names
from jobdedup.pipeline.handoff import handoff_folder, park, unpark
from jobdedup.pipeline.sketch import kernel_input, minhash_signatures, shingle_sets, tokenize_buffer
from jobdedup.pipeline.tokenizer import Tokens

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
        core_blocks: with `prepare_batch(..., keep_blocks=True)`, every distinct (`doc`, `block`) of
            a block left in an ad's core text (not boilerplate): what counting blocks across
            batches needs (`pipeline.index.blocks`); else None.
    """

    ads: pd.DataFrame
    inputs: PairInputs
    batch_boilerplate: np.ndarray
    status: pd.Series
    core_blocks: pd.DataFrame | None = None

    def __len__(self) -> int:
        return len(self.ads)


def _status(words: np.ndarray, fields: pd.DataFrame) -> pd.Series:
    # (the columns' arrays, not pandas operators: ~40 µs each even for one ad)
    columns = ("title", "company", "emails", "phones")
    has_fields = np.logical_or.reduce([~fields[c].array.isna() for c in columns])
    status = np.where(words > 0, STATUS_OK, np.where(has_fields, STATUS_FIELDS_ONLY, STATUS_NOT_COMPARABLE))
    return pd.Series(status, index=fields.index, dtype=object)


SMALL_BATCH = 200  # fewer ads than this are prepared in the calling thread alone


class _Inline:
    """A stand-in for a one-thread executor that runs the job at once (see `_prepare_chunk`)."""

    def __enter__(self) -> _Inline:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, function: Callable[..., object], *args: object) -> Future:
        done: Future = Future()
        done.set_result(function(*args))
        return done


@dataclass(frozen=True)
class _PreparedChunk:
    """What one worker returns for a slice of ads (everything PairInputs needs, plus status)."""

    fields: pd.DataFrame
    full: ShingleSets
    core: ShingleSets
    numbers: ShingleSets
    signatures: np.ndarray
    words: np.ndarray
    core_words: np.ndarray
    employer_words: ShingleSets
    place_words: ShingleSets
    area_words: ShingleSets
    title_words: ShingleSets
    mentions: ShingleSets
    boilerplate: np.ndarray
    status: pd.Series
    core_blocks: pd.DataFrame | None


@dataclass(frozen=True)
class OwnNameWords:
    """Each ad's employer and area words, as `name_words` made them for the vocabulary: preparing
    the same ads takes them rather than computing them again."""

    employer_words: ShingleSets
    area_words: ShingleSets

    def rows(self, start: int, stop: int) -> OwnNameWords:
        """The words of ads `start` to `stop` - 1 (a slice of the batch)."""
        rows = np.arange(start, min(stop, len(self.employer_words)))
        return OwnNameWords(self.employer_words.subset(rows), self.area_words.subset(rows))


def name_words(ads: pd.DataFrame) -> tuple[np.ndarray, OwnNameWords]:
    """`name_vocabulary(ads)`, and the ads' own employer and area words it is partly made of."""
    column = lambda name: ads[name] if name in ads.columns else pd.Series(pd.NA, index=ads.index)
    locations = column("location")
    own = OwnNameWords(employer_words(column("company")), area_words(locations))
    names = vocabulary(
        own.employer_words,
        place_words(locations, locations),
        own.area_words,
        # Raw titles (normalising a million costs ~10 s here) and the words normalising adds: their
        # union holds every word of every normalised title.
        title_words(column("title")),
        words_normalising_adds(),
        place_flexible_words(),
    )
    return names, own


def name_vocabulary(ads: pd.DataFrame) -> np.ndarray:
    """The words of every employer, place and title of these ads that a text may mention (see
    `pipeline.evidence`); every ad row counts, whatever its normalised city."""
    return name_words(ads)[0]


Table = TypeVar("Table", pd.DataFrame, pd.Series)
BlockSets = np.ndarray | tuple[np.ndarray, ...]
"""Known boilerplate: a sorted array of block hashes, or several whose union it is."""


def _prepare_chunk(
    ads: pd.DataFrame,
    config: Config,
    known_boilerplate: BlockSets,
    names: Names,
    threads: int,
    keep_blocks: bool = False,
    own: OwnNameWords | None = None,
) -> _PreparedChunk:
    """Stages 1-2 for one slice of ads; boilerplate = known ∪ what this slice shows; `names` = the
    batch's `name_vocabulary`; `keep_blocks`: also return the core blocks of each ad; `own`: the
    slice's employer and area words if already made (`name_words`).

    Field normalisation (Python) runs in a second thread while the compiled text kernels, which
    release the GIL, tokenise and shingle on `threads` threads.
    """
    texts, titles, locations = ads["description"], ads["title"], ads["location"]
    data, offsets = kernel_input(_texts_of(texts))
    # (A few ads, e.g. a single check: a thread's start and hand-over cost more than the overlap saves.)
    with ThreadPoolExecutor(max_workers=1) if len(ads) >= SMALL_BATCH else _Inline() as pool:
        # (A few ads' fields are made below, in one frame with the columns their texts give.)
        fields_job = None if 0 < len(ads) <= FEW_VALUES else pool.submit(normalize_fields, ads)
        tokens = tokenize_buffer(data, offsets, threads)
        del data, offsets
        k = config.shingle_size
        full = shingle_sets(tokens.word_hash, tokens.doc_ptr, k, threads=threads)
        numbers = shingle_sets(
            tokens.word_hash, tokens.doc_ptr, 1, keep=tokens.word_is_number, threads=threads
        )
        searched = _searched_texts(texts, may_name_requisition(tokens))
        found = {
            "refs": requisition_numbers(titles, searched, ads["url"]).to_numpy(),
            "salary_band": salary_bands(texts).to_numpy(),
        }
        if fields_job is None:  # (adding a column to a frame costs ~85 µs)
            fields = few_fields(ads, found)
        else:
            fields = fields_job.result().reset_index(drop=True)
            for name, values in found.items():
                fields[name] = values
    core = _core_text(tokens, fields, config, known_boilerplate, names, threads)
    return _PreparedChunk(
        fields=fields,
        full=full,
        core=core.core,
        numbers=numbers,
        signatures=core.signatures,
        words=tokens.words_per_doc,
        core_words=core.core_words,
        employer_words=employer_words(ads["company"]) if own is None else own.employer_words,
        place_words=place_words(locations, fields["city"]),
        area_words=area_words(locations) if own is None else own.area_words,
        title_words=title_words(fields["title"]),
        mentions=_with_title_mentions(core.mentions, tokens.words_per_doc, titles, names),
        boilerplate=core.boilerplate,
        status=_status(tokens.words_per_doc, fields),
        core_blocks=_core_blocks(tokens, (*_block_sets(known_boilerplate), core.boilerplate))
        if keep_blocks
        else None,
    )


def _searched_texts(texts: pd.Series, searched: np.ndarray) -> pd.Series | None:
    """`texts` where `searched`, NA elsewhere; None where none is (a few ads' texts are mostly all
    or none searched: `where` costs ~60 µs)."""
    if not searched.any():
        return None
    return texts if searched.all() else texts.where(searched)


def _with_title_mentions(
    mentions: ShingleSets, words: np.ndarray, titles: pd.Series, names: Names
) -> ShingleSets:
    """`mentions` where the ads without text (`words` 0) take the names their titles mention: a
    title is all the text a fields-only ad has, and it may say where the job really is, as a text
    does ("Software Developer (Remote)" filed under Berlin and under Hamburg; "Site Process Engineer
    - Pforzheim" filed under Pforzheim and under Frankfurt), which `place_named_in_text` and
    `places_flexible` then read as no place conflict."""
    textless = np.flatnonzero(words == 0)
    if not len(textless):
        return mentions
    found = mention_sets(tokenize_buffer(*kernel_input(_texts_of(titles.iloc[textless]))), names)
    return mentions.replace_rows(textless, found)


@dataclass(frozen=True)
class _CoreText:
    """What boilerplate decides for a slice of ads: their core text's sets and the slice's own boilerplate."""

    core: ShingleSets
    signatures: np.ndarray
    core_words: np.ndarray
    mentions: ShingleSets
    boilerplate: np.ndarray


def _core_text(
    tokens: Tokens,
    fields: pd.DataFrame,
    config: Config,
    known_boilerplate: BlockSets,
    names: Names,
    threads: int,
) -> _CoreText:
    """The core text of a slice of ads (`tokens`, normalised `fields`): boilerplate = known ∪
    blocks the slice shows under enough titles or employers; its shingles, signatures, word counts
    and the `names` it mentions."""
    # Codes of equal titles and employers (a missing one: its own code, -1).
    title_codes = distinct(fields["title_tokens"])[0]
    employer_codes = distinct(fields["company"])[0]
    boilerplate_here = find_boilerplate_blocks(
        tokens.block_hash,
        tokens.block_doc,
        title_codes,
        config.boilerplate_min_titles,
        employer_codes,
        config.boilerplate_min_employers,
    )
    keep = core_word_mask(tokens, *_block_sets(known_boilerplate), boilerplate_here)
    # Ads whose whole text is boilerplate are sketched on their full text, so re-scrapes still meet.
    core = shingle_sets(
        tokens.word_hash, tokens.doc_ptr, config.shingle_size, keep=keep, fallback=True, threads=threads
    )
    return _CoreText(
        core=core,
        signatures=minhash_signatures(core, config.num_perm, config.seed, threads),
        core_words=kept_per_doc(keep, tokens.doc_ptr),
        mentions=mention_sets(tokens, names, keep),
        boilerplate=boilerplate_here,
    )


def prepare_again(
    descriptions: pd.Series, inputs: PairInputs, config: Config, known_boilerplate: BlockSets, names: Names
) -> PairInputs:
    """`prepare_batch(ads, config, known_boilerplate, names=names).inputs` for ads already prepared
    (`inputs`, from `descriptions`) with less boilerplate: only what boilerplate decides is
    computed again (core text, signatures, core word counts, mentions), slice by slice as
    `prepare_batch` cuts them; fields, full text and names are kept (they do not depend on it).
    """
    texts = descriptions.reset_index(drop=True)
    parts = []
    for start in range(0, len(texts), config.chunk_size):
        rows = np.arange(start, min(len(texts), start + config.chunk_size))
        tokens = tokenize_buffer(*kernel_input(_texts_of(texts.iloc[rows])), config.jobs)
        fields = inputs.fields.iloc[rows].reset_index(drop=True)
        parts.append(_core_text(tokens, fields, config, known_boilerplate, names, config.jobs))
    return dataclasses.replace(
        inputs,
        core=ShingleSets.concatenate([part.core for part in parts]),
        signatures=np.concatenate([part.signatures for part in parts]),
        core_words=np.concatenate([part.core_words for part in parts]),
        mentions=_keep_title_mentions(ShingleSets.concatenate([part.mentions for part in parts]), inputs),
    )


def _keep_title_mentions(mentions: ShingleSets, inputs: PairInputs) -> ShingleSets:
    """`mentions` with the ads without text keeping those of `inputs` (their titles' mentions,
    `_with_title_mentions`: boilerplate never changes them)."""
    textless = np.flatnonzero(inputs.words == 0)
    if not len(textless):
        return mentions
    return mentions.replace_rows(textless, inputs.mentions.subset(textless))


def _prepare_parked(
    folder: str,
    ads: pd.DataFrame,
    config: Config,
    known_boilerplate: BlockSets,
    names: Names,
    keep_blocks: bool,
    own: OwnNameWords | None,
) -> _PreparedChunk:
    """`_prepare_chunk` in a worker process (one kernel thread) of a slice `park`ed in `folder`,
    its arrays parked there in turn (`pipeline.handoff`): neither goes through the pipe."""
    return park(_prepare_chunk(unpark(ads), config, known_boilerplate, names, 1, keep_blocks, own), folder)


def _block_sets(known: BlockSets) -> tuple[np.ndarray, ...]:
    return (known,) if isinstance(known, np.ndarray) else tuple(known)


_CORE_BLOCK_COLUMNS = pd.Index(["doc", "block"])


def _core_blocks(tokens: Tokens, boilerplate: tuple[np.ndarray, ...]) -> pd.DataFrame:
    """Distinct (`doc`, `block`) of the blocks that are not in the `boilerplate` sets (sorted unique)."""
    core = ~in_block_sets(tokens.block_hash, *boilerplate)
    doc, block = tokens.block_doc[core].astype(np.int64), tokens.block_hash[core]
    kept = first_occurrences(doc, block)  # (numpy: drop_duplicates costs ~0.3 ms for one ad)
    # (from its blocks: a frame of a dict costs ~70 µs, this ~15 µs)
    return frame_of_arrays(_CORE_BLOCK_COLUMNS, [doc[kept], block[kept]], pd.RangeIndex(len(kept)))


def prepare_batch(
    ads: pd.DataFrame,
    config: Config,
    known_boilerplate: BlockSets,
    on_slice: Callable[[int], object] | None = None,
    descriptions: Iterable[pd.Series] | None = None,
    names: Names | None = None,
    keep_blocks: bool = False,
    own_words: OwnNameWords | None = None,
) -> PreparedBatch:
    """Clean and sketch a batch; boilerplate = `known_boilerplate` (sorted; or several sorted sets,
    their union) ∪ what the batch shows.

    `names` (default: `name_vocabulary(ads)`) are the employer and place words whose mentions in
    the texts are kept (or parts whose union they are, `pipeline.evidence_kernels.Names`); ads
    prepared apart but compared together must share one vocabulary.
    `keep_blocks` fills `PreparedBatch.core_blocks`. `own_words`: the ads' employer and area words
    where `name_words(ads)` already made them (with the default `names` they are taken from it).

    Batches larger than `config.chunk_size` are cut into consecutive slices prepared by
    `config.jobs` processes (one slice alone uses `config.jobs` threads in the compiled kernels;
    `on_slice(n)` is called as each slice is done); corpus boilerplate is found per slice (a
    slice of 50,000 ads shows any blurb an employer posts with three titles), so the result
    depends only on the (fixed) slice size, not on the number of processes.

    `descriptions` (e.g. from `pipeline.io.read_ads_streamed`) gives the texts slice by slice
    (`config.chunk_size` rows each, in order) instead of `ads["description"]`: each is taken
    only when its slice is handed to a worker, so the batch's texts are never all in memory.
    """
    ads = ads.reset_index(drop=True)
    columns = FIELD_SOURCE_COLUMNS if descriptions is not None else ("description", *FIELD_SOURCE_COLUMNS)
    starts = range(0, max(len(ads), 1), config.chunk_size)
    in_processes = len(starts) > 1 and config.jobs > 1
    if set(columns) <= set(ads.columns):
        # Slices prepared here read their columns by name: only those parked for worker processes
        # (or given their descriptions) are a selection, which costs half a new frame (~0.2 ms).
        needed = ads[list(columns)] if in_processes or descriptions is not None else ads
    else:
        needed = pd.DataFrame(
            {
                c: ads[c] if c in ads.columns else pd.Series(pd.NA, index=ads.index, dtype="string")
                for c in columns
            }
        )
    # (one slice, e.g. a single check's: the frame itself, not a copy of its ~30 µs `iloc`)
    slices: Iterable[pd.DataFrame] = (
        (needed.iloc[start : start + config.chunk_size] for start in starts) if len(starts) > 1 else [needed]
    )
    if descriptions is not None:
        slices = _with_descriptions(slices, descriptions)
    if names is None:
        names, own_words = name_words(ads)
    own = [own_words.rows(start, start + config.chunk_size) if own_words else None for start in starts]
    with handoff_folder() if in_processes else nullcontext(None) as folder:
        prepared: Iterable[_PreparedChunk]
        if folder is not None:  # (in_processes)
            # Python-level work (markup, fields) holds the GIL: slices go to `jobs` processes,
            # the slices' texts and the workers' arrays through files in `folder`
            # (`pipeline.handoff`), not the pipe.
            # One slice waits for the next free worker (joblib's default, 2 × n_jobs in flight,
            # keeps more slices of texts in memory for no gain: reading one is faster than
            # preparing it).
            parallel = Parallel(
                n_jobs=config.jobs, backend="loky", return_as="generator", pre_dispatch="n_jobs + 1"
            )
            tasks = (
                delayed(_prepare_parked)(
                    folder, park(part, folder), config, known_boilerplate, names, keep_blocks, words
                )
                for part, words in zip(slices, own)
            )
            prepared = map(unpark, parallel(tasks))
        else:
            prepared = (
                _prepare_chunk(part, config, known_boilerplate, names, config.jobs, keep_blocks, words)
                for part, words in zip(slices, own)
            )
        parts: list[dict[str, object]] = []
        for part in prepared:
            parts.append({f.name: getattr(part, f.name) for f in dataclasses.fields(part)})
            if on_slice is not None:
                on_slice(len(part.words))
        del part  # the slices' arrays are now only referenced from `parts`, taken one by one below
    if in_processes:
        # Idle workers would keep ~1 GB each (their allocators' freed memory) until loky's timeout.
        get_reusable_executor().shutdown(wait=True)
    inputs = PairInputs(
        fields=_concat_tables(_take(parts, "fields")),
        full=ShingleSets.concatenate(_take(parts, "full"), consume=True),
        core=ShingleSets.concatenate(_take(parts, "core"), consume=True),
        numbers=ShingleSets.concatenate(_take(parts, "numbers"), consume=True),
        signatures=np.concatenate(_take(parts, "signatures")),
        words=np.concatenate(_take(parts, "words")),
        core_words=np.concatenate(_take(parts, "core_words")),
        employer_words=ShingleSets.concatenate(_take(parts, "employer_words")),
        place_words=ShingleSets.concatenate(_take(parts, "place_words")),
        area_words=ShingleSets.concatenate(_take(parts, "area_words")),
        title_words=ShingleSets.concatenate(_take(parts, "title_words")),
        mentions=ShingleSets.concatenate(_take(parts, "mentions")),
    )
    return PreparedBatch(
        ads=ads,
        inputs=inputs,
        batch_boilerplate=merge_block_sets(*_take(parts, "boilerplate")),
        status=_concat_tables(_take(parts, "status")),
        core_blocks=_offset_blocks(_take(parts, "core_blocks"), starts) if keep_blocks else None,
    )


def _concat_tables(parts: list[Table]) -> Table:
    """The slices' tables (each with a RangeIndex) one after the other; a single slice as it is
    (`pd.concat` of one table costs ~0.5 ms, more than a single ad's preparation steps)."""
    return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)


def _offset_blocks(parts: list[pd.DataFrame], starts: range) -> pd.DataFrame:
    """The slices' core blocks with `doc` counted over the whole batch."""
    return _concat_tables(
        [part.assign(doc=part["doc"] + start) if start else part for part, start in zip(parts, starts)]
    )


def _with_descriptions(
    slices: Iterable[pd.DataFrame], descriptions: Iterable[pd.Series]
) -> Iterator[pd.DataFrame]:
    """Each slice of field columns with its descriptions, checked to have the same rows."""
    texts = iter(descriptions)
    for part in slices:
        text = next(texts, None)
        if text is None or len(text) != len(part):
            got = "none" if text is None else f"{len(text):,}"
            raise ValueError(f"descriptions: expected a slice of {len(part):,} rows, got {got}")
        yield part.assign(description=text.set_axis(part.index))
    if next(texts, None) is not None:
        raise ValueError("descriptions: more slices than ads")


def _take(parts: list[dict[str, object]], name: str) -> list:
    """Remove one attribute from every slice's result and return them, so concatenating the slices
    holds at most one attribute twice (a million ads' shingle sets are gigabytes)."""
    return [part.pop(name) for part in parts]


def _texts_of(column: pd.Series, block: int = 2_000) -> Iterator[str | None]:
    """The column's texts as Python strings, converted a block at a time (a slice's texts as
    Python strings would take 2-4 bytes per character at once)."""
    if len(column) <= block:  # (a slice's `iloc` costs ~8 µs, a single ad's conversion 3 µs)
        yield from column.to_numpy(dtype=object, na_value=None)
        return
    for start in range(0, len(column), block):
        yield from column.iloc[start : start + block].to_numpy(dtype=object, na_value=None)
