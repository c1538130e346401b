"""Reposts (same vacancy, another site) and hard negatives (another vacancy) made from one real ad.

Every function takes the ad as a dict of contract columns and a numpy Generator, and returns a new
dict plus a short name of what was done (for the `origin` column).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from labelling import textops as tx
from labelling.boilerplate import AGENCIES, AGENCY_INTROS, AGENCY_OUTROS, blocks_of
from labelling.places import CORPUS_COUNTRY, Place, parse_location, render_location

SITES: dict[str, list[str]] = {
    "GB": ["linkedin", "indeed", "adzuna", "reed", "totaljobs", "cv-library.co.uk", "glassdoor"],
    "US": ["linkedin", "indeed", "glassdoor", "zip_recruiter", "dice", "simplyhired", "greenhouse"],
    "CA": ["indeed", "glassdoor", "linkedin", "jobbank", "workopolis"],
    "NL": ["linkedin", "indeed", "glassdoor", "nationalevacaturebank", "werkzoeken.nl"],
    "DE": ["linkedin", "indeed", "stepstone", "xing"],
    "AT": ["karriere.at", "indeed", "stepstone.at", "linkedin"],
    "IL": ["glassdoor", "linkedin", "alljobs", "drushim", "indeed"],
    "IN": ["naukri", "indeed", "linkedin", "foundit"],
    "FR": ["linkedin", "indeed", "welcometothejungle", "apec"],
}
STYLE = {
    "linkedin": "linkedin",
    "indeed": "indeed",
    "glassdoor": "markdown",
    "adzuna": "adzuna_page",
    "greenhouse": "html_escaped",
    "karriere.at": "flat",
    "cv-library.co.uk": "flat",
    "totaljobs": "html",
    "stepstone": "html",
    "stepstone.at": "html",
    "dice": "html",
    "welcometothejungle": "markdown",
}
SNIPPET_SITES = {"zip_recruiter", "simplyhired", "jobbank", "foundit", "werkzoeken.nl"}
INDEED_SUB = {"GB": "uk", "CA": "ca", "NL": "nl", "DE": "de", "AT": "at", "IN": "in", "FR": "fr", "IL": "il"}
LEGAL = {
    "GB": ["Ltd", "Limited", "PLC"],
    "US": ["Inc.", "Inc", "LLC", "Corp."],
    "CA": ["Inc.", "Ltd."],
    "DE": ["GmbH", "AG", "GmbH & Co. KG"],
    "AT": ["GmbH", "AG"],
    "NL": ["B.V.", "BV", "N.V."],
    "FR": ["SAS", "SA"],
    "IL": ["Ltd.", 'בע"מ'],
    "IN": ["Pvt Ltd", "Private Limited"],
}
LEGAL_RE = re.compile(
    r"[,\s]+(ltd\.?|limited|plc|inc\.?|llc|corp\.?|gmbh( & co\.? kg)?|ag|b\.?v\.?|n\.?v\.?|sas|sa|"
    r"pvt\.? ltd\.?|private limited|בע\"מ)$",
    re.IGNORECASE,
)
GENDER_RE = re.compile(
    r"\s*\((?:[mwfdxhv]\s*/\s*){1,3}[mwfdxhv]\)|\s*\((?:all genders?|gn|w/m/d|H/F)\)", re.IGNORECASE
)
GENDER_TAGS = {
    "DE": ["(m/w/d)", "(w/m/d)", "(m/f/d)", "(all genders)"],
    "AT": ["(m/w/d)", "(w/m/x)"],
    "NL": ["(m/v/x)", "(m/v)"],
    "FR": ["(H/F)", "(F/H)"],
}
SENIORITY = [
    ("Senior", ["Sr.", "Sr", "Snr"]),
    ("Junior", ["Jr.", "Jr", "Jnr"]),
    ("Manager", ["Mgr"]),
    ("Engineer", ["Eng."]),
    ("Assistant", ["Asst."]),
]
MONEY_RE = re.compile(
    r"(?P<pre>[£$€]\s?)(?P<num>\d{1,3}(?:[,.]\d{3})+|\d{2,6})(?P<k>\s?[kK])?|"
    r"(?P<num2>\d{1,3}(?:[.,]\d{3})+)(?P<post>\s?(?:€|EUR|euro))"
)
REF_RE = re.compile(
    r"(?i)\b(ref(?:erence)?(?:\s*(?:no|number|nr)\.?)?|job[- ]?(?:id|nr\.?|no\.?|code)|"
    r"requisition(?: id)?|req(?: id)?|vacancy (?:id|no\.?)|kennziffer)(\s*[:#.]?\s*)([A-Z]{0,4}[-_]?)(\d{2,})"
)


@dataclass
class Context:
    """What transformations need to know about the ad they change."""

    place: Place
    country: str
    lang: str


def context_of(ad: dict) -> Context:
    """Parse the ad's location and pick its country (from the location or the corpus)."""
    default = CORPUS_COUNTRY.get(ad.get("corpus") or "", "US")
    place = parse_location(ad.get("location"), default)
    return Context(place=place, country=place.country or default, lang=ad.get("language") or "en")


