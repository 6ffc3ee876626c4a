"""SPARQL to SQL: whole algebra trees compiled to single statements (see compiler.py).

Importing this package changes nothing in rdflib: :func:`.hooks.install`, called by
the first query or update on a :class:`~catalogue.graph.store.SQLStore`, registers the evaluation
hook (``CUSTOM_EVALS``), RE2 for rdflib's ``REGEX``/``REPLACE`` and the parser lock.
The entry of ``Store.query`` (parse cache included) is :mod:`.query`; what the
evaluation needs of a store is the protocol in :mod:`.source`.
"""

from .evaluate import ExplainEntry, compile_part, evaluate_part
from .parse import parse_query, parse_update
from .query import store_query
from .sql import Unsupported

__all__ = [
    "ExplainEntry",
    "Unsupported",
    "compile_part",
    "evaluate_part",
    "parse_query",
    "parse_update",
    "store_query",
]
