"""Hard negatives: another vacancy that looks like a given real ad.

- `other_town`: the employer's / agency's template for another town (town replaced in location, title
  and text; a salary figure or reference number changed).
- `other_role`: the same company template (intro blurb and footer kept) around another real ad's role
  paragraphs and title.
- `other_company`: the same title at another company: a donor ad's text and company with some of the
  base's requirement bullets kept.
- `shared_footer`: another real ad's text with the base ad's long closing (EEO / footer) block.
- `other_level`: the same template for another seniority level (Senior / Junior / Lead / II vs III,
  intern vs graduate): title level changed, years of experience and reference numbers changed,
  the rest of the text kept, as employers post one text per level.
"""

from __future__ import annotations

import re

import numpy as np

from labelling import textops as tx
from labelling.places import REGIONS, Place, region_name, with_town
from labelling.reposts import (
    MONEY_RE,
    REF_RE,
    Context,
    context_of,
    pick,
    render_for_site,
    shift_date,
    site_url,
    strip_legal,
)


def change_money(text: str, rng: np.random.Generator) -> tuple[str, bool]:
    """Move every salary-like figure by 5-20 % up or down (same factor for the whole ad)."""
    factor = float(rng.choice([-1, 1])) * rng.uniform(0.05, 0.2) + 1.0
    changed = False

    def repl(m: re.Match[str]) -> str:
        nonlocal changed
        raw = m.group("num") or m.group("num2")
        sep = "," if "," in raw else ("." if "." in raw else "")
        value = int(raw.replace(",", "").replace(".", ""))
        if value < 10:
            return m.group(0)
        step = 1000 if value >= 10000 else (100 if value >= 1000 else 1)
        new = max(step, int(round(value * factor / step)) * step)
        out = f"{new:,}".replace(",", sep) if sep else str(new)
        changed = True
        if m.group("num"):
            return f"{m.group('pre')}{out}{m.group('k') or ''}"
        return f"{out}{m.group('post')}"

    return MONEY_RE.sub(repl, text), changed


def change_ref(text: str, rng: np.random.Generator) -> tuple[str, bool]:
    """Give reference / requisition numbers new digits."""

    def repl(m: re.Match[str]) -> str:
        digits = m.group(4)
        new = "".join(str(int(d)) for d in rng.integers(0, 10, len(digits)))
        return f"{m.group(1)}{m.group(2)}{m.group(3)}{new}"

    new_text, n = REF_RE.subn(repl, text)
    return new_text, n > 0


def replace_town(text: str, old: str, new: str) -> str:
    """Whole-word replacement of a town name."""
    return re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", new, text) if old and text else text


def same_city(a: str, b: str) -> bool:
    """Whether two town names may be the same city (districts, spellings: 'Tel Aviv' / 'Tel Aviv-Yafo')."""
    key = lambda t: re.sub(r"[^a-z]", "", t.lower().replace("bangalore", "bengaluru"))[:5]
    return key(a) == key(b)


def other_town(ad: dict, towns: dict[str, list[Place]], rng: np.random.Generator) -> dict | None:
    """The same template for another real town of the same country; None when the town is unknown."""
    ctx = context_of(ad)
    pool = [p for p in towns.get(ctx.country, []) if not same_city(p.town, ctx.place.town)]
    if not ctx.place.town or not pool:
        return None
    target = pick(rng, pool)
    new = dict(ad)
    old_t, new_t = ctx.place.town, target.town
    new["location"] = move_location(ad.get("location") or "", ctx.place, target)
    new["title"] = replace_town(ad.get("title") or "", old_t, new_t) or ad.get("title")
    desc = replace_town(ad.get("description") or "", old_t, new_t)
    old_region, new_region = region_name(ctx.place), region_name(with_town(ctx.place, target))
    if old_region and new_region and old_region != new_region and len(old_region) > 3:
        desc = replace_town(desc, old_region, new_region)
    desc, money = change_money(desc, rng)
    desc, ref = change_ref(desc, rng) if (not money or rng.random() < 0.5) else (desc, False)
    if not (money or ref) and desc:
        hours = re.search(r"(?i)\bfull[- ]time\b", desc)
        if hours and rng.random() < 0.4:
            desc = re.sub(
                r"(?i)\bfull([- ])time\b",
                lambda m: f"part{m.group(1)}time" if m.group(0)[0] == "f" else f"Part{m.group(1)}time",
                desc,
            )
        else:
            desc = _add_site_line(desc, new_t, ctx.lang, rng)
    new["description"] = desc
    new["url"] = site_url(ad.get("source") or "", new["title"] or "", ctx, rng) if ad.get("url") else None
    new["posted_at"] = shift_date(ad.get("posted_at"), rng)
    return new


