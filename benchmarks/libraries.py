"""Hand-written parsers against the libraries that replaced them, on the real ads, in one run.

For each replaced piece, today's code and the code before issue #14 (`features/normalize.py` and
`pipeline/clean.py` read from git at `--baseline`, a commit before the change) run on the same
inputs: how often they agree and how long each takes (one core, best of `--repeat`). Run from the
repository root (it needs git and the history):

    .venv/bin/python -m benchmarks.libraries --ads ../shared/data/real_ads.parquet

Pieces: phone numbers (phonenumbers, E.164 and national digits in the ad's region; also
PhoneNumberMatcher over the whole text for comparison), registrable domains (tldextract, offline
Public Suffix List), mojibake (ftfy), HTML to text (selectolax/lexbor) and company legal forms
(cleanco's list; also cleanco's own `basename` for comparison).
"""

from __future__ import annotations

import argparse
import platform
import re
import subprocess
import sys
import time
import types
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import cleanco
import numpy as np
import pandas as pd
import phonenumbers
import pyarrow as pa
import pyarrow.compute as pc

BASELINE = "1ab2fcc6859e0ea7ea96da14313d6758671d37eb"  # the last commit with the hand-written code
_WORD = re.compile(r"\w+")


def _old_module(rev: str, path: str, name: str) -> types.ModuleType:
    """A module's source at git revision `rev`, imported under `name` (its imports are stdlib/pandas)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType(name)
    module.__file__ = f"{rev[:7]}:{path}"
    sys.modules[name] = module  # dataclasses and the like look their module up
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 (this project's own source at a revision)
    return module


def _timed(
    func: Callable[[], Any], repeat: int, reset: Callable[[], None] | None = None
) -> tuple[Any, float]:
    """func's result and its best wall time of `repeat` runs (`reset` before each, e.g. clear a cache)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        if reset:
            reset()
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return result, best


def _plain(values: pd.Series) -> list[Any]:
    """The values as a list, missing ones None (pd.NA does not compare)."""
    return [None if v is pd.NA or v is None else v for v in values.astype(object).tolist()]


def _items(values: pd.Series) -> list[tuple[str, ...]]:
    return [v if isinstance(v, tuple) else () for v in values.tolist()]


def _agreement(old: list[Any], new: list[Any]) -> tuple[int, int]:
    """(equal, compared) over the values where either side has something."""
    pairs = [(a, b) for a, b in zip(old, new) if a or b]
    return sum(a == b for a, b in pairs), len(pairs)


def _sharing_pairs(items: list[tuple[str, ...]]) -> set[tuple[int, int]]:
    """Pairs of rows with an item in common (what field blocking and phone_match see)."""
    by_item: dict[str, list[int]] = {}
    for row, found in enumerate(items):
        for item in found:
            by_item.setdefault(item, []).append(row)
    return {(a, b) for rows in by_item.values() for i, a in enumerate(rows) for b in rows[i + 1 :]}


