"""SPARQL to SQL: whole algebra trees compiled to single statements (see compiler.py).

Importing this package registers the evaluation hook with rdflib (``CUSTOM_EVALS``),
so every ``query`` on a graph held by :class:`~catalogue.graph.store.SQLStore` runs
compiled SQL where it can and rdflib's evaluator where it cannot.
"""

from .evaluate import ExplainEntry, compile_part, evaluate_part, install, store_query
from .sql import Unsupported

install()

__all__ = [
    "ExplainEntry",
    "Unsupported",
    "compile_part",
    "evaluate_part",
    "install",
    "store_query",
]
