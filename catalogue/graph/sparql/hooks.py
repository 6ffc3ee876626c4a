"""The changes the catalogue makes to rdflib's SPARQL machinery, made on request only.

:func:`install` (idempotent) is called by the first query or update on a
:class:`~catalogue.graph.store.SQLStore`; importing any catalogue module, or opening a
store, changes nothing in rdflib.  It

* registers the evaluation hook with rdflib (``CUSTOM_EVALS``), so every ``query`` on
  a graph held by a registered store runs compiled SQL where it can and rdflib's
  evaluator where it cannot (:mod:`.evaluate`);
* points rdflib's ``REGEX``/``REPLACE`` at RE2, so regular expressions match in
  linear time (:mod:`.regex`);
* registers the GeoSPARQL ``geof:`` functions with rdflib's evaluator, for the
  filters the compiler leaves to it (:mod:`.geof`);
* makes rdflib's SPARQL parser safe to call from several threads (it is not: see
  :data:`.query.PARSE_LOCK`), and its parse trees keep ``FILTER(false)`` through the
  algebra translation (:func:`.query.keep_constant_filters`).

These act on the whole process (rdflib keeps them in module globals), which is why
they wait until a store is queried rather than happen as a side effect of an import.
"""

from __future__ import annotations

from typing import Any

from rdflib.plugins.sparql import CUSTOM_EVALS

from .evaluate import evaluate_part
from .geof import install as install_geof
from .query import PARSE_LOCK, keep_constant_filters
from .regex import RE2_MODULE
from .source import register

__all__ = ["HOOK_NAME", "install"]

HOOK_NAME = "catalogue-sql"


def install(source_type: type) -> None:
    """Evaluate SPARQL on stores of ``source_type`` as compiled SQL, with RE2 regular
    expressions and a thread-safe parser (idempotent, cheap enough to call per open)."""
    register(source_type)
    CUSTOM_EVALS[HOOK_NAME] = evaluate_part
    install_geof()
    _use_re2()
    _lock_parser()


def _use_re2() -> None:
    """Make rdflib's SPARQL ``REGEX`` and ``REPLACE`` use RE2 (idempotent)."""
    from rdflib.plugins.sparql import operators

    operators.re = RE2_MODULE  # type: ignore[attr-defined]


def _lock_parser() -> None:
    """Make rdflib's ``parseQuery``/``parseUpdate`` (and the processor's references) hold
    PARSE_LOCK, and keep constant filters (rdflib's own ``Graph.update`` parses with them)."""
    from rdflib.plugins.sparql import parser, processor

    def locked(fn: Any) -> Any:
        if getattr(fn, "_catalogue_locked", False):
            return fn

        def call(*args: Any, **kwargs: Any) -> Any:
            with PARSE_LOCK:
                return keep_constant_filters(fn(*args, **kwargs))

        call._catalogue_locked = True  # type: ignore[attr-defined]
        call.__wrapped__ = fn  # type: ignore[attr-defined]  # for query.py, which locks and keeps filters itself
        call.__doc__ = fn.__doc__
        return call

    parser.parseQuery = locked(parser.parseQuery)
    parser.parseUpdate = locked(parser.parseUpdate)
    processor.parseQuery = parser.parseQuery  # type: ignore[attr-defined]
    processor.parseUpdate = parser.parseUpdate  # type: ignore[attr-defined]
