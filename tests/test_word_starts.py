"""A regex tried only where its first words start (`features.word_starts`, issue #52) gives the
matches of the regex scanning every character: for the widget headings of `pipeline.clean`, on
generated texts with odd case, spaces and line breaks."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from jobdedup.features.word_starts import finditer_at_words
from jobdedup.pipeline.clean import (
    _WIDGET_CUES,
    _WIDGET_HEADING,
    _WIDGET_HEADINGS,
    _WIDGET_LINE_WORDS,
    _WIDGET_WORDS,
    cut_listing_widgets,
)

_PIECES = st.sampled_from(
    [
        "Weitere", "weitere IT ", "WEITERE", "Jobs in", "jobs  in", "alle 12 Jobs anzeigen", "Alle 1.200 JOBS ANZEIGEN",
        "Ähnliche Jobs", "ähnliche stellenangebote", "ÄHNLICHE STELLEN", "See this and similar jobs",
        "similar jobs", "Similar Jobs:", "SIMILAR jobs", "People also viewed", "jobs you may like",
        "Jobs you may be interested in", "vergelijkbare vacatures", "Offres d'emploi similaires",
        "offres similaires", "myjobs", "seesee", "ſimilar", "ſee", "ſimilar jobs", "ſee this and ſimilar jobs", "weıtere Jobs ın", "ähnlıche jobs", "İ", "ı", "K", "Ä", "12", "x", ".", ":",
        " ", "  ", "\t", "\n", "\u00a0", "\u2003", "\r\n",
    ]
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(st.one_of(_PIECES, st.text(max_size=5)), max_size=30))
def test_widget_heading_matches_are_the_full_scans(pieces: list[str]):
    text = "".join(pieces)
    expected = [m.span() for m in _WIDGET_HEADING.finditer(text)]
    found = finditer_at_words(_WIDGET_HEADING, text, _WIDGET_WORDS, _WIDGET_LINE_WORDS)
    assert [m.span() for m in found] == expected


def _cut_by_full_scan(text: str) -> str:
    """`cut_listing_widgets` as it was: the heading regex scanning every character."""
    if not any(cue in text.lower() for cue in _WIDGET_CUES):
        return text
    for heading in _WIDGET_HEADING.finditer(text):
        if heading.start() >= 0.3 * len(text):
            return text[: heading.start()]
    return text


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=30))
def test_widget_cut_is_the_full_scans_cut(pieces: list[str]):
    text = "".join(pieces)
    assert cut_listing_widgets(text) == _cut_by_full_scan(text)


def test_every_heading_opens_with_a_word_the_search_starts_at():
    assert len(_WIDGET_WORDS) + len(_WIDGET_LINE_WORDS) == len(_WIDGET_HEADINGS)
    assert "similar" in _WIDGET_LINE_WORDS and "weitere" in _WIDGET_WORDS


def test_a_line_heading_after_spaces_is_found_and_one_mid_line_is_not():
    pattern = re.compile(r"^[^\S\n]*similar\s+jobs$", re.IGNORECASE | re.MULTILINE)
    text = "Intro\n \u00a0Similar Jobs\nmore similar jobs"
    assert [m.span() for m in finditer_at_words(pattern, text, (), ("similar",))] == [(6, 20)]
