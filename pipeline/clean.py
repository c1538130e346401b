"""Stage 1, text side: HTML/Markdown to plain text, Unicode normalisation, blocks.

A description becomes a list of *blocks* (paragraphs, list items, or sentences of very
long lines). Blocks are the unit of corpus boilerplate detection (see `pipeline.boilerplate`).

Example:
    >>> clean_description("<p>Hello&nbsp;<b>World</b></p><script>x()</script>")
    'hello world'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cache

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from selectolax.lexbor import LexborHTMLParser

from jobdedup.features.normalize import FEW_VALUES
from jobdedup.features.word_starts import finditer_at_words
from jobdedup.pipeline.code_points import cased_code_points, every_code_point

# Elements whose start and end are line breaks (the blocks boilerplate detection works on), and
# elements dropped with their content.
_BLOCK_ELEMENTS = (
    "p,div,br,li,ul,ol,h1,h2,h3,h4,h5,h6,tr,td,th,table,section,article,header,footer,hr,dd,dt,blockquote"
)
_DROPPED_ELEMENTS = ["script", "style", "noscript", "template"]
_HTML_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(\s[^>]*)?/?>")
_HTML_ENTITY = re.compile(r"&(?:[a-zA-Z]{2,8}|#\d+);")
_MARKDOWN = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])|[*_`#>]{1,3}|\[([^\]]*)\]\([^)]*\)")
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ufe0e\ufe0f]")
_SPACES = re.compile(r"[^\S\n]+")
_NEWLINES = re.compile(r"\s*\n\s*")
_BULLETS = re.compile(r"^[\-\u2022\u25cf\u25aa\u2013\u2014·•*]+\s*", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
LONG_LINE_CHARS = 300
# Job boards append lists of *other* ads ("Weitere IT Jobs in Salzburg", "Alle 99 Jobs anzeigen",
# "Ähnliche Jobs", "See this and similar jobs on LinkedIn"), naming their titles and employers:
# page chrome that makes unrelated ads share text. Everything from such a heading on is cut when
# it starts in the last 70 % of the text (a heading at the top is more likely the ad's own).
_WIDGET_HEADINGS = (
    r"\bweitere\s[^.!?\n]{0,80}?\bjobs\s+in\b",
    r"\balle\s+\d[\d.]*\s+jobs\s+anzeigen",
    r"\bähnliche\s+(?:jobs|stellen(?:angebote)?)\b",
    r"\bsee\s+this\s+and\s+similar\s+jobs\b",
    r"^[^\S\n]*similar\s+jobs[^\S\n]*:?[^\S\n]*$",
    r"\bpeople\s+also\s+viewed\b",
    r"\bjobs\s+you\s+may\s+(?:be\s+interested\s+in|like)\b",
    r"\bvergelijkbare\s+vacatures\b",
    r"\boffres\s+(?:d'emploi\s+)?similaires\b",
)
_WIDGET_HEADING = re.compile("|".join(_WIDGET_HEADINGS), re.IGNORECASE | re.MULTILINE)
_AFTER_WORD_BOUNDARY, _AFTER_LINE_SPACES = r"\b", r"^[^\S\n]*"


def _opening_words(opening: str) -> tuple[str, ...]:
    """The first word of each heading that opens with `opening`: where its matches start."""
    return tuple(
        re.match(r"[^\W\d_]+", heading[len(opening) :]).group()  # type: ignore[union-attr]
        for heading in _WIDGET_HEADINGS
        if heading.startswith(opening)
    )


# Where a heading can start (`features.word_starts`): at one of these words, or at the start of a
# line these words open.
_WIDGET_WORDS = _opening_words(_AFTER_WORD_BOUNDARY)
_WIDGET_LINE_WORDS = _opening_words(_AFTER_LINE_SPACES)
# Lower-case words one of which every heading holds: most texts hold none and are not searched.
_WIDGET_CUES = (
    "weitere ",
    "jobs anzeigen",
    "ähnliche",
    "similar jobs",
    "also viewed",
    "you may",
    "vergelijkbare",
    "similaires",
)
WIDGET_MIN_START = 0.3
# Words one of which every `_WIDGET_HEADINGS` alternative holds: a text that holds none, in any
# case, holds no heading (`may_hold_widget_heading`).
_WIDGET_HINT_WORDS = ("jobs", "ähnliche", "viewed", "vacatures", "similaires")
_SURROGATE_UTF8 = re.compile(rb"\xed[\xa0-\xbf]")  # a UTF-16 surrogate, encoded with "surrogatepass"


def _markdown_replacement(match: re.Match[str]) -> str:
    if match.group(1) is not None:
        return match.group(1)
    if match.group(2) is not None:
        return match.group(2)
    return " "


def _looks_html(text: str) -> bool:
    """The text holds an HTML tag or entity (two searches behind substring tests: 4× faster than
    one regex with alternatives, which Python tries at every position)."""
    return ("&" in text and _HTML_ENTITY.search(text) is not None) or (
        "<" in text and _HTML_TAG.search(text) is not None
    )


def markup_text(text: str) -> str:
    """The text of an HTML document or fragment, parsed by lexbor (selectolax), with a line break
    at the start and end of every block element (p, div, br, li, headings, table cells, ...) and
    a space at every other tag boundary (so "<b>Duties</b><b>Summary</b>" stays two words).

    Scripts, styles, noscript and template content and comments are dropped, entities decoded.
    Malformed HTML is read as browsers read it: unclosed elements, attributes holding ">", a tag
    cut off at the end of the text, a "<script>" inside a script.

    Example:
        >>> markup_text('<p title="a>b">x&amp;y</p><script>if (a<b) {}</script>z').split()
        ['x&y', 'z']
    """
    tree = LexborHTMLParser(text, scripting=True)  # scripting: <noscript> holds raw text
    tree.strip_tags(_DROPPED_ELEMENTS)
    for node in tree.css(_BLOCK_ELEMENTS):
        node.insert_before("\n")
        node.insert_after("\n")
    root = tree.root
    return root.text(separator=" ") if root is not None else ""


def html_to_text(text: str) -> str:
    """Turn HTML (or Markdown) into plain text with one line per block.

    Scripts, styles and comments are dropped; block tags become line breaks; entities are decoded
    (`markup_text`).

    Example:
        >>> html_to_text("<ul><li>a</li><li>b &amp; c</li></ul>")
        'a\\nb & c'
    """
    if _looks_html(text):
        text = markup_text(text)
    text = _MARKDOWN.sub(_markdown_replacement, text)
    return _NEWLINES.sub("\n", _SPACES.sub(" ", text)).strip()


def strip_markup(text: str) -> str:
    """Remove HTML (scripts, styles, comments, tags; block tags become line breaks) and decode
    entities (`markup_text`); text without HTML is returned as it is. The fast path of tokenising.

    Example:
        >>> strip_markup("<p>a</p><p>b &amp; c</p>").split()
        ['a', 'b', '&', 'c']
    """
    return markup_text(text) if _looks_html(text) else text


def cut_listing_widgets(text: str) -> str:
    """The text without a job board's list of other ads at its end (see `_WIDGET_HEADING`).

    Example:
        >>> cut_listing_widgets("Wir suchen eine:n Admin in Graz. Weitere IT Jobs in Graz Alle 9 Jobs anzeigen")
        'Wir suchen eine:n Admin in Graz. '
    """
    lowered = text.lower()
    if not any(cue in lowered for cue in _WIDGET_CUES):
        return text
    for heading in finditer_at_words(_WIDGET_HEADING, text, _WIDGET_WORDS, _WIDGET_LINE_WORDS):
        if heading.start() >= WIDGET_MIN_START * len(text):
            return text[: heading.start()]
    return text


def _stripped(text: str) -> str:
    return strip_markup(text) if "<" in text or "&" in text else text


def _nfkc(text: str) -> str:
    """NFKC where the text is not ASCII and not yet NFKC (the same object where nothing changes)."""
    if not text.isascii() and not unicodedata.is_normalized("NFKC", text):
        return unicodedata.normalize("NFKC", text)
    return text


@cache
def _widget_hints_re2() -> str:
    """An RE2 pattern (for pyarrow) of `_WIDGET_HINT_WORDS`, each letter a class of every code
    point that Python's case-insensitive `re` matches to it ("s" also matches "ſ"): no text in
    which `_WIDGET_HEADING` matches is missed (one search per letter over the cased code points,
    `pipeline.code_points`)."""
    cased = cased_code_points(every_code_point())
    classes = {}
    for letter in sorted(set("".join(_WIDGET_HINT_WORDS))):
        same = sorted({letter, *(m.group() for m in re.finditer(re.escape(letter), cased, re.IGNORECASE))})
        classes[letter] = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in same) + "]"
    return "|".join("".join(classes[c] for c in word) for word in _WIDGET_HINT_WORDS)


def may_hold_widget_heading(encoded: Sequence[bytes]) -> np.ndarray:
    """Per UTF-8 text, whether `_WIDGET_HEADING` may match in it: whether it holds a hint word,
    searched by RE2 (pyarrow) over all texts at once; a text with lone surrogates (not valid
    UTF-8) is always True. (A second search, for each heading's words in order, cost more than
    it saved: RE2 builds its automaton of that pattern anew at every call, ~3 ms.)

    Example:
        >>> may_hold_widget_heading([b"Alle 9 Jobs anzeigen", b"Wir suchen Sie"]).tolist()
        [True, False]
    """
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
    texts = pa.LargeStringArray.from_buffers(
        len(encoded), pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))
    )
    found = pc.match_substring_regex(texts, _widget_hints_re2()).to_numpy(zero_copy_only=False)
    for row, utf8 in enumerate(encoded):
        if b"\xed" in utf8 and _SURROGATE_UTF8.search(utf8):
            found[row] = True
    return found


def text_for_kernel(text: str) -> str:
    """Markup stripped, job boards' lists of other ads cut (`cut_listing_widgets`) and, where the
    text is not ASCII and not yet NFKC, NFKC-normalised.

    Case folding and invisible marks are left to the compiled tokeniser (`pipeline.tokenizer`);
    whitespace, bullets and Markdown are left alone: tokenising only keeps words, line breaks and
    sentence ends, so cleaning them would be wasted work on the hot path.
    """
    return _nfkc(cut_listing_widgets(_stripped(text)))


def kernel_texts_utf8(texts: Sequence[str]) -> list[bytes]:
    """`text_for_kernel` of each text, UTF-8 encoded ("surrogatepass"), for many texts at once:
    the widget cut runs only on the texts `may_hold_widget_heading` finds (~2-13 %)."""
    stripped = [_stripped(text) for text in texts]
    encoded = [text.encode("utf-8", "surrogatepass") for text in stripped]
    # (`cut_listing_widgets` looks for its cue words first: for a few texts that costs less than
    # compiling the pre-check's RE2 pattern, ~80 µs.)
    may_cuts = may_hold_widget_heading(encoded) if len(texts) > FEW_VALUES else np.ones(len(texts), bool)
    result = []
    for text, utf8, may_cut in zip(stripped, encoded, may_cuts):
        final = _nfkc(cut_listing_widgets(text) if may_cut else text)
        result.append(utf8 if final is text else final.encode("utf-8", "surrogatepass"))
    return result


def normalize_unicode(text: str) -> str:
    """NFKC, case-folded, invisible marks (zero-width, bidi controls) removed.

    Example:
        >>> normalize_unicode("Stra\u00dfe\u200b ＡＢＣ")
        'strasse abc'
    """
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).casefold()


def clean_description(text: str | None) -> str:
    """Full text cleaning of one description: markup removed, Unicode normalised, bullets dropped.

    A missing description — a cell of an ads table holding ``None``, ``NaN`` or ``pd.NA`` (what
    `read_ads` gives for one) — is empty text, as in `clean_descriptions`.

    Example:
        >>> clean_description(pd.NA)
        ''
    """
    if not isinstance(text, str):
        if text is None or (pd.api.types.is_scalar(text) and pd.isna(text)):
            return ""
        raise TypeError(f"a description is text or missing, not {type(text).__name__}")
    return _BULLETS.sub("", normalize_unicode(html_to_text(text))).strip()


def split_blocks(cleaned: str) -> list[str]:
    """Split cleaned text into blocks: lines, and sentences of lines longer than 300 characters.

    Example:
        >>> split_blocks("one line\\ntwo")
        ['one line', 'two']
    """
    blocks: list[str] = []
    for line in cleaned.split("\n"):
        if len(line) > LONG_LINE_CHARS:
            blocks.extend(s for s in _SENTENCE_END.split(line) if s)
        elif line:
            blocks.append(line)
    return blocks


def clean_descriptions(descriptions: pd.Series) -> pd.Series:
    """Clean a Series of descriptions; missing ones become empty strings.

    Identical raw descriptions are cleaned once (re-scrapes are common).
    """
    raw = descriptions.fillna("").astype(str)
    uniques = pd.unique(raw.to_numpy())
    cleaned = {text: clean_description(text) for text in uniques}
    return raw.map(cleaned).astype(object)
