"""The code point tables' faster forms (issue #52) give what the one-character-at-a-time forms gave."""

from __future__ import annotations

import re
import string

from jobdedup.pipeline.code_points import cased_code_points, changed_positions, every_code_point


def test_every_code_point_is_the_joined_chr_of_each():
    assert every_code_point() == "".join(map(chr, range(0x110000)))


def test_casefold_changes_are_found_as_one_by_one():
    everything = every_code_point()
    expected = [i for i, c in enumerate(everything) if c.casefold() != c]
    assert changed_positions(everything, str.casefold) == expected
    assert changed_positions(everything, str.casefold, chunk=7) == expected


def test_re_ignorecase_equates_a_letter_only_with_cased_code_points():
    everything = every_code_point()
    cased = set(cased_code_points(everything))
    assert {"ſ", "ı", "İ", "\u212a", "A", "ä"} <= cased and not {"1", " ", "中"} & cased
    for letter in string.ascii_lowercase + "äöüéß":
        same = {m.group() for m in re.finditer(re.escape(letter), everything, re.IGNORECASE)}
        assert same <= cased | {letter}, letter
