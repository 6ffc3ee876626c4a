"""SPARQL to SQL: whole algebra trees compiled to single statements (see compiler.py).

Importing this package registers the evaluation hook with rdflib (``CUSTOM_EVALS``),
so every ``query`` on a graph held by :class:`~catalogue.graph.store.SQLStore` runs
compiled SQL where it can and rdflib's evaluator where it cannot; and points rdflib's
``REGEX``/``REPLACE`` at RE2, so regular expressions match in linear time (regex.py), and
makes rdflib's SPARQL parser safe to call from several threads (it is not: evaluate.py).
"""

from .evaluate import (
    ExplainEntry,
    compile_part,
    evaluate_part,
    install,
    install_parse_lock,
    store_query,
)
from .regex import install as install_re2
from .sql import Unsupported

install()
install_re2()
install_parse_lock()

__all__ = [
    "ExplainEntry",
    "Unsupported",
    "compile_part",
    "evaluate_part",
    "install",
    "store_query",
]
