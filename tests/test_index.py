"""The incremental index: batches vs whole corpus, crash safety, idempotence, CLI, refusals."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jobdedup.pipeline.cli import main
from jobdedup.pipeline.index import Index, IndexFileError, IndexLockedError, IndexMismatchError
from jobdedup.pipeline.index.blocks import sighting_keys
from jobdedup.pipeline.index.core import SLEEP_HOOK

ROOT = Path(__file__).resolve().parent.parent


def _duplicate_pairs(groups: pd.DataFrame) -> set[tuple[str, str]]:
    g = groups[["ad_id", "group_id"]]
    joined = g.merge(g, on="group_id")
    joined = joined[joined["ad_id_x"] < joined["ad_id_y"]]
    return set(zip(joined["ad_id_x"], joined["ad_id_y"]))


def _batches(ads: pd.DataFrame, k: int = 5, seed: int = 0) -> list[pd.DataFrame]:
    """`ads` shuffled (`seed`) and cut into `k` batches."""
    order = np.random.default_rng(seed).permutation(len(ads))
    return [ads.iloc[part].reset_index(drop=True) for part in np.array_split(order, k)]


@pytest.fixture(scope="module")
def five_batch_index(tmp_path_factory, default_model, test_ads):
    """The bundled test ads added in 5 batches; the group ids seen after each batch."""
    path = tmp_path_factory.mktemp("index") / "ads.jdx"
    history, results = [], []
    with Index.open(path) as index:
        for batch in _batches(test_ads):
            results.append(index.add(batch, default_model))
            history.append(index.groups().set_index("ad_id")["group_id"])
    return path, history, results


@pytest.mark.slow
def test_five_batches_agree_with_whole_corpus(five_batch_index, test_result, test_labels):
    path, _, _ = five_batch_index
    whole = _duplicate_pairs(test_result.groups)
    with Index.open(path, read_only=True) as index:
        incremental = _duplicate_pairs(index.groups())
    n = len(test_result.groups)
    pairwise_agreement = 1 - len(whole ^ incremental) / (n * (n - 1) / 2)
    assert pairwise_agreement >= 0.99, pairwise_agreement  # over all pairs of ads: 0.99998
    # The stricter figure, Jaccard of the two sets of duplicate pairs: 0.993 (3 of 433 pairs differ,
    # 2026-11-24; 0.977 before the employer guard saw the old groups' links, issue #14). They can
    # differ at all because of order: an old group is never split, so a new ad judged against a
    # whole old group can land where `dedup`'s single average-linkage pass over the whole
    # component would not (here a repost whose pair with a later one is refused joins the group
    # first; `dedup` leaves it out). Boilerplate is counted over the whole index (block
    # sightings), so it differs from `dedup`'s only for ads added before a block reached the counts.
    agreement = len(whole & incremental) / len(whole | incremental)
    assert agreement >= 0.985, agreement
    truth = _duplicate_pairs(test_labels.groups)
    precision = len(incremental & truth) / len(incremental)
    assert precision >= 0.95, precision


@pytest.mark.slow
@pytest.mark.parametrize(("k", "seed"), [(4, 2), (8, 1)])
def test_shuffled_splits_agree_with_dedup(
    tmp_path, default_model, test_ads, test_result, test_labels, k, seed
):
    """Incremental equals batch on other shuffled splits too (real ads: `benchmarks.index_agreement`)."""
    whole = _duplicate_pairs(test_result.groups)
    with Index.open(tmp_path / "ads.jdx") as index:
        for batch in _batches(test_ads, k, seed):
            index.add(batch, default_model)
        incremental = _duplicate_pairs(index.groups())
    # 2026-11-24: Jaccard 0.993 on both splits (the index adds 3 pairs to `dedup`'s 430; 0.993-1.0
    # over seeds 0-3 of 4, 5 and 8 batches), every pair of `dedup` found by the index. The real ads
    # in 4 batches: 0.988-0.995, coverage 0.997-0.999 (README). 2026-11-29, three boosters: 1.0 on
    # (4, 2) and 0.989 on (8, 1), where the index adds 5 pairs, all labelled duplicates (two
    # reposts `dedup`'s average linkage leaves out of their groups); 0.993-1.0 on (4, 0), (5, 1),
    # (8, 3). 2026-12-07, model c99da9d0: (8, 1) Jaccard 0.991; the 4 pairs of `dedup`'s 442 the
    # index leaves out are all labelled non-duplicates (a hard negative "#n1" that `dedup` grouped
    # with its original): coverage is asked of `dedup`'s true duplicates.
    assert len(whole & incremental) / len(whole | incremental) >= 0.985
    truth = _duplicate_pairs(test_labels.groups)
    assert len(whole & truth & incremental) / len(whole & truth) >= 0.995


def test_boilerplate_is_counted_over_the_whole_index(tmp_path, default_model):
    """A footer seen under one title per batch is boilerplate once three titles have shown it, as
    in one `dedup` over all the ads: the day and night shift vacancies sharing it stay apart."""
    footer = (
        "Northwind Freight is proud to be an equal opportunity employer and we welcome applications "
        "from every background, because our depots across the whole region run on the talents of "
        "people who think differently and we offer a pension, free parking and a cycle scheme.\n"
        "Apply online with your CV and a short note on when you can start, and our recruitment team "
        "will call you within five working days to arrange a visit to the site."
    )
    bodies = [
        "Drive counterbalance trucks on the night shift in the Leeds depot loading bay.",
        "Plan the routes of forty lorries and keep the customers informed of any delay.",
        "Pick and pack online orders by scanner, twelve hour shifts four days a week.",
    ]
    ads = pd.DataFrame(
        {
            "ad_id": ["day", "planner", "night"],
            "title": ["Warehouse Operative", "Transport Planner", "Warehouse Operative Nights"],
            "company": "Northwind Freight",
            "location": "Leeds",
            "description": [f"{body}\n{footer}" for body in bodies],
        }
    )
    footer_blocks = default_model.prepare(ads).batch_boilerplate
    assert len(footer_blocks) == 2  # its two lines, each from three titles
    assert default_model.dedup(ads)[1]["group_id"].nunique() == 3
    learnt = []
    with Index.open(tmp_path / "ads.jdx") as index:
        for k in range(3):
            index.add(ads.iloc[[k]], default_model)
            learnt.append(bool(np.isin(footer_blocks, index.store.boilerplate()).all()))
        groups = index.groups()
        stored = index.store.block_sightings(sighting_keys(footer_blocks))
    # Counted batch by batch, the footer stayed in the core texts and joined the two shifts
    # (probability 0.93 with it, 0.46 without; 2026-11-24).
    assert groups["group_id"].nunique() == 3, groups
    assert learnt == [False, False, True]
    assert len(stored) == 4  # each line under the first two titles (no longer needed)


def test_vacancy_of_an_employer_and_two_agencies_across_batches(tmp_path, default_model, test_ads):
    """Two agencies' reposts first, the employer's own ads later: one group, as `dedup` finds. The
    employer guard must see the evidence linking the two agencies' old pair."""
    agencies = [
        "jobspy_martadatauk_uk:linkedin_jobs.csv:141#r1",
        "jobspy_martadatauk_uk:linkedin_jobs.csv:141#r2",
    ]
    employer = [
        "jobspy_martadatauk_uk:linkedin_jobs.csv:141",
        "jobspy_martadatauk_uk:linkedin_jobs.csv:141#r3",
    ]
    by_id = test_ads.set_index("ad_id")
    whole = default_model.dedup(by_id.loc[agencies + employer].reset_index())[1]
    assert whole["group_id"].nunique() == 1
    with Index.open(tmp_path / "ads.jdx") as index:
        index.add(by_id.loc[agencies].reset_index(), default_model)
        index.add(by_id.loc[employer].reset_index(), default_model)
        assert index.groups()["group_id"].nunique() == 1


