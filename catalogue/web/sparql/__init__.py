"""The SPARQL 1.1 Protocol endpoint: ``/sparql``.

Queries arrive as ``GET /sparql?query=``, as a ``POST`` form (``query=`` or
``update=``) or as a ``POST`` body of type ``application/sparql-query`` /
``application/sparql-update``; ``default-graph-uri`` and ``named-graph-uri``
define the RDF dataset as the Protocol says (they override ``FROM`` and ``FROM
NAMED``; without either the dataset is the catalogue's: the union of every
graph as default graph, every graph as a named graph). The prefixes of
``catalogue query`` are pre-bound. ``GET /sparql`` without a query answers a
SPARQL 1.1 Service Description. ``/sparql/graph`` is the Graph Store HTTP Protocol
(:mod:`.graph_store`: GET, PUT, POST and DELETE of one graph).

One module per concept: :mod:`.protocol` (parameters, bodies, the operation and its
size limits), :mod:`.media` (formats offered, ``format=`` and ``Accept``),
:mod:`.auth` (the admin token), :mod:`.errors` (library errors as statuses),
:mod:`.service_description`, :mod:`.routes` (the handlers) and :mod:`.graph_store`. Queries and updates
themselves run in the library: :mod:`catalogue.graph.sparql.answer`,
:mod:`catalogue.graph.sparql.dataset`, :mod:`catalogue.graph.sparql.update`.

Status codes: 400 malformed request or query (one line, parse position
included), 401/403 SPARQL Update without the admin token / with none
configured, 406 no acceptable media type, 413 query longer than
``max_query_chars`` or result larger than ``max_results`` (the request asks for
more than the server is willing to produce: add ``LIMIT``), 415 unknown
``Content-Type``, 503 query past ``query_timeout`` (the server stopped the
work: a temporary refusal of this much work, not a client syntax error; the
same status as when every connection is busy). See docs/web.md.

Network access from queries is refused: ``SERVICE`` is a 400, and ``FROM`` /
``FROM NAMED`` / ``default-graph-uri`` only ever select graphs already in the
catalogue (rdflib on its own would fetch and parse a missing graph from the
web, into the store).
"""
