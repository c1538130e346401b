"""Locations: a canonical "city region" string and the most specific place, for blocking."""

from __future__ import annotations

import re

import pandas as pd

from jobdedup.features.normalize.city_names import own_city_name
from jobdedup.features.normalize.text import (
    _key,
    _preclean,
)
from jobdedup.features.normalize.unique import _broadcast, _check_series, _map_unique, _unique_results

# --------------------------------------------------------------------------------------------
# Locations
# --------------------------------------------------------------------------------------------


def _table(spec: str) -> dict[str, str]:
    """Parse "name|alias=code; ..." into {folded name: code}."""
    out: dict[str, str] = {}
    for item in spec.split(";"):
        if item.strip():
            names, code = item.rsplit("=", 1)
            for name in names.split("|"):
                out[_key(name)] = code.strip()
    return out


_REGIONS = _table(
    # US states
    "alabama=al;alaska=ak;arizona=az;arkansas=ar;california=ca;colorado=co;connecticut=ct;"
    "delaware=de;florida=fl;georgia=ga;hawaii=hi;idaho=id;illinois=il;indiana=in;iowa=ia;kansas=ks;"
    "kentucky=ky;louisiana=la;maine=me;maryland=md;massachusetts=ma;michigan=mi;minnesota=mn;"
    "mississippi=ms;missouri=mo;montana=mt;nebraska=ne;nevada=nv;new hampshire=nh;new jersey=nj;"
    "new mexico=nm;new york|new york state=ny;north carolina=nc;north dakota=nd;ohio=oh;oklahoma=ok;"
    "oregon=or;pennsylvania=pa;rhode island=ri;south carolina=sc;south dakota=sd;tennessee=tn;"
    "texas=tx;utah=ut;vermont=vt;virginia=va;washington|washington state=wa;west virginia=wv;"
    "wisconsin=wi;wyoming=wy;district of columbia=dc;puerto rico=pr;"
    # Canadian provinces
    "alberta=ab;british columbia=bc;manitoba=mb;new brunswick=nb;newfoundland and labrador=nl;"
    "nova scotia=ns;ontario=on;prince edward island=pe;quebec=qc;saskatchewan=sk;"
    "northwest territories=nt;nunavut=nu;yukon=yt;"
    # German Länder
    "baden-württemberg=bw;bavaria|bayern=by;berlin=be;brandenburg=bb;bremen=hb;hamburg=hh;"
    "hesse|hessen=he;lower saxony|niedersachsen=ni;mecklenburg-vorpommern|"
    "mecklenburg-western pomerania=mv;north rhine-westphalia|nordrhein-westfalen|nrw=nw;"
    "rhineland-palatinate|rheinland-pfalz=rp;saarland=sl;saxony|sachsen=sn;"
    "saxony-anhalt|sachsen-anhalt=st;schleswig-holstein=sh;thuringia|thüringen=th;"
    # Dutch provinces
    "north holland|noord-holland=nh;south holland|zuid-holland=zh;utrecht=ut;"
    "north brabant|noord-brabant=nb;gelderland=ge;overijssel=ov;groningen=gr;friesland|fryslân=fr;"
    "drenthe=dr;flevoland=fl;limburg=li;zeeland=ze;"
    # Indian states
    "karnataka=ka;maharashtra=mh;tamil nadu=tn;telangana=tg;andhra pradesh=ap;kerala=kl;"
    "delhi|nct of delhi=dl;haryana=hr;uttar pradesh=up;gujarat=gj;west bengal=wb;rajasthan=rj;"
    "punjab=pb;madhya pradesh=mp;odisha=od;goa=ga;chandigarh=ch;"
    # Israeli districts (Indeed writes TA, HM, HA, JM, HZ, HD)
    "tel aviv district=ta;center district|central district=hm;haifa district=ha;"
    "jerusalem district=jm;north district|northern district=hz;south district|southern district=hd;"
    # French regions (ISO) and the old codes Indeed still uses
    "île-de-france|ile de france|a8=idf;hauts-de-france=hdf;occitanie=occ;pays de la loire|b5=pdl;"
    "auvergne-rhône-alpes=ara;nouvelle-aquitaine=naq;provence-alpes-côte d'azur=pac;"
    "bretagne|brittany=bre;normandie|normandy=nor;grand est=ges;bourgogne-franche-comté=bfc;"
    "centre-val de loire=cvl;corse|corsica=cor"
)
_REGION_CODES = frozenset(_REGIONS.values()) | {"ts"}
_US_STATE_CODES = frozenset(
    "al ak az ar ca co ct de fl ga hi id il in ia ks ky la me md ma mi mn ms mo mt ne nv nh nj nm ny "
    "nc nd oh ok or pa ri sc sd tn tx ut vt va wa wv wi wy dc pr".split()
)
# Names that are a city as well as a region: kept as a city when they stand alone.
_CITY_STATES = frozenset(
    _key(n)
    for n in (
        "new york",
        "washington",
        "utrecht",
        "groningen",
        "berlin",
        "hamburg",
        "bremen",
        "delhi",
        "quebec",
        "salzburg",
        "limburg",
    )
)

