"""The command line as users meet it: round trips on small real ads, help, one-line errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from jobdedup.pipeline.cli import main
from tests.conftest import DATA, run_cli

COMMANDS = ["demo", "train", "dedup", "evaluate"]


def _subset(tmp_path, n_groups: int = 60):
    """A small real-ad sample as CSV: whole label groups, so labels stay consistent."""
    ads = pd.read_parquet(DATA / "test_ads.parquet")
    labels = pd.read_parquet(DATA / "test_labels.parquet")
    keep = labels["group_id"].drop_duplicates().iloc[:n_groups]
    labels = labels[labels["group_id"].isin(keep)]
    ads = ads[ads["ad_id"].isin(labels["ad_id"])]
    ads.to_csv(tmp_path / "ads.csv", index=False)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    return ads, labels


@pytest.mark.slow
def test_train_dedup_evaluate_round_trip(tmp_path, capsys):
    ads, _ = _subset(tmp_path)
    train_ads = pd.read_parquet(DATA / "train_ads.parquet").iloc[:500]
    train_labels = pd.read_parquet(DATA / "train_labels.parquet")
    train_ads.to_parquet(tmp_path / "train.parquet")
    train_labels[train_labels["ad_id"].isin(train_ads["ad_id"])].to_parquet(tmp_path / "train_labels.parquet")
    model = tmp_path / "model.json"
    assert (
        main(
            [
                "train",
                "--ads",
                str(tmp_path / "train.parquet"),
                "--labels",
                str(tmp_path / "train_labels.parquet"),
                "--model",
                str(model),
                "--quiet",
            ]
        )
        == 0
    )
    assert "threshold" in capsys.readouterr().out
    assert (
        main(
            [
                "dedup",
                "--ads",
                str(tmp_path / "ads.csv"),
                "--model",
                str(model),
                "--out",
                str(tmp_path / "out"),
                "--quiet",
            ]
        )
        == 0
    )
    groups = pd.read_parquet(tmp_path / "out" / "groups.parquet")
    pairs = pd.read_parquet(tmp_path / "out" / "pairs.parquet")
    assert sorted(groups["ad_id"]) == sorted(ads["ad_id"].astype(str))
    assert list(pairs.columns[:4]) == ["ad_id_a", "ad_id_b", "probability", "is_duplicate"]
    assert (
        main(
            [
                "evaluate",
                "--ads",
                str(tmp_path / "ads.csv"),
                "--labels",
                str(tmp_path / "labels.csv"),
                "--model",
                str(model),
                "--json",
                str(tmp_path / "eval.json"),
                "--quiet",
            ]
        )
        == 0
    )
    figures = json.loads((tmp_path / "eval.json").read_text())
    for key in (
        "precision",
        "recall",
        "f1",
        "pr_auc",
        "threshold",
        "candidate_recall",
        "candidate_pairs",
        "labelled_pairs",
        "bcubed_precision",
        "bcubed_recall",
    ):
        assert key in figures
    assert figures["f1"] > 0.8 and figures["labelled_pairs"] > 0


def test_default_model_is_used_when_model_is_left_out(tmp_path):
    _subset(tmp_path, n_groups=20)
    assert main(["dedup", "--ads", str(tmp_path / "ads.csv"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert (tmp_path / "out" / "groups.parquet").exists()


def test_dedup_of_parquet_streams_texts_and_matches_csv(tmp_path):
    """Parquet descriptions are read slice by slice; the outputs equal those of the same ads as CSV."""
    ads, _ = _subset(tmp_path, n_groups=25)
    ads.to_parquet(tmp_path / "ads.parquet", row_group_size=7)
    for name in ("ads.csv", "ads.parquet"):
        argv = ["dedup", "--ads", str(tmp_path / name), "--out", str(tmp_path / name.replace(".", "_"))]
        assert main([*argv, "--quiet"]) == 0
    for output in ("pairs.parquet", "groups.parquet"):
        from_csv = pd.read_parquet(tmp_path / "ads_csv" / output)
        from_parquet = pd.read_parquet(tmp_path / "ads_parquet" / output)
        pd.testing.assert_frame_equal(from_csv, from_parquet)
    assert len(pd.read_parquet(tmp_path / "ads_parquet" / "groups.parquet")) == len(ads)


@pytest.mark.slow
def test_console_script_runs_in_a_subprocess(tmp_path):
    _subset(tmp_path, n_groups=15)
    done = run_cli(
        "evaluate",
        "--ads",
        tmp_path / "ads.csv",
        "--labels",
        tmp_path / "labels.csv",
        "--baseline",
        "--quiet",
    )
    assert done.returncode == 0, done.stderr
    assert "MinHash threshold" in done.stdout and "precision" in done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "--seed" in capsys.readouterr().out


@pytest.mark.slow
def test_errors_are_one_line_without_traceback(tmp_path):
    (tmp_path / "ads.csv").write_text("ad_id,title\n1,Chef\n")
    done = run_cli("dedup", "--ads", tmp_path / "ads.csv", "--out", tmp_path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "description" in lines[0] and "ads.csv" in lines[0]


def test_refuses_a_pickle_model_without_running_it(tmp_path):
    import pickle

    marker = tmp_path / "payload-ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    (tmp_path / "model.pkl").write_bytes(pickle.dumps(Payload()))
    _subset(tmp_path, n_groups=5)
    code = main(
        [
            "dedup",
            "--ads",
            str(tmp_path / "ads.csv"),
            "--model",
            str(tmp_path / "model.pkl"),
            "--out",
            str(tmp_path / "out"),
            "--quiet",
        ]
    )
    assert code == 2 and not marker.exists()


def test_train_refuses_to_overwrite_without_force(tmp_path, capsys):
    model = tmp_path / "model.json"
    model.write_text("{}")
    code = main(
        [
            "train",
            "--ads",
            str(DATA / "test_ads.parquet"),
            "--labels",
            str(DATA / "test_labels.parquet"),
            "--model",
            str(model),
            "--quiet",
        ]
    )
    assert code == 2 and "--force" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_trains_dedups_and_evaluates_bundled_data(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.count("F1") == 2 and "MinHash threshold" in out
    summary = json.loads((tmp_path / "evaluation.json").read_text())
    assert set(summary) == {"synthetic reposts and hard negatives", "hand-checked natural pairs"}
    assert (tmp_path / "model.json").exists() and (tmp_path / "test" / "groups.parquet").exists()


def test_train_members_sets_how_many_boosters_the_model_file_holds(tmp_path, capsys):
    train_ads = pd.read_parquet(DATA / "train_ads.parquet").iloc[:300]
    train_labels = pd.read_parquet(DATA / "train_labels.parquet")
    train_ads.to_parquet(tmp_path / "train.parquet")
    train_labels[train_labels["ad_id"].isin(train_ads["ad_id"])].to_parquet(tmp_path / "labels.parquet")
    common = ["train", "--ads", str(tmp_path / "train.parquet"), "--labels", str(tmp_path / "labels.parquet")]
    for members, name in ((None, "three.json"), ("1", "one.json")):
        extra = [] if members is None else ["--members", members]
        assert main([*common, "--model", str(tmp_path / name), "--quiet", *extra]) == 0
    boosters = {
        name: json.loads((tmp_path / name).read_text())["boosters"] for name in ("three.json", "one.json")
    }
    assert (len(boosters["three.json"]), len(boosters["one.json"])) == (3, 1)
    assert boosters["one.json"][0] == boosters["three.json"][0]  # the first member is the plain booster
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        main([*common, "--model", str(tmp_path / "zero.json"), "--members", "0"])
    assert refused.value.code == 2 and "--members: must be at least 1" in capsys.readouterr().err
    assert not (tmp_path / "zero.json").exists()


def test_train_weighs_each_labelled_set_as_told(tmp_path, capsys):
    """`--weight` per --ads/--labels set (what `make model` gives the natural pairs): recorded in the
    model file, and refused when their number does not match the sets'."""
    train_ads = pd.read_parquet(DATA / "train_ads.parquet").iloc[:300]
    train_labels = pd.read_parquet(DATA / "train_labels.parquet")
    train_ads.to_parquet(tmp_path / "train.parquet")
    train_labels[train_labels["ad_id"].isin(train_ads["ad_id"])].to_parquet(tmp_path / "labels.parquet")
    one_set = ["--ads", str(tmp_path / "train.parquet"), "--labels", str(tmp_path / "labels.parquet")]
    test_set = ["--ads", str(DATA / "test_ads.parquet"), "--labels", str(DATA / "test_labels.parquet")]
    model = tmp_path / "weighed.json"
    args = ["train", *one_set, "--weight", "1", *test_set, "--weight", "0.5", "--members", "1", "--quiet"]
    assert main([*args, "--model", str(model)]) == 0
    assert json.loads(model.read_text())["manifest"]["training"]["set_weights"] == [1.0, 0.5]
    capsys.readouterr()
    assert main(["train", *one_set, *test_set, "--weight", "0.5", "--model", str(tmp_path / "x.json")]) == 2
    assert "give one --weight per --ads" in capsys.readouterr().err
    assert main(["train", *one_set, "--weight", "0", "--model", str(tmp_path / "y.json")]) == 2
    assert "--weight must be positive" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "y.json").exists()


