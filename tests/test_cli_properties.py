"""Property test (hypothesis): every command runs through the CLI over odd ad tables without a crash.

Generated tables have fields that are missing (no column), NA, empty, whitespace-only, HTML-only,
very long, not UTF-8 or odd Unicode, ids with separators and quotes, written as CSV, JSON Lines or
Parquet. `dedup`, `evaluate --report`, `explain`, `index add` and `label --limit 0` each end with exit
code 0 — every ad in the outputs — or, for a table the contract refuses (no description column, an
empty or repeated ad_id), with exit code 2 and one error line; never with a traceback.

Runs in-process through `pipeline.cli.main` (a traceback would fail the test with the exception
itself). Few, small examples keep it to about 20 seconds; `JOBDEDUP_CLI_EXAMPLES=100` searches longer.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from jobdedup.pipeline.cli import main

# Each example runs six commands (~5 s); a failure is reported as found, not shrunk (shrinking
# such examples takes minutes).
SETTINGS = settings(
    max_examples=int(os.environ.get("JOBDEDUP_CLI_EXAMPLES", "4")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)

OPTIONAL = ("title", "company", "location", "occupation", "contact", "url", "posted_at", "source", "language")
TEXTS = [
    "Senior chef wanted in a busy Paris kitchen, full time, good pay and meals included. Apply now!",
    "Warehouse operative for night shifts in Leeds; forklift licence an advantage, overtime paid.",
    "<p>Data engineer (m/w/d) in Berlin</p><ul><li>Python, SQL</li><li>Spark</li></ul>Jetzt bewerben",
    "מפתח תוכנה בתל אביב, משרה מלאה, ניסיון של שלוש שנים לפחות בפיתוח מערכות",
    "Инженер-программист в Москве, полная занятость, опыт работы от трёх лет",
    "软件工程师 北京 全职 三年以上经验 😀🚀",
]
NORMAL = {
    "title": ["Chef", "Warehouse operative", "Data Engineer (m/w/d)", "מפתח תוכנה", "Инженер"],
    "company": ["Acme GmbH", "ACME Ltd.", "Café Zürich S.A.", "אקמה בע״מ"],
    "location": ["Paris", "Leeds, UK", "Berlin, Berlin, Germany", "Tel Aviv"],
    "occupation": ["Hospitality", "Logistics", "IT"],
    "contact": ["jobs@acme.example +49 30 1234567", "call 0113 496 0000", "hr@x.example"],
    "url": ["https://acme.example/jobs/1", "www.x.example/a?b=c", "http://[::1", "not a url"],
    "posted_at": ["2026-02-03", "2026-02-03T10:00:00Z", "03.02.2026", "yesterday", "2026-13-45"],
    "source": ["linkedin", "indeed", "company site"],
    "language": ["en", "de", "xx", "english"],
}
ODD = [
    b"",
    b" ",
    b"\t \r\n \n",
    "\u00a0\u3000\u200b".encode(),
    b"<p></p><br/><div>&nbsp;</div>",
    b"<script>var tracking = 'many words in a script here';</script><style>p {color: red}</style>",
    b"<!-- only a comment -->",
    "Caf\u00e9 chef \u00e0 Z\u00fcrich \u2013 gute Bezahlung".encode("cp1252"),  # not UTF-8
    b"bad \xff\xfe bytes \xc3\x28 and \xed\xa0\x80 a surrogate",  # not UTF-8
    b'quotes " and "" , ; \t separators\nand a line break',
    "\u202ebidi\u202c \ufeffbom \u00adsoft emoji \U0001f44d\U0001f3fd".encode(),
]


def _long(text: str, repeat: int) -> bytes:
    return (" ".join([text] * repeat)).encode()


def _values(column: str) -> st.SearchStrategy[bytes | None]:
    normal = TEXTS if column == "description" else NORMAL[column]
    return st.one_of(
        st.none(),
        st.sampled_from(ODD),
        st.sampled_from(normal).map(str.encode),
        st.builds(_long, st.sampled_from(normal), st.integers(100, 1500)),
    )


@st.composite
def ad_tables(draw) -> tuple[list[str], list[list[bytes | None]], bool]:
    """(columns, rows of raw values or None, whether the contract accepts the table)."""
    n = draw(st.integers(2, 7))
    prefix = draw(st.sampled_from(["", "ad-", "0", " 7", "ä", 'x,;\t"q"', "jobspy:file.csv:"]))
    ids = [f"{prefix}{i}".encode() for i in range(n)]
    valid = True
    if draw(st.integers(0, 9)) == 0:  # an empty or a repeated ad_id: refused
        ids[-1] = draw(st.sampled_from([b"", b"  ", ids[0]]))
        valid = False
    optional = draw(st.lists(st.sampled_from(OPTIONAL), unique=True, max_size=len(OPTIONAL)))
    with_description = draw(st.integers(0, 14)) > 0
    valid &= with_description
    columns = ["ad_id", *(["description"] if with_description else []), *optional, "note"]
    rows = []
    for ad_id in ids:
        row = [ad_id]
        for column in columns[1:]:
            row.append(draw(_values("title" if column == "note" else column)))
        rows.append(row)
    return columns, rows, valid


def _csv_field(value: bytes | None, quote_all: bool) -> bytes:
    if value is None:
        return b""
    if quote_all or any(c in value for c in b'",;\t\r\n') or value != value.strip():
        return b'"' + value.replace(b'"', b'""') + b'"'
    return value


def _write_csv(path: Path, rows: list[list[bytes | None]], sep: bytes, quote_all: bool) -> Path:
    path.write_bytes(b"".join(sep.join(_csv_field(v, quote_all) for v in row) + b"\r\n" for row in rows))
    return path


def _write_ads(
    columns: list[str], rows: list[list[bytes | None]], fmt: str, sep: bytes, quote_all: bool, folder: Path
) -> Path:
    if fmt == "csv":
        path = _write_csv(folder / "ads.csv", [[c.encode() for c in columns], *rows], sep, quote_all)
    elif fmt == "jsonl":
        path = folder / "ads.jsonl"
        with path.open("wb") as handle:
            for row in rows:
                fields = [
                    json.dumps(c)
                    + ": "
                    + (
                        "null"
                        if v is None
                        else json.dumps(v.decode("utf-8", "surrogateescape"), ensure_ascii=False)
                    )
                    for c, v in zip(columns, row)
                ]
                handle.write(("{" + ", ".join(fields) + "}\n").encode("utf-8", "surrogateescape"))
    else:
        path = folder / "ads.parquet"
        arrays = {}
        for k, column in enumerate(columns):
            values = [row[k] for row in rows]
            try:
                arrays[column] = pa.array([None if v is None else v.decode() for v in values], pa.string())
            except UnicodeDecodeError:  # a column holding bytes that are not UTF-8 is binary
                arrays[column] = pa.array(values, pa.binary())
        pq.write_table(pa.table(arrays), path)
    return path


def _cli(*args: object) -> tuple[int, str, str]:
    """Run the CLI in-process with --quiet (before a `--`): (exit code, stdout, stderr)."""
    argv = [*map(str, args)]
    argv.insert(argv.index("--") if "--" in argv else len(argv), "--quiet")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


# The warnings README promises for odd input; any other line on stderr (a library's warning, a
# traceback) fails the test.
OUR_WARNINGS = (
    "character(s) were not valid UTF-8",
    "have descriptions longer than",
    "have a posted_at that is no date",
)


def _check_stderr(err: str, command: str, code: int) -> None:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    warned = [line for line in lines if line.startswith("warning: ")]
    assert all(any(kind in line for kind in OUR_WARNINGS) for line in warned), err
    errors = [line for line in lines if not line.startswith("warning: ")]
    if code == 0:
        assert errors == [], err
    else:
        assert len(errors) == 1 and errors[0].startswith(f"jobdedup {command}: error: "), err


@SETTINGS
@given(
    table=ad_tables(),
    fmt=st.sampled_from(["csv", "jsonl", "parquet"]),
    sep=st.sampled_from([b",", b";", b"\t"]),  # of the CSV files (ads and labels)
    quote_all=st.booleans(),
    cap=st.sampled_from([None, 2_000]),
)
@pytest.mark.slow
def test_every_command_survives_odd_ad_tables(table, fmt, sep, quote_all, cap):
    columns, rows, valid = table
    expected = 0 if valid else 2
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        ads = _write_ads(columns, rows, fmt, sep, quote_all, tmp)
        extra = ["--max-description-chars", cap] if cap else []
        n = len(rows)
        ids = [row[0].decode() for row in rows]

        code, _, err = _cli("dedup", "--ads", ads, "--out", tmp / "dedup", *extra)
        _check_stderr(err, "dedup", code)
        assert code == expected, err
        if code == 0:
            groups = pd.read_parquet(tmp / "dedup" / "groups.parquet")
            assert sorted(groups["ad_id"]) == sorted(ids) and groups["group_id"].notna().all()
            assert "note" in groups.columns  # an extra column is carried through
            pairs = pd.read_parquet(tmp / "dedup" / "pairs.parquet")
            assert set(pairs["ad_id_a"]) | set(pairs["ad_id_b"]) <= set(ids)

        # labels: neighbours alternately the same vacancy and not, so the report has false negatives
        # (and perhaps false positives) to show, ads without text among them
        neighbours = [
            [a, b, b"%d" % (k % 2)]
            for k, (a, b) in enumerate(itertools.pairwise(row[0] for row in rows))
            if a != b
        ]
        labels = _write_csv(
            tmp / "labels.csv", [[b"ad_id_a", b"ad_id_b", b"label"], *neighbours], sep, quote_all
        )
        code, out, err = _cli(
            "evaluate",
            "--ads",
            ads,
            "--labels",
            labels,
            "--report",
            tmp / "report",
            "--json",
            tmp / "e.json",
            *extra,
        )
        _check_stderr(err, "evaluate", code)
        assert code == expected, err
        if code == 0:
            assert f"<p>{n} ads," in (tmp / "report" / "index.html").read_text(encoding="utf-8")
            assert {"precision", "recall", "labelled_pairs"} <= set(json.loads((tmp / "e.json").read_text()))

        # explain the pair of the first ad without text (if any) and the last ad
        text = columns.index("description") if "description" in columns else None
        no_text = [k for k, row in enumerate(rows[:-1]) if text is None or not (row[text] or b"").strip()]
        first = no_text[0] if no_text else 0
        code, out, err = _cli("explain", "--ads", ads, "--", ids[first], ids[-1])
        _check_stderr(err, "explain", code)
        if valid and ids[first] != ids[-1]:
            assert code == 0 and out.startswith(f"pair {ids[first]}  ~  {ids[-1]}"), err
        else:
            assert code == 2

        for attempt in (1, 2):  # the second add finds every ad already indexed
            code, out, err = _cli(
                "index", "add", "--index", tmp / "ads.jdx", "--ads", ads, "--out", tmp / f"index{attempt}"
            )
            _check_stderr(err, "index", code)
            assert code == expected, err
            if code == 0:
                groups = pd.read_parquet(tmp / f"index{attempt}" / "groups.parquet")
                assert sorted(groups["ad_id"]) == sorted(ids)
                if attempt == 2:
                    assert (groups["status"] == "already_indexed").all()

        code, out, err = _cli("label", "--ads", ads, "--labels", tmp / "answers.csv", "--limit", 0)
        _check_stderr(err, "label", code)
        assert code == expected, err
        if code == 0:
            assert (tmp / "answers.csv").read_text().splitlines() == ["ad_id_a,ad_id_b,label"]
