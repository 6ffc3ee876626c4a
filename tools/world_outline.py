"""Build the portal's world outline (catalogue/web/world/land-110m.json) from Natural Earth.

The portal draws maps offline, so it ships a coarse outline of the land: Natural Earth's
1:110m land polygons (public domain), simplified with shapely and rounded to 0.1 degree,
which keeps the outline recognisable at the sizes the portal draws (a page-wide map of a
region, a thumbnail per search hit) in about 30 KB. Run it again only to change the
tolerance or the source; the shipped file is data, not generated at install time::

    python tools/world_outline.py ne_110m_land.geojson catalogue/web/world/land-110m.json

``ne_110m_land.geojson`` is ``geojson/ne_110m_land.geojson`` of
https://github.com/nvkelso/natural-earth-vector.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from shapely.geometry import Polygon, shape

#: Douglas-Peucker tolerance, in degrees, and the decimals kept.
TOLERANCE = 0.2
DECIMALS = 1


def rings(polygon: Polygon) -> list[list[float]]:
    """A polygon's rings (the exterior first) as flat ``[lon, lat, lon, lat, ...]`` lists, unclosed."""
    out = []
    for ring in (polygon.exterior, *polygon.interiors):
        flat = [round(v, DECIMALS) for xy in ring.coords[:-1] for v in xy]
        if len(flat) >= 6:
            out.append(flat)
    return out


def build(source: Path) -> dict[str, object]:
    features = json.loads(source.read_text())["features"]
    polygons = []
    for feature in features:
        geometry = shape(feature["geometry"]).simplify(TOLERANCE, preserve_topology=True)
        parts = [geometry] if geometry.geom_type == "Polygon" else list(geometry.geoms)
        for part in parts:
            if part.area >= TOLERANCE * TOLERANCE:  # islands smaller than the tolerance vanish at these sizes
                polygons.append(rings(part))
    return {
        "source": "Natural Earth 1:110m physical vectors, land (ne_110m_land), public domain",
        "simplified": f"shapely simplify({TOLERANCE}, preserve_topology=True), rounded to {DECIMALS} decimal",
        "crs": "CRS84 (longitude, latitude in degrees)",
        "polygons": polygons,
    }


def main() -> None:
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    target.write_text(json.dumps(build(source), separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