def pick(rng: np.random.Generator, items: list):
    """One item of a list, chosen with rng."""
    return items[int(rng.integers(len(items)))]


# ---------------------------------------------------------------- metadata
def other_site(current: str | None, ctx: Context, rng: np.random.Generator) -> str:
    """A site of the ad's country other than the current one."""
    sites = [s for s in SITES.get(ctx.country, SITES["US"]) if s != (current or "")]
    return pick(rng, sites)


def site_url(site: str, title: str, ctx: Context, rng: np.random.Generator) -> str:
    """A URL shaped like the site's job URLs."""
    digits = lambda n: "".join(str(d) for d in rng.integers(0, 10, n))
    slug = re.sub(r"[^a-z0-9]+", "-", (title or "job").lower()).strip("-")[:60]
    if site == "linkedin":
        return f"https://www.linkedin.com/jobs/view/4{digits(9)}"
    if site == "indeed":
        return f"https://{INDEED_SUB.get(ctx.country, 'www')}.indeed.com/viewjob?jk={''.join(pick(rng, list('0123456789abcdef')) for _ in range(16))}"
    if site == "glassdoor":
        tld = {"GB": "co.uk", "CA": "ca", "NL": "nl", "DE": "de", "IN": "co.in", "FR": "fr"}.get(
            ctx.country, "com"
        )
        return f"https://www.glassdoor.{tld}/job-listing/j?jl=10{digits(11)}"
    if site == "adzuna":
        return f"https://www.adzuna.co.uk/jobs/details/5{digits(9)}?utm_medium=api&utm_source=652c708e"
    if site == "karriere.at":
        return f"https://www.karriere.at/jobs/7{digits(6)}"
    if site == "zip_recruiter":
        return f"https://www.ziprecruiter.com/c/job/{slug}?jid={digits(16)}"
    domain = site if "." in site else f"{site}.com"
    return f"https://www.{domain}/job/{slug}-{digits(7)}"


def shift_date(posted: str | None, rng: np.random.Generator) -> str | None:
    """posted_at moved by up to 30 days either way, keeping date vs datetime form."""
    if not posted:
        return None
    try:
        when = datetime.fromisoformat(posted)
    except ValueError:
        return posted
    new = when + timedelta(days=int(rng.integers(-30, 31)))
    if "T" in posted:
        return new.strftime("%Y-%m-%dT%H:%M:%SZ")
    return new.strftime("%Y-%m-%d")


def strip_legal(company: str) -> str:
    """Company name without a trailing legal form."""
    return LEGAL_RE.sub("", company).strip(" ,")


