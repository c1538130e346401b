"""The labelled-requisition search tried only where a label word starts gives what the regex
scanning every character gives (issue #52): the same matches, in order, on generated texts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jobdedup.features.requisitions import _LABELLED_RE, _SELF_NAMED_RE, _matches

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