_COUNTRIES = _table(
    "united states|united states of america|usa|us|u s|u s a=united states;"
    "united kingdom|uk|u k|great britain|gb|britain|england|scotland|wales|northern ireland="
    "united kingdom;netherlands|the netherlands|nederland|holland|nl=netherlands;"
    "germany|deutschland|de=germany;austria|österreich|oesterreich|at=austria;"
    "israel|il|ישראל=israel;india|in|bharat=india;canada|ca=canada;france|fr=france;"
    "belgium|belgie|belgique|be=belgium;switzerland|schweiz|suisse|ch=switzerland;ireland|ie=ireland;"
    "spain|espana|es=spain;italy|italia|it=italy;poland|polska|pl=poland;portugal|pt=portugal;"
    "sweden|se=sweden;denmark|dk=denmark;norway|no=norway;finland|fi=finland;"
    "luxembourg|lu=luxembourg;czech republic|czechia|cz=czechia;australia|au=australia;"
    "singapore|sg=singapore;new zealand|nz=new zealand;mexico|mx=mexico;brazil|br=brazil;"
    "japan|jp=japan;china|cn=china;greece|gr=greece;romania|ro=romania"
)
_COUNTRY_CODES = frozenset(k for k in _COUNTRIES if len(k) == 2)
# ISO 3166 alpha-2 code of each country name above (the phone parser's default region).
_COUNTRY_ISO = dict(
    pair.split("=")
    for pair in (
        "united states=US;united kingdom=GB;netherlands=NL;germany=DE;austria=AT;israel=IL;india=IN;"
        "canada=CA;france=FR;belgium=BE;switzerland=CH;ireland=IE;spain=ES;italy=IT;poland=PL;"
        "portugal=PT;sweden=SE;denmark=DK;norway=NO;finland=FI;luxembourg=LU;czechia=CZ;australia=AU;"
        "singapore=SG;new zealand=NZ;mexico=MX;brazil=BR;japan=JP;china=CN;greece=GR;romania=RO"
    ).split(";")
)

_CITY_ALIASES = _table(
    "münchen|muenchen=munich;köln|koeln=cologne;nürnberg|nuernberg=nuremberg;"
    "frankfurt am main|frankfurt main|frankfurt a m=frankfurt;düsseldorf|duesseldorf=dusseldorf;"
    "wien=vienna;den haag|s gravenhage|'s-gravenhage|the hague=the hague;"
    "s hertogenbosch|'s-hertogenbosch|hertogenbosch|den bosch=den bosch;"
    "bangalore|bangalore urban|bengaluru urban=bengaluru;gurgaon=gurugram;bombay=mumbai;"
    "new delhi=delhi;new york city|nyc|manhattan=new york;"
    "tel aviv yafo|tel aviv jaffa|tel aviv-yafo|תל אביב|תל אביב יפו=tel aviv;"
    "ירושלים=jerusalem;חיפה=haifa;הרצליה=herzliya;"
    "פתח תקווה|פתח תקוה|petach tikva|petah tiqwa|petah tikvah=petah tikva;"
    "רעננה|raanana=raanana;באר שבע|beersheba|be er sheva=beer sheva;רמת גן=ramat gan;"
    "נתניה=netanya;יקנעם|yokneam illit=yokneam;montréal=montreal"
)
# Districts of a big city collapse to the city: "Amsterdam Zuid", "Berlin-Kreuzberg".
_MAJOR_CITIES = tuple(
    _key(c) + " "
    for c in (
        "amsterdam",
        "berlin",
        "london",
        "munich",
        "hamburg",
        "paris",
        "rotterdam",
        "bengaluru",
        "toronto",
        "tel aviv",
        "vienna",
        "dublin",
        "madrid",
        "cologne",
        "frankfurt",
        "glasgow",
        "manchester",
        "birmingham",
        "edinburgh",
        "dallas",
        "houston",
        "chicago",
        "new york",
    )
)

