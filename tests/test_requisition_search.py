"""The requisition search's faster forms give what the forms they replaced gave (issue #52): the
labelled search tried only where a label word starts (the same matches, in order, as the regex
scanning every character) and the split of glued words; on generated texts."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from jobdedup.features.requisitions import _GLUED_RE, _LABELLED_RE, _SELF_NAMED_RE, _matches

_PIECES = st.sampled_from(
    [
        "Req", "REQ ID: ", "req", "Requisition", "job", "Job #", "JOB-", "Position ID ", "vacancy no. ",
        "Vacature", "Vacaturenr. ", "Stellen", "ſtellen", "referenz", "Ref.", "ref", "Reference Number: ",
        "KENNZIFFER", "Kennziffer", "posıtıon", "İ", "K", "12903", "J0526-1062", "R-0123", "2024.", "_",
        "x", "a", "ob", " ", "\n", ": ", "-", ".", "%", "/", "**", "émploi", "职位", "jobjob", "refref",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(pieces=st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=30))
def test_labelled_matches_are_the_full_scans(pieces: list[str]):
    text = "".join(pieces)
    expected = [(m.span(), m.group(1)) for m in _LABELLED_RE.finditer(text)]
    assert [(m.span(), m.group(1)) for m in _matches(_LABELLED_RE, text)] == expected


def test_other_patterns_scan_every_character():
    text = "Ref JR123456 and R-0123456"
    assert [m.span() for m in _matches(_SELF_NAMED_RE, text)] == [
        m.span() for m in _SELF_NAMED_RE.finditer(text)
    ]


_GLUED_BEFORE = re.compile(r"(?<=[a-zA-Z0-9])(?=[A-Z][a-z])")  # the form it replaced


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="aZbY09 _-\nÄé", max_size=40))
def test_glued_words_are_split_where_the_look_behind_form_split_them(text: str):
    assert _GLUED_RE.sub(r" \1", text) == _GLUED_BEFORE.sub(" ", text)
