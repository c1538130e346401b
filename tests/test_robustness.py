"""Bad input gets a one-line error, nothing is lost, model files are safe, outputs are repeatable.

Everything here goes through the command line as a user meets it: ``pipeline.cli.main`` in-process
(exit code and stderr via capsys) and, where the real process matters (stderr lines, tracebacks,
exit codes), ``python -m jobdedup.pipeline.cli`` in a subprocess.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pandas as pd
import pytest

from jobdedup.features.pairs import MODEL_FEATURES
from jobdedup.models.persistence import save_model_file
from jobdedup.pipeline.cli import main
from jobdedup.pipeline.model_files import DEFAULT_MODEL
from jobdedup.pipeline.prepare import STATUS_FIELDS_ONLY, STATUS_NOT_COMPARABLE, STATUS_OK
from tests.conftest import DATA, run_cli

CONTRACT_GROUP_COLUMNS = ["ad_id", "group_id", "group_size", "status"]


# --------------------------------------------------------------------------------------------------
# helpers


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    """Run the CLI in-process: (exit code, stdout, stderr)."""
    code = main([*map(str, args), "--quiet"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_error_line(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"jobdedup {command}: error: "), err
    assert "Traceback" not in err
    return lines[0]


def _warning_lines(err: str) -> list[str]:
    lines = err.strip().splitlines()
    assert all(line.startswith("warning: ") for line in lines), err
    return lines


def _real_ads(n: int = 40) -> pd.DataFrame:
    """Real bundled ads (with their reposts), as text columns."""
    ads = pd.read_parquet(DATA / "test_ads.parquet").iloc[:n]
    return ads.astype(object).where(ads.notna(), None)


def _groups(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "groups.parquet")


@pytest.fixture(scope="module")
def ok_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ok") / "ads.csv"
    path.write_text(
        "ad_id,description,title\n1,Chef wanted in a busy Paris kitchen,Chef\n2,Waiter needed,Waiter\n"
    )
    return path


# --------------------------------------------------------------------------------------------------
# bad input: non-zero exit, one line naming the file, the row or column, and the fix


def _write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


ADS_CASES = {
    # name: (file name, content or None for "do not create", expected fragments of the message)
    "missing file": ("nope.csv", None, ["nope.csv", "not found", "check the path"]),
    "unknown extension": ("ads.txt", "ad_id,description\n1,a\n", ["ads.txt", "unknown file type", ".csv"]),
    "empty file": ("ads.csv", "", ["ads.csv", "empty", "expected a header row"]),
    "header only": ("ads.csv", "ad_id,description\n", ["ads.csv", "no ads", "add at least one ad"]),
    "missing column": (
        "ads.csv",
        "ad_id,title\n1,Chef\n",
        ["ads.csv", "'description'", "missing", "add the missing column"],
    ),
    "duplicate ad_id": (
        "ads.csv",
        "ad_id,description\n1,a\n2,b\n1,c\n",
        ["ads.csv", "ad_id '1'", "rows 1 and 3", "must be unique"],
    ),
    "null ad_id (csv)": (
        "ads.csv",
        "ad_id,description\n1,a\n,b\n",
        ["ads.csv", "row 2", "ad_id is empty", "non-empty ad_id"],
    ),
    "null ad_id (jsonl)": (
        "ads.jsonl",
        '{"ad_id": "1", "description": "a"}\n{"ad_id": null, "description": "b"}\n',
        ["ads.jsonl", "row 2", "ad_id is empty"],
    ),
    "malformed csv row": (
        "ads.csv",
        'ad_id,description\n1,a\n2,b,"c"\n3,d\n',
        ["ads.csv", "row 2 (line 3)", "3 field(s)", "quote values"],
    ),
    "malformed jsonl line": (
        "ads.jsonl",
        '{"ad_id": "1", "description": "a"}\n{"ad_id": "2", "description": \n',
        ["ads.jsonl", "line 2", "not valid JSON", "one complete JSON object per line"],
    ),
    "not a parquet file": ("ads.parquet", "ad_id,description\n1,a\n", ["ads.parquet", "Parquet"]),
}


@pytest.mark.parametrize("case", list(ADS_CASES))
@pytest.mark.parametrize("command", ["dedup", "evaluate", "train"])
def test_bad_ads_file_is_one_line_error(tmp_path, capsys, case, command):
    name, content, expected = ADS_CASES[case]
    ads = tmp_path / name
    if content is not None:
        _write(tmp_path, name, content)
    labels = _write(tmp_path, "labels.csv", "ad_id_a,ad_id_b,label\n1,2,1\n")
    args = {
        "dedup": ["dedup", "--ads", ads, "--out", tmp_path / "out"],
        "evaluate": ["evaluate", "--ads", ads, "--labels", labels],
        "train": ["train", "--ads", ads, "--labels", labels, "--model", tmp_path / "m.json"],
    }[command]
    code, _, err = _cli(capsys, *args)
    assert code == 2
    line = _one_error_line(err, command)
    for fragment in expected:
        assert fragment in line, line
    assert not (tmp_path / "out").exists() and not (tmp_path / "m.json").exists()


LABEL_CASES = {
    "ids not in the ads": (
        "ad_id_a,ad_id_b,label\n1,2,1\n1,99,0\n",
        ["labels.csv", "'99'", "not in the ads", "label only ads of the ads file"],
    ),
    "conflicting duplicates": (
        "ad_id_a,ad_id_b,label\n1,2,1\n2,1,0\n",
        ["labels.csv", "'1' / '2'", "row 1", "row 2", "keep one label per pair"],
    ),
    "label 2": ("ad_id_a,ad_id_b,label\n1,2,2\n", ["labels.csv", "row 1", "label is '2'", "use 1", "0"]),
    "label yes": ("ad_id_a,ad_id_b,label\n1,2,1\n1,2,yes\n", ["labels.csv", "row 2", "label is 'yes'"]),
    "label empty": ("ad_id_a,ad_id_b,label\n1,2,\n", ["labels.csv", "row 1", "label is empty"]),
    "ad in two groups": (
        "ad_id,group_id\n1,g1\n2,g1\n1,g2\n",
        ["labels.csv", "ad '1'", "row 1", "row 3", "one group"],
    ),
    "neither form": ("a,b\n1,2\n", ["labels.csv", "neither labels form", "ad_id_a"]),
    "header only": ("ad_id_a,ad_id_b,label\n", ["labels.csv", "no labels", "add at least one label"]),
}


@pytest.mark.parametrize("case", list(LABEL_CASES))
@pytest.mark.parametrize("command", ["evaluate", "train"])
def test_bad_labels_file_is_one_line_error(tmp_path, capsys, ok_csv, case, command):
    content, expected = LABEL_CASES[case]
    labels = _write(tmp_path, "labels.csv", content)
    args = {
        "evaluate": ["evaluate", "--ads", ok_csv, "--labels", labels],
        "train": ["train", "--ads", ok_csv, "--labels", labels, "--model", tmp_path / "m.json"],
    }[command]
    code, _, err = _cli(capsys, *args)
    assert code == 2
    line = _one_error_line(err, command)
    for fragment in expected:
        assert fragment in line, line


@pytest.mark.slow
def test_errors_in_a_real_process_are_one_line_and_debug_shows_the_traceback(tmp_path):
    ads = _write(tmp_path, "ads.csv", "ad_id,description\n1,a\n2,b\n1,c\n")
    done = run_cli("dedup", "--ads", ads, "--out", tmp_path / "out", "--quiet")
    assert done.returncode == 2
    line = _one_error_line(done.stderr, "dedup")
    assert "ads.csv" in line and "rows 1 and 3" in line
    debug = run_cli("dedup", "--ads", ads, "--out", tmp_path / "out", "--quiet", "--debug")
    assert debug.returncode != 0 and "Traceback" in debug.stderr and "InputError" in debug.stderr


def test_output_folder_that_is_a_file_is_one_line_error(tmp_path, capsys, ok_csv):
    blocker = _write(tmp_path, "taken", "a file, not a folder")
    code, _, err = _cli(capsys, "dedup", "--ads", ok_csv, "--out", blocker / "out")
    assert code == 2
    assert "taken" in _one_error_line(err, "dedup")


def test_bad_max_description_chars_is_a_usage_error(ok_csv, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["dedup", "--ads", str(ok_csv), "--out", str(tmp_path), "--max-description-chars", "0"])
    assert exit_info.value.code == 2
    assert "--max-description-chars" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------
# input that is odd but usable: warnings are one clean line each, every ad comes out


@pytest.mark.slow
def test_non_utf8_bytes_are_replaced_counted_and_shown_as_one_warning_line(tmp_path):
    ads = _write(
        tmp_path,
        "latin1.csv",
        "ad_id,description,title\n1,Caf\xe9 chef wanted for our kitchen,Chef\n2,Gar\xe7on \xe0 Paris,Waiter\n".encode(
            "latin-1"
        ),
    )
    done = run_cli("dedup", "--ads", ads, "--out", tmp_path / "out", "--quiet")
    assert done.returncode == 0, done.stderr
    (line,) = _warning_lines(done.stderr)
    assert "latin1.csv" in line and "3 character(s) were not valid UTF-8" in line and "UTF-8" in line
    assert sorted(_groups(tmp_path / "out")["ad_id"]) == ["1", "2"]


def test_ids_that_look_alike_stay_distinct_strings(tmp_path, capsys):
    text = "Senior accountant wanted for a growing firm in Leeds, full time, good salary and benefits"
    ids = ["007", "7", "07", "7.0", " 7"]
    ads = pd.DataFrame({"ad_id": ids, "description": [text] * 5, "title": ["Accountant"] * 5})
    ads.to_csv(tmp_path / "ads.csv", index=False)
    code, _, err = _cli(capsys, "dedup", "--ads", tmp_path / "ads.csv", "--out", tmp_path / "out")
    assert code == 0, err
    groups = _groups(tmp_path / "out")
    assert sorted(groups["ad_id"]) == sorted(ids) and groups["ad_id"].map(type).eq(str).all()
    pairs = pd.read_parquet(tmp_path / "out" / "pairs.parquet")
    assert set(pairs["ad_id_a"]) | set(pairs["ad_id_b"]) <= set(ids)
    assert groups["group_size"].eq(5).all()  # the same text five times: one vacancy, five ads


def test_nothing_is_lost_and_uncomparable_ads_say_why(tmp_path, capsys):
    real = _real_ads(40)
    odd = pd.DataFrame(
        {
            "ad_id": ["empty", "blank", "fields_only", "nothing", "script_only", "null_desc", "emoji_only"],
            "description": [
                "",
                "   \t \n  ",
                "",
                " ",
                "<script>var tracking = 'many words in a script';</script><style>p {color: red}</style>",
                None,
                "🚀🚀 ✨",
            ],
            "title": [None, "Welder", "Forklift driver", None, None, None, "Barista"],
            "company": [None, None, "Acme Logistics", None, None, None, None],
            "contact": [None, None, None, None, None, "jobs@example.org", None],
        }
    )
    ads = pd.concat([real.iloc[:20], odd, real.iloc[20:]], ignore_index=True)
    ads.to_json(tmp_path / "ads.jsonl", orient="records", lines=True, force_ascii=False)
    code, _, err = _cli(capsys, "dedup", "--ads", tmp_path / "ads.jsonl", "--out", tmp_path / "out")
    assert code == 0, err
    groups = _groups(tmp_path / "out")
    assert len(groups) == len(ads) and sorted(groups["ad_id"]) == sorted(ads["ad_id"])
    assert groups["group_id"].notna().all() and (groups["group_size"] >= 1).all()
    status = groups.set_index("ad_id")["status"]
    assert status["empty"] == STATUS_NOT_COMPARABLE
    assert status["nothing"] == STATUS_NOT_COMPARABLE
    assert status["script_only"] == STATUS_NOT_COMPARABLE
    assert status["blank"] == STATUS_FIELDS_ONLY
    assert status["fields_only"] == STATUS_FIELDS_ONLY
    assert status["null_desc"] == STATUS_FIELDS_ONLY  # an e-mail address is a field
    assert status["emoji_only"] == STATUS_FIELDS_ONLY
    has_text = real["description"].fillna("").str.strip() != ""
    assert (status[real["ad_id"][has_text]] == STATUS_OK).all()
    assert (status[real["ad_id"][~has_text]] != STATUS_OK).all()  # the bundled data has one such ad
    assert set(status) <= {STATUS_OK, STATUS_FIELDS_ONLY, STATUS_NOT_COMPARABLE}


def test_extra_input_columns_are_carried_into_groups(tmp_path, capsys):
    ads = _real_ads(30)[["ad_id", "description", "title"]].copy()
    ads.insert(1, "batch", [f"b{i % 3:02d}" for i in range(len(ads))])
    ads["status"] = "draft"  # clashes with an output column: carried as input_status
    ads["note"] = ["007", "", "NA"] * 10
    ads.to_csv(tmp_path / "ads.csv", index=False)
    code, _, err = _cli(capsys, "dedup", "--ads", tmp_path / "ads.csv", "--out", tmp_path / "out")
    assert code == 0, err
    groups = _groups(tmp_path / "out")
    assert list(groups.columns) == [*CONTRACT_GROUP_COLUMNS, "batch", "input_status", "note"]
    joined = groups.merge(ads, on="ad_id", suffixes=("", "_in"), validate="one_to_one")
    assert len(joined) == len(ads)
    assert (joined["batch"] == joined["batch_in"]).all()
    assert (joined["note"] == joined["note_in"].fillna("")).all()  # "" and "NA" stay as written
    assert (joined["input_status"] == "draft").all()
    assert set(groups["status"]) <= {STATUS_OK, STATUS_FIELDS_ONLY, STATUS_NOT_COMPARABLE}


def test_huge_description_is_cut_at_the_configurable_cap_with_a_warning(tmp_path, capsys):
    ads = _real_ads(10)[["ad_id", "description", "title"]].copy()
    huge = ("Warehouse operative wanted, shifts and overtime available. " * 90_000)[:5_000_000]
    ads.loc[len(ads)] = {"ad_id": "huge", "description": huge, "title": "Warehouse operative"}
    ads.to_csv(tmp_path / "ads.csv", index=False)
    code, _, err = _cli(capsys, "dedup", "--ads", tmp_path / "ads.csv", "--out", tmp_path / "default")
    assert code == 0
    (line,) = _warning_lines(err)
    assert "ads.csv" in line and "1 ad(s)" in line and "cut to 100000" in line
    code, _, err = _cli(
        capsys,
        "dedup",
        "--ads",
        tmp_path / "ads.csv",
        "--out",
        tmp_path / "small",
        "--max-description-chars",
        "50000",
    )
    assert code == 0
    (line,) = _warning_lines(err)
    assert "cut to 50000" in line and "descriptions longer than 50000" in line
    for out in ("default", "small"):
        groups = _groups(tmp_path / out)
        assert len(groups) == len(ads) and groups.set_index("ad_id").loc["huge", "status"] == STATUS_OK
    labels = _write(tmp_path, "labels.csv", f"ad_id_a,ad_id_b,label\nhuge,{ads['ad_id'].iloc[0]},0\n")
    code, out, err = _cli(
        capsys,
        "evaluate",
        "--ads",
        tmp_path / "ads.csv",
        "--labels",
        labels,
        "--max-description-chars",
        "2000",
    )
    assert code == 0 and "precision" in out
    assert "cut to 2000" in _warning_lines(err)[0]


def test_train_takes_max_description_chars_and_keeps_it_in_the_model(tmp_path, capsys):
    ads = pd.read_parquet(DATA / "train_ads.parquet")
    labels = pd.read_parquet(DATA / "train_labels.parquet")
    keep = labels["group_id"].drop_duplicates().iloc[:80]
    labels = labels[labels["group_id"].isin(keep)]
    ads[ads["ad_id"].isin(labels["ad_id"])].to_parquet(tmp_path / "ads.parquet")
    labels.to_parquet(tmp_path / "labels.parquet")
    code, _, err = _cli(
        capsys,
        "train",
        "--ads",
        tmp_path / "ads.parquet",
        "--labels",
        tmp_path / "labels.parquet",
        "--model",
        tmp_path / "m.json",
        "--max-description-chars",
        "300",
    )
    assert code == 0, err
    (line,) = _warning_lines(err)
    assert "cut to 300" in line
    manifest = json.loads((tmp_path / "m.json").read_text())["manifest"]
    assert manifest["config"]["max_description_chars"] == 300


def test_html_scripts_and_styles_do_not_count_as_text(tmp_path, capsys):
    visible = (
        "We are hiring a registered nurse for our cardiology ward in Bristol. You will care for patients "
        "before and after surgery, work with doctors and keep accurate records. Full time, 37.5 hours."
    )
    script = "<script>" + "var tracker = analytics.load('x'); " * 50 + "</script>"
    style = "<style>" + ".job-ad p { color: #333; margin: 0 } " * 50 + "</style>"
    html_ad = f"<html><head>{style}{script}</head><body><h1>Nurse</h1><p>{visible}</p></body></html>"
    other_script = f"<div>{script}<p>Kitchen porter needed in Leeds, evenings and weekends.</p></div>"
    ads = pd.DataFrame(
        {
            "ad_id": ["html", "plain", "other"],
            "description": [html_ad, "Nurse\n" + visible, other_script],
            "title": ["Registered nurse", "Registered nurse", "Kitchen porter"],
            "company": ["NHS Bristol", "NHS Bristol", "The Grill"],
        }
    )
    ads.to_csv(tmp_path / "ads.csv", index=False)
    code, _, err = _cli(capsys, "dedup", "--ads", tmp_path / "ads.csv", "--out", tmp_path / "out")
    assert code == 0, err
    group = _groups(tmp_path / "out").set_index("ad_id")["group_id"]
    assert group["html"] == group["plain"] != group["other"]


MULTILINGUAL = {
    "ru": (
        "Разработчик Python",
        (
            "Мы ищем опытного разработчика Python в нашу команду в Москве. Обязанности: разработка и "
            "поддержка серверных приложений, участие в code review, работа с базами данных PostgreSQL. "
            "Требования: опыт работы от трёх лет, знание Django или FastAPI, английский язык."
        ),
    ),
    "el": (
        "Λογιστής",
        (
            "Εταιρεία στην Αθήνα αναζητά λογιστή με εμπειρία για πλήρη απασχόληση. Αρμοδιότητες: τήρηση "
            "βιβλίων, έκδοση τιμολογίων, φορολογικές δηλώσεις και συνεργασία με τράπεζες. Προσόντα: πτυχίο "
            "οικονομικών, γνώση αγγλικών, τρία χρόνια εμπειρίας."
        ),
    ),
    "zh": (
        "高级软件工程师",
        (
            "我们正在招聘一名高级软件工程师，负责开发和维护我们的核心产品。职责：设计系统架构，编写高质量代码，"
            "指导初级工程师。要求：五年以上工作经验，精通Python和分布式系统。工作地点：北京。福利：五险一金，"
            "带薪年假，弹性工作时间。"
        ),
    ),
    "ar": (
        "محاسب",
        (
            "تبحث شركتنا في دبي عن محاسب ذو خبرة للعمل بدوام كامل. المسؤوليات: إعداد التقارير المالية، "
            "متابعة الحسابات، إعداد الميزانية ومراجعة الفواتير. المتطلبات: شهادة جامعية في المحاسبة، خبرة "
            "ثلاث سنوات على الأقل، إجادة اللغة الإنجليزية."
        ),
    ),
}


def _sprinkle(text: str) -> str:
    """The same text with right-to-left marks, zero-width characters, a BOM and emoji added."""
    words = text.split(" ")
    out = []
    for i, word in enumerate(words):
        if i % 3 == 0 and len(word) > 2:
            word = word[:1] + "\u200b" + word[1:]  # zero-width space inside a word
        if i % 4 == 1:
            word = "\u200f" + word + "\u200e"  # RTL / LTR marks
        if i % 5 == 2 and len(word) > 3:
            word = word[:2] + "\u061c" + word[2:] + "\u2066\u2069"  # Arabic letter mark, isolates
        out.append(word)
        if i % 7 == 3:
            out.append("🚀")
    return "\ufeff" + " ".join(out) + " 👍🏽"


def test_cyrillic_greek_cjk_arabic_with_invisible_marks_and_emoji(tmp_path, capsys):
    rows = []
    for lang, (title, text) in MULTILINGUAL.items():
        rows.append({"ad_id": f"{lang}-1", "description": text, "title": title, "language": lang})
        rows.append(
            {
                "ad_id": f"{lang}-2",
                "description": _sprinkle(text),
                "title": _sprinkle(title),
                "language": lang,
            }
        )
    pd.DataFrame(rows).to_csv(tmp_path / "ads.csv", index=False)
    code, _, err = _cli(capsys, "dedup", "--ads", tmp_path / "ads.csv", "--out", tmp_path / "out")
    assert code == 0, err
    groups = _groups(tmp_path / "out").set_index("ad_id")
    assert (groups["status"] == STATUS_OK).all()
    group_of = groups["group_id"]
    for lang in MULTILINGUAL:
        assert group_of[f"{lang}-1"] == group_of[f"{lang}-2"], lang
    assert group_of.nunique() == len(MULTILINGUAL)
    pairs = pd.read_parquet(tmp_path / "out" / "pairs.parquet")
    same = pairs[pairs["ad_id_a"].str[:2] == pairs["ad_id_b"].str[:2]]
    assert (same["probability"] > 0.5).all() and len(same) == len(MULTILINGUAL)


# --------------------------------------------------------------------------------------------------
# model files


@pytest.fixture(scope="module")
def default_document() -> dict:
    return json.loads(DEFAULT_MODEL.read_text())


def _model_with(path: Path, document: dict, **manifest_changes) -> Path:
    manifest = {**document["manifest"], **manifest_changes}
    save_model_file(path, manifest, document["boosters"])
    return path


class _Payload:
    """Unpickling this creates a file: proof that a pickle ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _bad_model(tmp_path: Path, kind: str, document: dict) -> tuple[Path, str]:
    """A model file of the given kind and a fragment its error message must contain."""
    path = tmp_path / "model.json"
    text = json.dumps(document, sort_keys=True)
    if kind == "tampered":
        changed = json.loads(text)
        changed["manifest"]["threshold"] = 0.01
        path.write_text(json.dumps(changed))
        return path, "checksum mismatch"
    if kind == "tampered booster":
        changed = json.loads(text)
        changed["boosters"][-1] = changed["boosters"][-1].replace("leaf_value=", "leaf_value=9", 1)
        path.write_text(json.dumps(changed))
        return path, "checksum mismatch"
    if kind == "truncated":
        path.write_text(text[: len(text) // 2])
        return path, "not JSON"
    if kind == "empty":
        path.write_text("")
        return path, "not JSON"
    if kind == "foreign json":
        path.write_text(json.dumps({"weights": [0.1, 0.2], "bias": 1}))
        return path, "missing format marker"
    if kind == "json array":
        path.write_text("[1, 2, 3]")
        return path, "missing format marker"
    if kind == "format version":
        changed = json.loads(text)
        changed["format_version"] = 2  # one booster, written before the ensemble
        path.write_text(json.dumps(changed))
        return path, "format version 2"
    if kind == "manifest missing":
        changed = json.loads(text)
        del changed["manifest"]
        path.write_text(json.dumps(changed))
        return path, "truncated or malformed"
    if kind == "no boosters":
        save_model_file(path, document["manifest"], [])
        return path, "truncated or malformed"
    if kind == "other kind":
        return _model_with(path, document, kind="sklearn.Pipeline"), "not a jobdedup deduplicator"
    if kind == "other features":
        return _model_with(path, document, features=[*MODEL_FEATURES[:-1], "new_feature"]), "other features"
    if kind == "crafted manifest":  # a valid checksum is no secret: the content is still checked
        save_model_file(path, {"kind": "jobdedup.Deduplicator", "features": MODEL_FEATURES}, ["tree"])
        return path, "malformed"
    if kind == "bad booster":
        save_model_file(
            path, document["manifest"], [*document["boosters"][:1], "tree\nversion=v4\nnum_class=1\n"]
        )
        return path, "malformed"
    if kind == "bad threshold":
        return _model_with(path, document, threshold="high"), "malformed"
    if kind == "nan threshold":
        return _model_with(path, document, threshold=float("nan")), "inconsistent"
    if kind == "deep nesting":
        path.write_text("[" * 100_000 + "]" * 100_000)
        return path, "not JSON"
    if kind == "directory":
        path.mkdir()
        return path, "not found"
    raise AssertionError(kind)


MODEL_CASES = [
    "tampered",
    "tampered booster",
    "truncated",
    "empty",
    "foreign json",
    "json array",
    "format version",
    "manifest missing",
    "no boosters",
    "other kind",
    "other features",
    "crafted manifest",
    "bad booster",
    "bad threshold",
    "nan threshold",
    "deep nesting",
    "directory",
]


@pytest.mark.parametrize("kind", MODEL_CASES)
def test_bad_model_file_is_refused_with_one_line(tmp_path, capsys, ok_csv, default_document, kind):
    model, expected = _bad_model(tmp_path, kind, default_document)
    code, _, err = _cli(capsys, "dedup", "--ads", ok_csv, "--model", model, "--out", tmp_path / "out")
    assert code == 2
    line = _one_error_line(err, "dedup")
    assert str(model) in line and expected in line, line
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize("form", ["pickle", "pickle named .json", "joblib", "joblib compressed"])
def test_pickle_and_joblib_models_are_refused_and_never_run(tmp_path, capsys, ok_csv, form):
    import joblib

    marker = tmp_path / "payload-ran"
    model = tmp_path / ("model.json" if form == "pickle named .json" else "model.pkl")
    if form.startswith("pickle"):
        model.write_bytes(pickle.dumps(_Payload(marker)))
    else:
        joblib.dump(_Payload(marker), model, compress=3 if form.endswith("compressed") else 0)
    assert not marker.exists()
    expected = "pickle/joblib files are refused and never loaded"
    done = run_cli("dedup", "--ads", ok_csv, "--model", model, "--out", tmp_path / "out", "--quiet")
    assert done.returncode == 2
    line = _one_error_line(done.stderr, "dedup")
    assert str(model) in line and expected in line
    labels = _write(tmp_path, "l.csv", "ad_id_a,ad_id_b,label\n1,2,0\n")
    code, _, err = _cli(capsys, "evaluate", "--ads", ok_csv, "--labels", labels, "--model", model)
    assert code == 2 and expected in _one_error_line(err, "evaluate")
    assert not marker.exists() and not (tmp_path / "out").exists()


def test_model_from_another_lightgbm_major_version_warns_once_and_loads(
    tmp_path, capsys, ok_csv, default_document
):
    versions = {**default_document["manifest"]["versions"], "lightgbm": "3.3.5"}
    model = _model_with(tmp_path / "old.json", default_document, versions=versions)
    code, out, err = _cli(capsys, "dedup", "--ads", ok_csv, "--model", model, "--out", tmp_path / "out")
    assert code == 0 and "2 ads" in out
    (line,) = _warning_lines(err)
    assert "old.json" in line and "lightgbm 3.3.5" in line and "retrain" in line
    same_major = {**versions, "lightgbm": default_document["manifest"]["versions"]["lightgbm"]}
    model = _model_with(tmp_path / "same.json", default_document, versions=same_major)
    code, _, err = _cli(capsys, "dedup", "--ads", ok_csv, "--model", model, "--out", tmp_path / "out2")
    assert code == 0 and err == ""


# --------------------------------------------------------------------------------------------------
# determinism


@pytest.mark.slow
def test_same_inputs_model_and_seed_give_byte_identical_outputs(tmp_path):
    ads = _real_ads(250).copy()
    ads["extra"] = [f"x{i}" for i in range(len(ads))]
    ads.to_csv(tmp_path / "ads.csv", index=False)
    runs = []
    for name in ("a", "b"):
        done = run_cli(
            "dedup", "--ads", tmp_path / "ads.csv", "--out", tmp_path / name, "--seed", "7", "--quiet"
        )
        assert done.returncode == 0, done.stderr
        runs.append(tmp_path / name)
    for file in ("pairs.parquet", "groups.parquet"):
        assert (runs[0] / file).read_bytes() == (runs[1] / file).read_bytes(), file
    assert len(pd.read_parquet(runs[0] / "pairs.parquet")) > 0
