"""Cleaning: markup, Unicode, blocks."""

from __future__ import annotations

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from jobdedup.pipeline.clean import clean_description, clean_descriptions, split_blocks


def test_html_scripts_styles_and_entities_are_removed():
    html = "<html><style>p{color:red}</style><script>alert('x')</script><p>Care&nbsp;Assistant</p><ul><li>Nights &amp; days</li></ul></html>"
    cleaned = clean_description(html)
    assert "alert" not in cleaned and "color" not in cleaned
    assert cleaned.split("\n") == ["care assistant", "nights & days"]


def test_markdown_escapes_and_bullets_are_removed():
    assert clean_description("**Skills**\n\\- Python\n* SQL") == "skills\npython\nsql"


def test_unicode_is_normalised_and_invisible_marks_dropped():
    text = "Ｄata\u200b Engineer\u200f \u202bמהנדס\u202c Инженер"
    assert clean_description(text) == "data engineer מהנדס инженер"


def test_long_lines_split_into_sentences():
    line = "We are hiring. " * 40
    blocks = split_blocks(line.strip())
    assert len(blocks) == 40 and blocks[0] == "We are hiring."


def test_missing_descriptions_become_empty_text():
    out = clean_descriptions(pd.Series(["<b>x</b>", None, pd.NA], dtype=object))
    assert out.tolist() == ["x", "", ""]


@given(st.text())
def test_any_unicode_text_cleans_without_error_and_is_stable(text):
    once = clean_description(text)
    assert isinstance(once, str)
    assert clean_description(text) == once