def test_dedup_warns_of_a_posted_at_that_is_no_date_and_keeps_the_ad(tmp_path, capsys):
    """An unreadable date is named in one warning line; the ad stays in every output, undated."""
    ads, _ = _subset(tmp_path, n_groups=15)
    ads = ads.assign(posted_at="2025-05-13")
    ads.iloc[3, ads.columns.get_loc("posted_at")] = "2025-13-45"
    ads.iloc[5, ads.columns.get_loc("posted_at")] = "yesterday"
    ads.to_csv(tmp_path / "dated.csv", index=False)
    argv = ["dedup", "--ads", str(tmp_path / "dated.csv"), "--out", str(tmp_path / "out"), "--quiet"]
    assert main(argv) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "posted_at" in line]
    assert len(warned) == 1 and warned[0].startswith("warning: ")
    assert "2 ad(s)" in warned[0] and f"row 4, ad_id '{ads['ad_id'].iloc[3]}'" in warned[0]
    groups = pd.read_parquet(tmp_path / "out" / "groups.parquet")
    assert sorted(groups["ad_id"]) == sorted(ads["ad_id"].astype(str))


def test_index_add_warns_once_of_a_posted_at_that_is_no_date(tmp_path, capsys):
    """`index add` validates the ads `read_ads` gave it again: the warning still comes once."""
    ads, _ = _subset(tmp_path, n_groups=5)
    ads.assign(posted_at=["yesterday", *["2025-05-13"] * (len(ads) - 1)]).to_csv(
        tmp_path / "dated.csv", index=False
    )
    argv = [
        "index",
        "add",
        "--index",
        str(tmp_path / "ads.jdx"),
        "--ads",
        str(tmp_path / "dated.csv"),
        "--quiet",
    ]
    assert main(argv) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "posted_at" in line]
    assert len(warned) == 1 and "1 ad(s)" in warned[0] and "'yesterday'" in warned[0]