_PAREN_RE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_POSTCODE_RE = re.compile(
    r"\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b"  # UK: SW1A 1AA, M1 1AE
    r"|\b\d{4}\s?[A-Z]{2}\b"  # NL: 1012 AB
    r"|\b\d{5}-\d{4}\b|\b\d{4,7}\b",  # US ZIP+4, ZIP, DE/FR/AT/IL/IN postcodes
    re.I,
)
_REMOTE_RE = re.compile(
    r"\b(?:fully\s+)?remote(?:\s+(?:job|work|first|only|friendly))?\b|\bwork(?:ing)?\s+from\s+home\b|"
    r"\bwfh\b|\bhome\s*-?\s*office\b|\bwerk\s+van(?:uit)?\s+thuis\b|\bthuiswerk(?:en)?\b|"
    r"\btele-?travail\b|\btélétravail\b|\banywhere\b|\bworldwide\b|\bglobal\b",
    re.I,
)
_LOCATION_NOISE_RE = re.compile(
    r"\bhybrid(?:\s+work)?\b|\bon-?site\b|\bflexible\b|\b(?:multiple|various|several)\s+locations?\b|"
    r"\bselect\s+locations?\b|\bnationwide\b|\btime\s*zones?\b|\btimezones?\b|"
    r"\bcity\s+cent(?:re|er)\b|\bcentrum\b|"
    r"\bmetropolitan\b|\bmetroplex\b|\bmetro\b|\bgreater\b|\barea\b|\bregion\b|\bcentral\b(?!\s+district)",
    re.I,
)
_LIST_SPLIT_RE = re.compile(r"\s*(?:;|\||\s/\s|/|\s+-\s+|\s+or\s+|\s+&\s+)\s*", re.I)
_DIGIT_RE = re.compile(r"\d")
_LEADING_IN_RE = re.compile(r"^\s*(?:in|near|bei|im)\s+(?=\S)", re.I)


def _canonical_part(part: str) -> str:
    key = _key(part)
    if key in _CITY_ALIASES:
        return _CITY_ALIASES[key]
    key = own_city_name(key)
    for city in _MAJOR_CITIES if key.startswith(_MAJOR_CITIES) else ():
        if key.startswith(city) and not all(w in _REGION_CODES for w in key[len(city) :].split()):
            return city.strip()
    words = ["st" if w in ("saint", "sankt") else "fort" if w == "ft" else w for w in key.split()]
    return " ".join(words)


def _parse_location(text: str) -> tuple[str | None, str | None, str | None, str | None]:
    """(canonical location, most specific place, country name, subdivision code) of one raw
    location string (`location_parts`)."""
    text = _preclean(text)
    if "(" in text or "[" in text:
        text = _PAREN_RE.sub(" ", text)
    if _DIGIT_RE.search(text):  # every postcode has digits
        text = _POSTCODE_RE.sub(" ", text)
    remote = bool(_REMOTE_RE.search(text))
    if remote:
        text = _REMOTE_RE.sub(" ", text)
    text = _LOCATION_NOISE_RE.sub(" ", text)
    first = next((seg for seg in _LIST_SPLIT_RE.split(text) if _key(seg)), "")
    parts = [_key(_LEADING_IN_RE.sub("", p)) for p in first.split(",")]
    parts = [p for p in parts if p]
    # Countries in the middle ("Cheshire, UK, Cheshire").
    parts = [
        p
        for i, p in enumerate(parts)
        if i == 0
        or i == len(parts) - 1
        or not (
            p in _COUNTRIES
            and (p not in _COUNTRY_CODES or p not in _US_STATE_CODES and p not in _REGION_CODES)
        )
    ]

    country: str | None = None
    # Trailing countries: full names always; 2-letter codes in "City, Region, CC" or after a
    # region ("KA, IN"); in "City, XX" a US state code wins ("Sharon, CA" = California).
    while parts:
        last = parts[-1]
        prev = parts[-2] if len(parts) > 1 else None
        is_name = last in _COUNTRIES and last not in _COUNTRY_CODES
        is_code = (
            last in _COUNTRY_CODES
            and prev is not None
            and (len(parts) >= 3 or prev in _REGION_CODES or prev in _REGIONS or last not in _US_STATE_CODES)
        )
        if not (is_name or is_code) or len(parts) == 1 and not is_name:
            break
        country = country or _COUNTRIES[last]
        parts.pop()
    # A country written first ("UK, Greater London") unless a region follows ("Italy, TX").
    if (
        len(parts) > 1
        and parts[0] in _COUNTRIES
        and parts[0] not in _COUNTRY_CODES
        and parts[1] not in _REGIONS
        and parts[1] not in _REGION_CODES
    ):
        country = country or _COUNTRIES[parts[0]]
        parts = parts[1:]
    if len(parts) == 1 and parts[0] in _COUNTRIES:
        country = _COUNTRIES[parts[0]]
        parts = []

    region_only = False
    if (
        len(parts) == 1
        and parts[0] not in _CITY_STATES
        and (parts[0] in _REGIONS or parts[0] in _REGION_CODES)
    ):
        parts = [_REGIONS.get(parts[0], parts[0])]
        region_only = True
    else:
        parts = [_canonical_part(parts[0])] + [_REGIONS.get(p, p) for p in parts[1:]] if parts else []
    parts = [p for i, p in enumerate(parts) if p not in parts[:i]]  # "London, London"

    if not parts:
        return ("remote" if remote else country), None, country, None
    city = None if region_only else parts[0]
    return " ".join(parts), city, country, None if remote else _subdivision(parts, region_only)


