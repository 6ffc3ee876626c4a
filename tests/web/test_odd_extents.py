"""Odd extent triples in one graph never fail the routes that read every dataset's extent,
and an extent the coordinate byte budget stopped is said to be not read.

Review item 6: a SPARQL UPDATE that gives a harvested dataset a ``dcat:startDate`` of year
10000, an end that is not a date and a ``dcat:bbox`` that is not WKT made
``/stac/collections`` and ``/stac/collections/{id}`` answer 500. ``rdf/extents.read_extent``
now skips each figure that does not read back (logged), and the routes answer 200.
"""

from __future__ import annotations

import html
import pathlib
import re

import pytest
from fastapi.testclient import TestClient

import catalogue
from catalogue.web.app import create_app
from catalogue.web.settings import Settings
from tests.support import cf_stores, convention_stores

ODD = """PREFIX dct: <http://purl.org/dc/terms/>
PREFIX dcat: <http://www.w3.org/ns/dcat#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
PREFIX geo: <http://www.opengis.net/ont/geosparql#>
INSERT DATA {{ GRAPH <{g}> {{
  <{g}> dct:temporal [ a dct:PeriodOfTime ; dcat:startDate "10000-01-01"^^xsd:date ; dcat:endDate "garbage"^^xsd:date ] ;
        dct:spatial [ a dct:Location ; dcat:bbox "POLYGON((garbage"^^geo:wktLiteral ] .
}} }}"""


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_odd_extent_triples_do_not_fail_stac_or_the_portal(db_url: str, tmp_path: pathlib.Path):
    with catalogue.open(db_url) as cat:
        utm = cat.harvest(str(convention_stores.build_utm(tmp_path))).graph
        plain = cat.harvest(str(convention_stores.build_plain(tmp_path))).graph
        for graph in (plain, utm):  # one without an extent, one with (now two of each figure)
            cat.update(ODD.format(g=graph))
    with TestClient(create_app(Settings(db=db_url)), raise_server_exceptions=False) as client:
        listed = client.get("/stac/collections", params={"limit": 50})
        assert listed.status_code == 200, listed.text[:300]
        collections = listed.json()["collections"]
        assert len(collections) == 2
        for collection in collections:
            one = client.get(f"/stac/collections/{collection['id']}")
            assert one.status_code == 200, one.text[:300]
        for graph in (plain, utm):
            page = client.get("/browse", params={"iri": graph})
            assert page.status_code == 200, page.text[:300]
        for route in ("/", "/datasets", "/stac/collections?bbox=0,0,20,60", "/stac/collections?datetime=2000-01-01/.."):
            response = client.get(route)
            assert response.status_code == 200, (route, response.text[:300])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_portal_says_an_extent_the_byte_budget_stopped_was_not_read(tmp_path: pathlib.Path):
    """Review item 7: not "declares no extent" when the graph holds an extent.values-budget finding."""
    store = cf_stores.build_curvilinear(tmp_path)
    plain = convention_stores.build_plain(tmp_path)
    db = f"sqlite:///{tmp_path / 'c.db'}"
    with catalogue.open(db) as cat:
        assert cat.harvest(str(store), coordinate_bytes=100).ok
        assert cat.harvest(str(plain)).ok
        iri = store.resolve().as_uri()
        assert cat.extent(iri) is None and len(cat.extent_not_read(iri)) == 1
        assert cat.extent_not_read(plain.resolve().as_uri()) == []
    with TestClient(create_app(Settings(db=db))) as client:
        for node in (iri, f"{iri}/ts"):
            page = client.get("/browse", params={"iri": node})
            assert page.status_code == 200
            text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.text)).split())
            assert "extent was not read: the coordinate byte budget was spent; harvest with --coordinate-bytes N" in text
            assert "declares no extent" not in text and "/lat (4,800 bytes) were not read" in text
        text = client.get("/browse", params={"iri": plain.resolve().as_uri()}).text
        assert "declares no extent" in text and "not read" not in text