def vary_company(company: str | None, ctx: Context, rng: np.random.Generator) -> tuple[str | None, str]:
    """Company written differently: legal suffix added/dropped, case changed, or an agency posting it."""
    if not company:
        return company, ""
    r = rng.random()
    if r < 0.12:
        return pick(rng, AGENCIES.get(ctx.country, AGENCIES["US"])), "agency"
    if r < 0.5:
        bare = strip_legal(company)
        if bare != company:
            return bare, "company"
        sep = ", " if ctx.country == "US" and rng.random() < 0.5 else " "
        return f"{company}{sep}{pick(rng, LEGAL.get(ctx.country, LEGAL['US']))}", "company"
    if r < 0.62:
        return (company.upper() if not company.isupper() else company.title()), "company"
    return company, ""


def work_mode_suffixes(desc: str) -> list[str]:
    """Title suffixes a site might add, only claiming remote/hybrid work when the text says so."""
    if re.search(r"(?i)\bremote\b|homeoffice|home office", desc):
        return ["- Remote", "(Remote)", "- Remote / Hybrid"]
    if re.search(r"(?i)\bhybrid\b", desc):
        return ["- Hybrid", "(Hybrid)"]
    return ["- Permanent", "- Full Time", "(Full-time)", "- Immediate Start"]


def vary_title(
    title: str | None, ctx: Context, rng: np.random.Generator, desc: str = ""
) -> tuple[str | None, str]:
    """Title as another site writes it: gender tag, seniority abbreviation, work-mode or town suffix."""
    if not title:
        return title, ""
    r = rng.random()
    if r < 0.2 and GENDER_RE.search(title):
        return GENDER_RE.sub("", title).strip(), "title"
    if r < 0.3 and ctx.country in GENDER_TAGS:
        return f"{GENDER_RE.sub('', title).strip()} {pick(rng, GENDER_TAGS[ctx.country])}", "title"
    if r < 0.5:
        for full, abbrs in SENIORITY:
            if re.search(rf"\b{full}\b", title):
                return re.sub(rf"\b{full}\b", pick(rng, abbrs), title, count=1), "title"
            for a in abbrs:
                if re.search(rf"(?<!\w){re.escape(a)}(?!\w)", title):
                    return re.sub(rf"(?<!\w){re.escape(a)}(?!\w)", full, title, count=1), "title"
    if r < 0.62:
        return f"{title} {pick(rng, work_mode_suffixes(desc))}", "title"
    if r < 0.7 and ctx.place.town and ctx.place.town not in title:
        return f"{title} {pick(rng, ['-', '|', '–'])} {ctx.place.town}", "title"
    return title, ""


# ---------------------------------------------------------------- text
def extend(
    blocks: list[tx.Block], ad: dict, ctx: Context, rng: np.random.Generator, agency: str
) -> tuple[list[tx.Block], str]:
    """Add a pool block (EEO statement, company blurb, benefits or a site/agency footer)."""
    kind = pick(rng, ["eeo", "eeo", "blurb", "benefits", "footer", "footer"])
    text = pick(rng, blocks_of(ctx.lang, kind, ctx.country))
    ref = f"{pick(rng, ['JR', 'REQ', 'VAC', ''])}{int(rng.integers(10000, 999999))}"
    text = text.format(
        company=ad.get("company") or "The company",
        agency=agency or "We",
        site=pick(rng, ["caterer.com", "cv-library.co.uk", "totaljobs.com"]),
        ref=ref,
    )
    extra = tx.parse_blocks(text)
    return (extra + blocks, kind) if kind == "blurb" else (blocks + extra, kind)