# City-states and capitals written alone that name their region too ("New York, United States" is
# in New York state); Washington (WA or DC?) and Limburg (a Dutch province, a German town) do not.
_CITY_REGIONS = {
    city: _REGIONS[city] for city in _CITY_STATES - {"washington", "limburg"} if city in _REGIONS
}


def _subdivision(parts: list[str], region_only: bool) -> str | None:
    """The state, province or Land code of parsed location `parts` (`_parse_location`), if written."""
    if region_only:
        return parts[0]
    written = next((part for part in parts[1:] if part in _REGION_CODES), None)
    return written or (_CITY_REGIONS.get(parts[0]) if len(parts) == 1 else None)


def normalize_location(s: pd.Series) -> pd.Series:
    """Canonical "city[ region]" string of a free-text location.

    Trailing country names and codes, postcodes (UK, US ZIP, NL, 4-7 digit), words like greater,
    area, metropolitan, region, hybrid and "(+2 others)" are dropped; region names become codes
    (US states, Canadian provinces, German Länder, Dutch provinces, Indian states, Israeli
    districts, French regions); well-known spellings unify (München/Munich, Bangalore/Bengaluru,
    תל אביב/Tel Aviv-Yafo). Only the first of several listed locations is kept. A location that
    is only remote gives "remote"; one that is only a country gives its English name. Give it
    raw locations: the result has lost the commas that separate city and region, so normalising
    it again is not guaranteed to give the same string.

    Example:
        >>> normalize_location(pd.Series(["Dallas, TX", "Dallas, Texas, United States",
        ...     "Amsterdam, North Holland, Netherlands", "Amsterdam, NH, NL", "Remote - USA"])).tolist()
        ['dallas tx', 'dallas tx', 'amsterdam nh', 'amsterdam nh', 'remote']
    """
    return _map_unique(_check_series(s, "normalize_location"), lambda t: _parse_location(t)[0], "string")


def location_city(s: pd.Series) -> pd.Series:
    """The most specific place of a location (its first part), for blocking.

    NA when the location is only a country, a region or remote.

    Example:
        >>> location_city(pd.Series(["London, England, UK", "Dallas, TX", "Amsterdam Zuid, NH, NL",
        ...                          "Texas, United States", "Remote"])).tolist()
        ['london', 'dallas', 'amsterdam', <NA>, <NA>]
    """
    return _map_unique(_check_series(s, "location_city"), _city, "string")


def _city(text: str) -> str | None:
    """`location_city` of one raw location string."""
    return _parse_location(text)[1]


