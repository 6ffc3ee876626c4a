"""Namespaces and terms the catalogue writes, in one place.

The property names are fixed by contract (users write queries against them);
``contexts/zarr.ttl`` documents each one and a test checks that every term
used here is defined there with a label and a comment.
"""

from __future__ import annotations

from rdflib import DCAT, DCTERMS, OWL, PROV, RDF, RDFS, SH, XSD, Namespace

ZARR = Namespace("https://w3id.org/zarr-catalogue/vocab#")
RDF_JSON = RDF.JSON

#: Prefixes bound in every catalogue and pre-declared for SPARQL queries.
PREFIXES: dict[str, Namespace] = {
    "zarr": ZARR,
    "dcat": Namespace(str(DCAT)),
    "dct": Namespace(str(DCTERMS)),
    "prov": Namespace(str(PROV)),
    "rdf": Namespace(str(RDF)),
    "rdfs": Namespace(str(RDFS)),
    "xsd": Namespace(str(XSD)),
    "owl": Namespace(str(OWL)),
    "sh": Namespace(str(SH)),
    # GeoSPARQL 1.1: geometries, the filter functions and their units of measure.
    "geo": Namespace("http://www.opengis.net/ont/geosparql#"),
    "geof": Namespace("http://www.opengis.net/def/function/geosparql/"),
    "uom": Namespace("http://www.opengis.net/def/uom/OGC/1.0/"),
}

#: Properties derived from other metadata (for search); never used to rebuild.
DERIVED_V2 = {ZARR.chunkKeyEncoding, ZARR.codecs, ZARR.dimensionNames}
DERIVED_V3 = {ZARR.chunkShape}
LIFTED = {
    DCTERMS.title,
    DCTERMS.description,
    DCAT.keyword,
    DCTERMS.publisher,
    RDFS.label,
    ZARR.standardName,
    ZARR.units,
}
