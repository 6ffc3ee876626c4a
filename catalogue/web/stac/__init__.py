"""The STAC API (``/stac``): every catalogued dataset as a STAC Collection, with collection search.

The router is :mod:`.routes`; the landing page and conformance classes are
:mod:`.landing`; the collection search parameters are :mod:`.search`. The collections
themselves are built by the library (``Catalogue.stac_collection(s)``, over
:mod:`catalogue.rdf.stac`).
"""
