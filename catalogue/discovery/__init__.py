"""Dataset discovery: the (temporary, in-memory) search index behind ``/datasets`` and the portal.

:mod:`.index` documents the semantics and the design; database tables replace
this package when discovery has to scale.
"""