# Counties, provinces and compass regions written after a town ("Maidstone, Kent", "Leeds, West
# Yorkshire", "Bristol, South West England"); US states and the regions of `_REGIONS` are already
# no town. "Central London", "Greater London" and "Greater Manchester"'s town are kept.
_COUNTY_RE = re.compile(
    r"shire\b|shrie\b|\bcounty\b|yorkshire|sussex|midlands|glamorgan|lothian|"
    r"tyne\s*(?:&|and)\s*wear|tyneside|"
    r"^(?:north|south|east|west|central)\b(?! london)|\b(?:england|wales|scotland)\b|"
    r"^(?:kent|essex|surrey|devon|dorset|somerset|suffolk|norfolk|cornwall|cumbria|merseyside|middlesex|"
    r"northumberland|rutland|avon|fife|angus|highland|powys|gwent|ceredigion|borders|bucks|berks|"
    r"channel isles|east anglia|limburg|utrecht|groningen|noord-brabant|gelderland|overijssel|"
    r"friesland|drenthe|zeeland|flevoland)$",
    re.I,
)


# The river or area a town's full name adds ("Newcastle upon Tyne", "Stoke-on-Trent", "Frankfurt am
# Main", "Alphen aan den Rijn", "Châlons-en-Champagne"): texts name such towns by their first part.
_TOWN_SUFFIX_RE = re.compile(
    r"[\s-]+(?:upon|on|under|super|am|an der|im|in der|ob der|aan de|aan den|sur|en)[\s-].*$", re.I
)


def short_town_name(name: str) -> str:
    """A town's name without the river or area its full name adds: the words a text names it by.

    Example:
        >>> [short_town_name(t) for t in ["Newcastle Upon Tyne", "Stoke-on-Trent", "Frankfurt am Main", "Leeds"]]
        ['Newcastle', 'Stoke', 'Frankfurt', 'Leeds']
    """
    return _TOWN_SUFFIX_RE.sub("", name)


def district_town(s: pd.Series) -> pd.Series:
    """The town a listing's district lies in: the second part of a location when it is a town
    ("Filton, Bristol" -> "Bristol"), NA when it is a county, province, state, region or country, or
    there is none. Job boards file one job under districts of the town its text names.

    Example:
        >>> district_town(pd.Series(["Filton, Bristol", "Maidstone, Kent", "Dallas, TX",
        ...                          "Openshaw, Greater Manchester", "Leeds", None,
        ...                          "Longbenton, Newcastle Upon Tyne", "Gateshead, Tyne & Wear"])).tolist()
        ['Bristol', <NA>, <NA>, 'Greater Manchester', <NA>, <NA>, 'Newcastle Upon Tyne', <NA>]
    """
    return _map_unique(_check_series(s, "district_town"), _district_town, "string")


def _district_town(text: str) -> str | None:
    """`district_town` of one raw location string."""
    parts = text.split(",", 2)
    if len(parts) < 2:
        return None
    second = parts[1].strip()
    if _COUNTY_RE.search(second) or _parse_location(second)[1] is None:
        return None
    return second


def location_and_city(s: pd.Series) -> tuple[pd.Series, pd.Series]:
    """`normalize_location` and `location_city` of `s`, parsing each distinct location once."""
    location, city, _, _ = location_parts(s)
    return location, city


def location_parts(s: pd.Series) -> tuple[pd.Series, pd.Series, pd.Series, pd.Series]:
    """`normalize_location`, `location_city`, the country written in the location (ISO 3166
    alpha-2: "GB", "NL", "US"; NA when none is written) and its subdivision (the code of the US
    state, Canadian province, German Land, Dutch province, Indian state, Israeli district or French
    region of `normalize_location`, or of a city-state written alone: "New York" -> "ny"; NA when
    none is written or the location is remote), parsing each distinct location once.

    Example:
        >>> parts = location_parts(pd.Series(["Amsterdam, NH, NL", "London, England, UK", "Dallas, TX"]))
        >>> parts[2].tolist(), parts[3].tolist()
        (['NL', 'GB', <NA>], ['nh', <NA>, 'tx'])
    """
    codes, results = _unique_results(_check_series(s, "location_parts"), _location_parts)
    location, city, country, subdivision = (
        _broadcast([result[part] for result in results], codes, s, "string") for part in range(4)
    )
    return location, city, country, subdivision


def _location_parts(text: str) -> tuple[str | None, str | None, str | None, str | None]:
    """`location_parts` of one raw location string."""
    location, city, country, subdivision = _parse_location(text)
    return location, city, _COUNTRY_ISO.get(country or ""), subdivision