def move_location(location: str, place: Place, target: Place) -> str:
    """The location string with its town (and region, written the same way) swapped for target's."""
    parts = [p.strip() for p in location.split(",")]
    moved = with_town(place, target)
    out = []
    for i, part in enumerate(parts):
        if part == place.town:
            part = target.town
        elif i == 1 and place.region and part in {place.region, region_name(place)}:
            if target.region and target.region != place.region:
                as_code = part == place.region and place.region in REGIONS.get(place.country, {})
                part = target.region if as_code else region_name(moved)
            elif not target.region:
                continue
        out.append(part)
    result = ", ".join(out)
    return result if target.town in result else target.town


def _add_site_line(desc: str, town: str, lang: str, rng: np.random.Generator) -> str:
    """Prepend a location line, the way branch-specific copies of an ad often start."""
    lines = {
        "de": [f"Standort: {town}", f"Arbeitsort: {town}"],
        "nl": [f"Locatie: {town}", f"Standplaats: {town}"],
        "fr": [f"Lieu : {town}"],
    }.get(lang, [f"Location: {town}", f"Based at our {town} site.", f"Branch: {town}"])
    line = pick(rng, lines)
    if rng.random() < 0.5 and "<" not in desc and "&lt;" not in desc:
        return f"{desc}\n\n{line}"
    if "<p>" in desc:
        return f"<p>{line}</p>{desc}"
    if "&lt;p&gt;" in desc:
        return f"&lt;p&gt;{line}&lt;/p&gt;{desc}"
    return f"{line}\n\n{desc}"


FOOTER_RE = re.compile(
    r"(?i)equal opportunit|divers|disabilit|inclusi|accommodat|discriminat|apply|applica|\bcv\b|"
    r"privacy|agency|employment business|originally posted|recruit|bewerb|solliciteer|candidature|"
    r"gleichberechtig|e-verify|background check|visa|sponsor"
)


def footer_blocks(blocks: list[tx.Block]) -> list[tx.Block]:
    """Closing boilerplate: trailing blocks (at most 4) that read like EEO / apply / agency text."""
    tail: list[tx.Block] = []
    for b in reversed(blocks):
        if len(tail) >= 4 or not FOOTER_RE.search(b[1]):
            break
        tail.insert(0, b)
    return tail


def _company_blocks(blocks: list[tx.Block], company: str) -> tuple[list[tx.Block], list[tx.Block]]:
    """Leading blurb and closing footer of an ad: the first paragraph(s) naming the company or
    before the first heading, and the last block(s) holding at least 40 words."""
    name = strip_legal(company or "").lower()
    head: list[tx.Block] = []
    for kind, text in blocks[:3]:
        if kind == "h" or (head and name and name not in text.lower()):
            break
        head.append((kind, text))
    tail: list[tx.Block] = []
    words = 0
    for b in reversed(blocks[len(head) :]):
        if words >= 40 or len(tail) >= 3:
            break
        tail.insert(0, b)
        words += len(b[1].split())
    return head, tail


def _role_blocks(blocks: list[tx.Block], company: str) -> list[tx.Block]:
    """The middle of an ad (without its blurb and footer)."""
    head, tail = _company_blocks(blocks, company)
    middle = blocks[len(head) : len(blocks) - len(tail)]
    return middle or blocks


def _finish(ad: dict, donor: dict, blocks: list[tx.Block], rng: np.random.Generator) -> str:
    """Render negative blocks in the base ad's site style."""
    meta = dict(
        title=ad.get("title") or "", company=ad.get("company") or "", location=ad.get("location") or ""
    )
    return render_for_site(blocks, ad.get("source") or "", meta, rng)


def other_role(ad: dict, donor: dict, rng: np.random.Generator) -> dict | None:
    """The company's template (blurb, footer) around the donor ad's role paragraphs and title."""
    blocks = tx.parse_blocks(ad.get("description"))
    head, tail = _company_blocks(blocks, ad.get("company") or "")
    if not (head or tail) or not donor.get("title"):
        return None
    role = _role_blocks(tx.parse_blocks(donor.get("description")), donor.get("company") or "")
    new = dict(
        ad,
        title=donor["title"],
        occupation=donor.get("occupation"),
        location=donor.get("location") or ad.get("location"),
    )
    new["url"] = (
        site_url(ad.get("source") or "", donor["title"], context_of(ad), rng) if ad.get("url") else None
    )
    new["posted_at"] = shift_date(ad.get("posted_at"), rng)
    new["description"] = _finish(ad, donor, head + role + tail, rng)
    return new