def test_group_ids_stable_across_batches(five_batch_index):
    _, history, results = five_batch_index
    for before, after, result in zip(history, history[1:], results[1:]):
        merged = dict(zip(result.merges["merged_group_id"], result.merges["group_id"]))
        old = after.reindex(before.index)
        expected = before.map(lambda g, merged=merged: merged.get(g, g))
        assert (old == expected).all(), old[old != expected].head()


@pytest.mark.slow
def test_with_corpus_boilerplate_known_batches_match_dedup(tmp_path, default_model, test_ads):
    from jobdedup.pipeline.boilerplate import merge_block_sets

    model = default_model.with_config()
    model.boilerplate_ = merge_block_sets(
        default_model.boilerplate_, model.prepare(test_ads).batch_boilerplate
    )
    whole = _duplicate_pairs(model.dedup(test_ads)[1])
    with Index.open(tmp_path / "ads.jdx") as index:
        for batch in _batches(test_ads, seed=2):
            index.add(batch, model)
        incremental = _duplicate_pairs(index.groups())
    assert len(whole & incremental) / len(whole | incremental) >= 0.95


def test_readding_a_batch_changes_nothing(five_batch_index, default_model, test_ads, tmp_path):
    path, _, _ = five_batch_index
    copy = tmp_path / "copy.jdx"
    with Index.open(path, read_only=True) as index:
        before = index.groups()
    import sqlite3

    with sqlite3.connect(path) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    with Index.open(copy) as index:
        stats_before = index.stats()
        pairs, groups, merges = index.add(_batches(test_ads)[2], default_model)
        assert len(pairs) == 0 and len(merges) == 0
        assert (groups["status"] == "already_indexed").all()
        assert index.stats()["ads"] == stats_before["ads"]
        assert index.stats()["batches"] == stats_before["batches"]
        pd.testing.assert_frame_equal(index.groups(), before)