_HAYSTACK_ADS = [f"jobspy_martadatauk_uk:linkedin_jobs.csv:{n}" for n in (152, 368, 378)]


def _partition(groups: pd.DataFrame) -> list[list[str]]:
    return sorted(sorted(members) for members in groups.groupby("group_id")["ad_id"].apply(list))


def test_dedup_and_a_two_batch_index_group_one_employers_copies_alike(tmp_path):
    """Real ads (bundled natural pairs): Haystack's contract Data Platform Engineer in Bristol, one
    body under two titles and a rewording of it. The retitled copy and the rewording score below
    the threshold, and one employer in one town links nothing on its own (issue 50): each ad joins
    a group by its own pairs. `dedup` and an index built in two batches (the rewording last) group
    them alike."""
    natural = pd.concat(
        [pd.read_parquet(DATA / f) for f in ("natural_test_ads.parquet", "natural_late_ads.parquet")]
    )
    ads = natural.drop_duplicates("ad_id").set_index("ad_id").loc[_HAYSTACK_ADS].reset_index()
    ads.to_csv(tmp_path / "ads.csv", index=False)
    assert main(["dedup", "--ads", str(tmp_path / "ads.csv"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    pairs = pd.read_parquet(tmp_path / "out" / "pairs.parquet")
    assert (~pairs["is_duplicate"]).any()  # one of the three pairs is not accepted on its own
    deduped = _partition(pd.read_parquet(tmp_path / "out" / "groups.parquet"))
    assert sorted(ad for group in deduped for ad in group) == sorted(_HAYSTACK_ADS)
    index = tmp_path / "ads.jdx"
    for k, batch in enumerate((ads.iloc[:2], ads.iloc[2:])):
        batch.to_csv(tmp_path / f"batch{k}.csv", index=False)
        assert (
            main(["index", "add", "--index", str(index), "--ads", str(tmp_path / f"batch{k}.csv"), "--quiet"])
            == 0
        )
    assert (
        main(
            ["index", "groups", "--index", str(index), "--out", str(tmp_path / "indexed.parquet"), "--quiet"]
        )
        == 0
    )
    assert _partition(pd.read_parquet(tmp_path / "indexed.parquet")) == deduped
