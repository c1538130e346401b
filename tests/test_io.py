"""Reading, validating and writing the contract tables (pipeline.io)."""

from __future__ import annotations

import gzip
import json
import warnings
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobdedup.pipeline.errors import InputError, InputWarning, JobdedupError
from jobdedup.pipeline.io import (
    ADS_COLUMNS,
    Labels,
    read_ads,
    read_labels,
    read_table,
    validate_ads,
    validate_labels,
    write_table,
)

FORMATS = ["csv", "jsonl", "parquet", "csv.gz", "jsonl.gz"]


def write_csv(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def ads_frame(n: int = 3) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "ad_id": [f"{i:03d}" for i in range(n)],
            "description": [f"<p>Nurse wanted, ad {i}</p>" for i in range(n)],
            "title": ["Nurse"] * n,
        }
    )


def no_temp_files(directory: Path) -> bool:
    return not [p for p in directory.rglob("*") if p.name.endswith(".tmp")]


# --------------------------------------------------------------------------------------------------
# read_table / write_table


@pytest.mark.parametrize("ext", FORMATS)
def test_round_trip_every_format(tmp_path: Path, ext: str) -> None:
    df = pd.DataFrame(
        {
            "ad_id": ["007", "7", "x y"],
            "description": ['a, "quoted"\nline', "", "ünïcödé €"],
            "note": ["NA", "null", "None"],
        }
    )
    path = tmp_path / f"t.{ext}"
    write_table(df, path)
    back = read_table(path)
    assert list(back.columns) == ["ad_id", "description", "note"]
    assert back.to_dict("list") == df.to_dict("list")
    assert all(dtype == "string" for dtype in back.dtypes)
    assert isinstance(back.index, pd.RangeIndex)
    assert no_temp_files(tmp_path)