def test_second_writer_waits_then_fails_and_readers_read(tmp_path, default_model, test_ads):
    path = tmp_path / "ads.jdx"
    first, second = _batches(test_ads)[:2]
    with Index.open(path) as index:
        index.add(first, default_model)
    holder = Index.open(path)
    with holder.store.write(timeout=1):
        with Index.open(path, timeout=0.5) as other:
            started = time.monotonic()
            with pytest.raises(IndexLockedError, match="another process is writing"):
                other.add(second, default_model)
            assert time.monotonic() - started >= 0.4
        with Index.open(path, read_only=True) as reader:
            assert reader.stats()["ads"] == len(first)
    holder.close()


def test_model_with_other_sketch_parameters_is_refused(tmp_path, default_model, test_ads):
    path = tmp_path / "ads.jdx"
    first = _batches(test_ads)[0]
    with Index.open(path) as index:
        index.add(first.iloc[:50], default_model)
        other = default_model.with_config(seed=7)
        with pytest.raises(IndexMismatchError, match="seed 1 in the index vs 7 in the model"):
            index.add(first.iloc[50:], other)
        assert index.stats()["ads"] == 50


def test_new_ad_joins_existing_group_and_merge_is_reported(tmp_path, default_model, test_ads, test_labels):
    groups = test_labels.groups
    sizes = groups["group_id"].value_counts()
    # A vacancy posted 3+ times: two of its ads first, as separate batches, then the rest.
    vacancy = groups[groups["group_id"].isin(sizes[sizes >= 3].index)]
    ids = vacancy.groupby("group_id")["ad_id"].apply(list).iloc[0]
    by_id = test_ads.set_index("ad_id")
    with Index.open(tmp_path / "ads.jdx") as index:
        first = index.add(by_id.loc[[ids[0]]].reset_index(), default_model)
        index.add(by_id.loc[ids[1:]].reset_index(), default_model)
        final = index.groups().set_index("ad_id")["group_id"]
    assert final[ids[0]] == first.groups["group_id"].iloc[0]  # the first group id stays


def test_cli_round_trip(tmp_path, test_ads, capsys):
    ads_file = tmp_path / "batch.parquet"
    batch = _batches(test_ads)[0]
    batch.to_parquet(ads_file)
    index, out = tmp_path / "ads.jdx", tmp_path / "out"
    assert (
        main(["index", "add", "--index", str(index), "--ads", str(ads_file), "--out", str(out), "--quiet"])
        == 0
    )
    groups = pd.read_parquet(out / "groups.parquet")
    assert sorted(groups["ad_id"]) == sorted(batch["ad_id"])
    assert {"ad_id_a", "ad_id_b", "probability", "is_duplicate"} <= set(
        pd.read_parquet(out / "pairs.parquet")
    )
    assert list(pd.read_parquet(out / "merges.parquet").columns) == [
        "group_id",
        "merged_group_id",
        "ads_moved",
    ]
    capsys.readouterr()
    assert main(["index", "stats", "--index", str(index), "--json", str(tmp_path / "s.json")]) == 0
    printed = capsys.readouterr().out
    assert f"ads              {len(batch)}" in printed and "size on disk" in printed
    ids = tmp_path / "expired.txt"
    ids.write_text("\n".join(batch["ad_id"].iloc[:10]) + "\nnot-an-id\n")
    assert main(["index", "remove", "--index", str(index), "--ids", str(ids)]) == 0
    assert "removed 10 ads" in capsys.readouterr().out
    assert main(["index", "groups", "--index", str(index), "--out", str(tmp_path / "all.csv")]) == 0
    assert len(pd.read_csv(tmp_path / "all.csv")) == len(batch) - 10
    # The removed ads can come back; adding the same file again skips the rest.
    assert main(["index", "add", "--index", str(index), "--ads", str(ads_file), "--quiet"]) == 0
    assert "added 10 ads" in capsys.readouterr().out
    # Another seed = other MinHash permutations: refused with one line, exit code 2.
    code = main(["index", "add", "--index", str(index), "--ads", str(ads_file), "--seed", "3", "--quiet"])
    assert code == 2
    assert "sketch parameters differ" in capsys.readouterr().err
    for action in ("add", "stats", "remove", "groups"):
        with pytest.raises(SystemExit) as exit_info:
            main(["index", action, "--help"])
        assert exit_info.value.code == 0


def _count_ads(path: Path) -> int:
    with Index.open(path, read_only=True) as index:
        return index.stats()["ads"]


