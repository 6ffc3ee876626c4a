"""Our own runner for the W3C SPARQL query-evaluation test suites.

The catalogue store compiles SPARQL to SQL inside ``Store.query``, so we need to run the
W3C suites against arbitrary rdflib stores (rdflib's own runner is not installed and is
tied to rdflib's evaluator).  The package is split by concern:

* :mod:`.manifest` reads the manifests (``mf:include``/``mf:entries``) into
  :class:`~.manifest.QueryTest` records;
* :mod:`.results` parses expected results (SRX, SRJ, TSV, CSV, result-set graphs,
  RDF graphs) and compares them with what a store returned;
* :mod:`.runner` runs a suite against a store and reports per-test outcomes (also a CLI:
  ``python -m tests.graph.sparql.w3c.runner --help``).

The suites live outside the repository (``../shared/conformance/w3c`` relative to the
repository root); :func:`.manifest.suite_root` finds them and callers skip when absent.
"""
