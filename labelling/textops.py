"""Text of a job ad as blocks, site-style rendering, shingle Jaccard and text transformations.

An ad body is parsed into blocks `(kind, text)` with kind "h" (heading), "p" (paragraph) or "li"
(list item); `render` writes blocks back as plain text, Markdown (LinkedIn / Indeed / Glassdoor
flavours), HTML, entity-escaped HTML (Greenhouse), one flat line (Adzuna / karriere.at scrapes) or an
Adzuna result page.
"""

from __future__ import annotations

import html
import re

import numpy as np

Block = tuple[str, str]
TAG_RE = re.compile(r"<[^>]+>")
WORD_RE = re.compile(r"\w+")
SENT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-Ý0-9\"'(])")

SYNONYMS: list[tuple[str, list[str]]] = [
    ("you will", ["you'll", "you are going to", "the successful candidate will"]),
    ("we are looking for", ["we're seeking", "we need", "we want to hire"]),
    ("looking for", ["seeking", "searching for", "hiring"]),
    ("experience", ["background", "exposure"]),
    ("responsible for", ["in charge of", "accountable for", "tasked with"]),
    ("ability to", ["capacity to", "able to"]),
    ("strong", ["solid", "proven", "robust"]),
    ("excellent", ["outstanding", "first-class", "great"]),
    ("work closely with", ["collaborate with", "partner with"]),
    ("join", ["become part of", "come on board with"]),
    (r"re:(?<!equal )(?<!employment )\bopportunity\b", ["chance", "opening"]),
    ("required", ["essential", "needed", "a must"]),
    ("knowledge of", ["familiarity with", "understanding of"]),
    ("including", ["such as", "for example"]),
    ("develop", ["build", "create"]),
    ("ensure", ["make sure", "guarantee"]),
    ("support", ["assist", "help"]),
    ("provide", ["deliver", "offer"]),
    ("manage", ["oversee", "run", "handle"]),
    ("customers", ["clients", "users"]),
    ("company", ["business", "organisation"]),
    ("skills", ["capabilities", "abilities"]),
    ("candidate", ["applicant", "person"]),
    ("role", ["position", "job"]),
    ("team", ["group", "squad", "department"]),
    ("benefits", ["perks", "rewards"]),
    ("we are", ["we're"]),
    ("we offer", ["what you get", "in return we provide"]),
    ("help", ["assist", "enable"]),
    ("within", ["in", "inside"]),
    ("across", ["throughout", "over"]),
    ("various", ["a range of", "different"]),
    ("highly", ["very", "extremely"]),
    ("preferred", ["desirable", "a plus", "nice to have"]),
    ("degree", ["qualification", "diploma"]),
    ("environment", ["setting", "workplace"]),
    ("projects", ["initiatives", "assignments"]),
    ("stakeholders", ["partners", "colleagues"]),
    ("requirements", ["needs", "criteria"]),
    ("successful", ["effective"]),
    ("key", ["main", "core"]),
    ("improve", ["enhance", "optimise"]),
    ("understanding", ["grasp", "appreciation"]),
    ("using", ["with", "leveraging"]),
    ("maintain", ["keep up", "look after"]),
    ("hands-on", ["practical"]),
    ("in addition", ["additionally", "also"]),
    ("must", ["should"]),
]
SYNONYMS_DE: list[tuple[str, list[str]]] = [
    ("Wir suchen", ["Wir sind auf der Suche nach", "Zur Verstärkung suchen wir"]),
    ("Erfahrung", ["Berufserfahrung", "Praxis"]),
    ("Kenntnisse", ["Know-how", "Wissen"]),
    ("Aufgaben", ["Tätigkeiten"]),
    ("Teams", ["Abteilung"]),
    ("bieten", ["offerieren"]),
    ("ervaring", ["werkervaring"]),
    ("Wij zoeken", ["Wij zijn op zoek naar"]),
]
_SYN_RE = {
    lang: [
        (re.compile(a[3:] if a.startswith("re:") else rf"\b{re.escape(a)}\b", re.IGNORECASE), b)
        for a, b in table
    ]
    for lang, table in (("en", SYNONYMS), ("de", SYNONYMS_DE))
}