def heavy_rewrite(
    blocks: list[tx.Block], ad: dict, ctx: Context, rng: np.random.Generator, agency: str
) -> list[tx.Block]:
    """Agency-style rewrite searched for a 5-shingle Jaccard with the original of about 0.30-0.45."""
    target = rng.uniform(0.30, 0.45)
    seed = int(rng.integers(2**31))
    fill = dict(
        title=ad.get("title") or "candidate",
        town=ctx.place.town,
        agency=agency or "We",
        kind=pick(rng, ["organisation", "business", "company", "employer"]),
    )
    intros = [t for t in AGENCY_INTROS if ctx.place.town or "{town}" not in t]
    intro = ("p", pick(rng, intros).format(**fill))
    outro = ("p", pick(rng, AGENCY_OUTROS).format(**fill))
    original = tx.render(blocks, "plain", rng)
    best, best_gap = blocks, 2.0
    for intensity in np.linspace(0.1, 1.0, 10):
        body = tx.rewrite(blocks, np.random.default_rng(seed), float(intensity), ctx.lang)
        cand = [intro] + body + [outro] if ctx.lang == "en" else body
        j = tx.jaccard(original, tx.render(cand, "plain", rng))
        gap = abs((j if j is not None else 0.0) - target)
        if gap < best_gap:
            best, best_gap = cand, gap
    return best


def render_for_site(blocks: list[tx.Block], site: str, meta: dict, rng: np.random.Generator) -> str:
    """Ad body in the site's usual format (HTML, Markdown flavour, flat text, Adzuna page)."""
    style = STYLE.get(site) or pick(rng, ["plain", "html", "markdown"])
    if style == "adzuna_page":
        meta = dict(meta, salary=f"£{int(rng.integers(28, 95))},{int(rng.integers(0, 999)):03d}")
    return tx.render(blocks, style, rng, meta)


def make_repost(ad: dict, rng: np.random.Generator) -> tuple[dict, str]:
    """The same vacancy as another site shows it; returns (new ad, '+'-joined operations)."""
    ctx = context_of(ad)
    new = dict(ad)
    ops: list[str] = []
    site = other_site(ad.get("source"), ctx, rng)
    new["source"] = site
    new["url"] = site_url(site, ad.get("title") or "", ctx, rng)
    new["posted_at"] = shift_date(ad.get("posted_at"), rng)
    if ctx.place.town:
        new["location"] = render_location(ctx.place, site, rng)
    new["company"], c_op = vary_company(ad.get("company"), ctx, rng)
    new["title"], t_op = vary_title(ad.get("title"), ctx, rng, ad.get("description") or "")
    ops += [o for o in (c_op, t_op) if o]
    agency = new["company"] if c_op == "agency" else pick(rng, AGENCIES.get(ctx.country, AGENCIES["US"]))
    if rng.random() < 0.4:
        new["occupation"] = None
    desc = ad.get("description") or ""
    if not desc.strip():
        return new, "+".join(ops or ["meta"])
    blocks = tx.parse_blocks(desc)
    kind = pick(
        rng,
        ["same"] * 10
        + ["format"] * 18
        + ["lead"] * 11
        + ["paras"] * 7
        + ["snippet"] * 6
        + ["extend"] * 20
        + ["reorder"] * 10
        + ["rewrite"] * 18,
    )
    if kind == "same":
        return new, "+".join(ops + ["same_text"])
    if kind == "snippet" or (site in SNIPPET_SITES and rng.random() < 0.5):
        new["description"] = tx.snippet(blocks, rng)
        return new, "+".join(ops + ["snippet"])
    if kind == "lead":
        blocks = tx.keep_lead(blocks, rng)
    elif kind == "paras":
        blocks = tx.keep_paragraphs(blocks, rng)
    elif kind == "reorder":
        blocks = tx.reorder(blocks, rng)
    elif kind == "rewrite":
        blocks = heavy_rewrite(blocks, ad, ctx, rng, agency)
        if c_op != "agency" and rng.random() < 0.5:  # agency rewrites usually go out under its name
            new["company"] = agency
            ops.append("agency")
    if kind == "extend" or rng.random() < 0.3:
        blocks, ext = extend(blocks, ad, ctx, rng, agency)
        kind = ext if kind in {"extend", "format"} else f"{kind}+{ext}"
    if rng.random() < 0.3:
        blocks = tx.small_edits(blocks, rng)
        kind += "+edits"
    meta = dict(title=new["title"] or "", company=new["company"] or "", location=new["location"] or "")
    new["description"] = render_for_site(blocks, site, meta, rng)
    return new, "+".join(ops + [kind])
