"""SPARQL discovery benchmark: a synthetic 1M-triple catalogue, portal queries, four engines.

``generate`` writes the catalogue as N-Quads, ``run`` loads it into the catalogue store
(SQLite, PostgreSQL), Oxigraph and rdflib's Memory store and times ``queries/*.rq`` on
each.  See ``bench/README.md``.
"""