def clean_inline(text: str) -> str:
    """Drop Markdown emphasis markers and squeeze spaces."""
    text = re.sub(
        r"(?<!\*)\*\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*\*(?!\*)|__([^_\n]+?)__",
        lambda m: m.group(1) or m.group(2),
        text,
    )
    return re.sub(r"[ \t]+", " ", text).strip()


def plain_text(text: str | None) -> str:
    """Visible text of an ad body (HTML tags, entities and Markdown escapes removed)."""
    t = text or ""
    for _ in range(2):
        if "&" in t:
            t = html.unescape(t)
    t = TAG_RE.sub(" ", t)
    return re.sub(r"\\+(?=[^\w\s])", "", t)


def shingles(text: str | None, k: int = 5) -> set[tuple[str, ...]]:
    """Set of k-word shingles of the lower-cased visible words (whole text when shorter than k)."""
    words = WORD_RE.findall(plain_text(text).lower())
    if len(words) < k:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + k]) for i in range(len(words) - k + 1)}


def jaccard(a: str | None, b: str | None) -> float | None:
    """5-word-shingle Jaccard of two ad bodies; None when either is empty."""
    sa, sb = shingles(a), shingles(b)
    if not sa or not sb:
        return None
    return len(sa & sb) / len(sa | sb)


def split_sentences(text: str) -> list[str]:
    """Rough sentence split on end punctuation followed by a capital."""
    return [s for s in SENT_RE.split(text) if s.strip()]


def strip_chrome(text: str) -> str:
    """Drop scraped page chrome: the Adzuna result-page header/footer and karriere.at navigation and
    'similar jobs' lists, so a repost on another site does not carry the first site's page around."""
    if "❮ back to last search" in text:
        text = text.split("Apply for this job\n", 1)[-1]
        text = text.removesuffix("\nApply for this job")
    if "Inserat teilen" in text and "Drucken" in text:
        text = text.split("Drucken", 1)[-1]
        text = re.split(
            r"\s(?:smart bewerben|Jetzt bewerben|Über den Job|Weitere [\w -]{0,40} Jobs in|Ähnliche Jobs)",
            text,
            maxsplit=1,
        )[0]
    return text


def parse_blocks(text: str | None) -> list[Block]:
    """Parse an HTML / Markdown / plain ad body into blocks (page chrome removed)."""
    t = strip_chrome(text or "")
    if "&lt;" in t:
        t = html.unescape(t)
    if re.search(r"(?i)</?(p|li|ul|br|div|h\d|strong)\b", t):
        t = re.sub(r"(?i)<li[^>]*>", "\n- ", t)
        t = re.sub(r"(?i)<br\s*/?>", "\n", t)
        t = re.sub(r"(?i)</(p|div|h\d|ul|ol|li)>", "\n\n", t)
        t = html.unescape(TAG_RE.sub("", t))
    t = re.sub(r"\\+(?=[^\w\s])", "", t).replace("\xa0", " ")
    blocks: list[Block] = []
    for line in t.split("\n"):
        s = line.strip()
        if not s:
            continue
        m = re.match(r"^(?:[*\-•·]|\d{1,2}[.)])\s+(.*)", s)
        if m:
            blocks.append(("li", clean_inline(m.group(1))))
        elif s.startswith("#") or re.fullmatch(r"\*\*[^*]{2,80}\*\*:?", s):
            blocks.append(("h", clean_inline(s.lstrip("# "))))
        else:
            inner = clean_inline(s)
            kind = "h" if len(inner) < 60 and inner.endswith(":") else "p"
            blocks.append((kind, inner))
    blocks = [(k, x) for k, x in blocks if x]
    if len(blocks) <= 2 and sum(len(x.split()) for _, x in blocks) > 120:
        blocks = _paragraphs_from_flat(" ".join(x for _, x in blocks))
    return blocks


