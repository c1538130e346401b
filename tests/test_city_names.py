"""The shipped table of other-language city names is what GeoNames gives, and names map to the
city's own name."""

from __future__ import annotations

from jobdedup.features.normalize.city_names import (
    TABLE,
    _alternate_names,
    build_table,
    own_city_name,
    table_bytes,
)


def test_the_shipped_table_is_what_geonames_gives() -> None:
    built = build_table()
    assert _alternate_names() == built, "stale: python -m jobdedup.features.normalize.city_names"
    assert TABLE.read_bytes() == table_bytes(built)


def test_other_language_names_map_to_the_citys_own_name() -> None:
    assert own_city_name("warszawa") == "warsaw"
    assert own_city_name("wien") == "vienna"
    assert own_city_name("bengaluru") == own_city_name("bangalore")
    assert own_city_name("leeds") == "leeds"
    assert own_city_name("no such town at all") == "no such town at all"
