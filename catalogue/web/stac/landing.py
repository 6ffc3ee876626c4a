"""The STAC API's landing page and conformance classes: what the API promises clients.

pystac-client reads ``conformsTo`` to decide what it may ask the server and what it must
do itself (it filters client-side, with a warning, when collection search is not
declared), so the list names exactly what :mod:`.routes` implements: STAC API core,
collections, collection search with free text and sort, and OGC API Common's simple
query (``bbox``, ``datetime``, ``limit``) that collection search builds on. Item search,
filter (CQL2), fields and query are not implemented: the catalogue has no STAC Items.
"""

from __future__ import annotations

from typing import Any

from catalogue.rdf.stac import STAC_VERSION, StacLinks

CONFORMS_TO = [
    "https://api.stacspec.org/v1.0.0/core",
    "https://api.stacspec.org/v1.0.0/collections",
    "https://api.stacspec.org/v1.0.0-rc.1/collection-search",
    "https://api.stacspec.org/v1.0.0-rc.1/collection-search#free-text",
    "https://api.stacspec.org/v1.0.0-rc.1/collection-search#sort",
    "http://www.opengis.net/spec/ogcapi-common-2/1.0/conf/simple-query",
]


def landing_page(links: StacLinks) -> dict[str, Any]:
    """The landing page: a STAC Catalog whose links lead to everything else."""
    return {
        "type": "Catalog",
        "stac_version": STAC_VERSION,
        "id": "zarr-catalogue",
        "title": "zarr-catalogue",
        "description": "Zarr hierarchies whose metadata was harvested into the catalogue, one STAC Collection each.",
        "conformsTo": CONFORMS_TO,
        "links": [
            {"rel": "self", "href": links.root, "type": "application/json"},
            {"rel": "root", "href": links.root, "type": "application/json"},
            {"rel": "data", "href": links.collections, "type": "application/json"},
            {"rel": "conformance", "href": f"{links.root}/conformance", "type": "application/json"},
            {"rel": "service-desc", "href": f"{links.base}/openapi.json",
             "type": "application/vnd.oai.openapi+json;version=3.1"},
            {"rel": "service-doc", "href": f"{links.base}/docs", "type": "text/html"},
        ],
    }