def _paragraphs_from_flat(text: str) -> list[Block]:
    """Group sentences of a one-line ad into paragraphs of three sentences."""
    sents = split_sentences(text)
    return [("p", " ".join(sents[i : i + 3])) for i in range(0, len(sents), 3)]


def _join(blocks: list[Block], para_sep: str, fmt) -> str:
    """Join rendered blocks: list items on consecutive lines, everything else separated by para_sep."""
    out: list[str] = []
    for i, (kind, text) in enumerate(blocks):
        if i:
            out.append("\n" if kind == "li" and blocks[i - 1][0] == "li" else para_sep)
        out.append(fmt(kind, text))
    return "".join(out)


def _md_escape(text: str) -> str:
    return re.sub(r"([\-+&|])", r"\\\1", text)


def render(blocks: list[Block], style: str, rng: np.random.Generator, meta: dict | None = None) -> str:
    """Write blocks in a site style (see module docstring)."""
    meta = meta or {}
    bullet = str(rng.choice(["•", "-", "*", "·"]))
    if style == "markdown":
        return _join(blocks, "\n\n", lambda k, t: {"h": f"**{t}**", "li": f"* {t}"}.get(k, t))
    if style == "indeed":
        return _join(
            blocks,
            "\n\n\n",
            lambda k, t: {"h": f"**{_md_escape(t)}**", "li": f"* {_md_escape(t)}"}.get(k, _md_escape(t)),
        )
    if style == "linkedin":
        return _join(
            blocks,
            "\n   \n\n  \n\n ",
            lambda k, t: {"h": f"**{_md_escape(t)}**", "li": f"* {_md_escape(t)}"}.get(k, _md_escape(t)),
        )
    if style in {"html", "html_escaped"}:
        body = _render_html(blocks)
        return html.escape(body, quote=True) if style == "html_escaped" else body
    if style == "flat":
        return " ".join(t for _, t in blocks)
    if style == "adzuna_page":
        head = (
            f"{meta.get('title', '')}\n ❮ back to last search\n\n {meta.get('company', '')}\n\n"
            f"{meta.get('location', '')}\n\n{meta.get('salary', '£45,000')}\n per year - estimated\n ?\n\n"
            "Full time \n\nApply for this job\n"
        )
        return head + "".join(t if k != "li" else t + " " for k, t in blocks) + "\nApply for this job"
    return _join(blocks, "\n\n", lambda k, t: f"{bullet} {t}" if k == "li" else t)


def _render_html(blocks: list[Block]) -> str:
    """Blocks as simple HTML with <p>, <ul><li> and <strong> headings."""
    out, in_list = [], False
    for kind, text in blocks:
        t = html.escape(text, quote=False)
        if kind == "li" and not in_list:
            out.append("<ul>")
            in_list = True
        if kind != "li" and in_list:
            out.append("</ul>")
            in_list = False
        out.append({"li": f"<li>{t}</li>", "h": f"<p><strong>{t}</strong></p>"}.get(kind, f"<p>{t}</p>"))
    if in_list:
        out.append("</ul>")
    return "".join(out)


def n_words(blocks: list[Block]) -> int:
    """Word count of blocks."""
    return sum(len(t.split()) for _, t in blocks)


def keep_lead(blocks: list[Block], rng: np.random.Generator) -> list[Block]:
    """Leading blocks holding 40-85 % of the words (a site that cuts the ad off)."""
    budget = n_words(blocks) * rng.uniform(0.4, 0.85)
    out, total = [], 0
    for b in blocks:
        if total >= budget and out:
            break
        out.append(b)
        total += len(b[1].split())
    return out


def keep_paragraphs(blocks: list[Block], rng: np.random.Generator) -> list[Block]:
    """A random 50-85 % of the blocks, order kept (a site that drops sections)."""
    keep = rng.random(len(blocks)) < rng.uniform(0.5, 0.85)
    out = [b for b, k in zip(blocks, keep) if k]
    return out or blocks[:1]


