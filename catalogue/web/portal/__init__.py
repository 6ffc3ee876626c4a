"""The HTML portal: search with facets (``/``) and dataset/node pages (``/browse``).

By concept: :mod:`.routes` (the routes), :mod:`.params` (their parameters),
:mod:`.render` (templates, static files, error pages), :mod:`.search_page` and
:mod:`.node_page` (what each page shows, with :mod:`.node_views`,
:mod:`.arrays`, :mod:`.tree`, :mod:`.harvest`, :mod:`.snippets`),
:mod:`.graph_digest` (a hierarchy graph read once and cached), :mod:`.values`
(how values are written). A new facet is a value of the search index
(:mod:`catalogue.discovery`), a parameter of
:func:`catalogue.web.search_params.search_query` and a title in
:data:`.search_page.FACET_TITLES`.
"""