def _national_tail(key: str) -> str:
    """The old phone key (last 9 digits of the national number) of a new key (E.164, or the digits
    of a national number in an ad of unknown country)."""
    if not key.startswith("+"):
        return key.lstrip("0")[-9:]
    return str(phonenumbers.parse(key).national_number)[-9:]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ads", default="../shared/data/real_ads.parquet")
    parser.add_argument("--baseline", default=BASELINE, help="git revision of the hand-written code")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--show", type=int, default=8, help="differing cases to print per piece")
    args = parser.parse_args(argv)

    from jobdedup.features.normalize import contacts as new_contacts
    from jobdedup.features.normalize import domains as new_domains
    from jobdedup.features.normalize import phones as new_phones
    from jobdedup.features.normalize import text as new_text
    from jobdedup.features.normalize.companies import normalize_company
    from jobdedup.features.normalize.locations import location_parts
    from jobdedup.features.normalize.regions import ad_regions
    from jobdedup.features.normalize.text import normalize_text_key
    from jobdedup.features.normalize.titles import normalize_title
    from jobdedup.pipeline import clean as new_clean

    old_norm = _old_module(args.baseline, "features/normalize.py", "_old_normalize")
    old_clean = _old_module(args.baseline, "pipeline/clean.py", "_old_clean")
    ads = pd.read_parquet(args.ads)
    rows: list[tuple[str, str, str, float, float, str]] = []
    shown: list[str] = []

    def show(title: str, cases: list[Any]) -> None:
        shown.append(f"\n{title}: {len(cases)} differ" + ("; first ones:" if cases else ""))
        shown.extend(f"  {case!r}"[:400] for case in cases[: args.show])

    # --- phone numbers -------------------------------------------------------------------------
    texts = ads["contact"].fillna("") + "\n" + ads["description"].fillna("")
    _, _, country, _ = location_parts(ads["location"].astype(object))
    regions, t_regions = _timed(lambda: ad_regions(country, ads["url"], ads["source"]), args.repeat)
    old_phones, t_old = _timed(lambda: _items(old_norm.extract_phones(texts)), args.repeat)
    new_phones_, t_new = _timed(lambda: _items(new_phones.extract_phones(texts, regions)), args.repeat)
    projected = [tuple(sorted({_national_tail(p) for p in found})) for found in new_phones_]
    same, n = _agreement(old_phones, projected)
    old_pairs, new_pairs = _sharing_pairs(old_phones), _sharing_pairs(new_phones_)
    rows.append(
        (
            "phone numbers",
            "phonenumbers.parse + is_valid_number: E.164 and national digits, in the ad's region",
            (
                f"{same}/{n} ads ({same / max(n, 1):.1%}); pairs sharing a phone {len(old_pairs)} -> "
                f"{len(new_pairs)} ({len(old_pairs & new_pairs)} in both)"
            ),
            t_old,
            t_new + t_regions,
            f"regions {t_regions:.2f} s of it ({regions.notna().mean():.0%} of ads have one)",
        )
    )
    show(
        "phones (old keys vs new E.164, ad region)",
        [
            (ads["ad_id"].iat[i], regions.iat[i], old_phones[i], new_phones_[i])
            for i in range(len(ads))
            if (old_phones[i] or projected[i]) and old_phones[i] != projected[i]
        ],
    )
    hint_rows = np.flatnonzero(
        pc.match_substring_regex(pa.array(texts.tolist()), new_contacts._PHONE_HINT.re2)
        .fill_null(False)
        .to_numpy(zero_copy_only=False)
    )

    def matcher_phones() -> list[tuple[str, ...]]:
        found: list[tuple[str, ...]] = [()] * len(ads)
        for i in hint_rows:
            region = regions.iat[i] if isinstance(regions.iat[i], str) else None
            text = new_contacts._contact_text(texts.iat[i], True)  # NFKC, Markdown escapes removed
            matches = phonenumbers.PhoneNumberMatcher(text, region, phonenumbers.Leniency.VALID)
            found[i] = tuple(
                sorted(
                    {
                        phonenumbers.format_number(m.number, phonenumbers.PhoneNumberFormat.E164)
                        for m in matches
                    }
                )
            )
        return found

    matched, t_matcher = _timed(matcher_phones, 1)
    e164 = [tuple(k for k in found if k.startswith("+")) for found in new_phones_]  # the matcher's form
    same_m, n_m = _agreement(e164, matched)
    rows.append(
        (
            "  (alternative)",
            "phonenumbers.PhoneNumberMatcher over the whole (cleaned) text, Leniency.VALID",
            f"{same_m}/{n_m} ads agree with the chosen way ({same_m / max(n_m, 1):.1%})",
            t_old,
            t_matcher + t_regions,
            "not used (see README)",
        )
    )
    show(
        "phones (chosen way vs PhoneNumberMatcher)",
        [(ads["ad_id"].iat[i], e164[i], matched[i]) for i in hint_rows if e164[i] != matched[i]],
    )

    # --- registrable domains -------------------------------------------------------------------
    hosts = sorted(
        {h for t in texts.tolist() for h in new_domains._url_hosts(t)}
        | {h for t in ads["url"].dropna().tolist() for h in new_domains._url_hosts(t)}
        | {e.rsplit("@", 1)[1] for found in _items(old_norm.extract_emails(texts)) for e in found}
    )
    old_reg, t_old = _timed(lambda: [old_norm._registrable(h) for h in hosts], args.repeat)
    new_reg, t_new = _timed(lambda: [new_domains.registrable_domain(h) for h in hosts], args.repeat)
    same, n = _agreement(old_reg, new_reg)
    old_dom, t_old_all = _timed(
        lambda: _items(old_norm.extract_domains(texts)) + _items(old_norm.extract_domains(ads["url"])),
        args.repeat,
        old_norm._employer_domain.cache_clear,
    )
    new_dom, t_new_all = _timed(
        lambda: _items(new_domains.extract_domains(texts)) + _items(new_domains.extract_domains(ads["url"])),
        args.repeat,
        new_domains._employer_domain.cache_clear,
    )
    same_ads, n_ads = _agreement(old_dom, new_dom)
    rows.append(
        (
            "registrable domains",
            "tldextract, bundled Public Suffix List, offline",
            (
                f"{same}/{n} distinct hosts ({same / max(n, 1):.1%}); employer domains of "
                f"{same_ads}/{n_ads} texts and URLs ({same_ads / max(n_ads, 1):.1%})"
            ),
            t_old_all,
            t_new_all,
            f"hosts alone {t_old:.3f} -> {t_new:.3f} s",
        )
    )
    show(
        "registrable domains (host, old, new)",
        [(h, a, b) for h, a, b in zip(hosts, old_reg, new_reg) if a != b],
    )

    # --- mojibake ------------------------------------------------------------------------------
    fields = ["title", "company", "location", "occupation"]
    values = sorted({v for f in fields for v in ads[f].dropna().unique().tolist() if not v.isascii()})
    old_fix, t_old = _timed(lambda: [old_norm._fix_mojibake(v) for v in values], args.repeat)
    new_fix, t_new = _timed(lambda: [new_text._fix_mojibake(v) for v in values], args.repeat)
    same = sum(a == b for a, b in zip(old_fix, new_fix))
    changed_old = sum(a != v for a, v in zip(old_fix, values))
    changed_new = sum(b != v for b, v in zip(new_fix, values))
    rows.append(
        (
            "mojibake",
            "ftfy.fix_encoding",
            (
                f"{same}/{len(values)} distinct non-ASCII field values ({same / max(len(values), 1):.1%}); "
                f"repaired: {changed_old} -> {changed_new}"
            ),
            t_old,
            t_new,
            "titles, companies, locations, occupations",
        )
    )
    show("mojibake (value, old, new)", [(v, a, b) for v, a, b in zip(values, old_fix, new_fix) if a != b])

    # --- HTML to text --------------------------------------------------------------------------
    descriptions = ads["description"].dropna().tolist()
    markup = [t for t in descriptions if ("<" in t or "&" in t) and old_clean._looks_html(t)]
    old_html, t_old = _timed(lambda: [old_clean.strip_markup(t) for t in markup], args.repeat)
    new_html, t_new = _timed(lambda: [new_clean.strip_markup(t) for t in markup], args.repeat)
    old_words = [_WORD.findall(t.casefold()) for t in old_html]
    new_words = [_WORD.findall(t.casefold()) for t in new_html]
    same = sum(a == b for a, b in zip(old_words, new_words))

    def lines(text: str) -> list[str]:
        return [" ".join(line.split()) for line in text.split("\n") if line.split()]

    same_lines = sum(lines(a) == lines(b) for a, b in zip(old_html, new_html))
    _, t_old_all = _timed(lambda: [old_clean.text_for_kernel(t) for t in descriptions], args.repeat)
    _, t_new_all = _timed(lambda: [new_clean.text_for_kernel(t) for t in descriptions], args.repeat)
    rows.append(
        (
            "HTML to text",
            "selectolax (lexbor), block elements -> line breaks",
            (
                f"{same}/{len(markup)} descriptions with markup: same words ({same / max(len(markup), 1):.1%}), "
                f"{same_lines} same lines"
            ),
            t_old,
            t_new,
            (
                f"all {len(descriptions):,} descriptions through text_for_kernel "
                f"{t_old_all:.2f} -> {t_new_all:.2f} s"
            ),
        )
    )
    show(
        "HTML (ad, words only old, words only new)",
        [
            (i, sorted(set(a) - set(b))[:12], sorted(set(b) - set(a))[:12])
            for i, (a, b) in enumerate(zip(old_words, new_words))
            if a != b
        ],
    )

    # --- company legal forms -------------------------------------------------------------------
    companies = pd.Series(ads["company"].dropna().unique(), dtype=object)
    old_co, t_old = _timed(lambda: _plain(old_norm.normalize_company(companies)), args.repeat)
    new_co, t_new = _timed(lambda: _plain(normalize_company(companies)), args.repeat)
    same = sum(a == b for a, b in zip(old_co, new_co))
    rows.append(
        (
            "company legal forms",
            "ours + cleanco's list (one-word and multi-word forms)",
            f"{same}/{len(companies)} distinct company names ({same / max(len(companies), 1):.1%})",
            t_old,
            t_new,
            "normalize_company, per distinct name",
        )
    )
    show(
        "companies (name, old key, new key)",
        [(c, a, b) for c, a, b in zip(companies, old_co, new_co) if a != b],
    )
    basenames, t_base = _timed(
        lambda: _plain(normalize_text_key(pd.Series([cleanco.basename(c) for c in companies], dtype=object))),
        args.repeat,
    )
    same = sum(a == b for a, b in zip(new_co, basenames))
    rows.append(
        (
            "  (alternative)",
            "cleanco.basename, then the text key",
            (
                f"{same}/{len(companies)} distinct company names agree with the chosen way "
                f"({same / max(len(companies), 1):.1%})"
            ),
            t_old,
            t_base,
            "not used (see README)",
        )
    )

    # --- whole field normalisers touched by ftfy ----------------------------------------------
    for field, old_f, new_f in [
        ("title", old_norm.normalize_title, normalize_title),
        ("location", old_norm.normalize_location, lambda s: location_parts(s)[0]),
    ]:
        distinct = pd.Series(ads[field].dropna().unique(), dtype=object)
        a, b = _plain(old_f(distinct)), _plain(new_f(distinct))
        same = sum(x == y for x, y in zip(a, b))
        shown.append(f"\nnormalize_{field}: {same}/{len(distinct)} distinct values give the same key")
        shown.extend(f"  {(v, x, y)!r}" for v, x, y in zip(distinct, a, b) if x != y)

    print(
        f"{len(ads):,} ads of {args.ads}; {platform.machine()}, {platform.python_version()}, "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; old = {args.baseline[:7]}; "
        f"best of {args.repeat}, one core"
    )
    print("\n| piece | library | agreement with the old code | old (s) | new (s) | note |")
    print("|---|---|---|---:|---:|---|")
    for piece, library, agreement, old_s, new_s, note in rows:
        print(f"| {piece} | {library} | {agreement} | {old_s:.3f} | {new_s:.3f} | {note} |")
    print("\n".join(shown))


if __name__ == "__main__":
    main()