def snippet(blocks: list[Block], rng: np.random.Generator) -> str:
    """20-60 words from the start or from a random sentence, ending in an ellipsis (aggregator snippet)."""
    words = " ".join(t for _, t in blocks).split()
    n = int(rng.integers(20, 61))
    start = 0 if rng.random() < 0.6 or len(words) <= n else int(rng.integers(0, len(words) - n))
    return " ".join(words[start : start + n]) + str(rng.choice(["...", " ...", "\xa0...", "…"]))


def reorder(blocks: list[Block], rng: np.random.Generator) -> list[Block]:
    """Move sections (a heading and what follows) around; the first section moves to the end sometimes."""
    sections: list[list[Block]] = []
    for b in blocks:
        if b[0] == "h" or not sections:
            sections.append([b])
        else:
            sections[-1].append(b)
    if len(sections) < 3:  # no headings: work on paragraphs
        sections = [[b] for b in blocks]
    if len(sections) < 2:
        return blocks
    if rng.random() < 0.5:
        sections = sections[1:] + sections[:1]
    else:
        head, rest = sections[:1], sections[1:]
        order = rng.permutation(len(rest))
        sections = head + [rest[i] for i in order]
    return [b for s in sections for b in s]


def small_edits(blocks: list[Block], rng: np.random.Generator) -> list[Block]:
    """Typos in ~1 % of words, '&' / 'and' swaps, doubled spaces, quote styles."""
    out = []
    for kind, text in blocks:
        words = text.split(" ")
        for i, w in enumerate(words):
            if len(w) > 4 and w.isalpha() and rng.random() < 0.012:
                j = int(rng.integers(1, len(w) - 2))
                words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
        text = " ".join(words)
        if rng.random() < 0.3:
            text = text.replace(" & ", " and ") if " & " in text else text.replace(" and ", " & ", 1)
        if rng.random() < 0.2:
            text = text.replace("’", "'").replace("“", '"').replace("”", '"')
        out.append((kind, text))
    return out


def substitute(text: str, rng: np.random.Generator, rate: float, lang: str = "en") -> str:
    """Replace known phrases by synonyms with probability `rate` each (keeps leading capitals)."""
    for pattern, choices in _SYN_RE.get(lang, []):

        def repl(m: re.Match[str], choices: list[str] = choices) -> str:
            if rng.random() >= rate:
                return m.group(0)
            new = str(choices[int(rng.integers(len(choices)))])
            return new[0].upper() + new[1:] if m.group(0)[0].isupper() else new

        text = pattern.sub(repl, text)
    return text


def rewrite(blocks: list[Block], rng: np.random.Generator, intensity: float, lang: str) -> list[Block]:
    """Paraphrase: drop blocks and sentences, shuffle sentences, swap phrases for synonyms.

    `intensity` in 0..1 scales every step, so callers can search for a target overlap.
    """
    out: list[Block] = []
    for kind, text in blocks:
        if kind != "h" and rng.random() < 0.3 * intensity and len(blocks) > 3:
            continue
        sents = split_sentences(text) or [text]
        kept = [s for s in sents if rng.random() >= 0.25 * intensity] or sents[:1]
        if len(kept) > 2 and rng.random() < intensity:
            kept = [kept[i] for i in rng.permutation(len(kept))]
        new = " ".join(kept)
        new = substitute(new, rng, min(1.0, 0.15 + intensity), lang)
        out.append((kind, new))
    items = [t for k, t in out if k == "li"]
    if len(items) >= 3 and rng.random() < intensity:  # a bullet list written as one sentence
        first = next(i for i, (k, _) in enumerate(out) if k == "li")
        prose = "Key requirements include: " + "; ".join(t.rstrip(".") for t in items) + "."
        out = [b for b in out if b[0] != "li"]
        out.insert(min(first, len(out)), ("p", prose))
    return out or blocks[:1]