def other_company(ad: dict, donor: dict, rng: np.random.Generator) -> dict | None:
    """The same title at the donor's company: donor text, with a few of the base's bullet points."""
    if (
        not donor.get("company")
        or strip_legal(donor["company"]).lower() == strip_legal(ad.get("company") or "").lower()
    ):
        return None
    base_items = [b for b in tx.parse_blocks(ad.get("description")) if b[0] == "li"]
    donor_blocks = tx.parse_blocks(donor.get("description"))
    keep = [b for b in base_items if rng.random() < 0.35]
    at = int(rng.integers(0, len(donor_blocks) + 1))
    blocks = donor_blocks[:at] + keep + donor_blocks[at:]
    old = strip_legal(ad.get("company") or "")
    blocks = [(k, replace_town(t, old, donor["company"])) for k, t in blocks] if old else blocks
    new = dict(
        donor, ad_id=ad["ad_id"], title=ad.get("title"), corpus=ad.get("corpus"), language=ad.get("language")
    )
    new["location"] = ad.get("location") if rng.random() < 0.6 else donor.get("location")
    new["source"], new["posted_at"] = ad.get("source"), shift_date(ad.get("posted_at"), rng)
    new["url"] = site_url(ad.get("source") or "", ad.get("title") or "", context_of(ad), rng)
    new["description"] = _finish(ad, donor, blocks, rng)
    return new


def shared_footer(ad: dict, donor: dict, rng: np.random.Generator) -> dict | None:
    """The donor vacancy posted with the base ad's long closing block (EEO text, agency footer)."""
    tail = footer_blocks(tx.parse_blocks(ad.get("description")))
    if tx.n_words(tail) < 40:
        return None
    donor_blocks = _role_blocks(tx.parse_blocks(donor.get("description")), donor.get("company") or "")
    new = dict(donor, ad_id=ad["ad_id"], corpus=ad.get("corpus"), source=ad.get("source"))
    new["url"] = site_url(ad.get("source") or "", donor.get("title") or "", context_of(ad), rng)
    new["posted_at"] = shift_date(ad.get("posted_at"), rng)
    if rng.random() < 0.5:  # same employer or agency, another job
        new["company"] = ad.get("company")
    new["description"] = _finish(ad, donor, donor_blocks + tail, rng)
    return new


LEVEL_SWAPS = [
    ("Senior ", ""),
    ("Senior ", "Junior "),
    ("Senior ", "Lead "),
    ("Senior ", "Principal "),
    ("Lead ", ""),
    ("Junior ", ""),
    ("Principal ", "Staff "),
    (" II", " III"),
    (" I", " II"),
    (" 2", " 3"),
    ("Intern", "Graduate"),
    ("Manager", "Director"),
    ("Associate ", "Senior Associate "),
]
_YEARS_RE = re.compile(r"(\d{1,2})(\s*\+?\s*(?:years|yrs|jahre|jaar|ans))", re.IGNORECASE)


def _change_level(title: str, rng: np.random.Generator) -> str | None:
    """The title at another seniority level; None if it would not change."""
    present = [(old, new) for old, new in LEVEL_SWAPS if old.strip() and old in title]
    if present and rng.random() < 0.7:
        old, new = present[int(rng.integers(0, len(present)))]
        changed = title.replace(old, new, 1).strip()
    else:
        prefix = pick(rng, ["Senior ", "Junior ", "Lead ", "Principal "])
        changed = title[len("Senior ") :] if title.startswith("Senior ") else prefix + title
    return changed if changed and changed != title else None


def other_level(ad: dict, rng: np.random.Generator) -> dict | None:
    """The same text posted for another level: title, years of experience and references change."""
    title = ad.get("title") or ""
    new_title = _change_level(title, rng) if title else None
    if new_title is None:
        return None
    delta = int(pick(rng, [-3, -2, 2, 3, 5]))
    text = ad.get("description") or ""
    text = _YEARS_RE.sub(lambda m: f"{max(1, int(m.group(1)) + delta)}{m.group(2)}", text)
    text, _ = change_ref(text, rng)
    text = text.replace(title, new_title) if title in text else text
    new = dict(ad, title=new_title, description=text)
    new["posted_at"] = shift_date(ad.get("posted_at"), rng)
    if ad.get("url"):
        new["url"] = site_url(ad.get("source") or "", new_title, context_of(ad), rng)
    return new


def make_negative(
    ad: dict, donor: dict | None, towns: dict[str, list[Place]], rng: np.random.Generator
) -> tuple[dict, str] | None:
    """One hard negative of `ad`: tries a random kind first, then the others; None if none applies."""
    kinds = ["other_town", "other_town", "other_level", "other_role", "other_company", "shared_footer"]
    first = pick(rng, kinds)
    order = [first] + [k for k in dict.fromkeys(kinds) if k != first]
    has_text = bool((ad.get("description") or "").strip())
    for kind in order:
        if kind not in ("other_town", "other_level") and (donor is None or not has_text):
            continue
        new = (
            other_town(ad, towns, rng)
            if kind == "other_town"
            else other_level(ad, rng)
            if kind == "other_level"
            else {"other_role": other_role, "other_company": other_company, "shared_footer": shared_footer}[
                kind
            ](ad, donor, rng)
        )
        if new is not None:
            return new, kind
    return None


__all__ = ["Context", "make_negative"]