def test_csv_ids_are_text_not_numbers(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.csv", "ad_id,description,salary\n007,a,1.50\n7,b,\n")
    df = read_table(path)
    assert df["ad_id"].tolist() == ["007", "7"]
    assert df["salary"].tolist() == ["1.50", ""]


def test_jsonl_numbers_keep_their_literal_text(tmp_path: Path) -> None:
    lines = [
        '{"ad_id": 7, "description": "x", "score": 1.50, "ok": true, "tags": [1, 2.0], "z": null}',
        "",
        '{"ad_id": "007", "description": null}',
    ]
    path = write_csv(tmp_path / "ads.jsonl", "\n".join(lines) + "\n")
    df = read_table(path)
    assert df["ad_id"].tolist() == ["7", "007"]
    first = df.iloc[0]
    assert (first["score"], first["ok"], first["tags"]) == ("1.50", "true", "[1, 2.0]")
    assert df["description"].isna().tolist() == [False, True]
    assert df["z"].isna().all()


def test_json_array_file_is_accepted(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.json", '[{"ad_id": 1, "description": "a"}, {"ad_id": "01"}]')
    assert read_table(path)["ad_id"].tolist() == ["1", "01"]


def test_parquet_non_string_columns_become_text(tmp_path: Path) -> None:
    table = pa.table(
        {
            "ad_id": pa.array([7, 8], pa.int64()),
            "description": pa.array(["a", None]),
            "score": pa.array([1.5, None]),
            "flag": pa.array([True, False]),
            "tags": pa.array([[1, 2], []]),
        }
    )
    path = tmp_path / "ads.parquet"
    pq.write_table(table, path)
    df = read_table(path)
    assert df["ad_id"].tolist() == ["7", "8"]
    assert df["score"].iloc[0] == "1.5" and pd.isna(df["score"].iloc[1])
    assert df["flag"].tolist() == ["true", "false"]
    assert df["tags"].tolist() == ["[1, 2]", "[]"]
    assert pd.isna(df["description"].iloc[1])
    assert all(dtype == "string" for dtype in df.dtypes)


def test_parquet_pandas_index_column_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "ads.parquet"
    ads_frame().set_index(pd.Index([5, 6, 7])).to_parquet(path)
    assert list(read_table(path).columns) == ["ad_id", "description", "title"]


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.csv"
    with pytest.raises(InputError, match="nope.csv: file not found"):
        read_table(path)


def test_unknown_extension(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.xlsx", "ad_id,description\n1,a\n")
    with pytest.raises(InputError) as info:
        read_table(path)
    assert "ads.xlsx" in str(info.value)
    assert "unknown file type (.xlsx)" in str(info.value)
    assert ".csv, .jsonl or .parquet" in str(info.value)
    with pytest.raises(InputError, match=r"unknown file type \(.xlsx\)"):
        write_table(ads_frame(), tmp_path / "out.xlsx")


@pytest.mark.parametrize("ext", ["csv", "jsonl", "parquet", "csv.gz"])
def test_empty_file(tmp_path: Path, ext: str) -> None:
    path = tmp_path / f"ads.{ext}"
    path.write_bytes(b"")
    with pytest.raises(InputError) as info:
        read_table(path)
    assert str(info.value).startswith(f"{path}: the file is empty (0 bytes)")


def test_blank_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"blank.csv: the file has no header row"):
        read_table(write_csv(tmp_path / "blank.csv", "\n  \n"))
    with pytest.raises(InputError, match=r"blank.jsonl: no records"):
        read_table(write_csv(tmp_path / "blank.jsonl", "\n\n"))
    gz = tmp_path / "blank.csv.gz"
    gz.write_bytes(gzip.compress(b""))
    with pytest.raises(InputError, match=r"blank.csv.gz: the file is empty \(nothing inside the gzip\)"):
        read_table(gz)


def test_unreadable_parquet_and_gzip(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.parquet", b"this is not parquet at all")
    with pytest.raises(InputError, match=r"ads.parquet: not a readable Parquet file"):
        read_table(path)
    path = write_csv(tmp_path / "ads.csv.gz", b"ad_id,description\n1,a\n")
    with pytest.raises(InputError, match=r"ads.csv.gz: not a valid gzip file"):
        read_table(path)


def test_csv_bom_and_crlf(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.csv", b'\xef\xbb\xbfad_id,description\r\n1,"a\r\nb"\r\n\r\n2,c\r\n')
    df = read_table(path)
    assert list(df.columns) == ["ad_id", "description"]
    assert df["description"].tolist() == ["a\r\nb", "c"]


def test_header_without_line_break(tmp_path: Path) -> None:
    df = read_table(write_csv(tmp_path / "h.csv", "ad_id,description"))
    assert list(df.columns) == ["ad_id", "description"] and len(df) == 0


def test_duplicate_header_column(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.csv", "ad_id,description,ad_id\n1,a,2\n")
    with pytest.raises(InputError, match=r"ads.csv: column 'ad_id' appears more than once"):
        read_table(path)


@pytest.mark.parametrize("ext", ["csv", "jsonl"])
def test_non_utf8_bytes_are_replaced_and_counted(tmp_path: Path, ext: str) -> None:
    if ext == "csv":
        raw = b"ad_id,description\n1,caf\xe9 cr\xe8me\n2,ok \xef\xbf\xbd kept\n"
    else:
        raw = b'{"ad_id": "1", "description": "caf\xe9 cr\xe8me"}\n{"ad_id": "2", "description": "ok"}\n'
    path = write_csv(tmp_path / f"latin1.{ext}", raw)
    with pytest.warns(InputWarning, match=rf"latin1.{ext}: 2 character\(s\) were not valid UTF-8"):
        df = read_table(path)
    assert df.attrs["replaced_characters"] == 2
    assert df["description"].iloc[0] == "caf\ufffd cr\ufffdme"


def test_valid_file_reports_no_replacements(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ok.csv", "ad_id,description\n1,\ufffd already there\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = read_table(path)
    assert df.attrs["replaced_characters"] == 0


def test_malformed_csv_row_too_many_fields(tmp_path: Path) -> None:
    text = 'ad_id,description\n1,"two\nlines"\n2,fine\n3,oops, a comma\n4,x\n'
    with pytest.raises(InputError) as info:
        read_table(write_csv(tmp_path / "ads.csv", text))
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'ads.csv'}: row 3 (line 5) has 3 field(s) but the header has 2")
    assert "quote values" in message
    assert info.value.row == 3
    assert "\n" not in message


def test_malformed_csv_row_too_few_fields(tmp_path: Path) -> None:
    text = "ad_id,description,title\n1,a,t\n2,b\n"
    with pytest.raises(InputError, match=r"ads.csv: row 2 \(line 3\) has 2 field\(s\) but the header has 3"):
        read_table(write_csv(tmp_path / "ads.csv", text))


def test_unclosed_quote_at_end_of_file(tmp_path: Path) -> None:
    text = 'ad_id,description\n1,a\n2,"never closed\n3,c\n'
    expected = r"ads.csv: row 2 \(line 3\) opens a quoted value that is never closed"
    with pytest.raises(InputError, match=expected):
        read_table(write_csv(tmp_path / "ads.csv", text))
    # a stray quote inside an unquoted value is fine
    ok = read_table(write_csv(tmp_path / "ok.csv", 'ad_id,description\n1,5" screen\n'))
    assert ok["description"].tolist() == ['5" screen']


def test_invalid_jsonl_line(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.jsonl", '{"ad_id": "1"}\n{"ad_id": 2,}\n')
    with pytest.raises(InputError, match=r"ads.jsonl: line 2 is not valid JSON"):
        read_table(path)
    path = write_csv(tmp_path / "arr.jsonl", '{"ad_id": "1"}\n["ad_id", 2]\n')
    with pytest.raises(InputError, match=r"arr.jsonl: line 2 is an array, not a JSON object"):
        read_table(path)


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "out" / "pairs.parquet"
    write_table(ads_frame(), path)  # creates the directory
    before = path.read_bytes()
    bad = pd.DataFrame({"x": [{1, 2}, "text"]})  # Arrow cannot store a set
    with pytest.raises(ValueError):  # (pyarrow.ArrowInvalid)
        write_table(bad, path)
    assert path.read_bytes() == before
    assert no_temp_files(tmp_path)
    assert sorted(p.name for p in path.parent.iterdir()) == ["pairs.parquet"]


def test_write_error_names_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match=r"out.csv: cannot write the file"):
        write_table(ads_frame(), blocker / "out.csv")


def test_error_is_jobdedup_error_on_one_line() -> None:
    err = InputError("a.csv: row 2\nsomething\r\n  bad", row=2)
    assert isinstance(err, JobdedupError)
    assert str(err) == "a.csv: row 2 something bad"
    assert err.row == 2


# --------------------------------------------------------------------------------------------------
# read_ads


@pytest.mark.parametrize("ext", FORMATS)
def test_read_ads_every_format(tmp_path: Path, ext: str) -> None:
    path = tmp_path / f"ads.{ext}"
    write_table(ads_frame().assign(extra=["p", "q", "r"]), path)
    ads = read_ads(path)
    assert list(ads.columns) == [*ADS_COLUMNS, "extra"]
    assert ads["ad_id"].tolist() == ["000", "001", "002"]
    assert ads["extra"].tolist() == ["p", "q", "r"]
    assert ads["company"].isna().all()
    assert isinstance(ads.index, pd.RangeIndex)


def test_read_ads_007_and_7_are_distinct(tmp_path: Path) -> None:
    ads = read_ads(write_csv(tmp_path / "ads.csv", "ad_id,description\n007,a\n7,b\n07,c\n"))
    assert ads["ad_id"].tolist() == ["007", "7", "07"]


def test_optional_columns_added_extras_kept_in_order(tmp_path: Path) -> None:
    text = "zeta,description,ad_id,title,alpha\nz1,d1,1,t1,a1\nz2,d2,2,,a2\n"
    ads = read_ads(write_csv(tmp_path / "ads.csv", text))
    assert list(ads.columns) == [*ADS_COLUMNS, "zeta", "alpha"]
    assert ads["zeta"].tolist() == ["z1", "z2"]
    assert ads["title"].iloc[0] == "t1" and pd.isna(ads["title"].iloc[1])  # blank optional -> NA
    for name in ("company", "location", "occupation", "contact", "url", "posted_at", "source", "language"):
        assert ads[name].isna().all()
        assert ads[name].dtype == "string"


def test_extra_columns_untouched_and_description_kept(tmp_path: Path) -> None:
    text = "ad_id,description,notes\n1,,\n2,  ,  padded  \n"
    ads = read_ads(write_csv(tmp_path / "ads.csv", text))
    assert ads["notes"].tolist() == ["", "  padded  "]
    assert ads["description"].tolist() == ["", "  "]


def test_missing_description_stays_missing(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.jsonl", '{"ad_id": "1", "description": null}\n{"ad_id": "2"}\n')
    ads = read_ads(path)
    assert ads["description"].isna().all()


def test_bad_optional_values_do_not_stop_the_run(tmp_path: Path) -> None:
    text = "ad_id,description,posted_at,language,url\n1,a,not a date,??,::::\n2,b,2024-13-45,,\n"
    with pytest.warns(InputWarning, match=r"2 ad\(s\) have a posted_at that is no date"):
        ads = read_ads(write_csv(tmp_path / "ads.csv", text))
    assert ads["posted_at"].iloc[0] == "not a date"
    assert ads["posted_at"].iloc[1] == "2024-13-45"
    assert ads["language"].iloc[0] == "??" and pd.isna(ads["language"].iloc[1])


@pytest.mark.parametrize("ext", ["csv", "parquet"])  # JSON Lines has no header: see test_blank_files
def test_header_only_means_no_ads(tmp_path: Path, ext: str) -> None:
    path = tmp_path / f"ads.{ext}"
    if ext == "csv":
        write_csv(path, "ad_id,description\n")
    else:
        empty = pa.array([], pa.string())
        pq.write_table(pa.table({"ad_id": empty, "description": empty}), path)
    with pytest.raises(InputError, match=rf"ads\.{ext}: no ads"):
        read_ads(path)


def test_missing_required_column(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.csv", "ad_id,body,title\n1,a,b\n")
    with pytest.raises(InputError) as info:
        read_ads(path)
    message = str(info.value)
    assert message.startswith(f"{path}: required ads column 'description' missing")
    assert "columns found: 'ad_id', 'body', 'title'" in message
    assert info.value.column == "description"


def test_missing_column_hint_for_near_names(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.csv", "AD_ID ,description\n1,a\n")
    with pytest.raises(InputError, match=r"'ad_id' missing \(found 'AD_ID ': rename it to 'ad_id'\)"):
        read_ads(path)


def test_duplicate_ad_id_names_id_and_both_rows(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.csv", "ad_id,description\n1,a\n007,b\n2,c\n007,d\n2,e\n")
    with pytest.raises(InputError) as info:
        read_ads(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ad_id '007' appears more than once, in rows 2 and 4")
    assert "(2 duplicated id(s) in all)" in message


@pytest.mark.parametrize(
    ("ext", "content"),
    [
        ("csv", "ad_id,description\n1,a\n,b\n3,c\n"),
        ("csv", "ad_id,description\n1,a\n   ,b\n"),
        ("jsonl", '{"ad_id": "1", "description": "a"}\n{"ad_id": null, "description": "b"}\n'),
        ("jsonl", '{"ad_id": "1", "description": "a"}\n{"description": "b"}\n'),
    ],
)
def test_empty_ad_id_names_the_row(tmp_path: Path, ext: str, content: str) -> None:
    path = write_csv(tmp_path / f"ads.{ext}", content)
    with pytest.raises(InputError, match=rf"ads\.{ext}: row 2: ad_id is empty \(1 row\(s\) in all\)"):
        read_ads(path)


def test_ids_are_kept_exactly(tmp_path: Path) -> None:
    ads = read_ads(write_csv(tmp_path / "ads.csv", 'ad_id,description\n" 1",a\n1,b\n'))
    assert ads["ad_id"].tolist() == [" 1", "1"]


def test_long_description_is_cut_with_warning(tmp_path: Path) -> None:
    long_text = "x" * 5_000_000
    path = tmp_path / "ads.csv"
    ads = pd.DataFrame({"ad_id": ["1", "2", "3"], "description": [long_text, "short", long_text]})
    write_table(ads, path)
    expected = r"ads.csv: 2 ad\(s\) have descriptions longer than 100000 characters; they were cut"
    with pytest.warns(InputWarning, match=expected):
        ads = read_ads(path)
    assert ads["description"].str.len().tolist() == [100_000, 5, 100_000]
    assert ads.attrs["truncated_descriptions"] == 2


def test_custom_description_limit_and_no_warning_when_short(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.csv", "ad_id,description\n1,abcdef\n2,\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_ads(path)["description"].tolist() == ["abcdef", ""]
    with pytest.warns(InputWarning, match="1 ad"):
        assert read_ads(path, max_description_chars=3)["description"].tolist() == ["abc", ""]
    with pytest.raises(ValueError, match="max_description_chars"):
        read_ads(path, max_description_chars=0)


def test_validate_ads_on_a_dataframe_does_not_modify_it() -> None:
    df = pd.DataFrame({"ad_id": [7, 8], "description": ["a", None], "x": [1.5, 2.5]}, index=[10, 20])
    ads = validate_ads(df)
    assert ads["ad_id"].tolist() == ["7", "8"]
    assert ads["x"].tolist() == [1.5, 2.5]  # extras untouched, even their dtype
    assert list(df.columns) == ["ad_id", "description", "x"]
    assert isinstance(ads.index, pd.RangeIndex)


@pytest.mark.slow
def test_read_ads_million_rows_parquet_is_fast(tmp_path: Path) -> None:
    import time

    n = 1_000_000
    path = tmp_path / "big.parquet"
    ids = pa.array(np.char.mod("%07d", np.arange(n)).astype(object))
    pq.write_table(pa.table({"ad_id": ids, "description": pa.array(["Pflegekraft gesucht"] * n)}), path)
    start = time.perf_counter()
    ads = read_ads(path)
    assert time.perf_counter() - start < 10
    assert len(ads) == n and ads["ad_id"].iloc[-1] == "0999999"


# --------------------------------------------------------------------------------------------------
# read_labels


def test_pairs_form_normalised(tmp_path: Path) -> None:
    text = (
        "ad_id_a,ad_id_b,label,dup_type,who\n"
        "b,a,1,full,ann\n"
        "c,d,0,,bob\n"
        "e,f,true,semantic,cy\n"
        "g,h,0.0,,dee\n"
        "a,b,1.0,FULL,ed\n"  # repeat of row 1 (other order), same label: dropped
    )
    labels = read_labels(write_csv(tmp_path / "labels.csv", text))
    assert isinstance(labels, Labels)
    assert labels.groups is None and labels.all_pairs_known is False
    pairs = labels.pairs
    assert list(pairs.columns) == ["ad_id_a", "ad_id_b", "label", "dup_type", "who"]
    assert pairs[["ad_id_a", "ad_id_b"]].values.tolist() == [["a", "b"], ["c", "d"], ["e", "f"], ["g", "h"]]
    assert pairs["label"].tolist() == [1, 0, 1, 0]
    assert pairs["label"].dtype == np.int8
    assert pairs["dup_type"].tolist()[0] == "FULL" and pairs["dup_type"].tolist()[2] == "SEMANTIC"
    assert pairs["dup_type"].isna().tolist() == [False, True, False, True]
    assert pairs["who"].tolist() == ["ann", "bob", "cy", "dee"]
    assert (pairs["ad_id_a"] < pairs["ad_id_b"]).all()


def test_pairs_without_dup_type(tmp_path: Path) -> None:
    path = tmp_path / "labels.parquet"
    write_table(pd.DataFrame({"ad_id_a": ["10", "9"], "ad_id_b": ["9", "10 "], "label": [1, 0]}), path)
    pairs = read_labels(path).pairs
    # string order: "10" < "9"
    assert pairs[["ad_id_a", "ad_id_b"]].values.tolist() == [["10", "9"], ["10 ", "9"]]
    assert pairs["dup_type"].isna().all() and pairs["dup_type"].dtype == "string"


def test_unknown_dup_type_stops_naming_the_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "labels.csv", "ad_id_a,ad_id_b,label,dup_type\n1,2,1,FULL\n3,4,1,near\n")
    with pytest.raises(
        InputError, match=r"labels.csv: row 2: dup_type is 'NEAR' \(1 unknown value\(s\) in all\)"
    ):
        read_labels(path)


def test_dup_type_on_a_non_duplicate_stops_naming_the_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "labels.csv", "ad_id_a,ad_id_b,label,dup_type\n1,2,0,PARTIAL\n")
    with pytest.raises(InputError, match=r"row 1: label 0 .* with dup_type 'PARTIAL'"):
        read_labels(path)


def test_bad_label_value_names_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "labels.csv", "ad_id_a,ad_id_b,label\n1,2,1\n3,4,yes\n5,6,2\n")
    with pytest.raises(InputError) as info:
        read_labels(path)
    message = str(info.value)
    assert message.startswith(f"{path}: row 2: label is 'yes' (2 bad label(s) in all)")
    assert "use 1 for the same vacancy and 0" in message
    assert info.value.column == "label"


def test_empty_label_is_an_error(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "labels.csv", "ad_id_a,ad_id_b,label\n1,2,\n")
    with pytest.raises(InputError, match=r"labels.csv: row 1: label is empty"):
        read_labels(path)


def test_conflicting_labels_name_both_ids(tmp_path: Path) -> None:
    text = "ad_id_a,ad_id_b,label\n1,2,1\nx,y,0\n3,4,0\ny,x,1\n"
    with pytest.raises(InputError) as info:
        read_labels(write_csv(tmp_path / "labels.csv", text))
    message = str(info.value)
    assert "labels.csv: the pair 'x' / 'y' is labelled 0 in row 2 and 1 in row 4" in message
    assert "keep one label per pair" in message


def test_pair_of_an_ad_with_itself(tmp_path: Path) -> None:
    text = "ad_id_a,ad_id_b,label\n1,2,1\n007,007,1\n"
    with pytest.raises(InputError, match=r"labels.csv: row 2: ad '007' is paired with itself"):
        read_labels(write_csv(tmp_path / "labels.csv", text))


def test_empty_id_in_pairs(tmp_path: Path) -> None:
    text = "ad_id_a,ad_id_b,label\n1,2,1\n3,,0\n"
    with pytest.raises(InputError, match=r"labels.csv: row 2: ad_id_b is empty"):
        read_labels(write_csv(tmp_path / "labels.csv", text))


def test_groups_form(tmp_path: Path) -> None:
    text = "ad_id,group_id,source\na,g1,s\nb,g1,s\nc,g1,s\nd,g2,s\ne,g3,s\nf,g2,s\na,g1,again\n"
    labels = read_labels(write_csv(tmp_path / "groups.csv", text))
    assert labels.all_pairs_known is True
    assert labels.groups is not None
    assert labels.groups["ad_id"].tolist() == ["a", "b", "c", "d", "e", "f"]  # repeat of a dropped
    assert list(labels.groups.columns) == ["ad_id", "group_id", "source"]
    pairs = labels.pairs
    assert pairs[["ad_id_a", "ad_id_b"]].values.tolist() == [["a", "b"], ["a", "c"], ["b", "c"], ["d", "f"]]
    assert (pairs["label"] == 1).all() and pairs["label"].dtype == np.int8
    assert pairs["dup_type"].isna().all()


def test_groups_ad_in_two_groups(tmp_path: Path) -> None:
    text = "ad_id,group_id\na,g1\nb,g1\na,g2\n"
    expected = r"groups.csv: ad 'a' is in group 'g1' in row 1 and in group 'g2' in row 3"
    with pytest.raises(InputError, match=expected):
        read_labels(write_csv(tmp_path / "groups.csv", text))


def test_groups_empty_group_id(tmp_path: Path) -> None:
    text = "ad_id,group_id\na,g1\nb,\n"
    with pytest.raises(InputError, match=r"groups.csv: row 2: group_id is empty"):
        read_labels(write_csv(tmp_path / "groups.csv", text))


def test_labels_in_neither_form(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "labels.csv", "id1,id2,same\n1,2,1\n")
    with pytest.raises(InputError) as info:
        read_labels(path)
    message = str(info.value)
    assert message.startswith(f"{path}: is in neither labels form")
    assert "pairs (ad_id_a, ad_id_b, label, optional dup_type)" in message
    assert "groups (ad_id, group_id)" in message
    assert "columns found: 'id1', 'id2', 'same'" in message


def test_labels_header_only(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"labels.csv: no labels"):
        read_labels(write_csv(tmp_path / "labels.csv", "ad_id_a,ad_id_b,label\n"))


def test_label_ids_must_be_in_ads(tmp_path: Path) -> None:
    ads = validate_ads(ads_frame(3))  # ids 000, 001, 002
    missing = [f"m{i}" for i in range(7)]
    rows = "".join(f"000,{m},0\n" for m in missing)
    path = write_csv(tmp_path / "labels.csv", "ad_id_a,ad_id_b,label\n000,001,1\n" + rows)
    with pytest.raises(InputError) as info:
        read_labels(path, ads=ads)
    message = str(info.value)
    shown = "'m0', 'm1', 'm2', 'm3', 'm4', ..."
    assert message.startswith(f"{path}: 7 labelled ad_id(s) are not in the ads: {shown}")
    assert "'m5'" not in message
    ok = read_labels(write_csv(tmp_path / "ok.csv", "ad_id_a,ad_id_b,label\n000,001,1\n"), ads=ads)
    assert len(ok.pairs) == 1


def test_group_ids_must_be_in_ads(tmp_path: Path) -> None:
    ads = validate_ads(ads_frame(2))
    path = write_csv(tmp_path / "groups.csv", "ad_id,group_id\n000,g\n001,g\n7,h\n")
    with pytest.raises(InputError, match=r"groups.csv: 1 labelled ad_id\(s\) are not in the ads: '7'"):
        read_labels(path, ads=ads)


def test_validate_labels_on_a_dataframe() -> None:
    df = pd.DataFrame({"ad_id_a": [2, 1], "ad_id_b": [1, 3], "label": [True, False]})
    pairs = validate_labels(df).pairs
    assert pairs[["ad_id_a", "ad_id_b"]].values.tolist() == [["1", "2"], ["1", "3"]]
    assert pairs["label"].tolist() == [1, 0]
    assert json.dumps(pairs["label"].tolist()) == "[1, 0]"


def test_labels_with_both_forms_columns() -> None:
    columns = ["ad_id_a", "ad_id_b", "label", "ad_id", "group_id"]
    df = pd.DataFrame([["1", "2", "1", "1", "g"]], columns=columns)
    with pytest.raises(InputError, match=r"labels: has the columns of both forms; expected either pairs"):
        validate_labels(df)


def test_non_utf8_byte_in_csv_header(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ads.csv", b"ad_id,description,r\xe9gion\n007,a,01\n")
    with pytest.warns(InputWarning, match="1 character"):
        df = read_table(path)
    assert list(df.columns) == ["ad_id", "description", "r\ufffdgion"]
    assert df.iloc[0].tolist() == ["007", "a", "01"]


def test_parquet_dataset_directory(tmp_path: Path) -> None:
    folder = tmp_path / "ads.parquet"  # as Spark writes it
    folder.mkdir()
    pq.write_table(pa.table({"ad_id": ["1"], "description": ["a"]}), folder / "part-0.parquet")
    pq.write_table(pa.table({"ad_id": ["2"], "description": ["b"]}), folder / "part-1.parquet")
    assert sorted(read_ads(folder)["ad_id"]) == ["1", "2"]


# --------------------------------------------------------------------------------------------------
# CSV as spreadsheets in much of Europe export it: ';' or tab between fields


@pytest.mark.parametrize("sep", [";", "\t"])
@pytest.mark.parametrize("ext", ["csv", "csv.gz"])
def test_semicolon_and_tab_separated_ads(tmp_path: Path, sep: str, ext: str) -> None:
    # Excel's export: BOM, CRLF, separators and line breaks inside quoted values, commas unquoted
    text = (
        f'\ufeffad_id{sep}description{sep}"title"{sep}location\r\n'
        f'007{sep}"Chef{sep} full time\r\nParis, 5 days"{sep}Chef{sep}Paris, France\r\n'
        f"7{sep}Waiter, evenings{sep}{sep}Lyon\r\n"
    )
    raw = text.encode()
    path = write_csv(tmp_path / f"ads.{ext}", gzip.compress(raw) if ext.endswith(".gz") else raw)
    ads = read_ads(path)
    assert ads["ad_id"].tolist() == ["007", "7"]
    assert ads["description"].tolist() == [f"Chef{sep} full time\r\nParis, 5 days", "Waiter, evenings"]
    assert ads["title"].iloc[0] == "Chef" and ads["title"].isna().iloc[1]  # blank optional value: NA
    assert ads["location"].tolist() == ["Paris, France", "Lyon"]


def test_semicolon_separated_windows_1252_export(tmp_path: Path) -> None:
    raw = "ad_id;description;company\r\n1;Caf\u00e9 chef \u2013 Z\u00fcrich;M\u00fcller AG\r\n".encode(
        "cp1252"
    )
    with pytest.warns(InputWarning, match="4 character"):
        ads = read_ads(write_csv(tmp_path / "ads.csv", raw))
    assert ads["company"].tolist() == ["M\ufffdller AG"]


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolon_and_tab_separated_labels(tmp_path: Path, sep: str) -> None:
    ads = read_ads(write_csv(tmp_path / "ads.csv", "ad_id,description\n1,a\n2,b\n3,c\n"))
    pairs = write_csv(
        tmp_path / "pairs.csv",
        f"ad_id_a{sep}ad_id_b{sep}label{sep}dup_type\n1{sep}2{sep}1{sep}FULL\n3{sep}1{sep}0{sep}\n",
    )
    labels = read_labels(pairs, ads=ads)
    assert labels.pairs[["ad_id_a", "ad_id_b", "label"]].values.tolist() == [["1", "2", 1], ["1", "3", 0]]
    assert labels.pairs["dup_type"].iloc[0] == "FULL"
    groups = write_csv(tmp_path / "groups.csv", f'"ad_id"{sep}"group_id"\n1{sep}g\n2{sep}g\n3{sep}h\n')
    assert read_labels(groups, ads=ads).pairs[["ad_id_a", "ad_id_b"]].values.tolist() == [["1", "2"]]


@pytest.mark.parametrize(
    ("header", "columns"),
    [
        ("ad_id,description", ["ad_id", "description"]),  # comma: the default
        ('"ad_id;x",description', ["ad_id;x", "description"]),  # a ';' inside quotes does not count
        ('ad_id;"description, long"', ["ad_id", "description, long"]),  # nor does a ',' inside quotes
        ("ad_id;description,title", ["ad_id;description", "title"]),  # a comma anywhere: comma
        ("ad_id;description\ttitle", ["ad_id;description\ttitle"]),  # ';' and tab: ambiguous, comma
        ("ad_id", ["ad_id"]),  # one column
    ],
)
def test_separator_is_told_from_the_header_line(tmp_path: Path, header: str, columns: list[str]) -> None:
    df = read_table(write_csv(tmp_path / "t.csv", f"{header}\n"))
    assert list(df.columns) == columns


def test_semicolon_separated_row_with_too_many_fields_names_the_separator(tmp_path: Path) -> None:
    text = "ad_id;description\n1;a\n2;b; c\n"
    with pytest.raises(InputError) as info:
        read_table(write_csv(tmp_path / "ads.csv", text))
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'ads.csv'}: row 2 (line 3) has 3 field(s) but the header has 2")
    assert "separated by semicolons (as in the header line)" in message and '("like; this")' in message


def test_semicolon_separated_unclosed_quote(tmp_path: Path) -> None:
    text = 'ad_id;description\n1;a\n2;"never closed\n3;c\n'
    with pytest.raises(InputError, match=r"row 2 \(line 3\) opens a quoted value that is never closed"):
        read_table(write_csv(tmp_path / "ads.csv", text))


def test_blank_is_the_same_for_few_and_many_values():
    """Few values are checked in Python (str.strip), many by pyarrow's trim: the same whitespace."""
    from jobdedup.pipeline.io.contract import STRING
    from jobdedup.pipeline.io.validate import _FEW_ROWS, _blank

    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF] + ["", " x ", "\t\u3000"]
    values = pd.Series(chars + [None], dtype=STRING)
    assert len(values) > _FEW_ROWS
    few = np.concatenate([_blank(values.iloc[i : i + _FEW_ROWS]) for i in range(0, len(values), _FEW_ROWS)])
    np.testing.assert_array_equal(few, _blank(values))


@pytest.mark.parametrize("seed", range(60))
def test_few_ads_validate_as_the_general_path_does(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few ads (a service's check) are validated in Python: the same table, attrs and errors as
    the pandas path gives them."""
    from jobdedup.pipeline.io import validate as module

    rng = np.random.default_rng(seed)
    # (missing values of every kind: the few ads' path reads them all as None)
    missing = [None, np.nan, pd.NA, pd.NaT, Decimal("NaN")]
    pool = ["a", "b", " ", "", *missing, "x y", "7", "long text " * 3, 7, 7.5]
    n = int(rng.integers(1, 6))
    ids = rng.choice(["1", "2", "3", "4", " ", "5", "6", "7", "8"], n, replace=bool(rng.random() < 0.2))
    frame = pd.DataFrame({"ad_id": ids.tolist()}, dtype=[object, "string", "str"][seed % 3])
    for column in ("description", "title", "company", "location", "extra"):
        if rng.random() < 0.8:
            values = [pool[i] for i in rng.integers(0, len(pool) - (0 if rng.random() < 0.1 else 2), n)]
            texts = rng.random() < 0.3 and all(isinstance(v, str) or pd.isna(v) for v in values)
            frame[column] = pd.Series(values, dtype="str" if texts else object)  # ("str": NaN for missing)
    outcomes = []
    for few in (module._FEW_ROWS, 0):
        monkeypatch.setattr(module, "_FEW_ROWS", few)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", InputWarning)
                found = module.validate_ads(frame, max_description_chars=12)
            outcomes.append((found, found.attrs))
        except (InputError, ValueError) as error:
            outcomes.append((None, str(error)))
    (fast, fast_info), (general, general_info) = outcomes
    assert fast_info == general_info
    if general is not None:
        pd.testing.assert_frame_equal(fast, general)


@pytest.mark.parametrize("n_ads", [3, 2_500])  # a few ads (a service's path) and a whole file's
def test_a_posted_at_that_is_no_date_warns_naming_the_first_and_keeps_every_ad(n_ads: int) -> None:
    dates = ["2025-05-13T09:30:00Z", "2025-13-45", None] * (n_ads // 3) + ["2025-02-30"] * (n_ads % 3)
    df = pd.DataFrame(
        {"ad_id": [f"ad{i}" for i in range(len(dates))], "description": "x", "posted_at": dates}
    )
    bad = n_ads // 3 + n_ads % 3
    with pytest.warns(
        InputWarning,
        match=rf"dated: {bad} ad\(s\) have a posted_at that is no date \(first: row 2, ad_id 'ad1': '2025-13-45'\)",
    ):
        ads = validate_ads(df, source="dated")
    assert ads["posted_at"].tolist() == [pd.NA if d is None else d for d in dates]  # kept as given


def test_iso_dates_and_blanks_give_no_date_warning() -> None:
    dates = ["2025-05-13", "2025-05-13 09:30", "2025-05-13T09:30:00.5+02:00", "13 May 2025", "", None]
    df = pd.DataFrame({"ad_id": [str(i) for i in range(6)], "description": "x", "posted_at": dates})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validate_ads(df)