def _start_add(index: Path, ads_file: Path, env_extra: dict[str, str]) -> subprocess.Popen:
    env = {**os.environ, **env_extra}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jobdedup.pipeline.cli",
            "index",
            "add",
            "--index",
            str(index),
            "--ads",
            str(ads_file),
            "--quiet",
        ],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )


@pytest.mark.slow
def test_killed_add_leaves_before_or_after_state(tmp_path, default_model, test_ads):
    index = tmp_path / "ads.jdx"
    first, second, third = _batches(test_ads)[:3]
    with Index.open(index) as opened:
        opened.add(first, default_model)
        before = opened.groups()
    ads_file = tmp_path / "second.parquet"
    second.to_parquet(ads_file)
    # 1. Killed inside the transaction, after every write and before COMMIT (the hook sleeps there).
    process = _start_add(index, ads_file, {SLEEP_HOOK: "30"})
    for line in process.stderr:
        if "commit pending" in line:
            break
    process.send_signal(signal.SIGKILL)
    process.wait()
    with Index.open(index, read_only=True) as opened:
        pd.testing.assert_frame_equal(opened.groups(), before)
    # 2. Killed at random moments: the index holds the first batch, or the first two, never part.
    rng = random.Random(4)
    for _ in range(2):
        process = _start_add(index, ads_file, {})
        time.sleep(rng.uniform(1.0, 4.0))
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert _count_ads(index) in (len(first), len(first) + len(second))
    # 3. The index is usable afterwards and nothing is lost.
    with Index.open(index) as opened:
        opened.add(second, default_model)
        opened.add(third, default_model)
        groups = opened.groups()
    assert len(groups) == len(first) + len(second) + len(third)
    kept = groups.set_index("ad_id").loc[before["ad_id"], "group_id"]
    assert kept.notna().all()


@pytest.mark.slow
def test_single_ad_checks_are_single_ad_adds(tmp_path, default_model, test_ads):
    """One ad at a time, as the service checks them: with no candidate, with candidates none of
    them accepted, and with an accepted pair, `check` gives the pairs (probabilities included),
    group and merges that `add` gives the same ad on a copy of the index."""
    import shutil

    batches = _batches(test_ads)
    path = tmp_path / "single.jdx"
    with Index.open(path) as index:
        index.add(batches[0], default_model)
    kinds = set()
    for i in range(40):
        one = batches[1].iloc[[i]]
        with Index.open(path, read_only=True) as index:
            checked = index.check(one, default_model)
        shutil.copy(path, tmp_path / "copy.jdx")
        with Index.open(tmp_path / "copy.jdx") as index:
            added = index.add(one, default_model)
        pd.testing.assert_frame_equal(checked.pairs.drop(columns="dup_type"), added.pairs)
        pd.testing.assert_frame_equal(checked.groups, added.groups)
        pd.testing.assert_frame_equal(checked.merges, added.merges)
        accepted = (added.pairs["probability"] >= default_model.threshold_).any()
        kinds.add("no pair" if not len(added.pairs) else "accepted" if accepted else "none accepted")
    assert kinds == {"no pair", "none accepted", "accepted"}


@pytest.mark.slow
def test_a_process_holding_two_readers_reads_right_after_another_process_adds(
    tmp_path, default_model, test_ads
):
    """Two connections in this process (as the service's pool), then another process adds and
    closes, three times: every read sees the new ads. Opening the second store used to read the
    file's header with Python's `open`; closing that handle dropped the process's POSIX locks on
    the file (SQLite's own connections kept believing they held them), so the other process's
    close took the file as its own, removed the write-ahead log and left these connections reading
    a deleted one: "database disk image is malformed" on the first read after its add."""
    path = tmp_path / "ads.jdx"
    batches = _batches(test_ads, k=4)
    with Index.open(path) as index:
        index.add(batches[0], default_model)
    readers = [Index.open(path), Index.open(path)]
    try:
        assert [reader.stats()["ads"] for reader in readers] == [len(batches[0])] * 2
        expected = len(batches[0])
        for batch in batches[1:]:
            ads_file = tmp_path / "batch.parquet"
            batch.to_parquet(ads_file)
            adding = _start_add(path, ads_file, {})
            assert adding.wait(timeout=300) == 0, adding.stderr.read().decode()[-2000:]
            expected += len(batch)
            assert [reader.stats()["ads"] for reader in readers] == [expected] * 2
            assert Path(f"{path}-wal").exists()  # (kept: this process still has the file open)
    finally:
        for reader in readers:
            reader.close()


def test_a_file_that_is_not_an_index_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "notes.jdx"
    path.write_bytes(b"these are my notes, not an index\n" * 200)
    before = path.read_bytes()
    for read_only in (False, True):
        with pytest.raises(IndexFileError, match="not a jobdedup index \\(not an SQLite file\\)"):
            Index.open(path, read_only=read_only)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["notes.jdx"]
